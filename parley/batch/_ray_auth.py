"""Token authentication for the Ray instance a batch starts by itself.

``run_chats(backend="ray")`` in a process that has not initialized Ray calls ``ray.init``, and
with no address to go to, Ray starts a new single-machine instance. Its GCS, raylet and workers
listen on every interface whatever node address they are given, and, unless token
authentication is on, serve anyone who reaches them: the chats, the store and the API keys the
workers hold. So when parley is about to start that instance, and the user chose no
authentication mode, it turns Ray's token authentication on with a random token kept in this
process's environment (which the instance's processes inherit, and nothing prints). Ray 2.60
and later turn it on by default too, but keep the token they make in ``~/.ray/auth_token``,
where any code running as the user finds it; Ray 2.52 to 2.59 leave it off.

Ray reads its authentication mode once, when it is first imported: this has to run before.
An instance someone else started (``RAY_ADDRESS``, an ``address=``, a cluster ``ray start``
began on this machine) keeps whatever mode it was started with; ``website/docs/batch.md`` says
what a real cluster needs.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Mapping

__all__ = ["new_instance_auth", "starts_new_instance", "use_token_auth_for_new_instance"]

MODE = "RAY_AUTH_MODE"
TOKEN = "RAY_AUTH_TOKEN"
TOKEN_PATH = "RAY_AUTH_TOKEN_PATH"


def _ray_temp_dir(environ: Mapping[str, str], temp_dir: str | None) -> str:
    # Where Ray looks for the address of a cluster `ray start` began (its own rule: $RAY_TMPDIR,
    # else $TMPDIR on Linux, else /tmp; then ray/).
    if temp_dir:
        return temp_dir
    base = environ.get("RAY_TMPDIR") or environ.get("TMPDIR") or os.path.join(os.sep, "tmp")
    return os.path.join(base, "ray")


def starts_new_instance(
    address: str | None, temp_dir: str | None, environ: Mapping[str, str]
) -> bool:
    """Whether ``ray.init(address=address)`` starts a new instance rather than joining one
    (``RAY_ADDRESS``, or a cluster ``ray start`` began on this machine)."""
    if address not in (None, "", "local"):
        return False
    if address != "local":
        if environ.get("RAY_ADDRESS"):
            return False
        if os.path.exists(os.path.join(_ray_temp_dir(environ, temp_dir), "ray_current_cluster")):
            return False  # Ray joins the cluster `ray start` began here
    return True


def new_instance_auth(
    address: str | None, temp_dir: str | None, environ: Mapping[str, str]
) -> dict[str, str]:
    """The environment variables to set so that ``ray.init(address=address)`` starts a new
    instance with token authentication; empty when it would join an existing one, or when
    ``environ`` already chooses a mode."""
    if MODE in environ or not starts_new_instance(address, temp_dir, environ):
        return {}  # the user's choice ("disabled" included), or a cluster's own mode
    wanted = {MODE: "token"}
    if not environ.get(TOKEN) and not environ.get(TOKEN_PATH):
        wanted[TOKEN] = secrets.token_hex(32)
    return wanted


def use_token_auth_for_new_instance(address: str | None, temp_dir: str | None) -> bool:
    """Before Ray is imported: turn token authentication on in this process's environment if
    ``ray.init(address=address)`` will start a new instance (module docs). Whether it did."""
    if "ray" in sys.modules:
        return False  # too late: Ray has read its mode; the user's setup decides
    wanted = new_instance_auth(address, temp_dir, os.environ)
    os.environ.update(wanted)
    return bool(wanted)
