"""Fixtures of the oai tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from parley.oai import ChatCompletion, Completion

# What Completion.set_cache and Completion.tune set on the class.
_TUNE_STATE = (
    "cache_seed",
    "cache_path",
    "data",
    "_eval_func",
    "_metric",
    "_mode",
    "inference_budget",
    "optimization_budget",
    "_prompts",
    "_messages",
    "_stops",
    "_config_list",
    "_prune_hp",
)


@pytest.fixture
def tuning(tmp_path: Path) -> Iterator[Path]:
    """A cache root of the test's own (returned) for Completion and ChatCompletion; what tune
    and set_cache set on the classes is put back afterwards."""
    saved = {cls: dict(cls.__dict__) for cls in (Completion, ChatCompletion)}
    Completion.set_cache(41, str(tmp_path / "cache"))
    yield tmp_path / "cache"
    for cls in (Completion, ChatCompletion):
        for name in _TUNE_STATE:
            if name in saved[cls]:
                setattr(cls, name, saved[cls][name])
            elif name in cls.__dict__:
                delattr(cls, name)
