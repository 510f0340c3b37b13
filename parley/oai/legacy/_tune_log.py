"""The trial log of ``Completion.tune(log_file_name=...)``, which makes a tuning run resumable.

JSON lines, flushed after every trial:

- a header: ``{"format": "parley.tune/1", "fingerprint": <sha256>, "class": ..., "metric":
  ..., "mode": ...}``; the fingerprint covers what decides the trials (data, metric, mode,
  budgets, search space and templates, search seed, ``eval_func``'s qualified name, the class)
  and leaves out what does not (the config list with its keys and endpoints, ``num_samples``,
  ``max_concurrency``);
- one line per finished trial: ``{"trial": k, "config": <the searcher's config>, "result":
  <what the searcher was told>, "state": <the pruning state after the trial>}``.

Values are written as Python's :mod:`json` writes them (``Infinity`` for a pruned trial's
metric). ``api_key`` values are never written. A line cut short by a crash is dropped on resume.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._tune_space import plain

__all__ = ["FORMAT", "Record", "TrialLog", "describe", "fingerprint", "loggable"]

logger = logging.getLogger("parley.oai.completion")

FORMAT = "parley.tune/1"
# The attributes that define a flaml domain (bounds, categories) and its sampler (log base,
# quantisation, the sampler it quantises).
_DOMAIN_FIELDS = ("lower", "upper", "categories", "sampler", "base", "q")


def describe(value: Any) -> Any:
    """A JSON-ready description of ``value`` that is equal for equal search problems: flaml
    domains by their type and bounds, functions by their qualified name."""
    value = plain(value)
    if isinstance(value, Mapping):
        return {str(k): describe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [describe(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    module = getattr(type(value), "__module__", "")
    if module.startswith("flaml"):
        # Only what defines a domain: flaml adds bookkeeping attributes while it searches.
        defining = {k: getattr(value, k) for k in _DOMAIN_FIELDS if hasattr(value, k)}
        return {"__type__": type(value).__qualname__, **describe(defining)}
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{getattr(value, '__module__', '?')}.{value.__qualname__}"
    return repr(value)


def fingerprint(problem: Mapping[str, Any]) -> str:
    text = json.dumps(describe(problem), sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def loggable(config: Mapping[str, Any]) -> Any:
    """``config`` as it is written and compared: plain JSON values, ``api_key`` hidden."""

    def hide(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: "***" if k == "api_key" else hide(v) for k, v in value.items()}
        if isinstance(value, list):
            return [hide(v) for v in value]
        return value

    return json.loads(json.dumps(hide(plain(config)), default=repr))


@dataclass(frozen=True)
class Record:
    """One finished trial of the log."""

    config: Any
    result: dict[str, Any]
    state: dict[str, Any]


class TrialLog:
    """The log file of one tuning problem (identified by its fingerprint)."""

    def __init__(self, path: str, header: Mapping[str, Any]) -> None:
        self.path = path
        self.header = {"format": FORMAT, **header}
        self.records: list[Record] = []

    def open(self) -> list[Record]:
        """The trials a previous run of the same problem recorded (none for a new file or a
        different problem, whose log is replaced); the file is left holding exactly those."""
        self.records = self._read()
        self._rewrite()
        return list(self.records)

    def _read(self) -> list[Record]:
        try:
            with open(self.path, encoding="utf-8") as f:
                lines = f.read().split("\n")
        except FileNotFoundError:
            return []
        try:
            header = json.loads(lines[0])
        except ValueError:
            header = None
        if not isinstance(header, dict) or header.get("fingerprint") != self.header["fingerprint"]:
            logger.warning(
                "tune log %s is of another tuning problem (or not a parley tune log); "
                "starting it anew",
                self.path,
            )
            return []
        records = []
        for line in lines[1:]:
            try:
                entry = json.loads(line)
                records.append(Record(entry["config"], entry["result"], entry["state"]))
            except (ValueError, KeyError, TypeError):
                break  # the end, or a line a crash cut short: the trials after it are unknown
        return records

    def _rewrite(self) -> None:
        directory = os.path.dirname(self.path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(json.dumps(self.header) + "\n")
            for k, record in enumerate(self.records):
                f.write(self._line(k, record))

    @staticmethod
    def _line(k: int, record: Record) -> str:
        entry = {
            "trial": k,
            "config": record.config,
            "result": record.result,
            "state": record.state,
        }
        return json.dumps(entry, default=repr) + "\n"

    def append(self, record: Record) -> None:
        """Add a finished trial (written and flushed before the searcher hears of it)."""
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(self._line(len(self.records), record))
            f.flush()
        self.records.append(record)

    def truncate(self, keep: int) -> None:
        """Forget the trials from ``keep`` on (the search went another way)."""
        del self.records[keep:]
        self._rewrite()
