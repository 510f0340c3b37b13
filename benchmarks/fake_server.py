"""How fast parley.testing.FakeLLMServer starts and answers, through the real openai client.

    python benchmarks/fake_server.py [--requests 500]

Prints: start+stop time, sequential round trips on one keep-alive connection (raw
http.client, and openai's client), streamed round trips, and 100 concurrent requests through
AsyncOpenAI. A Nagle/delayed-ACK stall would show as ~40 ms per sequential round trip.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import statistics
import time

import openai

from parley.testing import FakeLLMServer

MESSAGES = [{"role": "user", "content": "hello"}]


def _per_call_ms(total: float, n: int) -> str:
    return f"{total / n * 1000:.3f} ms/request"


def bench_cold_start() -> None:
    """Importing parley.testing (and so aiohttp) and the first start() in a fresh process."""
    import subprocess
    import sys

    code = (
        "import time; t = time.perf_counter(); from parley.testing import FakeLLMServer;"
        "s = FakeLLMServer().start(); print((time.perf_counter() - t) * 1000); s.stop()"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    print(f"import parley.testing + first start(), fresh process: {float(out.stdout):.1f} ms")


def bench_start_stop(rounds: int = 20) -> None:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        with FakeLLMServer():
            pass
        times.append(time.perf_counter() - t)
    median, worst = statistics.median(times) * 1000, max(times) * 1000
    print(f"start+stop: median {median:.2f} ms, max {worst:.2f} ms")


def bench_raw(server: FakeLLMServer, n: int) -> None:
    body = json.dumps({"model": "m", "messages": MESSAGES})
    conn = http.client.HTTPConnection("127.0.0.1", server.port)
    t = time.perf_counter()
    for _ in range(n):
        conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        conn.getresponse().read()
    total = time.perf_counter() - t
    conn.close()
    print(f"raw http.client, keep-alive, sequential: {_per_call_ms(total, n)}")


def bench_openai(server: FakeLLMServer, n: int, stream: bool) -> None:
    with openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0) as c:
        c.chat.completions.create(model="m", messages=MESSAGES)  # warm the connection pool
        t = time.perf_counter()
        for _ in range(n):
            r = c.chat.completions.create(model="m", messages=MESSAGES, stream=stream)
            if stream:
                for _chunk in r:
                    pass
        total = time.perf_counter() - t
    print(f"openai.OpenAI, sequential, stream={stream}: {_per_call_ms(total, n)}")


async def bench_concurrent(server: FakeLLMServer, n: int) -> None:
    async with openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0) as c:
        t = time.perf_counter()
        await asyncio.gather(
            *(c.chat.completions.create(model="m", messages=MESSAGES) for _ in range(n))
        )
        total = time.perf_counter() - t
    per_call = _per_call_ms(total, n)
    print(f"openai.AsyncOpenAI, {n} concurrent: {total * 1000:.1f} ms in all, {per_call}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()
    bench_cold_start()
    bench_start_stop()
    text = "The answer is 42. " * 20
    with FakeLLMServer(default=text) as server:
        bench_raw(server, args.requests)
        bench_openai(server, args.requests, stream=False)
        bench_openai(server, args.requests // 5, stream=True)
        asyncio.run(bench_concurrent(server, 100))


if __name__ == "__main__":
    main()
