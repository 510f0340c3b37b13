"""A FakeLLMServer responder playing both models of a teachable chat.

Requests whose system message is the TextAnalyzerAgent's are answered like a careful analyst
would, from what the test says the user's messages hold (facts, task advice); every other
request is the teachable agent's own model, answered from a list. The analysis is parsed from
the request exactly as the analyzer's prompt lays it out, so a change in that layout fails the
tests rather than being papered over.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parley.agentchat.contrib import text_analyzer_agent

PROMPT = re.compile(
    r"\A# INSTRUCTIONS\n(?P<instr>.*)\n\n# TEXT\n(?P<text>.*)\n\n# INSTRUCTIONS\n(?P=instr)\n\Z",
    re.DOTALL,
)


@dataclass(frozen=True)
class Fact:
    """A user message containing ``trigger`` teaches: asked as ``question``, answer ``answer``."""

    trigger: str
    question: str
    answer: str


@dataclass(frozen=True)
class Advice:
    """A user message containing ``trigger`` asks for ``task`` (a task of kind ``general``),
    with ``advice`` (None: a task without advice)."""

    trigger: str
    task: str
    general: str
    advice: str | None = None


@dataclass
class TeachingModel:
    """The responder: ``server.responder = TeachingModel(...)``."""

    facts: list[Fact] = field(default_factory=list)
    tasks: list[Advice] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    default_reply: str = "Noted."
    # What was analysed: (instructions, text), in order.
    analyses: list[tuple[str, str]] = field(default_factory=list)
    # The teachable agent's own requests' messages, in order.
    agent_requests: list[list[dict[str, Any]]] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> str:
        messages = body["messages"]
        if messages[0].get("content") == text_analyzer_agent.system_message:
            assert len(messages) == 2, messages
            match = PROMPT.match(messages[1]["content"])
            assert match is not None, messages[1]["content"]
            instructions, text = match["instr"], match["text"]
            self.analyses.append((instructions, text))
            return self.analyse(instructions, text)
        self.agent_requests.append(messages)
        return self.replies.pop(0) if self.replies else self.default_reply

    def analyse(self, instructions: str, text: str) -> str:
        fact = next((f for f in self.facts if f.trigger in text), None)
        task = next((t for t in self.tasks if t.trigger in text or t.task == text), None)
        if instructions.startswith("Does any part of the TEXT ask the agent to perform a task"):
            return "yes" if task else "no"
        if instructions.startswith("Briefly copy any advice"):
            return task.advice if task and task.advice else "none"
        if instructions.startswith(("Briefly copy just the task", "Copy just the task")):
            return task.task if task else text
        if instructions.startswith("Summarize very briefly, in general terms"):
            return task.general if task else text
        if instructions.startswith("Does the TEXT contain information"):
            return "yes" if fact else "no"
        if instructions.startswith("Imagine that the user forgot"):
            return fact.question if fact else text
        if instructions.startswith("Copy the information"):
            return fact.answer if fact else text
        raise AssertionError(f"unexpected analysis instructions: {instructions!r}")

    def kinds(self) -> list[str]:
        """The analyses asked for, by a short name each."""
        names = {
            "Does any part": "is_task",
            "Briefly copy any advice": "advice",
            "Briefly copy just the task": "task",
            "Summarize very briefly": "general",
            "Does the TEXT contain": "has_info",
            "Imagine that the user": "question",
            "Copy the information": "info",
        }
        return [next(v for k, v in names.items() if i.startswith(k)) for i, _ in self.analyses]


ROOT = Path(__file__).resolve().parents[3]
HEADER = "# Memories that might help"
DOG = Fact("my dog is called Rex", "What is the name of my dog?", "The user's dog is called Rex.")
CAT = Fact("my cat is Tom", "What is my cat called?", "The user's cat is called Tom.")
CITY = Fact("I live in Lisbon", "In which city do I live?", "The user lives in Lisbon.")
SUMS = Advice(
    "Add 17 and 25",
    task="Add 17 and 25.",
    general="Adding two numbers.",
    advice="Always check a sum by subtracting one addend from the result.",
)


def make_agent(server: Any, path: Path, **options: Any) -> tuple[Any, Any]:
    """A teachable agent on ``server``'s model with a Teachability over ``path``."""
    from parley import ConversableAgent
    from parley.agentchat.contrib.capabilities.teachability import Teachability

    teachable = ConversableAgent(
        "teachable", llm_config=server.llm_config(), human_input_mode="NEVER"
    )
    teachability = Teachability(path_to_db_dir=str(path), **options)
    teachability.add_to_agent(teachable)
    return teachable, teachability


def chat(teachable: Any, message: str) -> None:
    """One exchange: a user's message and the teachable agent's reply."""
    from parley import ConversableAgent

    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    user.initiate_chat(teachable, message=message, max_turns=1, silent=True)


def memories(request: list[dict[str, Any]]) -> str | None:
    """The memory section appended to the request's last message, or None."""
    content = request[-1]["content"]
    return content.split(HEADER, 1)[1] if HEADER in content else None
