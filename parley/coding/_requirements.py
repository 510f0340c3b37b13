"""Which pip requirements the code's Python lacks, and installing them with pip.

Used by the executors' user functions (``_functions_setup``):

* :data:`PROBE` runs in the interpreter the code runs with, where the code runs (on this
  machine or in the container), and reports what is installed there, with the standard
  library only (``importlib.metadata``): each distribution's version and requirements, the
  environment markers, the C library. :func:`missing` then decides here, with ``packaging``,
  which requirements it does not satisfy (the version, the markers, the extras' dependencies);
  only those are installed. A URL requirement (``name @ url``) counts as satisfied by any
  installed version of ``name``.
* :func:`checked_requirements` decides which ``python_packages`` entries pip may see: PEP 508
  requirement specifiers only, parsed with ``packaging``, each handed to pip after ``--`` in
  its canonical form, so that no entry can be a pip option. Refused, with
  :class:`~parley.exceptions.InvalidRequirementError` naming the entry, before pip runs (when
  the executor is built): anything starting with ``-`` (``--index-url=...``, ``--target=...``,
  ``-r file``), text ``packaging`` cannot parse (a path such as ``./pkg``), a name pip would read
  as a file (``x.whl``, ``x.tar.gz``), and a URL requirement over a transport that anyone on the
  way could tamper with (``http:``, ``ftp:``). A URL requirement (``name @ https://...``,
  ``name @ file:///...``, ``name @ git+https://...``) is accepted: it says where that one
  distribution comes from, as naming it on an index does, and cannot change pip's options, its
  index for other packages, or where anything is installed.
* :func:`pip_install` runs pip on this machine: it is parley's own call, not generated code, so
  it gets this process's environment (``PIP_INDEX_URL``, ``PIP_FIND_LINKS``, proxies and
  ``pip.conf`` configure it as usual), minus the variables that would send the packages
  elsewhere (``PIP_TARGET``, ``PIP_PREFIX``, ``PIP_ROOT``, ``PIP_USER``). pip never prompts,
  fails fast when the index is unreachable (``--retries 0 --timeout 5``), and runs contained
  and bounded like code (``_process.run``: everything it starts is killed at the timeout or
  when the chat is cancelled). Its errors become ``ValueError`` naming the packages with pip's
  own ``ERROR`` lines; an unreachable index is recognised from pip's debug log (``--log``) and
  explained, with how to point pip at a reachable index or a folder of wheels.
* :func:`cross_platform_options` are the pip options that fetch wheels for another Python (the
  container's) from this machine: its version, implementation and platform tags, wheels only.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..exceptions import InvalidRequirementError
from ._process import run

__all__ = [
    "PROBE",
    "Interpreter",
    "checked_requirements",
    "cross_platform_options",
    "missing",
    "parse_probe",
    "pip_install",
]

_MARK = "parley-probe:"

PROBE = f"""
import json, os, platform, re, sys
from importlib import metadata
dists = {{}}
for dist in metadata.distributions():
    name = dist.metadata.get("Name")
    if name:  # the first one on sys.path is the one imported
        key = re.sub(r"[-_.]+", "-", name).lower()
        dists.setdefault(key, [dist.version, list(dist.requires or [])])
markers = {{
    "implementation_name": sys.implementation.name,
    "implementation_version": platform.python_version(),
    "os_name": os.name,
    "platform_machine": platform.machine(),
    "platform_release": platform.release(),
    "platform_system": platform.system(),
    "platform_version": platform.version(),
    "python_full_version": platform.python_version(),
    "platform_python_implementation": platform.python_implementation(),
    "python_version": ".".join(platform.python_version_tuple()[:2]),
    "sys_platform": sys.platform,
}}
libc = list(platform.libc_ver())
if not libc[0] and os.path.isdir("/lib") and any(n.startswith("ld-musl") for n in os.listdir("/lib")):
    libc = ["musl", ""]
print({_MARK!r} + json.dumps({{"dists": dists, "markers": markers, "libc": libc}}))
"""
"""Python source (``python -c``) reporting what the interpreter running it has installed."""

_PIP_OPTIONS = ["--disable-pip-version-check", "--no-input", "--retries", "0", "--timeout", "5"]
_REDIRECTING = ("PIP_TARGET", "PIP_PREFIX", "PIP_ROOT", "PIP_USER")
_UNREACHABLE = re.compile(
    r"connection error|NewConnectionError|ConnectTimeoutError|ReadTimeoutError|ProxyError|"
    r"Failed to establish a new connection|Max retries exceeded|Network is unreachable|"
    r"Temporary failure in name resolution|Name or service not known|No route to host"
)
_WHERE_TO_FIND_PACKAGES = (
    "Point pip at an index this machine can reach (the environment variable PIP_INDEX_URL, "
    "or index-url in pip.conf), or at a folder of wheels (PIP_NO_INDEX=1 and "
    "PIP_FIND_LINKS=/path/to/wheels)"
)


# pip reads a requirement ending so as a file to install (``pip install x.whl``).
_ARCHIVE_ENDINGS = (
    ".whl", ".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz", ".tar.lz",
    ".tlz",
)  # fmt: skip
_VCS = ("git", "hg", "svn", "bzr")
_URL_SCHEMES = frozenset({"https", "file"} | {f"{v}+{t}" for v in _VCS for t in ("https", "ssh")})


def checked_requirements(entries: Sequence[object]) -> list[str]:
    """``entries`` as the requirement texts pip will get (canonical PEP 508 forms, in order);
    :class:`~parley.exceptions.InvalidRequirementError` for the first that is not one (the
    module's rules)."""
    from packaging.requirements import InvalidRequirement, Requirement

    checked = []
    for entry in entries:
        if not isinstance(entry, str):
            raise InvalidRequirementError(repr(entry), "it is not a string")
        text = entry.strip()
        if not text:
            raise InvalidRequirementError(entry, "it is empty")
        if text.startswith("-"):
            raise InvalidRequirementError(entry, "it is a pip option, not a requirement")
        try:
            requirement = Requirement(text)
        except InvalidRequirement as error:
            why = str(error).splitlines()[0]
            raise InvalidRequirementError(
                entry, f"it is not a PEP 508 requirement specifier ({why})"
            ) from error
        if requirement.url is None and requirement.name.lower().endswith(_ARCHIVE_ENDINGS):
            raise InvalidRequirementError(
                entry, "pip would read it as a file to install; write 'name @ file:///path'"
            )
        if requirement.url is not None:
            scheme = requirement.url.partition(":")[0].lower()
            if scheme not in _URL_SCHEMES:
                raise InvalidRequirementError(
                    entry,
                    f"its URL's scheme {scheme!r} is not one of "
                    f"{', '.join(sorted(_URL_SCHEMES))} (a download anyone on the way could "
                    "change, or one pip does not support)",
                )
        checked.append(str(requirement))
    return checked


@dataclass(frozen=True)
class Interpreter:
    """What :data:`PROBE` found: installed distributions (normalised name -> version and
    requirements), environment markers, and the C library (``("glibc", "2.36")``)."""

    dists: dict[str, tuple[str, list[str]]]
    markers: dict[str, str]
    libc: tuple[str, str]

    @property
    def python_version(self) -> str:
        """``"3.11"``."""
        return self.markers["python_version"]


def parse_probe(exit_code: int, output: str) -> Interpreter:
    """The :class:`Interpreter` in the output of :data:`PROBE`; ValueError if it failed."""
    for line in output.splitlines():
        if line.startswith(_MARK):
            data = json.loads(line[len(_MARK) :])
            dists = {str(k): (str(v[0]), [str(r) for r in v[1]]) for k, v in data["dists"].items()}
            libc = data["libc"]
            return Interpreter(dists, dict(data["markers"]), (str(libc[0]), str(libc[1])))
    raise ValueError(
        f"Could not tell which packages the code's Python has (exit code {exit_code}); it needs "
        f"Python 3.8 or later with importlib.metadata to install the functions' requirements:\n"
        f"{output.strip()}"
    )


def missing(requirements: Sequence[str], interpreter: Interpreter) -> list[str]:
    """The ``requirements`` that ``interpreter`` does not satisfy, in their order."""
    return [r for r in requirements if not _satisfied(r, interpreter, "", set())]


def _satisfied(text: str, interpreter: Interpreter, extra: str, seen: set[tuple[str, str]]) -> bool:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion

    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return False  # not reached for checked requirements; pip would say what is wrong
    if requirement.marker is not None and not requirement.marker.evaluate(
        {**interpreter.markers, "extra": extra}
    ):
        return True  # not meant for this interpreter
    name = canonicalize_name(requirement.name)
    found = interpreter.dists.get(name)
    if found is None:
        return False
    version, dependencies = found
    try:
        if not requirement.specifier.contains(version, prereleases=True):
            return False
    except InvalidVersion:
        return False
    for wanted in sorted(requirement.extras):
        if (name, wanted) in seen:
            continue
        seen.add((name, wanted))
        if not all(_satisfied(d, interpreter, wanted, seen) for d in dependencies):
            return False
    return True


def cross_platform_options(interpreter: Interpreter) -> list[str]:
    """pip options that install, from here, wheels for ``interpreter`` (another machine's)."""
    markers = interpreter.markers
    implementation = {"cpython": "cp", "pypy": "pp"}.get(markers["implementation_name"], "py")
    machine = markers["platform_machine"]
    libc, libc_version = interpreter.libc
    platforms: list[str] = []
    match = re.fullmatch(r"2\.(\d+)", libc_version)
    if libc == "glibc" and match:
        newest = int(match.group(1))
        # pip does not widen a manylinux_2_X tag to the older ones, so all are listed.
        platforms += [f"manylinux_2_{minor}_{machine}" for minor in range(newest, 4, -1)]
        legacy = {"manylinux2014": 17, "manylinux2010": 12, "manylinux1": 5}
        platforms += [f"{tag}_{machine}" for tag, minor in legacy.items() if newest >= minor]
    elif libc == "musl":
        platforms += [f"musllinux_1_{minor}_{machine}" for minor in (2, 1, 0)]
    platforms.append(f"linux_{machine}")
    options = ["--only-binary=:all:", "--python-version", interpreter.python_version]
    options += ["--implementation", implementation]
    for platform in platforms:
        options += ["--platform", platform]
    return options


def pip_install(
    command: list[str], packages: Sequence[str], *, timeout: float, where: str, hint: str = ""
) -> None:
    """Run ``command`` (``[python, "-m", "pip", "install", ...]``, parley's own options) for
    ``packages`` (requirement specifiers only: :func:`checked_requirements`).

    ``where`` names the place they go, for the errors; ``hint`` ends the error message.
    Raises ValueError ``"Pip install failed. ..."`` or ``"Pip install timed out ..."``.
    """
    requirements = checked_requirements(packages)  # also checked when the executor was built
    names = ", ".join(packages)
    tail = f"\n{hint}" if hint else ""
    env = {k: v for k, v in os.environ.items() if k.upper() not in _REDIRECTING}
    with tempfile.TemporaryDirectory(prefix="parley-pip-") as folder:
        log = Path(folder, "pip.log")
        # "--": whatever follows is a requirement to pip, never an option.
        argv = [*command, *_PIP_OPTIONS, "--log", str(log), "--", *requirements]
        try:
            result = run(argv, cwd=None, timeout=timeout, env=env, generated=False)
        except (FileNotFoundError, PermissionError) as error:
            raise ValueError(f"Pip install failed. Cannot run {command[0]}: {error}") from error
        failed = result.exit_code != 0 and not result.timed_out
        unreachable = _unreachable(log) if failed else None
    if result.timed_out:
        raise ValueError(
            f"Pip install timed out after {timeout:g} s installing {names} into {where}: raise "
            f"the executor's timeout, or install them beforehand.{tail}"
        )
    if result.exit_code == 0:
        return
    said = _error_lines(result.stderr, result.stdout)
    if unreachable is not None:
        raise ValueError(
            f"Pip install failed. The package index could not be reached to install {names} "
            f"into {where} ({_connection_problem(unreachable)}). {_WHERE_TO_FIND_PACKAGES}; or "
            f"install the packages beforehand.{tail}\npip said:\n{said}"
        )
    if "No module named pip" in said:
        raise ValueError(
            f"Pip install failed. {command[0]} has no pip to install {names} into {where} with: "
            f"install pip there (`{command[0]} -m ensurepip`), or the packages beforehand.\n{said}"
        )
    raise ValueError(
        f"Pip install failed. pip could not install {names} into {where} "
        f"(exit code {result.exit_code}):\n{said}{tail}"
    )


def _unreachable(log: Path) -> str | None:
    """The first line of pip's debug log saying a connection failed, if any."""
    try:
        with log.open(encoding="utf-8", errors="replace") as lines:
            return next((line for line in lines if _UNREACHABLE.search(line)), None)
    except OSError:
        return None  # pip stopped before it wrote a log


def _error_lines(stderr: str, stdout: str) -> str:
    """pip's ``ERROR`` lines, or the end of what it printed."""
    lines = [line for line in stderr.splitlines() if line.startswith("ERROR")]
    if lines:
        return "\n".join(lines)
    text = (stderr.strip() + "\n" + stdout.strip()).strip()
    return "\n".join(text.splitlines()[-20:])


def _connection_problem(line: str) -> str:
    """The URL and the reason in a line of pip's log about a failed connection, in short."""
    url = re.search(r"(?<=Could not fetch URL )\S+?(?=: )", line)  # passwords are "****"
    reason = re.findall(r"\[Errno -?\d+\][^'\")]*|timed out|ProxyError", line)
    what = reason[-1].strip() if reason else "connection error"
    return f"{url.group(0)}: {what}" if url else what
