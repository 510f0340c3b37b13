"""AutoGen-compatible code helpers (``autogen.code_utils``).

Finding code in messages (:func:`extract_code`, :func:`infer_lang`), running it
(:func:`execute_code`) and deciding whether Docker is used. Data flows one way: the shared
vocabulary (the fence pattern, :func:`content_str`, :func:`infer_lang`, the constants) lives in
``parley.coding._blocks`` and is re-exported here, and the runners of ``parley.coding`` are
imported where code runs; nothing in ``parley.coding`` imports this module. Importing it is
cheap: the process runner, the Docker executor and the ``docker`` package load on first use.

Deliberate differences from AutoGen 0.2:

* On failure, ``execute_code`` returns stdout *and* stderr (AutoGen dropped stdout, hiding what
  was printed before a crash).
* The local timeout kills the program and every process it started at the deadline and keeps the
  output printed so far (AutoGen let the program run to completion, then said ``"Timeout"``).
  The logs end with ``"Timeout"`` and are exactly ``"Timeout"`` when nothing was printed.
* Local runs get a minimal environment (no API keys), stdin from ``/dev/null``, capped output,
  and each run's leftover background processes are killed (see ``parley.coding._process``).
* ``use_docker`` truthy always means a separate container: the run is delegated to the Docker
  executor and never falls back to the host. AutoGen silently ran code in the current process's
  environment when it detected it was itself inside a container (``/.dockerenv``); parley does
  not guess, and :func:`check_can_use_docker_or_throw` no longer skips the check there.
  ``use_docker=False`` runs code where parley runs.
* A ``filename`` leading outside ``work_dir`` is refused: ``(1, "Filename is not in the
  workspace", None)``, nothing is written.
* Python variants (``python``, ``Python``, ``py``, ``python3`` ...) all run with
  ``sys.executable``; a missing interpreter (``node``) gives exit code 127 and a message.
* ``WORKING_DIR`` (the default ``work_dir``) is ``"coding"``, a dedicated folder in the current
  directory, not AutoGen's ``extensions`` folder inside the installed package: code must never
  write into parley's sources. It is created when code first runs there, never at import. A
  ``work_dir`` holding a response cache, a virtualenv, parley's sources or a git repository is
  refused with ``UnsafeWorkDirError`` (``parley.coding._work_dir``).
* Shell blocks pass the dangerous-command guard of the executors (``rm -rf`` in any spelling,
  ``dd``, writing to disks, fork bombs); a refused block returns exit code 1 and the reason.
* ``PARLEY_USE_DOCKER`` is read as well as ``AUTOGEN_USE_DOCKER``; when both are set the
  ``PARLEY_`` one wins.
* In single-line mode ``extract_code`` uses the given ``pattern`` (AutoGen ignored it) and finds
  multi-line fenced blocks too (AutoGen only found one-line ones in that mode).
"""

from __future__ import annotations

import logging
import os
import re
import sys
from pathlib import Path
from types import FrameType, SimpleNamespace
from typing import Any, cast

from .coding._blocks import (
    CODE_BLOCK_PATTERN,
    DEFAULT_WORK_DIR,
    POWERSHELLS,
    PYTHON_VARIANTS,
    SHELLS,
    TIMEOUT_MSG,
    UNKNOWN,
    WIN32,
    content_str,
    infer_lang,
    legacy_timeout_logs,
)
from .coding._blocks import content_text as content_text

__all__ = [
    "CODE_BLOCK_PATTERN",
    "DEFAULT_MODEL",
    "DEFAULT_TIMEOUT",
    "FAST_MODEL",
    "PATH_SEPARATOR",
    "PYTHON_VARIANTS",
    "SENTINEL",
    "TIMEOUT_MSG",
    "UNKNOWN",
    "WIN32",
    "WORKING_DIR",
    "check_can_use_docker_or_throw",
    "content_str",
    "create_virtual_env",
    "decide_use_docker",
    "execute_code",
    "extract_code",
    "get_powershell_command",
    "in_docker_container",
    "infer_lang",
    "is_docker_running",
    "timeout_handler",
]

logger = logging.getLogger(__name__)

SENTINEL = object()
DEFAULT_MODEL = "gpt-4"
FAST_MODEL = "gpt-3.5-turbo"
# AutoGen's was a folder inside its installed package, where code could rewrite the package.
WORKING_DIR = DEFAULT_WORK_DIR
DEFAULT_TIMEOUT = 600
PATH_SEPARATOR = "\\" if WIN32 else "/"

_TRUE = ("1", "true", "yes", "t")
_FALSE = ("0", "false", "no", "f")
_DOCKER_PING_TIMEOUT = 10  # seconds; an unreachable TCP DOCKER_HOST must not hang an agent


def extract_code(
    text: str | list[Any],
    pattern: str = CODE_BLOCK_PATTERN,
    detect_single_line_code: bool = False,
) -> list[tuple[str, str]]:
    """The ``(language, code)`` pairs of the fenced blocks in ``text``.

    Without blocks: ``[("unknown", text)]``. With ``detect_single_line_code``, inline
    `` `code` `` spans are returned too, as ``("", code)``, everything stripped, and no match
    gives ``[]``.
    """
    text = content_str(text)
    if not detect_single_line_code:
        matches: list[tuple[str, str]] = re.findall(pattern, text, flags=re.DOTALL)
        return matches if matches else [(UNKNOWN, text)]
    found: list[tuple[str, str]] = []
    for lang, fenced, inline in re.findall(pattern + r"|`([^`]+)`", text, flags=re.DOTALL):
        if fenced:
            found.append((lang.strip(), fenced.strip()))
        elif inline:
            found.append(("", inline.strip()))
    return found


def execute_code(
    code: str | None = None,
    timeout: int | None = None,
    filename: str | None = None,
    work_dir: str | None = None,
    use_docker: list[str] | str | bool | object = SENTINEL,
    lang: str | None = "python",
) -> tuple[int, str, str | None]:
    """Run ``code`` (or the file ``filename`` in ``work_dir``); ``(exit_code, logs, image)``.

    ``image`` is ``None`` for local runs and the image used for Docker runs. See the module
    docstring for how this differs from AutoGen.
    """
    if code is None and filename is None:
        message = f"Either code={code!r} or filename={filename!r} must be provided."
        logger.error(message)
        raise AssertionError(message)
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
    # Imported here: importing code_utils must not load the runners (see the module docstring).
    from .coding._paths import OutsideWorkDirError, default_filename, resolve_in_work_dir
    from .coding._work_dir import check_work_dir

    generated = filename is None
    if filename is None:
        filename = default_filename(code or "", "py" if is_python else lang)
    work_dir = WORKING_DIR if work_dir is None else work_dir
    check_work_dir(work_dir)
    # An unknown language raises NotImplementedError before anything is looked at or written.
    program = None if docker else sys.executable if is_python else _interpreter(lang)
    try:
        path = resolve_in_work_dir(work_dir, filename)
    except OutsideWorkDirError:
        return 1, "Filename is not in the workspace", None
    if program is None:
        from .coding.docker_commandline_code_executor import run_code_in_docker

        return run_code_in_docker(
            code=code if code is not None else path.read_text(encoding="utf-8"),
            lang=lang,
            filename=filename,
            work_dir=work_dir,
            timeout=float(timeout),
            image=cast("str | list[str] | bool", docker),
        )
    return _execute_locally(program, lang, code, path, Path(work_dir), float(timeout), generated)


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
) -> tuple[int, str, None]:
    """Run the file ``path`` (``code`` written there first, if given) with ``program``."""
    from .coding._guard import dangerous_command
    from .coding._process import run_program

    source = code if code is not None else path.read_text(encoding="utf-8", errors="replace")
    reason = dangerous_command(lang, source)
    if reason is not None:
        return 1, f"Potentially dangerous command detected: {reason}", None
    root = work_dir.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)  # also creates WORKING_DIR on first use
    if code is not None:
        path.write_text(code, encoding="utf-8")
    relative = str(path.relative_to(root))
    # AutoGen runs the file by its name relative to work_dir; "./" keeps "-x.py" from being
    # read as an option.
    argv = [program, f".{os.sep}{relative}" if relative.startswith("-") else relative]
    try:
        result = run_program(argv, cwd=root, timeout=timeout, env=None)
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
    from .coding._docker_engine import engine_answers

    return engine_answers(_DOCKER_PING_TIMEOUT)


def in_docker_container() -> bool:
    """Whether this process runs inside a Docker container (``/.dockerenv`` exists)."""
    return os.path.exists("/.dockerenv")


def create_virtual_env(dir_path: str, **env_args: Any) -> SimpleNamespace:
    """Create a venv (``with_pip=True`` unless told otherwise) and return its context
    (``env_exe``, ``bin_path``...), for ``LocalCommandLineCodeExecutor(virtual_env_context=...)``."""
    import venv  # here: slow to import (shutil, sysconfig), and rarely needed

    env_args.setdefault("with_pip", True)
    builder = venv.EnvBuilder(**env_args)
    builder.create(dir_path)
    context: SimpleNamespace = builder.ensure_directories(dir_path)
    return context


def timeout_handler(signum: int, frame: FrameType | None) -> None:
    """A signal handler raising ``TimeoutError("Timed out!")`` (kept for AutoGen code that
    installs it; parley's own timeouts do not use signals)."""
    raise TimeoutError("Timed out!")


def get_powershell_command() -> str:
    """``"powershell"`` or ``"pwsh"``, whichever is installed."""
    import shutil

    for command in ("powershell", "pwsh"):
        if shutil.which(command):
            return command
    raise FileNotFoundError(
        "PowerShell is not installed: neither 'powershell' nor 'pwsh' is on PATH."
    )
