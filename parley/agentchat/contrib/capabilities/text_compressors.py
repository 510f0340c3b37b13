"""Text compressors for :class:`.transforms.TextMessageCompressor` (AutoGen's
``text_compressors``).

:class:`LLMLingua` needs the optional ``llmlingua`` package (``pip install
'parley[long-context]'``), which downloads its model on first use; this module imports without
it, and the constructor says what to install.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

__all__ = ["LLMLingua", "TextCompressor"]

_INSTALL = "LLMLingua is not installed. Please install it with `pip install 'parley[long-context]'`"


class TextCompressor(Protocol):
    """Something that compresses text."""

    def compress_text(self, text: str, **compression_params: Any) -> dict[str, Any]:
        """The compressed text under ``"compressed_prompt"``; optionally ``"origin_tokens"``
        and ``"compressed_tokens"`` (ints), from which the savings are reported."""
        ...


class LLMLingua:
    """Compresses text with LLMLingua (https://github.com/microsoft/LLMLingua).

    ``prompt_compressor_kwargs`` go to ``llmlingua.PromptCompressor``; with
    ``structured_compression`` the text is compressed with ``structured_compress_prompt``
    (which reads LLMLingua's ``<llmlingua>`` tags) instead of ``compress_prompt``.
    """

    def __init__(
        self,
        prompt_compressor_kwargs: dict[str, Any] = {  # noqa: B006 - never mutated; AutoGen's
            "model_name": "microsoft/llmlingua-2-bert-base-multilingual-cased-meetingbank",
            "use_llmlingua2": True,
            "device_map": "cpu",
        },
        structured_compression: bool = False,
    ) -> None:
        try:
            llmlingua = importlib.import_module("llmlingua")
        except ImportError:
            raise ImportError(_INSTALL) from None
        self._prompt_compressor = llmlingua.PromptCompressor(**prompt_compressor_kwargs)
        self._compression_method = (
            self._prompt_compressor.structured_compress_prompt
            if structured_compression
            else self._prompt_compressor.compress_prompt
        )

    def compress_text(self, text: str, **compression_params: Any) -> dict[str, Any]:
        """LLMLingua's result for ``text`` (a dict with ``"compressed_prompt"``)."""
        return self._compression_method([text], **compression_params)  # type: ignore[no-any-return]
