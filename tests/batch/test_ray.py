"""run_chats on a real Ray cluster on loopback: a head node and two worker nodes, started by
``ray start`` (``_ray_cluster``), the fake model in this process. The cluster is the module's:
its tests run in order, the one that kills a worker node last."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from parley.batch import RayBackend, run_chats
from parley.batch._ray_backend import INSTALL_HINT
from parley.durable import ChatStore
from parley.testing import FakeLLMServer
from parley.usage import Budget

from ._ray_cluster import (
    HOST,
    SETUP_TIMEOUT,
    Cluster,
    Node,
    auth_env,
    outside_connections,
    processes,
    short_root,
)
from .chats import (
    PRICE,
    LockedUp,
    NodeTaggedPairChat,
    PairChat,
    histories,
    respond,
    task_of,
)

pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(SETUP_TIMEOUT)]

ROOT = Path(__file__).resolve().parents[2]  # this checkout: the workers import parley from it
CHATS = 1000
KILL_TIMEOUT = 60.0  # bounds the hold on a node's requests: it ends once the node is killed
BATCH_TIMEOUT = 600.0  # bounds waiting for a node to get busy: the batch's end ends it sooner


@dataclass
class Running:
    nodes: Cluster
    ids: dict[str, str]  # worker node name -> Ray node id

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes.nodes if n.name == name)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Running]:
    """The cluster (a head, worker nodes w0 and w1), this process connected to it."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    with short_root() as root, pytest.MonkeyPatch.context() as patch:
        nodes = Cluster(root, env)
        # The driver's token, as the nodes'; before Ray is imported, which reads the mode once.
        for name, value in auth_env().items():
            patch.setenv(name, value)
        try:
            import ray  # here, not at collection: a run without these tests never imports it
        except ImportError:
            pytest.fail(
                f"ray is not installed: {INSTALL_HINT} (the dev extra has it)", pytrace=False
            )
        try:
            nodes.start_head(num_cpus=1)
            workers = ["w0", "w1"]
            nodes.add_nodes(workers, num_cpus=1)
            ray.init(address=nodes.address, _node_ip_address=HOST, log_to_driver=False)
            ids = {
                name: next(n["NodeID"] for n in ray.nodes() if name in n["Resources"])
                for name in workers
            }
            yield Running(nodes, ids)
        finally:
            ray.shutdown()
            nodes.stop()
    assert not nodes.processes(), "processes of the test cluster are left"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(responder=respond) as server:
        yield server
        assert not server.errors, server.errors


@pytest.fixture(scope="module")
def config(fake: FakeLLMServer) -> dict[str, Any]:
    return fake.llm_config(price=PRICE)


@pytest.fixture(scope="module")
def local(config: dict[str, Any]) -> Any:
    """The batch on the local backend: what Ray must give back."""
    return run_chats(PairChat(config), range(CHATS), concurrency=60)


def nodes_of(workers: dict[str, int]) -> dict[str, int]:
    """Chats per node id (``workers`` counts them per ``<node id>/<pid>``)."""
    out: dict[str, int] = {}
    for name, count in workers.items():
        node = name.split("/")[0]
        out[node] = out.get(node, 0) + count
    return out


def test_a_thousand_chats_on_ray_as_on_the_local_backend(
    cluster: Running, fake: FakeLLMServer, config: dict[str, Any], local: Any
) -> None:
    before = len(fake.requests)
    batch = run_chats(PairChat(config), range(CHATS), concurrency=60, backend="ray")
    assert batch.ok
    assert batch.backend == "ray"
    assert histories(batch) == histories(local)
    assert len(fake.requests) - before == CHATS * 3
    assert batch.usage.llm_calls == local.usage.llm_calls == CHATS * 3
    assert batch.cost == pytest.approx(local.cost, abs=1e-9)
    per_node = nodes_of(batch.workers)
    assert sum(per_node.values()) == CHATS
    assert outside_connections([os.getpid(), *cluster.nodes.processes()]) == []
    assert per_node.get(cluster.ids["w0"])
    assert per_node.get(cluster.ids["w1"])


def test_a_result_that_cannot_travel_fails_its_chat_only(
    cluster: Running, config: dict[str, Any], local: Any
) -> None:
    batch = run_chats(LockedUp(config), range(20), backend="ray")
    assert sorted(batch.errors) == [3]
    error = batch.errors[3]
    assert error.type == "TypeError"
    assert "cannot be sent back from the worker" in error.message
    assert histories(batch.results[:3]) == histories(local)[:3]
    assert histories(batch.results[4:]) == histories(local)[4:20]


def test_a_durable_batch_on_ray_replays_from_a_shared_store(
    cluster: Running, fake: FakeLLMServer, config: dict[str, Any], local: Any, tmp_path: Path
) -> None:
    store = ChatStore(tmp_path / "chats.db", synchronous="NORMAL")  # one machine: a shared file
    backend = RayBackend(chunk_size=10)
    first = run_chats(
        PairChat(config), range(200), backend=backend, store=store, batch_id="ray", concurrency=30
    )
    assert first.ok
    assert len(store.chats("done")) == 200
    count = len(fake.requests)
    again = run_chats(
        PairChat(config), range(200), backend=backend, store=store, batch_id="ray", concurrency=30
    )
    assert len(fake.requests) == count  # replayed by the workers from the store
    assert histories(again) == histories(first) == histories(local)[:200]


def test_the_batch_budget_on_ray(
    cluster: Running, fake: FakeLLMServer, config: dict[str, Any]
) -> None:
    fake.responder = lambda body: {"content": respond(body), "delay": 0.05}
    try:
        batch = run_chats(
            PairChat(config),
            range(300),
            concurrency=12,
            backend=RayBackend(poll=0.1),
            budget=Budget(max_llm_calls=90),
        )
    finally:
        fake.responder = respond
    assert batch.stop_reason == "budget:llm_calls"
    assert batch.not_run
    assert not batch.errors
    # Checked every poll: the chats running then end at their next step.
    assert 90 <= batch.usage.llm_calls < 2 * 90
    assert "budget:llm_calls" in {r.termination_reason for r in batch if r is not None}


class KillSwitch:
    """The fake model for the node-kill test: answers as :func:`respond` does (after ``delay``
    seconds), but from the ``after``-th request of ``node`` on, holds each of that node's
    requests until :meth:`release`: the node then has chats in flight, stuck there, whatever
    the machine's load, and :meth:`wait` returns, to let the test kill it. Runs on the fake
    server's loop; the test reads what it saw from its own thread."""

    def __init__(self, fake: FakeLLMServer, node: Node, after: int, delay: float) -> None:
        self._fake, self._node, self._after, self._delay = fake, node, after, delay
        self._lock = threading.Lock()
        self._seen = 0
        self._held: set[int] = set()  # tasks whose request from the node waits
        self._busy = threading.Event()
        self._released = threading.Event()

    async def __call__(self, body: dict[str, Any]) -> Any:
        if self._from_node(body):
            with self._lock:
                self._seen += 1
                hold = self._seen >= self._after
                if hold:
                    self._held.add(task_of(body))
            if hold:
                self._busy.set()
                deadline = time.monotonic() + KILL_TIMEOUT
                while not self._released.is_set():  # until the node is dead (or time is up)
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"the kill switch held a request {KILL_TIMEOUT} s")
                    await asyncio.sleep(0.01)
        return {"content": respond(body), "delay": self._delay}

    def _from_node(self, body: dict[str, Any]) -> bool:
        # The responder is given the body only; its recorded request (the same object as its
        # ``chat``) has the headers.
        for request in reversed(self._fake.received):
            if request.chat is body:
                return request.headers.get("x-node") == self._node.marker
        raise LookupError("a request the fake server did not record")

    def wait(self, timeout: float) -> bool:
        """Whether the node had requests held (chats in flight) within ``timeout``."""
        return self._busy.wait(timeout)

    def release(self) -> None:
        self._released.set()
        self._busy.set()  # a waiting test goes on

    @property
    def held(self) -> set[int]:
        """The tasks whose chats the node had in flight, held here."""
        with self._lock:
            return set(self._held)


def test_a_worker_node_killed_mid_batch(
    cluster: Running, fake: FakeLLMServer, config: dict[str, Any], local: Any
) -> None:
    node = cluster.node("w1")
    # Once the node's worker is well into its chats (its process up, some chats done), its
    # next requests wait: its chats are in flight when it is killed, and the other workers
    # must run them again.
    switch = KillSwitch(fake, node, after=100, delay=0.01)
    fake.responder = switch
    before = len(fake.received)
    killed: list[tuple[int, set[int]]] = []  # requests until then, the node's chats in flight

    def kill_w1_once_busy() -> None:
        try:
            # Until the node has chats held, or the batch ended without that (release).
            if switch.wait(BATCH_TIMEOUT) and switch.held:
                node.kill()
                killed.append((len(fake.received), switch.held))
        finally:
            switch.release()

    killer = threading.Thread(target=kill_w1_once_busy)
    killer.start()
    try:
        batch = run_chats(NodeTaggedPairChat(config), range(CHATS), concurrency=60, backend="ray")
    finally:
        switch.release()
        killer.join(KILL_TIMEOUT)
        fake.responder = respond
    assert killed, "the node never had its chats in flight"
    ((at, lost),) = killed
    assert not node.alive()
    assert not processes(node.marker)
    assert batch.ok, batch.errors
    assert histories(batch) == histories(local)  # every result, once, as on the local backend
    assert sum(batch.workers.values()) == CHATS
    # The chats the node had in flight ran again on the other nodes.
    again = {task_of(r.chat) for r in fake.received[at:] if r.headers.get("x-node") != node.marker}
    assert lost <= again, sorted(lost - again)
    assert len(fake.received) - before > CHATS * 3
