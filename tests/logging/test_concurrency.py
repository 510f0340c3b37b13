"""Many chats at once, on the loop and from threads: every record arrives, no lock errors."""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import pytest

from parley import AssistantAgent, UserProxyAgent, runtime_logging
from parley.testing import FakeLLMServer

CHATS_ON_THE_LOOP = 50
CHATS_IN_THREADS = 4


def pair(fake: FakeLLMServer, n: int) -> tuple[UserProxyAgent, AssistantAgent]:
    user = UserProxyAgent(
        f"user{n}",
        human_input_mode="NEVER",
        code_execution_config=False,
        default_auto_reply="go on",
    )
    assistant = AssistantAgent(f"assistant{n}", llm_config=fake.llm_config(cache_seed=None))
    return user, assistant


async def test_concurrent_chats_lose_no_record(
    dbname: str, caplog: pytest.LogCaptureFixture
) -> None:
    with FakeLLMServer(default="a reply") as fake:
        runtime_logging.start(config={"dbname": dbname})
        pairs = [pair(fake, n) for n in range(CHATS_ON_THE_LOOP + CHATS_IN_THREADS)]
        failures: list[BaseException] = []

        def in_thread(n: int) -> None:
            user, assistant = pairs[n]
            try:
                user.initiate_chat(assistant, message=f"task {n}", max_turns=2, silent=True)
            except BaseException as error:  # reported by the assertion below
                failures.append(error)

        threads = [
            threading.Thread(target=in_thread, args=(CHATS_ON_THE_LOOP + i,))
            for i in range(CHATS_IN_THREADS)
        ]
        for thread in threads:
            thread.start()
        results = await asyncio.gather(
            *(
                user.a_initiate_chat(assistant, message=f"task {n}", max_turns=2, silent=True)
                for n, (user, assistant) in enumerate(pairs[:CHATS_ON_THE_LOOP])
            )
        )
        for thread in threads:
            await asyncio.to_thread(thread.join, 30)
        runtime_logging.stop()
    assert not failures
    total = CHATS_ON_THE_LOOP + CHATS_IN_THREADS
    assert all(len(r.chat_history) == 4 for r in results)
    con = sqlite3.connect(dbname)

    def count(query: str) -> int:
        return int(con.execute(query).fetchone()[0])

    assert count("SELECT COUNT(*) FROM chats") == total
    assert count("SELECT COUNT(*) FROM chats WHERE end_time IS NOT NULL") == total
    assert count("SELECT COUNT(*) FROM chat_completions") == 2 * total
    assert count("SELECT COUNT(DISTINCT chat_id) FROM chat_completions") == total
    assert count("SELECT COUNT(*) FROM events WHERE event_name = 'received_message'") == 4 * total
    assert count("SELECT COUNT(*) FROM agents") == 2 * total
    # each chat's records carry its own id: no mixing between concurrent chats
    mixed = count(
        "SELECT COUNT(*) FROM chat_completions c JOIN chats h ON c.chat_id = h.chat_id "
        "WHERE c.source_name != h.recipient"
    )
    assert mixed == 0
    con.close()
    assert "database is locked" not in caplog.text
    assert "could not write" not in caplog.text


def test_a_forked_child_exits_at_once_and_the_parent_keeps_logging(dbname: str) -> None:
    import os
    import time

    runtime_logging.start(config={"dbname": dbname})
    runtime_logging.log_event("parent", "before")
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: logs nothing, and its exit does not wait for a writer
        runtime_logging.log_event("child", "in the child")
        runtime_logging.stop()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    # A child waiting for a writer thread it does not have waits out the 30 s flush timeout.
    assert time.monotonic() - started < 20
    runtime_logging.log_event("parent", "after")
    con = runtime_logging.get_connection()
    assert con is not None
    names = [r[0] for r in con.execute("SELECT event_name FROM events ORDER BY id")]
    assert names == ["before", "after"]
