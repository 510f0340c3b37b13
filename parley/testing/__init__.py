"""Test agents without a model: a scripted OpenAI-compatible server on loopback.

``FakeLLMServer`` is a real HTTP server speaking OpenAI's chat-completions protocol (and the
legacy text completions of ``POST /v1/completions``), so the real ``openai`` client, retries,
streaming and all, runs against it. See :mod:`parley.testing.fake_server` for the full story,
and :mod:`parley.testing.pytest_plugin` for the ``fake_llm`` fixture.
"""

from ._script import Choice, Disconnect, ErrorReply, FunctionCall, MalformedReply, Reply, ToolCall
from .fake_server import FakeLLMServer, RecordedRequest, Responder

__all__ = [
    "Choice",
    "Disconnect",
    "ErrorReply",
    "FakeLLMServer",
    "FunctionCall",
    "MalformedReply",
    "RecordedRequest",
    "Reply",
    "Responder",
    "ToolCall",
]
