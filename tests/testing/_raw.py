"""Raw HTTP to the fake server, below the openai client, with nothing but the standard library."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from parley.testing import FakeLLMServer


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


def request(
    server: FakeLLMServer,
    method: str,
    path: str,
    body: bytes | Iterable[bytes] | None = None,
    chunked: bool = False,
) -> RawResponse:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        headers = {"Content-Type": "application/json"}
        conn.request(method, path, body=body, headers=headers, encode_chunked=chunked)
        resp = conn.getresponse()
        return RawResponse(
            resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read().decode()
        )
    finally:
        conn.close()


def post_chat(
    server: FakeLLMServer, body: bytes | Iterable[bytes], chunked: bool = False
) -> RawResponse:
    return request(server, "POST", "/v1/chat/completions", body, chunked)
