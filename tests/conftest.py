"""Shared fixtures. The ``fake_llm`` fixture comes from parley's pytest plugin (entry point).

``redis_url`` is the URL of a real, empty Redis: one ``redis-server`` process per test
session on a free loopback port, flushed before each test. Tests using it must be marked
``@pytest.mark.redis``. Without redis-server the test fails (it is not skipped): run
``scripts/install-system-deps.sh``.

``legacy_completion`` gives the legacy ``Completion`` API a cache root of the test's own and
puts the class state back afterwards.

The suite runs in parallel (pytest-xdist, ``scripts/test.sh``): each worker is a pytest process
with its own Redis, fake models and temporary folders; the durable key file is the session's
(made by whichever process needs it first, as parley makes it for concurrent users). The layers
in ``XDIST_GROUPS`` run on one worker each, one test at a time, in file order
(``--dist loadgroup``).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

_REDIS_START_TIMEOUT = 10.0
_REDIS_START_ATTEMPTS = 3
_REDIS_STOP_TIMEOUT = 10.0
_REDIS_IO_TIMEOUT = 5.0


@dataclass(frozen=True)
class RedisServer:
    """A running redis-server on loopback."""

    host: str
    port: int

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def command(self, *args: str) -> bytes:
        """Send one command and return the first line of the reply (e.g. ``b"+PONG"``)."""
        return _redis_command(self.host, self.port, *args)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A redis-server for the whole session, without persistence, terminated at the end."""
    executable = shutil.which("redis-server")
    if executable is None:
        pytest.fail(
            "redis-server is not installed: run scripts/install-system-deps.sh "
            "(it installs the Debian packages in scripts/debian-packages.txt)",
            pytrace=False,
        )
    workdir = tmp_path_factory.mktemp("redis")
    for _ in range(_REDIS_START_ATTEMPTS):
        # The port may be taken between choosing and binding it; then the server exits and
        # another port is tried.
        port = _free_port()
        log = workdir / f"redis-{port}.log"
        process = _start_redis(executable, port, workdir, log)
        try:
            started = _wait_until_ready(process, port)
        except BaseException:
            _stop(process)
            raise
        if started:
            break
        _stop(process)
    else:
        pytest.fail(f"redis-server did not start; its log:\n{log.read_text()}", pytrace=False)
    try:
        yield RedisServer("127.0.0.1", port)
    finally:
        _stop(process)


@pytest.fixture
def redis_url(redis_server: RedisServer, request: pytest.FixtureRequest) -> str:
    """The URL of database 0 of the session's redis-server, emptied for this test."""
    if request.node.get_closest_marker("redis") is None:
        pytest.fail("tests using redis_url must be marked @pytest.mark.redis", pytrace=False)
    reply = redis_server.command("FLUSHALL")
    assert reply == b"+OK", f"FLUSHALL answered {reply!r}"
    return redis_server.url


@pytest.fixture
def legacy_completion(tmp_path: Path) -> Iterator[Path]:
    """``Completion`` caching under ``<tmp_path>/cache`` (returned) for one test, so that tests
    share no cached responses; ``Completion`` and ``ChatCompletion`` are restored afterwards."""
    from parley.oai import ChatCompletion, Completion

    from ._class_state import kept_class_state

    root = tmp_path / "cache"
    with kept_class_state(Completion, ChatCompletion):
        Completion.set_cache(41, str(root))
        yield root
        # The disk caches opened below root stay open for the process (as AutoGen's did):
        # closed here, with the folder, so that a long suite does not run out of file
        # descriptors.
        Completion.clear_cache(None, str(root))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _start_redis(executable: str, port: int, workdir: Path, log: Path) -> subprocess.Popen[bytes]:
    args = [
        executable,
        "--port", str(port),
        "--bind", "127.0.0.1",
        "--save", "",
        "--appendonly", "no",
        "--dir", str(workdir),
    ]  # fmt: skip
    with log.open("wb") as log_file:
        return subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT
        )


def _wait_until_ready(process: subprocess.Popen[bytes], port: int) -> bool:
    deadline = time.monotonic() + _REDIS_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            if _redis_command("127.0.0.1", port, "PING") == b"+PONG":
                return True
        except OSError:
            pass  # not listening yet
        time.sleep(0.02)
    return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=_REDIS_STOP_TIMEOUT)
            return
        except subprocess.TimeoutExpired:
            process.kill()
    process.wait(timeout=_REDIS_STOP_TIMEOUT)


def _redis_command(host: str, port: int, *args: str) -> bytes:
    # A few bytes of RESP keep this fixture independent of the redis package under test.
    parts = [f"*{len(args)}\r\n".encode()]
    for arg in args:
        data = arg.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    with socket.create_connection((host, port), timeout=_REDIS_IO_TIMEOUT) as sock:
        sock.sendall(b"".join(parts))
        reply = b""
        while not reply.endswith(b"\r\n"):
            chunk = sock.recv(4096)
            if not chunk:
                break
            reply += chunk
    return reply.split(b"\r\n", 1)[0]


@pytest.fixture(scope="session")
def model_file() -> Path:
    """The embedded model's GGUF file. A test using it fails (does not skip) when the ``local``
    extra is missing, naming the install command: the test command installs it, so its
    absence is a broken setup."""
    from parley.local import INSTALL_HINT, LocalModelUnavailableError, find_model_file

    try:
        import llama_cpp  # noqa: F401

        return find_model_file()
    except (ImportError, LocalModelUnavailableError) as error:
        problem = str(error)
    pytest.fail(
        f"the `local` extra is not installed ({problem}). The test command installs it; by "
        f"hand: {INSTALL_HINT}",
        pytrace=False,
    )


# A mark -> the xdist group of the tests that carry it (a docs page carries its page's marks).
XDIST_GROUPS = {
    # Ray: the clusters share 127.0.0.2, where a starting node finds its raylet by address
    # alone; tests/batch/test_ray.py's tests share one module cluster and run in order.
    "ray": "ray",
    # The embedded model: llama.cpp keeps both cores busy for a test's length, and a second
    # model at once would only double every test's time against its timeout.
    "local_model": "local_model",
    # Chromium: a browser process per module, and the heaviest memory user of the suite.
    "browser": "browser",
}


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (in the same hook)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return
    try:
        from . import _xdist_groups
    except ImportError:
        return  # this file copied into another suite (tests/cache/test_redis_fixture.py)
    groups = {}
    for item in items:
        group = next((g for mark, g in XDIST_GROUPS.items() if item.get_closest_marker(mark)), None)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
            groups[item.nodeid] = group
    _xdist_groups.record(groups)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """The loadgroup scheduler that keeps ``XDIST_GROUPS`` together (tests/_xdist_groups.py)."""
    if config.getoption("dist", "no") != "loadgroup":
        return None
    from . import _xdist_groups

    return _xdist_groups.make_scheduler(config, log)


_KEY_FILE_ENV = "PARLEY_DURABLE_KEY_FILE"


def pytest_configure(config: pytest.Config) -> None:
    """Durable stores' journal key in a file of the session's own, not in the user's
    ``~/.config/parley``; set before the test modules load, so the environments they make
    for child processes carry it too.

    Ray's token authentication with the session's token (tests/batch/_ray_cluster.py), for the
    same reason and one more: Ray reads its mode once, when this process first imports it, and
    a test may import it indirectly (``flaml.tune`` does) long before a test starts a cluster."""
    import os
    import tempfile

    try:
        from . import _xdist_groups
    except ImportError:
        pass  # this file copied into another suite (tests/cache/test_redis_fixture.py)
    else:
        config.stash[_groups_folder] = _xdist_groups.start(config)
    if _KEY_FILE_ENV not in os.environ:
        folder = tempfile.mkdtemp(prefix="parley-durable-key-")
        os.environ[_KEY_FILE_ENV] = os.path.join(folder, "durable.key")
        config.stash[_key_folder] = folder
    try:
        from .batch._ray_cluster import auth_env
    except ImportError:
        return  # this file copied into another suite (tests/cache/test_redis_fixture.py)
    ray_env = auth_env()
    config.stash[_ray_before] = {name: os.environ.get(name) for name in ray_env}
    os.environ.update(ray_env)


def pytest_unconfigure(config: pytest.Config) -> None:
    import os

    groups_folder = config.stash.get(_groups_folder, None)
    if groups_folder is not None:
        from . import _xdist_groups

        _xdist_groups.finish(groups_folder)
    folder = config.stash.get(_key_folder, None)
    if folder is not None:
        os.environ.pop(_KEY_FILE_ENV, None)
        shutil.rmtree(folder, ignore_errors=True)
    for name, value in config.stash.get(_ray_before, {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


_key_folder = pytest.StashKey[str]()
_groups_folder = pytest.StashKey[str | None]()
_ray_before = pytest.StashKey[dict[str, str | None]]()
