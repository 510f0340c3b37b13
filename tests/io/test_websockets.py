"""IOWebsockets against a real websockets server and client on loopback."""

from __future__ import annotations

import logging
import queue
import socket
from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest

from parley.io import IOStream, IOWebsockets

pytest.importorskip("websockets")

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

TIMEOUT = 10.0


def _client(uri: str) -> ClientConnection:
    return connect(uri, open_timeout=TIMEOUT, close_timeout=TIMEOUT)


def _serve(on_connect: Callable[[IOWebsockets], None]) -> AbstractContextManager[str]:
    return IOWebsockets.run_server_in_thread(host="127.0.0.1", port=0, on_connect=on_connect)


def test_print_and_input_round_trip() -> None:
    results: queue.Queue[object] = queue.Queue()

    def on_connect(iostream: IOWebsockets) -> None:
        results.put(IOStream.get_default() is iostream)
        iostream.print("Hello", "browser", sep=", ", end="!\n")
        name = IOStream.get_default().input("Your name? ")
        task = iostream.input()  # no prompt: nothing is sent, it just waits
        iostream.print(f"hi {name}, doing {task}")

    with _serve(on_connect) as uri:
        assert uri.startswith("ws://127.0.0.1:")
        assert not uri.endswith(":0")
        with _client(uri) as ws:
            assert ws.recv(timeout=TIMEOUT) == "Hello, browser!\n"
            assert ws.recv(timeout=TIMEOUT) == "Your name? "
            ws.send("Ada")
            ws.send("ünïcode".encode())  # bytes are decoded as UTF-8
            assert ws.recv(timeout=TIMEOUT) == "hi Ada, doing ünïcode\n"
    assert results.get(timeout=TIMEOUT) is True


def test_each_connection_gets_its_own_stream() -> None:
    def on_connect(iostream: IOWebsockets) -> None:
        who = iostream.input()
        IOStream.get_default().print(f"you are {who}")

    with _serve(on_connect) as uri, _client(uri) as first, _client(uri) as second:
        second.send("second")
        first.send("first")
        assert first.recv(timeout=TIMEOUT) == "you are first\n"
        assert second.recv(timeout=TIMEOUT) == "you are second\n"


def test_default_outside_on_connect_is_unchanged() -> None:
    before = IOStream.get_default()
    with _serve(lambda io: None) as uri, _client(uri):
        assert IOStream.get_default() is before


def test_client_leaving_during_input_is_end_of_input() -> None:
    errors: queue.Queue[BaseException] = queue.Queue()

    def on_connect(iostream: IOWebsockets) -> None:
        try:
            iostream.input("Say something: ")
        except EOFError as e:
            errors.put(e)

    with _serve(on_connect) as uri:
        with _client(uri) as ws:
            assert ws.recv(timeout=TIMEOUT) == "Say something: "
        err = errors.get(timeout=TIMEOUT)
    assert "disconnected while waiting for input (prompt 'Say something: ')" in str(err)


def test_shutdown_ends_a_connection_waiting_for_input() -> None:
    errors: queue.Queue[BaseException] = queue.Queue()

    def on_connect(iostream: IOWebsockets) -> None:
        try:
            iostream.input("waiting> ")
        except EOFError as e:
            errors.put(e)

    server = _serve(on_connect)
    uri = server.__enter__()
    stopped = False
    try:
        with _client(uri) as ws:
            assert ws.recv(timeout=TIMEOUT) == "waiting> "
            # Leave the server's block while the client is still connected and silent.
            server.__exit__(None, None, None)
            stopped = True
            with pytest.raises(ConnectionClosed) as info:
                ws.recv(timeout=TIMEOUT)
            assert info.value.rcvd is not None
            assert info.value.rcvd.code == 1001
    finally:
        if not stopped:
            server.__exit__(None, None, None)
    assert isinstance(errors.get(timeout=TIMEOUT), EOFError)


def test_on_connect_error_is_logged_and_closes_with_1011(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def on_connect(iostream: IOWebsockets) -> None:
        iostream.print("about to fail")
        raise ValueError("boom")

    with caplog.at_level(logging.WARNING, logger="parley.io.websockets"):
        with _serve(on_connect) as uri, _client(uri) as ws:
            assert ws.recv(timeout=TIMEOUT) == "about to fail\n"
            with pytest.raises(ConnectionClosed) as info:
                ws.recv(timeout=TIMEOUT)
        assert info.value.rcvd is not None
        assert info.value.rcvd.code == 1011
        assert "ValueError" in info.value.rcvd.reason
    assert any(
        "on_connect failed" in r.getMessage() and r.exc_info and "boom" in str(r.exc_info[1])
        for r in caplog.records
    )


def test_busy_port_fails_at_once() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with (
            pytest.raises(OSError, match="in use"),
            IOWebsockets.run_server_in_thread(port=port, on_connect=lambda io: None),
        ):
            pass  # pragma: no cover


def test_on_connect_is_required_to_be_callable() -> None:
    with (
        pytest.raises(TypeError, match=r"needs on_connect=fn\(iostream\), got str"),
        IOWebsockets.run_server_in_thread(port=0, on_connect="handler"),  # type: ignore[arg-type]
    ):
        pass  # pragma: no cover


def test_error_in_the_with_body_still_stops_the_server() -> None:
    with pytest.raises(RuntimeError, match="body failed"), _serve(lambda io: None) as uri:
        raise RuntimeError("body failed")
    with pytest.raises(ConnectionRefusedError), _client(uri):  # nothing listens there any more
        pass  # pragma: no cover
