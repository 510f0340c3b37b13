"""Checking and building what an :class:`~parley.agents.AutonomousAgent` is given: its goals and
limits, its code executor and its long-term memory. Mistakes raise here, at construction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..coding.base import CodeExecutor

if TYPE_CHECKING:
    from ..memory import LongTermMemory

__all__ = ["MAX_GOALS", "check_goals", "check_limits", "make_executor", "make_memory"]

MAX_GOALS = 5


def check_goals(goals: Sequence[str]) -> tuple[str, ...]:
    if isinstance(goals, str):
        raise TypeError(f"goals must be a list of strings, e.g. [{goals!r}]")
    checked = tuple(str(g).strip() for g in goals)
    if len(checked) > MAX_GOALS:
        raise ValueError(
            f"an AutonomousAgent takes at most {MAX_GOALS} goals, got {len(checked)}: merge "
            "some, or give the rest as the task of a run"
        )
    if not all(checked):
        raise ValueError("a goal is empty; remove it")
    return checked


def check_limits(
    memory_k: int, token_limit: int, max_cycles: int, budget: float | None, json_retries: int
) -> None:
    for label, value, low in (
        ("memory_k", memory_k, 1),
        ("token_limit", token_limit, 1),
        ("max_cycles", max_cycles, 1),
        ("json_retries", json_retries, 0),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"{label} must be an integer >= {low}, got {value!r}")
    if budget is not None and not budget > 0:
        raise ValueError(f"budget must be a positive number of USD (or None), got {budget!r}")


def make_executor(
    spec: CodeExecutor | Mapping[str, Any] | None, workspace: Path
) -> CodeExecutor | None:
    """The executor of the Python commands: the given one, or one built from a
    ``CodeExecutorFactory`` config (a ``"commandline-local"`` one works in the workspace unless
    the config says otherwise)."""
    if spec is None:
        return None
    if isinstance(spec, Mapping):
        from ..coding.factory import CodeExecutorFactory

        config = dict(spec)
        if config.get("executor") == "commandline-local":
            local = dict(config.get("commandline-local") or {})
            local.setdefault("work_dir", str(workspace))
            config["commandline-local"] = local
        return CodeExecutorFactory.create(config)
    if isinstance(spec, CodeExecutor):
        return spec
    raise TypeError(
        "code_executor must be a parley.coding executor (e.g. LocalCommandLineCodeExecutor, "
        f"DockerCommandLineCodeExecutor) or a CodeExecutorFactory config dict, got {spec!r}"
    )


def make_memory(memory: LongTermMemory | Literal[False] | None) -> LongTermMemory | None:
    """The given memory, none (``False``), or a default one (``None``: the `memory` extra)."""
    if memory is False:
        return None
    if memory is not None:
        return memory
    from ..memory import LongTermMemory

    try:
        return LongTermMemory()
    except ImportError as e:
        raise ImportError(
            f"AutonomousAgent's default long-term memory needs the `memory` extra: pip install "
            f"'parley[memory]' ({e}). Or pass memory=False to run without long-term memory, or "
            "memory=LongTermMemory(embedding_function=...) with an embedding of your own."
        ) from e
