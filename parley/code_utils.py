"""AutoGen-compatible code helpers (``autogen.code_utils``, spec section 9).

Finding code in messages (:func:`extract_code`, :func:`infer_lang`), running it
(:func:`execute_code`) and deciding whether Docker is used. Importing this module is cheap:
the process runner, the Docker executor and the ``docker`` package are imported on first use.

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
import shutil
import socket
import sys
import venv
from collections.abc import Mapping
from pathlib import Path
from types import FrameType, SimpleNamespace
from typing import Any, cast

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
# ```lang\ncode\n```: optional spaces around an optional tag, \n or \r\n line breaks, and the
# closing fence on its own (possibly indented) line.
CODE_BLOCK_PATTERN = r"```[ \t]*(\w+)?[ \t]*\r?\n(.*?)\r?\n[ \t]*```"
# The executors' default work dir too (parley.coding._work_dir.DEFAULT_WORK_DIR); AutoGen used a
# folder inside its installed package, where code could rewrite the package.
WORKING_DIR = "coding"
UNKNOWN = "unknown"
TIMEOUT_MSG = "Timeout"
DEFAULT_TIMEOUT = 600
WIN32 = sys.platform == "win32"
PATH_SEPARATOR = "\\" if WIN32 else "/"
PYTHON_VARIANTS = ["python", "Python", "py"]

_TRUE = ("1", "true", "yes", "t")
_FALSE = ("0", "false", "no", "f")
_DOCKER_PING_TIMEOUT = 10  # seconds; an unreachable TCP DOCKER_HOST must not hang an agent


def content_str(content: str | list[Any] | None) -> str:
    """The text of a message content: ``None`` is ``""``, text parts are joined, images are
    ``<image>`` (spec 9.2, with AutoGen's error types for malformed content)."""
    return _text_of(content, strict=True)


def content_text(content: Any) -> str:
    """Like :func:`content_str` (a parley helper), for any content a message may hold: a part
    of another type (audio, a file) shows as ``<type>`` instead of raising, so that a valid
    message never breaks printing or a text-only speaker selector."""
    return _text_of(content, strict=False)


def _text_of(content: Any, *, strict: bool) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        if strict:
            raise TypeError(f"content must be None, a str or a list, got {type(content).__name__}")
        return str(content)
    parts = []
    for item in content:
        if not isinstance(item, dict if strict else Mapping):
            if strict:
                raise TypeError(f"a content list holds dicts, got {type(item).__name__}: {item!r}")
            parts.append(str(item))
        elif strict and "type" not in item:
            raise AssertionError(f"a content part needs a 'type': {item!r}")
        elif item.get("type") == "text":
            parts.append(str(item.get("text", "")))
        elif item.get("type") in ("image_url", "input_image"):
            parts.append("<image>")
        elif strict:
            raise ValueError(f"unknown content part type {item['type']!r}")
        else:
            parts.append(f"<{item.get('type')}>")
    return "".join(parts)


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


def infer_lang(code: str) -> str:
    """``"sh"`` for ``python x``/``pip ...`` commands, ``"python"`` if it compiles, else ``"unknown"``."""
    if code.startswith(("python ", "pip", "python3 ")):
        return "sh"
    try:
        compile(code, "test", "exec")
    except Exception:  # SyntaxError, ValueError (NUL bytes), RecursionError (deep nesting)...
        return UNKNOWN
    return "python"


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
    generated = filename is None
    if filename is None:
        from .coding._paths import default_filename

        filename = default_filename(code or "", "py" if is_python else lang)
    work_dir = WORKING_DIR if work_dir is None else work_dir
    from .coding._work_dir import check_work_dir

    check_work_dir(work_dir)
    if docker:
        return _execute_in_docker(code, filename, work_dir, timeout, docker, lang)
    program = sys.executable if is_python else _interpreter(lang)  # NotImplementedError first
    return _execute_locally(program, lang, code, filename, work_dir, float(timeout), generated)


def _interpreter(lang: str) -> str:
    if lang in ("bash", "sh"):
        return lang
    if lang == "shell":
        return "sh"
    if lang == "javascript":
        return "node"
    if lang in ("ps1", "pwsh", "powershell"):
        return "powershell" if shutil.which("powershell") else "pwsh"
    raise NotImplementedError(f"{lang} not recognized in code execution")


def _execute_locally(
    program: str,
    lang: str,
    code: str | None,
    filename: str,
    work_dir: str,
    timeout: float,
    generated: bool,
) -> tuple[int, str, None]:
    from .coding._guard import dangerous_command
    from .coding._paths import OutsideWorkDirError, resolve_in_work_dir
    from .coding._process import run

    try:
        path = resolve_in_work_dir(work_dir, filename)
    except OutsideWorkDirError:
        return 1, "Filename is not in the workspace", None
    source = code if code is not None else path.read_text(encoding="utf-8", errors="replace")
    reason = dangerous_command(lang, source)
    if reason is not None:
        return 1, f"Potentially dangerous command detected: {reason}", None
    root = Path(work_dir).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)  # also creates WORKING_DIR on first use
    if code is not None:
        path.write_text(code, encoding="utf-8")
    relative = str(path.relative_to(root))
    # AutoGen runs the file by its name relative to work_dir; "./" keeps "-x.py" from being
    # read as an option.
    argv = [program, f".{os.sep}{relative}" if relative.startswith("-") else relative]
    try:
        result = run(argv, cwd=root, timeout=timeout, env=None)
    except FileNotFoundError as error:
        if error.filename != program:
            raise  # the work dir itself is gone
        return 127, f"{program}: command not found", None
    except PermissionError:
        return 126, f"{program}: permission denied", None
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
        separator = "\n" if logs and not logs.endswith("\n") else ""
        return 1, logs + separator + TIMEOUT_MSG, None
    return result.exit_code, logs, None


def _execute_in_docker(
    code: str | None,
    filename: str,
    work_dir: str,
    timeout: int,
    image: str | list[str] | bool,
    lang: str,
) -> tuple[int, str, str | None]:
    from .coding._paths import OutsideWorkDirError, resolve_in_work_dir

    # Imported here: only running code in Docker should load the Docker machinery.
    from .coding.docker_commandline_code_executor import run_code_in_docker

    try:
        path = resolve_in_work_dir(work_dir, filename)
    except OutsideWorkDirError:
        return 1, "Filename is not in the workspace", None
    if code is None:
        code = path.read_text(encoding="utf-8")
    os.makedirs(work_dir, exist_ok=True)
    return run_code_in_docker(
        code=code,
        lang=lang,
        filename=filename,
        work_dir=work_dir,
        timeout=float(timeout),
        image=image,
    )


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
    try:
        import docker
    except ImportError:
        return False
    host = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    if (
        not WIN32
        and host.startswith("unix://")
        and not _unix_socket_answers(host[len("unix://") :])
    ):
        # Probed here first: docker-py leaks its socket (a ResourceWarning) when connect fails.
        return False
    try:
        client = docker.from_env(timeout=_DOCKER_PING_TIMEOUT)
    except docker.errors.DockerException:
        return False
    try:
        return bool(client.ping())
    except Exception:  # DockerException, requests' ConnectionError, a socket timeout...
        return False
    finally:
        client.close()


def _unix_socket_answers(path: str) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(_DOCKER_PING_TIMEOUT)
        try:
            sock.connect(path)
        except OSError:
            return False
    return True


def in_docker_container() -> bool:
    """Whether this process runs inside a Docker container (``/.dockerenv`` exists)."""
    return os.path.exists("/.dockerenv")


def create_virtual_env(dir_path: str, **env_args: Any) -> SimpleNamespace:
    """Create a venv (``with_pip=True`` unless told otherwise) and return its context
    (``env_exe``, ``bin_path``...), for ``LocalCommandLineCodeExecutor(virtual_env_context=...)``."""
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
    for command in ("powershell", "pwsh"):
        if shutil.which(command):
            return command
    raise FileNotFoundError(
        "PowerShell is not installed: neither 'powershell' nor 'pwsh' is on PATH."
    )
