from __future__ import annotations

import os
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from openai.types.chat import ChatCompletion

from parley.cache import AbstractCache, DiskCache


def test_round_trip_of_plain_values(tmp_path: Path) -> None:
    values = {"str": "text", "int": 3, "none": None, "dict": {"a": [1, (2, 3)]}, "bytes": b"\0x"}
    with DiskCache(tmp_path / "c") as cache:
        for key, value in values.items():
            cache.set(key, value)
        for key, value in values.items():
            assert cache.get(key, "missing") == value


def test_round_trip_of_a_chat_completion(tmp_path: Path, chat_completion: ChatCompletion) -> None:
    with DiskCache(tmp_path / "c") as cache:
        cache.set("request", chat_completion)
    with DiskCache(tmp_path / "c") as cache:
        restored = cache.get("request")
    assert isinstance(restored, ChatCompletion)
    assert restored == chat_completion
    assert restored.choices[0].message.content == "the cached answer"


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
    import diskcache

    with DiskCache(tmp_path / "c") as cache:
        cache.set("k", {"v": 1})
    with diskcache.Cache(str(tmp_path / "c")) as raw:
        assert raw.get("k") == {"v": 1}


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
