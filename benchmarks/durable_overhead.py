"""What a durable chat's commits cost per turn: the same two-agent chat of N turns (each a
model call and a message each way) without a store, with ChatStore(synchronous="NORMAL") and
with the default synchronous="FULL", on this machine's disk; given a Redis URL, with
RedisChatStore too (e.g. a redis-server started on loopback with its default settings).

    PYTHONPATH=. python benchmarks/durable_overhead.py [turns] [dir] [redis://127.0.0.1:6379/0]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from parley import ConversableAgent
from parley.durable import ChatStore, RedisChatStore
from parley.testing import FakeLLMServer


def run(server: FakeLLMServer, turns: int, **durable: Any) -> float:
    config = {"config_list": server.config_list(price=[0, 0])}
    a = ConversableAgent("a", llm_config=config, human_input_mode="NEVER")
    b = ConversableAgent("b", llm_config=config, human_input_mode="NEVER")
    start = time.perf_counter()
    a.initiate_chat(b, message="hi", max_turns=turns, silent=True, summary_method=None, **durable)
    return (time.perf_counter() - start) / turns


def main() -> None:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    where = Path(sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp())
    redis_url = sys.argv[3] if len(sys.argv) > 3 else None
    with FakeLLMServer(default="ok") as server:
        run(server, 5)  # warm up: imports, connections
        rows = []
        for rep in range(3):
            plain = run(server, turns)
            normal = run(
                server,
                turns,
                store=ChatStore(where / f"n{rep}.db", synchronous="NORMAL"),
                chat_id="c",
            )
            full = run(server, turns, store=ChatStore(where / f"f{rep}.db"), chat_id="c")
            redis = None
            if redis_url is not None:
                store = RedisChatStore(redis_url, prefix=f"bench:{time.time()}:")
                redis = run(server, turns, store=store, chat_id="c")
                store.close()
            rows.append((plain, normal, full, redis))
    for plain, normal, full, redis in rows:
        print(
            f"per turn: plain {plain * 1e3:.2f} ms, NORMAL +{(normal - plain) * 1e3:.2f} ms, "
            f"FULL +{(full - plain) * 1e3:.2f} ms"
            + ("" if redis is None else f", Redis +{(redis - plain) * 1e3:.2f} ms")
        )


if __name__ == "__main__":
    main()
