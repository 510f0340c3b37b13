""":class:`AGUIStream`: a parley chat per AG-UI run, its events streamed as AG-UI's (AG2's
``autogen.ag_ui.AGUIStream``, whose names it follows)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TypeAlias

from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    RunAgentInput,
    RunErrorEvent,
    RunStartedEvent,
)
from ag_ui.encoder import EventEncoder

from .._agent_protocol import Agent
from ._input import Opening, Refusal, opening
from ._threads import ChatThread
from ._translate import Translator

if TYPE_CHECKING:
    from starlette.endpoints import HTTPEndpoint

    from ..agentchat import ConversableAgent
    from ._serve import AGUIServer

__all__ = ["AGUIStream", "AgentFactory"]

AgentFactory: TypeAlias = (
    "Callable[[], ConversableAgent | tuple[ConversableAgent, ConversableAgent]]"
)
"""Makes the agents of one thread's chat: the agent, or ``(agent, user)``."""

_RESERVED = frozenset({"recipient", "message", "carryover"})


class AGUIStream:
    """Serves an agent over AG-UI: each run of a thread is a chat, streamed as AG-UI events.

    ``agent`` answers the client; ``user`` (optional) is the agent that stands for the
    client's human in the chat: it sends the human's message to ``agent`` and runs the tools
    registered on it for execution. Without ``user``, ``agent.a_run(message=...)`` makes the
    chat (a single-agent run). ``agent`` may also be a factory (an :data:`AgentFactory`)
    called for each new thread, so threads never share agents; with agents given as objects,
    one thread's chat runs at a time (another thread's request is refused with the code
    ``busy`` until it ends). ``run_kwargs`` go to ``a_run`` (``max_turns``, ``summary_method``,
    ...).

    A chat that asks its human (a tool call waiting for approval, an input prompt) ends the
    run with an interrupt and waits; the client's next request on the same ``threadId``
    answers it in ``resume`` and reads on. A waiting chat is given up after
    ``interrupt_timeout`` seconds (None: never). See ``website/docs/ag-ui.md``.
    """

    def __init__(
        self,
        agent: ConversableAgent | AgentFactory,
        *,
        user: ConversableAgent | None = None,
        interrupt_timeout: float | None = 600.0,
        **run_kwargs: Any,
    ) -> None:
        reserved = _RESERVED & run_kwargs.keys()
        if reserved:
            raise TypeError(
                f"AGUIStream sets {sorted(reserved)} of each chat itself (from the request): "
                "leave them out of its keyword arguments"
            )
        if interrupt_timeout is not None and interrupt_timeout <= 0:
            raise ValueError(f"interrupt_timeout must be positive or None, got {interrupt_timeout}")
        if not isinstance(agent, Agent) and not callable(agent):
            raise TypeError(f"AGUIStream serves an agent or a factory of agents, got {agent!r}")
        if user is not None and not isinstance(agent, Agent):
            raise TypeError("with a factory, return (agent, user) from it instead of user=")
        self._agent = agent
        self._user = user
        self._timeout = interrupt_timeout
        self._run_kwargs = run_kwargs
        self._threads: dict[str, ChatThread] = {}
        self._starting = 0  # chats being started (their threads not registered yet)

    # -- AG2's surface --------------------------------------------------------------------

    async def dispatch(
        self, incoming: RunAgentInput, *, accept: str | None = None
    ) -> AsyncIterator[str]:
        """The run's events encoded for the response body (server-sent events)."""
        encoder = EventEncoder(accept=accept)  # type: ignore[arg-type]
        async for event in self.events(incoming):
            yield encoder.encode(event)

    def build_asgi(self) -> type[HTTPEndpoint]:
        """A Starlette endpoint (``Route(path, stream.build_asgi())``) that takes a
        ``RunAgentInput`` by POST and answers with the run's events."""
        from .asgi import build_asgi

        return build_asgi(self)

    def serve(self, host: str = "127.0.0.1", port: int = 0, *, path: str = "/") -> AGUIServer:
        """Serve the endpoint on ``host``:``port`` (0: a free port) in a background thread
        until the returned server is closed (a context manager); its ``url`` is the address."""
        from ._serve import AGUIServer

        return AGUIServer(self, host, port, path)

    # -- the runs -------------------------------------------------------------------------

    async def events(self, incoming: RunAgentInput) -> AsyncIterator[BaseEvent]:
        """The run's events as AG-UI's models (what :meth:`dispatch` encodes)."""
        async for event in self._events(incoming):
            if event.timestamp is None:
                event.timestamp = int(time.time() * 1000)
            yield event

    def waiting(self) -> dict[str, list[str]]:
        """The threads whose chat waits for an answer, and the interrupts it waits on."""
        return {
            thread_id: [thread.pending.interrupt.id]
            for thread_id, thread in self._threads.items()
            if thread.pending is not None and not thread.attached
        }

    def threads(self) -> list[str]:
        """The threads whose chat is live: running, waiting for an answer, or ending."""
        return list(self._threads)

    async def aclose(self) -> None:
        """Give up every chat (their questions answered ``exit``) and wait until they end."""
        await asyncio.gather(*(t.aclose() for t in list(self._threads.values())))

    async def _events(self, incoming: RunAgentInput) -> AsyncIterator[BaseEvent]:
        thread = self._threads.get(incoming.thread_id)
        if thread is not None and thread.attached:
            yield _refused(
                Refusal("thread_busy", f"thread {incoming.thread_id} is running another run")
            )
            return
        if thread is not None:
            answer = thread.resume(incoming.resume)
            if isinstance(answer, Refusal):
                yield _refused(answer)
                return
        else:
            if incoming.resume:
                yield _refused(
                    Refusal(
                        "unknown_interrupt",
                        f"thread {incoming.thread_id} has no chat waiting for an answer",
                    )
                )
                return
            started = await self._start(incoming)
            if isinstance(started, Refusal):
                yield _refused(started)
                return
            thread, answer = started, None
        thread.run_id = incoming.run_id
        yield RunStartedEvent(
            thread_id=incoming.thread_id, run_id=incoming.run_id, protocol_version=PROTOCOL_VERSION
        )
        async for event in thread.run(answer):
            yield event

    async def _start(self, incoming: RunAgentInput) -> ChatThread | Refusal:
        first = opening(incoming)
        if isinstance(first, Refusal):
            return first
        if isinstance(self._agent, Agent):
            if self._threads or self._starting:
                return Refusal(
                    "busy",
                    "this endpoint's agents are in another thread's chat; serve a factory of "
                    "agents (AGUIStream(make_agents)) to run threads side by side",
                )
            agent, user = self._agent, self._user
        else:
            made = self._agent()
            agent, user = made if isinstance(made, tuple) else (made, None)
        self._starting += 1
        try:
            events, cancel = await self._run(agent, user, first)
        finally:
            self._starting -= 1
        # Without a user, a_run makes one named "user" (AG2's user proxy) that speaks for the human.
        translator = Translator(user.name if user is not None else "user", list(incoming.messages))
        thread = ChatThread(
            incoming.thread_id,
            events,
            cancel,
            translator,
            incoming.state,
            self._timeout,
            self._ended,
        )
        self._threads[incoming.thread_id] = thread
        return thread

    async def _run(
        self, agent: ConversableAgent, user: ConversableAgent | None, first: Opening
    ) -> tuple[AsyncIterator[Any], Callable[[], object] | None]:
        """The chat's events, and what cancels it."""
        kwargs = dict(self._run_kwargs)
        if first.carryover:
            kwargs["carryover"] = first.carryover
        if user is None:
            response = await agent.a_run(message=first.message, **kwargs)
        else:
            response = await user.a_run(agent, message=first.message, **kwargs)
        return aiter(response.events), getattr(response, "cancel", None)

    def _ended(self, thread: ChatThread) -> None:
        if self._threads.get(thread.thread_id) is thread:
            del self._threads[thread.thread_id]


def _refused(refusal: Refusal) -> RunErrorEvent:
    return RunErrorEvent(message=refusal.message, code=refusal.code)
