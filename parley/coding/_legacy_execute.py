"""AutoGen's legacy code runner, ``execute_code``, and the Docker decision it makes
(``decide_use_docker``, ``check_can_use_docker_or_throw``, ``is_docker_running``, and
``check_sandbox_config`` for the local sandbox, ``sandbox=True``); the public
face is ``parley.code_utils``, which documents how they differ from AutoGen.

They live here, below ``code_utils``, because ``code_utils`` also re-exports the legacy LLM
helpers (``parley._llm_code_helpers``), which run code with ``execute_code``: with the runner
inside ``code_utils`` the two modules would import each other. Importing this module is cheap:
the process runner, the Docker executor and the ``docker`` package load on first use.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ._blocks import (
    DEFAULT_WORK_DIR,
    POWERSHELLS,
    PYTHON_VARIANTS,
    SHELLS,
    WIN32,
    legacy_timeout_logs,
)

if TYPE_CHECKING:
    from ._bwrap import BwrapSandbox

__all__ = [
    "DEFAULT_TIMEOUT",
    "PATH_SEPARATOR",
    "SENTINEL",
    "WORKING_DIR",
    "check_can_use_docker_or_throw",
    "check_sandbox_config",
    "decide_use_docker",
    "execute_code",
    "is_docker_running",
]

# The logger of the public module, where AutoGen's messages came from.
logger = logging.getLogger("parley.code_utils")

SENTINEL = object()
# AutoGen's was a folder inside its installed package, where code could rewrite the package.
WORKING_DIR = DEFAULT_WORK_DIR


def _default_work_dir() -> str:
    """``parley.code_utils.WORKING_DIR``, read when code runs: AutoGen users set that module
    global to move the default work dir, and code_utils is where they set it."""
    face = sys.modules.get("parley.code_utils")
    return str(getattr(face, "WORKING_DIR", WORKING_DIR))


DEFAULT_TIMEOUT = 600
PATH_SEPARATOR = "\\" if WIN32 else "/"

_TRUE = ("1", "true", "yes", "t")
_FALSE = ("0", "false", "no", "f")
_DOCKER_PING_TIMEOUT = 10  # seconds; an unreachable TCP DOCKER_HOST must not hang an agent

_sandboxes_lock = threading.Lock()
_sandboxes: dict[tuple[str, int, int], BwrapSandbox] = {}  # by work dir, device and inode


def execute_code(
    code: str | None = None,
    timeout: float | None = None,
    filename: str | None = None,
    work_dir: str | None = None,
    use_docker: list[str] | str | bool | object = SENTINEL,
    lang: str | None = "python",
    *,
    sandbox: bool = False,
) -> tuple[int, str, str | None]:
    """Run ``code`` (or the file ``filename`` in ``work_dir``); ``(exit_code, logs, image)``.

    ``image`` is ``None`` for local runs and the image used for Docker runs. ``sandbox=True``
    (parley only) runs the code on this machine under bubblewrap, as
    ``LocalCommandLineCodeExecutor(sandbox=True)`` does; ``use_docker`` must then be false or
    not given. See the docstring of ``parley.code_utils`` for how this differs from AutoGen.
    """
    if code is None and filename is None:
        message = f"Either code={code!r} or filename={filename!r} must be provided."
        logger.error(message)
        raise AssertionError(message)
    if sandbox:
        check_sandbox_config(use_docker)
        use_docker = False
    # SENTINEL (not given) is the only non-AutoGen value; the cast drops it from the type.
    docker = cast(
        "list[str] | str | bool | None",
        decide_use_docker(None) if use_docker is SENTINEL else use_docker,
    )
    check_can_use_docker_or_throw(docker)
    timeout = timeout or DEFAULT_TIMEOUT
    lang = lang or "python"
    if WIN32 and lang in ("sh", "shell") and not docker:
        lang = "ps1"
    is_python = lang in PYTHON_VARIANTS or lang.startswith("python")
    # Imported here: importing this module (and code_utils) must not load the runners.
    from ._paths import OutsideWorkDirError, default_filename, resolve_in_work_dir
    from ._work_dir import check_work_dir

    generated = filename is None
    if filename is None:
        filename = default_filename(code or "", "py" if is_python else lang)
    work_dir = _default_work_dir() if work_dir is None else work_dir
    check_work_dir(work_dir)
    # An unknown language raises NotImplementedError before anything is looked at or written.
    program = None if docker else sys.executable if is_python else _interpreter(lang)
    try:
        path = resolve_in_work_dir(work_dir, filename)
    except OutsideWorkDirError:
        return 1, "Filename is not in the workspace", None
    if program is None:
        from ._code_file import read_regular_file
        from .docker_commandline_code_executor import run_code_in_docker

        try:
            source = code if code is not None else read_regular_file(path)
        except OSError as error:  # a FIFO or link left at the name: never waited on
            return 1, f"could not read the code file: {error}", None
        return run_code_in_docker(
            code=source,
            lang=lang,
            filename=filename,
            work_dir=work_dir,
            timeout=float(timeout),
            image=cast("str | list[str] | bool", docker),
        )
    return _execute_locally(
        program, lang, code, path, Path(work_dir), float(timeout), generated, sandbox
    )


def _interpreter(lang: str) -> str:
    if lang in SHELLS:
        return "sh" if lang == "shell" else lang
    if lang == "javascript":
        return "node"
    if lang in POWERSHELLS:
        import shutil  # here: slow to import, and only PowerShell needs it

        return "powershell" if shutil.which("powershell") else "pwsh"
    raise NotImplementedError(f"{lang} not recognized in code execution")


def _execute_locally(
    program: str,
    lang: str,
    code: str | None,
    path: Path,
    work_dir: Path,
    timeout: float,
    generated: bool,
    sandboxed: bool,
) -> tuple[int, str, None]:
    """Run the file ``path`` (``code`` written there first, if given) with ``program``, under
    bubblewrap if ``sandboxed``."""
    from ._code_file import read_regular_file, write_regular_file
    from ._guard import dangerous_command
    from ._process import run_program

    try:
        source = code if code is not None else read_regular_file(path)
    except OSError as error:  # a FIFO or link left at the name: never waited on
        return 1, f"could not read the code file: {error}", None
    reason = dangerous_command(lang, source)
    if reason is not None:
        return 1, f"Potentially dangerous command detected: {reason}", None
    root = work_dir.resolve()
    sandbox = _sandbox(root) if sandboxed else None
    try:
        if sandbox is not None and code is not None:
            sandbox.save(path, code)  # owned by the code's user, as the folders it creates
        else:
            path.parent.mkdir(parents=True, exist_ok=True)  # creates WORKING_DIR on first use
            if code is not None:
                write_regular_file(path, code)
    except OSError as error:
        return 1, f"could not write the code file: {error}", None
    relative = str(path.relative_to(root))
    # AutoGen runs the file by its name relative to work_dir; "./" keeps "-x.py" from being
    # read as an option.
    argv = [program, f".{os.sep}{relative}" if relative.startswith("-") else relative]
    try:
        result = run_program(argv, cwd=root, timeout=timeout, env=None, sandbox=sandbox)
    finally:
        if generated:
            path.unlink(missing_ok=True)
    if not result.timed_out and result.exit_code == 0:
        return 0, result.stdout, None
    logs = result.stdout + result.stderr
    # As AutoGen: hide the temporary file's path, or the work dir prefix of a named file.
    if generated:
        logs = logs.replace(str(path), "").replace(relative, "")
    else:
        logs = logs.replace(str(root) + PATH_SEPARATOR, "")
    if result.timed_out:
        return 1, legacy_timeout_logs(logs), None
    return result.exit_code, logs, None


def _sandbox(root: Path) -> BwrapSandbox:
    """The bubblewrap sandbox of the work dir ``root``, which it creates if need be; one per
    work dir (a folder deleted and made again is a new one), as an executor has one."""
    from ._bwrap import BwrapSandbox
    from ._code_user import is_fresh

    with _sandboxes_lock:
        fresh = is_fresh(root)
        root.mkdir(parents=True, exist_ok=True)
        info = root.stat()
        key = (str(root), info.st_dev, info.st_ino)
        sandbox = _sandboxes.get(key)
        if sandbox is None:
            sandbox = _sandboxes[key] = BwrapSandbox(root, fresh=fresh)
        return sandbox


def decide_use_docker(use_docker: bool | None) -> bool | None:
    """``use_docker`` if given; else ``PARLEY_USE_DOCKER`` or ``AUTOGEN_USE_DOCKER`` (default on)."""
    if use_docker is not None:
        return use_docker
    name = "PARLEY_USE_DOCKER" if "PARLEY_USE_DOCKER" in os.environ else "AUTOGEN_USE_DOCKER"
    value = os.environ.get(name, "True").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if value == "none":
        return None
    raise ValueError(
        f"Invalid value {os.environ[name]!r} for {name}: use one of "
        f"{', '.join(_TRUE)} (Docker on), {', '.join(_FALSE)} (Docker off) or none."
    )


def check_sandbox_config(use_docker: Any) -> None:
    """Raise ``ValueError`` if ``use_docker`` asks for Docker along with ``sandbox=True``
    (``SENTINEL``, false or ``None`` are fine: the sandbox means no Docker), and
    :class:`~parley.exceptions.SandboxUnavailableError` if bubblewrap cannot run here."""
    if use_docker is not SENTINEL and use_docker:
        raise ValueError(
            "sandbox=True runs code on this machine under bubblewrap, and use_docker asks for "
            "Docker: choose one. Drop use_docker (or set it to False) to use the local sandbox, "
            "or drop sandbox to use Docker."
        )
    from ._bwrap import check_available

    check_available()


def check_can_use_docker_or_throw(use_docker: Any) -> None:
    """Raise ``RuntimeError`` if Docker is asked for (truthy) but its engine is not reachable."""
    if use_docker and not is_docker_running():
        raise RuntimeError(
            "Code execution is set to use Docker (use_docker is on, the default), but the Docker "
            'engine is not reachable. Start Docker, or pass "use_docker": False in '
            "code_execution_config to run code on this machine, or set the environment "
            "variable AUTOGEN_USE_DOCKER=False."
        )


def is_docker_running() -> bool:
    """Whether the Docker engine named by the environment (``DOCKER_HOST``...) answers a ping."""
    from .docker._engine import engine_answers

    return engine_answers(_DOCKER_PING_TIMEOUT)
