"""One live connection to an MCP server: opened, used from any task or event loop, reopened
after the server went away, closed with nothing left behind.

The SDK's transports and ``ClientSession`` are anyio context managers that must be entered and
left by the same task, so each connection has an owner task that opens them, waits until the
connection is closed and then leaves them (ending a stdio server's process: the SDK closes its
stdin, then terminates its process group). Requests are made from the caller's task; a caller
on another event loop (a sync chat on parley's runner loop) is served on the owner's loop, and
refused with a clear error when that loop has ended or is blocked waiting for the caller.
A stdio server whose owner process dies sees its stdin close and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import anyio
import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError as SDKError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from .._core.runtime import is_waiting_for_runner
from ..exceptions import MCPCallError
from ._config import ServerConfig

__all__ = ["Connection", "ConnectionLost"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

# How long opening a connection (spawning, the handshake) may take before it counts as failed.
OPEN_TIMEOUT = 30.0
# How long closing may take: the SDK's own shutdown is bounded; this bounds ours around it.
CLOSE_TIMEOUT = 10.0


class ConnectionLost(Exception):
    """The connection ended under a request (the server died, restarted or closed it);
    ``unsent``: the server refused the request unread (it no longer knows the session)."""

    def __init__(self, reason: str, unsent: bool = False) -> None:
        super().__init__(reason)
        self.unsent = unsent


def _unknown_session(error: SDKError) -> bool:
    # A restarted HTTP server answers 404 "Session not found": the request never ran.
    return "session not found" in error.error.message.lower()


def _is_lost(error: BaseException) -> bool:
    if isinstance(error, SDKError):
        return error.code == CONNECTION_CLOSED or _unknown_session(error)
    return isinstance(
        error,
        (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError, httpx2.TransportError),
    )


class Connection:
    """A connection to one server, from its config (reopened when lost) or from a session the
    user opened (used as it is, never reopened or closed here)."""

    def __init__(
        self,
        name: str,
        config: ServerConfig | None = None,
        session: ClientSession | None = None,
        errlog: Any = None,
    ) -> None:
        self.name = name
        self.config = config
        self._session = session
        self._errlog = errlog
        self._loop: asyncio.AbstractEventLoop | None = None
        self._owner: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._broken = False
        self._reopen_lock: asyncio.Lock | None = None

    @property
    def timeout(self) -> float | None:
        return None if self.config is None else self.config.timeout

    async def open(self) -> None:
        """Connect (for a config) and initialise the session; raises MCPCallError on failure."""
        if self.config is None:
            self._loop = asyncio.get_running_loop()
            return
        self._loop = asyncio.get_running_loop()
        self._reopen_lock = self._reopen_lock or asyncio.Lock()
        ready: asyncio.Future[ClientSession] = self._loop.create_future()
        self._closing = asyncio.Event()
        self._owner = asyncio.create_task(self._own(ready, self._closing), name=f"mcp-{self.name}")
        try:
            self._session = await asyncio.wait_for(asyncio.shield(ready), OPEN_TIMEOUT)
        except BaseException as e:
            await self._stop()
            if isinstance(e, (asyncio.CancelledError, KeyboardInterrupt, SystemExit)):
                raise
            if isinstance(e, TimeoutError):
                raise MCPCallError(
                    self.name, f"no answer within {OPEN_TIMEOUT:g}s of connecting"
                ) from e
            raise MCPCallError(self.name, f"cannot connect: {_describe(e)}") from e
        self._broken = False

    async def _own(self, ready: asyncio.Future[ClientSession], closing: asyncio.Event) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(stack))
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                if not ready.done():
                    ready.set_result(session)
                await closing.wait()
        except BaseException as e:
            if not ready.done():
                ready.set_exception(
                    e if isinstance(e, Exception) else MCPCallError(self.name, "closed")
                )
            elif not isinstance(e, (asyncio.CancelledError, GeneratorExit)):
                logger.info("MCP server %r: the connection ended: %s", self.name, _describe(e))

    def _transport(self, stack: contextlib.AsyncExitStack) -> Any:
        config = self.config
        assert config is not None
        if config.transport == "stdio":
            assert config.command is not None
            params = StdioServerParameters(
                command=config.command, args=list(config.args), env=dict(config.env), cwd=config.cwd
            )
            errlog = self._errlog if self._errlog is not None else open(os.devnull, "w")  # noqa: SIM115
            if self._errlog is None:
                stack.callback(errlog.close)
            return stdio_client(params, errlog=errlog)
        assert config.url is not None
        if config.transport == "sse":
            return sse_client(config.url, headers=dict(config.headers) or None)
        client = None
        if config.headers:
            client = httpx2.AsyncClient(
                headers=dict(config.headers), timeout=httpx2.Timeout(30.0, read=300.0)
            )
            stack.push_async_callback(client.aclose)
        return streamable_http_client(config.url, http_client=client)

    async def request(
        self,
        what: str,
        send: Callable[[ClientSession], Awaitable[T]],
        *,
        retry_after_reconnect: bool = True,
    ) -> T:
        """``send(session)``, within the per-call timeout. A connection found lost is reopened
        once; the request is sent again on the new one only when ``retry_after_reconnect``
        (it is safe to repeat). Failures raise :class:`MCPCallError`."""
        owner = self._loop
        if owner is not None and owner is not asyncio.get_running_loop():
            return await self._on_owner_loop(
                owner, what, self.request(what, send, retry_after_reconnect=retry_after_reconnect)
            )
        if self._broken:
            await self._reopen(what)
        try:
            return await self._send(what, send)
        except ConnectionLost as lost:
            self._broken = True
            if self.config is None:
                raise MCPCallError(self.name, f"{what}: the connection was lost ({lost})") from lost
            await self._reopen(what)
            if not (retry_after_reconnect or lost.unsent):
                raise MCPCallError(
                    self.name,
                    f"{what}: the connection was lost during the call ({lost}); reconnected, but "
                    "the call may not have completed. Call it again if that is safe.",
                ) from lost
            try:
                return await self._send(what, send)
            except ConnectionLost as again:
                self._broken = True
                raise MCPCallError(
                    self.name, f"{what}: the connection was lost again ({again})"
                ) from again

    async def _send(self, what: str, send: Callable[[ClientSession], Awaitable[T]]) -> T:
        session = self._session
        if session is None:
            raise ConnectionLost("not connected")
        try:
            if self.timeout is None:
                return await send(session)
            return await asyncio.wait_for(send(session), self.timeout)
        except TimeoutError as e:
            raise MCPCallError(self.name, f"{what}: no result within {self.timeout:g}s") from e
        except SDKError as e:
            if _is_lost(e):
                raise ConnectionLost(_describe(e), unsent=_unknown_session(e)) from e
            if e.code == REQUEST_TIMEOUT:
                raise MCPCallError(self.name, f"{what}: timed out ({e.error.message})") from e
            raise MCPCallError(self.name, f"{what}: {e.error.message}") from e
        except Exception as e:
            if _is_lost(e):
                raise ConnectionLost(_describe(e)) from e
            raise

    async def _reopen(self, what: str) -> None:
        if self.config is None:
            raise MCPCallError(self.name, f"{what}: the session is closed")
        assert self._reopen_lock is not None
        async with self._reopen_lock:
            if not self._broken:
                return  # another call reopened it meanwhile
            await self._stop()
            try:
                await self.open()
            except MCPCallError as e:
                raise MCPCallError(self.name, f"{what}: the server went away and {e}") from e

    async def _stop(self) -> None:
        owner, self._owner = self._owner, None
        self._session = None if self.config is not None else self._session
        if owner is None:
            return
        assert self._closing is not None
        self._closing.set()
        try:
            await asyncio.wait_for(asyncio.shield(owner), CLOSE_TIMEOUT)
        except TimeoutError:
            owner.cancel()
            with contextlib.suppress(BaseException):
                await owner
        except Exception:  # the owner logged how its connection ended
            pass

    async def _on_owner_loop(
        self, owner: asyncio.AbstractEventLoop, what: str, call: Coroutine[Any, Any, T]
    ) -> T:
        """``call`` run on ``owner``, the loop the session belongs to (its streams work there
        only), for a caller on another loop: a sync chat on parley's runner loop, say."""
        problem = None
        if owner.is_closed() or not owner.is_running():
            problem = (
                "the event loop it was opened on has ended (or is not running); connect from the "
                "loop that uses the toolkit, or with parley.mcp.connect_sync(...), whose "
                "connections live as long as the process"
            )
        elif is_waiting_for_runner(owner):
            problem = (
                "the event loop it was opened on is blocked, waiting for this sync call (a sync "
                "chat started from async code, as in a notebook cell); use the async API there "
                "(await ...a_initiate_chat(...)), or connect with parley.mcp.connect_sync(...)"
            )
        if problem is not None:
            call.close()
            raise MCPCallError(self.name, f"{what}: cannot use the connection: {problem}")
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(call, owner))

    async def aclose(self) -> None:
        """End the connection (a stdio server's process with it); a user's session is left open."""
        owner = self._loop
        if owner is not None and owner is not asyncio.get_running_loop():
            if owner.is_closed():
                # Its loop ended and, ending, cancelled the owner task: nothing is left open.
                self._owner = None
                self._session = None if self.config is not None else self._session
                return
            await self._on_owner_loop(owner, "closing", self.aclose())
            return
        await self._stop()
        self._broken = False


def _describe(error: BaseException) -> str:
    grouped = getattr(error, "exceptions", None)  # an exception group (anyio's task groups)
    if isinstance(grouped, (list, tuple)):
        return "; ".join(_describe(e) for e in grouped)
    if isinstance(error, SDKError):
        return error.error.message
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
