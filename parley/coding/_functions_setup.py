"""An executor's user functions: the module code imports them from, set up before the first block.

``LocalCommandLineCodeExecutor(functions=[...])`` and the Docker executor's ``functions=``
(a parley extension) hold a :class:`UserFunctions`. The functions module's text is built at
construction, so a function whose source cannot be read fails there, not at the first block.
:meth:`UserFunctions.set_up` runs at the start of every ``execute_code_blocks`` call until it
succeeds once (a failed setup is tried again at the next call), as AutoGen's did:

1. write ``<work_dir>/<functions_module>.py`` (``func_with_reqs.functions_module_text``);
2. if the functions have ``python_packages`` (string functions' included, which AutoGen
   forgot): ask the code's interpreter what it has installed (``_requirements.PROBE``) and have
   the executor install what it lacks (``logging.info("Ensuring packages are installed in
   executor.")``, as AutoGen);
3. import the module once in the code's interpreter, with the code's environment, in the work
   dir (``python -B -c "import <module>"``); a failure is
   ``ValueError("Functions failed to load: <output>")``. Unlike AutoGen, this leaves no
   ``tmp_code_*.py`` copy of the module (nor a ``__pycache__``) in the work dir.

The executor supplies the steps that differ (:class:`FunctionsHost`): how a file is written,
how Python runs the way the code runs, and where missing packages are installed: often a
:class:`PackageFolder`, a folder of the executor's outside the work dir.
"""

from __future__ import annotations

import keyword
import logging
import shutil
import tempfile
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from string import Template
from typing import Protocol

from ._requirements import PROBE, Interpreter, checked_requirements, missing, parse_probe
from .func_with_reqs import UserFunction, functions_module_text, python_packages_of, to_stub

__all__ = ["FUNCTION_PROMPT_TEMPLATE", "FunctionsHost", "PackageFolder", "UserFunctions"]

logger = logging.getLogger(__name__)

FUNCTION_PROMPT_TEMPLATE = (
    "You have access to the following user defined functions. They can be imported from "
    "the module `$module_name` by their names, e.g. `from $module_name import foo` for a "
    "function called `foo`.\n\n$functions"
)
"""AutoGen's ``FUNCTION_PROMPT_TEMPLATE`` (``string.Template``: ``$module_name``, ``$functions``)."""


class FunctionsHost(Protocol):
    """The steps of the setup that an executor supplies."""

    def write_code_file(self, filename: str, code: str) -> Path:
        """Write ``code`` as ``filename`` in the work dir."""

    def run_python(self, args: list[str]) -> tuple[int, str]:
        """Run the code's Python with ``args``, as code runs; its exit code and output."""

    def install_packages(self, packages: list[str], interpreter: Interpreter) -> None:
        """Make ``packages`` importable by the code; ``ValueError`` if pip fails."""


class UserFunctions:
    """An executor's ``functions`` and ``functions_module``, and whether they are set up."""

    def __init__(self, functions: Sequence[UserFunction], module: str) -> None:
        """Raises ValueError for a bad module name or a function whose source cannot be read,
        :class:`~parley.exceptions.InvalidRequirementError` (a ValueError) for a
        ``python_packages`` entry that is not a requirement specifier (``--index-url=...``),
        TypeError for an item that is not a function."""
        if not module.isidentifier() or keyword.iskeyword(module):
            raise ValueError("Module name must be a valid Python identifier")
        self.functions = list(functions)
        self.module = module
        # Refused here, before any pip runs: an entry that is not a requirement specifier.
        self.requirements = checked_requirements(python_packages_of(self.functions))
        self._source = functions_module_text(self.functions) if self.functions else ""
        self._done = not self.functions
        self._lock = threading.Lock()  # two calls at once set up once

    def format_for_prompt(self, prompt_template: str) -> str:
        """``prompt_template`` with ``$module_name`` and ``$functions`` (the stubs, a blank line
        apart) filled in; KeyError for any other ``$name`` (``Template.substitute``)."""
        stubs = "\n\n".join(to_stub(f) for f in self.functions)
        return Template(prompt_template).substitute(module_name=self.module, functions=stubs)

    def reset(self) -> None:
        """Set up again at the next call (the executor has dropped its installed packages)."""
        with self._lock:
            self._done = not self.functions

    def set_up(self, host: FunctionsHost) -> None:
        """Steps 1-3 of the module's description, unless done already."""
        with self._lock:
            if self._done:
                return
            try:
                host.write_code_file(f"{self.module}.py", self._source)
            except OSError as error:  # a FIFO or link left at its name, a full disk
                raise ValueError(
                    f"Functions failed to load: could not write {self.module}.py: {error}"
                ) from error
            if self.requirements:
                interpreter = parse_probe(*host.run_python(["-c", PROBE]))
                needed = missing(self.requirements, interpreter)
                if needed:
                    logger.info("Ensuring packages are installed in executor.")
                    host.install_packages(needed, interpreter)
            exit_code, output = host.run_python(["-B", "-c", f"import {self.module}"])
            if exit_code != 0:
                raise ValueError(f"Functions failed to load: {output}")
            self._done = True


class PackageFolder:
    """A temporary folder, outside any work dir, that an executor installs the functions'
    missing requirements into (``pip install --target``); made on demand, removed by
    :meth:`remove` or when the executor is garbage collected (or at interpreter exit)."""

    def __init__(self, owner: object) -> None:
        self._paths: list[str] = []  # the folder, once made; shared with the finalizer
        weakref.finalize(owner, _remove_all, self._paths)

    @property
    def path(self) -> str | None:
        """The folder, if it has been made (and not removed since)."""
        return self._paths[0] if self._paths else None

    def create(self) -> str:
        """The folder, made now if need be."""
        if not self._paths:
            self._paths.append(tempfile.mkdtemp(prefix="parley-packages-"))
        return self._paths[0]

    def remove(self) -> None:
        """Remove the folder and what was installed in it."""
        _remove_all(self._paths)


def _remove_all(paths: list[str]) -> None:
    while paths:
        shutil.rmtree(paths.pop(), ignore_errors=True)
