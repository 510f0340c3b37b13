"""What a wire protocol is to the fake server, and the pieces the protocols share.

A :class:`Wire` is one provider's API for completions: the paths it answers, its auth, how
its request reads as an OpenAI chat-completions body (``to_chat``: what responders receive,
so one script answers every provider), its own checks (``validate``), and how a scripted
:class:`Reply` or :class:`ErrorReply` looks in its JSON, its stream and its error shape. The
defaults here are OpenAI's; each provider module overrides what differs. How each provider's
API names options, finish reasons and errors is data (``wire_names.json``, read into a
:class:`WireNames` each), used by one implementation here.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, ClassVar

from ._render import Ids, chat_prompt_tokens, effective_choices, usage_for
from ._script import Choice, ErrorReply, Reply, ToolCall
from ._validation import RequestError

__all__ = [
    "Answer",
    "OpenAIMessage",
    "RequestError",
    "Wire",
    "WireNames",
    "answer",
    "arguments_object",
    "bearer",
    "data_uri",
    "first_stop",
    "forced_call",
    "function_tool",
    "json_bytes",
    "openai_chat",
    "prompt_tokens",
    "schema_format",
    "sse_event",
    "text_of",
]


@dataclass(frozen=True)
class Answer:
    """A reply as a provider without ``n`` sends it: its first choice (text cut at the stop
    sequences), the stop sequence that cut it, its tool-call ids and its usage."""

    choice: Choice
    stopped_at: str | None
    call_ids: tuple[str, ...]
    prompt_tokens: int
    completion_tokens: int
    model: str


def answer(reply: Reply, chat: Mapping[str, Any], ids: Ids) -> Answer:
    (choice,) = effective_choices(reply, {**chat, "n": 1})[:1]
    original = reply.choices[0].content or ""
    usage = usage_for(reply, chat_prompt_tokens(chat), (choice,))
    model = reply.model or chat.get("model")
    return Answer(
        choice,
        first_stop(original, chat.get("stop")),
        tuple(tc.id or ids.call() for tc in choice.tool_calls),
        usage["prompt_tokens"],
        usage["completion_tokens"],
        model if isinstance(model, str) else "fake-model",
    )


def prompt_tokens(reply: Reply, chat: Mapping[str, Any]) -> int:
    """The prompt tokens the answer to ``chat`` reports: the scripted count, else the fake's
    own count of the request."""
    given = (reply.usage or {}).get("prompt_tokens")
    return int(given) if given is not None else chat_prompt_tokens(chat)


@dataclass(frozen=True)
class WireNames:
    """How one provider's API names what OpenAI's does: its entry in ``wire_names.json``."""

    options: Mapping[str, str] = field(default_factory=dict)
    finish: Mapping[str, str] = field(default_factory=dict)
    stop_sequence: str | None = None
    capitals: bool = False
    errors: Mapping[str, str] = field(default_factory=dict)

    def chat_options(self, source: Mapping[str, Any]) -> dict[str, Any]:
        """The provider's options found in ``source``, under OpenAI's names."""
        return {ours: source[theirs] for theirs, ours in self.options.items() if theirs in source}

    def finish_reason(self, a: Answer) -> str:
        """The provider's finish reason for the answer."""
        if a.stopped_at is not None and self.stop_sequence is not None:
            return self.stop_sequence
        reason = a.choice.effective_finish_reason
        return self.finish.get(reason, reason.upper() if self.capitals else reason)

    def error_name(self, status: int) -> str:
        """The provider's name for an error of HTTP ``status``."""
        return self.errors.get(str(status)) or self.errors["5xx" if status >= 500 else "4xx"]


@functools.cache
def wire_names(protocol: str) -> WireNames:
    """``protocol``'s names (OpenAI's own, all empty, for a protocol the file does not list)."""
    text = resources.files(__package__).joinpath("wire_names.json").read_text(encoding="utf-8")
    return WireNames(**json.loads(text).get(protocol, {}))


class OpenAIMessage:
    """One provider message being read as OpenAI messages: its text and image parts, tool
    calls and tool results, added as the provider's blocks come (see :meth:`messages`)."""

    def __init__(self, role: Any) -> None:
        self.role = role
        self.parts: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.results: list[dict[str, Any]] = []

    def text(self, text: Any) -> None:
        self.parts.append({"type": "text", "text": text})

    def image(self, url: Any) -> None:
        self.parts.append({"type": "image_url", "image_url": {"url": url}})

    def call(self, call_id: Any, name: Any, arguments: Any) -> None:
        """A tool call; ``arguments`` is the provider's object, sent on as OpenAI's JSON text."""
        function = {"name": name, "arguments": json.dumps(arguments)}
        self.calls.append({"id": call_id, "type": "function", "function": function})

    def result(self, call_id: Any, content: str) -> None:
        self.results.append({"role": "tool", "tool_call_id": call_id, "content": content})

    def messages(self) -> list[dict[str, Any]]:
        """Its tool results (``tool`` messages) first, then its parts and calls as one message
        (a string content when it is all text), unless it held only tool results."""
        if not (self.parts or self.calls or not self.results):
            return list(self.results)
        text_only = all(p["type"] == "text" for p in self.parts)
        content: Any = "".join(p["text"] for p in self.parts) if text_only else self.parts
        message: dict[str, Any] = {
            "role": self.role,
            "content": content if self.parts or not self.calls else None,
        }
        if self.calls:
            message["tool_calls"] = self.calls
        return [*self.results, message]


def openai_chat(
    model: Any,
    system: str | None,
    messages: Iterable[dict[str, Any]],
    tools: list[dict[str, Any]],
    **options: Any,
) -> dict[str, Any]:
    """The OpenAI chat request a provider's request stands for (what responders receive): its
    system text as the first message, its tools when it has any, then ``options`` (``stream``,
    ``temperature``, ... already under OpenAI's names)."""
    first = [{"role": "system", "content": system}] if system else []
    chat: dict[str, Any] = {"model": model, "messages": [*first, *messages]}
    if tools:
        chat["tools"] = tools
    chat.update(options)
    return chat


def function_tool(name: Any, description: Any, parameters: Any) -> dict[str, Any]:
    """A tool declaration as OpenAI's ``tools`` entry."""
    spec = {"name": name, "description": description or "", "parameters": parameters or {}}
    return {"type": "function", "function": spec}


def schema_format(schema: Any, name: Any = None) -> dict[str, Any]:
    """A provider's output schema (None: any JSON) as OpenAI's ``response_format``, so
    responders read one shape whatever the provider."""
    if schema is None:
        return {"type": "json_object"}
    spec = {"name": name if isinstance(name, str) and name else "response", "schema": schema}
    return {"type": "json_schema", "json_schema": spec}


def forced_call(reply: Reply, chat: Mapping[str, Any]) -> Reply | str:
    """``reply`` as a provider answers a request whose ``tool_choice`` (in ``chat``, OpenAI's
    form) names the one tool the model must call: scripted text is that tool's call, with the
    text (a JSON object) as its input, since such a model can answer nothing else; text that
    is no JSON object is a script mistake (the message returned). Under ``required`` (any
    tool) the script says which call, if any: its text is sent as it is."""
    choice = chat.get("tool_choice")
    first = reply.choices[0] if reply.choices else None
    if first is None or first.tool_calls or first.function_call or first.content is None:
        return reply
    named = choice.get("function") if isinstance(choice, Mapping) else None
    if not isinstance(named, Mapping):
        return reply
    try:
        arguments = json.loads(first.content)
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        return (
            f"the request forces the tool {named.get('name')!r}, whose input is a JSON "
            f"object, but the scripted reply is not one: {first.content[:80]!r}"
        )
    call = ToolCall(str(named.get("name")), first.content)
    forced = dataclasses.replace(first, content=None, tool_calls=(call,))
    return dataclasses.replace(reply, choices=(forced, *reply.choices[1:]))


def first_stop(text: str, stop: Any) -> str | None:
    """The stop sequence that cuts ``text`` first, or None."""
    stops = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []
    found = [(text.find(s), s) for s in stops if isinstance(s, str) and s and s in text]
    return min(found)[1] if found else None


def arguments_object(arguments: str) -> Any:
    """A tool call's scripted arguments as the object providers other than OpenAI send."""
    try:
        return json.loads(arguments)
    except ValueError:
        return {}


def json_bytes(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()


def sse_event(name: str | None, payload: Any) -> bytes:
    """One server-sent event, with an ``event:`` line when ``name`` is given."""
    head = f"event: {name}\n" if name else ""
    return head.encode() + b"data: " + json_bytes(payload) + b"\n\n"


def bearer(headers: Mapping[str, str], key: str) -> bool:
    return headers.get("authorization") == f"Bearer {key}"


def data_uri(media_type: Any, data: Any) -> str:
    return f"data:{media_type};base64,{data}"


def text_of(content: Any, key: str = "text") -> str:
    """The text of a provider's content: a string, or the ``key`` of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get(key, "")) for b in content if isinstance(b, Mapping))
    return ""


class Wire:
    """One provider's completion API (OpenAI's chat completions by default)."""

    protocol: ClassVar[str] = "openai"
    what: ClassVar[str] = "chat-completion"
    stream_type: ClassVar[str] = "text/event-stream"
    paths: ClassVar[tuple[str, ...]] = ()
    pattern: ClassVar[re.Pattern[str] | None] = None
    # A provider whose path says that a call streams (Bedrock's converse-stream, Gemini's
    # streamGenerateContent) names that path action here.
    stream_action: ClassVar[str | None] = None

    def match(self, path: str) -> dict[str, str] | None:
        """The path's parameters (e.g. the model) if this wire answers ``path``, else None."""
        if path in self.paths:
            return {}
        found = self.pattern.match(path) if self.pattern is not None else None
        return None if found is None else found.groupdict()

    def authorized(self, headers: Mapping[str, str], query: Mapping[str, str], key: str) -> bool:
        # OpenAI sends a bearer token; Azure OpenAI an api-key header.
        return bearer(headers, key) or headers.get("api-key") == key

    def validate(self, body: Any, params: Mapping[str, str], *, strict: bool) -> None:
        """Raise :class:`RequestError` where the provider answers ``body`` with a 400."""

    def to_chat(self, body: Any, params: Mapping[str, str]) -> dict[str, Any]:
        """``body`` as an OpenAI chat-completions request."""
        return dict(body)

    def streams(self, body: Any, params: Mapping[str, str], query: Mapping[str, str]) -> bool:
        if self.stream_action is not None:
            return params.get("action") == self.stream_action
        return isinstance(body, Mapping) and body.get("stream") is True

    def cached(self, reply: Reply, body: Any, chat: Mapping[str, Any], cache: Any) -> Reply:
        """``reply`` with the prompt-cache counts the provider would report for ``body`` in
        its usage, by the server's ``cache`` (a :class:`~parley.testing._prompt_cache.
        PromptCache`, updated); by default the provider caches nothing."""
        return reply

    def body(self, reply: Reply, chat: Mapping[str, Any], ids: Ids) -> Any:
        """The JSON payload of a non-streamed answer."""
        raise NotImplementedError

    def frames(
        self, reply: Reply, chat: Mapping[str, Any], ids: Ids, query: Mapping[str, str]
    ) -> Iterator[bytes]:
        """The pieces of a streamed answer, each sent on its own (paced by ``chunk_delay``)."""
        raise NotImplementedError

    @property
    def names(self) -> WireNames:
        return wire_names(self.protocol)

    def error(self, error: ErrorReply) -> tuple[dict[str, str], bytes]:
        """The headers and body of ``error`` in the provider's shape (``body`` verbatim)."""
        headers = {"Content-Type": "application/json", **self.error_headers(error)}
        if error.body is not None:
            return headers, error.body.encode()
        message = error.message or f"Fake LLM server error {error.status}"
        return headers, json_bytes(self.error_payload(error, message))

    def error_headers(self, error: ErrorReply) -> dict[str, str]:
        """Headers of the provider's error responses besides the content type."""
        return {}

    def error_payload(self, error: ErrorReply, message: str) -> Any:
        """The JSON of ``error``, whose message is ``message``."""
        raise NotImplementedError

    def unsendable(self, reply: Reply) -> str | None:
        """Why ``reply`` cannot answer this wire's requests, or None."""
        return None

    def answering(self, reply: Reply, chat: Mapping[str, Any]) -> Reply | str:
        """``reply`` as the provider would send it for the request ``chat`` (a provider whose
        request can force a tool call sends scripted text as that call: :func:`forced_call`),
        or why it cannot answer that request."""
        return reply

    def unauthorized(self) -> ErrorReply:
        from ._script import make_error

        return make_error(401, "Incorrect API key provided.", code="invalid_api_key")
