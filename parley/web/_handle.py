"""``serve()`` and the :class:`WebHuman` it returns: the server, the state, and the ways chats
reach the page's human."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING
from urllib.parse import quote

from .._core import events as _events
from .._core.lifetime import ClosesOnExit
from .._net import http_url
from ..io import IOStream
from ..usage._run import current_run
from ._app import build_app
from ._hub import Hub
from ._listener import WebListener
from ._records import HumanRequest
from ._render import capped, message_view, plain
from ._server import is_loopback, page_server
from ._stream import WebIOStream

if TYPE_CHECKING:
    from ..agentchat import ReviewRequest

__all__ = ["WebHuman", "serve"]

logger = logging.getLogger(__name__)


class WebHuman(ClosesOnExit):
    """A local web page where a person watches this process's chats and answers them.

    Made by :func:`serve`. While it is open, every chat the process starts shows on the page
    (messages, streamed tokens, tool calls, code and its output, cost), and each has a Stop
    button. Chats reach the human in two ways:

    - ``with human.attach():`` makes :attr:`io` the current ``IOStream``: what chats print goes
      to the page, and each ``input()`` (a ``human_input_mode`` prompt) waits for an answer
      typed there;
    - ``agent.register_human_review(human.review)``: the page shows the message the agent is
      about to answer (its code blocks, its tool calls) with Approve, Reject with feedback and
      Stop.

    :meth:`close` (or leaving the ``with`` block) stops the server. A chat waiting for an
    answer then fails with :class:`~parley.web.WebHumanClosedError`: nobody can answer it any more, and
    going on with an answer no one gave would be worse.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, token: str | None = None) -> None:
        if not is_loopback(host):
            logger.warning(
                "parley.web serves on %s, reachable from other machines: anyone with the link "
                "(its token) can answer and stop your chats, and the traffic is not encrypted",
                host,
            )
        self._hub = Hub()
        self._token = token or secrets.token_urlsafe(24)
        self._server = page_server(build_app(self._hub, self._token), host, port)
        self.host = host
        self.port = self._server.port
        self._listener = WebListener(self._hub)
        _events.add_listener(self._listener)
        self.io = WebIOStream(self._hub)
        """The stream that prints to the page and asks its human."""
        self._closed = False

    @property
    def url(self) -> str:
        """The page's address, with its access token: whoever has it can answer the chats."""
        return http_url(self.host, self.port, f"/?token={quote(self._token, safe='')}")

    @property
    def closed(self) -> bool:
        return self._closed

    def attach(self, *, echo: bool = False) -> AbstractContextManager[WebIOStream]:
        """Make the page this context's ``IOStream`` for the ``with`` block (this thread or
        task; the chats it starts inherit it). ``echo=True`` also prints to the stream that
        was the default before (the terminal)."""
        return IOStream.set_default(self._stream(echo))

    @contextmanager
    def attach_globally(self, *, echo: bool = True) -> Iterator[WebIOStream]:
        """Make the page the process-wide default ``IOStream`` for the block (every thread
        without a ``set_default`` of its own: what ``parley serve`` does for a script)."""
        previous = IOStream.get_global_default()
        stream = self._stream(echo, previous)
        IOStream.set_global_default(stream)
        try:
            yield stream
        finally:
            IOStream.set_global_default(previous)

    def _stream(self, echo: bool, to: IOStream | None = None) -> WebIOStream:
        if not echo:
            return self.io
        to = to if to is not None else IOStream.get_default()
        if isinstance(to, WebIOStream):  # already the page: printing there twice helps no one
            return to
        return WebIOStream(self._hub, echo=to)

    async def review(self, request: ReviewRequest) -> str:
        """A review function for ``agent.register_human_review``: the page's human approves
        (``""``), rejects with feedback (the feedback), or stops the chat (``"exit"``). A call
        of a tool that requires approval shows as the tool's name and arguments, code that
        requires approval as the blocks it asks to run."""
        call = request.tool_call
        blocks = request.code_blocks
        asked, answer = self._hub.ask(
            current_run(),
            "review",
            request.prompt,
            agent=request.agent,
            sender=request.sender,
            message=message_view(request.message),
            tool_call=None
            if call is None
            else {"name": call.name, "arguments": plain(call.arguments), "call_id": call.call_id},
            code_blocks=None
            if blocks is None
            else [{"language": b.language, "code": capped(b.code)} for b in blocks],
        )
        try:
            return await asyncio.wrap_future(answer)
        except asyncio.CancelledError:
            self._hub.withdraw(asked.id)
            raise

    def pending(self) -> list[HumanRequest]:
        """The requests waiting for an answer, oldest first."""
        return self._hub.pending()

    def next_request(self, timeout: float | None = None) -> HumanRequest:
        """The oldest waiting request, waiting up to ``timeout`` seconds for one to come
        (``TimeoutError`` if none does): for a program that plays the human."""
        return self._hub.next_request(timeout)

    def answer(self, request: HumanRequest | str, text: str = "") -> None:
        """Answer ``request`` (or its id) as a page would: for a review, ``""`` approves and
        other text rejects with that feedback; for an input prompt, ``text`` is the answer.
        :class:`~parley.web.AnswerRefusedError` if it was already answered (the first answer wins)."""
        request_id = request.id if isinstance(request, HumanRequest) else request
        kind = request.kind if isinstance(request, HumanRequest) else self._hub.kind(request_id)
        action = "send" if kind != "review" else ("reject" if text else "approve")
        self._hub.answer(request_id, text, action=action, by="api")

    def stop_chat(self, chat_id: str) -> None:
        """Stop a running chat (``ChatResult.run_id``, ``HumanRequest.chat_id``) as the page's
        Stop button does: it ends before its next turn or model request, with
        ``termination_reason == "stopped"``, and what it waits for is answered ``"exit"``."""
        self._hub.stop(chat_id, "api")

    def close(self) -> None:
        """Stop the server and the page's updates; waiting chats fail (see the class)."""
        if self._closed:
            return
        self._closed = True
        _events.remove_listener(self._listener)
        self._hub.close()
        self._server.stop()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<WebHuman http://{self.host}:{self.port}/ ({state})>"  # never the token


def serve(host: str = "127.0.0.1", port: int = 0, *, token: str | None = None) -> WebHuman:
    """Start the web page for the human and return its handle (see :class:`WebHuman`).

    Loopback and a free port by default; another ``host`` (``"0.0.0.0"``) must be asked for
    and is logged as a warning. ``token`` defaults to a new random one
    (``secrets.token_urlsafe``); every request must carry it (``WebHuman.url`` does).
    """
    return WebHuman(host, port, token=token)
