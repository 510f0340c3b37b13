"""``IOScripted``: a stream that plays the human from a script, for tests, scripts and notebooks.

::

    from parley.io import IOScripted, IOStream

    with IOStream.set_default(IOScripted(["", "exit"])) as io:
        user.initiate_chat(assistant, message="Plot a chart")
    assert "TERMINATE" in io.text
    assert io.prompts[0].startswith("Provide feedback to assistant")  # user: "ALWAYS" mode

Answers come from the queued replies first (given to the constructor or added later with
``add_replies``), then from the callable ``fn(prompt) -> str`` if one was given. When neither
can answer, ``input`` raises :class:`InputExhaustedError` naming the prompt, so a chat that
asks the human once more than the script expected fails at once instead of waiting forever.
"""

from __future__ import annotations

import inspect
import threading
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from ..exceptions import InputExhaustedError
from .base import IOStream, OutputStream

__all__ = ["IOScripted", "InputExhaustedError"]


class IOScripted(IOStream):
    """An :class:`IOStream` that records what is printed and answers ``input`` from a script.

    Args:
        replies: the answers to give, in order (a list or tuple of ``str``), or a callable
            ``fn(prompt) -> str`` that is called, synchronously, for every prompt once the
            queued replies are used up.
        echo: another stream that also receives everything printed, plus each prompt with
            its answer on one line (as a terminal would show it; password answers are hidden).

    Recording is thread-safe. What was printed is in :attr:`printed` (one string per ``print``
    call, ``sep`` and ``end`` applied) and :attr:`text` (all of it joined); prompts are kept
    separately in :attr:`prompts`, not in the printed text.
    """

    def __init__(
        self,
        replies: Sequence[str] | Callable[[str], str] = (),
        *,
        echo: OutputStream | None = None,
    ) -> None:
        self._fn: Callable[[str], str] | None = None
        queued: Sequence[str] = ()
        if inspect.iscoroutinefunction(replies):
            raise TypeError(
                "IOScripted's reply function must be a plain function, not async: input() is "
                f"synchronous; got {_name(replies)}"
            )
        if callable(replies):
            self._fn = replies
        elif isinstance(replies, (str, bytes)) or not isinstance(replies, Sequence):
            hint = (
                f"; for a single reply write IOScripted([{replies!r}])"
                if isinstance(replies, str)
                else ""
            )
            raise TypeError(
                "IOScripted replies must be a list of strings or a callable fn(prompt) -> str, "
                f"got {type(replies).__name__}{hint}"
            )
        else:
            queued = replies
        if echo is not None and not isinstance(echo, OutputStream):
            raise TypeError(
                f"IOScripted echo must be an output stream (with a print() method), "
                f"got {type(echo).__name__}"
            )
        self._echo = echo
        self._lock = threading.RLock()
        self._replies: deque[str] = deque()
        self._printed: list[str] = []
        self._prompts: list[str] = []
        self.add_replies(*queued)

    def add_replies(self, *replies: str) -> None:
        """Queue more answers; they are used before the callable, if any."""
        for i, reply in enumerate(replies):
            if not isinstance(reply, str):
                raise TypeError(
                    f"IOScripted replies must be strings; reply {i} is "
                    f"{type(reply).__name__} {reply!r}"
                )
        with self._lock:
            self._replies.extend(replies)

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        text = sep.join(map(str, objects)) + end
        # Echo under the lock too, so the echo shows lines in the order they were recorded.
        with self._lock:
            self._printed.append(text)
            if self._echo is not None:
                self._echo.print(*objects, sep=sep, end=end, flush=flush)

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        with self._lock:
            self._prompts.append(prompt)
            answered = len(self._prompts) - 1
            reply = self._replies.popleft() if self._replies else None
        if reply is None:
            if self._fn is None:
                raise InputExhaustedError(prompt, answered)
            # Called outside the lock: it may block on a real human or print to this stream.
            reply = self._fn(prompt)
            if isinstance(reply, Coroutine):
                reply.close()  # never awaited: close it so no "never awaited" warning follows
            if not isinstance(reply, str):
                raise TypeError(
                    f"IOScripted's reply function {_name(self._fn)} must return a str, "
                    f"returned {type(reply).__name__} for the prompt {prompt!r}"
                )
        if self._echo is not None:
            with self._lock:
                self._echo.print(prompt + ("" if password else reply), flush=True)
        return reply

    @property
    def printed(self) -> list[str]:
        """What was printed, one string per ``print`` call (a copy)."""
        with self._lock:
            return list(self._printed)

    @property
    def text(self) -> str:
        """Everything printed, as one string."""
        with self._lock:
            return "".join(self._printed)

    @property
    def prompts(self) -> list[str]:
        """Every prompt ``input`` was called with, in order (a copy)."""
        with self._lock:
            return list(self._prompts)

    @property
    def remaining(self) -> list[str]:
        """The queued replies not used yet (a copy); ``[]`` means the script was used up."""
        with self._lock:
            return list(self._replies)

    def clear(self) -> None:
        """Forget what was printed and prompted (queued replies are kept)."""
        with self._lock:
            self._printed.clear()
            self._prompts.clear()


def _name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)
