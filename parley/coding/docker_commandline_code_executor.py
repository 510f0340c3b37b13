"""Run code blocks in a Docker container (AutoGen's ``DockerCommandLineCodeExecutor``).

Same constructor, results and rules as AutoGen; the block loop, shared with the local executor,
is ``parley.coding.executor_base`` (its docstring has the rules). parley's sandbox defaults:

* **Lazy.** Building the executor (and so an agent) needs no engine: the container is created
  when the first block runs. A missing or stopped engine is then one RuntimeError saying how to
  fix it; code never falls back to running on the host.
* **Image.** ``image=None`` means ``$PARLEY_SANDBOX_IMAGE`` if set, else parley's own image
  ``parley-sandbox:latest`` if the engine has it, else AutoGen's ``python:3-slim``. An image that
  is absent is pulled (never parley's own: a registry's image of that name would be someone
  else's); if that fails (no registry), the error names ``parley sandbox build``, which builds
  parley's image with or without a registry (``parley.coding.images``).
* **Locked down.** No network (``network=True`` opts in), no capabilities, ``no-new-privileges``,
  a read-only root filesystem with a tmpfs ``/tmp`` (``HOME`` is ``/tmp``), a memory limit
  (``mem_limit``, default 512m, no swap) and a process limit (``pids_limit``, default 256). The
  only host directory the code sees is ``bind_dir`` (default ``work_dir``) at ``/workspace``.
* **A work dir of its own.** The default ``work_dir`` is ``coding``, a dedicated folder (AutoGen:
  ``.``), and one that holds a response cache, a virtualenv, parley's sources or a git
  repository is refused with ``UnsafeWorkDirError``, at construction and at each call
  (``parley.coding._work_dir``): code that can write those can get code run on the host.
* **Not root.** Code runs as the host user's uid:gid, so what it writes in ``work_dir`` belongs to
  that user. When parley runs as root, code runs as the work dir's owner, or as uid:gid
  1000:1000 (the ``sandbox`` user of parley's image) if root owns it; a root-owned work dir is
  handed to that uid only if parley created it or it is empty (``_code_user`` has the
  rules). ``user=`` overrides the choice.
* **Timeouts kill everything.** At the timeout every process of the block is killed, whatever
  its process group or session; the result is exit code 124 with the output so far and
  ``"\\nTimeout"``, and the executor stays usable. Processes a block leaves running in the
  background are killed when it ends. A block killed by the memory limit gets exit code 137
  and a line saying so.
* **Cancelling stops the block.** When the chat running a block is cancelled (its task is
  cancelled, or Ctrl-C hits a sync chat; the agents run executors through
  ``parley._core.runtime.run_in_thread``), every process of the block is killed within a second and
  :meth:`execute_code_blocks` raises :class:`~parley.exceptions.ExecutionCancelledError` — a
  cancelled call has no result to report, and the caller is being cancelled anyway. The
  executor stays usable. (A direct call interrupted by Ctrl-C kills the block and raises
  ``KeyboardInterrupt``.)
* **One container, reused, that dies with its process.** Blocks run with ``docker exec`` in the
  executor's container; it is removed by :meth:`stop`, on leaving a ``with`` block, when the
  executor is garbage collected and at interpreter exit. Should the process be killed outright
  (SIGKILL, the OOM killer), the container notices within a second — it holds a connection
  from this process open on its stdin — and stops, killing the block that was running, and the
  engine removes it (``auto_remove=False``: it is only stopped, and the next executor that
  starts a container on this machine removes it). ``stop_container=False`` opts out: that
  container outlives the process. :meth:`restart` gives a fresh container.
* Output (stdout and stderr in the order written; Python runs unbuffered) is capped with a
  visible truncation marker. A first-line comment names the block's file, as in AutoGen
  (``# x.py`` or ``# filename: x.py``: ``parley.coding._paths``), and a name outside
  ``work_dir`` gives exit code 1, ``"Filename is not in the workspace"``, and ends
  the call (AutoGen kept the earlier blocks' output; its local executor did not).
* Languages: ``python`` (and ``py``), ``bash``, ``sh``, ``shell`` run; ``javascript`` (and
  ``js``), ``html`` and ``css`` are saved, not run (AutoGen's policy). A language the policy
  says to run but the container has no interpreter for (PowerShell, or ``javascript`` set to
  True) gives exit code 1 and ``"\\nunknown language X: it can be saved but not executed"``;
  any other language ``"\\nunknown language X"``: the local executor's texts (AutoGen's
  Docker executor said ``"Unsupported language X\\n"``).
* An empty block list gives exit code 0 and no output, as with the local executor (AutoGen
  raised ``ValueError``).
* **User functions** (a parley extension; AutoGen 0.2.40 had none here): ``functions=[...]``
  and ``functions_module=`` work as with the local executor (``parley.coding._functions_setup``:
  the module is written into the work dir and imported once in the container at the first
  call). Requirements the container's Python already has need nothing. The others are
  downloaded on this machine, which has the package index while the container has no network:
  pip fetches wheels for the container's Python version and platform (``--only-binary=:all:
  --python-version ... --platform manylinux_...``, ``_requirements.cross_platform_options``)
  into a folder of this executor's outside the work dir, which the container sees read-only at
  ``/parley-packages``, on its ``PYTHONPATH``. Outside the work dir, because pip runs on the host
  (as root, perhaps) and must never write where code could have planted a symlink; read-only,
  so code cannot change the packages. :meth:`stop` removes the folder. A package with no wheel
  for the container must be in the image. With a ``bind_dir`` of its own (parley itself in a
  container), the engine cannot see that folder: missing requirements are then an error.

:func:`run_code_in_docker` is the same sandbox for the legacy ``code_utils.execute_code`` path,
with one cached container per work dir and image (AutoGen made a container, and committed a new
image, for every block).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import uuid
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from ._blocks import PYTHON_VARIANTS, legacy_timeout_logs
from ._code_user import choose_user, is_fresh, prepare_work_dir, write_as
from ._functions_setup import PackageFolder
from ._paths import OutsideWorkDirError
from ._requirements import Interpreter, cross_platform_options, pip_install
from ._work_dir import DEFAULT_WORK_DIR, check_work_dir
from .docker._engine import default_image_candidates, default_images
from .docker._sandbox import Ending, RunResult, Sandbox, SandboxSettings
from .executor_base import DEFAULT_POLICY, CommandLineExecutorBase, RunOutcome
from .func_with_reqs import UserFunction

__all__ = ["DockerCommandLineCodeExecutor", "run_code_in_docker"]

_INTERPRETERS = {"python": "python", "bash": "bash", "sh": "sh", "shell": "sh"}
_PACKAGES = "/parley-packages"  # where the container sees the functions' installed requirements


class DockerCommandLineCodeExecutor(CommandLineExecutorBase):
    """Writes each code block to a file in ``work_dir`` and runs it in a sandbox container,
    one after another, stopping at the first failure."""

    DEFAULT_EXECUTION_POLICY: ClassVar[dict[str, bool]] = dict(DEFAULT_POLICY)
    LANGUAGE_ALIASES: ClassVar[dict[str, str]] = {"py": "python", "js": "javascript"}

    def __init__(
        self,
        image: str | None = None,
        container_name: str | None = None,
        timeout: int = 60,
        work_dir: Path | str = Path(DEFAULT_WORK_DIR),
        bind_dir: Path | str | None = None,
        auto_remove: bool = True,
        stop_container: bool = True,
        execution_policies: dict[str, bool] | None = None,
        *,
        network: bool | str = False,
        user: str | None = None,
        mem_limit: str | int | None = "512m",
        pids_limit: int | None = 256,
        read_only: bool = True,
        functions: Sequence[UserFunction] = (),
        functions_module: str = "functions",
    ) -> None:
        """AutoGen's parameters (``image=None``: ``$PARLEY_SANDBOX_IMAGE`` if set, else
        ``parley-sandbox:latest`` if present, else ``python:3-slim``), then parley's (keyword only): ``network`` (True for the
        engine's default network, or a network name), ``user`` (``"uid:gid"`` code runs as),
        ``mem_limit`` and ``pids_limit`` (None: unlimited), ``read_only`` (root filesystem),
        ``functions`` and ``functions_module`` (as ``LocalCommandLineCodeExecutor``'s).

        ``auto_remove=False`` makes :meth:`stop` (and the death of this process) stop the
        container without removing it; ``stop_container=False`` leaves it running when the
        interpreter exits, and when this process dies.
        """
        # A work dir parley creates, or finds empty, may be handed to the code's user later.
        work_dir = Path(work_dir)
        fresh = is_fresh(work_dir)
        super().__init__(timeout, work_dir, execution_policies, functions, functions_module)
        self._fresh_work_dir = fresh
        self._bind_dir = Path(bind_dir) if bind_dir is not None else work_dir
        self._packages = PackageFolder(self)
        self._auto_remove = auto_remove
        self._user = user or choose_user(work_dir)
        self._sandbox = Sandbox(
            SandboxSettings(
                images=(image,) if image else default_images(),
                name=container_name or f"parley-code-exec-{uuid.uuid4()}",
                bind_dir=str(self._bind_dir.resolve()),
                user=self._user,
                network=network,
                mem_limit=mem_limit,
                pids_limit=pids_limit,
                read_only=read_only,
                lifeline=stop_container,
                auto_remove=auto_remove and stop_container,
            )
        )
        # The finalizer holds the sandbox, never the executor, so the executor can be collected;
        # it also runs at interpreter exit (weakref.finalize registers with atexit).
        ending: Ending = ("remove" if auto_remove else "stop") if stop_container else "keep"
        self._finalizer = weakref.finalize(self, self._sandbox.close, ending)

    @classmethod
    def _with_images(
        cls, images: list[str], work_dir: Path, timeout: int
    ) -> DockerCommandLineCodeExecutor:
        """An executor trying ``images`` in order (the legacy ``use_docker`` list)."""
        executor = cls(work_dir=work_dir, timeout=timeout)
        sandbox = executor._sandbox
        sandbox.settings = dataclasses.replace(sandbox.settings, images=tuple(images))
        return executor

    @property
    def container_name(self) -> str:
        """The name of the container (it exists only between the first block and :meth:`stop`)."""
        return self._sandbox.settings.name

    @property
    def image(self) -> str | None:
        """The image the container runs, once it has been started."""
        return self._sandbox.image

    @property
    def bind_dir(self) -> Path:
        """The host path the engine mounts at ``/workspace`` (``work_dir`` unless told)."""
        return self._bind_dir

    def restart(self) -> None:
        """Remove the container; the next block runs in a fresh one (``work_dir`` is kept)."""
        self._sandbox.remove_container()

    def stop(self) -> None:
        """Remove the container (only stop it if ``auto_remove=False``) and disconnect."""
        # The finalizer stays: the executor may be used again (a new container starts), and
        # closing an already closed sandbox at exit does nothing.
        self._sandbox.close("remove" if self._auto_remove else "stop")
        if self._packages.path is not None:
            self._packages.remove()
            self._user_functions.reset()  # the next container gets a new folder, set up anew

    # -- the steps of the block loop (parley.coding.executor_base) -----------------------------

    def normalize_language(self, language: str, code: str) -> str:
        lang = language.lower()
        return self.LANGUAGE_ALIASES.get(lang, lang)

    def interpreter_for(self, lang: str) -> str | None:
        return _INTERPRETERS.get(lang)

    def save_code_file(self, path: Path, code: str) -> None:
        """Write a code file in the work dir, owned by the user the code runs as."""
        write_as(path, code, self._work_dir.resolve(), self._user)

    def run_code_file(self, program: str, path: Path) -> RunOutcome:
        """Raises :class:`~parley.exceptions.ExecutionCancelledError` if the
        ``parley._core.runtime.run_in_thread`` call running it is cancelled (the block is stopped)."""
        result = self._exec(program, path, self._timeout)
        return result.exit_code, self._output(result), result.timed_out

    def run_python(self, args: list[str]) -> tuple[int, str]:
        result = self._exec_argv([_INTERPRETERS["python"], *args], self._timeout)
        return result.exit_code, self._output(result)

    def install_packages(self, packages: list[str], interpreter: Interpreter) -> None:
        """Download wheels for the container's Python, on this machine, into the folder the
        container sees read-only (the module's description)."""
        folder = self._packages.path
        if folder is None:
            raise ValueError(
                f"Pip install failed. The container's Python lacks {', '.join(packages)}, and "
                "parley cannot install it there: with a bind_dir of its own (parley running in "
                "a container), the engine cannot see parley's package folder. Use an image that "
                "has the packages."
            )
        pip = [sys.executable, "-m", "pip", "install", "--target", folder, "--upgrade"]
        pip += ["--no-compile", *cross_platform_options(interpreter)]
        hint = (
            f"The container runs Python {interpreter.python_version}: pip, on this machine, may "
            "only use wheels built for it and its platform; a package without one must be "
            "installed in the image."
        )
        where = "the container's package folder"
        pip_install(pip, packages, timeout=float(self._timeout), where=where, hint=hint)

    def _exec(self, program: str, path: Path, timeout: float) -> RunResult:
        relative = path.relative_to(self._work_dir.resolve()).as_posix()
        # "./" keeps a name like "-x.py" from being read as an option.
        argument = f"./{relative}" if relative.startswith("-") else relative
        return self._exec_argv([program, argument], timeout)

    def _exec_argv(self, argv: list[str], timeout: float) -> RunResult:
        if self._sandbox.container_id is None:
            prepare_work_dir(self._work_dir, self._user, self._fresh_work_dir)
            self._mount_packages()
        return self._sandbox.run(argv, timeout)

    def _mount_packages(self) -> None:
        """Before a container is made: give it the folder for the functions' missing
        requirements, read-only, on its ``PYTHONPATH`` (if they have any)."""
        if not self._user_functions.requirements or self._packages.path is not None:
            return
        if self._bind_dir.resolve() != self._work_dir.resolve():
            return  # the engine's paths are not ours: install_packages says so if it is needed
        folder = self._packages.create()
        os.chmod(folder, 0o755)  # the code's user may not be its owner
        settings = self._sandbox.settings
        self._sandbox.settings = dataclasses.replace(
            settings,
            read_only_binds=((folder, _PACKAGES),),
            environment={**settings.environment, "PYTHONPATH": _PACKAGES},
        )

    def _output(self, result: RunResult) -> str:
        """The output of a run, with a line saying so when the memory limit killed it."""
        if not result.out_of_memory:
            return result.output
        return (
            result.output + f"\nKilled: the code ran out of memory (the sandbox's limit is "
            f"{self._sandbox.settings.mem_limit}; see mem_limit)"
        )


# -- the legacy path: code_utils.execute_code(use_docker=...) ----------------------------------

_legacy_lock = threading.Lock()
_legacy_executors: dict[tuple[str, tuple[str, ...]], DockerCommandLineCodeExecutor] = {}


def _legacy_interpreter(lang: str) -> str:
    if lang in PYTHON_VARIANTS:
        return "python"
    if lang.startswith("python") or lang in ("bash", "sh"):
        return lang
    if lang == "shell":
        return "sh"
    raise NotImplementedError(f"{lang} not recognized in code execution")


def run_code_in_docker(
    *,
    code: str,
    lang: str,
    filename: str,
    work_dir: str,
    timeout: float,
    image: str | list[str] | bool,
) -> tuple[int, str, str | None]:
    """Run ``code`` as ``filename`` in ``work_dir`` in a sandbox; ``(exit_code, logs, image)``.

    ``image`` is ``True`` (``$PARLEY_SANDBOX_IMAGE`` if set, then AutoGen's ``python:3-slim``,
    ``python:3``...), an image name, or a list tried in order. The container of a (work dir,
    images) pair is created once and reused for the life of the process; no image is committed.
    Legacy results: a timeout is exit code 1 with the output so far and ``"Timeout"``; logs are
    stdout and stderr together. Raises RuntimeError if the engine or the image is missing.
    """
    interpreter = _legacy_interpreter(lang)
    if image is True:
        images = default_image_candidates()
    elif isinstance(image, str):
        images = [image]
    elif isinstance(image, list) and image:
        images = [str(i) for i in image]
    else:
        raise ValueError(f"use_docker must be True, an image name or a list of them, not {image!r}")
    root = Path(work_dir).resolve()
    root.mkdir(parents=True, exist_ok=True)
    key = (str(root), tuple(images))
    with _legacy_lock:
        executor = _legacy_executors.get(key)
        if executor is None:
            executor = DockerCommandLineCodeExecutor._with_images(
                images, root, max(1, int(timeout))
            )
            _legacy_executors[key] = executor
    check_work_dir(root)
    try:
        path = executor.write_code_file(filename, code)
    except OutsideWorkDirError:
        return 1, "Filename is not in the workspace", None
    except OSError as error:  # a FIFO or link left at the name (never waited on), a full disk
        return 1, f"could not write the code file: {error}", None
    result = executor._exec(interpreter, path, timeout)
    logs = executor._output(result)
    if result.timed_out:
        return 1, legacy_timeout_logs(logs), executor.image
    return result.exit_code, logs, executor.image


def _close_legacy_executors() -> None:
    """Remove the containers of :func:`run_code_in_docker` (they are also removed at exit)."""
    with _legacy_lock:
        executors = list(_legacy_executors.values())
        _legacy_executors.clear()
    for executor in executors:
        executor.stop()
