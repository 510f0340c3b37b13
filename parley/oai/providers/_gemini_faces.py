"""AutoGen's ``GeminiClient`` internals that its tests and extensions call, as google-genai
objects (``google.genai.types``: AutoGen's were ``google.generativeai`` / ``vertexai`` ones).

The contents are those :func:`~._gemini_messages.to_contents` builds for parley's requests, with
AutoGen's placement of what the request keeps apart: a system message is a user turn, a role
``"model"`` is the model's, and the last turn is the user's ("continue" after a model turn).
Every object has AutoGen's ``to_dict()`` (the JSON dict, field names in snake case).
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from ._base import require
from ._gemini_messages import to_contents

__all__ = ["concat_parts", "gemini_contents", "json_or_text", "safety_settings", "sdk_types"]

logger = logging.getLogger("parley.oai.gemini")

_AS_USER = {"system": "user", "model": "assistant"}


@functools.cache
def sdk_types() -> Any:
    """google-genai's ``Content``, ``Part`` and ``SafetySetting`` with AutoGen's ``to_dict``,
    and the SDK's enums (built on first use: ``import parley`` imports no SDK)."""
    types = require("google.genai.types", "gemini")

    def to_dict(self: Any) -> dict[str, Any]:
        return dict(self.to_json_dict())

    class Part(types.Part):  # type: ignore[misc,name-defined]
        pass

    class Content(types.Content):  # type: ignore[misc,name-defined]
        parts: list[Part] | None = None

    class SafetySetting(types.SafetySetting):  # type: ignore[misc,name-defined]
        pass

    for cls in (Part, Content, SafetySetting):
        cls.to_dict = to_dict
        cls.__qualname__ = cls.__name__  # not "sdk_types.<locals>.Part" in reprs and errors
    return SimpleNamespace(
        Part=Part,
        Content=Content,
        SafetySetting=SafetySetting,
        HarmCategory=types.HarmCategory,
        HarmBlockThreshold=types.HarmBlockThreshold,
    )


def gemini_contents(messages: Sequence[Mapping[str, Any]]) -> list[Any]:
    """AutoGen's ``_oai_messages_to_gemini_messages``: the turns of ``messages`` as
    ``Content`` objects, roles alternating, consecutive messages of a side merged into one turn
    (each its own part), the last turn the user's."""
    types = sdk_types()
    placed = [{**m, "role": _AS_USER.get(str(m.get("role")), m.get("role"))} for m in messages]
    _, contents = to_contents(placed)
    if not contents or contents[-1]["role"] != "user":
        contents.append({"role": "user", "parts": [{"text": "continue"}]})
    return [types.Content.model_validate(c) for c in contents]


def concat_parts(parts: Sequence[Any]) -> list[Any]:
    """AutoGen's ``_concat_parts``: adjacent text parts joined into one; a part without text
    (an image, a function call) kept where it is; and, as Gemini takes no empty text, a last
    part of empty text becomes ``"empty"``."""
    types = sdk_types()
    out: list[Any] = []
    for part in parts:
        if part.text is not None and out and out[-1].text is not None:
            out[-1] = types.Part(text=out[-1].text + part.text)
        else:
            out.append(types.Part.model_validate(part.model_dump(exclude_none=True)))
    if out and out[-1].text == "":
        out[-1] = types.Part(text="empty")
    return out


def safety_settings(settings: Any) -> Any:
    """AutoGen's ``_to_vertexai_safety_settings``: a list of ``{"category", "threshold"}``
    dicts as ``SafetySetting`` objects, a setting naming an unknown category or threshold
    logged as an error and left out; anything else (a dict of enums, a list of settings)
    returned as it is."""
    if not isinstance(settings, list) or not all(isinstance(s, Mapping) for s in settings):
        return settings
    types = sdk_types()
    out: list[Any] = []
    for setting in settings:
        category, threshold = setting.get("category"), setting.get("threshold")
        if category not in types.HarmCategory.__members__:
            logger.error("Safety setting category %s is invalid", category)
        elif threshold not in types.HarmBlockThreshold.__members__:
            logger.error("Safety threshold %s is invalid", threshold)
        else:
            out.append(types.SafetySetting(category=category, threshold=threshold))
    return out


def json_or_text(text: Any) -> Any:
    """AutoGen's ``_to_json``: JSON text parsed, anything else as it is."""
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text
