"""What a batch gives back: every chat's result in input order, the failures beside them."""

from __future__ import annotations

import pickle
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ..usage import Usage

__all__ = ["BatchFailedError", "BatchResult", "ChatError"]

R = TypeVar("R")


class BatchFailedError(RuntimeError):
    """Raised by :meth:`BatchResult.raise_errors` when chats of the batch failed."""


@dataclass(frozen=True)
class ChatError:
    """Why one chat of a batch has no result, after its last attempt.

    ``type`` is the exception's qualified class name (``"openai.RateLimitError"``),
    ``message`` its text and ``traceback`` the formatted traceback, all plain strings so that
    the error crosses processes (Ray) whatever the exception was. ``exception`` is the
    exception itself when it survived the trip (always on the local backend; on Ray when it
    pickles). ``attempts`` counts the tries, ``retryable`` says whether the batch's
    ``retry_on`` deemed it worth another one (it ran out of ``retries`` then).
    """

    index: int
    chat_id: str | None
    type: str
    message: str
    traceback: str
    attempts: int
    retryable: bool
    exception: BaseException | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(
        cls,
        index: int,
        chat_id: str | None,
        error: BaseException,
        attempts: int,
        retryable: bool,
        *,
        keep: str = "always",
    ) -> ChatError:
        """The record of ``error``; ``keep="picklable"`` drops an exception that would not
        pickle (one going to another process)."""
        kind = type(error)
        name = (
            kind.__qualname__
            if kind.__module__ == "builtins"
            else f"{kind.__module__}.{kind.__qualname__}"
        )
        text = "".join(traceback.format_exception(kind, error, error.__traceback__))
        kept: BaseException | None = error
        if keep == "picklable":
            try:
                pickle.loads(pickle.dumps(error))
            except Exception:
                kept = None
        return cls(index, chat_id, name, str(error), text, attempts, retryable, kept)

    def __str__(self) -> str:
        where = f"chat {self.index}" + (f" ({self.chat_id})" if self.chat_id else "")
        tries = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        return f"{where} failed{tries}: {self.type}: {self.message}"


@dataclass
class BatchResult(Generic[R]):
    """The outcome of :func:`parley.batch.run_chats`.

    - ``results``: one entry per input, in input order: what the chat factory returned (a
      ``ChatResult``, or a list of them for a chat queue), or None for a chat that failed
      (see ``errors``) or never started (see ``not_run``);
    - ``errors``: input index -> :class:`ChatError`, for the chats that failed;
    - ``not_run``: the indexes of the chats a spent batch budget kept from starting
      (``stop_reason`` names the limit: ``"budget:cost"``, ...);
    - ``usage``: every model call the batch's chats made (a :class:`parley.usage.Usage`),
      failed attempts included: the sum of the results' usage when every chat succeeded at
      its first attempt. ``cost`` is its cost in US dollars;
    - ``chat_ids``: each input's durable chat id (a batch run with a ``store``), else None;
    - ``seconds``: the batch's wall time; ``backend``: ``"local"`` or ``"ray"``;
    - ``workers``: how many chats each worker finished (``"local"``; on Ray
      ``"<node id>/<pid>"`` per worker process).

    Iterating, indexing and ``len`` go over ``results``; ``ok`` is true when every chat
    gave a result.
    """

    results: list[R | None]
    errors: dict[int, ChatError] = field(default_factory=dict)
    not_run: list[int] = field(default_factory=list)
    stop_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    chat_ids: list[str] | None = None
    seconds: float = 0.0
    backend: str = "local"
    workers: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors and not self.not_run

    @property
    def cost(self) -> float:
        """US dollars spent by the batch's model calls (cache hits excluded)."""
        return self.usage.cost

    @property
    def chats_per_second(self) -> float:
        done = len(self.results) - len(self.errors) - len(self.not_run)
        return done / self.seconds if self.seconds > 0 else 0.0

    def succeeded(self) -> list[tuple[int, R]]:
        """``(index, result)`` of every chat that gave a result, in input order."""
        return [(i, r) for i, r in enumerate(self.results) if r is not None]

    def raise_errors(self) -> None:
        """Raise :class:`BatchFailedError` if a chat failed (its cause: the first failed
        chat's exception, when it crossed from its process)."""
        if not self.errors:
            return
        first = self.errors[min(self.errors)]
        message = f"{len(self.errors)} of {len(self.results)} chats failed; the first: {first}"
        if first.exception is None:
            raise BatchFailedError(message + "\n" + first.traceback)
        raise BatchFailedError(message) from first.exception

    def __iter__(self) -> Iterator[R | None]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, index: int) -> R | None:
        return self.results[index]

    def __repr__(self) -> str:
        done = len(self.results) - len(self.errors) - len(self.not_run)
        parts = [f"{done} ok", f"{len(self.errors)} failed"]
        if self.not_run:
            parts.append(f"{len(self.not_run)} not run ({self.stop_reason})")
        return (
            f"BatchResult({len(self.results)} chats on {self.backend}: {', '.join(parts)}; "
            f"{self.seconds:.1f} s, {self.usage.llm_calls} model calls, "
            f"cost {self.cost:.6f} USD)"
        )
