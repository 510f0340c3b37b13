"""The web page's server: its access token, its headers, the state a page gets on connect, and
what closing it does. All over real HTTP and websockets on loopback."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from parley.io import IOStream
from parley.web import WebHuman, WebHumanClosedError, serve
from parley.web._server import is_loopback

from ._support import WAIT, Page, web_threads, ws_url


def _get(url: str) -> tuple[int, dict[str, str], str]:
    try:
        with urllib.request.urlopen(url, timeout=WAIT) as response:
            headers = {k.lower(): v for k, v in response.headers.items()}
            return response.status, headers, response.read().decode()
    except urllib.error.HTTPError as error:
        with error:
            headers = {k.lower(): v for k, v in error.headers.items()}
            return error.code, headers, error.read().decode()


def _base(human: WebHuman) -> str:
    return human.url.split("?", 1)[0]


@pytest.mark.parametrize("path", ["", "app.js", "app.css"])
@pytest.mark.parametrize("query", ["", "?token=", "?token=wrong", "?tok=x"])
def test_every_http_request_needs_the_token(human: WebHuman, path: str, query: str) -> None:
    status, _, body = _get(_base(human) + path + query)
    assert status == 403
    assert "access token" in body


def test_the_page_with_its_token(human: WebHuman) -> None:
    status, headers, body = _get(human.url)
    assert status == 200
    assert headers["content-type"].startswith("text/html")
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert headers["referrer-policy"] == "no-referrer"
    token = human.url.split("token=", 1)[1]
    # The page loads its script and style with the token (and names no other site).
    assert f'src="app.js?token={token}"' in body
    assert f'href="app.css?token={token}"' in body
    assert "http" not in body.replace("http-equiv", "")
    for asset in ("app.js", "app.css"):
        status, headers, text = _get(f"{_base(human)}{asset}?token={token}")
        assert status == 200
        assert text
    assert "innerHTML" not in _get(f"{_base(human)}app.js?token={token}")[2]


@pytest.mark.parametrize("query", ["", "?token=", "?token=wrong"])
def test_the_websocket_needs_the_token(human: WebHuman, query: str) -> None:
    url = ws_url(_base(human)) + "ws" + query
    with pytest.raises(InvalidStatus) as refused, connect(url, open_timeout=WAIT):
        pass
    assert refused.value.response.status_code == 403


def test_the_websocket_refuses_another_sites_page(human: WebHuman) -> None:
    evil = "http://evil.example"
    with pytest.raises(InvalidStatus) as refused, connect(ws_url(human.url), origin=evil):
        pass
    assert refused.value.response.status_code == 403
    origin = f"http://127.0.0.1:{human.port}"
    with connect(ws_url(human.url), origin=origin, open_timeout=WAIT) as ws:
        assert json.loads(ws.recv(timeout=WAIT))["type"] == "snapshot"


def test_loopback_by_default_and_a_fresh_token_each_time() -> None:
    with serve() as one, serve() as two:
        assert one.host == "127.0.0.1"
        assert one.url.startswith(f"http://127.0.0.1:{one.port}/?token=")
        assert one.url != two.url
        assert len(one.url.split("token=")[1]) >= 32
        assert "token" not in repr(one)
        assert one.url.split("token=")[1] not in repr(one)
    assert web_threads() == []


def test_serving_beyond_this_machine_is_said(caplog: pytest.LogCaptureFixture) -> None:
    with serve("0.0.0.0") as human:
        assert human.url.startswith(f"http://127.0.0.1:{human.port}/?token=")
        assert _get(human.url)[0] == 200
    assert "reachable from other machines" in caplog.text
    assert "token=" not in caplog.text


def test_what_counts_as_loopback() -> None:
    assert is_loopback("127.0.0.1")
    assert is_loopback("::1")
    assert is_loopback("localhost")
    assert not is_loopback("0.0.0.0")
    assert not is_loopback("192.168.1.10")


def test_a_new_page_gets_the_whole_state(
    human: WebHuman, open_page: Callable[..., Page], background: Any
) -> None:
    first = open_page()
    assert first.snapshot["chats"] == []
    assert first.snapshot["requests"] == []

    def ask() -> str:
        with human.attach():
            IOStream.get_default().print("before the question")
            return IOStream.get_default().input("Your name? ")

    answer = background(ask)
    request = first.request()
    assert request["prompt"] == "Your name? "
    # A page opened now sees the same request, and what was printed.
    late = open_page()
    assert [r["id"] for r in late.snapshot["requests"]] == [request["id"]]
    assert late.snapshot["requests"][0]["status"] == "pending"
    assert "before the question" in late.snapshot["console"]
    assert late.session != first.session
    assert late.act(type="answer", request=request["id"], action="send", text="Ada")["ok"]
    assert answer.result(WAIT) == "Ada"
    for page in (first, late):
        answered = page.request("answered")
        assert answered["answer"] == "Ada"
        assert answered["answered_by"] == late.session


def test_a_password_answer_is_never_shown(
    human: WebHuman, open_page: Callable[..., Page], background: Any
) -> None:
    page = open_page()

    def ask() -> str:
        with human.attach():
            return IOStream.get_default().input("Key: ", password=True)

    answer = background(ask)
    request = page.request()
    assert request["password"] is True
    assert page.act(type="answer", request=request["id"], action="send", text="s3cret")["ok"]
    assert answer.result(WAIT) == "s3cret"
    assert page.request("answered")["answer"] is None
    assert "s3cret" not in json.dumps(open_page().snapshot)


def test_bad_actions_are_refused_with_a_reason(
    human: WebHuman, open_page: Callable[..., Page]
) -> None:
    page = open_page()
    assert page.act(type="answer", request="r999", action="send")["error"] == "no request 'r999'"
    assert (
        page.act(type="answer", request="r1", action="dance")["error"] == "unknown answer 'dance'"
    )
    assert page.act(type="fly")["error"] == "unknown action 'fly'"
    assert page.act(type="stop", chat="nope")["error"] == "no chat 'nope'"
    page.ws.send("{not json")
    assert page.wait_for(lambda m: m["type"] == "result")["error"] == "not JSON"


def test_close_fails_the_waiting_chat_and_ends_pages(background: Any) -> None:
    human = serve()
    with connect(ws_url(human.url), open_timeout=WAIT) as websocket:
        page = Page(websocket)
        try:

            def ask() -> str:
                with human.attach():
                    return IOStream.get_default().input("Still there? ")

            answer = background(ask)
            page.request()
        finally:
            human.close()
        assert web_threads() == []
        with pytest.raises(WebHumanClosedError, match="was closed"):
            answer.result(WAIT)
        assert page.request("closed")["status"] == "closed"
        assert page.wait_for(lambda m: m["type"] == "closed")
        with pytest.raises(ConnectionClosed) as gone:
            page.next()
        assert gone.value.rcvd is not None
        assert gone.value.rcvd.code == 1001
    # Asking after the close fails at once; printing is dropped; closing again is a no-op.
    with human.attach(), pytest.raises(WebHumanClosedError):
        IOStream.get_default().input("Anyone? ")
    with human.attach():
        IOStream.get_default().print("nobody reads this")
    human.close()
    with pytest.raises(urllib.error.URLError, match="Connection refused"):
        urllib.request.urlopen(human.url, timeout=WAIT)
