"""Token counting for OpenAI models (AutoGen's ``autogen.token_count_utils``).

Counts use OpenAI's tokenizers through tiktoken, with vocabularies shipped inside parley
(``parley/_tokenizer.py``): nothing is downloaded, so counting works on a machine without
internet. Message counts follow OpenAI's published recipe (a few tokens of overhead per message
and per name, three to prime the reply), as AutoGen's do.

Where parley differs from AutoGen 0.2 on purpose (README, "Differences from AutoGen 0.2"):

- ``get_max_token_limit`` knows models released after AutoGen's table was written (``o1``,
  ``gpt-4.1``, dated ``gpt-4o`` releases, ...); an unknown name still raises ``KeyError``.
- Message text is encoded with the model's own tokenizer where tiktoken knows the model
  (``o200k_base`` for ``gpt-4o``); AutoGen counted ``gpt-4o`` messages with ``gpt-4``'s.
- An image part of a multimodal message counts as OpenAI bills an image (85 tokens at
  ``detail="low"``, 765 — a 1024x1024 picture — otherwise), not as the JSON of its data URL
  (AutoGen counted a base64 image as hundreds of thousands of tokens).
- Text that contains special-token strings such as ``<|endoftext|>`` is counted as plain text
  instead of raising ``ValueError``.
- ``percentile_used`` counts with the ``model`` it is given.
- A model tiktoken does not know is warned about once per process, not on every count.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._tokenizer import encoding_for_model, get_encoding

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "count_token",
    "get_max_token_limit",
    "num_tokens_from_functions",
    "percentile_used",
    "token_left",
]

logger = logging.getLogger(__name__)

_DEFAULT_MODEL = "gpt-3.5-turbo-0613"

_MAX_TOKENS: dict[str, int] = {
    **dict.fromkeys(
        [
            "gpt-3.5-turbo",
            "gpt-3.5-turbo-0125",
            "gpt-3.5-turbo-16k",
            "gpt-3.5-turbo-16k-0613",
            "gpt-3.5-turbo-1106",
        ],
        16385,
    ),
    **dict.fromkeys(["gpt-3.5-turbo-0301", "gpt-3.5-turbo-0613", "gpt-3.5-turbo-instruct"], 4096),
    **dict.fromkeys(["gpt-4", "gpt-4-0314", "gpt-4-0613"], 8192),
    **dict.fromkeys(["gpt-4-32k", "gpt-4-32k-0314", "gpt-4-32k-0613"], 32768),
    **dict.fromkeys(
        [
            "gpt-4-turbo",
            "gpt-4-turbo-2024-04-09",
            "gpt-4-1106-preview",
            "gpt-4-0125-preview",
            "gpt-4-turbo-preview",
            "gpt-4-vision-preview",
            "gpt-4o",
            "gpt-4o-2024-05-13",
            "gpt-4o-2024-08-06",
            "gpt-4o-mini",
            "gpt-4o-mini-2024-07-18",
            # Newer than AutoGen 0.2's table.
            "gpt-4o-2024-11-20",
            "chatgpt-4o-latest",
            "gpt-4.5-preview",
            "gpt-4.5-preview-2025-02-27",
            "o1-mini",
            "o1-mini-2024-09-12",
            "o1-preview",
            "o1-preview-2024-09-12",
        ],
        128000,
    ),
    **dict.fromkeys(
        [
            "o1",
            "o1-2024-12-17",
            "o3",
            "o3-2025-04-16",
            "o3-mini",
            "o3-mini-2025-01-31",
            "o4-mini",
            "o4-mini-2025-04-16",
        ],
        200000,
    ),
    **dict.fromkeys(
        [
            "gpt-4.1",
            "gpt-4.1-2025-04-14",
            "gpt-4.1-mini",
            "gpt-4.1-mini-2025-04-14",
            "gpt-4.1-nano",
            "gpt-4.1-nano-2025-04-14",
        ],
        1047576,
    ),
}

# Per-message and per-name overheads of OpenAI's chat format, for the models whose format is
# documented; other models are counted as one of these (see _overheads).
_OVERHEADS: dict[str, tuple[int, int]] = {
    **dict.fromkeys(
        [
            "gpt-3.5-turbo-0613",
            "gpt-3.5-turbo-16k-0613",
            "gpt-4-0314",
            "gpt-4-32k-0314",
            "gpt-4-0613",
            "gpt-4-32k-0613",
        ],
        (3, 1),
    ),
    "gpt-3.5-turbo-0301": (4, -1),  # {role/name}\n{content}\n; a name replaces the role
}

# An image as OpenAI bills it: 85 tokens at low detail; a 1024x1024 picture at high detail is
# four 512-pixel tiles of 170 tokens plus 85.
_IMAGE_TOKENS_LOW = 85
_IMAGE_TOKENS = 765


def get_max_token_limit(model: str = _DEFAULT_MODEL) -> int:
    """The context window of ``model`` in tokens; ``KeyError`` for a model not in the table.

    Azure deployment spellings (``gpt-35-turbo``, ``gpt4``) are read as OpenAI's names.
    """
    model = re.sub(r"^gpt-?35", "gpt-3.5", model)
    model = re.sub(r"^gpt4", "gpt-4", model)
    return _MAX_TOKENS[model]


def count_token(input: str | list[Any] | dict[str, Any], model: str = _DEFAULT_MODEL) -> int:
    """Tokens in a text, a message, or a list of messages (with the chat format's overhead)."""
    if isinstance(input, str):
        return _num_token_from_text(input, model=model)
    if isinstance(input, list):
        return _num_token_from_messages(input, model=model)
    if isinstance(input, dict):
        return _num_token_from_messages([input], model=model)
    raise ValueError(f"input must be str, list or dict, but we got {type(input)}")


def token_left(input: str | list[Any] | dict[str, Any], model: str = _DEFAULT_MODEL) -> int:
    """How many tokens of ``model``'s context window are left after ``input``."""
    return get_max_token_limit(model) - count_token(input, model=model)


def percentile_used(input: str | list[Any] | dict[str, Any], model: str = _DEFAULT_MODEL) -> float:
    """The share of ``model``'s context window that ``input`` takes."""
    return count_token(input, model=model) / get_max_token_limit(model)


def num_tokens_from_functions(functions: list[dict[str, Any]], model: str = _DEFAULT_MODEL) -> int:
    """An estimate of the prompt tokens that function definitions cost (OpenAI's billing of the
    ``functions`` field is not published; this is the community approximation AutoGen uses).
    Every function needs a ``description`` (``KeyError`` otherwise)."""
    encoding = _model_encoding(model, warn_unknown=True)
    n = 0
    for function in functions:
        n += len(_encode(encoding, function["name"]))
        n += len(_encode(encoding, function["description"]))
        n -= 2
        parameters = function.get("parameters")
        if parameters and "properties" in parameters:
            properties = parameters["properties"]
            if properties:
                for key, fields in properties.items():
                    n += len(_encode(encoding, key))
                    for field, value in fields.items():
                        if field in ("type", "description"):
                            n += 2 + len(_encode(encoding, value))
                        elif field == "enum":
                            n -= 3
                            for option in value:
                                n += 3 + len(_encode(encoding, option))
                        else:
                            logger.warning("Not supported field %s", field)
            n += 11
            if not properties:
                n -= 2
    return n + 12


# -- counting ------------------------------------------------------------------------------


# model -> (its encoding, whether tiktoken knows the model), so that counting many small texts
# does not pay for tiktoken's model-name lookup every time (a third of the cost of counting a
# short message); a model tiktoken does not know is counted with cl100k_base.
_by_model: dict[str, tuple[tiktoken.Encoding, bool]] = {}
_warned: set[str] = set()


def _model_encoding(model: str, *, warn_unknown: bool) -> tiktoken.Encoding:
    entry = _by_model.get(model)
    if entry is None:
        try:
            entry = (encoding_for_model(model), True)
        except KeyError:
            entry = (get_encoding("cl100k_base"), False)
        _by_model[model] = entry
    encoding, known = entry
    if not known and warn_unknown and model not in _warned:
        # Said once per model and process, not once per count.
        _warned.add(model)
        logger.warning("Model %s not found. Using cl100k_base encoding.", model)
    return encoding


def _encode(encoding: tiktoken.Encoding, text: str) -> list[int]:
    # Counting treats "<|endoftext|>" and friends as the text they are: a user's message may
    # quote them, and a count must not raise.
    return encoding.encode_ordinary(text)


def _num_token_from_text(text: str, model: str = _DEFAULT_MODEL) -> int:
    return len(_encode(_model_encoding(model, warn_unknown=True), text))


def _overheads(model: str) -> tuple[int, int]:
    """(tokens per message, tokens per name) of ``model``'s chat format."""
    known = _OVERHEADS.get(model)
    if known is not None:
        return known
    if "gpt-3.5-turbo" in model:
        logger.info("gpt-3.5-turbo may update over time. Counting as gpt-3.5-turbo-0613.")
        return _OVERHEADS["gpt-3.5-turbo-0613"]
    if "gpt-4" in model:
        logger.info("gpt-4 may update over time. Counting as gpt-4-0613.")
        return _OVERHEADS["gpt-4-0613"]
    if "gemini" in model or "claude" in model or "mistral-" in model or "mixtral-" in model:
        logger.info("%s's tokenizer is not public. Counting as gpt-4-0613.", model)
        return _OVERHEADS["gpt-4-0613"]
    raise NotImplementedError(
        f"_num_token_from_messages() is not implemented for model {model}. "
        "See https://github.com/openai/openai-python/blob/main/chatml.md for how messages "
        "are converted to tokens."
    )


def _num_token_from_messages(messages: list[Any], model: str = _DEFAULT_MODEL) -> int:
    per_message, per_name = _overheads(model)
    # Models whose tokenizer is not public are counted with gpt-4's, as AutoGen does.
    encoding = _model_encoding(model, warn_unknown=False)
    n = 0
    for message in messages:
        n += per_message + _message_tokens(encoding, message, per_name)
    return n + 3  # every reply is primed with <|start|>assistant<|message|>


def _message_tokens(encoding: tiktoken.Encoding, message: Mapping[str, Any], per_name: int) -> int:
    n = 0
    for key, value in message.items():
        if value is None:
            continue
        if key == "content" and isinstance(value, list):
            n += _content_parts_tokens(encoding, value)
            continue
        if key == "tool_responses" and _has_parts(value):
            # Results with images (a stored tool message's): an image counts as an image.
            n += sum(
                _message_tokens(encoding, r, per_name) for r in value if isinstance(r, Mapping)
            )
            continue
        if not isinstance(value, str):
            try:
                value = json.dumps(value)
            except (TypeError, ValueError):
                logger.warning(
                    "Value %r of key %r is not JSON serializable; not counted.", value, key
                )
                continue
        n += len(_encode(encoding, value))
        if key == "name":
            n += per_name
    return n


def _has_parts(responses: Any) -> bool:
    return isinstance(responses, list) and any(
        isinstance(r, Mapping) and isinstance(r.get("content"), list) for r in responses
    )


def _content_parts_tokens(encoding: tiktoken.Encoding, parts: list[Any]) -> int:
    n = 0
    for part in parts:
        if isinstance(part, Mapping) and part.get("type") == "image_url":
            image = part.get("image_url")
            low = isinstance(image, Mapping) and image.get("detail") == "low"
            n += _IMAGE_TOKENS_LOW if low else _IMAGE_TOKENS
        elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
            n += len(_encode(encoding, part["text"]))
        elif isinstance(part, str):
            n += len(_encode(encoding, part))
        else:
            try:
                n += len(_encode(encoding, json.dumps(part)))
            except (TypeError, ValueError):
                logger.warning("Content part %r is not JSON serializable; not counted.", part)
    return n
