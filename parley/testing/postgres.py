"""A throwaway PostgreSQL server on loopback, for tests and examples of ``PGVectorDB``.

:class:`PostgresServer` runs ``initdb`` into a temporary directory, starts the server with
``pg_ctl`` on 127.0.0.1 (a free port; its Unix socket in the same directory), creates the
extensions asked for (``vector`` for pgvector), and on :meth:`~PostgresServer.stop` stops it and
removes the directory. The superuser gets a random password (SCRAM authentication): nothing but
this process's caller can log in, even from another local account.

PostgreSQL refuses to run as root: as root, the server runs as ``run_as`` (default ``postgres``,
the account Debian's ``postgresql-common`` creates) through ``runuser``. The programs are found on
``PATH`` or in Debian's ``/usr/lib/postgresql/<version>/bin``; pgvector's extension must be
installed for that PostgreSQL (``scripts/install-system-deps.sh`` in parley's repository).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType

__all__ = ["PostgresServer", "PostgresUnavailableError"]

_START_ATTEMPTS = 3
_PG_CTL_TIMEOUT = 120  # seconds pg_ctl waits for the server to accept connections, or to stop
_COMMAND_TIMEOUT = 180  # seconds any one program may run (initdb, pg_ctl, psql)
_SETTINGS = """
listen_addresses = '127.0.0.1'
max_connections = 40
shared_buffers = 16MB
fsync = off
synchronous_commit = off
full_page_writes = off
"""


class PostgresUnavailableError(RuntimeError):
    """PostgreSQL (or an extension asked for) is not installed, or the server did not start."""


class PostgresServer:
    """A PostgreSQL server of its own in a temporary directory (see the module docstring).

    Args:
        extensions: extensions to create in the ``postgres`` database once it runs.
        bindir: the directory of ``initdb`` and ``pg_ctl``; found when None.
        run_as: the account the server runs as when this process is root (default
            ``postgres``); ignored otherwise (the server runs as the current user).
    """

    def __init__(
        self,
        *,
        extensions: tuple[str, ...] = ("vector",),
        bindir: str | os.PathLike[str] | None = None,
        run_as: str = "postgres",
    ) -> None:
        self.extensions = tuple(extensions)
        self.bindir = Path(bindir) if bindir is not None else find_bindir()
        self._run_as = run_as if os.geteuid() == 0 else None
        self.host = "127.0.0.1"
        self.port = 0
        self.dbname = "postgres"
        self.username = "parley"
        self._password = secrets.token_urlsafe(24)
        self._root: Path | None = None

    # -- what clients need -----------------------------------------------------------------

    @property
    def password(self) -> str:
        return self._password

    @property
    def conninfo(self) -> str:
        """A libpq connection string (``host=... port=... ... password=...``)."""
        return (
            f"host={self.host} port={self.port} dbname={self.dbname} user={self.username} "
            f"password={self._password}"
        )

    @property
    def url(self) -> str:
        """The same as a ``postgresql://`` URL (the password is URL-safe)."""
        return (
            f"postgresql://{self.username}:{self._password}@{self.host}:{self.port}/{self.dbname}"
        )

    def __repr__(self) -> str:  # never the password
        return f"PostgresServer(host={self.host!r}, port={self.port}, dbname={self.dbname!r})"

    # -- life cycle ------------------------------------------------------------------------

    def start(self) -> PostgresServer:
        if self._root is not None:
            return self
        for extension in self.extensions:
            control = self._sharedir() / "extension" / f"{extension}.control"
            if not control.exists():
                raise PostgresUnavailableError(
                    f"the PostgreSQL extension {extension!r} is not installed for "
                    f"{self.bindir} (no {control}); pgvector's is built by parley's "
                    f"scripts/install-system-deps.sh"
                )
        root = Path(tempfile.mkdtemp(prefix="parley-pg-"))
        self._root = root
        try:
            self._initdb(root)
            self._start_on_a_free_port(root)
            for extension in self.extensions:
                self._psql(f'CREATE EXTENSION IF NOT EXISTS "{extension}"')
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop the server (if running) and remove its directory."""
        root, self._root = self._root, None
        if root is None:
            return
        data = root / "data"
        if (data / "postmaster.pid").exists():
            stopped = self._run(
                [self._bin("pg_ctl"), "stop", "-D", str(data), "-m", "fast", "-w",
                 "-t", str(_PG_CTL_TIMEOUT)],
                check=False,
            )  # fmt: skip
            if stopped.returncode != 0:
                _kill_postmaster(data)
        shutil.rmtree(root, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- steps -----------------------------------------------------------------------------

    def _initdb(self, root: Path) -> None:
        pwfile = root / "pwfile"
        pwfile.write_text(self._password + "\n")
        pwfile.chmod(0o600)
        if self._run_as is not None:
            shutil.chown(root, user=self._run_as)
            shutil.chown(pwfile, user=self._run_as)
        self._run(
            [self._bin("initdb"), "-D", str(root / "data"), "-U", self.username,
             "--pwfile", str(pwfile), "--auth", "scram-sha-256", "-E", "UTF8",
             "--locale", "C", "--no-sync"],
        )  # fmt: skip
        pwfile.unlink()
        with (root / "data" / "postgresql.conf").open("a") as conf:
            conf.write(_SETTINGS)
            conf.write(f"unix_socket_directories = '{root}'\n")

    def _start_on_a_free_port(self, root: Path) -> None:
        data, log = root / "data", root / "server.log"
        for _ in range(_START_ATTEMPTS):
            # The port may be taken between choosing and binding it; then the server exits and
            # pg_ctl says so, and another port is tried (the last `port` line of the file wins).
            self.port = _free_port()
            with (data / "postgresql.conf").open("a") as conf:
                conf.write(f"port = {self.port}\n")
            started = self._run(
                [self._bin("pg_ctl"), "start", "-D", str(data), "-l", str(log), "-w",
                 "-t", str(_PG_CTL_TIMEOUT)],
                check=False,
            )  # fmt: skip
            if started.returncode == 0:
                return
            text = log.read_text(errors="replace") if log.exists() else ""
            if "Address already in use" not in text:
                break
        raise PostgresUnavailableError(
            f"PostgreSQL did not start:\n{started.stdout}\n{started.stderr}\n{text}"
        )

    def _psql(self, statement: str) -> None:
        env = {**os.environ, "PGPASSWORD": self._password}
        self._run(
            [self._bin("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", self.host,
             "-p", str(self.port), "-U", self.username, "-d", self.dbname, "-c", statement],
            env=env,
            as_server=False,
        )  # fmt: skip

    # -- helpers ---------------------------------------------------------------------------

    def _bin(self, name: str) -> str:
        return str(self.bindir / name)

    def _sharedir(self) -> Path:
        found = self._run([self._bin("pg_config"), "--sharedir"], as_server=False)
        return Path(found.stdout.strip())

    def _run(
        self,
        args: list[str],
        *,
        check: bool = True,
        env: dict[str, str] | None = None,
        as_server: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        if as_server and self._run_as is not None:
            args = ["runuser", "-u", self._run_as, "--", *args]
        done = subprocess.run(
            args,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=env,
            timeout=_COMMAND_TIMEOUT,
            # runuser's account cannot enter root's working directory (a pytest tmp_path).
            cwd=self._root or tempfile.gettempdir(),
        )
        if check and done.returncode != 0:
            raise PostgresUnavailableError(
                f"{Path(args[0]).name} {' '.join(args[1:3])} failed "
                f"({done.returncode}):\n{done.stdout}\n{done.stderr}".replace(self._password, "***")
            )
        return done


def find_bindir() -> Path:
    """Where ``initdb`` is: on ``PATH``, else the newest of Debian's
    ``/usr/lib/postgresql/<version>/bin``."""
    on_path = shutil.which("initdb")
    if on_path is not None:
        return Path(on_path).resolve().parent  # a symlink into the real bin directory
    versions = []
    for candidate in Path("/usr/lib/postgresql").glob("*/bin/initdb"):
        version = candidate.parent.parent.name
        if re.fullmatch(r"\d+", version):
            versions.append((int(version), candidate.parent))
    if not versions:
        raise PostgresUnavailableError(
            "PostgreSQL's server programs (initdb, pg_ctl) were not found: install Debian's "
            "`postgresql` package (parley's scripts/install-system-deps.sh does)"
        )
    return max(versions)[1]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _kill_postmaster(data: Path) -> None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        pid = int((data / "postmaster.pid").read_text().split()[0])
        os.kill(pid, 9)
