"""``parley.code_utils``: constants, extract_code, infer_lang, execute_code, Docker decisions."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

import parley.code_utils as cu
from parley.code_utils import (
    UNKNOWN,
    check_can_use_docker_or_throw,
    content_str,
    create_virtual_env,
    decide_use_docker,
    execute_code,
    extract_code,
    in_docker_container,
    infer_lang,
    is_docker_running,
    timeout_handler,
)
from parley.coding._work_dir import DEFAULT_WORK_DIR

UNREACHABLE_DOCKER = "unix:///nonexistent/docker.sock"


def test_constants() -> None:
    assert cu.UNKNOWN == "unknown"
    assert cu.TIMEOUT_MSG == "Timeout"
    assert cu.DEFAULT_TIMEOUT == 600
    assert cu.WIN32 is (sys.platform == "win32")
    assert ("\\" if cu.WIN32 else "/") == cu.PATH_SEPARATOR
    assert cu.PYTHON_VARIANTS == ["python", "Python", "py"]
    assert cu.DEFAULT_MODEL == "gpt-4"
    assert cu.FAST_MODEL == "gpt-3.5-turbo"
    assert cu.SENTINEL is not None
    # A dedicated folder in the current directory, not AutoGen's folder inside the package.
    assert cu.WORKING_DIR == "coding" == DEFAULT_WORK_DIR
    assert isinstance(cu.CODE_BLOCK_PATTERN, str)
    assert set(cu.__all__) <= set(dir(cu))


def test_content_str() -> None:
    assert content_str(None) == ""
    assert content_str("x") == "x"
    parts = [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "u"}}]
    assert content_str(parts) == "a<image>"
    with pytest.raises(TypeError):
        content_str(42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("content", "error", "text"),
    [
        # AutoGen 0.2's error types and texts, which 0.2 code matches on.
        (
            [{"type": "text", "text": "hi"}, {"type": "wrong_type", "url": "u"}],
            ValueError,
            "Wrong content format: unknown type wrong_type within the content",
        ),
        (
            ["string", {"type": "text", "text": "t"}],
            TypeError,
            "Wrong content format: every element should be dict if the content is a list.",
        ),
        (
            [{"text": "no type"}],
            AssertionError,
            "Wrong content format. Missing 'type' key in content's dict.",
        ),
        (42, TypeError, "content must be None, str, or list, but got <class 'int'>"),
    ],
)
def test_content_str_errors_are_autogens(content: object, error: type, text: str) -> None:
    with pytest.raises(error) as info:
        content_str(content)  # type: ignore[arg-type]
    assert str(info.value) == text
    assert content_str([]) == ""


def _fake_shell(folder: Path, name: str, *, runs: bool = True, executable: bool = True) -> None:
    script = folder / name
    script.write_text("#!/bin/sh\necho 7\n" if runs else "#!/bin/sh\nexit 1\n")
    script.chmod(0o755 if executable else 0o644)


@pytest.mark.skipif(sys.platform == "win32", reason="shell scripts stand in for PowerShell")
def test_get_powershell_command_finds_what_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError):
        cu.get_powershell_command()  # neither installed
    _fake_shell(tmp_path, "pwsh")
    assert cu.get_powershell_command() == "pwsh"
    _fake_shell(tmp_path, "powershell")
    assert cu.get_powershell_command() == "powershell"  # preferred, as in AutoGen
    _fake_shell(tmp_path, "powershell", runs=False)
    assert cu.get_powershell_command() == "pwsh"  # one that fails to run is passed over


@pytest.mark.skipif(sys.platform == "win32", reason="shell scripts stand in for PowerShell")
def test_get_powershell_command_without_permission(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    # A file without any execute bit cannot be run, even by root.
    _fake_shell(tmp_path, "powershell", executable=False)
    with pytest.raises(PermissionError, match="No permission to run powershell"):
        cu.get_powershell_command()


# -- extract_code: the cases checked against AutoGen 0.2 ------------------------------------------


def test_extract_code_without_code_returns_the_text_as_unknown() -> None:
    assert extract_code("no code here") == [("unknown", "no code here")]


def test_extract_code_several_blocks() -> None:
    text = "a\n```python\nprint(1)\n```\nb\n```\nls -l\n```\n```sh\necho hi\n```\n"
    assert extract_code(text) == [("python", "print(1)"), ("", "ls -l"), ("sh", "echo hi")]


def test_extract_code_needs_the_closing_fence_on_its_own_line() -> None:
    text = "```python\nprint(1)```"
    assert extract_code(text) == [("unknown", text)]


def test_extract_code_tolerates_spaces_indentation_and_crlf() -> None:
    assert extract_code("  ```python  \n  print(1)\n  ```") == [("python", "  print(1)")]
    assert extract_code("``` python\nprint(1)\n```") == [("python", "print(1)")]
    assert extract_code("```python\r\nx = 1\r\ny = 2\r\n```\r\n") == [("python", "x = 1\r\ny = 2")]


def test_extract_code_multiline_block() -> None:
    assert extract_code("```python\nfor i in range(2):\n    print(i)\n```") == [
        ("python", "for i in range(2):\n    print(i)")
    ]


def test_extract_code_single_line_mode() -> None:
    text = "Run `pip install x` then\n```bash\nls\n```"
    assert extract_code(text, detect_single_line_code=True) == [
        ("", "pip install x"),
        ("bash", "ls"),
    ]
    assert extract_code("nothing", detect_single_line_code=True) == []
    # parley also finds multi-line fenced blocks in this mode.
    text = "```python\na = 1\nb = 2\n```"
    assert extract_code(text, detect_single_line_code=True) == [("python", "a = 1\nb = 2")]


def test_extract_code_accepts_list_content_and_custom_pattern() -> None:
    content = [{"type": "text", "text": "```sh\necho 1\n```"}]
    assert extract_code(content) == [("sh", "echo 1")]
    assert extract_code("<<py|x=1>>", pattern=r"<<(\w+)\|(.*?)>>") == [("py", "x=1")]


def test_infer_lang() -> None:
    assert infer_lang("python foo.py") == "sh"
    assert infer_lang("pip install numpy") == "sh"
    assert infer_lang("python3 -m http.server") == "sh"
    assert infer_lang("print(1)") == "python"
    assert infer_lang("foo bar baz") == UNKNOWN
    assert infer_lang("x = '\\0'") == "python"
    assert infer_lang("\0") == UNKNOWN  # compile() raises ValueError, not SyntaxError


# -- execute_code, local -----------------------------------------------------------------------


def test_execute_code_prints(tmp_path: Path) -> None:
    assert execute_code("print('hi')", work_dir=str(tmp_path), use_docker=False) == (
        0,
        "hi\n",
        None,
    )
    assert list(tmp_path.iterdir()) == []  # the generated file is removed


def test_execute_code_failure_keeps_stdout_and_stderr(tmp_path: Path) -> None:
    code = "import sys\nprint('before')\nsys.stderr.write('oops\\n')\nsys.exit(3)"
    exit_code, logs, image = execute_code(code, work_dir=str(tmp_path), use_docker=False)
    assert (exit_code, image) == (3, None)
    assert logs == "before\noops\n"  # AutoGen dropped "before"


def test_execute_code_traceback_hides_the_temporary_file(tmp_path: Path) -> None:
    exit_code, logs, _ = execute_code(
        "raise ValueError('bad')", work_dir=str(tmp_path), use_docker=False
    )
    assert exit_code == 1
    assert "ValueError: bad" in logs
    assert "tmp_code_" not in logs
    assert str(tmp_path) not in logs


def test_execute_code_shell(tmp_path: Path) -> None:
    exit_code, logs, _ = execute_code(
        "echo hi; ls nonexist", lang="sh", work_dir=str(tmp_path), use_docker=False
    )
    assert exit_code == 2
    assert logs.startswith("hi\n")
    assert "nonexist" in logs
    assert execute_code("echo $((1+2))", lang="bash", work_dir=str(tmp_path), use_docker=False) == (
        0,
        "3\n",
        None,
    )


def test_execute_code_named_file_is_kept_in_a_subdirectory(tmp_path: Path) -> None:
    result = execute_code(
        "print(__file__.endswith('a.py'))",
        filename="sub/a.py",
        work_dir=str(tmp_path),
        use_docker=False,
    )
    assert result == (0, "True\n", None)
    assert (tmp_path / "sub" / "a.py").read_text() == "print(__file__.endswith('a.py'))"


def test_execute_code_runs_an_existing_file(tmp_path: Path) -> None:
    (tmp_path / "given.py").write_text("print('from file')")
    assert execute_code(filename="given.py", work_dir=str(tmp_path), use_docker=False) == (
        0,
        "from file\n",
        None,
    )
    assert (tmp_path / "given.py").exists()


def test_execute_code_named_file_error_hides_the_work_dir(tmp_path: Path) -> None:
    exit_code, logs, _ = execute_code(
        "raise KeyError(1)", filename="b.py", work_dir=str(tmp_path), use_docker=False
    )
    assert exit_code == 1
    assert "KeyError" in logs
    assert str(tmp_path) + "/" not in logs


def test_execute_code_python_variants_use_this_interpreter(tmp_path: Path) -> None:
    for lang in ("python", "Python", "py", "python3"):
        assert execute_code(
            "import sys; print(sys.executable)", lang=lang, work_dir=str(tmp_path), use_docker=False
        ) == (0, sys.executable + "\n", None)


def test_execute_code_needs_code_or_filename() -> None:
    with pytest.raises(AssertionError):
        execute_code(None, use_docker=False)


def test_execute_code_unknown_language_raises(tmp_path: Path) -> None:
    with pytest.raises(NotImplementedError, match="ruby not recognized"):
        execute_code("puts 1", lang="ruby", work_dir=str(tmp_path), use_docker=False)
    assert list(tmp_path.iterdir()) == []


def test_execute_code_timeout_kills_at_the_deadline_and_keeps_output(tmp_path: Path) -> None:
    code = "import time\nprint('started')\ntime.sleep(120)"
    start = time.monotonic()
    result = execute_code(code, timeout=1, work_dir=str(tmp_path), use_docker=False)
    assert time.monotonic() - start < 60  # AutoGen waited the block's full 120 s
    assert result == (1, "started\nTimeout", None)


def test_execute_code_timeout_without_output_is_just_timeout(tmp_path: Path) -> None:
    result = execute_code(
        "import time; time.sleep(30)", timeout=1, work_dir=str(tmp_path), use_docker=False
    )
    assert result == (1, "Timeout", None)


def test_execute_code_refuses_a_file_outside_the_work_dir(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    result = execute_code("print(1)", filename="../out.py", work_dir=str(work), use_docker=False)
    assert result == (1, "Filename is not in the workspace", None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]


def test_execute_code_missing_interpreter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # a real empty PATH: nothing found
    exit_code, logs, _ = execute_code("echo", lang="bash", work_dir=str(tmp_path), use_docker=False)
    assert exit_code == 127
    assert "bash" in logs
    assert "not found" in logs


def test_execute_code_docker_unreachable_never_runs_on_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", UNREACHABLE_DOCKER)
    monkeypatch.delenv("AUTOGEN_USE_DOCKER", raising=False)
    monkeypatch.delenv("PARLEY_USE_DOCKER", raising=False)
    marker = tmp_path / "host.txt"
    code = f"open({str(marker)!r}, 'w').write('x')"
    for use_docker in (True, "python:3-slim", ["python:3-slim"], cu.SENTINEL):
        with pytest.raises(RuntimeError, match="use_docker"):
            execute_code(code, work_dir=str(tmp_path), use_docker=use_docker)
    assert not marker.exists()


# -- Docker decisions ---------------------------------------------------------------------------


@pytest.fixture
def no_docker_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("AUTOGEN_USE_DOCKER", raising=False)
    monkeypatch.delenv("PARLEY_USE_DOCKER", raising=False)
    return monkeypatch


def test_decide_use_docker_defaults_to_true(no_docker_env: pytest.MonkeyPatch) -> None:
    assert decide_use_docker(None) is True
    assert decide_use_docker(False) is False
    assert decide_use_docker(True) is True


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1", True), ("True", True), ("yes", True), ("t", True), ("0", False), ("FALSE", False),
     ("no", False), ("f", False), ("None", None)],
)  # fmt: skip
def test_decide_use_docker_reads_autogen_env(
    no_docker_env: pytest.MonkeyPatch, value: str, expected: bool | None
) -> None:
    no_docker_env.setenv("AUTOGEN_USE_DOCKER", value)
    assert decide_use_docker(None) is expected


def test_decide_use_docker_parley_env_wins(no_docker_env: pytest.MonkeyPatch) -> None:
    no_docker_env.setenv("PARLEY_USE_DOCKER", "false")
    assert decide_use_docker(None) is False
    no_docker_env.setenv("AUTOGEN_USE_DOCKER", "true")
    assert decide_use_docker(None) is False
    no_docker_env.setenv("PARLEY_USE_DOCKER", "1")
    no_docker_env.setenv("AUTOGEN_USE_DOCKER", "0")
    assert decide_use_docker(None) is True


def test_decide_use_docker_rejects_other_values(no_docker_env: pytest.MonkeyPatch) -> None:
    no_docker_env.setenv("AUTOGEN_USE_DOCKER", "maybe")
    with pytest.raises(ValueError, match="AUTOGEN_USE_DOCKER"):
        decide_use_docker(None)
    no_docker_env.setenv("PARLEY_USE_DOCKER", "perhaps")
    with pytest.raises(ValueError, match="PARLEY_USE_DOCKER"):
        decide_use_docker(None)


def test_check_can_use_docker_or_throw(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", UNREACHABLE_DOCKER)
    assert is_docker_running() is False
    check_can_use_docker_or_throw(False)
    check_can_use_docker_or_throw(None)
    with pytest.raises(RuntimeError) as info:
        check_can_use_docker_or_throw(True)
    message = str(info.value)
    assert "not reachable" in message
    assert "Start Docker" in message
    assert '"use_docker": False' in message
    assert "AUTOGEN_USE_DOCKER=False" in message


def test_in_docker_container_matches_dockerenv() -> None:
    assert in_docker_container() is os.path.exists("/.dockerenv")


def test_timeout_handler() -> None:
    with pytest.raises(TimeoutError, match="Timed out!"):
        timeout_handler(14, None)


def test_create_virtual_env(tmp_path: Path) -> None:
    context = create_virtual_env(str(tmp_path / "venv"), with_pip=False)
    assert Path(context.env_exe).exists()
    assert Path(context.bin_path).is_dir()


@pytest.mark.docker
def test_execute_code_with_docker_runs_in_the_sandbox(tmp_path: Path) -> None:
    from tests.coding._docker_support import ensure_sandbox_image

    image = ensure_sandbox_image()
    exit_code, logs, used = execute_code(
        "import os; print(os.path.exists('/.dockerenv'))", work_dir=str(tmp_path), use_docker=image
    )
    assert (exit_code, logs) == (0, "True\n")
    assert used
    refused = execute_code("print(1)", filename="../x.py", work_dir=str(tmp_path), use_docker=image)
    assert refused == (1, "Filename is not in the workspace", None)


# -- get_powershell_command: AutoGen's probe and errors --------------------------------------------


def _ran(returncode: int) -> object:
    from types import SimpleNamespace

    return SimpleNamespace(returncode=returncode, stdout="7\n", stderr="")


def test_powershell_is_asked_first_then_pwsh() -> None:
    from unittest import mock

    with mock.patch("subprocess.run", return_value=_ran(0)) as run:
        assert cu.get_powershell_command() == "powershell"
    assert run.call_args.args[0][0] == "powershell"
    with mock.patch("subprocess.run", side_effect=[FileNotFoundError, _ran(0)]) as run:
        assert cu.get_powershell_command() == "pwsh"
    assert [c.args[0][0] for c in run.call_args_list] == ["powershell", "pwsh"]
    with mock.patch("subprocess.run", side_effect=[NotADirectoryError, _ran(0)]):
        assert cu.get_powershell_command() == "pwsh"


def test_powershell_absent_is_a_file_not_found_error() -> None:
    from unittest import mock

    absent = [FileNotFoundError, FileNotFoundError]
    with (
        mock.patch("subprocess.run", side_effect=absent),
        pytest.raises(
            FileNotFoundError, match=r"^Neither powershell\.exe nor pwsh\.exe is present"
        ),
    ):
        cu.get_powershell_command()
    bad_path = [FileNotFoundError, NotADirectoryError]
    with (
        mock.patch("subprocess.run", side_effect=bad_path),
        pytest.raises(NotADirectoryError, match="PowerShell is either not installed"),
    ):
        cu.get_powershell_command()


def test_powershell_without_permission_is_a_permission_error() -> None:
    from unittest import mock

    with (
        mock.patch("subprocess.run", side_effect=[PermissionError, FileNotFoundError]),
        pytest.raises(PermissionError, match=r"^No permission to run powershell\.$"),
    ):
        cu.get_powershell_command()


def test_powershell_that_fails_to_run_is_a_runtime_error() -> None:
    from unittest import mock

    with (
        mock.patch("subprocess.run", side_effect=[_ran(1), _ran(1)]),
        pytest.raises(RuntimeError, match="PowerShell is installed but did not run"),
    ):
        cu.get_powershell_command()


@pytest.mark.skipif(sys.platform == "win32", reason="checks a machine without PowerShell")
def test_powershell_absent_for_real() -> None:
    import shutil

    if shutil.which("powershell") or shutil.which("pwsh"):
        pytest.skip("PowerShell is installed here")
    with pytest.raises(FileNotFoundError, match="Please install PowerShell"):
        cu.get_powershell_command()
