"""The commands of :class:`~parley.agents.AutonomousAgent`: the built-in ones (files in the
workspace, Python through a code executor, ``task_complete``) and the user's registered
functions, in one table the prompt lists and the loop runs.

Every built-in file command resolves its path inside the workspace
(:func:`parley.coding._paths.resolve_in_work_dir`): ``../x``, an absolute path elsewhere or a
symlink pointing out is refused with an error result, and nothing is touched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._core.runtime import run_in_thread
from ..coding._paths import resolve_in_work_dir
from ..coding.base import CodeBlock, CodeExecutor
from ..exceptions import OutsideWorkDirError
from ._registered import registered_functions

__all__ = [
    "BUILTIN_COMMANDS",
    "FILE_COMMANDS",
    "FINISH_COMMANDS",
    "PYTHON_COMMANDS",
    "Command",
    "builtin_commands",
    "check_command_names",
    "run_command",
    "user_commands",
]

FILE_COMMANDS = ("read_file", "write_file", "append_file", "delete_file", "list_files")
PYTHON_COMMANDS = ("execute_python", "execute_python_file")
BUILTIN_COMMANDS = (*FILE_COMMANDS, *PYTHON_COMMANDS, "task_complete")
# The model may also say "shutdown" (AutoGPT's older name for it) when task_complete is on.
FINISH_COMMANDS = ("task_complete", "shutdown")
# A result longer than this is cut: one file or program output must not fill the history.
MAX_RESULT_CHARS = 6000
_MAX_LISTED = 200

Run = Callable[[dict[str, Any]], Awaitable[str]]


@dataclass(frozen=True)
class Command:
    """A command the model may choose: its name, what it does, the JSON schema of its
    arguments (``{"type": "object", "properties": ..., "required": [...]}``) and the
    coroutine running it (``None`` for ``task_complete``, which the loop itself handles)."""

    name: str
    description: str
    parameters: Mapping[str, Any] = field(default_factory=dict)
    run: Run | None = None


def _schema(**props: str) -> dict[str, Any]:
    """An object schema of string arguments; a name ending in ``?`` is optional."""
    return {
        "type": "object",
        "properties": {
            k.rstrip("?"): {"type": "string", "description": d} for k, d in props.items()
        },
        "required": [k for k in props if not k.endswith("?")],
    }


def check_command_names(commands: Collection[str] | None, has_executor: bool) -> tuple[str, ...]:
    """The built-ins to enable (the user's choice, checked); the default is every file command
    and ``task_complete``, plus the Python ones when there is an executor."""
    if commands is None:
        python = PYTHON_COMMANDS if has_executor else ()
        return (*FILE_COMMANDS, *python, "task_complete")
    if isinstance(commands, str):
        raise TypeError(f"commands must be a collection of names, e.g. [{commands!r}]")
    unknown = sorted(set(commands) - set(BUILTIN_COMMANDS))
    if unknown:
        raise ValueError(
            f"unknown built-in command(s) {unknown}; the built-ins are {list(BUILTIN_COMMANDS)} "
            "(register your own functions with register_for_llm / register_for_execution)"
        )
    asked_python = sorted(set(commands) & set(PYTHON_COMMANDS))
    if asked_python and not has_executor:
        raise ValueError(
            f"{asked_python} need a code executor: pass code_executor= (e.g. "
            "parley.coding.LocalCommandLineCodeExecutor(work_dir=...) or a Docker one); code "
            "execution is never enabled without one"
        )
    return tuple(c for c in BUILTIN_COMMANDS if c in commands)


def builtin_commands(
    names: Collection[str], workspace: Path, executor: CodeExecutor | None
) -> dict[str, Command]:
    """The enabled built-in commands, bound to ``workspace`` and ``executor``."""
    files = _Files(workspace)
    table = {
        "read_file": Command(
            "read_file",
            "Read a text file of your workspace.",
            _schema(filename="path of the file in the workspace"),
            _threaded(files.read),
        ),
        "write_file": Command(
            "write_file",
            "Write a text file in your workspace (replacing it if it exists).",
            _schema(filename="path of the file in the workspace", text="the whole content"),
            _threaded(files.write),
        ),
        "append_file": Command(
            "append_file",
            "Add text at the end of a file of your workspace (created if missing).",
            _schema(filename="path of the file in the workspace", text="the text to add"),
            _threaded(files.append),
        ),
        "delete_file": Command(
            "delete_file",
            "Delete a file of your workspace.",
            _schema(filename="path of the file in the workspace"),
            _threaded(files.delete),
        ),
        "list_files": Command(
            "list_files",
            "List the files of a directory of your workspace, recursively.",
            _schema(**{"directory?": "directory in the workspace (default: its root)"}),
            _threaded(files.list),
        ),
        "task_complete": Command(
            "task_complete",
            "Stop: the goals are reached (or cannot be). Say why in reason.",
            _schema(reason="the outcome, as a short report"),
        ),
    }
    if executor is not None:
        python = _Python(executor, files)
        table["execute_python"] = Command(
            "execute_python",
            "Run Python code and see what it prints (print what you want to see).",
            _schema(code="the Python source"),
            _threaded(python.run_code),
        )
        table["execute_python_file"] = Command(
            "execute_python_file",
            "Run a Python file of your workspace and see what it prints.",
            _schema(filename="path of the .py file in the workspace"),
            _threaded(python.run_file),
        )
    return {n: table[n] for n in names}


def user_commands(
    llm_config: Mapping[str, Any] | None,
    function_map: Mapping[str, Callable[..., Any]],
    execute: Callable[[str, dict[str, Any]], Awaitable[str]],
) -> dict[str, Command]:
    """Commands from the functions registered on the agent: the schemas in ``llm_config``
    (``register_for_llm``), and functions in the function map without one (described by
    their docstring); ``execute(name, args)`` runs one as a function call."""
    return {
        name: Command(name, registered.description, registered.parameters, _caller(execute, name))
        for name, registered in registered_functions(llm_config, function_map).items()
    }


def _caller(execute: Callable[[str, dict[str, Any]], Awaitable[str]], name: str) -> Run:
    async def run(args: dict[str, Any]) -> str:
        return await execute(name, args)

    return run


async def run_command(command: Command, args: Mapping[str, Any]) -> str:
    """Run ``command`` with the model's ``args``; every failure is an ``Error: ...`` result."""
    if command.run is None:
        return f"Error: {command.name} is not a command that runs"
    problem = _check_args(command, args)
    if problem:
        return f"Error: {problem}"
    result = await command.run(dict(args))
    if len(result) > MAX_RESULT_CHARS:
        cut = len(result) - MAX_RESULT_CHARS
        result = f"{result[:MAX_RESULT_CHARS]}\n... ({cut} more characters not shown)"
    return result


def _check_args(command: Command, args: Mapping[str, Any]) -> str | None:
    props = command.parameters.get("properties")
    if not isinstance(props, Mapping):
        return None  # a function without a schema: its own validation speaks
    missing = [r for r in command.parameters.get("required", ()) if r not in args]
    unknown = [a for a in args if a not in props]
    expected = ", ".join(props) or "no arguments"
    if missing:
        return f"{command.name} needs the argument(s) {missing} (its arguments: {expected})"
    if unknown and command.name in BUILTIN_COMMANDS:
        return f"{command.name} has no argument(s) {unknown} (its arguments: {expected})"
    return None


def _threaded(fn: Callable[..., str]) -> Run:
    """A built-in's blocking file or executor work, run in a worker thread; its errors become
    results the model reads."""

    async def run(args: dict[str, Any]) -> str:
        try:
            return await run_in_thread(fn, **args)
        except OutsideWorkDirError:
            shown = args.get("filename", args.get("directory"))
            return (
                f"Error: {shown!r} is outside your workspace; use a relative path inside it "
                "(no '..', no absolute path elsewhere)"
            )
        except (OSError, UnicodeError, TypeError, ValueError) as e:
            return f"Error: {type(e).__name__}: {e}"

    return run


class _Files:
    """The file commands, confined to the workspace."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, name: Any) -> Path:
        if not isinstance(name, str) or not name.strip():
            raise ValueError("the path must be a non-empty string")
        return resolve_in_work_dir(self.root, name.strip())

    def read(self, filename: str) -> str:
        path = self._path(filename)
        if not path.is_file():
            return f"Error: there is no file {filename!r} in the workspace"
        return path.read_text(encoding="utf-8", errors="replace")

    def write(self, filename: str, text: str) -> str:
        path = self._path(filename)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(str(text), encoding="utf-8")
        return f"Wrote {len(str(text))} characters to {filename}."

    def append(self, filename: str, text: str) -> str:
        path = self._path(filename)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as f:
            f.write(str(text))
        return f"Appended {len(str(text))} characters to {filename}."

    def delete(self, filename: str) -> str:
        path = self._path(filename)
        if not path.is_file():
            return f"Error: there is no file {filename!r} in the workspace"
        path.unlink()
        return f"Deleted {filename}."

    def list(self, directory: str = ".") -> str:
        root = self.root.resolve()
        path = root if str(directory).strip() in ("", ".", "./") else self._path(directory)
        if not path.is_dir():
            return f"Error: there is no directory {directory!r} in the workspace"
        found = sorted(str(p.relative_to(root)) for p in path.rglob("*") if p.is_file())
        if not found:
            return "(no files)"
        more = len(found) - _MAX_LISTED
        return "\n".join(found[:_MAX_LISTED]) + (f"\n... and {more} more" if more > 0 else "")


class _Python:
    """The Python commands, through the user's code executor (a sandbox if it is one)."""

    def __init__(self, executor: CodeExecutor, files: _Files) -> None:
        self.executor = executor
        self.files = files

    def run_code(self, code: str) -> str:
        result = self.executor.execute_code_blocks([CodeBlock(code=code, language="python")])
        output = result.output.strip() or "(no output)"
        return f"exit code {result.exit_code}\n{output}"

    def run_file(self, filename: str) -> str:
        path = self.files._path(filename)
        if not path.is_file():
            return f"Error: there is no file {filename!r} in the workspace"
        return self.run_code(path.read_text(encoding="utf-8"))
