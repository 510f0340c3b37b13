"""``LLMJudge``: a model scores a run's transcript from 0 to 10 against a rubric."""

from __future__ import annotations

import math
import re
from typing import Any

from ..agentchat.conversable_agent import ConversableAgent
from ._optimize_prompt import clip
from ._tag_loop import Transcript
from .loop_agent import ask_model

__all__ = ["DEFAULT_RUBRIC", "LLMJudge", "parse_score"]

DEFAULT_RUBRIC = (
    "Did the agent complete the task correctly and completely? Reward a right, clear final "
    "answer reached without wasted steps; penalise wrong or missing answers, broken tool calls "
    "and runs that stopped at the step limit."
)

_SYSTEM = (
    "You grade the work of an AI agent that solves tasks by calling tools. Read the task and the "
    "transcript of the agent's run, judge it by the rubric, explain your judgement in a few "
    "sentences, and end with one line of the form SCORE: <n>, where n is a number from 0 (a "
    "complete failure) to 10 (perfect).\n\nRubric: {rubric}"
)
_NO_SCORE = (
    "Your answer had no valid score line. End your answer with one line of the form "
    "SCORE: <n>, n a number from 0 to 10."
)
# The last "SCORE: 7", "**Score:** 7.5" or "SCORE = 7/10" on a line of its own.
_SCORE = re.compile(
    r"(?im)^[\s*_`#>-]*score[\s*_`]*[:=][\s*_`]*(\d+(?:\.\d+)?)[\s*_`]*(?:/\s*10)?[\s*_`.]*$"
)


def parse_score(text: str) -> float | None:
    """The score of the last score line in ``text``, or None if there is none from 0 to 10."""
    found = _SCORE.findall(text)
    if not found:
        return None
    score = float(found[-1])
    return score if 0.0 <= score <= 10.0 else None


class LLMJudge:
    """Scores a run with a model: ``await judge(task, transcript)`` is a float from 0 to 10.

    The model is asked to reason, then end with a ``SCORE: <n>`` line. An answer without one
    is sent back with a reminder, up to ``max_attempts`` answers in all; then ``RuntimeError``
    (with the last answer) stops the optimisation rather than let a guess steer it.

    The requests go through :attr:`agent` (a ``ConversableAgent`` built from ``llm_config``):
    its ``get_total_usage()`` shows what judging cost, and a custom model client is registered
    on it with ``judge.agent.register_model_client(...)``.
    """

    def __init__(
        self,
        llm_config: dict[str, Any],
        *,
        rubric: str = DEFAULT_RUBRIC,
        name: str = "judge",
        max_attempts: int = 2,
    ) -> None:
        if not isinstance(rubric, str) or not rubric.strip():
            raise ValueError("rubric must be a non-empty text saying what a good run is")
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise ValueError(f"max_attempts must be a positive int, got {max_attempts!r}")
        self.rubric = rubric
        self.max_attempts = max_attempts
        self.agent = ConversableAgent(
            name,
            system_message=_SYSTEM.replace("{rubric}", rubric),
            llm_config=llm_config,
            human_input_mode="NEVER",
        )
        if self.agent.client is None:
            raise ValueError("LLMJudge needs a model: give it an llm_config with a config_list")

    def __repr__(self) -> str:
        return f"LLMJudge(name={self.agent.name!r})"

    async def __call__(self, task: str, transcript: Transcript) -> float:
        request = (
            f"Task:\n{task}\n\nTranscript of the run:\n{clip(transcript.text())}\n\n"
            f"The run stopped by {transcript.stop_reason} after {transcript.steps} model "
            f"call(s). Its final reply:\n{transcript.reply}"
        )
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.agent.system_message},
            {"role": "user", "content": request},
        ]
        answer = ""
        for _ in range(self.max_attempts):
            answer = (await ask_model(self.agent, messages)).text
            score = parse_score(answer)
            if score is not None and math.isfinite(score):
                return score
            messages += [
                {"role": "assistant", "content": answer},
                {"role": "user", "content": _NO_SCORE},
            ]
        raise RuntimeError(
            f"the judge's model gave no 'SCORE: <n>' line (n from 0 to 10) in "
            f"{self.max_attempts} answer(s); its last answer was {answer[-300:]!r}. Ask for the "
            "score line in the rubric, allow more attempts (max_attempts=), or use a function "
            "judge"
        )
