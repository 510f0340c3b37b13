"""The shared ``redis_url`` fixture (tests/conftest.py), as another suite would use it."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

SHARED_CONFTEST = Path(__file__).parents[1] / "conftest.py"


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(SHARED_CONFTEST.read_text())
    pytester.makeini(
        "[pytest]\n"
        "asyncio_default_fixture_loop_scope = function\n"
        "filterwarnings = error\n"
        "markers =\n    redis: needs redis-server\n"
    )
    return pytester


@pytest.mark.redis
def test_each_test_gets_an_empty_database(suite: pytest.Pytester) -> None:
    suite.makepyfile(
        """
        import pytest
        import redis

        @pytest.mark.redis
        @pytest.mark.parametrize("run", [1, 2])
        def test_starts_empty(redis_url, run):
            client = redis.Redis.from_url(redis_url)
            try:
                assert client.dbsize() == 0
                client.set("left-behind", run)
            finally:
                client.close()
        """
    )
    result = suite.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_unmarked_test_is_told_to_add_the_marker(suite: pytest.Pytester) -> None:
    suite.makepyfile("def test_unmarked(redis_url):\n    pass\n")
    result = suite.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*must be marked @pytest.mark.redis*"])


def test_missing_redis_server_fails_with_the_fix(
    suite: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    suite.makepyfile(
        """
        import pytest

        @pytest.mark.redis
        def test_needs_redis(redis_url):
            pass
        """
    )
    result = suite.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*redis-server is not installed*install-system-deps.sh*"])
