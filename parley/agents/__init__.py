"""Three classic single-agent loops as parley agents.

- :class:`AutonomousAgent`: AutoGPT 0.2's loop (goals, JSON thoughts and a command per
  cycle, human authorisation, short- and long-term memory, a workspace);
- :class:`ReActAgent`: Thought / Action / Action Input / Observation until a Final Answer;
- :class:`TagAgent`: a manifesto and ``<TOOL: NAME>input</TOOL>`` replies, with
  :func:`optimize` rewriting its prompts from its worst transcripts.

Each is a ``ConversableAgent``: sent a task in a chat (two-agent, group, nested), it runs its
loop and replies with the result; ``agent.run(task)`` runs the loop directly. They need only a
chat-completions model (tools are described in the prompt), so they work with small local
models and with :class:`parley.testing.FakeLLMServer`.

A loop of your own (a planner, a reflection loop) subclasses :class:`LoopAgent` and writes
``async def a_run(self, task) -> str``, asking the model with :func:`ask_model` and the human
with :func:`ask_human`; it then works in every kind of chat, with its cost in its usage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = [
    "AutonomousAgent",
    "AutonomousPrompts",
    "CycleRecord",
    "LLMJudge",
    "LoopAgent",
    "PromptVersion",
    "PythonTool",
    "ReActAgent",
    "ReActStep",
    "TagAgent",
    "TagPrompts",
    "Tool",
    "Transcript",
    "ask_human",
    "ask_model",
    "optimize",
]

if TYPE_CHECKING:
    from .autonomous import AutonomousAgent, AutonomousPrompts, CycleRecord
    from .loop_agent import LoopAgent, ask_human, ask_model
    from .optimization import LLMJudge, PromptVersion, optimize
    from .react import PythonTool, ReActAgent, ReActStep, Tool
    from .tag import TagAgent, TagPrompts, Transcript
else:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "AutonomousAgent": ".autonomous",
            "AutonomousPrompts": ".autonomous",
            "CycleRecord": ".autonomous",
            "LoopAgent": ".loop_agent",
            "ask_human": ".loop_agent",
            "ask_model": ".loop_agent",
            "ReActStep": ".react",
            "Transcript": ".tag",
            "ReActAgent": ".react",
            "Tool": ".react",
            "PythonTool": ".react",
            "TagAgent": ".tag",
            "TagPrompts": ".tag",
            # Not a module named "optimize": importing it would set the package's attribute
            # `optimize` to the module, hiding the function.
            "optimize": ".optimization",
            "LLMJudge": ".optimization",
            "PromptVersion": ".optimization",
        },
    )
