"""Issue 34, item 6: files that hold keys, prompts or results never reach code.

The reported gaps: a work dir holding the project's ``OAI_CONFIG_LIST`` and ``.env`` was
accepted, and sandboxed code read the keys in them; a ``virtual_env_context`` venv's
``pip.conf`` (an index password) was readable in the bubblewrap sandbox, though ``/etc/pip.conf``
is hidden for that very reason. Now every config list, key file and ``.env`` parley reads, and
every runtime log it writes, is registered as protected (``parley._protected_paths``): a work
dir holding one is refused, at construction or at the next call, and the sandbox shows one that
lies in a folder it shows as empty. A work dir holding such a file by its name is refused before
code runs, read or not; and every pip configuration file is hidden in the sandbox.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from parley import runtime_logging
from parley.code_utils import create_virtual_env
from parley.coding import CodeBlock, DockerCommandLineCodeExecutor, LocalCommandLineCodeExecutor
from parley.exceptions import UnsafeWorkDirError
from parley.oai import config_list_from_dotenv, config_list_from_json, config_list_openai_aoai

SECRET = "sk-parley-work-dir-secret-0123456789"


def local(work_dir: Path) -> Any:
    return LocalCommandLineCodeExecutor(work_dir=work_dir)


def sandboxed(work_dir: Path) -> Any:
    return LocalCommandLineCodeExecutor(work_dir=work_dir, sandbox=True)


def docker(work_dir: Path) -> Any:
    return DockerCommandLineCodeExecutor(work_dir=work_dir)  # lazy: no engine needed to refuse


EXECUTORS = [
    pytest.param(local, id="local"),
    pytest.param(sandboxed, id="bwrap", marks=pytest.mark.bwrap),
    pytest.param(docker, id="docker"),
]
Make = Callable[[Path], Any]


def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def refused(make: Make, work_dir: Path, what: str) -> UnsafeWorkDirError:
    with pytest.raises(UnsafeWorkDirError) as error:
        make(work_dir)
    assert what in str(error.value)
    return error.value


@pytest.mark.parametrize("make", EXECUTORS)
def test_a_config_list_read_through_its_variable_is_protected(
    make: Make, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = project(tmp_path)
    models = folder / "models.json"  # a name the contents check does not know
    models.write_text(json.dumps([{"model": "m", "api_key": SECRET}]))
    monkeypatch.setenv("OAI_CONFIG_LIST", str(models))
    assert config_list_from_json("OAI_CONFIG_LIST")[0]["api_key"] == SECRET
    error = refused(make, folder, "a config list parley loaded")
    assert str(models) in str(error)
    assert SECRET not in str(error)


@pytest.mark.parametrize("make", EXECUTORS)
def test_a_config_list_read_from_its_folder_is_protected(make: Make, tmp_path: Path) -> None:
    folder = project(tmp_path)
    (folder / "MY_MODELS").write_text(json.dumps([{"model": "m", "api_key": SECRET}]))
    config_list_from_json("MY_MODELS", file_location=str(folder))
    refused(make, folder, "a config list parley loaded")
    # Nor may the work dir be a folder of the project that holds it: it does not contain it,
    # so that one is fine (the sandbox does not show the project).
    (folder / "coding").mkdir()
    make(folder / "coding")


@pytest.mark.parametrize("make", EXECUTORS)
def test_a_dotenv_file_read_is_protected(
    make: Make, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = project(tmp_path)
    env_file = folder / "secrets.env"
    env_file.write_text(f"PARLEY_TEST_DOTENV_KEY={SECRET}\n")
    monkeypatch.setenv("PARLEY_TEST_DOTENV_KEY", "")
    monkeypatch.delenv("PARLEY_TEST_DOTENV_KEY")  # restored (unset) after the test
    config_list_from_dotenv(str(env_file), {"m": "PARLEY_TEST_DOTENV_KEY"})
    assert os.environ["PARLEY_TEST_DOTENV_KEY"] == SECRET
    refused(make, folder, "a .env file parley loaded")


def test_a_key_file_read_is_protected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = project(tmp_path)
    (folder / "openai.key").write_text(SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", "restored after the test")
    config_list_openai_aoai(str(folder), openai_api_key_file="openai.key", exclude="aoai")
    refused(local, folder, "a key file parley loaded")


@pytest.mark.parametrize(
    "name", ["OAI_CONFIG_LIST", "OAI_CONFIG_LIST.json", ".env", ".env.local", "key_openai.txt"]
)
@pytest.mark.parametrize("make", EXECUTORS)
def test_a_work_dir_holding_keys_by_name_is_refused(make: Make, name: str, tmp_path: Path) -> None:
    """Whether or not parley read it: code would."""
    folder = project(tmp_path)
    (folder / name).write_text(SECRET)
    error = refused(make, folder, f"({name})")
    assert SECRET not in str(error)


def test_a_config_list_read_later_stops_the_next_call(tmp_path: Path) -> None:
    work_dir = tmp_path / "work"
    executor = LocalCommandLineCodeExecutor(work_dir=work_dir)
    assert (
        executor.execute_code_blocks([CodeBlock(language="python", code="print(1)")]).exit_code == 0
    )
    (work_dir / "models.json").write_text(json.dumps([{"model": "m", "api_key": SECRET}]))
    config_list_from_json(str(work_dir / "models.json"), file_location=None)
    with pytest.raises(UnsafeWorkDirError, match="a config list parley loaded"):
        executor.execute_code_blocks([CodeBlock(language="python", code="print(1)")])


@pytest.mark.parametrize("make", EXECUTORS)
def test_a_sqlite_runtime_log_is_protected(make: Make, tmp_path: Path) -> None:
    folder = project(tmp_path)
    runtime_logging.start(config={"dbname": str(folder / "run.sqlite")})
    try:
        refused(make, folder, "a runtime log (SqliteLogger)")
    finally:
        runtime_logging.stop()


def test_a_file_runtime_log_is_protected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runtime_logging.start(logger_type="file", config={"filename": "run.jsonl"})
    try:
        refused(local, tmp_path / "autogen_logs", "a runtime log (FileLogger)")
    finally:
        runtime_logging.stop()


# -- the bubblewrap sandbox hides pip's configuration and protected files ---------------------

READ = """
import sys
for path in sys.argv[1:] or {paths!r}:
    try:
        with open(path) as f:
            print(path, "->", repr(f.read()))
    except OSError as error:
        print(path, "->", type(error).__name__)
"""


@pytest.mark.bwrap
def test_pip_configuration_and_protected_files_are_hidden_in_the_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = create_virtual_env(str(tmp_path / "venv"), with_pip=False)
    root = Path(venv.env_dir)
    index = f"[global]\nindex-url = https://user:{SECRET}@index.example/simple\n"
    site_conf = root / "pip.conf"  # the venv's own: pip reads <sys.prefix>/pip.conf
    site_conf.write_text(index)
    extra = root / "etc" / "extra-pip.conf"  # $PIP_CONFIG_FILE
    extra.parent.mkdir()
    extra.write_text(index)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(extra))
    xdg = root / "xdg" / "pip" / "pip.conf"  # a folder of $XDG_CONFIG_DIRS
    xdg.parent.mkdir(parents=True)
    xdg.write_text(index)
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(root / "xdg"))
    models = root / "models.json"  # a config list parley read, in a folder the sandbox shows
    models.write_text(json.dumps([{"model": "m", "api_key": SECRET}]))
    config_list_from_json(str(models), file_location=None)
    visible = root / "pyvenv.cfg"  # the rest of the venv is still there

    paths = [str(p) for p in (site_conf, extra, xdg, models, visible)]
    with LocalCommandLineCodeExecutor(
        work_dir=tmp_path / "work", sandbox=True, virtual_env_context=venv, timeout=30
    ) as executor:
        result = executor.execute_code_blocks(
            [CodeBlock(language="python", code=READ.format(paths=paths))]
        )
    assert result.exit_code == 0, result.output
    assert SECRET not in result.output
    lines = dict(line.split(" -> ") for line in result.output.splitlines())
    for path in paths[:4]:
        assert lines[path] in ("''", "FileNotFoundError", "PermissionError"), (path, lines[path])
    assert "home = " in lines[str(visible)]


def test_a_docker_jupyter_servers_work_dir_is_checked_too(tmp_path: Path) -> None:
    """Its work dir is mounted read-write for the kernels; it was not checked at all."""
    from parley.coding.jupyter import DockerJupyterServer

    folder = project(tmp_path)
    (folder / ".env").write_text(f"OPENAI_API_KEY={SECRET}\n")
    with pytest.raises(UnsafeWorkDirError, match=r"a \.env file \(\.env\)"):
        DockerJupyterServer(work_dir=folder)
