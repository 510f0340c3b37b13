"""Vector stores: exact cosine search in process, kept in memory or in a SQLite file.

:class:`InMemoryVectorStore` keeps the unit-length vectors in one growing numpy matrix (its
capacity doubles, so adding n records costs O(n) in all) and answers a query with one
matrix-vector product and a partial sort: exact, and fast for the tens of thousands of records
an agent's memory holds. :class:`SQLiteVectorStore` persists the records in a SQLite file and
searches an in-memory copy loaded when it opens.

Both are safe to call from several threads (the agents call them from worker threads).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Mapping, Sequence, Sized
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._core.lifetime import ClosesOnExit
from .base import MemoryHit

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from .base import Vectors

__all__ = ["InMemoryVectorStore", "SQLiteVectorStore"]


def _numpy() -> Any:
    try:
        import numpy
    except ImportError as e:
        raise ImportError("parley's vector stores need numpy: pip install 'parley[memory]'") from e
    return numpy


def _unit_rows(vectors: Any, np: Any) -> NDArray[np.float32]:
    rows = np.asarray(vectors, dtype=np.float32)
    if rows.ndim != 2:
        raise ValueError(f"expected one vector per record (a 2-D array), got shape {rows.shape}")
    if not np.all(np.isfinite(rows)):
        raise ValueError("an embedding contains NaN or infinity")
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    # A zero vector matches nothing (score 0) instead of dividing by zero.
    result: NDArray[np.float32] = rows / np.where(norms == 0, 1.0, norms)
    return result


def _check_lengths(ids: Sequence[str], *others: Sized | None) -> None:
    for other in others:
        if other is not None and len(other) != len(ids):
            raise ValueError(
                f"ids, embeddings, texts and metadatas must have the same length "
                f"(got {len(ids)} ids and {len(other)} of another)"
            )
    if len(set(ids)) != len(ids):
        raise ValueError("ids must be unique within one add()")


@dataclass(frozen=True)
class _Batch:
    """Records being added: their ids, unit-length rows, texts and metadatas, in one order."""

    ids: Sequence[str]
    rows: Any
    texts: Sequence[str]
    metadatas: Sequence[Mapping[str, Any]] | None


class _CosineStore:
    """The records in one numpy matrix, searched exactly by cosine similarity: both stores'
    search. A store that also keeps the records elsewhere writes them there in the hooks
    (``_stored``, ``_removed``, ``_cleared``), called under the lock before the matrix changes:
    a hook that fails leaves the searched copy as it was."""

    def __init__(self) -> None:
        self._np = _numpy()
        self._lock = threading.Lock()
        self._matrix: NDArray[np.float32] | None = None
        self._ids: list[str] = []
        self._texts: list[str] = []
        self._metadatas: list[dict[str, Any]] = []
        self._index: dict[str, int] = {}

    @property
    def dim(self) -> int | None:
        """The vectors' length, fixed by the first record (None while empty)."""
        return None if self._matrix is None else int(self._matrix.shape[1])

    def __len__(self) -> int:
        return len(self._ids)

    def add(
        self,
        ids: Sequence[str],
        embeddings: Vectors,
        texts: Sequence[str],
        metadatas: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        """Add records; an id already present is replaced."""
        _check_lengths(ids, embeddings, texts, metadatas)
        if not ids:
            return
        batch = _Batch(ids, _unit_rows(embeddings, self._np), texts, metadatas)
        with self._lock:
            self._check_dim(batch.rows)
            self._stored(batch)
            self._insert(batch)

    def _check_dim(self, rows: Any) -> None:
        if self.dim is not None and rows.shape[1] != self.dim:
            raise ValueError(
                f"embeddings have {rows.shape[1]} dimensions but this store holds "
                f"{self.dim}-dimensional vectors (use one embedding function per store)"
            )

    def _insert(self, batch: _Batch) -> None:
        for i, record_id in enumerate(batch.ids):
            metadata = dict(batch.metadatas[i]) if batch.metadatas is not None else {}
            self._put(str(record_id), batch.rows[i], str(batch.texts[i]), metadata)

    def _put(self, record_id: str, row: Any, text: str, metadata: dict[str, Any]) -> None:
        at = self._index.get(record_id)
        if at is None:
            at = len(self._ids)
            self._grow(at + 1, row.shape[0])
            self._ids.append(record_id)
            self._texts.append(text)
            self._metadatas.append(metadata)
            self._index[record_id] = at
        else:
            self._texts[at] = text
            self._metadatas[at] = metadata
        assert self._matrix is not None
        self._matrix[at] = row

    def _grow(self, needed: int, dim: int) -> None:
        if self._matrix is None:
            self._matrix = self._np.zeros((max(needed, 16), dim), dtype=self._np.float32)
        elif needed > self._matrix.shape[0]:
            bigger = self._np.zeros((2 * self._matrix.shape[0], dim), dtype=self._np.float32)
            bigger[: len(self._ids)] = self._matrix[: len(self._ids)]
            self._matrix = bigger

    def query(self, embedding: Sequence[float], k: int) -> list[MemoryHit]:
        """The ``k`` records nearest to ``embedding``, nearest first."""
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        np = self._np
        query = _unit_rows([embedding], np)[0]
        with self._lock:
            n = len(self._ids)
            if n == 0 or self._matrix is None:
                return []
            if query.shape[0] != self._matrix.shape[1]:
                raise ValueError(
                    f"the query has {query.shape[0]} dimensions but this store holds "
                    f"{self._matrix.shape[1]}-dimensional vectors"
                )
            scores = self._matrix[:n] @ query
            k = min(k, n)
            top = np.argpartition(-scores, k - 1)[:k]
            # Ties keep insertion order, so results are deterministic.
            order = top[np.lexsort((top, -scores[top]))]
            return [
                MemoryHit(self._ids[i], self._texts[i], float(scores[i]), dict(self._metadatas[i]))
                for i in order
            ]

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the records with these ids (unknown ids are ignored)."""
        with self._lock:
            self._removed(ids)
            for record_id in ids:
                at = self._index.pop(str(record_id), None)
                if at is None:
                    continue
                last = len(self._ids) - 1
                if at != last:  # move the last record into the hole
                    assert self._matrix is not None
                    self._matrix[at] = self._matrix[last]
                    self._ids[at] = self._ids[last]
                    self._texts[at] = self._texts[last]
                    self._metadatas[at] = self._metadatas[last]
                    self._index[self._ids[at]] = at
                self._ids.pop()
                self._texts.pop()
                self._metadatas.pop()

    def clear(self) -> None:
        """Remove every record."""
        with self._lock:
            self._cleared()
            self._matrix = None
            self._ids.clear()
            self._texts.clear()
            self._metadatas.clear()
            self._index.clear()

    # Hooks of a store that keeps the records elsewhere too (see the class).

    def _stored(self, batch: _Batch) -> None:
        pass

    def _removed(self, ids: Sequence[str]) -> None:
        pass

    def _cleared(self) -> None:
        pass


class InMemoryVectorStore(_CosineStore):
    """Records in process memory, searched exactly by cosine similarity."""


_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    id TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL,
    vector BLOB NOT NULL
)
"""


class SQLiteVectorStore(_CosineStore, ClosesOnExit):
    """Records persisted in a SQLite file (a new file is created), searched like
    :class:`InMemoryVectorStore` over a copy loaded when the store opens.

    Metadata must be JSON-serialisable. Close the store (or use it as a context manager) to
    release the file. Each change is committed to the file before it returns.
    """

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute(_SCHEMA)
        self._load()

    def _load(self) -> None:
        rows = self._db.execute("SELECT id, text, metadata, vector FROM records ORDER BY rowid")
        ids, texts, metadatas, vectors = [], [], [], []
        for record_id, text, metadata, blob in rows:
            ids.append(record_id)
            texts.append(text)
            metadatas.append(json.loads(metadata))
            vectors.append(self._np.frombuffer(blob, dtype=self._np.float32))
        if ids:
            with self._lock:
                self._insert(_Batch(ids, _unit_rows(vectors, self._np), texts, metadatas))

    def _stored(self, batch: _Batch) -> None:
        metadatas = batch.metadatas or [{}] * len(batch.ids)
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR REPLACE INTO records (id, text, metadata, vector) VALUES (?, ?, ?, ?)",
                [
                    (str(record_id), str(text), json.dumps(dict(metadata)), row.tobytes())
                    for record_id, text, metadata, row in zip(
                        batch.ids, batch.texts, metadatas, batch.rows, strict=True
                    )
                ],
            )

    def _removed(self, ids: Sequence[str]) -> None:
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("DELETE FROM records WHERE id = ?", [(str(i),) for i in ids])

    def _cleared(self) -> None:
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM records")

    def close(self) -> None:
        """Close the file; the store cannot be used afterwards."""
        with self._lock:
            self._db.close()
