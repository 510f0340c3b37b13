"""Prompt meta-optimisation: a model rewrites a ``TagAgent``'s prompts from its worst runs.

::

    from parley.agents import LLMJudge, TagAgent, optimize

    def judge(task, transcript):  # or LLMJudge(llm_config, rubric="...")
        return 1.0 if expected[task] in transcript.reply else 0.0

    history = optimize(agent, tasks, judge, rounds=3)
    for version in history:
        print(version.round, version.mean_score, version.accepted, version.changed)

Round 0 runs the tasks with the agent's prompts (the baseline). Each round then shows the
optimiser model the prompts and the ``worst_k`` lowest-scored transcripts of the best version so
far, reads back the prompts it rewrote, runs the tasks again with them and keeps the rewrite only
if the mean score strictly improves. The agent ends holding the best prompts; its memory is left
alone (every run has a transcript of its own).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._core.calls import call_user
from ..agentchat._sync_chat import sync_of
from ..agentchat.conversable_agent import ConversableAgent
from ..oai._gather import gather_bounded
from ._optimize_judge import LLMJudge
from ._optimize_prompt import OPTIMIZER_SYSTEM, optimizer_messages, parse_prompt_tags
from ._tag_loop import LoopSetup, Transcript, run_loop
from ._tag_prompts import TagPrompts
from .loop_agent import ask_model
from .tag import TagAgent

__all__ = ["Judge", "LLMJudge", "PromptVersion", "Transcript", "a_optimize", "optimize"]

Judge = Callable[[str, Transcript], float | Awaitable[float]]


@dataclass(frozen=True)
class PromptVersion:
    """One version of the prompts and how it did.

    ``round`` 0 is the baseline. ``prompts`` are the prompts the version ran with (for a rewrite
    refused before running, the prompts that were kept); ``proposed`` the texts the optimiser
    returned, by name, and ``changed`` the names whose text differs. ``scores`` follow the order
    of the tasks; ``mean_score`` is None when the version did not run. ``accepted`` says whether
    it became the best version, ``note`` why not. ``optimizer_text`` is the optimiser's whole
    answer and ``optimizer_cost`` what it cost; each transcript carries its run's cost.
    """

    round: int
    prompts: TagPrompts
    scores: tuple[float, ...]
    mean_score: float | None
    accepted: bool
    optimizer_text: str = ""
    optimizer_cost: float = 0.0
    proposed: Mapping[str, str] = field(default_factory=dict)
    changed: tuple[str, ...] = ()
    note: str = ""
    transcripts: tuple[Transcript, ...] = ()


@dataclass(frozen=True)
class _Evaluation:
    transcripts: tuple[Transcript, ...]
    scores: tuple[float, ...]

    @property
    def mean(self) -> float:
        return sum(self.scores) / len(self.scores)

    def worst(self, k: int) -> list[tuple[Transcript, float]]:
        ranked = sorted(range(len(self.scores)), key=lambda i: self.scores[i])
        return [(self.transcripts[i], self.scores[i]) for i in ranked[:k]]


async def a_optimize(
    agent: TagAgent,
    tasks: Sequence[str],
    judge: Judge | LLMJudge,
    rounds: int = 3,
    *,
    optimizer_llm_config: dict[str, Any] | None = None,
    worst_k: int = 2,
    prompts_to_rewrite: Collection[str] | None = None,
    concurrency: int = 1,
) -> list[PromptVersion]:
    """Rewrite ``agent``'s prompts to raise the judge's mean score on ``tasks``.

    Args:
        agent: the :class:`TagAgent` to improve; it ends holding the best prompts found.
        tasks: the tasks each version is run on (every version runs all of them).
        judge: ``judge(task, transcript) -> float`` (sync or async; higher is better), or an
            :class:`LLMJudge`.
        rounds: rewrite attempts after the baseline.
        optimizer_llm_config: the model that rewrites the prompts; by default the agent's own
            (the request then goes through the agent's client, and its cost into its usage).
        worst_k: how many of the lowest-scored transcripts the optimiser sees.
        prompts_to_rewrite: the names of the prompts the optimiser may change (default: all;
            see :meth:`TagPrompts.names`).
        concurrency: how many task runs (each with its judging) go at once. The default, 1,
            runs them one after the other: scripted models and humans see a fixed order.

    Returns:
        Every version, the baseline first: accepted and rejected ones, with their scores.
    """
    tasks, names = _check(agent, tasks, judge, rounds, worst_k, prompts_to_rewrite, concurrency)
    optimizer = _optimizer(agent, optimizer_llm_config)

    best = agent.prompts
    evaluation = await _evaluate(agent, best, tasks, judge, concurrency)
    history = [
        PromptVersion(
            0,
            best,
            evaluation.scores,
            evaluation.mean,
            True,
            note="baseline",
            transcripts=evaluation.transcripts,
        )
    ]
    for round_ in range(1, rounds + 1):
        request = optimizer_messages(best, names, evaluation.worst(worst_k))
        turn = await ask_model(optimizer, request)
        proposed = {n: t for n, t in parse_prompt_tags(turn.text).items() if n in names}
        changed = tuple(
            n for n in TagPrompts.names() if n in proposed and proposed[n] != getattr(best, n)
        )
        refused = PromptVersion(
            round_,
            best,
            (),
            None,
            False,
            turn.text,
            turn.cost,
            proposed,
            changed,
        )
        if not changed:
            history.append(_with_note(refused, "the optimiser changed no prompt"))
            continue
        try:
            candidate = best.replace(**{n: proposed[n] for n in changed})
        except ValueError as error:
            history.append(_with_note(refused, f"refused, not run: {error}"))
            continue
        trial = await _evaluate(agent, candidate, tasks, judge, concurrency)
        accepted = trial.mean > evaluation.mean
        note = (
            f"kept: mean {trial.mean:g} > {evaluation.mean:g}"
            if accepted
            else f"not kept: mean {trial.mean:g} <= best {evaluation.mean:g}"
        )
        history.append(
            PromptVersion(
                round_,
                candidate,
                trial.scores,
                trial.mean,
                accepted,
                turn.text,
                turn.cost,
                proposed,
                changed,
                note,
                trial.transcripts,
            )
        )
        if accepted:
            best, evaluation = candidate, trial
    agent.prompts = best
    return history


optimize = sync_of(a_optimize, "optimize")


def _with_note(version: PromptVersion, note: str) -> PromptVersion:
    return PromptVersion(
        version.round,
        version.prompts,
        version.scores,
        version.mean_score,
        version.accepted,
        version.optimizer_text,
        version.optimizer_cost,
        version.proposed,
        version.changed,
        note,
    )


def _check(
    agent: Any,
    tasks: Any,
    judge: Any,
    rounds: Any,
    worst_k: Any,
    prompts_to_rewrite: Any,
    concurrency: Any,
) -> tuple[list[str], tuple[str, ...]]:
    """The arguments' mistakes, found before anything is spent."""
    if not isinstance(agent, TagAgent):
        raise TypeError(f"optimize improves a TagAgent's prompts; got {type(agent).__name__}")
    if isinstance(tasks, str) or not isinstance(tasks, Sequence):
        raise TypeError("tasks must be a list of task texts, e.g. tasks=['...', '...']")
    if not tasks or not all(isinstance(t, str) for t in tasks):
        raise ValueError("tasks must be a non-empty list of strings")
    if not callable(judge):
        raise TypeError(
            "judge must be a function judge(task, transcript) -> float or an LLMJudge; "
            f"got {type(judge).__name__}"
        )
    for name, value, least in (
        ("rounds", rounds, 0),
        ("worst_k", worst_k, 1),
        ("concurrency", concurrency, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{name} must be an int of at least {least}, got {value!r}")
    all_names = TagPrompts.names()
    if prompts_to_rewrite is None:
        return list(tasks), all_names
    if isinstance(prompts_to_rewrite, str):
        raise TypeError(
            f"prompts_to_rewrite must be a collection of names, e.g. [{prompts_to_rewrite!r}]"
        )
    unknown = [n for n in prompts_to_rewrite if n not in all_names]
    if unknown or not prompts_to_rewrite:
        raise ValueError(
            f"prompts_to_rewrite must name some of the prompts {', '.join(all_names)}; "
            f"got {list(prompts_to_rewrite)!r}"
        )
    return list(tasks), tuple(n for n in all_names if n in prompts_to_rewrite)


def _optimizer(agent: TagAgent, llm_config: dict[str, Any] | None) -> ConversableAgent:
    """Who sends the optimiser's request: the agent itself, or an agent of its own model."""
    if llm_config is None:
        return agent
    optimizer = ConversableAgent(
        f"{agent.name}_optimizer",
        system_message=OPTIMIZER_SYSTEM,
        llm_config=llm_config,
        human_input_mode="NEVER",
    )
    if optimizer.client is None:
        raise ValueError("optimizer_llm_config must name a model (a config_list), not False")
    return optimizer


async def _evaluate(
    agent: TagAgent,
    prompts: TagPrompts,
    tasks: Sequence[str],
    judge: Judge | LLMJudge,
    concurrency: int,
) -> _Evaluation:
    # Each trial runs on a fresh memory of its own: the agent's memory, prompts and last
    # transcript are left alone.
    setup = LoopSetup(prompts, agent.tools, agent.readme, agent.max_steps)

    async def one(task: str) -> tuple[Transcript, float]:
        transcript = await run_loop(agent, setup, task, [])
        return transcript, _score(judge, await call_user(judge, task, transcript))

    results = await gather_bounded(one, tasks, concurrency)
    return _Evaluation(tuple(t for t, _ in results), tuple(s for _, s in results))


def _score(judge: Any, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"the judge {getattr(judge, '__qualname__', judge)!r} returned "
            f"{type(value).__name__} {value!r}; it must return a number (higher is better)"
        )
    if not math.isfinite(value):
        raise ValueError(f"the judge returned {value!r}; it must return a finite number")
    return float(value)
