"""When run_chats turns Ray's token authentication on for the instance it starts, and when it
leaves the user's setup alone (parley/batch/_ray_auth.py; the real instance is started in
tests/security/test_ray_exposure.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.batch._ray_auth import new_instance_auth


@pytest.mark.parametrize("address", [None, "local"])
def test_a_new_instance_gets_token_auth_with_a_random_token(
    address: str | None, tmp_path: Path
) -> None:
    env = {"RAY_TMPDIR": str(tmp_path)}
    first, second = new_instance_auth(address, None, env), new_instance_auth(address, None, env)
    assert first["RAY_AUTH_MODE"] == "token"
    assert len(first["RAY_AUTH_TOKEN"]) == 64
    assert first["RAY_AUTH_TOKEN"] != second["RAY_AUTH_TOKEN"]


@pytest.mark.parametrize("token", ["RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"])
def test_a_token_of_the_users_is_kept(token: str, tmp_path: Path) -> None:
    env = {"RAY_TMPDIR": str(tmp_path), token: "mine"}
    assert new_instance_auth(None, None, env) == {"RAY_AUTH_MODE": "token"}


@pytest.mark.parametrize(
    ("address", "env"),
    [
        (None, {"RAY_AUTH_MODE": "disabled"}),  # the user's choice
        ("ray://head:10001", {}),
        ("10.0.0.5:6379", {}),
        ("auto", {}),
        (None, {"RAY_ADDRESS": "10.0.0.5:6379"}),
    ],
)
def test_an_instance_someone_else_started_keeps_its_mode(
    address: str | None, env: dict[str, str], tmp_path: Path
) -> None:
    assert new_instance_auth(address, None, {"RAY_TMPDIR": str(tmp_path), **env}) == {}


def test_a_cluster_ray_start_began_here_is_joined_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "ray_current_cluster").write_text("127.0.0.1:6379")
    assert new_instance_auth(None, None, {"RAY_TMPDIR": str(tmp_path)}) == {}
    # ray.init(address="local") starts a new instance even then.
    assert (
        new_instance_auth("local", None, {"RAY_TMPDIR": str(tmp_path)})["RAY_AUTH_MODE"] == "token"
    )
    # Another temp dir (ray.init(_temp_dir=...)) is where Ray looks instead.
    other = tmp_path / "other"
    other.mkdir()
    assert new_instance_auth(None, str(other), {"RAY_TMPDIR": str(tmp_path)}) != {}
