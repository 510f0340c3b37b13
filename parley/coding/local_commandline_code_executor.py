"""Run code blocks on this machine (AutoGen's ``LocalCommandLineCodeExecutor``).

Same constructor, results and rules as AutoGen; the block loop, shared with the Docker
executor, is ``parley.coding.executor_base`` (its docstring has the rules). The deliberate
safety differences:

* The default ``work_dir`` is ``coding``, a dedicated folder (AutoGen: ``.``); a work dir holding
  a response cache, a virtualenv, parley's sources or a git repository is refused with
  ``UnsafeWorkDirError`` (``parley.coding._work_dir``).
* Running code here is not isolation: the first block warns once per process
  (``UnsandboxedExecutionWarning``); use the Docker executor to isolate code, or, on Linux,
  ``sandbox=True`` (parley only): each block then runs under bubblewrap, with no network, its
  own ``/proc``, only the work dir writable, the user's files out of sight, never as root and
  with process and memory limits (``parley.coding._bwrap`` has the details), and nothing
  warns. Where bubblewrap cannot run, the executor is not built
  (:class:`~parley.exceptions.SandboxUnavailableError`): code never runs unsandboxed instead.
  While a block runs, parley's process is non-dumpable, so the code cannot read its
  environment or memory.
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
* Output is capped (``MAX_OUTPUT_BYTES``) with a visible truncation marker.
* The file name comes from a first-line comment, ``# x.py`` or ``# filename: x.py``, as in
  AutoGen (``parley.coding._paths``); a block whose language's policy is False is saved there
  and not run (``"Code saved to <path>"``). A name leading outside the work dir (``..``, an absolute path, a symlink pointing out) gives exit
  code 1 and ``"Filename is not in the workspace"``, as in AutoGen, and nothing is written.
* Python runs with ``sys.executable`` (or the venv's interpreter), not whatever ``python`` is on
  ``PATH``: AutoGen failed with ``FileNotFoundError`` on python3-only systems and could run a
  different interpreter than the legacy path.
* An empty block list returns exit code 0 and no output (AutoGen crashed). A language that
  cannot run (``ruby``, or ``html`` with its policy set to execute) and a missing interpreter
  (``node``: exit code 127, ``"node: command not found"``) are reported in the result, never
  raised.
* User ``functions`` (``parley.coding.func_with_reqs``) are set up at the first call, as in
  AutoGen (``parley.coding._functions_setup``: the module, its requirements, a load check that
  leaves no ``tmp_code_*.py`` behind). Their requirements (``python_packages``) are checked in
  the interpreter the code runs with, and only those it lacks are installed, with pip run on
  this machine (``parley.coding._requirements``):

  - with a ``virtual_env_context``: into that virtualenv, with its own pip, as AutoGen did;
  - without one, never into the environment parley runs in (AutoGen installed there, so code
    could change parley's own packages): into a folder of this executor's outside the work dir
    (``pip install --target``), which the code finds on ``PYTHONPATH`` and which
    :meth:`~LocalCommandLineCodeExecutor.stop` (or the executor's garbage collection) removes.
    A folder rather than a ``--system-site-packages`` virtualenv: such a venv, made from
    parley's interpreter, would see the base Python's packages but not those of the
    virtualenv parley runs in, so code would lose packages it has today. The code keeps its
    interpreter and everything importable in it; the folder only adds to it.

* A ``virtual_env_context`` made with a relative path (``create_virtual_env("venv")``) works:
  its paths are made absolute when the executor is built, before code runs in the work dir.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar, TypeVar, cast

from ..exceptions import DangerousCommandError
from ._blocks import POWERSHELLS, PYTHON_VARIANTS, SHELLS, WIN32
from ._bwrap import BwrapSandbox
from ._code_user import is_fresh
from ._functions_setup import PackageFolder
from ._guard import dangerous_command
from ._process import run_program, safe_env
from ._requirements import Interpreter, pip_install
from ._work_dir import DEFAULT_WORK_DIR
from .base import CommandLineCodeResult
from .executor_base import DEFAULT_POLICY, CommandLineExecutorBase, RunOutcome, silence_pip
from .func_with_reqs import UserFunction

__all__ = [
    "CommandlineCodeResult",
    "LocalCommandLineCodeExecutor",
    "LocalCommandlineCodeExecutor",
    "silence_pip",
]

_T = TypeVar("_T")
_PYTHON_NAMES = frozenset(lang.lower() for lang in PYTHON_VARIANTS)


class LocalCommandLineCodeExecutor(CommandLineExecutorBase):
    """Writes each code block to a file in ``work_dir`` and runs it there, one after another,
    stopping at the first failure."""

    SUPPORTED_LANGUAGES: ClassVar[list[str]] = list(DEFAULT_POLICY)
    DEFAULT_EXECUTION_POLICY: ClassVar[dict[str, bool]] = dict(DEFAULT_POLICY)

    def __init__(
        self,
        timeout: int = 60,
        virtual_env_context: SimpleNamespace | None = None,
        work_dir: Path | str = Path(DEFAULT_WORK_DIR),
        functions: Sequence[UserFunction] = (),
        functions_module: str = "functions",
        execution_policies: dict[str, bool] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        sandbox: bool = False,
    ) -> None:
        """``env`` (parley only) adds variables to the minimal environment code runs with;
        ``sandbox=True`` (parley only) runs each block under bubblewrap (the module's doc), and
        raises :class:`~parley.exceptions.SandboxUnavailableError` if it cannot run here."""
        fresh = is_fresh(Path(work_dir))
        super().__init__(timeout, work_dir, execution_policies, functions, functions_module)
        self._virtual_env_context = virtual_env_context  # AutoGen's attribute, as given
        self._venv = _absolute_paths(virtual_env_context)
        self._sandbox = (
            BwrapSandbox(
                self._work_dir,
                fresh=fresh,
                interpreters=[self._venv.env_exe] if self._venv is not None else [],
            )
            if sandbox
            else None
        )
        self._extra_env = dict(env or {})
        self._packages = PackageFolder(self)  # where missing requirements go, without a venv

    @staticmethod
    def sanitize_command(lang: str, code: str) -> None:
        """Raise :class:`~parley.exceptions.DangerousCommandError` (a ``ValueError``, as
        AutoGen's) for a few destructive shell commands (``rm -rf`` in any spelling, ``dd``...):
        a guard against careless commands, not a sandbox (``parley.coding._guard``)."""
        reason = dangerous_command(lang, code)
        if reason is not None:
            raise DangerousCommandError(reason)

    def restart(self) -> None:
        """Nothing to restart: each block runs in a new process (warns, as AutoGen)."""
        warnings.warn(
            "Restarting local command line code executor is not supported. No action is taken.",
            stacklevel=2,
        )

    def stop(self) -> None:
        """Remove the folder of the functions' installed requirements, if any (the next call
        sets the functions up again). The executor stays usable."""
        if self._packages.path is not None:
            self._packages.remove()
            self._user_functions.reset()

    # -- the steps of the block loop (parley.coding.executor_base) -----------------------------

    def normalize_language(self, language: str, code: str) -> str:
        """Raises ``ValueError`` for a dangerous shell command (see :meth:`sanitize_command`)."""
        lang = language.lower()
        self.sanitize_command(lang, code)
        if lang in _PYTHON_NAMES:
            return "python"
        if WIN32 and lang in ("sh", "shell"):
            return "ps1"
        return lang

    def supports_language(self, lang: str) -> bool:
        return lang in self.SUPPORTED_LANGUAGES

    def interpreter_for(self, lang: str) -> str | None:
        if lang == "python":
            return self._venv.env_exe if self._venv is not None else sys.executable
        if lang in SHELLS:
            return "sh" if lang == "shell" else lang
        if lang in POWERSHELLS:
            return "powershell" if WIN32 else "pwsh"
        if lang == "javascript":
            return "node"
        return None  # html, css: nothing runs them

    def save_code_file(self, path: Path, code: str) -> None:
        if self._sandbox is None:
            super().save_code_file(path, code)
        else:
            self._sandbox.save(path, code)  # owned by the code's user

    def run_code_file(self, program: str, path: Path) -> RunOutcome:
        """stderr comes before stdout, as in AutoGen."""
        return self._run_command([program, str(path)])

    def run_python(self, args: list[str]) -> tuple[int, str]:
        exit_code, output, _ = self._run_command([self._python(), *args])
        return exit_code, output

    def _run_command(self, argv: list[str]) -> RunOutcome:
        result = run_program(
            argv,
            cwd=self._work_dir,
            timeout=float(self._timeout),
            env=self._env(),
            sandbox=self._sandbox,
        )
        return result.exit_code, result.stderr + result.stdout, result.timed_out

    def _python(self) -> str:
        program = self.interpreter_for("python")
        assert program is not None
        return program

    def install_packages(self, packages: list[str], interpreter: Interpreter) -> None:
        """Into the virtualenv if there is one, else into this executor's own folder (never
        into the environment parley runs in)."""
        pip = [self._python(), "-m", "pip", "install"]
        if self._venv is not None:
            where = f"the virtual environment {self._venv.env_dir}"
        else:
            folder = self._packages.create()
            if self._sandbox is not None:
                self._sandbox.show(folder)  # the code finds it on PYTHONPATH
            where = f"this executor's package folder {folder}"
            pip += ["--target", folder, "--upgrade"]
        pip_install(pip, packages, timeout=float(self._timeout), where=where)

    def _env(self) -> dict[str, str]:
        env = safe_env(self._extra_env)
        paths: list[str] = []
        if self._venv is not None:
            paths.append(self._venv.bin_path)
            env["VIRTUAL_ENV"] = self._venv.env_dir
        packages = self._packages.path
        if packages is not None:
            paths.append(os.path.join(packages, "bin"))  # the packages' scripts
            env["PYTHONPATH"] = packages
        if paths:
            env["PATH"] = os.pathsep.join(p for p in (*paths, env.get("PATH")) if p)
        return env


def _absolute_paths(context: SimpleNamespace | None) -> SimpleNamespace | None:
    """The virtualenv's interpreter, scripts folder and root as absolute paths, resolved now:
    code runs in the work dir, where a relative path would lead elsewhere. (``abspath``, not
    ``realpath``: a venv's python is a link to the base interpreter.)"""
    if context is None:
        return None
    return SimpleNamespace(
        env_exe=os.path.abspath(context.env_exe),
        bin_path=os.path.abspath(context.bin_path),
        env_dir=os.path.abspath(context.env_dir),
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
