"""OpenTelemetry tracing: a span for every chat, turn, reply function, model call, tool call
and code block (the ``tracing`` extra: ``pip install 'parley[tracing]'``).

::

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    import parley.tracing

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    parley.tracing.enable(provider)  # or enable() for the global provider
    user.initiate_chat(assistant, message="...")

The spans nest as the work does::

    chat user -> assistant                     a chat (nested chats inside their reply function)
      invoke_agent assistant                   one agent's turn (generate_reply)
        reply_func generate_oai_reply          one reply function
          chat gpt-4o                          a model call: model, tokens, cost, finish reasons
      invoke_agent user
        reply_func generate_tool_calls_reply
          execute_tool add                     a tool call
        reply_func generate_code_execution_reply
          execute_code                         code blocks: languages, exit code
    select_speaker / summarize                 a group manager's choice, a chat's summary

A reply function that passes without doing anything traced gets no span (most of a turn's do).

Attributes follow OpenTelemetry's GenAI semantic conventions (``gen_ai.operation.name``,
``gen_ai.request.model``, ``gen_ai.usage.input_tokens``, ``gen_ai.agent.name``,
``gen_ai.tool.name``...) plus ``parley.*`` ones (``parley.cost_usd``, ``parley.cached``,
``parley.chat.id``, ``parley.termination_reason``); the full list is in
``website/docs/tracing.md``. Message contents, tool arguments and results, code and its output
are recorded only with ``capture_content=True``; credentials never are (a failure's message is
scrubbed of anything that looks like a key).

A chat started inside one of your own spans is its child. A span is made current while its
step runs, so what other instrumentation traces inside a tool or a model call nests under it.
"""

from __future__ import annotations

import threading
from typing import Any

from ._core import events as _events
from ._core.runtime import after_fork

__all__ = ["INSTALL_HINT", "disable", "enable", "tracing_enabled"]

INSTALL_HINT = "pip install 'parley[tracing]'"

_lock = threading.Lock()
_listener: Any = None  # the SpanListener of the last enable(), until disable()


def _after_fork() -> None:
    global _lock
    _lock = threading.Lock()
    if _listener is not None:
        _listener.forget_lock()


after_fork(_after_fork)


def enable(tracer_provider: Any = None, *, capture_content: bool = False) -> None:
    """Trace parley's work from now on, with ``tracer_provider`` (an OpenTelemetry
    ``TracerProvider``; by default the global one, ``opentelemetry.trace.get_tracer_provider()``,
    including one set after this call).

    ``capture_content=True`` adds the messages sent to and received from models, tool
    arguments and results, code blocks and their output, and chat summaries (off by default:
    they may hold personal data). Calling ``enable`` again replaces the earlier settings.

    Raises ``ModuleNotFoundError`` naming ``pip install 'parley[tracing]'`` when OpenTelemetry
    is not installed.
    """
    trace = _opentelemetry()
    from ._tracing_listener import SpanListener
    from .version import __version__

    if tracer_provider is None:
        tracer = trace.get_tracer("parley", __version__)
    else:
        tracer = tracer_provider.get_tracer("parley", __version__)
    global _listener
    with _lock:
        previous, _listener = _listener, SpanListener(tracer, bool(capture_content))
        _events.add_listener(_listener)
    if previous is not None:
        previous.close()


def disable() -> None:
    """Stop tracing: no new spans. Steps already running still end their spans."""
    global _listener
    with _lock:
        previous, _listener = _listener, None
    if previous is not None:
        previous.close()


def tracing_enabled() -> bool:
    """Whether :func:`enable` is in effect."""
    return _listener is not None


def _opentelemetry() -> Any:
    try:
        from opentelemetry import trace
    except ImportError as e:
        raise ModuleNotFoundError(
            f"parley.tracing needs OpenTelemetry (opentelemetry-api, and opentelemetry-sdk "
            f"to record spans), which is not installed ({e}): {INSTALL_HINT}",
            name=e.name,
        ) from e
    return trace
