"""``PausingIO``: the human of a durable chat who answers later, from anywhere.

A chat run with it stops at its first question instead of waiting: the question is committed
to the store, :class:`parley.exceptions.ChatPaused` comes out of ``initiate_chat`` (or
``resume``), and the process is free to end. Hours later another process reads the question
(``store.pending_inputs()``), answers it (``store.answer(chat_id, text)``) and resumes the
chat, again with a ``PausingIO``, so the chat goes on to its next question or its end.
"""

from __future__ import annotations

from typing import Any

from .._core import journal as _journal
from ..exceptions import ChatPaused, DurableChatError
from ..io.base import IOStream, OutputStream

__all__ = ["PausingIO"]


class PausingIO(IOStream):
    """An IOStream whose ``input`` pauses the durable chat asking; what is printed goes to
    ``output`` (the global default stream, usually the console, if not given)."""

    def __init__(self, output: OutputStream | None = None) -> None:
        self._output = output

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        out = self._output if self._output is not None else IOStream.get_global_default()
        out.print(*objects, sep=sep, end=end, flush=flush)

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        if _journal.current() is None:
            raise DurableChatError(
                "PausingIO can only pause a durable chat: start it with store= and chat_id="
            )
        raise ChatPaused(prompt)
