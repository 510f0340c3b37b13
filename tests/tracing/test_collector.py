"""Spans exported over OTLP/HTTP reach a real collector: rotel's agent (the ``rotel`` wheel of
the dev extra, a Rust OpenTelemetry collector), run on loopback with its debug log printing
every span it receives; the test reads the spans back from that log."""

from __future__ import annotations

import importlib.util
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import parley
import parley.tracing
from parley import AssistantAgent, UserProxyAgent
from parley.testing import FakeLLMServer

# The dev extra installs rotel wherever its wheel exists (Linux): there, a missing collector
# is a failure, not a skip.
pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="rotel (the dev extra's collector) ships for Linux only"
)
_ROTEL = importlib.util.find_spec("rotel")
_START_TIMEOUT = 15.0
_RECEIVE_TIMEOUT = 15.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.fixture
def collector(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """rotel's agent on a free loopback port; yields (OTLP/HTTP port, the debug log)."""
    assert _ROTEL is not None, "the rotel collector is not installed: pip install -e '.[dev]'"
    assert _ROTEL.origin is not None
    binary = Path(_ROTEL.origin).parent / "rotel-agent"
    http, grpc = _free_port(), _free_port()
    log = tmp_path / "rotel.out"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                str(binary), "start",
                "--otlp-http-endpoint", f"127.0.0.1:{http}",
                "--otlp-grpc-endpoint", f"127.0.0.1:{grpc}",
                "--exporter", "blackhole",  # received, printed, and sent nowhere
                "--debug-log", "traces",
                "--debug-log-verbosity", "detailed",
                "--pid-file", str(tmp_path / "rotel.pid"),
                "--log-file", str(tmp_path / "rotel.log"),
            ],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + _START_TIMEOUT
        while not _listening(http):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"rotel did not start:\n{log.read_text(errors='replace')}")
            time.sleep(0.05)
        yield http, log
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


_FIELD = re.compile(r"^\s*(Trace ID|Parent ID|ID|Name)\s*:\s*(.*)$")
_ATTR = re.compile(r"^\s*-> ([\w.]+): (\w+)\((.*)\)$")


def _received(text: str) -> list[dict[str, Any]]:
    """The spans of rotel's detailed debug log: their ids, names and attributes."""
    spans: list[dict[str, Any]] = []
    span: dict[str, Any] | None = None
    for line in text.splitlines():
        if line.startswith(("ResourceSpans #", "ScopeSpans #")):
            span = None  # resource and scope attributes follow
        elif line.startswith("Span #"):
            span = {"attributes": {}}
            spans.append(span)
        elif span is not None and (field := _FIELD.match(line)):
            span[field.group(1)] = field.group(2).strip()
        elif span is not None and (attr := _ATTR.match(line)):
            kind, value = attr.group(2), attr.group(3)
            span["attributes"][attr.group(1)] = int(value) if kind == "Int" else value
    return spans


def test_spans_reach_a_real_otlp_collector(
    fake_llm: FakeLLMServer, collector: tuple[int, Path]
) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    port, log = collector
    provider = TracerProvider()
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces"))
    )
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)

    def add(a: int, b: int) -> int:
        return a + b

    parley.register_function(add, caller=assistant, executor=user, description="Add.")
    fake_llm.add_reply(
        tool_calls=[{"name": "add", "arguments": {"a": 2, "b": 3}}],
        usage={"prompt_tokens": 17, "completion_tokens": 4},
    )
    fake_llm.add_reply("TERMINATE", usage={"prompt_tokens": 25, "completion_tokens": 2})
    parley.tracing.enable(provider)
    try:
        user.initiate_chat(assistant, message="2+3?", silent=True)
    finally:
        parley.tracing.disable()
    try:
        assert provider.force_flush(10_000)
        expected = {"chat user -> assistant", "execute_tool add", "chat fake-model"}
        deadline = time.monotonic() + _RECEIVE_TIMEOUT
        while True:
            spans = _received(log.read_text(errors="replace"))
            if expected <= {s.get("Name") for s in spans} and len(spans) >= 10:
                break
            assert time.monotonic() < deadline, f"the collector received {spans}"
            time.sleep(0.1)
    finally:
        provider.shutdown()
    by_id = {s["ID"]: s for s in spans}
    assert len({s["Trace ID"] for s in spans}) == 1

    def ancestors(span: dict[str, Any]) -> list[str]:
        names = []
        while span.get("Parent ID"):
            span = by_id[span["Parent ID"]]
            names.append(span["Name"])
        return names

    (tool,) = [s for s in spans if s["Name"] == "execute_tool add"]
    assert ancestors(tool) == [
        "reply_func generate_tool_calls_reply",
        "invoke_agent user",
        "chat user -> assistant",
    ]
    calls = [s for s in spans if s["Name"] == "chat fake-model"]
    assert sorted(
        (
            c["attributes"]["gen_ai.usage.input_tokens"],
            c["attributes"]["gen_ai.usage.output_tokens"],
        )
        for c in calls
    ) == [(17, 4), (25, 2)]
    for call in calls:
        assert call["attributes"]["gen_ai.operation.name"] == "chat"
        assert call["attributes"]["gen_ai.request.model"] == "fake-model"
        assert ancestors(call)[-1] == "chat user -> assistant"
    assert tool["attributes"]["gen_ai.tool.name"] == "add"
