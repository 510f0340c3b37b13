"""The key that authenticates a durable chat's journal, and the MACs made with it.

A store signs each record it writes (a chat's header, each step) with HMAC-SHA256 under a key
only the host holds, and checks every record it reads back before anything of it is replayed.
Code that can write the store's file or server (a sandboxed block whose work dir held it) can
then still destroy a journal, but cannot make the host replay a response, a tool result or a
human answer it did not record: a record forged, altered, moved to another chat or step, or
given another place in the order fails its MAC and is refused.

The key, in this order: the store's ``key=``; the environment variable :data:`KEY_ENV` (the
key's text); the key file (:data:`KEY_FILE_ENV`, else ``$XDG_CONFIG_HOME/parley/durable.key``,
``~/.config/...`` without it), made on first use with 32 random bytes, readable by its owner
only. Every process resuming a chat needs the same key: on one machine the key file gives it
to all of them; elsewhere, copy the file or set the variable. A sandbox sees neither the
file (outside the work dir, registered as protected) nor the variable (code gets an allowlisted
environment).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from pathlib import Path

from .._protected_paths import protect

__all__ = ["KEY_ENV", "KEY_FILE_ENV", "Signer", "default_key_file", "resolve_key"]

KEY_ENV = "PARLEY_DURABLE_KEY"
KEY_FILE_ENV = "PARLEY_DURABLE_KEY_FILE"
_MIN_KEY = 16  # bytes


def default_key_file() -> Path:
    """Where the key file is: ``$PARLEY_DURABLE_KEY_FILE``, else under the user's config dir."""
    named = os.environ.get(KEY_FILE_ENV)
    if named:
        return Path(named).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config) / "parley" / "durable.key"


def resolve_key(key: bytes | str | None) -> bytes:
    """The journal key: ``key`` itself, else the environment's, else the key file's."""
    if key is None:
        text = os.environ.get(KEY_ENV)
        if text is not None:
            return _checked(text.encode(), f"${KEY_ENV}")
        return _file_key(default_key_file())
    if isinstance(key, str):
        return _checked(key.encode(), "key=")
    if isinstance(key, bytes):
        return _checked(key, "key=")
    raise TypeError(f"key must be bytes or str, got {type(key).__name__}")


def _checked(key: bytes, where: str) -> bytes:
    if len(key) < _MIN_KEY:
        raise ValueError(
            f"the durable journal key from {where} is {len(key)} bytes: use at least {_MIN_KEY} "
            "(a random one: python -c 'import secrets; print(secrets.token_hex(32))')"
        )
    return key


def _file_key(path: Path) -> bytes:
    protect(path, "the durable chats' journal key")
    try:
        return _read_key_file(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Written aside, then linked into place: a process racing this one reads a whole key or
    # makes its own and loses the link (then reads the winner's).
    aside = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(aside, path)
        except FileExistsError:
            pass
    finally:
        os.unlink(aside)
    return _read_key_file(path)


def _read_key_file(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"the durable journal key file {path} is not a regular file")
        if info.st_mode & 0o077 or info.st_uid != os.getuid():
            raise PermissionError(
                f"the durable journal key file {path} must belong to this user and be readable "
                f"by it only (chmod 600 {path}): anyone who reads it can forge journals"
            )
        key = f.read().strip()
    return _checked(key, str(path))


class Signer:
    """MACs of a store's records under one key."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def _mac(self, *parts: object) -> str:
        # JSON of the parts keeps their boundaries: no two records share a message.
        message = json.dumps(parts, separators=(",", ":")).encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def header(self, chat_id: str, header: str) -> str:
        return self._mac("parley-chat/1", chat_id, header)

    def step(
        self, chat_id: str, key: str, seq: int, start: str | None, result: str | None, done: bool
    ) -> str:
        return self._mac("parley-step/1", chat_id, key, seq, start, result, done)

    @staticmethod
    def same(mac: str | None, expected: str) -> bool:
        return mac is not None and hmac.compare_digest(mac, expected)
