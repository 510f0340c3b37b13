"""``ray start`` for the test clusters (tests/batch/_ray_cluster.py), with one difference: the
raylet is told the port its dashboard agent listens on. Run as a script, the arguments those of
``ray start``; ``PARLEY_RAYLET`` names the file to write the raylet's wrapper to.

Why: Ray 2.60's ``ray start`` gives the dashboard agent its port
(``--dashboard-agent-listen-port``) but not the raylet, which then waits for the agent to
report it, for a fixed 15 s that no setting changes, and aborts after that. The agent is a
Python process importing much of Ray: on two cores busy with other tests it missed the 15 s
nearly every time (measured: every start failed for minutes while a compiler ran). Given the
port (its ``dashboard_agent_listen_port`` flag), the raylet does not wait.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_LISTEN_PORT = "--dashboard-agent-listen-port="


def main() -> None:
    import ray._private.services as services  # builds the raylet's command from this name
    from ray.scripts.scripts import main as ray_main

    ports = [arg[len(_LISTEN_PORT) :] for arg in sys.argv if arg.startswith(_LISTEN_PORT)]
    if ports:
        wrapper = Path(os.environ["PARLEY_RAYLET"])
        wrapper.write_text(
            f'#!/bin/sh\nexec "{services.RAYLET_EXECUTABLE}" "$@" '
            f"--dashboard_agent_listen_port={int(ports[-1])}\n"
        )
        wrapper.chmod(0o755)
        services.RAYLET_EXECUTABLE = str(wrapper)
    sys.argv = ["ray", *sys.argv[1:]]
    ray_main()


if __name__ == "__main__":
    main()
