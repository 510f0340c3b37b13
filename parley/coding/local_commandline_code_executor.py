"""Run code blocks on this machine (AutoGen's ``LocalCommandLineCodeExecutor``, spec 10.4).

Same constructor, results and rules as AutoGen, with these deliberate safety differences:

* The default ``work_dir`` is ``coding``, a dedicated folder (AutoGen: ``.``); a work dir holding
  a response cache, a virtualenv, parley's sources or a git repository is refused with
  ``UnsafeWorkDirError`` (``parley.coding._work_dir``).
* Running code here is not isolation: the first block warns once per process
  (``UnsandboxedExecutionWarning``); use the Docker executor to isolate code. While a block runs,
  parley's process is non-dumpable, so the code cannot read its environment or memory.
* Each block runs in ``work_dir`` under a supervisor that keeps every process it starts, however
  it detaches (``setsid``, double fork); all of them are killed at the timeout, when the block
  ends, when the chat is cancelled and when parley dies (``parley.coding._process``). The
  timeout's result is exit code 124 with ``"\\nTimeout"`` appended, and it keeps the output
  printed before the timeout (AutoGen lost it).
* The program sees a minimal environment (``parley.coding._process.safe_env``: no API keys or
  other secrets of this process), plus the venv's ``bin`` on ``PATH`` and ``VIRTUAL_ENV`` when
  ``virtual_env_context`` is given, plus the parley-only ``env`` argument. stdin is ``/dev/null``.
* The dangerous-command guard (``parley.coding._guard``) catches ``rm -rf`` in any spelling
  (``rm -r -f``, ``rm -fR``, ``--recursive --force``), not only the literal ``rm -rf``.
* Each stream's output is capped (``MAX_OUTPUT_BYTES``) with a visible truncation marker.
* The file name comes from a first-line ``# filename: x.py`` comment; unlike AutoGen the
  ``filename:`` label is required (AutoGen made ``# compute primes`` a file name). A name
  leading outside the work dir (``..``, an absolute path, a symlink pointing out) gives exit
  code 1 and ``"Filename is not in the workspace"``, as in AutoGen, and nothing is written.
* Python runs with ``sys.executable`` (or the venv's interpreter), not whatever ``python`` is on
  ``PATH``: AutoGen failed with ``FileNotFoundError`` on python3-only systems and could run a
  different interpreter than the legacy path.
* An empty block list returns exit code 0 and no output (AutoGen crashed). A language that
  cannot run (``ruby``, or ``html`` with its policy set to execute) and a missing interpreter
  (``node``) are reported in the result, never raised.
* ``functions`` (spec 10.7) are not supported yet: a non-empty list raises NotImplementedError.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from string import Template
from types import SimpleNamespace
from typing import Any, ClassVar, TypeVar, cast

from ..code_utils import PYTHON_VARIANTS, TIMEOUT_MSG, WIN32
from ._executor_base import CommandLineExecutorBase
from ._guard import dangerous_command
from ._paths import OutsideWorkDirError, default_filename, filename_from_code, resolve_in_work_dir
from ._process import run, safe_env
from ._work_dir import DEFAULT_WORK_DIR, check_work_dir
from .base import CodeBlock, CommandLineCodeResult

__all__ = [
    "CommandlineCodeResult",
    "LocalCommandLineCodeExecutor",
    "LocalCommandlineCodeExecutor",
    "silence_pip",
]

_T = TypeVar("_T")

_SHELLS = ("bash", "shell", "sh")
_POWERSHELLS = ("pwsh", "powershell", "ps1")


def silence_pip(code: str, lang: str) -> str:
    """Add ``-qqq`` to the ``pip install`` lines of a block (``!pip install`` in python), as
    AutoGen does, so install logs do not flood the conversation."""
    if lang == "python":
        pattern = re.compile(r"^! ?pip install")
    elif lang in _SHELLS + _POWERSHELLS:
        pattern = re.compile(r"^pip install")
    else:
        return code
    lines = code.split("\n")
    for i, line in enumerate(lines):
        match = pattern.search(line)
        if match is not None and "-qqq" not in line:
            lines[i] = line.replace(match.group(0), match.group(0) + " -qqq", 1)
    return "\n".join(lines)


class LocalCommandLineCodeExecutor(CommandLineExecutorBase):
    """Writes each code block to a file in ``work_dir`` and runs it there, one after another,
    stopping at the first failure."""

    SUPPORTED_LANGUAGES: ClassVar[list[str]] = [
        "bash", "shell", "sh", "pwsh", "powershell", "ps1", "python", "javascript", "html", "css",
    ]  # fmt: skip
    DEFAULT_EXECUTION_POLICY: ClassVar[dict[str, bool]] = {
        "bash": True, "shell": True, "sh": True,
        "pwsh": True, "powershell": True, "ps1": True,
        "python": True,
        "javascript": False, "html": False, "css": False,
    }  # fmt: skip
    FUNCTION_PROMPT_TEMPLATE: ClassVar[str] = (
        "You have access to the following user defined functions. They can be imported from "
        "the module `$module_name` by their names, e.g. `from $module_name import foo` for a "
        "function called `foo`.\n\n$functions"
    )

    def __init__(
        self,
        timeout: int = 60,
        virtual_env_context: SimpleNamespace | None = None,
        work_dir: Path | str = Path(DEFAULT_WORK_DIR),
        functions: list[Any] = [],  # noqa: B006 - never mutated; AutoGen's signature
        functions_module: str = "functions",
        execution_policies: dict[str, bool] | None = None,
        *,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """``env`` (parley only) adds variables to the minimal environment code runs with."""
        if timeout < 1:
            raise ValueError("Timeout must be greater than or equal to 1.")
        if not functions_module.isidentifier():
            raise ValueError("Module name must be a valid Python identifier")
        if functions:
            raise NotImplementedError(
                "LocalCommandLineCodeExecutor(functions=...) is not supported by parley yet; "
                "put the functions in a module inside work_dir and import it from the code."
            )
        work_dir = Path(work_dir)
        check_work_dir(work_dir)
        work_dir.mkdir(exist_ok=True)  # parents are not created, as in AutoGen
        self._timeout = timeout
        self._work_dir = work_dir
        self._virtual_env_context = virtual_env_context
        self._functions: list[Any] = list(functions)
        self._functions_module = functions_module
        self._extra_env = dict(env or {})
        self.execution_policies = dict(self.DEFAULT_EXECUTION_POLICY)
        if execution_policies is not None:
            self.execution_policies.update(execution_policies)

    @property
    def work_dir(self) -> Path:
        """Where code files are written and run."""
        return self._work_dir

    @property
    def functions(self) -> list[Any]:
        """The user functions offered to the code (always empty in parley for now)."""
        return self._functions

    @property
    def functions_module(self) -> str:
        """The module name the user functions would be importable from."""
        return self._functions_module

    def format_functions_for_prompt(self, prompt_template: str = FUNCTION_PROMPT_TEMPLATE) -> str:
        """``prompt_template`` with ``$module_name`` and ``$functions`` filled in."""
        return Template(prompt_template).substitute(
            module_name=self._functions_module, functions=""
        )

    @staticmethod
    def sanitize_command(lang: str, code: str) -> None:
        """Raise ``ValueError`` for a few destructive shell commands (``rm -rf`` in any
        spelling, ``dd``...): a guard against careless commands, not a sandbox
        (``parley.coding._guard``)."""
        reason = dangerous_command(lang, code)
        if reason is not None:
            raise ValueError(f"Potentially dangerous command detected: {reason}")

    def execute_code_blocks(self, code_blocks: list[CodeBlock]) -> CommandLineCodeResult:
        """Run the blocks in order; stop at the first non-zero exit code or timeout.

        Raises ``ValueError`` for a dangerous shell command (see :meth:`sanitize_command`).
        """
        check_work_dir(self._work_dir)  # a cache may have been opened inside it since
        outputs: list[str] = []
        exit_code = 0
        first_file: str | None = None
        for block in code_blocks:
            lang = block.language.lower()
            self.sanitize_command(lang, block.code)
            if lang in PYTHON_VARIANTS:
                lang = "python"
            if WIN32 and lang in ("sh", "shell"):
                lang = "ps1"
            code = silence_pip(block.code, lang)
            if lang not in self.SUPPORTED_LANGUAGES:
                outputs.append(f"\nunknown language {lang}")
                exit_code = 1
                break
            try:
                path = self._write(code, lang)
            except OutsideWorkDirError:
                return CommandLineCodeResult(exit_code=1, output="Filename is not in the workspace")
            except OSError as error:  # the name is a directory, the disk is full...
                outputs.append(f"\ncould not write the code file: {error}")
                exit_code = 1
                break
            first_file = first_file or str(path)
            if not self.execution_policies.get(lang, False):
                outputs.append(f"Code saved to {path}\n")
                exit_code = 0
                continue
            exit_code, output = self._run(lang, path)
            outputs.append(output)
            if exit_code != 0:
                break
        return CommandLineCodeResult(
            exit_code=exit_code,
            output="".join(outputs),  # each stream of each block is capped already
            code_file=first_file,
        )

    def _write(self, code: str, lang: str) -> Path:
        filename = filename_from_code(code) or default_filename(
            code, "py" if lang == "python" else lang
        )
        path = resolve_in_work_dir(self._work_dir, filename)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code, encoding="utf-8")
        return path

    def _run(self, lang: str, path: Path) -> tuple[int, str]:
        """Run one written file; ``(exit_code, output)`` with stderr before stdout, as AutoGen."""
        program = self._interpreter(lang)
        if program is None:
            return 1, f"\nunknown language {lang}: it can be saved but not executed"
        try:
            result = run(
                [program, str(path)],
                cwd=self._work_dir,
                timeout=float(self._timeout),
                env=self._env(),
            )
        except FileNotFoundError as error:
            if error.filename != program:
                raise  # the work dir itself is gone
            return 127, f"\n{program}: command not found (needed to run {lang})"
        except PermissionError:
            return 126, f"\n{program}: permission denied (needed to run {lang})"
        output = result.stderr + result.stdout
        if result.timed_out:
            return 124, output + "\n" + TIMEOUT_MSG
        return result.exit_code, output

    def _interpreter(self, lang: str) -> str | None:
        if lang == "python":
            context = self._virtual_env_context
            return str(context.env_exe) if context is not None else sys.executable
        if lang in _SHELLS:
            return "sh" if lang == "shell" else lang
        if lang in _POWERSHELLS:
            return "powershell" if WIN32 else "pwsh"
        if lang == "javascript":
            return "node"
        return None  # html, css: nothing runs them

    def _env(self) -> dict[str, str]:
        env = safe_env(self._extra_env)
        context = self._virtual_env_context
        if context is not None:
            bin_path = os.path.abspath(context.bin_path)
            env["PATH"] = os.pathsep.join(p for p in (bin_path, env.get("PATH")) if p)
            env["VIRTUAL_ENV"] = os.path.abspath(context.env_dir)
        return env

    def restart(self) -> None:
        """Nothing to restart: each block runs in a new process (warns, as AutoGen)."""
        warnings.warn(
            "Restarting local command line code executor is not supported. No action is taken.",
            stacklevel=2,
        )


class _DeprecatedAlias(type):
    """Metaclass of an old class name: calling it warns and builds the new class, and
    ``isinstance``/``issubclass`` answer as for the new class."""

    _new: type

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"{cls.__name__} is deprecated, use {cls._new.__name__} instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        return cls._new(*args, **kwargs)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls._new)

    def __subclasscheck__(cls, subclass: type) -> bool:
        return subclass is cls or issubclass(subclass, cls._new)


def _alias(name: str, new: type[_T]) -> type[_T]:
    # Typed as the new class, so type checkers treat the old name exactly like it.
    namespace = {
        "_new": new,
        "__module__": __name__,
        "__doc__": f"Deprecated name of {new.__name__}.",
    }
    return cast("type[_T]", _DeprecatedAlias(name, (), namespace))


LocalCommandlineCodeExecutor = _alias("LocalCommandlineCodeExecutor", LocalCommandLineCodeExecutor)
CommandlineCodeResult = _alias("CommandlineCodeResult", CommandLineCodeResult)
