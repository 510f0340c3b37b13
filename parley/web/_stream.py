"""The :class:`~parley.io.IOStream` that talks to the page: what chats print goes to the
page's console of their chat; what they ask becomes a request the page answers. (The draft of
a message being streamed comes from the ``token_delta`` reports: :mod:`parley.web._listener`.)
"""

from __future__ import annotations

from typing import Any

from .._core import events as _events
from .._core.reports import TurnStep
from ..io import IOStream
from ..usage._run import current_run
from ._hub import Hub
from ._listener import agent_name

__all__ = ["WebIOStream", "asker"]


def asker() -> tuple[str | None, str | None]:
    """(the agent whose turn asks, the agent it answers), from the running turn's report."""
    step = _events.current_step()
    while step is not None:
        if isinstance(step, TurnStep):
            sender = step.attrs["sender"]
            return agent_name(step.agent), str(sender) if sender is not None else None
        step = step.parent
    return None, None


class WebIOStream(IOStream):
    """Prints to the page and asks the page's human (see the module docstring).

    ``input`` blocks its thread (parley calls a stream's ``input`` in a worker thread) until
    a page answers, the chat is stopped from the page (``"exit"``), or the server is closed
    (:class:`~parley.web.WebHumanClosedError`). With ``echo``, everything printed is also
    printed there (the terminal, say).
    """

    def __init__(self, hub: Hub, echo: IOStream | None = None) -> None:
        self._hub = hub
        self._echo = echo

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        if self._echo is not None:
            self._echo.print(*objects, sep=sep, end=end, flush=flush)
        text = sep.join(map(str, objects)) + end
        self._hub.printed(current_run(), text)

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        agent, sender = asker()
        _, answer = self._hub.ask(
            current_run(), "input", prompt, agent=agent, sender=sender, password=password
        )
        return answer.result()
