"""The stream protocols and the default-stream registry (AutoGen's ``autogen.io.base``).

Everything a user sees or types goes through ``IOStream.get_default()``. Which stream that is
depends on where the code runs::

    with IOStream.set_default(my_stream):   # this thread / asyncio task only
        user.initiate_chat(assistant, message="hi")

The context-local default lives in a :class:`contextvars.ContextVar`, so each thread and each
asyncio task sees its own; outside any ``set_default`` block the process-wide global default
applies (importing :mod:`parley.io` makes that an ``IOConsole``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = ["IOStream", "InputStream", "OutputStream"]

_StreamT = TypeVar("_StreamT", bound="IOStream | None")

# Kept at module level, not as class attributes as AutoGen does: a runtime-checkable protocol
# treats every class attribute as a member, and non-method members break issubclass checks.
_context_default: ContextVar[IOStream | None] = ContextVar("parley_io_default", default=None)
_global_default: IOStream | None = None


@runtime_checkable
class OutputStream(Protocol):
    """Something that can show text to the human, with builtin ``print``'s arguments."""

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        """Show ``objects`` joined by ``sep`` and followed by ``end``."""
        ...  # pragma: no cover


@runtime_checkable
class InputStream(Protocol):
    """Something that can ask the human for one line of text."""

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        """Show ``prompt`` and return the human's answer; ``password`` hides what is typed."""
        ...  # pragma: no cover


@runtime_checkable
class IOStream(InputStream, OutputStream, Protocol):
    """A stream that can both print and read input; also the registry of the default stream.

    ``isinstance(x, IOStream)`` is true for any object whose class has callable ``print`` and
    ``input`` methods, whether or not it subclasses ``IOStream`` (the static methods below are
    not required of a stream).
    """

    @classmethod
    def __subclasshook__(cls, other: type) -> Any:  # True or NotImplemented
        # Only the protocol itself is structural: a concrete subclass such as IOConsole must keep
        # ordinary nominal isinstance checks, or every stream would count as an IOConsole.
        if cls is not IOStream:
            return NotImplemented
        if all(callable(getattr(other, name, None)) for name in ("print", "input")):
            return True
        return NotImplemented

    @staticmethod
    def set_global_default(stream: IOStream) -> None:
        """Make ``stream`` the process-wide fallback used outside any ``set_default`` block."""
        global _global_default
        _global_default = _checked(stream, "IOStream.set_global_default")

    @staticmethod
    def get_global_default() -> IOStream:
        """The process-wide fallback stream; ``RuntimeError`` if none was ever set."""
        if _global_default is None:
            raise RuntimeError(
                "no global default IOStream has been set; import parley.io (which installs an "
                "IOConsole) or call IOStream.set_global_default(stream)"
            )
        return _global_default

    @staticmethod
    def get_default() -> IOStream:
        """The stream for the current thread / asyncio task, else the global default."""
        # The global default is read on every call, never copied into the context (AutoGen
        # tries to copy it, without effect): a later set_global_default must still reach code
        # that never called set_default.
        stream = _context_default.get()
        return stream if stream is not None else IOStream.get_global_default()

    @staticmethod
    def set_default(stream: _StreamT) -> AbstractContextManager[_StreamT]:
        """Context manager: ``stream`` is the default for this context inside the ``with``.

        It yields ``stream`` (AutoGen yields ``None``), so ``with IOStream.set_default(
        IOScripted(["exit"])) as io:`` keeps a handle on it. ``None`` means "the global
        default" for the duration of the block. Calling it without ``with`` does nothing.
        """
        if stream is not None:
            _checked(stream, "IOStream.set_default")
        return _use(stream)


@contextmanager
def _use(stream: _StreamT) -> Iterator[_StreamT]:
    token = _context_default.set(stream)
    try:
        yield stream
    finally:
        _context_default.reset(token)


def _checked(stream: Any, where: str) -> IOStream:
    if isinstance(stream, type):
        raise TypeError(
            f"{where} needs a stream instance, got the class {stream.__name__}; "
            f"call it: {stream.__name__}()"
        )
    if not isinstance(stream, IOStream):
        missing = [f"{n}()" for n in ("print", "input") if not callable(getattr(stream, n, None))]
        raise TypeError(
            f"{where} needs an IOStream (an object with print() and input() methods); "
            f"got {type(stream).__name__}, which lacks {' and '.join(missing)}"
        )
    return stream
