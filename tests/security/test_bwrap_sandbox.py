"""What the local executor's bubblewrap sandbox (``sandbox=True``) hides of the host, checked
on the real thing: parley and every other process, the user's files, parley's directory, other
projects, the host's network; what it costs to get it wrong (an error at construction, never an
unsandboxed run); and the agents' ways to ask for it.

The checks it shares with the Docker sandbox are in ``test_sandbox_isolation.py``; its
containment of a block's processes in ``test_local_containment.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

from parley import AssistantAgent, UserProxyAgent
from parley.code_utils import create_virtual_env, execute_code
from parley.coding import CodeBlock, LocalCommandLineCodeExecutor
from parley.coding._bwrap import BwrapSandbox
from parley.coding._process import ProcessResult, run_program
from parley.testing import FakeLLMServer
from tests.coding._bwrap_support import executor

pytestmark = pytest.mark.bwrap

REPO = Path(__file__).resolve().parents[2]
CHILD_TIMEOUT = 120  # seconds for a child Python process


def py(code: str) -> CodeBlock:
    return CodeBlock(language="python", code=code)


def shown_installations() -> set[str]:
    """Where the Python that runs the blocks is installed: what the sandbox must show."""
    base = os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))
    return {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, base}


def test_proc_holds_only_the_blocks_processes_and_parley_is_out_of_reach(tmp_path: Path) -> None:
    code = textwrap.dedent(
        f"""\
        import os, signal
        for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit()):
            with open(f"/proc/{{pid}}/cmdline", "rb") as cmdline:
                print("process", pid, cmdline.read().split(b"\\0")[0].decode())
        try:
            os.kill({os.getpid()}, signal.SIGKILL)
            print("kill: sent")
        except OSError as error:
            print("kill:", type(error).__name__)
        """
    )
    with executor(tmp_path) as ex:
        result = ex.execute_code_blocks([py(code)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    programs = {line.split()[2] for line in lines if line.startswith("process ")}
    # bubblewrap's init (PID 1) and the block's python: nothing of the host, not even parley.
    assert {os.path.basename(p) for p in programs} <= {"bwrap", os.path.basename(sys.executable)}
    assert sys.executable in programs
    assert lines[-1] in ("kill: ProcessLookupError", "kill: PermissionError")


@pytest.fixture
def secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A home with the usual secrets, parley's current directory (a project holding the work
    dir) with its own, and another project; parley's HOME and current directory point there,
    and its environment holds an API key."""
    home, project, other = tmp_path / "home", tmp_path / "project", tmp_path / "other-project"
    files = {
        "ssh key": home / ".ssh" / "id_ed25519",
        "config": home / ".config" / "tool" / "token",
        "config list": home / "OAI_CONFIG_LIST",
        "project env": project / ".env",
        "other project": other / "notes.txt",
    }
    for name, path in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"secret {name}")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-in-parleys-environment")
    monkeypatch.chdir(project)
    return files


def test_the_users_files_parleys_directory_and_other_projects_are_out_of_sight(
    secrets: dict[str, Path],
) -> None:
    work_dir = Path.cwd() / "coding"  # the default work dir, in parley's current directory
    shown = sorted({*shown_installations(), str(work_dir.resolve())})
    code = textwrap.dedent(
        f"""\
        import json, os
        for name, path in {json.dumps({k: str(v) for k, v in secrets.items()})}.items():
            try:
                print(name, "read:", open(path).read())
            except OSError as error:
                print(name, type(error).__name__)
        print("project holds", os.listdir({str(Path.cwd())!r}))
        print("repo holds", sorted(os.listdir({str(REPO)!r})) if os.path.exists({str(REPO)!r}) else [])
        try:
            print("shadow", repr(open("/etc/shadow").read()))  # covered by an empty file
        except OSError as error:
            print("shadow", type(error).__name__)
        print("env", sorted(k for k in os.environ if "KEY" in k), os.environ["HOME"])
        seen = []
        for top in ("/root", "/home", "/work", "/srv", "/mnt", "/opt", "/var", "/run", "/sys"):
            for root, dirs, files in os.walk(top):
                if root in {json.dumps(shown)}:
                    dirs[:] = []
                    continue
                seen += [os.path.join(root, name) for name in dirs + files]
        print("seen", json.dumps(seen))
        """
    )
    with executor(work_dir) as ex:
        result = ex.execute_code_blocks([py(code)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for name in secrets:
        assert f"{name} FileNotFoundError" in lines, result.output
    assert "project holds ['coding']" in lines
    # Only the way to a Python installation shown read-only (CI's venv lives in the repository).
    venvs = sorted(
        {Path(p).relative_to(REPO).parts[0] for p in shown if Path(p).is_relative_to(REPO)}
        - {"coding"}
    )
    assert f"repo holds {venvs}" in lines, result.output
    assert "shadow ''" in lines or "shadow PermissionError" in lines
    assert "env [] /tmp" in lines
    # Outside the system's folders, only the way to what the sandbox shows is there.
    ways = {str(parent) for path in shown for parent in Path(path).parents} | set(shown)
    [seen] = [json.loads(line[5:]) for line in lines if line.startswith("seen ")]
    assert set(seen) <= ways, sorted(set(seen) - ways)


def test_only_the_system_python_and_the_work_dir_are_mounted_from_the_host(
    tmp_path: Path,
) -> None:
    with executor(tmp_path) as ex:
        result = ex.execute_code_blocks([py("print(open('/proc/self/mountinfo').read())")])
    mounts = {line.split()[4] for line in result.output.splitlines() if line.strip()}
    # /etc's secret files are covered by empty ones, inside the read-only /etc.
    system = {m for m in mounts if m.startswith(("/dev", "/proc", "/etc/"))}
    tops = {top for top in ("/bin", "/sbin", "/lib", "/lib64") if not os.path.islink(top)}
    expected = {"/", "/usr", "/etc", "/tmp", str(tmp_path.resolve()), *tops}
    assert mounts - system - expected <= shown_installations(), sorted(mounts - system)


def test_a_big_allocation_fails_in_the_block_and_the_executor_goes_on(tmp_path: Path) -> None:
    with executor(tmp_path) as ex:
        hog = ex.execute_code_blocks([py("print('allocating', flush=True)\nx = b'x' * 1024**3")])
        after = ex.execute_code_blocks([py("print('fine')")])
    assert hog.exit_code == 1
    assert hog.output.startswith("MemoryError") or "\nMemoryError" in hog.output, hog.output
    assert "allocating" in hog.output
    assert (after.exit_code, after.output) == (0, "fine\n")


def test_a_virtualenv_runs_in_the_sandbox(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    context = create_virtual_env(str(env_dir), with_pip=False)
    work_dir = tmp_path / "work"
    code = "import os, sys\nprint(sys.prefix == os.environ['VIRTUAL_ENV'], sys.prefix)"
    with executor(work_dir, virtual_env_context=context) as ex:
        result = ex.execute_code_blocks([py(code)])
    assert (result.exit_code, result.output) == (0, f"True {env_dir}\n")


def test_a_folder_shown_later_is_there_read_only_while_it_exists(tmp_path: Path) -> None:
    # What an executor does with the folder it installs packages into for the code: made by
    # mkdtemp (only its creator may enter it), shown, later removed and made again elsewhere.
    work = tmp_path / "work"
    work.mkdir()
    sandbox = BwrapSandbox(work, fresh=True)

    def look(folder: str) -> ProcessResult:
        command = ["sh", "-c", f"cat {folder}/extra.py && touch {folder}/new"]
        return run_program(command, cwd=work, timeout=20, env=None, sandbox=sandbox)

    packages = tempfile.mkdtemp(dir=tmp_path)
    Path(packages, "extra.py").write_text("VALUE = 42\n")
    before = look(packages)
    sandbox.show(packages)
    shown = look(packages)
    shutil.rmtree(packages)
    again = tempfile.mkdtemp(dir=tmp_path)
    Path(again, "extra.py").write_text("VALUE = 43\n")
    sandbox.show(again)
    after = look(again)
    assert "No such file or directory" in before.stderr
    assert shown.stdout == "VALUE = 42\n"
    assert "Read-only file system" in shown.stderr
    assert not Path(packages, "new").exists()
    assert after.stdout == "VALUE = 43\n", after.stderr  # the removed folder is no obstacle


def test_the_legacy_execute_code_runs_in_the_sandbox(tmp_path: Path, host_server: int) -> None:
    code = textwrap.dedent(
        f"""\
        import socket
        try:
            socket.create_connection(("127.0.0.1", {host_server}), timeout=5)
        except OSError as error:
            print(type(error).__name__, len([p for p in __import__("os").listdir("/proc")
                                             if p.isdigit()]) <= 3)
        """
    )
    exit_code, logs, image = execute_code(code, work_dir=str(tmp_path), sandbox=True)
    assert (exit_code, logs, image) == (0, "ConnectionRefusedError True\n", None)
    with pytest.raises(ValueError, match="choose one"):
        execute_code("print(1)", work_dir=str(tmp_path), use_docker=True, sandbox=True)


# -- agents ---------------------------------------------------------------------------------------

TRESPASS = """\
```python
import socket
try:
    print("secret:", open({secret!r}).read())
except OSError as error:
    print("secret:", type(error).__name__)
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
    print("network: connected")
except OSError as error:
    print("network:", type(error).__name__)
```"""


def code_execution_config(form: str, work_dir: Path) -> dict[str, Any]:
    if form == "executor":
        return {"executor": LocalCommandLineCodeExecutor(work_dir=work_dir, sandbox=True)}
    if form == "factory":
        local = {"work_dir": work_dir, "sandbox": True}
        return {"executor": "commandline-local", "commandline-local": local}
    return {"use_docker": False, "sandbox": True, "work_dir": str(work_dir)}


@pytest.mark.parametrize("form", ["executor", "factory", "legacy"])
def test_an_assistants_code_reads_no_secret_and_reaches_no_server(
    fake_llm: FakeLLMServer, tmp_path: Path, host_server: int, form: str
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the password")
    fake_llm.add_reply(TRESPASS.format(secret=str(secret), port=host_server))
    fake_llm.add_reply("TERMINATE")
    assistant = AssistantAgent("assistant", llm_config={"config_list": fake_llm.config_list()})
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config=code_execution_config(form, tmp_path / "coding"),
    )
    result = user.initiate_chat(assistant, message="look around", max_turns=2, silent=True)
    reply = result.chat_history[2]["content"]
    assert reply.startswith("exitcode: 0 (execution succeeded)"), reply
    assert "secret: FileNotFoundError" in reply
    assert "network: ConnectionRefusedError" in reply
    assert "the password" not in reply


def test_the_sandbox_with_docker_or_an_executor_is_refused_at_construction(
    tmp_path: Path,
) -> None:
    with pytest.raises(ValueError, match="choose one"):
        UserProxyAgent(
            "user", code_execution_config={"use_docker": True, "sandbox": True, "work_dir": "w"}
        )
    with pytest.raises(ValueError, match=r"LocalCommandLineCodeExecutor\(sandbox=True\)"):
        UserProxyAgent(
            "user",
            code_execution_config={
                "executor": LocalCommandLineCodeExecutor(work_dir=tmp_path),
                "sandbox": True,
            },
        )


# -- where the sandbox cannot run ----------------------------------------------------------------

ATTEMPTS = """
import sys
from pathlib import Path
from parley import UserProxyAgent
from parley.code_utils import execute_code
from parley.coding import LocalCommandLineCodeExecutor
from parley.exceptions import SandboxUnavailableError

work = sys.argv[1]
legacy = {"use_docker": False, "sandbox": True, "work_dir": work}
attempts = {
    "executor": lambda: LocalCommandLineCodeExecutor(work_dir=work, sandbox=True),
    "agent": lambda: UserProxyAgent("user", code_execution_config=legacy),
    "execute_code": lambda: execute_code("open('ran', 'w')", work_dir=work, sandbox=True),
}
for name, attempt in attempts.items():
    try:
        attempt()
        print(name, "built")
    except SandboxUnavailableError as error:
        print(name, "refused:", error)
"""


def attempts_in(outer: list[str], work_dir: Path) -> list[str]:
    """The refusals of ATTEMPTS, run in the environment ``outer`` (a bwrap command line) makes."""
    done = subprocess.run(
        [*outer, sys.executable, "-c", ATTEMPTS, str(work_dir)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert not (work_dir / "ran").exists(), "code ran without the sandbox"
    return done.stdout.splitlines()


def test_without_bubblewrap_nothing_is_built(tmp_path: Path) -> None:
    # This machine as it is, but with no bwrap program (an empty, non-executable file instead).
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    lines = attempts_in([bwrap, "--dev-bind", "/", "/", "--ro-bind", "/dev/null", bwrap], tmp_path)
    assert len(lines) == 3, lines
    for line in lines:
        assert "refused: sandbox=True needs bwrap, which is not installed" in line
        assert "apt-get install bubblewrap" in line


def test_without_user_namespaces_nothing_is_built(tmp_path: Path) -> None:
    # This machine as it is, for a user who may not create user namespaces (as with
    # kernel.unprivileged_userns_clone=0, or Ubuntu's AppArmor restriction).
    uid = "1000" if os.geteuid() == 0 else str(os.geteuid())
    outer = ["bwrap", "--unshare-user", "--disable-userns", "--uid", uid, "--gid", uid]
    lines = attempts_in([*outer, "--dev-bind", "/", "/"], tmp_path)
    assert len(lines) == 3, lines
    for line in lines:
        assert "refused: bubblewrap cannot build the sandbox on this machine" in line
        assert "unprivileged_userns_clone" in line
        assert "never runs the code without the sandbox" in line


WARNINGS = """
import sys, warnings
warnings.simplefilter("default")
from parley.code_utils import execute_code
from parley.coding import CodeBlock, LocalCommandLineCodeExecutor

block = [CodeBlock(language="python", code="print('ran')")]
LocalCommandLineCodeExecutor(work_dir=sys.argv[1], sandbox=True).execute_code_blocks(block)
execute_code("print('ran')", work_dir=sys.argv[1], sandbox=True)
print("-- sandboxed runs done", file=sys.stderr, flush=True)
LocalCommandLineCodeExecutor(work_dir=sys.argv[1]).execute_code_blocks(block)
"""


def test_sandboxed_runs_do_not_warn_that_code_runs_unsandboxed(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WARNINGS, str(tmp_path)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        check=True,
    )
    sandboxed, _, on_the_host = done.stderr.partition("-- sandboxed runs done")
    assert "UnsandboxedExecutionWarning" not in sandboxed, sandboxed
    assert on_the_host.count("UnsandboxedExecutionWarning") == 1, done.stderr
