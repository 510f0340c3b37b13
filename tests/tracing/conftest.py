"""Tracing tests: ``traced`` enables parley.tracing on a private TracerProvider whose spans
are kept in memory (the SDK's InMemorySpanExporter), and disables it afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import parley.tracing


class Traced:
    """The finished spans of a test, and their tree."""

    def __init__(self, provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
        self.provider = provider
        self.exporter = exporter

    def spans(self) -> list[ReadableSpan]:
        return sorted(self.exporter.get_finished_spans(), key=lambda s: s.start_time or 0)

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, f"{len(found)} spans named {name!r}: {self.outline()}"
        return found[0]

    def roots(self) -> list[ReadableSpan]:
        ids = {_id(s) for s in self.spans()}
        return [s for s in self.spans() if s.parent is None or s.parent.span_id not in ids]

    def children(self, span: ReadableSpan) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.parent is not None and s.parent.span_id == _id(span)]

    def parent(self, span: ReadableSpan) -> ReadableSpan | None:
        if span.parent is None:
            return None
        return next((s for s in self.spans() if _id(s) == span.parent.span_id), None)

    def ancestors(self, span: ReadableSpan) -> list[str]:
        """The names from ``span``'s parent up to its root."""
        names: list[str] = []
        parent = self.parent(span)
        while parent is not None:
            names.append(parent.name)
            parent = self.parent(parent)
        return names

    def subtree(self, span: ReadableSpan) -> list[ReadableSpan]:
        found = [span]
        for child in self.children(span):
            found.extend(self.subtree(child))
        return found

    def outline(self, root: ReadableSpan | None = None) -> list[str]:
        """The tree as indented names."""
        lines: list[str] = []

        def walk(span: ReadableSpan, depth: int) -> None:
            lines.append("  " * depth + span.name)
            for child in self.children(span):
                walk(child, depth + 1)

        for top in [root] if root is not None else self.roots():
            walk(top, 0)
        return lines


def _id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def make_provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


@pytest.fixture
def traced() -> Iterator[Traced]:
    provider, exporter = make_provider()
    parley.tracing.enable(provider)
    try:
        yield Traced(provider, exporter)
    finally:
        parley.tracing.disable()
        provider.shutdown()


@pytest.fixture
def traced_content() -> Iterator[Traced]:
    """As ``traced``, with ``capture_content=True``."""
    provider, exporter = make_provider()
    parley.tracing.enable(provider, capture_content=True)
    try:
        yield Traced(provider, exporter)
    finally:
        parley.tracing.disable()
        provider.shutdown()
