"""The Wolfram Alpha client against a loopback server speaking the v2 query API's JSON."""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from parley.agentchat.contrib.math_user_proxy_agent import WolframAlphaAPIWrapper

ANSWERS: dict[str, Any] = {
    "integrate x^2": {
        "success": True,
        "pods": [
            {"title": "Input", "subpods": [{"plaintext": "integral x^2 dx"}]},
            {"title": "Indefinite integral", "subpods": [{"plaintext": "x^3/3 + constant"}]},
            {"title": "Plot", "subpods": [{"plaintext": ""}]},
        ],
    },
    "gibberish": {"success": False, "pods": []},
}


class Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, list[str]]]] = []

    def do_GET(self) -> None:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        Handler.seen.append(query)
        body = json.dumps({"queryresult": ANSWERS[query["input"][0]]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v2/query"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_answer_pods_as_text(endpoint: str) -> None:
    client = WolframAlphaAPIWrapper("APP-123", endpoint=endpoint, timeout=5)
    text, ok = client.run("integrate x^2")
    assert ok
    assert text == "Input: integral x^2 dx\nIndefinite integral: x^3/3 + constant"
    assert Handler.seen[-1]["appid"] == ["APP-123"]
    assert Handler.seen[-1]["output"] == ["json"]


def test_no_answer(endpoint: str) -> None:
    text, ok = WolframAlphaAPIWrapper("APP-123", endpoint=endpoint, timeout=5).run("gibberish")
    assert not ok
    assert "wasn't able to answer" in text


def test_unreachable_server_is_a_failed_query_without_the_app_id() -> None:
    # A closed loopback port: connection refused at once.
    text, ok = WolframAlphaAPIWrapper(
        "APP-SECRET", endpoint="http://127.0.0.1:9/v2/query", timeout=5
    ).run("x")
    assert not ok
    assert "APP-SECRET" not in text
