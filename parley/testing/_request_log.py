"""What a FakeLLMServer saw: the completion requests it received and those whose client gave up
before the answer, in order, and waiting (from the test's thread) until enough have come.

The server's loop thread records; tests read from their own thread, so every access holds one
condition's lock.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._image_parts import image_urls

__all__ = ["RecordedRequest", "RequestLog"]


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request as the server saw it, from :attr:`FakeLLMServer.received`.

    ``headers`` maps lower-cased header names to values (to check ``extra_headers``, auth,
    ``api-key``); ``query`` is the raw query string, e.g. ``"api-version=2024-02-01"`` (parse
    it with ``urllib.parse.parse_qs``); ``raw`` is the body's bytes and ``json`` its parsed
    value, None when it did not parse; ``time`` is when it arrived (``time.monotonic()``), to
    check waits such as Retry-After. ``protocol`` names the provider API it came in
    (``"openai"``, ``"anthropic"``, ``"gemini"``, ``"bedrock"``, ``"ollama"``, ``"cohere"``) and
    ``chat`` is the request as an OpenAI chat-completions body (what a responder receives;
    ``json`` itself for OpenAI's endpoints), None when it could not be read.
    """

    method: str
    path: str
    headers: Mapping[str, str]
    raw: bytes
    json: Any
    time: float
    query: str = ""
    protocol: str = "openai"
    chat: Any = None

    @property
    def image_urls(self) -> list[str]:
        """The url of every image of the request's messages, in order (data URIs as sent; a
        provider's inline image as a data URI), to assert that an image reached the model."""
        return image_urls(self.chat if self.chat is not None else self.json)


class RequestLog:
    """The received and the abandoned requests, in arrival order."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._received: list[RecordedRequest] = []
        self._abandoned: list[RecordedRequest] = []

    def receive(self, record: RecordedRequest) -> None:
        with self._changed:
            self._received.append(record)
            self._changed.notify_all()

    def abandon(self, record: RecordedRequest) -> None:
        with self._changed:
            self._abandoned.append(record)
            self._changed.notify_all()

    def clear(self) -> None:
        with self._changed:
            self._received.clear()
            self._abandoned.clear()

    @property
    def received(self) -> list[RecordedRequest]:
        with self._changed:
            return list(self._received)

    @property
    def abandoned(self) -> list[RecordedRequest]:
        with self._changed:
            return list(self._abandoned)

    def wait_for_received(self, count: int, timeout: float) -> None:
        self._wait_for(self._received, count, timeout, "requests arrived")

    def wait_for_abandoned(self, count: int, timeout: float) -> None:
        self._wait_for(self._abandoned, count, timeout, "requests were abandoned")

    def _wait_for(self, log: list[RecordedRequest], count: int, timeout: float, what: str) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: len(log) >= count, timeout):
                raise TimeoutError(f"{len(log)} of {count} {what} within {timeout} s")
