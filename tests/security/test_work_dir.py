"""Code never runs in a folder that holds what it must not write (finding 1, the work-dir half).

With defaults, the Docker executor's work dir was ``.`` and ``cache_seed`` cached into
``./.cache``: code in the container could rewrite the cache the host read back. The legacy path
wrote into parley's own package. Now the default work dir is a dedicated folder (``coding``),
and a work dir holding a cache, a virtualenv, parley's sources or a git repository is refused
with a clear error before anything runs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import parley
from parley import ConversableAgent, UserProxyAgent
from parley.cache import Cache
from parley.code_utils import execute_code
from parley.coding import CodeBlock, DockerCommandLineCodeExecutor, LocalCommandLineCodeExecutor
from parley.exceptions import UnsafeWorkDirError

PACKAGE = Path(parley.__file__).resolve().parent


def legacy(work_dir: Path | str) -> Any:
    return execute_code("print('ran')", work_dir=str(work_dir), use_docker=False)


def legacy_agent(work_dir: Path | str) -> Any:
    proxy = UserProxyAgent(
        "proxy",
        human_input_mode="NEVER",
        code_execution_config={"work_dir": str(work_dir), "use_docker": False},
    )
    sender = ConversableAgent("sender", llm_config=False, human_input_mode="NEVER")
    return sender.initiate_chat(proxy, message="```python\nprint('ran')\n```", max_turns=1)


RUNNERS: dict[str, Callable[[Path | str], Any]] = {
    "local executor": lambda d: LocalCommandLineCodeExecutor(work_dir=d),
    "docker executor": lambda d: DockerCommandLineCodeExecutor(work_dir=d),
    "legacy execute_code": legacy,
    "legacy user proxy": legacy_agent,
}


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_default_work_dirs_are_a_dedicated_folder(in_tmp: Path) -> None:
    assert LocalCommandLineCodeExecutor().work_dir == Path("coding")
    assert DockerCommandLineCodeExecutor().work_dir == Path("coding")
    exit_code, logs, _ = execute_code("open('here.txt', 'w').write('x')", use_docker=False)
    assert exit_code == 0, logs
    assert (in_tmp / "coding" / "here.txt").exists()
    assert not (PACKAGE / "extensions").exists()  # AutoGen wrote into its own package


def test_default_work_dir_and_cache_seed_are_apart(in_tmp: Path) -> None:
    """The default cache folder is not inside the default work dir, nor the other way round."""
    with Cache.disk(cache_seed=41) as cache:
        cache.set("k", "v")
        executor = LocalCommandLineCodeExecutor()
        result = executor.execute_code_blocks(
            [CodeBlock(language="python", code="import os; print(sorted(os.listdir('.')))")]
        )
    assert result.exit_code == 0
    assert ".cache" not in result.output


def _project(tmp: Path, inside: str, *, file: bool = False) -> Path:
    """``tmp/proj`` with ``inside`` (a folder, or a file) in it."""
    path = tmp / "proj" / inside
    if file:
        path.parent.mkdir(parents=True)
        path.touch()
    else:
        path.mkdir(parents=True)
    return tmp / "proj"


CASES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "the current directory": (lambda tmp: Path("."), "cache_seed keeps disk caches"),
    "a .cache folder": (lambda tmp: _project(tmp, ".cache/41"), ".cache"),
    "a git repository": (lambda tmp: _project(tmp, ".git"), ".git"),
    "a virtualenv": (lambda tmp: _project(tmp, "env/pyvenv.cfg", file=True), "virtualenv"),
    "a disk cache": (lambda tmp: _project(tmp, "cache/cache.db", file=True), "cache.db"),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("runner", RUNNERS)
def test_a_work_dir_holding_what_code_must_not_touch_is_refused(
    in_tmp: Path, case: str, runner: str
) -> None:
    make, named = CASES[case]
    work_dir = make(in_tmp)
    with pytest.raises(UnsafeWorkDirError, match="cannot be used for running code") as caught:
        RUNNERS[runner](work_dir)
    assert named in str(caught.value)


@pytest.mark.parametrize("runner", RUNNERS)
def test_parleys_sources_and_the_virtualenv_are_refused(runner: str) -> None:
    with pytest.raises(UnsafeWorkDirError, match="parley's own sources"):
        RUNNERS[runner](PACKAGE / "extensions")
    with pytest.raises(UnsafeWorkDirError, match="parley's own sources"):
        RUNNERS[runner](PACKAGE.parent)  # the repository, or site-packages
    if sys.prefix != sys.base_prefix:
        with pytest.raises(UnsafeWorkDirError, match="virtualenv"):
            RUNNERS[runner](Path(sys.prefix) / "work")


def test_a_cache_opened_inside_the_work_dir_later_stops_the_next_block(in_tmp: Path) -> None:
    executor = LocalCommandLineCodeExecutor(work_dir="jobs")
    block = CodeBlock(language="python", code="print('ran')")
    assert executor.execute_code_blocks([block]).exit_code == 0
    with (
        Cache.disk(cache_seed=1, cache_path_root="jobs/cache"),
        pytest.raises(UnsafeWorkDirError, match="response cache"),
    ):
        executor.execute_code_blocks([block])


def test_code_may_create_such_folders_itself(in_tmp: Path) -> None:
    """What the code makes in its own work dir (a git repo, a venv) is not held against it."""
    executor = LocalCommandLineCodeExecutor(work_dir="jobs")
    make_repo = CodeBlock(language="sh", code="mkdir .git .cache && touch pyvenv.cfg")
    assert executor.execute_code_blocks([make_repo]).exit_code == 0
    again = executor.execute_code_blocks([CodeBlock(language="python", code="print('ran')")])
    assert again.exit_code == 0
