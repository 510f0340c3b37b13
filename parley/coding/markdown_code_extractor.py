"""Find fenced code blocks in a message (AutoGen's ``MarkdownCodeExtractor``)."""

from __future__ import annotations

import re
from typing import Any

from ._blocks import CODE_BLOCK_PATTERN, UNKNOWN, content_str, infer_lang
from .base import CodeBlock

__all__ = ["MarkdownCodeExtractor"]

_FENCE = re.compile(CODE_BLOCK_PATTERN, flags=re.DOTALL)


class MarkdownCodeExtractor:
    """Extracts the ```` ```lang ```` fenced blocks of a message as :class:`CodeBlock` objects.

    A block without a language tag gets :func:`~parley.code_utils.infer_lang`'s guess; a guess
    (or tag) of ``"unknown"`` becomes ``""``. No block gives ``[]``.
    """

    def extract_code_blocks(self, message: str | list[Any] | None) -> list[CodeBlock]:
        blocks = []
        for lang, code in _FENCE.findall(content_str(message)):
            if not lang:
                lang = infer_lang(code)
            blocks.append(CodeBlock(code=code, language="" if lang == UNKNOWN else lang))
        return blocks
