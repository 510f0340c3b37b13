"""Class attributes put back as they were: the legacy ``Completion`` API keeps its cache,
logging and tuning results on the class, so a test (or a docs page) that uses it must not
leave them to the next one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["kept_class_state"]


@contextmanager
def kept_class_state(*classes: type[Any]) -> Iterator[None]:
    """Within the block the classes may be changed; afterwards every attribute set on them is
    removed and every one changed is restored (dunder attributes aside)."""
    saved = {cls: dict(cls.__dict__) for cls in classes}
    try:
        yield
    finally:
        for cls in classes:
            for name in set(cls.__dict__) - set(saved[cls]):
                delattr(cls, name)
            for name, value in saved[cls].items():
                if cls.__dict__.get(name) is not value and not name.startswith("__"):
                    setattr(cls, name, value)
