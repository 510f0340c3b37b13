"""How the async core reaches an agent's steps, and message delivery without recursion.

**Steps.** The core calls an agent's overridable steps through the functions here (``send``,
``receive``, ``generate_reply``, ``initiate_chat``, ``get_human_input``,
``generate_init_message``), never through
``getattr`` on a method name. AutoGen code often customises an agent by overriding a *sync*
step (``receive``, say) and not its async twin; the core then runs the override in a worker
thread, so it takes effect in sync and async chats alike. Which form a class uses is decided
once per class, by ``_overrides``.

**Delivery.** AutoGen's conversation is recursive (send -> receive -> send ...), one stack
level per message, so a long chat can hit the recursion limit. Here a reply produced inside
``a_receive`` is queued for the *driver* — the outermost send of this exchange, which loops
until the queue is empty. ``await a.a_send(msg, b)`` still returns only when the exchange is
over, as in AutoGen. Reply functions and hooks run with no driver in their context
(:class:`no_driver`), so a chat started from inside one (a nested chat, a sync
``initiate_chat`` in a callback) is driven on its own and completes before the callback
returns.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from .._agent_protocol import Agent
from .._core import journal as _journal
from .._core.runtime import to_thread
from ..types import Message
from . import _overrides

if TYPE_CHECKING:
    from ._state import AgentCore

__all__ = [
    "generate_init_message",
    "generate_reply",
    "get_human_input",
    "initiate_chat",
    "no_driver",
    "receive",
    "send",
    "send_reply",
]


def _uses_sync(obj: Any, step: str) -> bool:
    return step in _overrides.of(obj).sync_steps


async def _run(agent: Agent, step: str, *args: Any, **kwargs: Any) -> Any:
    if _uses_sync(agent, step):
        # A cancelled chat returns at once; the token stops what the override started.
        return await to_thread(getattr(agent, step), *args, **kwargs)
    return await getattr(agent, "a_" + step)(*args, **kwargs)


async def _message_step(
    step: Literal["send", "receive"],
    agent: Agent,
    message: Mapping[str, Any] | str,
    other: Agent,
    request_reply: bool | None = None,
    silent: bool | None = False,
) -> None:
    """``agent``'s step sending ``message`` to ``other``, or receiving it from ``other``; in a
    durable chat, what is sent is checked against the journal first."""
    if step == "send" and _journal.current() is not None:  # one contextvar read otherwise
        await _journal.check_message(agent.name, other.name, message)
    await _run(agent, step, message, other, request_reply, silent)


send = functools.partial(_message_step, "send")
receive = functools.partial(_message_step, "receive")


async def generate_reply(
    agent: Agent, messages: list[Message] | None = None, sender: Agent | None = None
) -> Any:
    return await _run(agent, "generate_reply", messages=messages, sender=sender)


async def initiate_chat(agent: Agent, **chat: Any) -> Any:
    return await _run(agent, "initiate_chat", **chat)


async def generate_init_message(agent: Agent, message: Any, **kwargs: Any) -> Any:
    return await _run(agent, "generate_init_message", message, **kwargs)


async def get_human_input(agent: AgentCore, prompt: str) -> str:
    if _uses_sync(agent, "get_human_input"):
        # Not run_in_thread: a terminal's input() cannot be interrupted, and a cancelled chat
        # must not wait for the human to press enter.
        return str(await asyncio.to_thread(agent.get_human_input, prompt))
    return str(await agent.a_get_human_input(prompt))


# -- delivery -----------------------------------------------------------------------------

_Pending = tuple[Agent, Any, Agent, Any]  # (agent, message, recipient, silent)
_driver: contextvars.ContextVar[deque[_Pending] | None] = contextvars.ContextVar(
    "parley_driver", default=None
)


async def send_reply(
    agent: Agent, message: Mapping[str, Any] | str, recipient: Agent, silent: bool | None
) -> None:
    """Send ``message`` from ``agent`` as a reply: queued if an exchange is being driven, else
    driven here until the exchange ends."""
    queue = _driver.get()
    if queue is not None:
        queue.append((agent, message, recipient, silent))
        return
    queue = deque([(agent, message, recipient, silent)])
    token = _driver.set(queue)
    try:
        while queue:
            sender, msg, to, quiet = queue.popleft()
            await send(sender, msg, to, silent=quiet)
    finally:
        _driver.reset(token)


class no_driver:
    """Run user callbacks outside the current exchange (see the module docstring)."""

    def __enter__(self) -> None:
        self._token = _driver.set(None)

    def __exit__(self, *exc: object) -> None:
        _driver.reset(self._token)
