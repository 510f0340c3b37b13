"""Small helpers of RetrieveUserProxyAgent: message text, the UPDATE CONTEXT test, IPython."""

from __future__ import annotations

from typing import Any

from ...code_utils import content_str
from ...io import IOStream
from ._retrieve_prompts import UPDATE_CONTEXT_IN_PROMPT

__all__ = [
    "NO_INSTALL",
    "check_update_context",
    "get_ipython",
    "message_text",
    "run_in_ipython",
    "say",
]

NO_INSTALL = (
    "You MUST NOT install any packages because all the packages needed are already installed."
)


def say(*objects: Any) -> None:
    IOStream.get_default().print(*objects, flush=True)


def message_text(message: Any) -> str:
    """A message's text: a dict's content, a string as is, anything else empty."""
    if isinstance(message, dict):
        content = message.get("content")
        return content_str(content) if content is not None else ""
    return message if isinstance(message, str) else ""


def check_update_context(text: str, answer_prefix: str) -> tuple[bool, bool]:
    """(the text asks for other context, the text misses the expected answer prefix).

    The proxy's own prompt quotes the words ``UPDATE CONTEXT`` inside its instruction, so a
    text containing that instruction is not a request."""
    asks = "UPDATE CONTEXT" in text.upper() and UPDATE_CONTEXT_IN_PROMPT not in text
    misses_prefix = bool(answer_prefix and answer_prefix not in text.upper())
    return asks, misses_prefix


def get_ipython() -> Any:
    """The running IPython shell (a notebook's kernel), or None."""
    try:
        from IPython import get_ipython as current
    except ImportError:
        return None
    return current()


def run_in_ipython(ipython: Any, code: str) -> tuple[int, str, None]:
    """Run ``code`` in the live kernel, as a cell: (exit code, output and errors, None)."""
    result = ipython.run_cell(code)
    log = str(result.result)
    if result.error_before_exec is not None:
        log += f"\n{result.error_before_exec}"
    if result.error_in_exec is not None:
        log += f"\n{result.error_in_exec}"
    return (0 if result.success else 1), log, None
