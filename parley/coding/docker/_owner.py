"""Which process owns a sandbox container, and removing the containers of dead owners.

An executor removes its container on ``stop()``, at garbage collection and at interpreter exit,
and a container on a lifeline (the default; see ``_sandbox``) stops by itself within a
second when its owner dies, however it dies (SIGKILL, the OOM killer), after which the engine
removes it. What can still be left over: the stopped container of an executor made with
``auto_remove=False``, one made with ``stop_container=False`` (it outlives its owner on purpose),
and any container on an engine where the lifeline failed. So each container is labelled with
its owner — boot id, PID namespace, PID and the process's start time — and the next executor
that starts a container on the same machine removes those whose owner is gone. The start time
guards against PID reuse; the boot id and PID namespace keep a process from judging owners it
cannot see (another machine sharing the engine, another container).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docker import DockerClient

__all__ = ["OWNER_LABEL", "SANDBOX_LABEL", "owner_label", "reap_orphans"]

SANDBOX_LABEL = "io.parley.sandbox"
OWNER_LABEL = "io.parley.owner"


def _process_start(pid: int) -> str | None:
    """The start time of ``pid`` in clock ticks since boot (``/proc/<pid>/stat`` field 22)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may contain spaces or ")".
    fields = stat[stat.rindex(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def _namespace() -> str | None:
    """``<boot id>/<pid namespace>`` of this process, or None off Linux."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        pid_ns = os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
    return f"{boot}/{pid_ns}"


def owner_label() -> str:
    """The value of :data:`OWNER_LABEL` for a container this process creates ("" off Linux)."""
    namespace, start = _namespace(), _process_start(os.getpid())
    if namespace is None or start is None:
        return ""
    return f"{namespace}/{os.getpid()}/{start}"


def _owner_gone(label: str, namespace: str) -> bool:
    """Whether the owner named by ``label`` is a process of ``namespace`` that has ended."""
    rest, _, start = label.rpartition("/")
    owner_namespace, _, pid = rest.rpartition("/")
    if owner_namespace != namespace or not pid.isdigit():
        return False  # not ours to judge
    return _process_start(int(pid)) != start


def reap_orphans(client: DockerClient) -> list[str]:
    """Remove the sandbox containers whose owner process has died; their names.

    Best effort: a failure to list or remove is ignored (the container may be going away on
    its own, or belong to a user this process may not touch).
    """
    import docker

    namespace = _namespace()
    if namespace is None:
        return []
    removed: list[str] = []
    try:
        containers = client.api.containers(all=True, filters={"label": SANDBOX_LABEL})
    except docker.errors.DockerException:
        return []
    for info in containers:
        label = (info.get("Labels") or {}).get(OWNER_LABEL, "")
        if not label or not _owner_gone(label, namespace):
            continue
        try:
            client.api.remove_container(info["Id"], force=True)
        except docker.errors.DockerException:
            continue
        removed.extend(name.lstrip("/") for name in info.get("Names") or [])
    return removed
