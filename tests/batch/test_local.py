"""run_chats on the local backend: order, bounded concurrency, failures kept apart, retries,
the batch's budget, usage totals, every kind of chat; all against the fake model."""

from __future__ import annotations

import asyncio
import math
import subprocess
import sys
from typing import Any

import pytest

from parley.batch import (
    BatchFailedError,
    BatchItem,
    a_run_chats,
    is_transient,
    run_chats,
)
from parley.testing import FakeLLMServer
from parley.usage import Budget

from .chats import (
    GroupOfThree,
    PairChat,
    SyncPairChat,
    TwoInARow,
    agents,
    histories,
    respond,
    task_of,
)


def one_by_one(config: dict[str, Any], inputs: range, turns: int = 2) -> list[Any]:
    """The same chats run the plain way, one after another: what a batch must give back."""
    out = []
    for i in inputs:
        user, assistant = agents(config)
        out.append(
            user.initiate_chat(assistant, message=f"Solve task {i}.", max_turns=turns, silent=True)
        )
    return out


def test_results_come_in_input_order_as_one_by_one(
    server: FakeLLMServer, config: dict[str, Any]
) -> None:
    expected = histories(one_by_one(config, range(40)))
    # Later tasks answer sooner, so the chats finish in about the reverse order.
    server.responder = lambda body: {
        "content": respond(body),
        "delay": 0.002 * (40 - task_of(body)),
    }
    batch = run_chats(PairChat(config), range(40), concurrency=40)
    assert batch.ok
    assert len(batch) == 40
    assert histories(batch) == expected
    assert batch[7].chat_history[0]["content"] == "Solve task 7."
    assert batch.workers == {"local": 40}


def test_no_more_chats_run_at_once_than_concurrency(
    server: FakeLLMServer, config: dict[str, Any]
) -> None:
    in_flight = peak = 0

    async def slow(body: dict[str, Any]) -> Any:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1
        return respond(body)

    server.responder = slow
    batch = run_chats(PairChat(config), range(40), concurrency=6)
    assert batch.ok
    assert peak == 6  # a chat has one request in flight at a time: 6 chats at once, never 7


def test_a_failing_chat_costs_only_its_own_result(config: dict[str, Any]) -> None:
    async def sometimes_broken(item: BatchItem[int]) -> Any:
        if item.input == 3:
            raise ValueError("no agents for task 3")
        return await PairChat(config)(item)

    batch = run_chats(sometimes_broken, range(6))
    assert not batch.ok
    assert [i for i, r in enumerate(batch) if r is None] == [3]
    error = batch.errors[3]
    assert (error.index, error.type, error.message) == (3, "ValueError", "no agents for task 3")
    assert (error.attempts, error.retryable) == (1, False)  # a bug is not retried
    assert "sometimes_broken" in error.traceback
    assert isinstance(error.exception, ValueError)
    assert "chat 3 failed: ValueError: no agents for task 3" in str(error)
    with pytest.raises(BatchFailedError, match="1 of 6 chats failed") as raised:
        batch.raise_errors()
    assert raised.value.__cause__ is error.exception
    assert [i for i, _ in batch.succeeded()] == [0, 1, 2, 4, 5]


def test_transient_failures_are_retried_and_others_are_not(
    server: FakeLLMServer, config: dict[str, Any]
) -> None:
    failed_once: set[int] = set()
    no_retry = {"x-should-retry": "false"}  # the client gives up at once: the batch decides

    def flaky(body: dict[str, Any]) -> Any:
        task = task_of(body)
        if task in (2, 5) and task not in failed_once:  # fails once, then works
            failed_once.add(task)
            return {"error": 503, "message": "overloaded", "headers": no_retry}
        if task == 4:  # always refused: a bad request is not worth another try
            return {"error": 400, "message": "bad request", "headers": no_retry}
        if task == 6:  # always down
            return {"error": 500, "message": "down", "headers": no_retry}
        return respond(body)

    server.responder = flaky
    batch = run_chats(PairChat(config), range(8), retries=1)
    assert sorted(batch.errors) == [4, 6]
    assert histories([batch[2], batch[5]]) == histories(one_by_one(config, range(2, 6, 3)))
    assert batch.errors[4].type == "openai.BadRequestError"
    assert (batch.errors[4].attempts, batch.errors[4].retryable) == (1, False)
    assert batch.errors[6].type == "openai.InternalServerError"
    assert (batch.errors[6].attempts, batch.errors[6].retryable) == (2, True)
    requests = [task_of(r) for r in server.requests]
    assert (requests.count(4), requests.count(6)) == (1, 2)


def test_retry_on_decides_what_is_retried(config: dict[str, Any]) -> None:
    attempts: list[int] = []

    def once_broken(item: BatchItem[int]) -> Any:
        attempts.append(item.attempt)
        if item.attempt == 1:
            raise KeyError("first try")
        return SyncPairChat(config)(item)

    batch = run_chats(once_broken, [0], retry_on=(KeyError,))
    assert batch.ok
    assert attempts == [1, 2]
    assert not is_transient(KeyError("first try"))
    assert is_transient(ConnectionResetError())
    assert is_transient(TimeoutError())


def test_the_batch_budget_stops_new_chats_and_ends_running_ones(
    server: FakeLLMServer, config: dict[str, Any]
) -> None:
    server.responder = lambda body: {"content": respond(body), "delay": 0.01}
    batch = run_chats(
        PairChat(config, turns=3), range(30), concurrency=4, budget=Budget(max_llm_calls=12)
    )
    assert batch.stop_reason == "budget:llm_calls"
    # The requests in flight when the limit was reached complete: at most 3 more, 4 at once.
    assert 12 <= batch.usage.llm_calls == len(server.requests) <= 12 + 3
    assert batch.not_run
    assert not batch.ok
    assert not batch.errors
    assert batch.not_run == list(range(30 - len(batch.not_run), 30))  # the last ones, in order
    ended = [r.termination_reason for r in batch if r is not None]
    assert "budget:llm_calls" in ended  # running chats ended as a chat's budget ends them
    assert set(ended) <= {"max_turns", "budget:llm_calls"}


async def test_usage_and_cost_add_up_across_the_batch(config: dict[str, Any]) -> None:
    batch = await a_run_chats(PairChat(config), range(25), concurrency=10)
    chats = [r for r in batch if r is not None]
    assert batch.usage.llm_calls == sum(r.usage.llm_calls for r in chats) == 25 * 3
    assert batch.cost > 0
    assert batch.cost == pytest.approx(math.fsum(r.usage.cost for r in chats), abs=1e-12)
    assert batch.usage.total_tokens == sum(r.usage.total_tokens for r in chats)
    assert batch.usage.by_agent().keys() == {"user", "assistant"}
    assert "25 ok, 0 failed" in repr(batch)


def test_sync_and_async_factories_give_the_same_chats(config: dict[str, Any]) -> None:
    async_batch = run_chats(PairChat(config), range(20), concurrency=8)
    sync_batch = run_chats(SyncPairChat(config), range(20), concurrency=8)
    assert histories(async_batch) == histories(sync_batch)

    def plain_lambda_returning_a_coroutine(item: BatchItem[int]) -> Any:
        return PairChat(config)(item)

    assert histories(run_chats(plain_lambda_returning_a_coroutine, range(20))) == histories(
        async_batch
    )


def test_group_chats_and_chat_queues(config: dict[str, Any]) -> None:
    groups = run_chats(GroupOfThree(config), range(5))
    assert groups.ok
    speakers = [m.get("name") for m in groups[4].chat_history]
    assert speakers == ["user", "writer", "critic"]
    assert groups[4].chat_history[1]["content"] == "reply 2 to task 4"

    queues = run_chats(TwoInARow(config), range(5))
    assert queues.ok
    first, second = queues[2]
    assert first.chat_history[0]["content"] == "Solve task 2."
    assert second.chat_history[0]["content"].startswith("Review it.\nContext: \n")
    assert queues.usage.llm_calls == 5 * 2


def test_chats_are_quiet_unless_asked(
    config: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    run_chats(PairChat(config), range(2))
    assert "Solve task" not in capsys.readouterr().out
    run_chats(PairChat(config), range(2), quiet=False)
    assert "Solve task 1." in capsys.readouterr().out


def test_progress_bar_or_line(
    config: dict[str, Any], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_chats(PairChat(config), range(3), progress=True)
    assert "chats (local): 100%" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "tqdm", None)  # tqdm not installed
    run_chats(PairChat(config), range(3), progress=True)
    assert "chats (local): 3/3 done, 0 failed, $0.00" in capsys.readouterr().err
    run_chats(PairChat(config), range(3))  # not a terminal: no progress by default
    assert capsys.readouterr().err == ""


def test_wrong_arguments_are_refused_before_any_chat(config: dict[str, Any]) -> None:
    chat = PairChat(config)
    with pytest.raises(ValueError, match="concurrency"):
        run_chats(chat, range(3), concurrency=0)
    with pytest.raises(ValueError, match="retries"):
        run_chats(chat, range(3), retries=-1)
    with pytest.raises(ValueError, match="backend"):
        run_chats(chat, range(3), backend="dask")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_id"):
        run_chats(chat, range(3), store=object())
    with pytest.raises(TypeError, match="Budget"):
        run_chats(chat, range(3), budget=10)  # type: ignore[arg-type]
    assert run_chats(chat, []).results == []


def test_import_parley_imports_neither_the_batch_nor_ray() -> None:
    code = (
        "import sys, parley, parley.batch\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith(('ray.', 'tqdm'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_a_cancelled_batch_stops_its_chats(
    server: FakeLLMServer, config: dict[str, Any]
) -> None:
    # Every answer comes only after the test is over: each chat sends its first request and
    # waits, so all 20 are in flight (the default concurrency runs them at once) when the
    # batch is cancelled, whatever the machine's load.
    server.responder = lambda body: {"content": respond(body), "delay": 600}
    batch = asyncio.create_task(a_run_chats(PairChat(config, turns=5), range(20)))
    await asyncio.to_thread(server.wait_for_requests, 20, 60.0)
    batch.cancel()
    with pytest.raises(asyncio.CancelledError):
        await batch
    # Each request in flight was dropped, not awaited (a chat that went on would still be
    # waiting for its answer), and no chat sent another.
    await asyncio.to_thread(server.wait_for_abandoned, 20, 60.0)
    assert len(server.requests) == 20


def test_ray_missing_is_an_import_error_naming_the_extra(
    config: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"pip install 'parley\[batch\]'"):
        run_chats(PairChat(config), range(2), backend="ray")


def test_stores_travel_to_workers_as_recipes(tmp_path: Any) -> None:
    import pickle

    from parley.batch._portable import StoreRecipe, portable, rebuilt
    from parley.durable import ChatStore, RedisChatStore

    store = ChatStore(tmp_path / "chats.db", synchronous="NORMAL", lease_seconds=7)
    store.chats()  # opens its connection, which does not pickle
    sent = pickle.loads(pickle.dumps(portable(store)))
    assert isinstance(sent, StoreRecipe)
    assert store.key.decode() not in repr(sent)
    again = rebuilt(sent)
    assert (type(again), again.path, again.synchronous) == (type(store), store.path, "NORMAL")
    assert (again.key, again.lease_seconds) == (store.key, 7)  # the journal key travels too
    key = "a key of this batch's own, long enough"
    redis = rebuilt(portable(RedisChatStore("redis://127.0.0.1:1/0", prefix="p:", key=key)))
    assert (redis.url, redis.prefix, redis.key) == ("redis://127.0.0.1:1/0", "p:", key.encode())

    class Mine:
        def __reduce__(self) -> Any:
            raise TypeError("holds a socket")

    with pytest.raises(TypeError, match="cannot be sent to Ray workers"):
        portable(Mine())
