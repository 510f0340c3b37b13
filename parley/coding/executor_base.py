"""The command-line executors' one block loop; each executor supplies only the steps that differ.

:class:`CommandLineExecutorBase` is what the local and the Docker executor share, and what a new
command-line executor subclasses: the constructor's checks, the execution policy, the code
extractor, the context manager, and :meth:`~CommandLineExecutorBase.execute_code_blocks`, the
loop over the blocks. An executor says how it spells a language
(:meth:`~CommandLineExecutorBase.normalize_language`), which languages it knows
(``supports_language``), which program runs one (``interpreter_for``), how a file is written
(``save_code_file``) and how it is run (``run_code_file``); for user functions, how the code's
Python runs (``run_python``) and where packages go (``install_packages``). These steps are
public: an executor implements them and the loop calls them; users call
``execute_code_blocks``. (Their names had a leading underscore before, ``_run``, ``_save``,
...: a subclass written so still works.) The loop's rules, the same for both executors:

* Blocks run in order; the first non-zero exit code ends the call. A block that runs out of time
  has exit code 124 and its output so far followed by ``"\\nTimeout"``.
* An unknown language gives ``"\\nunknown language X"`` and exit code 1; a known one that the
  executor cannot run although its policy says run (``html`` set to True, ``pwsh`` in the
  container) gives ``"\\nunknown language X: it can be saved but not executed"`` and exit code
  1. Both are AutoGen's local executor's text (its Docker executor said ``Unsupported language``).
* ``pip install`` lines are made quiet (:func:`silence_pip`), as AutoGen does.
* The file name comes from a first-line comment, ``# x.py`` or ``# filename: x.py`` (also
  ``//``, ``/* */``, ``<!-- -->``; AutoGen's rule, ``_paths``), else
  ``tmp_code_<md5>.<py or language>``. The file is written into the work dir (folders in its
  name are created), and ``code_file`` is the first block's file. A name leading outside the work dir ends the call at once
  with exit code 1 and ``"Filename is not in the workspace"``, earlier output dropped, as in
  AutoGen's local executor; a file that cannot be written (the name is a directory, a named
  pipe or a link that code left there, the disk is full) gives ``"\\ncould not write the code
  file: ..."`` and exit code 1. The file is only ever written as a regular file, opened
  without waiting (``_code_file``), so a FIFO at its name cannot hang the call: every
  host-side step of a block is bounded by the timeout.
* A language whose policy is False is saved, not run: ``"Code saved to <path>\\n"``.
* The work dir is checked again at each call (``_work_dir.check_work_dir``, a few ``stat``
  calls): a response cache opened inside it since the last call stops the blocks.
* An empty list gives exit code 0, no output and no file. (AutoGen's local executor crashed on
  it and its Docker executor raised ``ValueError``; a list with nothing to run has nothing that
  failed, and the agents never pass one.)
* User ``functions`` (``parley.coding.func_with_reqs``) are set up at the start of a call until
  that succeeds once (``_functions_setup``): their module is written into the work dir, their
  missing requirements installed (``install_packages``), the module imported once (``run_python``).
* A block's output is capped as it is read, at ``_process.MAX_OUTPUT_BYTES`` per stream (the
  container merges stdout and stderr into one), with a visible marker counting the bytes
  dropped; a timeout's ``"\\nTimeout"`` comes after the marker. The joined output is not cut
  again: a second cut could drop the marker or the ``Timeout`` line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from .._core.lifetime import StopsOnExit
from .._renamed import mirror_renamed
from ._blocks import POWERSHELLS, SHELLS, TIMEOUT_MSG
from ._code_file import write_regular_file
from ._functions_setup import FUNCTION_PROMPT_TEMPLATE, UserFunctions
from ._paths import (
    OutsideWorkDirError,
    default_filename,
    filename_from_first_line,
    resolve_in_work_dir,
)
from ._requirements import Interpreter
from ._work_dir import check_work_dir
from .base import CodeBlock, CommandLineCodeResult
from .func_with_reqs import UserFunction
from .markdown_code_extractor import MarkdownCodeExtractor

__all__ = ["DEFAULT_POLICY", "CommandLineExecutorBase", "RunOutcome", "silence_pip"]


RunOutcome = tuple[int, str, bool]
"""What running one file gave: exit code, output, whether it ran out of time."""

DEFAULT_POLICY: dict[str, bool] = {
    "bash": True, "shell": True, "sh": True,
    "pwsh": True, "powershell": True, "ps1": True,
    "python": True,
    "javascript": False, "html": False, "css": False,
}  # fmt: skip
"""AutoGen's: run shells and Python, save the rest. Each executor class holds its own copy."""

_PIP_IN_PYTHON = re.compile(r"^! ?pip install")
_PIP_IN_SHELL = re.compile(r"^pip install")


def silence_pip(code: str, lang: str) -> str:
    """Add ``-qqq`` to the ``pip install`` lines of a block (``!pip install`` in python), as
    AutoGen does, so install logs do not flood the conversation."""
    if lang == "python":
        pattern = _PIP_IN_PYTHON
    elif lang in SHELLS + POWERSHELLS:
        pattern = _PIP_IN_SHELL
    else:
        return code
    lines = code.split("\n")
    for i, line in enumerate(lines):
        match = pattern.search(line)
        if match is not None and "-qqq" not in line:
            lines[i] = line.replace(match.group(0), match.group(0) + " -qqq", 1)
    return "\n".join(lines)


class CommandLineExecutorBase(StopsOnExit):
    """Base of the local and Docker executors; a context manager that calls :meth:`stop`.

    **Writing an executor.** Subclass it, call ``__init__`` with the timeout, the work dir and
    the policies, and implement :meth:`normalize_language`, :meth:`interpreter_for` and
    :meth:`run_code_file` (and, to take user functions, :meth:`run_python` and
    :meth:`install_packages`); override :meth:`supports_language`, :meth:`save_code_file` or
    :meth:`stop` where yours differs. The loop owns the rest: the order of blocks, file names,
    the output cap, the messages, the functions' setup."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        mirror_renamed(cls, _RENAMED)

    DEFAULT_EXECUTION_POLICY: ClassVar[dict[str, bool]] = dict(DEFAULT_POLICY)
    FUNCTION_PROMPT_TEMPLATE: ClassVar[str] = FUNCTION_PROMPT_TEMPLATE

    def __init__(
        self,
        timeout: int,
        work_dir: Path | str,
        execution_policies: dict[str, bool] | None,
        functions: Sequence[UserFunction] = (),
        functions_module: str = "functions",
    ) -> None:
        if timeout < 1:
            raise ValueError("Timeout must be greater than or equal to 1.")
        self._user_functions = UserFunctions(functions, functions_module)
        work_dir = Path(work_dir)
        check_work_dir(work_dir)
        work_dir.mkdir(exist_ok=True)  # parents are not created, as in AutoGen
        self._timeout = timeout
        self._work_dir = work_dir
        self.execution_policies = dict(self.DEFAULT_EXECUTION_POLICY)
        if execution_policies is not None:
            self.execution_policies.update(execution_policies)

    @property
    def timeout(self) -> int:
        """Seconds each block may run."""
        return self._timeout

    @property
    def work_dir(self) -> Path:
        """Where code files are written."""
        return self._work_dir

    @property
    def functions(self) -> list[UserFunction]:
        """The user functions the code can import (a copy of the list given)."""
        return self._user_functions.functions

    @property
    def functions_module(self) -> str:
        """The module the user functions are importable from."""
        return self._user_functions.module

    def format_functions_for_prompt(self, prompt_template: str = FUNCTION_PROMPT_TEMPLATE) -> str:
        """``prompt_template`` with ``$module_name`` and ``$functions`` (the functions' stubs)
        filled in, for an assistant's system message; KeyError for any other ``$name``."""
        return self._user_functions.format_for_prompt(prompt_template)

    @property
    def code_extractor(self) -> MarkdownCodeExtractor:
        """Finds the fenced code blocks of a message."""
        return MarkdownCodeExtractor()

    def execute_code_blocks(self, code_blocks: list[CodeBlock]) -> CommandLineCodeResult:
        """Run the blocks in order; stop at the first non-zero exit code (the module's rules).

        Raises :class:`~parley.exceptions.ExecutionCancelledError` if the
        ``parley._core.runtime.run_in_thread`` call running it is cancelled (the block is stopped
        first), ``ValueError`` if the user functions cannot be set up (``"Functions failed to
        load: ..."``, ``"Pip install failed. ..."``), and the local executor ``ValueError`` for
        a dangerous shell command.
        """
        outputs: list[str] = []
        exit_code = 0
        first_file: str | None = None
        check_work_dir(self._work_dir)  # a cache may have been opened inside it since
        self._user_functions.set_up(self)
        for block in code_blocks:
            lang = self.normalize_language(block.language, block.code)
            execute = self.execution_policies.get(lang, False)
            program = self.interpreter_for(lang) if execute else None
            if not self.supports_language(lang) or (execute and program is None):
                why = ": it can be saved but not executed" if self.supports_language(lang) else ""
                outputs.append(f"\nunknown language {lang}{why}")
                exit_code = 1
                break
            code = silence_pip(block.code, lang)
            filename = filename_from_first_line(code) or default_filename(
                code, "py" if lang == "python" else lang
            )
            try:
                path = self.write_code_file(filename, code)
            except OutsideWorkDirError:
                return CommandLineCodeResult(exit_code=1, output="Filename is not in the workspace")
            except OSError as error:
                outputs.append(f"\ncould not write the code file: {error}")
                exit_code = 1
                break
            first_file = first_file or str(path)
            if program is None:
                outputs.append(f"Code saved to {path}\n")
                exit_code = 0
                continue
            exit_code, output, timed_out = self.run_code_file(program, path)
            outputs.append(output + "\n" + TIMEOUT_MSG if timed_out else output)
            if exit_code != 0:
                break
        return CommandLineCodeResult(
            exit_code=exit_code,
            output="".join(outputs),
            code_file=first_file,
        )

    # -- the steps an executor supplies (public: an executor implements them, the loop calls them)

    def normalize_language(self, language: str, code: str) -> str:
        """The block's language as this executor spells it (lower case, aliases resolved);
        may refuse the block by raising (the local executor's dangerous-command guard)."""
        raise NotImplementedError

    def supports_language(self, lang: str) -> bool:
        """Whether this executor knows ``lang`` at all (to save it, if not to run it)."""
        return lang in self.DEFAULT_EXECUTION_POLICY

    def interpreter_for(self, lang: str) -> str | None:
        """The program that runs a file of ``lang``; None if this executor cannot run it."""
        raise NotImplementedError

    def write_code_file(self, filename: str, code: str) -> Path:
        """Write ``code`` as ``filename`` inside the work dir; raises OutsideWorkDirError."""
        path = resolve_in_work_dir(self._work_dir, filename)
        self.save_code_file(path, code)
        return path

    def save_code_file(self, path: Path, code: str) -> None:
        """Write the file ``path`` (inside the work dir), creating its folders; only as a
        regular file (``_code_file``)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        write_regular_file(path, code)

    def run_code_file(self, program: str, path: Path) -> RunOutcome:
        """Run the written file ``path`` with ``program`` (what :meth:`interpreter_for` gave),
        within :attr:`timeout`: ``(exit code, output, whether it ran out of time)``. At the
        timeout, stop every process the block started and return the output so far."""
        raise NotImplementedError

    def run_python(self, args: list[str]) -> tuple[int, str]:
        """Run the code's Python with ``args`` in the work dir, as code runs (the functions'
        setup); its exit code and output."""
        raise NotImplementedError

    def install_packages(self, packages: list[str], interpreter: Interpreter) -> None:
        """Make ``packages`` importable by the code, which runs with ``interpreter``;
        ``ValueError`` if that fails (``_requirements.pip_install``)."""
        raise NotImplementedError

    # -- lifetime -------------------------------------------------------------------------------

    def stop(self) -> None:
        """Release what the executor holds (nothing, by default)."""


# The steps' names before they were public; kept working (parley._renamed).
_RENAMED = {
    "normalize_language": "_language",
    "supports_language": "_supports",
    "interpreter_for": "_interpreter",
    "write_code_file": "_write",
    "save_code_file": "_save",
    "run_code_file": "_run",
    "run_python": "_run_python",
    "install_packages": "_install",
}
mirror_renamed(CommandLineExecutorBase, _RENAMED)
