"""Helpers of the vector databases (AutoGen's ``agentchat.contrib.vectordb.utils``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ....formatting_utils import colored
from .base import Document, QueryResults

__all__ = ["chroma_results_to_query_results", "filter_results_by_distance", "get_logger"]


class _ColoredFormatter(logging.Formatter):
    def __init__(self, fmt: str, color: str | None) -> None:
        super().__init__(fmt)
        self._color = color

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return colored(text, self._color) if self._color else text


def get_logger(name: str, level: int = logging.INFO, color: str | None = "cyan") -> logging.Logger:
    """A logger writing coloured lines to stderr (one handler, however often it is asked for)."""
    logger = logging.getLogger(name)
    logger.setLevel(level)
    if not any(getattr(h, "_parley_vectordb", False) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(
            _ColoredFormatter("%(asctime)s - %(name)s - %(levelname)s - %(message)s", color)
        )
        handler._parley_vectordb = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    return logger


def filter_results_by_distance(
    results: QueryResults, distance_threshold: float = -1
) -> QueryResults:
    """Keep the hits whose distance is below ``distance_threshold``; all of them when it is
    not positive."""
    if distance_threshold <= 0:
        return results
    return [[hit for hit in hits if hit[1] < distance_threshold] for hits in results]


def chroma_results_to_query_results(
    data_dict: Mapping[str, Any], special_key: str = "distances"
) -> QueryResults:
    """Chroma's columns (``{"ids": [[...]], "documents": [[...]], "distances": [[...]]}``, one
    inner list per query) as :data:`QueryResults`: a ``Document`` per hit, with ``special_key``'s
    value as its distance. Keys lose their final ``s`` (``ids`` -> ``id``); ``documents`` becomes
    ``content``, as AutoGen's callers rename it to ``contents`` first."""
    columns = {
        key: value
        for key, value in data_dict.items()
        if key != special_key
        and isinstance(value, list)
        and value
        and all(isinstance(v, list) for v in value)
    }
    distances = data_dict.get(special_key) or []
    results: QueryResults = []
    for q, query_distances in enumerate(distances):
        hits: list[tuple[Document, float]] = []
        for i, distance in enumerate(query_distances):
            doc: dict[str, Any] = {}
            for key, value in columns.items():
                field = "content" if key in ("documents", "contents") else key[:-1]
                if key.endswith("s") and q < len(value) and i < len(value[q]):
                    doc[field] = value[q][i]
            hits.append((Document(**doc), float(distance)))  # type: ignore[typeddict-item]
        results.append(hits)
    return results
