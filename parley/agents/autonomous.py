"""``AutonomousAgent``: AutoGPT 0.2's loop as a parley agent.

Given a name, a role and goals, the agent thinks in cycles. Each cycle it sends the model its
system prompt (goals, constraints, commands, resources, self-evaluation advice, the JSON reply
format), the time, memories the recent history reminds it of, as much recent history as fits
``token_limit`` tokens, and a trigger; reads the JSON reply (repairing the usual breakage, and
telling the model what was wrong when it cannot); shows the plan; asks the human to authorise
the command (``y``, ``y -N``, ``n`` or feedback); runs it; and remembers the outcome. It stops
on ``task_complete``, the human's ``n``, ``max_cycles`` or ``budget``.

::

    from parley.agents import AutonomousAgent

    agent = AutonomousAgent(
        "writer",
        role="an assistant that writes short reports",
        goals=["Write a haiku about the sea to haiku.txt"],
        llm_config={"config_list": [...]},
        workspace="out",
        memory=False,
    )
    print(agent.run(""))          # the final report
    agent.cycles, agent.stop_reason  # what each cycle did, and why it stopped
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..coding.base import CodeExecutor
from ..io import IOStream
from ._autonomous_commands import (
    FINISH_COMMANDS,
    Command,
    builtin_commands,
    check_command_names,
    run_command,
    user_commands,
)
from ._autonomous_cycle import (
    Authorise,
    CycleRecord,
    Feedback,
    ModelReply,
    StopReason,
    StopRun,
    parse_authorisation,
    plan_text,
    read_reply,
)
from ._autonomous_prompt import (
    DEFAULT_ROLE,
    AutonomousPrompts,
    fit_history,
    memory_message,
    memory_query,
    model_name,
    system_prompt,
    time_message,
)
from ._autonomous_setup import check_goals, check_limits, make_executor, make_memory
from ._json_repair import ReplyFormatError
from .loop_agent import LoopAgent, ask_human, ask_model

if TYPE_CHECKING:
    from ..memory import LongTermMemory

__all__ = ["AutonomousAgent", "AutonomousPrompts", "Command", "CycleRecord", "StopReason"]

_AUTHORISE = (
    "Authorise the command? 'y' runs it, 'y -N' runs the next N commands without asking, "
    "'n' stops {name}, anything else is sent to {name} as feedback: "
)


class AutonomousAgent(LoopAgent):
    """AutoGPT 0.2's autonomous loop: goals, a JSON thought and command per cycle, human
    authorisation, short- and long-term memory, and a workspace the file commands stay in.

    Args:
        name: the agent's name (also in its prompt).
        role: what the agent is, in a phrase ("an assistant that ..."); also its description.
        goals: up to 5 goals. The task of a run (``run(task)``, or a message received in a
            chat) is added as the last one.
        llm_config: the model, as for any agent.
        workspace: the directory the file commands are confined to (created if missing).
        commands: the built-in commands to enable, by name; ``None`` enables the file
            commands and ``task_complete``, plus ``execute_python`` and
            ``execute_python_file`` when there is a ``code_executor``. Functions registered
            with ``register_for_llm`` / ``register_for_execution`` (or ``function_map``) are
            commands too, and replace a built-in of the same name.
        code_executor: a :mod:`parley.coding` executor (or a ``CodeExecutorFactory`` config
            dict; a ``"commandline-local"`` one runs in the workspace unless told otherwise)
            for the Python commands. Without one the agent cannot run code.
        memory: the long-term memory; ``None`` makes a :class:`parley.memory.LongTermMemory`
            with the default embedding model (the ``memory`` extra), ``False`` runs without.
        memory_k: how many memories to recall each cycle.
        token_limit: the tokens of recent history (short-term memory) sent each cycle.
        max_cycles: cycles per run before it stops.
        budget: USD a run may spend; the cycle that reaches it is the last.
        continuous: never ask the human to authorise (AutoGPT's continuous mode).
        json_retries: how many times a cycle tells the model its reply could not be read and
            asks again, before the run stops.
        prompts: the fixed wording of the prompts (:class:`AutonomousPrompts`).
        **kwargs: passed to ``ConversableAgent`` (the system message is built by the agent).

    After a run, :attr:`cycles` holds a :class:`CycleRecord` per cycle and
    :attr:`stop_reason` why the run ended (a :data:`StopReason`).
    """

    def __init__(
        self,
        name: str,
        role: str = DEFAULT_ROLE,
        goals: Sequence[str] = (),
        *,
        llm_config: dict[str, Any] | Literal[False] | None = None,
        workspace: str | Path = "workspace",
        commands: Collection[str] | None = None,
        code_executor: CodeExecutor | Mapping[str, Any] | None = None,
        memory: LongTermMemory | Literal[False] | None = None,
        memory_k: int = 5,
        token_limit: int = 4000,
        max_cycles: int = 25,
        budget: float | None = None,
        continuous: bool = False,
        json_retries: int = 3,
        prompts: AutonomousPrompts | None = None,
        **kwargs: Any,
    ) -> None:
        if "system_message" in kwargs:
            raise TypeError(
                "AutonomousAgent builds its system message from its name, role, goals and "
                "commands; change its wording with prompts=AutonomousPrompts(...) instead"
            )
        self.goals: tuple[str, ...] = check_goals(goals)
        check_limits(memory_k, token_limit, max_cycles, budget, json_retries)
        self._builtin_names = check_command_names(commands, code_executor is not None)
        self.memory: LongTermMemory | None = make_memory(memory)
        self.role = role
        self.workspace = Path(workspace).resolve()
        self.workspace.mkdir(parents=True, exist_ok=True)
        self._command_executor = make_executor(code_executor, self.workspace)
        self.memory_k = memory_k
        self.token_limit = token_limit
        self.max_cycles = max_cycles
        self.budget = budget
        self.continuous = continuous
        self.json_retries = json_retries
        self.prompts = prompts or AutonomousPrompts()
        kwargs.setdefault("description", role)
        super().__init__(name, llm_config=llm_config, system_message="", **kwargs)
        self.cycles: list[CycleRecord] = []
        self.stop_reason: StopReason | None = None
        self.update_system_message(self.build_system_prompt(self.goals))

    # -- what the model is told and can do ------------------------------------------------

    def command_table(self) -> dict[str, Command]:
        """The commands of a run, by name: the enabled built-ins, then the registered
        functions (which replace a built-in of the same name). Override to change them."""
        table = builtin_commands(self._builtin_names, self.workspace, self._command_executor)
        llm_config = self.llm_config if isinstance(self.llm_config, Mapping) else None
        table.update(user_commands(llm_config, self.function_map, self._call_function))
        return table

    def build_system_prompt(
        self, goals: Sequence[str], commands: Mapping[str, Command] | None = None
    ) -> str:
        """The system prompt for ``goals`` (and the current commands). Override to write it
        your own way; the fixed wording is in :attr:`prompts`."""
        return system_prompt(
            self.prompts,
            name=self.name,
            role=self.role,
            goals=goals,
            commands=self.command_table() if commands is None else commands,
            token_limit=self.token_limit,
            has_memory=self.memory is not None,
        )

    async def _call_function(self, name: str, args: dict[str, Any]) -> str:
        _, result = await self.a_execute_function({"name": name, "arguments": args})
        return str(result.get("content") or "")

    # -- the loop -------------------------------------------------------------------------

    # A loop's own run(task), not ConversableAgent's run(recipient, message=...) event stream.
    async def a_run(self, task: str) -> str:  # type: ignore[override]
        """Run cycles toward the goals (and ``task``, if any) until the task is complete or a
        limit stops it; returns the final report."""
        goals = [*self.goals, task.strip()] if task and task.strip() else list(self.goals)
        self.cycles = []
        self.stop_reason = None
        if not goals:
            self.stop_reason = "no_goals"
            return "Nothing to do: the agent has no goals and was given no task."
        commands = self.command_table()
        self.update_system_message(self.build_system_prompt(goals, commands))
        run = _Run(goals, commands)
        for _ in range(self.max_cycles):
            report = await self._cycle(run)
            if report is not None:
                break
        else:
            self.stop_reason = "cycle_limit"
            report = f"Stopped: the limit of {self.max_cycles} cycles was reached."
        IOStream.get_default().print(
            f"{self.name} finished ({self.stop_reason}): {report}", flush=True
        )
        return report

    async def _cycle(self, run: _Run) -> str | None:
        """One cycle; the final report if the run stops here."""
        reply, cost, problem = await self._ask(await self._request(run))
        run.spent += cost
        if reply is None:
            self.cycles.append(CycleRecord({}, "", {}, f"Error: {problem}", None, cost))
            self.stop_reason = "invalid_reply"
            tries = self.json_retries + 1
            return f"Stopped: the model's reply could not be read after {tries} tries ({problem})."
        IOStream.get_default().print(plan_text(self.name, reply), flush=True)
        answer = await self._authorise(run, reply)
        if isinstance(answer, StopRun):
            self.cycles.append(
                CycleRecord(reply.thoughts, reply.command, reply.args, _NOT_RUN_STOP, None, cost)
            )
            self.stop_reason = "human_stop"
            return f"Stopped: the human ended the run at cycle {len(self.cycles)}."
        feedback = answer.text if isinstance(answer, Feedback) else None
        reply_message = {"role": "assistant", "content": reply.as_json()}
        run.history.append(reply_message)
        result = await self._act(run, reply, feedback)
        self.cycles.append(
            CycleRecord(reply.thoughts, reply.command, reply.args, result, feedback, cost)
        )
        await self._remember(run, reply, result, feedback, reply_message)
        if self.stop_reason == "task_complete":
            return result
        if self.budget is not None and run.spent >= self.budget:
            self.stop_reason = "budget"
            return (
                f"Stopped: the run cost ${run.spent:.4f}, reaching its budget of "
                f"${self.budget:.4f}."
            )
        return None

    async def _authorise(self, run: _Run, reply: ModelReply) -> StopRun | Feedback | None:
        """The human's answer to the command: None when it may run."""
        if self.continuous:
            return None
        if run.authorised > 0:
            run.authorised -= 1
            return None
        prompt = _AUTHORISE.format(name=self.name)
        about = {"role": "assistant", "name": self.name, "content": reply.as_json()}
        answer = parse_authorisation(await ask_human(self, prompt, about))
        if not isinstance(answer, Authorise):
            return answer
        run.authorised = answer.cycles - 1
        if answer.cycles > 1:
            IOStream.get_default().print(
                f"AUTHORISED: the next {answer.cycles} commands.", flush=True
            )
        return None

    async def _act(self, run: _Run, reply: ModelReply, feedback: str | None) -> str:
        """Run the command (or pass the human's feedback on); the cycle's result."""
        if feedback is not None:
            run.history.append({"role": "user", "content": feedback})
            return _NOT_RUN_FEEDBACK
        if reply.command in FINISH_COMMANDS and _finishes(reply.command, run.commands):
            self.stop_reason = "task_complete"
            return str(reply.args.get("reason") or "The task is complete.")
        command = run.commands.get(reply.command)
        if command is None or command.run is None:
            known = ", ".join(run.commands) or "none"
            result = f"Error: unknown command {reply.command!r}. The commands are: {known}."
        else:
            result = await run_command(command, reply.args)
        line = f"Command {reply.command} returned: {result}"
        run.history.append({"role": "system", "content": line})
        IOStream.get_default().print(f"SYSTEM: {line}", flush=True)
        return result

    async def _request(self, run: _Run) -> list[dict[str, Any]]:
        """The messages of a cycle: prompt, time, memories, recent history, trigger."""
        llm_config = self.llm_config if isinstance(self.llm_config, Mapping) else None
        recent = fit_history(run.history, self.token_limit, model_name(llm_config))
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.system_message},
            time_message(self.prompts, datetime.now().astimezone()),
        ]
        if self.memory is not None:
            # Memories of cycles still in the recent history would only repeat them.
            shown = {id(m) for m in recent}
            skip = {i for i, m in run.remembered.items() if id(m) in shown}
            query = memory_query(recent, run.goals)
            hits = await self.memory.a_search(query, self.memory_k + len(skip))
            texts = [h.text for h in hits if h.id not in skip][: self.memory_k]
            recalled = memory_message(self.prompts, texts)
            if recalled is not None:
                messages.append(recalled)
        messages.extend(dict(m) for m in recent)
        messages.append({"role": "user", "content": self.prompts.trigger})
        return messages

    async def _ask(self, request: list[dict[str, Any]]) -> tuple[ModelReply | None, float, str]:
        """The model's reply read; a reply that cannot be read is explained to the model and
        asked again, ``json_retries`` times. (reply or None, cost, the last problem)."""
        messages = list(request)
        cost = 0.0
        problem = ""
        for _ in range(self.json_retries + 1):
            turn = await ask_model(self, messages)
            cost += turn.cost
            try:
                return read_reply(turn.text), cost, ""
            except ReplyFormatError as error:
                problem = str(error)
            IOStream.get_default().print(f"SYSTEM: the reply could not be read: {problem}")
            # Only the last broken reply is shown: earlier ones would only cost tokens.
            messages = [
                *request,
                {"role": "assistant", "content": turn.text},
                {"role": "user", "content": self.prompts.invalid_reply.format(error=problem)},
            ]
        return None, cost, problem

    async def _remember(
        self,
        run: _Run,
        reply: ModelReply,
        result: str,
        feedback: str | None,
        reply_message: dict[str, Any],
    ) -> None:
        if self.memory is None:
            return
        text = (
            f"Assistant reply: {reply.as_json()}\nResult: {result}\n"
            f"Human feedback: {feedback if feedback is not None else 'none'}"
        )
        run.remembered[await self.memory.a_add(text)] = reply_message


@dataclass
class _Run:
    """The state of one run: its goals and commands, short-term history, spending, and how
    many commands the human authorised in advance (``y -N``)."""

    goals: list[str]
    commands: dict[str, Command]
    history: list[dict[str, Any]] = field(default_factory=list)
    # memory id -> the reply message of its cycle (to skip memories still in the history)
    remembered: dict[str, dict[str, Any]] = field(default_factory=dict)
    spent: float = 0.0
    authorised: int = 0


_NOT_RUN_STOP = "Not run: the human stopped the run."
_NOT_RUN_FEEDBACK = "Not run: the human gave feedback instead."


def _finishes(name: str, commands: Mapping[str, Command]) -> bool:
    """Whether ``name`` ends the run: task_complete is enabled and not replaced by a user
    function of that name."""
    builtin = commands.get("task_complete")
    if builtin is None or builtin.run is not None:
        return False
    return name == "task_complete" or name not in commands
