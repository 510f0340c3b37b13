"""AutoGen-compatible code helpers (``autogen.code_utils``): the public face of the modules
that do the work, plus the environment helpers (:func:`create_virtual_env`,
:func:`get_powershell_command`, :func:`in_docker_container`, :func:`timeout_handler`).

* Finding code in messages (:func:`extract_code`, :func:`infer_lang`, :func:`content_str`, the
  fence pattern): ``parley.coding._blocks``, the vocabulary shared with the executors.
* Running it the legacy way (:func:`execute_code`) and deciding whether Docker is used:
  ``parley.coding._legacy_execute``.
* The legacy LLM helpers on ``parley.oai.Completion`` (:func:`generate_code`,
  :func:`improve_function`, :func:`improve_code`, :func:`generate_assertions`,
  :func:`eval_function_completions`, :func:`implement`, :class:`PassAssertionFilter`):
  ``parley._llm_code_helpers``, which documents how they differ from AutoGen.

Data flows one way: nothing those modules import imports this module. Importing it is cheap:
the model client, the process runner, the Docker executor and the ``docker`` package load on
first use.

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
* ``execute_code(..., sandbox=True)`` (parley only; ``"sandbox": True`` in an agent's legacy
  ``code_execution_config``) runs the code on this machine under bubblewrap, isolated as
  ``LocalCommandLineCodeExecutor(sandbox=True)`` isolates it (``parley.coding._bwrap``); it
  means no Docker, so ``use_docker`` must then be false or left out (``ValueError`` otherwise),
  and bubblewrap must work here (``SandboxUnavailableError`` otherwise, never an unsandboxed
  run).
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
* The legacy LLM helpers work on openai>=1 and fill their own prompt templates (AutoGen's sent
  ``{definition}`` and the like to the model literally); see ``parley._llm_code_helpers``.
* :func:`create_virtual_env` gives the venv pip unless ``with_pip=False`` is passed (AutoGen
  dropped pip as soon as any other option was given, so ``system_site_packages=True`` made a
  venv its executor could not install requirements into), and ``clear=True`` no longer empties
  the venv it has just made (AutoGen cleared it a second time when it read its paths).
"""

from __future__ import annotations

import os
from types import FrameType, SimpleNamespace
from typing import Any

from ._llm_code_helpers import (
    DEFAULT_MODEL,
    FAST_MODEL,
    PassAssertionFilter,
    eval_function_completions,
    generate_assertions,
    generate_code,
    implement,
    improve_code,
    improve_function,
)
from .coding._blocks import (
    CODE_BLOCK_PATTERN,
    PYTHON_VARIANTS,
    TIMEOUT_MSG,
    UNKNOWN,
    WIN32,
    content_str,
    extract_code,
    infer_lang,
)
from .coding._blocks import content_text as content_text
from .coding._legacy_execute import (
    DEFAULT_TIMEOUT,
    PATH_SEPARATOR,
    SENTINEL,
    WORKING_DIR,
    check_can_use_docker_or_throw,
    decide_use_docker,
    execute_code,
    is_docker_running,
)

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
    "PassAssertionFilter",
    "check_can_use_docker_or_throw",
    "content_str",
    "create_virtual_env",
    "decide_use_docker",
    "eval_function_completions",
    "execute_code",
    "extract_code",
    "generate_assertions",
    "generate_code",
    "get_powershell_command",
    "implement",
    "improve_code",
    "improve_function",
    "in_docker_container",
    "infer_lang",
    "is_docker_running",
    "timeout_handler",
]


def in_docker_container() -> bool:
    """Whether this process runs inside a Docker container (``/.dockerenv`` exists)."""
    return os.path.exists("/.dockerenv")


def create_virtual_env(dir_path: str, **env_args: Any) -> SimpleNamespace:
    """Create a venv (``with_pip=True`` unless told otherwise) and return its context
    (``env_exe``, ``bin_path``, ``env_dir``...: paths as ``dir_path`` gives them, relative if
    it is), for ``LocalCommandLineCodeExecutor(virtual_env_context=...)``, which resolves them."""
    import venv  # here: slow to import (shutil, sysconfig), and rarely needed

    env_args.setdefault("with_pip", True)
    venv.EnvBuilder(**env_args).create(dir_path)
    # Reading the paths goes through ensure_directories, which would empty the new venv if
    # told to clear it.
    reader = venv.EnvBuilder(**{**env_args, "clear": False})
    context: SimpleNamespace = reader.ensure_directories(dir_path)
    return context


def timeout_handler(signum: int, frame: FrameType | None) -> None:
    """A signal handler raising ``TimeoutError("Timed out!")`` (kept for AutoGen code that
    installs it; parley's own timeouts do not use signals)."""
    raise TimeoutError("Timed out!")


def get_powershell_command() -> str:
    """``"powershell"`` or ``"pwsh"``: the first that runs and reports its version, as AutoGen
    found it. ``PermissionError`` when PowerShell may not be run, ``FileNotFoundError`` when
    neither is installed (or neither works)."""
    import subprocess

    for command in ("powershell", "pwsh"):
        try:
            result = subprocess.run(
                [command, "-Command", "$PSVersionTable.PSVersion.Major"],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        except (FileNotFoundError, NotADirectoryError):
            continue
        except PermissionError as e:
            raise PermissionError("No permission to run powershell.") from e
        if result.returncode == 0:
            return command
    raise FileNotFoundError(
        "Neither powershell.exe nor pwsh.exe is present in the system. "
        "Please install PowerShell and try again."
    )
