"""OpenAI-shaped requests as the keyword arguments of Bedrock's Converse API (pure functions;
:mod:`parley.oai.bedrock` sends them through boto3).

Converse's conversation rules are Claude's Messages API's (the first turn is the user's, turns
alternate, a ``toolUse`` is answered by a ``toolResult`` in the very next user turn, and both
need the request to declare tools, blank text is refused), so the conversation is first put in
that shape by :func:`parley.oai.providers._anthropic_messages.to_anthropic` (one set of rules, tested
once), then each block is written in Converse's form.

Request parameters under AutoGen's names: ``max_tokens``, ``temperature``, ``top_p``, ``stop``
go to ``inferenceConfig`` (AutoGen's Bedrock names ``maxTokens``, ``topP`` too);
``top_k``, ``k`` and ``seed`` (model-specific, as AutoGen 0.2.35 sent them) and
``additional_model_request_fields`` to ``additionalModelRequestFields``;
``supports_system_prompts=False`` (models that refuse a system prompt) puts the system
messages into the conversation as the user's words. Converse's own request keys
(``guardrailConfig``, ...) pass as they are. ``response_format`` is Converse's structured output
(``outputConfig.textFormat``: :func:`output_config`). Other OpenAI parameters have no Converse
counterpart and are not sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ._anthropic_messages import to_anthropic
from ._messages import content_text, function_specs, split_system
from ._params import validate_parameter
from ._response_format import OutputSchema, requested

__all__ = [
    "conversation",
    "converse_request",
    "image_format",
    "inference_and_fields",
    "system_prompts",
    "tool_config",
]

Block = dict[str, Any]

# Converse's name, the names taken for it, and the types AutoGen's client accepted.
_INFERENCE: tuple[tuple[str, tuple[str, ...], Any], ...] = (
    ("temperature", ("temperature",), (float, int)),
    ("topP", ("topP", "top_p"), (float, int)),
    ("maxTokens", ("maxTokens", "max_tokens"), int),
)
_MODEL_FIELDS = (("top_k", int), ("k", int), ("seed", int))
# Converse's own keys, passed through for callers who know them.
_PASSED = (
    "guardrailConfig",
    "additionalModelResponseFieldPaths",
    "performanceConfig",
    "promptVariables",
    "requestMetadata",
)
_FORMATS = {"png": "png", "jpeg": "jpeg", "jpg": "jpeg", "gif": "gif", "webp": "webp"}


def image_format(media_type: str | None) -> str:
    """Converse's image ``format`` for a MIME type; ValueError for one it does not take."""
    subtype = (media_type or "").rpartition("/")[2].lower()
    if subtype not in _FORMATS:
        raise ValueError(f"Bedrock takes png, jpeg, gif and webp images, not {media_type!r}")
    return _FORMATS[subtype]


def _image(source: Mapping[str, Any]) -> Block:
    if source.get("type") != "base64":
        raise ValueError(
            f"Bedrock takes images as inline data only, not the URL {source.get('url')!r}: "
            "load the image into a data URI (parley.agentchat.contrib.img_utils) first"
        )
    import base64

    raw = base64.b64decode(source["data"])
    return {"image": {"format": image_format(source.get("media_type")), "source": {"bytes": raw}}}


def _block(block: Mapping[str, Any]) -> Block:
    """One of to_anthropic's blocks in Converse's form."""
    kind = block["type"]
    if kind == "text":
        return {"text": block["text"]}
    if kind == "image":
        return _image(block["source"])
    if kind == "tool_use":
        use = {"toolUseId": block["id"], "name": block["name"], "input": block["input"]}
        return {"toolUse": use}
    content = block["content"]
    if isinstance(content, str):
        parts = [{"text": content}] if content else []
    else:
        parts = [_block(b) for b in content]
    return {"toolResult": {"toolUseId": block["tool_use_id"], "content": parts}}


def _as_user(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """System messages as the user's, in place, for models without system prompts."""
    return [
        {"role": "user", "content": content_text(m.get("content"))}
        if m.get("role") == "system"
        else m
        for m in messages
    ]


def conversation(
    messages: Sequence[Mapping[str, Any]], *, with_tools: bool, system_prompts: bool = True
) -> tuple[list[Block], list[dict[str, Any]]]:
    """(``system``, ``messages``) of a Converse request for OpenAI ``messages``."""
    if system_prompts:
        _, rest = split_system(messages)
        texts = (content_text(m.get("content")) for m in messages if m.get("role") == "system")
        system = [{"text": text} for text in texts if text.strip()]
    else:
        rest, system = _as_user(messages), []
    _, turns = to_anthropic(rest, with_tools=with_tools)
    return system, [
        {"role": turn["role"], "content": [_block(b) for b in turn["content"]]} for turn in turns
    ]


def tool_config(params: Mapping[str, Any]) -> dict[str, Any] | None:
    """``toolConfig`` of the request's tools and ``tool_choice``; None without tools, or
    when ``tool_choice`` is ``"none"`` (Converse cannot say it: no tool is offered)."""
    specs = function_specs(params)
    choice = params.get("tool_choice")
    if not specs or choice == "none":
        return None
    tools: list[Block] = []
    for s in specs:
        spec: Block = {"name": s.name, "inputSchema": {"json": s.parameters}}
        if s.description:  # Converse refuses an empty description
            spec["description"] = s.description
        tools.append({"toolSpec": spec})
    config: dict[str, Any] = {"tools": tools}
    if choice == "required":
        config["toolChoice"] = {"any": {}}
    elif choice == "auto":
        config["toolChoice"] = {"auto": {}}
    elif isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
        config["toolChoice"] = {"tool": {"name": str(choice["function"]["name"])}}
    elif choice is not None:
        raise ValueError(f"unsupported tool_choice {choice!r}")
    return config


def _checked(params: Mapping[str, Any], name: str, types: Any) -> Any:
    # AutoGen's check: no default and no bounds (they vary by model); a wrong type is None.
    return validate_parameter(params, name, types, False, None, None, None)


def inference_and_fields(params: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(``inferenceConfig``, ``additionalModelRequestFields``) of the parameters given, each
    of the type AutoGen's client took (else None, with a ``UserWarning``: not sent)."""
    config: dict[str, Any] = {}
    for theirs, ours, types in _INFERENCE:
        for name in ours:
            if params.get(name) is not None:
                config[theirs] = _checked(params, name, types)
                break
    stop = params.get("stop", params.get("stop_sequences"))
    if stop:
        config["stopSequences"] = [stop] if isinstance(stop, str) else list(stop)
    fields = {
        name: _checked(params, name, types)
        for name, types in _MODEL_FIELDS
        if params.get(name) is not None
    }
    fields.update(params.get("additional_model_request_fields") or {})
    return config, fields


def system_prompts(params: Mapping[str, Any]) -> bool:
    """Whether the model takes system prompts (AutoGen's ``supports_system_prompts``)."""
    return params.get("supports_system_prompts", True) is not False


def converse_request(params: Mapping[str, Any], model: str) -> dict[str, Any]:
    """The keyword arguments of ``converse`` (and ``converse_stream``) for OpenAI-shaped
    ``params``."""
    tools = tool_config(params)
    system, messages = conversation(
        params.get("messages") or [],
        with_tools=tools is not None,
        system_prompts=system_prompts(params),
    )
    request: dict[str, Any] = {"modelId": model, "messages": messages}
    if system:
        request["system"] = system
    inference, fields = (
        {k: v for k, v in found.items() if v is not None} for found in inference_and_fields(params)
    )
    if inference:
        request["inferenceConfig"] = inference
    if tools is not None:
        request["toolConfig"] = tools
    if fields:
        request["additionalModelRequestFields"] = fields
    request.update({k: params[k] for k in _PASSED if params.get(k) is not None})
    output = output_config(params)
    if output is not None:
        request["outputConfig"] = output
    return request


def output_config(params: Mapping[str, Any]) -> dict[str, Any] | None:
    """Converse's ``outputConfig`` for the request's ``response_format``: its structured
    outputs (``textFormat``, the schema as JSON text); ``json_object``, which has no schema,
    as the schema of any object. None for a text answer. A config's own ``outputConfig``
    (its effort, say) is kept."""
    wanted = requested(params)
    given = params.get("outputConfig")
    config = dict(given) if isinstance(given, Mapping) else {}
    if wanted:
        schema = wanted.schema if isinstance(wanted, OutputSchema) else {"type": "object"}
        definition: dict[str, Any] = {"schema": json.dumps(schema)}
        if isinstance(wanted, OutputSchema):
            definition["name"] = wanted.name
            if wanted.description:
                definition["description"] = wanted.description
        structure = {"jsonSchema": definition}
        config["textFormat"] = {"type": "json_schema", "structure": structure}
    return config or None
