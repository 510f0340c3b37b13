"""The local executor's sandbox (``sandbox=True``): each block runs under bubblewrap.

:class:`BwrapSandbox` builds, once per work dir, the ``bwrap`` command line a block's program
runs in; ``_process.run`` runs that command line under the usual supervisor, so everything
``_process`` promises (the timeout, cancellation, nothing outliving the block, a minimal
environment, capped output) still holds. What the block gets:

* **Namespaces.** Its own PID namespace with a private ``/proc``: only the block's processes
  exist there; parley and every other process of the host are out of sight and out of reach
  of ``kill``. Its own network namespace: a loopback of its own and no other interface, so
  nothing is reachable, not even a server on the host's ``127.0.0.1``. Its own IPC, UTS (host
  name ``sandbox``) and cgroup namespaces. ``--new-session`` (no ``TIOCSTI`` into a terminal)
  and ``--die-with-parent``.
* **Files.** A new, empty root that shows, read-only: ``/usr``, ``/bin``, ``/sbin``, ``/lib*``,
  ``/etc`` minus the files there that hold secrets (:data:`ETC_SECRETS`: shadow passwords,
  sudoers, SSH host keys, TLS private keys...), and the Python installations that run the code
  (the running interpreter's prefixes, a ``virtual_env_context``'s venv and its base), minus
  every pip configuration file (a venv's own ``pip.conf`` included) and every file parley
  registered as trusted (config lists, ``.env`` files, logs) that lie in them
  (``_sandbox_hidden``). Read-write:
  the work dir, at its own path, and a private tmpfs ``/tmp`` (:data:`TMP_BYTES`) that is also
  ``HOME`` and ``TMPDIR``. A fresh ``/dev``. Nothing else: not the user's home (``~/.ssh``,
  ``~/.config``, an ``OAI_CONFIG_LIST``), not parley's current directory, not other projects,
  not ``/sys``, ``/run`` or ``/var``.
* **User.** Never root. parley as a normal user: its own uid, in a user namespace that cannot
  create further ones (``--disable-userns``), with no capabilities. parley as root: bubblewrap
  builds the sandbox as root (only root can reach a work dir or a Python under ``/root``), then
  ``setpriv`` makes the block the uid:gid of ``_code_user``'s rules (the work dir's owner, or
  1000:1000) with no capabilities, before the code starts. ``no_new_privs`` throughout.
* **Limits**, set by ``prlimit`` inside the sandbox: :data:`PROCESS_LIMIT` processes
  (``RLIMIT_NPROC``: a fork bomb stops there), :data:`MEMORY_LIMIT` bytes of data per process
  (``RLIMIT_DATA``: a bigger allocation fails, ``MemoryError`` in Python), no core files. The
  process limit counts the processes of the block's uid in its user namespace, so when parley
  runs as a normal user it is the block's own. When parley runs as root there is no such
  namespace and it counts every process of that uid on the machine.

Unlike Docker there is no memory limit over the whole block and no separate file system for it:
the host's ``/usr`` and ``/etc`` are what programs see (so no ``apt-get``, but no image either).
A block's exit code is its program's; one killed by a signal is reported as 128 + the signal
(as a shell and Docker do), where unsandboxed local execution reports it negative.

:func:`check_available` probes once per process, with the same command line a block gets, and
raises :class:`~parley.exceptions.SandboxUnavailableError` naming what to install or enable when
bubblewrap is missing or cannot create its namespaces. Nothing here ever runs code unsandboxed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..exceptions import SandboxUnavailableError
from ._code_user import SANDBOX_UID, choose_user, prepare_work_dir, write_as
from ._sandbox_hidden import hidden, mask_args, pip_config_paths

__all__ = [
    "ETC_SECRETS",
    "MEMORY_LIMIT",
    "PROCESS_LIMIT",
    "TMP_BYTES",
    "BwrapSandbox",
    "check_available",
]

PROCESS_LIMIT = 256
"""Processes the block may have at once (Docker's ``pids_limit`` default)."""

MEMORY_LIMIT = 512 * 1024**2
"""Bytes of data (heap and private writable mappings) per process (Docker's ``mem_limit``)."""

TMP_BYTES = 256 * 1024**2
"""Size of the private ``/tmp`` (Docker's ``tmpfs_size``)."""

HOME = "/tmp"  # as in the Docker sandbox: private, empty, writable

ETC_SECRETS = (
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
    "/etc/sudoers", "/etc/sudoers.d", "/etc/security/opasswd",
    "/etc/ssh", "/etc/ssl/private", "/etc/krb5.keytab",
    "/etc/credstore", "/etc/credstore.encrypted",
    "/etc/NetworkManager/system-connections", "/etc/wireguard", "/etc/openvpn",
    "/etc/docker", "/etc/containers/auth.json",
    # Often hold a proxy or package index URL with a password in it.
    "/etc/environment", "/etc/pip.conf", "/etc/apt/auth.conf", "/etc/apt/auth.conf.d",
)  # fmt: skip
"""Files and directories of ``/etc`` the sandbox shows empty, where they exist."""

# Shown read-only at their own path (or, if a symlink, recreated as the same symlink).
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
_MIN_VERSION = (0, 8)  # --disable-userns
_PROBE_SECONDS = 30.0
# The caps bubblewrap keeps for setpriv when parley is root: to enter the work dir (bubblewrap
# changes to it before setpriv runs, and it may be another user's, mode 0700), to change uid,
# and to clear the rest; the code gets none of them.
_SETPRIV_CAPS = ("CAP_DAC_OVERRIDE", "CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
_HOST_ONLY_VARIABLES = ("TMPDIR", "TEMP", "TMP")  # host paths, meaningless in the sandbox

_NAMESPACES_HELP = (
    "bubblewrap cannot build the sandbox on this machine: {reason}. Most likely unprivileged "
    "user namespaces are disabled: enable them (Debian's older kernels: sysctl -w "
    "kernel.unprivileged_userns_clone=1; Ubuntu 23.10 and later: sysctl -w "
    "kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile that allows bwrap; "
    "everywhere: user.max_user_namespaces > 0; in a container, a seccomp profile that allows "
    "them), or use a DockerCommandLineCodeExecutor. parley never runs the code without the "
    "sandbox instead."
)


@dataclass(frozen=True)
class _Tools:
    bwrap: str
    prlimit: str
    setpriv: str | None  # only needed when parley runs as root


_probe_lock = threading.Lock()
_probed: _Tools | str | None = None  # the tools, or why there are none


def check_available() -> None:
    """Raise :class:`~parley.exceptions.SandboxUnavailableError` unless bubblewrap can build
    the sandbox here (probed once per process)."""
    _tools()


def _tools() -> _Tools:
    global _probed
    with _probe_lock:
        if _probed is None:
            try:
                _probed = _probe()
            except SandboxUnavailableError as error:
                _probed = str(error)
        probed = _probed
    if isinstance(probed, str):
        raise SandboxUnavailableError(probed)
    return probed


def _probe() -> _Tools:
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailableError(
            "sandbox=True needs Linux (bubblewrap builds the sandbox from Linux namespaces); "
            "use a DockerCommandLineCodeExecutor on this system."
        )
    as_root = os.geteuid() == 0
    tools = _Tools(
        bwrap=_find("bwrap", "bubblewrap", inside=False),
        prlimit=_find("prlimit", "util-linux", inside=True),
        setpriv=_find("setpriv", "util-linux", inside=True) if as_root else None,
    )
    _check_version(tools.bwrap)
    true = _find("true", "coreutils", inside=True)
    user = f"{SANDBOX_UID}:{SANDBOX_UID}" if as_root else None
    command = [tools.bwrap, *_base_args(as_root), "--chdir", "/", "--", *_launcher(tools, user)]
    try:
        done = subprocess.run(
            [*command, true],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_SECONDS,
            env={"PATH": os.defpath},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SandboxUnavailableError(f"bubblewrap ({tools.bwrap}) did not run: {error}") from error
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip() or f"exit code {done.returncode}"
        raise SandboxUnavailableError(_NAMESPACES_HELP.format(reason=reason))
    return tools


def _find(program: str, package: str, *, inside: bool) -> str:
    """The absolute path of ``program``; with ``inside``, one the sandbox also shows."""
    path = shutil.which(program, path=os.pathsep.join([os.environ.get("PATH", ""), os.defpath]))
    if path is None:
        raise SandboxUnavailableError(
            f"sandbox=True needs {program}, which is not installed: install the package "
            f"{package} (Debian and Ubuntu: apt-get install {package}; Fedora: dnf install "
            f"{package}), or use a DockerCommandLineCodeExecutor."
        )
    path = os.path.abspath(path)
    if inside and not _within(os.path.realpath(path), _SYSTEM):
        raise SandboxUnavailableError(
            f"sandbox=True runs {program} inside the sandbox, which shows only "
            f"{', '.join(_SYSTEM)}, but it is installed at {path}: install the package "
            f"{package} from the system's packages."
        )
    return path


def _check_version(bwrap: str) -> None:
    try:
        done = subprocess.run(
            [bwrap, "--version"], capture_output=True, text=True, timeout=_PROBE_SECONDS
        )
        found = tuple(int(part) for part in done.stdout.split()[-1].split(".")[:2])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as error:
        raise SandboxUnavailableError(f"{bwrap} --version did not answer: {error}") from error
    if found < _MIN_VERSION:
        wanted = ".".join(map(str, _MIN_VERSION))
        raise SandboxUnavailableError(
            f"sandbox=True needs bubblewrap {wanted} or newer; {bwrap} is "
            f"{done.stdout.strip()}. Install a newer bubblewrap, or use a "
            "DockerCommandLineCodeExecutor."
        )


# -- the command line ---------------------------------------------------------------------------


def _within(path: str, tops: Iterable[str]) -> bool:
    return any(path == top or path.startswith(top.rstrip("/") + "/") for top in tops)


def _base_args(as_root: bool) -> list[str]:
    """Namespaces, the system's files and the private ``/dev``, ``/proc`` and ``/tmp``."""
    args = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
    args += ["--unshare-cgroup-try", "--hostname", "sandbox"]
    args += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if as_root:
        for cap in _SETPRIV_CAPS:
            args += ["--cap-add", cap]
    else:
        args = ["--unshare-user", "--disable-userns", *args]
    for top in _SYSTEM:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for secret in ETC_SECRETS:
        real = os.path.realpath(secret)
        if not _within(real, ["/etc"]):
            continue  # a link out of /etc: what it points to is not shown anyway
        if os.path.isdir(real):
            args += ["--tmpfs", real, "--remount-ro", real]
        elif os.path.exists(real):
            args += ["--ro-bind", "/dev/null", real]
    args += ["--dev", "/dev", "--proc", "/proc"]
    # /dev/shm holds POSIX semaphores and shared memory (multiprocessing's locks).
    for scratch in ("/tmp", "/dev/shm"):
        args += ["--perms", "1777", "--size", str(TMP_BYTES), "--tmpfs", scratch]
    return args


def _binds(read_only: Sequence[str], work_dir: str) -> list[str]:
    """Show ``read_only`` (absolute paths) and the work dir at their own paths; the folders
    leading to them are made world-readable, whatever they are on the host (``/root`` is
    not), since they hold nothing else."""
    args: list[str] = []
    shown = [top for top in _SYSTEM if not os.path.islink(top)]
    made: set[str] = set()
    wanted = [(path, "--ro-bind") for path in sorted(set(read_only))]
    for path, option in [*wanted, (work_dir, "--bind")]:
        source = os.path.realpath(path)
        if option == "--ro-bind" and (_within(path, shown) or _within(source, shown)):
            continue
        for parent in reversed(Path(path).parents):
            folder = str(parent)
            if folder in ("/", "/tmp") or folder in made or _within(folder, shown):
                continue
            args += ["--perms", "0755", "--dir", folder]
            made.add(folder)
        args += [option, source, path]
        shown.append(path)
    return args


def _launcher(tools: _Tools, user: str | None) -> list[str]:
    """What runs inside before the program: ``setpriv`` to ``user`` (parley as root), then
    ``prlimit`` with the limits."""
    args: list[str] = []
    if user is not None:
        assert tools.setpriv is not None
        uid, _, gid = user.partition(":")
        args += [tools.setpriv, f"--reuid={uid}", f"--regid={gid or uid}", "--clear-groups"]
        args += ["--inh-caps=-all", "--bounding-set=-all", "--"]
    limits = [f"--nproc={PROCESS_LIMIT}", f"--data={MEMORY_LIMIT}", "--core=0"]
    return [*args, tools.prlimit, *limits, "--"]


def _installations(interpreters: Iterable[str]) -> list[str]:
    """The folders Python needs to run: this interpreter's prefixes, and each interpreter's
    installation (``<prefix>/bin/python``), as named and with its links resolved (a venv's
    python links to its base installation)."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    for interpreter in [sys.executable, *interpreters]:
        for path in (os.path.abspath(interpreter), os.path.realpath(interpreter)):
            found.add(os.path.dirname(os.path.dirname(path)))
    home = os.path.realpath(os.path.expanduser("~"))
    for path in found:
        if path == "/" or _within(home, [os.path.realpath(path)]):
            raise SandboxUnavailableError(
                f"sandbox=True would have to show {path} to run the Python installed there, "
                f"and that would show the home directory {home}: use a Python installed "
                "elsewhere (a venv is fine), or a DockerCommandLineCodeExecutor."
            )
    return sorted(os.path.abspath(path) for path in found)


class BwrapSandbox:
    """The sandbox of one work dir (the module's doc): ``command`` puts a program in it.

    Built once per executor: it probes (:func:`check_available`), chooses the user the code
    runs as, hands a fresh work dir to that user when parley is root (``_code_user``), and
    builds the command line.
    """

    def __init__(self, work_dir: Path, *, fresh: bool, interpreters: Sequence[str] = ()) -> None:
        """``fresh``: parley created ``work_dir`` or found it empty (it may be handed over);
        ``interpreters``: other programs whose Python installation the code runs with."""
        self._tools = _tools()
        self._work_dir = work_dir.resolve()
        self.user = choose_user(self._work_dir)
        """``"uid:gid"`` the code runs as."""
        self._as_root = os.geteuid() == 0
        prepare_work_dir(self._work_dir, self.user, fresh)
        self._installations = _installations(interpreters)
        self._shown: list[str] = []  # folders added by show()
        # The command line, and the shown folders and hidden files it was built with
        # (replaced as one).
        self._built: tuple[tuple[list[str], list[str]], list[str]] | None = None

    def show(self, folder: str) -> None:
        """Show ``folder`` read-only from now on, for as long as it exists (say, packages
        installed for the code, which an executor may remove and make again elsewhere).

        When parley is root, the folder is opened to the code's user: ``tempfile.mkdtemp``
        makes folders that only their creator may enter.
        """
        path = os.path.abspath(folder)
        if self._as_root:
            os.chmod(path, os.stat(path).st_mode | 0o555)
        if path not in self._shown:
            self._shown = [*self._shown, path]

    def _prefix(self) -> list[str]:
        """The command line up to the program, with the shown folders that exist now and the
        files hidden in them now (``_sandbox_hidden``: pip's configuration, protected paths)."""
        shown = [path for path in self._shown if os.path.isdir(path)]
        mounts = [(top, os.path.realpath(top)) for top in _SYSTEM if not os.path.islink(top)]
        mounts += [(path, os.path.realpath(path)) for path in [*self._installations, *shown]]
        masks = hidden(pip_config_paths(self._installations), mounts)
        if self._built is None or self._built[0] != (shown, masks):
            self._built = ((shown, masks), self._command_line(shown, masks))
        return self._built[1]

    def _command_line(self, shown: list[str], masks: list[str]) -> list[str]:
        return [
            self._tools.bwrap,
            *_base_args(self._as_root),
            *_binds([*self._installations, *shown], str(self._work_dir)),
            *mask_args(masks),  # after the binds, or a bind would cover them again
            "--chdir",
            str(self._work_dir),
            "--",
            *_launcher(self._tools, self.user if self._as_root else None),
        ]

    def command(self, argv: list[str], env: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
        """The command line and environment that run ``argv`` with ``env`` in the sandbox
        (``HOME`` and ``TMPDIR`` are its ``/tmp``)."""
        inner = {key: value for key, value in env.items() if key not in _HOST_ONLY_VARIABLES}
        if self._as_root:
            # Whose they say parley is (root); getpass and the like then ask the uid.
            inner.pop("USER", None)
            inner.pop("LOGNAME", None)
        inner.update(HOME=HOME, TMPDIR="/tmp")
        return [*self._prefix(), *argv], inner

    def save(self, path: Path, code: str) -> None:
        """Write a code file in the work dir, owned by the user the code runs as."""
        write_as(path, code, self._work_dir, self.user)
