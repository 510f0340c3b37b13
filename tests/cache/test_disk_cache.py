from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import diskcache
import pytest
from openai.types.chat import ChatCompletion

from parley.cache import AbstractCache, DiskCache


def test_round_trip_of_json_values(tmp_path: Path) -> None:
    values = {"str": "text", "int": 3, "none": None, "dict": {"a": [1, (2, 3)]}, "float": 0.5}
    with DiskCache(tmp_path / "c") as cache:
        for key, value in values.items():
            cache.set(key, value)
        for key, value in values.items():
            expected = {"a": [1, [2, 3]]} if key == "dict" else value  # tuples come back as lists
            assert cache.get(key, "missing") == expected


@pytest.mark.parametrize("value", [b"bytes", {1, 2}, object()])
def test_a_value_that_is_not_json_is_a_type_error(tmp_path: Path, value: object) -> None:
    with DiskCache(tmp_path / "c") as cache:
        with pytest.raises(
            TypeError, match=f"DiskCache stores JSON values: a {type(value).__name__}"
        ):
            cache.set("k", value)
        assert cache.get("k") is None


def test_a_chat_completion_is_stored_as_its_json(
    tmp_path: Path, chat_completion: ChatCompletion
) -> None:
    # Response objects are encoded by the completion client (parley.oai._cache_io); the
    # backend itself takes JSON data only.
    with DiskCache(tmp_path / "c") as cache:
        with pytest.raises(TypeError, match="ChatCompletion"):
            cache.set("request", chat_completion)
        cache.set("request", chat_completion.model_dump(mode="json"))
    with DiskCache(tmp_path / "c") as cache:
        restored = cache.get("request")
    assert ChatCompletion.model_validate(restored) == chat_completion


def _plant(directory: Path, key: str, value: object) -> None:
    """Write ``value`` under ``key`` with stock diskcache, as another program would."""
    with diskcache.Cache(str(directory)) as raw:
        raw.set(key, value)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ({"a": 1}, "it is a pickle"),
        (["x" * 100_000], "it is a pickle"),  # a pickle in a file of its own
        (b"\x80\x04bytes", "stored in mode 1 as bytes"),
        (b"x" * 100_000, "stored in mode 2"),
        ("not json", "it is not JSON"),
        ("{" * 100_000, "it is not JSON"),  # deeper than the JSON parser goes
        (3, "stored in mode 1 as int"),
    ],
    ids=["pickle", "pickle-file", "bytes", "bytes-file", "text", "deep", "int"],
)
def test_entries_parley_did_not_write_are_misses_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, value: object, reason: str
) -> None:
    DiskCache(tmp_path / "c").close()
    _plant(tmp_path / "c", "k", value)
    with DiskCache(tmp_path / "c") as cache, caplog.at_level(logging.WARNING):
        assert cache.get("k", "default") == "default"
        assert reason in caplog.text
        cache.set("k", "replaced")
        assert cache.get("k") == "replaced"


class _TouchOnUnpickle:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, ...]:
        return (Path.touch, (self.path,))

    def __hash__(self) -> int:
        return 0


def test_a_pickled_key_is_never_unpickled(tmp_path: Path) -> None:
    from parley.cache._json_values import ForeignEntry

    marker = tmp_path / "unpickled"
    with DiskCache(tmp_path / "c") as cache:
        cache.set("k", 1)
    _plant(tmp_path / "c", _TouchOnUnpickle(marker), "v")  # a key diskcache stores pickled
    with DiskCache(tmp_path / "c") as cache:
        with pytest.raises(TypeError, match="keys must be str"):
            cache.set(("a",), "v")  # type: ignore[arg-type]
        assert cache.get("k") == 1
        with pytest.raises(ForeignEntry, match="its key is pickled"):
            list(cache.cache)  # the raw diskcache object refuses too
    assert not marker.exists()


def test_a_value_file_outside_the_directory_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('"from outside"')
    with DiskCache(tmp_path / "c") as cache:
        cache.set("big", "x" * 100_000)
        link_target = tmp_path / "linked.json"
        link_target.write_text('"linked"')
        database = tmp_path / "c" / "cache.db"
        with sqlite3.connect(database) as db:
            (name,) = db.execute("SELECT filename FROM Cache WHERE key = 'big'").fetchone()
            for key, filename in [
                ("absolute", str(outside)),
                ("relative", os.path.relpath(outside, tmp_path / "c")),
                ("the-directory", "."),
            ]:
                db.execute(
                    "INSERT INTO Cache (key, raw, store_time, access_time, size, mode, filename)"
                    " VALUES (?, 1, 0, 0, 1, 3, ?)",
                    (key, filename),
                )
        db.close()
        (tmp_path / "c" / name).unlink()
        (tmp_path / "c" / name).symlink_to(link_target)
        with caplog.at_level(logging.WARNING):
            for key in ("absolute", "relative", "the-directory", "big"):
                assert cache.get(key, "miss") == "miss", key
        assert caplog.text.count("outside the cache directory") == 4
        # replacing or culling those entries does not delete the files they name
        for key in ("absolute", "relative", "big"):
            cache.set(key, "x" * 100_000)
    assert outside.read_text() == '"from outside"'
    assert link_target.read_text() == '"linked"'


def test_a_fifo_as_a_value_file_does_not_block(tmp_path: Path) -> None:
    with DiskCache(tmp_path / "c") as cache:
        cache.set("big", "x" * 100_000)
        with sqlite3.connect(tmp_path / "c" / "cache.db") as db:
            (name,) = db.execute("SELECT filename FROM Cache WHERE key = 'big'").fetchone()
        db.close()
        (tmp_path / "c" / name).unlink()
        os.mkfifo(tmp_path / "c" / name)
        assert cache.get("big", "miss") == "miss"


def test_a_foreign_settings_table_is_not_obeyed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = tmp_path / "c"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    DiskCache(directory).close()
    with sqlite3.connect(directory / "cache.db") as db:
        db.executemany(
            "INSERT OR REPLACE INTO Settings VALUES (?, ?)",
            [
                ("sqlite_journal_mode", "delete"),
                ("sqlite_synchronous", 0),
                ("disk_min_file_size", 0),
                ("disk__directory", str(elsewhere)),
                ("_directory", str(elsewhere)),
                ("eviction_policy", "no such policy"),
                ("size_limit", 0),
                ("count", "not a number"),
            ],
        )
    db.close()
    with caplog.at_level(logging.WARNING), DiskCache(directory) as cache:
        cache.set("small", "v")
        cache.set("big", "x" * 100_000)
        assert cache.get("small") == "v"
        assert cache.get("big") == "x" * 100_000
        assert len(cache.cache) == 2
        raw = cache.cache
        assert (raw.directory, raw.disk._directory) == (str(directory), str(directory))
        assert (raw.size_limit, raw.eviction_policy) == (2**30, "least-recently-stored")
        assert raw.disk.min_file_size == 2**15
        assert raw._sql("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw._sql("PRAGMA synchronous").fetchone()[0] == 1
    assert list(elsewhere.iterdir()) == []
    assert "ignoring the setting '_directory'" in caplog.text
    assert "ignoring the setting 'disk__directory'" in caplog.text


def test_missing_key_returns_default(tmp_path: Path) -> None:
    with DiskCache(tmp_path / "c") as cache:
        assert cache.get("nope") is None
        assert cache.get("nope", 17) == 17


def test_set_replaces_the_previous_value(tmp_path: Path) -> None:
    with DiskCache(tmp_path / "c") as cache:
        cache.set("k", 1)
        cache.set("k", 2)
        assert cache.get("k") == 2


def test_creates_the_directory(tmp_path: Path) -> None:
    directory = tmp_path / "a" / "b"
    with DiskCache(directory) as cache:
        cache.set("k", "v")
        assert cache.directory == str(directory)
    assert directory.is_dir()


def test_entries_survive_a_new_instance(tmp_path: Path) -> None:
    big = "x" * 200_000  # stored in a file beside the database, not inline
    with DiskCache(str(tmp_path / "c")) as cache:
        cache.set("small", [1, 2, 3])
        cache.set("big", big)
    with DiskCache(str(tmp_path / "c")) as again:
        assert again.get("small") == [1, 2, 3]
        assert again.get("big") == big


def test_close_is_idempotent_and_a_closed_cache_reopens(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path / "c")
    cache.set("k", "v")
    cache.close()
    cache.close()
    assert cache.get("k") == "v"
    cache.set("k2", "v2")
    cache.close()
    with cache as entered:
        assert entered is cache
        assert entered.get("k2") == "v2"
    with cache:
        assert cache.get("k") == "v"
    cache.close()


def test_usable_from_other_threads_without_leaving_connections_open(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    with DiskCache(directory) as cache, ThreadPoolExecutor(max_workers=4) as pool:
        cache.set("main", "from main")
        list(pool.map(lambda i: cache.set(str(i), i), range(20)))
        assert list(pool.map(cache.get, [str(i) for i in range(20)])) == list(range(20))
        assert pool.submit(cache.get, "main").result() == "from main"
        cache.close()
        # the pool's threads are still alive, yet nothing holds the database open
        assert open_files_under(directory) == []
        assert cache.get("7") == 7


def open_files_under(directory: Path) -> list[str]:
    fd_dir = Path("/proc/self/fd")
    if not fd_dir.is_dir():
        pytest.skip("needs /proc to list open files")
    found = []
    for fd in fd_dir.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue  # closed while listing
        if target.startswith(str(directory)):
            found.append(target)
    return found


def test_waits_for_another_writer_instead_of_failing(tmp_path: Path) -> None:
    with DiskCache(tmp_path / "c") as cache:
        cache.set("k", "before")
        # another connection (as another process would) holds the write lock for a while
        other = sqlite3.connect(
            tmp_path / "c" / "cache.db", isolation_level=None, check_same_thread=False
        )
        try:
            other.execute("BEGIN IMMEDIATE")
            release = threading.Timer(0.5, other.execute, args=("COMMIT",))
            release.start()
            started = time.monotonic()
            cache.set("k", "after")
            waited = time.monotonic() - started
            release.join(timeout=10)
        finally:
            other.close()
        assert waited >= 0.3
        assert cache.get("k") == "after"


def test_directory_is_readable_by_diskcache_itself(tmp_path: Path) -> None:
    with DiskCache(tmp_path / "c") as cache:
        cache.set("k", {"v": 1})
        cache.set("big", ["x" * 100_000])
    with diskcache.Cache(str(tmp_path / "c")) as raw:
        assert raw.get("k") == '{"v": 1}'
        assert raw.get("big") == '["' + "x" * 100_000 + '"]'


def test_a_file_in_the_way_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_text("not a cache")
    with pytest.raises(NotADirectoryError, match="not a directory"):
        DiskCache(path)


def test_empty_directory_name_is_rejected() -> None:
    with pytest.raises(ValueError, match="empty path"):
        DiskCache("")


def test_is_an_abstract_cache(tmp_path: Path) -> None:
    with DiskCache(tmp_path / "c") as cache:
        assert isinstance(cache, AbstractCache)
        assert repr(cache) == f"DiskCache({str(tmp_path / 'c')!r})"
