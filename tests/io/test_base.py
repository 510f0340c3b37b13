"""IOStream's protocols and the per-context default stream."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from typing import Any

import pytest

import parley.io
from parley.io import InputStream, IOConsole, IOScripted, IOStream, IOWebsockets, OutputStream


class DuckStream:
    """A user's own stream that does not subclass IOStream."""

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        pass

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        return "duck"


class OnlyPrints:
    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        pass


def test_public_names() -> None:
    assert set(parley.io.__all__) == {
        "AsyncConsoleEventProcessor",
        "AsyncRunResponse",
        "ConsoleEventProcessor",
        "RunResponse",
        "IOConsole",
        "IOScripted",
        "IOStream",
        "IOWebsockets",
        "InputExhaustedError",
        "InputStream",
        "OutputStream",
    }


def test_autogen_module_paths() -> None:
    from parley.io.base import IOStream as base_iostream
    from parley.io.console import IOConsole as console_cls
    from parley.io.websockets import IOWebsockets as ws_cls

    assert (base_iostream, console_cls, ws_cls) == (IOStream, IOConsole, IOWebsockets)


@pytest.mark.parametrize("stream", [IOConsole(), IOScripted(), DuckStream()])
def test_streams_satisfy_all_protocols(stream: object) -> None:
    assert isinstance(stream, IOStream)
    assert isinstance(stream, InputStream)
    assert isinstance(stream, OutputStream)


def test_partial_streams_are_not_iostreams() -> None:
    assert isinstance(OnlyPrints(), OutputStream)
    assert not isinstance(OnlyPrints(), InputStream)
    assert not isinstance(OnlyPrints(), IOStream)
    assert not isinstance("text", IOStream)


def test_concrete_classes_keep_nominal_checks() -> None:
    assert not isinstance(IOScripted(), IOConsole)
    assert not isinstance(DuckStream(), IOScripted)
    assert isinstance(IOConsole(), IOConsole)


def test_import_sets_console_as_global_default() -> None:
    code = (
        "import sys\n"
        "from parley.io import IOConsole, IOStream\n"
        "assert type(IOStream.get_global_default()) is IOConsole\n"
        "assert IOStream.get_default() is IOStream.get_global_default()\n"
        "assert 'websockets' not in sys.modules, 'parley.io must import websockets lazily'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_global_default_applies_outside_set_default(restore_global_default: IOStream) -> None:
    mine = IOScripted()
    IOStream.set_global_default(mine)
    assert IOStream.get_global_default() is mine
    assert IOStream.get_default() is mine
    IOStream.get_default().print("hello")
    assert mine.text == "hello\n"


def test_later_global_default_reaches_code_that_already_asked(
    restore_global_default: IOStream,
) -> None:
    IOStream.get_default()
    mine = IOScripted()
    IOStream.set_global_default(mine)
    assert IOStream.get_default() is mine


def test_set_default_yields_stream_and_restores() -> None:
    outer_default = IOStream.get_default()
    with IOStream.set_default(IOScripted()) as io:
        assert IOStream.get_default() is io
        IOStream.get_default().print("inside")
    assert IOStream.get_default() is outer_default
    assert io.printed == ["inside\n"]


def test_set_default_nests() -> None:
    outer, inner = IOScripted(), IOScripted()
    with IOStream.set_default(outer):
        with IOStream.set_default(inner):
            IOStream.get_default().print("to inner")
            with IOStream.set_default(None):
                assert IOStream.get_default() is IOStream.get_global_default()
            assert IOStream.get_default() is inner
        IOStream.get_default().print("to outer")
    assert outer.text == "to outer\n"
    assert inner.text == "to inner\n"


def test_set_default_restores_after_exception() -> None:
    outer, inner = IOScripted(), IOScripted()

    def fail_with(stream: IOScripted) -> None:
        with IOStream.set_default(stream):
            IOStream.get_default().print("before the error")
            raise ZeroDivisionError

    with IOStream.set_default(outer):
        with pytest.raises(ZeroDivisionError):
            fail_with(inner)
        assert IOStream.get_default() is outer
    assert inner.text == "before the error\n"
    assert IOStream.get_default() is IOStream.get_global_default()


def test_set_default_without_with_does_nothing() -> None:
    before = IOStream.get_default()
    IOStream.set_default(IOScripted())
    assert IOStream.get_default() is before


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        ("not a stream", r"needs an IOStream .* got str, which lacks print\(\) and input\(\)"),
        (OnlyPrints(), r"got OnlyPrints, which lacks input\(\)"),
        (IOConsole, r"got the class IOConsole; call it: IOConsole\(\)"),
    ],
)
def test_bad_streams_are_rejected(bad: Any, expected: str, restore_global_default: Any) -> None:
    with pytest.raises(TypeError, match=expected):
        IOStream.set_default(bad)
    with pytest.raises(TypeError, match=expected):
        IOStream.set_global_default(bad)
    assert IOStream.get_global_default() is restore_global_default


def test_threads_have_their_own_default() -> None:
    barrier = threading.Barrier(2, timeout=10)
    streams = {"a": IOScripted(), "b": IOScripted()}
    errors: list[BaseException] = []

    def work(name: str) -> None:
        try:
            with IOStream.set_default(streams[name]):
                for i in range(3):
                    barrier.wait()  # interleave the two threads step by step
                    IOStream.get_default().print(name, i)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in streams]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert not errors
    assert streams["a"].text == "a 0\na 1\na 2\n"
    assert streams["b"].text == "b 0\nb 1\nb 2\n"


def test_new_thread_does_not_see_callers_context_default() -> None:
    seen: list[IOStream] = []
    with IOStream.set_default(IOScripted()):
        t = threading.Thread(target=lambda: seen.append(IOStream.get_default()))
        t.start()
        t.join(timeout=10)
    assert seen == [IOStream.get_global_default()]


async def test_concurrent_tasks_have_their_own_default() -> None:
    async def work(name: str) -> IOScripted:
        with IOStream.set_default(IOScripted()) as io:
            for i in range(3):
                await asyncio.sleep(0)  # let the other task run in between
                IOStream.get_default().print(name, i)
        return io

    a, b = await asyncio.wait_for(asyncio.gather(work("a"), work("b")), timeout=10)
    assert a.text == "a 0\na 1\na 2\n"
    assert b.text == "b 0\nb 1\nb 2\n"
    assert IOStream.get_default() is IOStream.get_global_default()


async def test_task_inherits_default_of_its_creator() -> None:
    with IOStream.set_default(IOScripted()) as io:
        await asyncio.wait_for(asyncio.create_task(_print_via_default("from task")), timeout=10)
    assert io.text == "from task\n"


async def _print_via_default(text: str) -> None:
    IOStream.get_default().print(text)
