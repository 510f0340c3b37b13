"""Helpers for the run tests: reading a run's events, checking each survives JSON."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from parley.events import BaseEvent, parse_event

WAIT = 30.0  # seconds: the bound of every wait here (each takes milliseconds)

# What the model and the client add around messages: left out of the order checks.
NOISE = {"usage", "stream"}


def kinds(events: Iterable[BaseEvent], skip: set[str] = NOISE) -> list[str]:
    return [e.type for e in events if e.type not in skip]


def of(events: Iterable[BaseEvent], kind: str) -> list[Any]:
    """The payloads of the events of ``kind``."""
    return [e.content for e in events if e.type == kind]


def round_trips(events: Iterable[BaseEvent]) -> None:
    """Every event dumps to JSON and parses back to the same dump."""
    for event in events:
        dumped = event.model_dump(mode="json")
        text = json.dumps(dumped)
        again = parse_event(json.loads(text))
        assert type(again) is type(event)
        assert again.model_dump(mode="json") == dumped
