"""``agent.run(...)``: a chat as a stream of typed events (AG2 0.9+'s ``run``, ``a_run``,
``run_iter``, ``a_run_iter``).

A run is ``initiate_chat`` with its reports recorded as :mod:`parley.events` for the run alone
(:func:`parley.events._from_reports.recording`), its human's questions turned into input
request events (:class:`parley.io._run_state.RunIOStream`), and its end as a
``run_completion`` event (or an ``error``). ``run`` starts the chat on parley's runner loop
and returns at once, so the caller's thread reads the events, in a script as in Jupyter;
``a_run`` starts it as a task of the caller's loop.

Without a recipient the agent talks with a user proxy, as AG2 does: an agent named ``user``
(``run_executor``, made once per agent from ``executor_kwargs``) that runs the agent's tools
and those passed in ``tools`` and whose human is asked at each turn when ``user_input``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..events import BaseEvent, RunCompletionEvent, RunStartEvent
from ..events._from_reports import RunRecorder, jsonable, recording
from ..io import IOStream
from ..io._run_state import RunIOStream, RunState
from ..io.run_response import AsyncRunIterResponse, AsyncRunResponse, RunIterResponse, RunResponse
from . import _delivery
from ._sync_chat import start_sync
from ._tools import register_function

if TYPE_CHECKING:
    from .conversable_agent import ConversableAgent

__all__ = ["RunMethods"]


def _default_termination(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, str) and "TERMINATE" in content


@dataclass
class _Plan:
    """One run: who starts the chat with whom, and the ``initiate_chat`` arguments."""

    agent: ConversableAgent
    recipient: ConversableAgent | None
    chat_args: dict[str, Any]
    executor_kwargs: dict[str, Any] | None = None
    tools: Any = None
    user_input: bool | None = False
    msg_to: str | None = "agent"
    input_timeout: float | None = None
    agents: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.input_timeout is not None and not self.input_timeout > 0:
            raise ValueError(
                f"input_timeout must be a positive number of seconds or None, got {self.input_timeout!r}"
            )
        if self.msg_to not in ("agent", "user"):
            raise ValueError(f"msg_to must be 'agent' or 'user', got {self.msg_to!r}")
        self.agents = [self.agent] if self.recipient is None else [self.agent, self.recipient]

    async def start_chat(self) -> tuple[Any, str | None]:
        """Run the chat: its ``ChatResult`` and its last speaker's name."""
        agent, recipient = self.agent, self.recipient
        if recipient is not None:
            result = await _delivery.initiate_chat(agent, recipient=recipient, **self.chat_args)
            return result, _last_speaker(agent, recipient, result)
        executor = _executor(agent, self.executor_kwargs, bool(self.user_input))
        with _lent_tools(agent, executor, self.tools):
            if self.msg_to == "agent":
                result = await _delivery.initiate_chat(executor, recipient=agent, **self.chat_args)
            else:
                result = await _delivery.initiate_chat(agent, recipient=executor, **self.chat_args)
        return result, agent.name


def _last_speaker(agent: Any, recipient: Any, result: Any) -> str | None:
    """AG2's: a group chat manager's last speaker, else whoever wrote the last message."""
    speaker = getattr(recipient, "last_speaker", None)
    if speaker is not None and hasattr(speaker, "name"):
        return str(speaker.name)
    history = result.chat_history or []
    if history and history[-1].get("name") == recipient.name:
        return str(recipient.name)
    return str(agent.name)


def _executor(agent: Any, kwargs: dict[str, Any] | None, user_input: bool) -> Any:
    """The agent's user proxy for runs without a recipient, made on first use."""
    existing = getattr(agent, "run_executor", None)
    if existing is not None:
        return existing
    from .conversable_agent import ConversableAgent

    options = dict(kwargs or {})
    options.setdefault("is_termination_msg", _default_termination)
    options.setdefault("human_input_mode", "ALWAYS" if user_input else "NEVER")
    executor = ConversableAgent("user", **options)
    agent.run_executor = executor
    return executor


@contextmanager
def _lent_tools(agent: Any, executor: Any, tools: Any) -> Iterator[None]:
    """For the run: the executor runs the agent's functions and ``tools`` (callables, which
    the agent's model is also told about), taken back from both afterwards."""
    own = {n: f for n, f in agent.function_map.items() if executor.function_map.get(n) is not f}
    if own:
        executor.register_function(own)
    passed: list[Callable[..., Any]] = []
    if tools is not None:
        passed = [tools] if callable(tools) else list(tools)
    names = []
    for tool in passed:
        if not callable(tool):
            raise TypeError(f"run(tools=...) takes functions, got {type(tool).__name__}")
        name = getattr(tool, "__name__", type(tool).__name__)
        doc = (tool.__doc__ or "").strip() or name
        register_function(tool, caller=agent, executor=executor, description=doc)
        names.append(name)
    try:
        yield
    finally:
        for name in names:
            agent.update_tool_signature(name, is_remove=True)
            executor.register_function({name: None})


async def _drive(state: RunState, plan: _Plan) -> None:
    """The run's chat, from its ``run_start`` to its ``run_completion`` (or ``error``)."""
    try:
        with (
            recording(RunRecorder(state.emit)),
            IOStream.set_default(RunIOStream(state, plan.input_timeout)),
        ):
            state.emit(RunStartEvent.build(run_id=state.id, agents=[a.name for a in plan.agents]))
            result, last_speaker = await plan.start_chat()
    except asyncio.CancelledError as e:
        state.fail(e)
        raise
    except BaseException as e:  # the consumer gets it, from the events or the outcome
        state.fail(e)
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return
    completion = RunCompletionEvent.build(
        summary=jsonable(result.summary),
        history=jsonable(result.chat_history or []),
        cost=jsonable(result.cost),
        last_speaker=last_speaker,
        termination_reason=result.termination_reason,
        chat_id=result.run_id,
    )
    state.complete(completion, result)


def _start_sync(state: RunState, plan: _Plan) -> None:
    future = start_sync(_drive(state, plan))
    state.set_canceller(future.cancel)


def _start_async(state: RunState, plan: _Plan) -> None:
    task = asyncio.get_running_loop().create_task(_drive(state, plan))
    state.set_canceller(task.cancel)
    state.task = task  # held: a task only weakly referenced by its loop may vanish


class RunMethods:
    """``run``, ``a_run``, ``run_iter`` and ``a_run_iter`` of ``ConversableAgent``."""

    run_executor: Any = None

    def _plan(self, recipient: Any, kwargs: dict[str, Any]) -> _Plan:
        chat: dict[str, Any] = {
            k: kwargs.pop(k)
            for k in (
                "clear_history",
                "silent",
                "cache",
                "max_turns",
                "summary_method",
                "summary_args",
                "message",
            )
            if k in kwargs
        }
        options: dict[str, Any] = {
            k: kwargs.pop(k)
            for k in ("executor_kwargs", "tools", "user_input", "msg_to", "input_timeout")
            if k in kwargs
        }
        return _Plan(self, recipient, {**chat, **kwargs}, **options)  # type: ignore[arg-type]

    def run(
        self,
        recipient: ConversableAgent | None = None,
        clear_history: bool = True,
        silent: bool | None = False,
        cache: Any = None,
        max_turns: int | None = None,
        summary_method: str | Callable[..., Any] | None = "last_msg",
        summary_args: dict[str, Any] | None = None,
        message: dict[str, Any] | str | Callable[..., Any] | None = None,
        executor_kwargs: dict[str, Any] | None = None,
        tools: Callable[..., Any] | Iterable[Callable[..., Any]] | None = None,
        user_input: bool | None = False,
        msg_to: str | None = "agent",
        *,
        input_timeout: float | None = None,
        **kwargs: Any,
    ) -> RunResponse:
        """Start a chat with ``recipient`` (None: with a user proxy, see the module docstring)
        and return at once: ``response.events`` yields what happens, then ``summary``,
        ``messages``, ``cost`` and ``last_speaker`` hold the outcome. The other arguments are
        ``initiate_chat``'s; ``input_timeout`` (parley's own) bounds the wait for the answer
        to each input request (None: no bound)."""
        plan = _Plan(
            self,  # type: ignore[arg-type]
            recipient,
            {
                "clear_history": clear_history,
                "silent": silent,
                "cache": cache,
                "max_turns": max_turns,
                "summary_method": summary_method,
                "summary_args": summary_args,
                "message": message,
                **kwargs,
            },
            executor_kwargs,
            tools,
            user_input,
            msg_to,
            input_timeout,
        )
        state = RunState()
        _start_sync(state, plan)
        return RunResponse(state, plan.agents)

    async def a_run(
        self, recipient: ConversableAgent | None = None, **kwargs: Any
    ) -> AsyncRunResponse:
        """``run`` for async code: the chat is a task of the running loop; ``async for`` over
        ``response.events``, ``await response.summary`` (same arguments as :meth:`run`)."""
        plan = self._plan(recipient, kwargs)
        state = RunState()
        _start_async(state, plan)
        return AsyncRunResponse(state, plan.agents)

    def run_iter(
        self,
        recipient: ConversableAgent | None = None,
        *,
        yield_on: Sequence[type[BaseEvent]] | None = None,
        **kwargs: Any,
    ) -> RunIterResponse:
        """``run`` as an iterator: ``for event in agent.run_iter(...)`` (the chat starts at the
        first iteration); ``yield_on`` keeps only those event classes (input requests always
        come). Same arguments as :meth:`run`."""
        plan = self._plan(recipient, kwargs)
        state = RunState()
        return RunIterResponse(state, plan.agents, lambda: _start_sync(state, plan), yield_on)

    def a_run_iter(
        self,
        recipient: ConversableAgent | None = None,
        *,
        yield_on: Sequence[type[BaseEvent]] | None = None,
        **kwargs: Any,
    ) -> AsyncRunIterResponse:
        """:meth:`run_iter` for ``async for`` (the chat starts, as a task of the running loop,
        at the first iteration)."""
        plan = self._plan(recipient, kwargs)
        state = RunState()
        return AsyncRunIterResponse(state, plan.agents, lambda: _start_async(state, plan), yield_on)
