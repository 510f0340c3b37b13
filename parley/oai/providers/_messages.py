"""Reading OpenAI-shaped requests, for the native provider clients: what every translation into
a provider's API needs first (the system prompt set apart, a message's text and images, a tool
call's arguments, the tools' function declarations)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from ...exceptions import ConfigOptionError

__all__ = [
    "FunctionSpec",
    "ImageData",
    "content_parts",
    "content_text",
    "function_specs",
    "parse_arguments",
    "split_system",
    "tools_hidden",
]

HIDE_TOOLS = ("if_all_run", "if_any_run", "never")


class ImageData(NamedTuple):
    """An image of a message, from a data URI (``media_type``, base64 ``data``) or a URL."""

    media_type: str | None
    data: str | None  # base64, for a data URI
    url: str | None  # for an http(s) URL

    def raw(self) -> bytes:
        """The image's bytes (data URIs only)."""
        if self.data is None:
            raise ValueError(f"image {self.url!r} is a URL, not inline data")
        return base64.b64decode(self.data)


def _image(url: str) -> ImageData:
    if url.startswith("data:"):
        head, _, data = url[5:].partition(",")
        media_type, _, encoding = head.partition(";")
        if encoding != "base64":
            raise ValueError("an image data URI must be base64-encoded")
        try:
            base64.b64decode(data, validate=True)
        except binascii.Error as e:
            raise ValueError(f"an image data URI's base64 is broken: {e}") from e
        return ImageData(media_type or "image/png", data, None)
    return ImageData(None, None, url)


def content_parts(content: Any) -> list[str | ImageData]:
    """A message's content as texts and images, in order (``None`` is no part)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    parts: list[str | ImageData] = []
    for part in content if isinstance(content, Iterable) else [content]:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, Mapping) and part.get("type") == "text":
            parts.append(str(part.get("text", "")))
        elif isinstance(part, Mapping) and part.get("type") == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else image
            parts.append(_image(str(url)))
        else:
            raise ValueError(f"unsupported content part {part!r}")
    return parts


def content_text(content: Any) -> str:
    """A message's text parts joined (images left out)."""
    return "".join(p for p in content_parts(content) if isinstance(p, str))


def split_system(
    messages: Sequence[Mapping[str, Any]],
) -> tuple[str | None, list[Mapping[str, Any]]]:
    """The system messages' text (joined by blank lines; None without any) and the others."""
    system = [content_text(m.get("content")) for m in messages if m.get("role") == "system"]
    rest = [m for m in messages if m.get("role") != "system"]
    return ("\n\n".join(system) if system else None), rest


def parse_arguments(arguments: Any) -> Any:
    """A tool call's arguments as an object: JSON text parsed (text that is not JSON is kept
    under ``"arguments"``, so nothing the model wrote is lost); a dict as it is."""
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            return json.loads(arguments)
        except ValueError:
            return {"arguments": arguments}
    return arguments if arguments is not None else {}


class FunctionSpec(NamedTuple):
    name: str
    description: str
    parameters: dict[str, Any]


def function_specs(params: Mapping[str, Any]) -> list[FunctionSpec]:
    """The request's ``tools`` (and legacy ``functions``) as function declarations."""
    specs: list[FunctionSpec] = []
    for tool in params.get("tools") or ():
        function = tool.get("function", {}) if isinstance(tool, Mapping) else {}
        specs.append(_spec(function))
    for function in params.get("functions") or ():
        specs.append(_spec(function))
    return specs


def _spec(function: Mapping[str, Any]) -> FunctionSpec:
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    return FunctionSpec(
        str(function["name"]), str(function.get("description", "")), dict(parameters)
    )


def tools_hidden(messages: Iterable[Mapping[str, Any]], names: Iterable[str], how: Any) -> bool:
    """AutoGen's ``hide_tools``: whether a request leaves its tools (named ``names``) out, so
    that a model does not call again what already ran. ``"if_any_run"`` once any tool result
    is in ``messages``, ``"if_all_run"`` once every tool has a result, ``"never"`` (AutoGen's
    default) never. A result is any message with a ``tool_call_id``, whatever its role (AutoGen
    counts a result so), matched to its call's function name by that id."""
    if how not in HIDE_TOOLS:
        raise ConfigOptionError(f"hide_tools must be one of {list(HIDE_TOOLS)}, got {how!r}")
    wanted = set(names)
    if how == "never" or not wanted:
        return False
    history = list(messages)
    answered = {m.get("tool_call_id") for m in history if "tool_call_id" in m}
    if how == "if_any_run":
        return bool(answered)
    ran = {
        (call.get("function") or {}).get("name")
        for m in history
        for call in m.get("tool_calls") or ()
        if call.get("id") in answered
    }
    return wanted <= ran
