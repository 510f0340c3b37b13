"""What a span says about a step: its name and attributes (the tracer of :mod:`parley.tracing`).

Names follow OpenTelemetry's GenAI semantic conventions where one fits (``gen_ai.*``: the
operation, the model, the tokens, the agent, the tool) and ``parley.*`` otherwise. The values
come from the step's typed ``attrs`` (:mod:`parley._core.reports`), read key by key: a
request, a response or a client object is never dumped whole, so nothing but what is listed
here leaves the process. Message contents, tool arguments and results, code and its output
are only added with ``capture_content`` (they may hold personal data), and then without the
configured credentials' values (:mod:`parley._credentials`), as the runtime log writes them.

Plain Python, no OpenTelemetry import: the listener turns these dicts into spans.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ._core.events import Step
from ._core.reports import (
    ChatStep,
    CodeExecutionStep,
    LLMCallStep,
    ReplyFuncStep,
    SpeakerSelectionStep,
    SummaryStep,
    ToolCallStep,
    TurnStep,
)
from ._credentials import scrub

__all__ = ["Attrs", "Outcome", "end_attributes", "span_name_and_attributes"]

Attrs = dict[str, Any]
"""Span attributes: str keys, values a str, bool, int, float or a list of one of those."""

Outcome = tuple[Attrs, str | None]
"""The end attributes and, when the step failed without raising, why (the span's error)."""

# The request options the conventions name (gen_ai.request.*), from the body's keys.
_REQUEST_OPTIONS = (
    ("temperature", "gen_ai.request.temperature"),
    ("max_tokens", "gen_ai.request.max_tokens"),
    ("max_completion_tokens", "gen_ai.request.max_tokens"),
    ("top_p", "gen_ai.request.top_p"),
    ("frequency_penalty", "gen_ai.request.frequency_penalty"),
    ("presence_penalty", "gen_ai.request.presence_penalty"),
    ("seed", "gen_ai.request.seed"),
    ("n", "gen_ai.request.choice.count"),
    ("stream", "gen_ai.request.stream"),
)


def span_name_and_attributes(step: Step, content: bool) -> tuple[str, Attrs]:
    """The span name and start attributes of ``step``."""
    start = _STARTS.get(type(step))
    attrs: Attrs = {"parley.step.kind": step.kind}
    agent = _name_of(step.agent)
    if agent is not None:
        attrs["gen_ai.agent.name"] = agent
    if start is None:
        return f"{step.kind} {step.name}".strip(), attrs
    name = start(step, attrs, content)
    return name, _scrubbed(attrs) if content else attrs


def end_attributes(step: Step, content: bool) -> Outcome:
    """The attributes ``step`` adds when it ends, and the failure it reports, if any."""
    end = _ENDS.get(type(step))
    if end is None:
        return {}, None
    attrs: Attrs = {}
    failure = end(step, attrs, content)
    if failure is not None:
        failure = scrub(failure)
    return (_scrubbed(attrs) if content else attrs), failure


def _scrubbed(attrs: Attrs) -> Attrs:
    """``attrs`` with the configured credentials' values replaced in every text: content (a
    tool's output, a model's reply) may quote a key, as the runtime log's would."""
    for key, value in attrs.items():
        if isinstance(value, str):
            attrs[key] = scrub(value)
    return attrs


# -- start -----------------------------------------------------------------------------------


def _chat(step: ChatStep, out: Attrs, content: bool) -> str:
    a = step.attrs
    out["gen_ai.operation.name"] = "invoke_workflow"
    out["gen_ai.workflow.name"] = step.name
    _put(out, "gen_ai.conversation.id", a["chat_id"])
    _put(out, "parley.chat.id", a["chat_id"])
    _put(out, "parley.chat.parent_id", a["parent_chat_id"])
    _put(out, "parley.chat.sender", a["sender"])
    _put(out, "parley.chat.recipient", a["recipient"])
    _put(out, "parley.chat.max_turns", a["max_turns"])
    if content and a["message"] is not None:
        out["parley.chat.message"] = _text(a["message"])
    return f"chat {a['sender']} -> {a['recipient']}"


def _turn(step: TurnStep, out: Attrs, content: bool) -> str:
    a = step.attrs
    out["gen_ai.operation.name"] = "invoke_agent"
    _put(out, "parley.turn.sender", a["sender"])
    _put(out, "parley.turn.messages", a["messages"])
    return f"invoke_agent {step.name}"


def _reply_func(step: ReplyFuncStep, out: Attrs, content: bool) -> str:
    a = step.attrs
    out["parley.reply_func.name"] = step.name
    _put(out, "parley.reply_func.sender", a["sender"])
    return f"reply_func {step.name}"


def _llm_call(step: LLMCallStep, out: Attrs, content: bool) -> str:
    a = step.attrs
    request = a["request"]
    model = a["model"] or request.get("model") or ""
    provider = _provider(a["client"])
    out["gen_ai.operation.name"] = "chat"
    out["gen_ai.provider.name"] = provider
    out["gen_ai.system"] = provider  # the name before gen_ai.provider.name; backends still read it
    _put(out, "gen_ai.request.model", model or None)
    for key, attr in _REQUEST_OPTIONS:
        value = request.get(key)
        if isinstance(value, (bool, int, float)) and not (key == "stream" and not value):
            out[attr] = value
    stop = request.get("stop")
    if stop:
        out["gen_ai.request.stop_sequences"] = [stop] if isinstance(stop, str) else _strs(stop)
    _put(out, "parley.purpose", a["purpose"])
    # The agent the call is charged to (a group manager for its speaker selection), which
    # may differ from the agent that sent it (the manager's internal selection agent).
    _put(out, "gen_ai.agent.name", a["charged_to"])
    _put(out, "parley.config_id", a["config_id"])
    if content:
        system, chat = _split_system(request.get("messages"))
        if system:
            out["gen_ai.system_instructions"] = _json(system)
        out["gen_ai.input.messages"] = _json(chat)
        if request.get("tools"):
            out["gen_ai.tool.definitions"] = _json(request["tools"])
    return f"chat {model}".strip()


def _tool_call(step: ToolCallStep, out: Attrs, content: bool) -> str:
    a = step.attrs
    out["gen_ai.operation.name"] = "execute_tool"
    out["gen_ai.tool.name"] = step.name
    out["gen_ai.tool.type"] = "function"
    _put(out, "gen_ai.tool.call.id", a["call_id"])
    _put(out, "parley.tool.approval", a.get("approval"))
    if content:
        out["gen_ai.tool.call.arguments"] = _json(a["arguments"])
    return f"execute_tool {step.name}"


def _code_execution(step: CodeExecutionStep, out: Attrs, content: bool) -> str:
    a = step.attrs
    _put(out, "parley.code.executor", a["executor"])
    _put(out, "parley.code.approval", a.get("approval"))
    languages = a["languages"]
    if languages:
        out["parley.code.languages"] = _strs(languages)
    if content:
        _put(out, "parley.code.source", a["code"])
    return "execute_code"


def _speaker_selection(step: SpeakerSelectionStep, out: Attrs, content: bool) -> str:
    a = step.attrs
    _put(out, "parley.speaker.last", a["last_speaker"])
    return f"select_speaker {step.name}"


def _summary(step: SummaryStep, out: Attrs, content: bool) -> str:
    a = step.attrs
    method = a["method"]
    shown = getattr(method, "__name__", None) or str(method)
    out["parley.summary.method"] = shown
    return f"summarize {shown}"


# By the step's class: each handler reads the attributes its kind's type declares.
_STARTS: dict[type[Step], Callable[[Any, Attrs, bool], str]] = {
    ChatStep: _chat,
    TurnStep: _turn,
    ReplyFuncStep: _reply_func,
    LLMCallStep: _llm_call,
    ToolCallStep: _tool_call,
    CodeExecutionStep: _code_execution,
    SpeakerSelectionStep: _speaker_selection,
    SummaryStep: _summary,
}


# -- end -------------------------------------------------------------------------------------


def _chat_end(step: ChatStep, out: Attrs, content: bool) -> str | None:
    a = step.attrs
    _put(out, "parley.termination_reason", a.get("termination_reason"))
    usage = a.get("usage")
    if usage is not None:
        # Totals of the whole chat (nested chats included): a sum over the llm_call spans
        # gives the same, so these are parley.* rather than gen_ai.usage.*.
        out["parley.cost_usd"] = float(usage.cost)
        out["parley.usage.input_tokens"] = int(usage.prompt_tokens)
        out["parley.usage.output_tokens"] = int(usage.completion_tokens)
        out["parley.usage.total_tokens"] = int(usage.total_tokens)
        out["parley.llm_calls"] = int(usage.llm_calls)
        out["parley.cached_calls"] = int(usage.cached_calls)
    if content and a.get("summary") is not None:
        out["parley.chat.summary"] = _text(a["summary"])
    return None


def _turn_end(step: TurnStep, out: Attrs, content: bool) -> str | None:
    a = step.attrs
    reply = a.get("reply")
    out["parley.turn.replied"] = reply is not None
    if content and reply is not None:
        out["gen_ai.output.messages"] = _json([_message(reply, "assistant")])
    return None


def _reply_func_end(step: ReplyFuncStep, out: Attrs, content: bool) -> str | None:
    a = step.attrs
    _put(out, "parley.reply_func.final", a.get("final"))
    return None


_TOKEN_DETAILS = (
    ("cached_tokens", "gen_ai.usage.cache_read.input_tokens"),
    ("cache_creation_tokens", "gen_ai.usage.cache_creation.input_tokens"),
    ("reasoning_tokens", "gen_ai.usage.reasoning.output_tokens"),
)


def _llm_call_end(step: LLMCallStep, out: Attrs, content: bool) -> str | None:
    a = step.attrs
    _put(out, "gen_ai.response.model", a.get("response_model"))
    response = a.get("response")
    response_id = getattr(response, "id", None)
    if isinstance(response_id, str):
        out["gen_ai.response.id"] = response_id
    reasons = a.get("finish_reasons")
    if reasons:
        out["gen_ai.response.finish_reasons"] = [str(r) for r in reasons if r is not None]
    usage = a.get("usage")
    if isinstance(usage, Mapping):
        _put(out, "gen_ai.usage.input_tokens", _int(usage.get("prompt_tokens")))
        _put(out, "gen_ai.usage.output_tokens", _int(usage.get("completion_tokens")))
        # The parts of those counts a provider reported (OpenAI's cached and reasoning tokens,
        # Anthropic's cache writes); left out when it reported none.
        for ours, theirs in _TOKEN_DETAILS:
            _put(out, theirs, _int(usage.get(ours)) or None)
    if "cost" in a:
        out["parley.cost_usd"] = float(a.get("cost") or 0.0)
    _put(out, "parley.cached", a.get("cached"))
    if a["replayed"]:
        out["parley.replayed"] = True
    if content and response is not None:
        out["gen_ai.output.messages"] = _json(_choices(response))
    return None


def _tool_call_end(step: ToolCallStep, out: Attrs, content: bool) -> str | None:
    a = step.attrs
    success = a.get("success")
    _put(out, "parley.tool.success", success)
    if content and "result" in a:
        out["gen_ai.tool.call.result"] = _text(a.get("result"))
    # The tool's error went back to the model as its result; the span still shows it failed.
    return "the tool failed" if success is False else None


def _code_execution_end(step: CodeExecutionStep, out: Attrs, content: bool) -> str | None:
    a = step.attrs
    exit_code = a.get("exit_code")
    _put(out, "parley.code.exit_code", _int(exit_code))
    if content:
        _put(out, "parley.code.output", a.get("output"))
    return f"exit code {exit_code}" if isinstance(exit_code, int) and exit_code != 0 else None


def _speaker_selection_end(step: SpeakerSelectionStep, out: Attrs, content: bool) -> str | None:
    a = step.attrs
    _put(out, "parley.speaker.selected", a.get("speaker"))
    return None


def _summary_end(step: SummaryStep, out: Attrs, content: bool) -> str | None:
    a = step.attrs
    if content and a.get("summary") is not None:
        out["parley.summary"] = _text(a["summary"])
    return None


_ENDS: dict[type[Step], Callable[[Any, Attrs, bool], str | None]] = {
    ChatStep: _chat_end,
    TurnStep: _turn_end,
    ReplyFuncStep: _reply_func_end,
    LLMCallStep: _llm_call_end,
    ToolCallStep: _tool_call_end,
    CodeExecutionStep: _code_execution_end,
    SpeakerSelectionStep: _speaker_selection_end,
    SummaryStep: _summary_end,
}


# -- values ----------------------------------------------------------------------------------


def _put(out: Attrs, key: str, value: Any) -> None:
    """Set ``key`` if ``value`` is a type a span attribute can hold (others are left out)."""
    if isinstance(value, (str, bool, int, float)):
        out[key] = value


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _strs(values: Any) -> list[str]:
    return [str(v) for v in values] if isinstance(values, (list, tuple)) else [str(values)]


def _name_of(agent: Any) -> str | None:
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) else None


def _provider(client: Any) -> str:
    """``gen_ai.provider.name``: the client's ``provider_name`` (OpenAI's clients give the
    conventions' name for OpenAI's API or Azure's) or, for a custom model client, its class
    name."""
    if client is None:
        return "openai"
    provider = getattr(client, "provider_name", None)
    return provider if isinstance(provider, str) else type(client).__name__


def _text(value: Any) -> str:
    return value if isinstance(value, str) else _json(value)


def _json(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


def _split_system(messages: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The system instructions (as parts) and the other messages, in the conventions' shape."""
    system: list[dict[str, Any]] = []
    chat: list[dict[str, Any]] = []
    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, Mapping):
            continue
        if message.get("role") == "system":
            system.extend(_parts(message))
        else:
            chat.append(_message(message, str(message.get("role") or "user")))
    return system, chat


def _message(message: Any, role: str) -> dict[str, Any]:
    """One message as ``{"role", "parts"}`` (plus ``name``), from OpenAI's shape or a str."""
    if not isinstance(message, Mapping):
        return {"role": role, "parts": [{"type": "text", "content": _text(message)}]}
    shown: dict[str, Any] = {"role": str(message.get("role") or role), "parts": _parts(message)}
    if isinstance(message.get("name"), str):
        shown["name"] = message["name"]
    return shown


def _parts(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    text = message.get("content")
    responses = message.get("tool_responses")
    if isinstance(responses, list):  # a turn's reply: the results of several tool calls
        for response in responses:
            if isinstance(response, Mapping):
                parts.extend(_parts(response))
        return parts
    if message.get("role") == "tool":
        parts.append(
            {"type": "tool_call_response", "id": message.get("tool_call_id"), "response": text}
        )
        return parts
    if isinstance(text, str):
        parts.append({"type": "text", "content": text})
    elif isinstance(text, list):  # multimodal: text and image parts
        for item in text:
            if isinstance(item, Mapping) and item.get("type") == "text":
                parts.append({"type": "text", "content": item.get("text")})
            elif isinstance(item, Mapping):
                parts.append({"type": str(item.get("type") or "unknown")})
    for call in message.get("tool_calls") or ():
        if not isinstance(call, Mapping):
            continue
        function = call.get("function")
        function = function if isinstance(function, Mapping) else {}
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": function.get("name"),
                "arguments": function.get("arguments"),
            }
        )
    function_call = message.get("function_call")
    if isinstance(function_call, Mapping):
        parts.append(
            {
                "type": "tool_call",
                "name": function_call.get("name"),
                "arguments": function_call.get("arguments"),
            }
        )
    return parts


def _choices(response: Any) -> list[dict[str, Any]]:
    """A chat completion's choices as output messages (read attribute by attribute)."""
    shown: list[dict[str, Any]] = []
    for choice in getattr(response, "choices", None) or ():
        message = getattr(choice, "message", None)
        if message is None:
            continue
        calls = [
            {
                "id": getattr(call, "id", None),
                "function": {
                    "name": getattr(getattr(call, "function", None), "name", None),
                    "arguments": getattr(getattr(call, "function", None), "arguments", None),
                },
            }
            for call in getattr(message, "tool_calls", None) or ()
        ]
        plain = {"role": "assistant", "content": getattr(message, "content", None)}
        if calls:
            plain["tool_calls"] = calls
        shown.append(
            {
                **_message(plain, "assistant"),
                "finish_reason": getattr(choice, "finish_reason", None),
            }
        )
    return shown
