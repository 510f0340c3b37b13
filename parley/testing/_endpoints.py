"""OpenAI's two completion endpoints as wires: chat completions and the legacy text
completions, at OpenAI's paths, without ``/v1``, at Azure OpenAI's deployment paths and at
those of OpenAI-compatible providers' SDKs (Groq's ``/openai/v1``; Mistral, Together and
Cerebras use OpenAI's own)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ._model_rules import check_model_rules
from ._prompt_cache import openai_cache_usage
from ._render import Ids, completion_body, error_body, sse, stream_events
from ._render_text import text_completion_body, text_stream_events, unsendable
from ._script import ErrorReply, Reply
from ._validation import validate_chat_request, validate_completion_request
from ._wire import Wire, prompt_tokens

__all__ = ["OpenAIChat", "OpenAIText"]


def _check_chat(body: Any, *, strict: bool = True) -> None:
    """OpenAI's checks of a chat request; strict: also what its model refuses (its profile)."""
    validate_chat_request(body, strict=strict)
    if strict:
        check_model_rules(body)


@dataclass(frozen=True)
class _Endpoint:
    """What tells the two endpoints apart: the request's checks and the answer's JSON, whole
    and as stream events (the SSE framing, the errors and the auth are the same)."""

    check: Callable[..., None]
    body: Callable[[Reply, Mapping[str, Any], Ids], Any]
    events: Callable[[Reply, Mapping[str, Any], Ids], list[dict[str, Any]]]


class OpenAIChat(Wire):
    paths: ClassVar[tuple[str, ...]] = (
        "/v1/chat/completions",
        "/chat/completions",
        "/openai/v1/chat/completions",  # Groq
    )
    # Azure OpenAI: /openai/deployments/<deployment>/chat/completions?api-version=...
    pattern: ClassVar[re.Pattern[str] | None] = re.compile(
        r"^/openai/deployments/[^/]+/chat/completions$"
    )
    endpoint: ClassVar[_Endpoint] = _Endpoint(_check_chat, completion_body, stream_events)

    def validate(self, body: Any, params: Mapping[str, str], *, strict: bool) -> None:
        self.endpoint.check(body, strict=strict)

    def cached(self, reply: Reply, body: Any, chat: Mapping[str, Any], cache: Any) -> Reply:
        given = reply.usage or {}
        details = given.get("prompt_tokens_details")
        if "cached_tokens" in given or (
            isinstance(details, Mapping) and "cached_tokens" in details
        ):
            return reply  # a scripted count stands
        prompt = prompt_tokens(reply, chat)
        cached = openai_cache_usage(body, cache, prompt)
        if cached is None:
            return reply
        usage = {**given, "prompt_tokens": prompt, "cached_tokens": cached}
        return dataclasses.replace(reply, usage=usage)

    def body(self, reply: Reply, chat: Mapping[str, Any], ids: Ids) -> Any:
        return self.endpoint.body(reply, chat, ids)

    def frames(
        self, reply: Reply, chat: Mapping[str, Any], ids: Ids, query: Mapping[str, str]
    ) -> Iterator[bytes]:
        for event in self.endpoint.events(reply, chat, ids):
            yield sse(event)
        yield sse("[DONE]")

    def error(self, error: ErrorReply) -> tuple[dict[str, str], bytes]:
        return {"Content-Type": "application/json"}, error_body(error)


class OpenAIText(OpenAIChat):
    what: ClassVar[str] = "text-completion"
    paths: ClassVar[tuple[str, ...]] = ("/v1/completions", "/completions", "/openai/v1/completions")
    pattern: ClassVar[re.Pattern[str] | None] = re.compile(
        r"^/openai/deployments/[^/]+/completions$"
    )
    endpoint: ClassVar[_Endpoint] = _Endpoint(
        validate_completion_request, text_completion_body, text_stream_events
    )

    def unsendable(self, reply: Reply) -> str | None:
        return unsendable(reply)
