"""Writing a store: ``BaseChatStore``'s primitives are public names; a store written against
their earlier underscored names (``_write_step``, ...) still runs durable chats, whether it
implements them all or overrides one of a built-in store's and calls ``super()``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import parley
from parley.durable import BaseChatStore, ChatStore
from parley.testing import FakeLLMServer

KEY = b"k" * 32


def _chat(server: FakeLLMServer, store: BaseChatStore, chat_id: str) -> Any:
    assistant = parley.AssistantAgent("assistant", llm_config={"config_list": server.config_list()})
    user = parley.UserProxyAgent(
        "user", human_input_mode="NEVER", code_execution_config=False, max_consecutive_auto_reply=0
    )
    return user.initiate_chat(assistant, message="hello", max_turns=1, store=store, chat_id=chat_id)


class OldNamesStore(BaseChatStore):
    """A backend written against the underscored names (over a SQLite store's file)."""

    def __init__(self, path: Path) -> None:
        super().__init__(key=KEY)
        self.inner = ChatStore(path, key=KEY)
        self.calls: list[str] = []

    def _read_chat(self, chat_id: str) -> Any:
        return self.inner.read_chat(chat_id)

    def _create_chat(self, chat_id: str, header: str, mac: str, now: float) -> bool:
        return self.inner.create_chat(chat_id, header, mac, now)

    def _sign_header(self, chat_id: str, mac: str) -> None:
        self.inner.sign_header(chat_id, mac)

    def _read_steps(self, chat_id: str) -> Any:
        return self.inner.read_steps(chat_id)

    def _write_step(self, chat_id: str, row: Any, owner: str) -> str | None:
        self.calls.append(row[0])
        return self.inner.write_step(chat_id, row, owner)

    def _answer_step(self, chat_id: str, key: str, result: str, mac: str) -> bool:
        return self.inner.answer_step(chat_id, key, result, mac)

    def _end_chat(self, chat_id: str, reason: str | None, now: float, owner: str) -> str | None:
        self.calls.append("end")
        return self.inner.end_chat(chat_id, reason, now, owner)

    def _chat_ids(self, status: str | None) -> list[str]:
        return self.inner.chat_ids(status)

    def _claim(self, chat_id: str, owner: str, seconds: float, dead: str) -> str | None:
        return self.inner.claim_lease(chat_id, owner, seconds, dead)

    def _renew(self, chat_id: str, owner: str, seconds: float) -> bool:
        return self.inner.renew_lease(chat_id, owner, seconds)

    def _release(self, chat_id: str, owner: str) -> None:
        self.inner.release_lease(chat_id, owner)

    @property
    def location(self) -> str:
        return self.inner.location


class CountingStore(ChatStore):
    """A built-in store with one primitive overridden under its old name."""

    writes = 0

    def _write_step(self, chat_id: str, row: Any, owner: str) -> str | None:
        type(self).writes += 1
        return super()._write_step(chat_id, row, owner)  # type: ignore[misc, no-any-return]


@pytest.fixture
def server() -> Any:
    with FakeLLMServer(default="hi there") as s:
        yield s


def test_a_store_written_with_the_old_names_runs_a_durable_chat(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    store = OldNamesStore(tmp_path / "chats.db")
    result = _chat(server, store, "c1")
    assert result.chat_history[-1]["content"] == "hi there"
    assert store.status("c1") == "done"
    assert store.chats() == ["c1"]
    steps = {key for key, _, _ in store.steps("c1")}
    assert steps  # each step was written through the old-named primitive, then the end
    assert set(store.calls[:-1]) == steps
    assert store.calls[-1] == "end"
    assert store.lease("c1") is None  # released


def test_an_old_name_override_of_a_built_in_store_is_called(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    store = CountingStore(tmp_path / "chats.db", key=KEY)
    _chat(server, store, "c2")
    assert CountingStore.writes == len(store.steps("c2")) > 0
    assert store.status("c2") == "done"


def test_a_store_missing_a_primitive_cannot_be_made() -> None:
    class Missing(BaseChatStore):
        def _read_chat(self, chat_id: str) -> Any:
            return None

    with pytest.raises(TypeError, match="release_lease"):
        Missing()  # type: ignore[abstract]
