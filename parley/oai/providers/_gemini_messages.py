"""OpenAI-shaped requests as Gemini's ``generateContent`` arguments, and Gemini's answers read
back (pure functions; :mod:`parley.oai.gemini` sends them through the google-genai SDK).

Gemini's contents alternate ``user`` and ``model`` turns: consecutive messages of one role are
merged into one turn, tool results travel as ``functionResponse`` parts of a user turn (named
after the call they answer: Gemini matches them by name), and the system prompt is set apart as
``system_instruction``. A result's images travel inside its ``functionResponse`` (its
``parts``) for Gemini 3 and later, which read them there; earlier models refuse them there, so
they get the images in a user turn of their own right after the results. Gemini's function declarations take a subset of JSON Schema, so the
keywords it rejects are dropped from the tools' schemas.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ._messages import (
    ImageData,
    content_parts,
    content_text,
    function_specs,
    parse_arguments,
    split_system,
)
from ._response_format import OutputSchema, requested
from ._tool_images import AFTER_RESULTS, has_images, split_images

__all__ = [
    "FINISH_REASONS",
    "clean_schema",
    "finish_reason",
    "generation_config",
    "made_up_call_id",
    "nests_media",
    "to_contents",
]

# JSON Schema keywords Gemini's function declarations refuse (an OpenAPI subset).
_UNSUPPORTED_KEYWORDS = frozenset(
    {"additionalProperties", "default", "title", "$schema", "examples", "strict"}
)
_SUB_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")

# AutoGen's parameter names -> GenerateContentConfig's.
_RENAMED = {
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "max_tokens": "max_output_tokens",
    "max_output_tokens": "max_output_tokens",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "response_mime_type": "response_mime_type",
    "response_schema": "response_schema",
    "response_json_schema": "response_json_schema",
    "candidate_count": "candidate_count",
    "safety_settings": "safety_settings",
    "thinking_config": "thinking_config",
    "labels": "labels",
}
_TOOL_CHOICE = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
_GENERATION = re.compile(r"gemini-(\d+)")
# The user turn of the images after results, named apart while turns are merged: the results'
# turn takes no other part (a later user turn is a turn of its own too).
_MEDIA = "user+media"

FINISH_REASONS = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "MODEL_ARMOR": "content_filter",
}


def clean_schema(schema: Any) -> Any:
    """``schema`` without the keywords Gemini rejects, at every depth. Property *names* are
    kept whatever they are (a parameter may be called ``title``)."""
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _UNSUPPORTED_KEYWORDS:
            continue
        if key == "properties" and isinstance(value, Mapping):
            out[key] = {name: clean_schema(sub) for name, sub in value.items()}
        elif key == "items":
            out[key] = clean_schema(value)
        elif key in _SUB_SCHEMA_LISTS and isinstance(value, list):
            out[key] = [clean_schema(sub) for sub in value]
        else:
            out[key] = value
    return out


def _image_part(image: ImageData) -> dict[str, Any]:
    if image.url is not None:
        # Gemini fetches file URIs itself; the MIME type is guessed from the name.
        mime = mimetypes.guess_type(image.url)[0] or "image/jpeg"
        return {"file_data": {"file_uri": image.url, "mime_type": mime}}
    return {"inline_data": {"mime_type": image.media_type, "data": image.raw()}}


def _parts(content: Any) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in content_parts(content):
        if isinstance(part, str):
            if part:  # Gemini refuses empty text parts
                parts.append({"text": part})
        else:
            parts.append(_image_part(part))
    return parts


def _response_object(content: Any) -> dict[str, Any]:
    return {"result": content_text(content)}


def nests_media(model: Any) -> bool:
    """Whether ``model`` (Gemini 3 and later) reads images inside a ``function_response``
    (its ``parts``); earlier models refuse them there."""
    found = _GENERATION.search(str(model or ""))
    return found is not None and int(found.group(1)) >= 3


def _response(
    response: dict[str, Any], content: Any, nested: bool, follow: list[dict[str, Any]]
) -> dict[str, Any]:
    """``response`` (a ``function_response``'s name and id) with its result. A result with
    images: inline images in the response's ``parts`` (``nested``), else added to ``follow``,
    a user turn of their own after the results; each image noted in the text where it was."""
    if not has_images(content):
        return {**response, "response": _response_object(content)}
    images = [part for part in content_parts(content) if isinstance(part, ImageData)]
    inline = nested and all(image.data is not None for image in images)
    where = "attached to this result" if inline else AFTER_RESULTS
    text, _ = split_images(content, where)
    out = {**response, "response": {"result": text}}
    if inline:
        out["parts"] = [{"inline_data": _image_part(image)["inline_data"]} for image in images]
    else:
        noun = "image" if len(images) == 1 else f"{len(images)} images"
        label = f"The {noun} returned by the tool call {response.get('id') or response['name']}:"
        follow += [{"text": label}, *(_image_part(image) for image in images)]
    return out


def to_contents(
    messages: Sequence[Mapping[str, Any]], *, nested_media: bool = False
) -> tuple[str | None, list[dict[str, Any]]]:
    """(system_instruction, contents) of an OpenAI message list. ``nested_media``: the
    images of tool results go inside their ``function_response`` (:func:`nests_media`), else
    in a user turn of their own after the results."""
    system, rest = split_system(messages)
    names: dict[str, str] = {}  # tool call id -> function name
    turns: list[tuple[str, list[dict[str, Any]]]] = []
    follow: list[dict[str, Any]] = []  # images of the current results, for the turn after them
    for message in rest:
        if follow and message.get("role") not in ("tool", "function"):
            turns.append((_MEDIA, follow))
            follow = []
        role = message.get("role")
        if role == "assistant":
            parts = _parts(message.get("content"))
            for call in message.get("tool_calls") or ():
                function = call.get("function", {})
                names[str(call.get("id"))] = str(function.get("name"))
                parts.append(
                    {
                        "function_call": {
                            "id": call.get("id"),
                            "name": function.get("name"),
                            "args": parse_arguments(function.get("arguments")),
                        }
                    }
                )
            legacy = message.get("function_call")
            if legacy:
                parts.append(
                    {
                        "function_call": {
                            "name": legacy.get("name"),
                            "args": parse_arguments(legacy.get("arguments")),
                        }
                    }
                )
            turns.append(("model", parts))
        elif role == "tool":
            call_id = str(message.get("tool_call_id"))
            if call_id not in names:
                raise ValueError(f"tool result {call_id!r} answers no tool call before it")
            named: dict[str, Any] = {"id": call_id, "name": names[call_id]}
            response = _response(named, message.get("content"), nested_media, follow)
            turns.append(("user", [{"function_response": response}]))
        elif role == "function":
            named = {"name": message.get("name")}
            response = _response(named, message.get("content"), nested_media, follow)
            turns.append(("user", [{"function_response": response}]))
        else:
            turns.append(("user", _parts(message.get("content"))))
    if follow:
        turns.append((_MEDIA, follow))
    contents: list[dict[str, Any]] = []
    for role, parts in turns:
        if not parts:
            continue
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": list(parts)})
    for content in contents:
        if content["role"] == _MEDIA:
            content["role"] = "user"
    return system, contents


def generation_config(params: Mapping[str, Any], system: str | None) -> dict[str, Any]:
    """A ``GenerateContentConfig`` (as a dict) of the request's parameters and tools."""
    config: dict[str, Any] = {
        new: params[old] for old, new in _RENAMED.items() if params.get(old) is not None
    }
    stop = params.get("stop", params.get("stop_sequences"))
    if stop:
        config["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    wanted = requested(params)
    if wanted:
        config["response_mime_type"] = "application/json"
    own = "response_schema" in config or "response_json_schema" in config
    if isinstance(wanted, OutputSchema) and not own:
        # The JSON-schema field takes the schema as it is: the OpenAPI subset of
        # response_schema would lose $defs, $ref and additionalProperties.
        config["response_json_schema"] = dict(wanted.schema)
    if system:
        config["system_instruction"] = system
    specs = function_specs(params)
    if specs:
        config["tools"] = [
            {
                "function_declarations": [
                    {
                        "name": s.name,
                        "description": s.description,
                        "parameters": clean_schema(s.parameters),
                    }
                    for s in specs
                ]
            }
        ]
        config["automatic_function_calling"] = {"disable": True}
        choice = params.get("tool_choice")
        if isinstance(choice, str) and choice in _TOOL_CHOICE:
            config["tool_config"] = {"function_calling_config": {"mode": _TOOL_CHOICE[choice]}}
        elif isinstance(choice, Mapping) and "function" in choice:
            config["tool_config"] = {
                "function_calling_config": {
                    "mode": "ANY",
                    "allowed_function_names": [choice["function"]["name"]],
                }
            }
    return config


def made_up_call_id(response_id: str | None, index: int, name: str, args: Any) -> str:
    """A tool call id for a call Gemini gave none: the same answer always gets the same id
    (a cached answer and its replay agree), different calls of one answer different ones."""
    seed = json.dumps([response_id, index, name, args], sort_keys=True, default=str)
    return "call_" + hashlib.sha256(seed.encode()).hexdigest()[:24]


def finish_reason(gemini_reason: Any, has_tool_calls: bool) -> str:
    """OpenAI's finish reason for Gemini's (an enum or its name)."""
    if has_tool_calls:
        return "tool_calls"
    name = getattr(gemini_reason, "name", gemini_reason)
    return FINISH_REASONS.get(str(name), "stop") if name is not None else "stop"
