"""``TagAgent``: an agent driven by a manifesto, whose every reply is one ``<TOOL: NAME>`` call.

::

    from parley.agents import TagAgent

    def search(query: str) -> str:
        \"\"\"Search the web and return the top result.\"\"\"
        ...

    agent = TagAgent("scout", manifesto="You are {name}, a careful researcher.",
                     tools={"SEARCH": search}, llm_config=llm_config)
    answer = agent.run("Who wrote The Master and Margarita?")

The model reads the manifesto and the tool list; it answers with exactly one call such as
``<TOOL: SEARCH>Master and Margarita author</TOOL>``, reads the result, and so on until it
replies ``<TOOL: END_RUN>the answer</TOOL>``. A reply that is not a tool call gets a reminder of
the protocol; the step limit ends a run that never finishes. Every text the model reads is a
named prompt of :class:`TagPrompts`, which :func:`parley.agents.optimize` can rewrite.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._tag_loop import LoopSetup, StopReason, Transcript, run_loop, system_text
from ._tag_prompts import TagPrompts
from ._tag_tools import BUILTINS, Tool, check_readme, check_tools
from .loop_agent import LoopAgent

__all__ = ["BUILTIN_TOOLS", "TagAgent", "TagPrompts", "Transcript"]

BUILTIN_TOOLS = tuple(BUILTINS)


class TagAgent(LoopAgent):
    """An agent whose replies are tool calls in tags, run in a loop until ``END_RUN``.

    Args:
        name: the agent's name.
        prompts: every text the model reads (default: :class:`TagPrompts`'s).
        manifesto: shortcut for ``prompts.manifesto`` (who the agent is; ``{name}`` is filled).
        tools: your tools, ``{"NAME": fn}``: ``fn(text) -> str`` (sync or async) gets the call's
            input and returns the text the model reads. Names are capital letters and
            underscores and may not be a built-in's; the tool list shows each function's
            docstring's first line. A tool that raises is reported to the model, which may try
            again; one that returns something other than a str is a bug and raises.
        readme: the file ``READ_README`` returns (it must exist); without one, ``READ_README``
            tells the model that no README was named.
        llm_config: the model (required).
        max_steps: model calls per run before the run stops with ``prompts.limit_reached``.
        keep_memory: continue the previous run's transcript in the next run (the agent
            remembers earlier tasks); by default each run starts fresh.
        **kwargs: passed to :class:`~parley.agentchat.ConversableAgent` (not ``system_message``:
            it is built from the prompts).

    Built-in tools: ``ASK_USER`` (asks the human through :func:`ask_human`: a review function
    registered with ``register_human_review`` or the IOStream), ``TELL_USER`` (prints through
    the IOStream), ``READ_README`` and ``END_RUN`` (its input is the run's reply).

    After a run, :attr:`memory` holds its transcript, :attr:`last_transcript` the whole record
    and :attr:`stop_reason` says why it stopped. One run at a time per agent.
    """

    def __init__(
        self,
        name: str,
        *,
        prompts: TagPrompts | None = None,
        manifesto: str | None = None,
        tools: Mapping[str, Tool] | None = None,
        readme: str | Path | None = None,
        llm_config: dict[str, Any] | None = None,
        max_steps: int = 20,
        keep_memory: bool = False,
        **kwargs: Any,
    ) -> None:
        if "system_message" in kwargs:
            raise TypeError(
                "TagAgent builds its system message from its prompts: pass manifesto=... (or "
                "prompts=TagPrompts(...)) instead of system_message"
            )
        if prompts is None:
            prompts = TagPrompts()
        elif not isinstance(prompts, TagPrompts):
            raise TypeError(f"prompts must be a TagPrompts, got {type(prompts).__name__}")
        if manifesto is not None:
            prompts = prompts.replace(manifesto=manifesto)
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive int, got {max_steps!r}")
        self._tools = check_tools(tools)
        self._readme = check_readme(readme)
        self._max_steps = max_steps
        self.keep_memory = keep_memory
        self._prompts = prompts
        self._describe_by_manifesto = kwargs.get("description") is None
        if self._describe_by_manifesto:
            kwargs["description"] = prompts.render("manifesto", name=name)
        super().__init__(
            name,
            system_message=system_text(name, self._setup(prompts)),
            llm_config=llm_config,
            **kwargs,
        )
        if self.client is None:
            raise ValueError(
                f"TagAgent {name!r} needs a model: give it llm_config (e.g. "
                "llm_config={'config_list': [...]})"
            )
        self._memory: list[dict[str, Any]] = []
        self._last: Transcript | None = None
        self._running = False

    # -- what the agent is ------------------------------------------------------------------

    @property
    def prompts(self) -> TagPrompts:
        """The prompts the next run uses; assign a new :class:`TagPrompts` to change them."""
        return self._prompts

    @prompts.setter
    def prompts(self, prompts: TagPrompts) -> None:
        if not isinstance(prompts, TagPrompts):
            raise TypeError(f"prompts must be a TagPrompts, got {type(prompts).__name__}")
        self._prompts = prompts
        self._oai_system_message[0]["content"] = system_text(self.name, self._setup(prompts))
        if self._describe_by_manifesto:
            self.description = prompts.render("manifesto", name=self.name)

    def update_system_message(self, system_message: str) -> None:
        raise TypeError(
            "a TagAgent's system message is built from its prompts: set "
            "agent.prompts = agent.prompts.replace(manifesto=...) instead"
        )

    @property
    def tools(self) -> dict[str, Tool]:
        """The user's tools by name (a copy; the built-ins are :data:`BUILTIN_TOOLS`)."""
        return dict(self._tools)

    @property
    def readme(self) -> Path | None:
        """The file ``READ_README`` returns, if one was named."""
        return self._readme

    @property
    def max_steps(self) -> int:
        return self._max_steps

    # -- what it did --------------------------------------------------------------------------

    @property
    def memory(self) -> list[dict[str, Any]]:
        """The transcript of the current (or last) run, the system message aside (a copy)."""
        return [dict(m) for m in self._memory]

    @property
    def last_transcript(self) -> Transcript | None:
        """The last finished run's record (None before one, or after a run that failed)."""
        return self._last

    @property
    def stop_reason(self) -> StopReason | None:
        """Why the last run stopped: ``"end_run"`` or ``"max_steps"``."""
        return None if self._last is None else self._last.stop_reason

    def reset(self) -> None:
        """Reset as any agent (histories, counters, usage), and forget the runs too."""
        super().reset()
        self._memory = []
        self._last = None

    # -- running --------------------------------------------------------------------------

    def _setup(self, prompts: TagPrompts) -> LoopSetup:
        return LoopSetup(prompts, self._tools, self._readme, self._max_steps)

    # A loop's own run(task), not ConversableAgent's run(recipient, message=...) event stream.
    async def a_run(self, task: str) -> str:  # type: ignore[override]
        """Run the loop on ``task``; returns ``END_RUN``'s input, or ``limit_reached``."""
        if not isinstance(task, str):
            raise TypeError(f"task must be a str, got {type(task).__name__}")
        self._claim()
        try:
            self._last = None
            if not self.keep_memory:
                self._memory = []
            self._last = await run_loop(self, self._setup(self._prompts), task, self._memory)
        finally:
            self._running = False
        return self._last.reply

    def _claim(self) -> None:
        if self._running:
            raise RuntimeError(
                f"TagAgent {self.name!r} is already running a task: its memory holds one run at "
                "a time; use another TagAgent for concurrent runs"
            )
        self._running = True
