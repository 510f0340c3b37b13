"""AutoGen's path ``autogen.oai.ollama``: the client of local models served by Ollama.

The client lives in :mod:`parley.oai.providers.ollama`; this module names the same objects for
AutoGen 0.2 code, and it is the module a config entry's ``api_type`` loads the client from, so a
test that patches ``parley.oai.ollama.OllamaClient`` changes the client ``OpenAIWrapper`` builds.
Patching a member (``OllamaClient.create``) works from either path: it is one class.
"""

from typing import Any

from .providers._ollama_tools import parse_tool_calls
from .providers.ollama import PRICES as PRICES
from .providers.ollama import OllamaClient

__all__ = ["OllamaClient", "response_to_tool_call"]


def response_to_tool_call(response_string: str) -> list[dict[str, Any]] | None:
    """The tool calls a model asked for in the text of its reply, as ``OllamaClient`` reads
    them when it emulates tool calling: ``[{"name": ..., "arguments": {...}}, ...]`` from the
    first JSON list (or single object) in the text, possibly inside prose or a Markdown fence,
    whose items all have a ``name``; None when the reply holds no such call."""
    calls = parse_tool_calls(response_string, None)
    return [{"name": name, "arguments": arguments} for name, arguments in calls] or None
