"""Transport, concurrency, lifecycle and the request log."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import threading
import time
from urllib.parse import parse_qs

import openai
import pytest

from parley.testing import FakeLLMServer
from tests._overlap import AllInFlight

from ._raw import post_chat

USER = [{"role": "user", "content": "hi"}]


async def test_a_hundred_concurrent_requests(fake_llm: FakeLLMServer) -> None:
    # No answer until all 100 requests are in flight: a server handling them one at a time
    # answers the first with a 500 after OVERLAP_TIMEOUT.
    fake_llm.responder = AllInFlight(100, lambda req: req["messages"][0]["content"])
    async with openai.AsyncOpenAI(base_url=fake_llm.base_url, api_key="k", max_retries=0) as c:
        results = await asyncio.gather(
            *(
                c.chat.completions.create(model="m", messages=[{"role": "user", "content": str(i)}])
                for i in range(100)
            )
        )
    assert [r.choices[0].message.content for r in results] == [str(i) for i in range(100)]
    assert len(fake_llm.requests) == 100


def test_keep_alive_serves_many_requests_on_one_connection(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = lambda req: "ok"
    conn = http.client.HTTPConnection("127.0.0.1", fake_llm.port, timeout=5)
    body = json.dumps({"model": "m", "messages": USER})
    try:
        conn.connect()
        sock = conn.sock
        for _ in range(20):
            conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
            resp = conn.getresponse()
            assert resp.status == 200
            assert json.loads(resp.read())["choices"][0]["message"]["content"] == "ok"
            assert resp.getheader("Connection") == "keep-alive"
            assert conn.sock is sock  # the same TCP connection throughout
    finally:
        conn.close()


def test_connection_close_is_honoured(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("bye")
    with socket.create_connection(("127.0.0.1", fake_llm.port), timeout=5) as s:
        body = json.dumps({"model": "m", "messages": USER}).encode()
        s.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, payload = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK")
    assert b"Connection: close" in head
    assert json.loads(payload)["choices"][0]["message"]["content"] == "bye"


def test_chunked_request_body(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("chunked ok")
    body = json.dumps({"model": "m", "messages": USER}).encode()

    resp = post_chat(fake_llm, [body[:10], body[10:]], chunked=True)
    assert resp.status == 200
    assert resp.json()["choices"][0]["message"]["content"] == "chunked ok"
    assert fake_llm.last_request == {"model": "m", "messages": USER}


def test_request_log_keeps_order_and_bodies(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.responder = lambda req: "x"
    for i in range(3):
        client.chat.completions.create(
            model=f"model-{i}",
            messages=[{"role": "user", "content": f"m{i}"}],
            temperature=0.5,
            max_tokens=10,
        )
    assert [r["model"] for r in fake_llm.requests] == ["model-0", "model-1", "model-2"]
    assert fake_llm.requests[1] == {
        "model": "model-1",
        "messages": [{"role": "user", "content": "m1"}],
        "temperature": 0.5,
        "max_tokens": 10,
    }
    rec = fake_llm.received[0]
    assert (rec.method, rec.path) == ("POST", "/v1/chat/completions")
    assert rec.headers["authorization"] == "Bearer sk-test"
    assert fake_llm.last_request["model"] == "model-2"


def test_request_headers_and_query_are_recorded(
    fake_llm: FakeLLMServer, client: openai.OpenAI
) -> None:
    fake_llm.add_reply("a")
    client.chat.completions.create(
        model="m",
        messages=USER,
        extra_headers={"X-Trace-Id": "trace-1"},
        extra_query={"tenant": "blue", "flag": "a b"},
        extra_body={"custom": 1},
    )
    rec = fake_llm.received[-1]
    assert rec.headers["x-trace-id"] == "trace-1"  # names lower-cased, values as sent
    assert "X-Trace-Id" not in rec.headers
    assert parse_qs(rec.query) == {"tenant": ["blue"], "flag": ["a b"]}
    assert rec.json["custom"] == 1
    assert json.loads(rec.raw) == rec.json
    assert fake_llm.requests[-1] == rec.json


def test_request_log_is_a_snapshot(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply("a")
    log = fake_llm.requests
    client.chat.completions.create(model="m", messages=USER)
    assert log == []
    assert len(fake_llm.requests) == 1


def test_wait_for_requests_from_another_thread(
    fake_llm: FakeLLMServer, client: openai.OpenAI
) -> None:
    fake_llm.add_reply("late", delay=0.2)
    t = threading.Thread(target=lambda: client.chat.completions.create(model="m", messages=USER))
    t.start()
    assert fake_llm.wait_for_requests(1, timeout=5)[0]["model"] == "m"
    t.join()
    with pytest.raises(TimeoutError):
        fake_llm.wait_for_requests(2, timeout=0.1)


def test_reset(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply("a").add_reply("b")
    client.chat.completions.create(model="m", messages=USER)
    fake_llm.reset()
    assert (fake_llm.pending, fake_llm.requests) == (0, [])
    with pytest.raises(LookupError):
        _ = fake_llm.last_request


def test_start_stop_is_idempotent_and_frees_the_port() -> None:
    server = FakeLLMServer()
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.base_url
    server.start()
    server.start()
    port = server.port
    server.stop()
    server.stop()
    with (
        pytest.raises(ConnectionRefusedError),
        socket.create_connection(("127.0.0.1", port), timeout=1),
    ):
        pass


def test_stop_closes_idle_keep_alive_connections() -> None:
    server = FakeLLMServer(default="x").start()
    c = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    c.chat.completions.create(model="m", messages=USER)  # leaves a pooled keep-alive connection
    started = time.monotonic()
    server.stop()
    # A stop held up by the idle connection waits out the server thread's 10 s join.
    assert time.monotonic() - started < 8
    with pytest.raises(openai.APIConnectionError):
        c.chat.completions.create(model="m", messages=USER)
    c.close()


def test_port_in_use_is_a_clear_error(fake_llm: FakeLLMServer) -> None:
    with pytest.raises(RuntimeError, match=f"could not listen on 127.0.0.1:{fake_llm.port}"):
        FakeLLMServer(port=fake_llm.port).start()


async def test_async_context_manager() -> None:
    async with (
        FakeLLMServer(default="async ok") as server,
        openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0) as c,
    ):
        r = await c.chat.completions.create(model="m", messages=USER)
    assert r.choices[0].message.content == "async ok"
