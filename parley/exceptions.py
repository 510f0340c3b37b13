"""Every error parley raises on purpose, in one tree.

::

    Exception
    ├── ParleyError                      base of parley's own errors
    │   ├── ConfigError (+ ValueError)   an llm_config / config_list entry is malformed
    │   ├── ModelClientError (+ RuntimeError)  a model client is not registered
    │   └── CompletionError              a completion request failed
    │       ├── MalformedResponseError   the server's answer was not the JSON it should be
    │       └── AllConfigsFailedError    every config in the list failed; ``failures`` says how
    │
    └── AutoGen 0.2's own exceptions (``autogen.exception_utils``), kept for compatibility:
        AgentNameConflict, NoEligibleSpeaker, SenderRequired, InvalidCarryOverType,
        UndefinedNextAgent

Errors carry the context needed to act on them (which config, which field, which request) and
are raised ``from`` the underlying error so nothing is lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AgentNameConflict",
    "AllConfigsFailedError",
    "CompletionError",
    "ConfigError",
    "ConfigFailure",
    "InvalidCarryOverType",
    "MalformedResponseError",
    "ModelClientError",
    "NoEligibleSpeaker",
    "ParleyError",
    "SenderRequired",
    "UndefinedNextAgent",
]


class ParleyError(Exception):
    """Base class of the errors parley raises on purpose."""


class ConfigError(ParleyError, ValueError):
    """An ``llm_config`` or ``config_list`` entry is malformed: the message says which and where."""


class ModelClientError(ParleyError, RuntimeError):
    """A model client is missing (not registered) or does not follow the ModelClient protocol."""


class CompletionError(ParleyError):
    """A completion request failed."""


class MalformedResponseError(CompletionError):
    """The model server answered with a body that is not a valid completion."""


@dataclass(frozen=True)
class ConfigFailure:
    """Why one config of a ``config_list`` failed: its index, model and the error."""

    index: int
    model: str | None
    error: BaseException

    def __str__(self) -> str:
        return (
            f"config {self.index} (model {self.model!r}): {type(self.error).__name__}: {self.error}"
        )


class AllConfigsFailedError(CompletionError):
    """Every config was tried and failed. ``failures`` lists each one, in order."""

    def __init__(self, failures: Sequence[ConfigFailure]) -> None:
        self.failures = list(failures)
        lines = "\n".join(f"  - {f}" for f in self.failures)
        super().__init__(f"all {len(self.failures)} configs in config_list failed:\n{lines}")


# -- AutoGen 0.2 compatibility (autogen.exception_utils) -----------------------------------


class AgentNameConflict(Exception):
    def __init__(
        self, msg: str = "Found multiple agents with the same name.", *args: Any, **kwargs: Any
    ) -> None:
        super().__init__(msg, *args, **kwargs)


class _MessageError(Exception):
    default = ""

    def __init__(self, message: str | None = None) -> None:
        self.message = message if message is not None else self.default
        super().__init__(self.message)


class NoEligibleSpeaker(_MessageError):
    default = "No eligible speakers."


class SenderRequired(_MessageError):
    default = "Sender is required but not provided."


class InvalidCarryOverType(_MessageError):
    default = "Carryover should be a string or a list of strings."


class UndefinedNextAgent(_MessageError):
    default = "The provided agents list does not overlap with agents in the group."
