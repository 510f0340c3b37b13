"""The page's state, kept server-side: the chats, what happened in them, the requests waiting
for a human, and the connected pages.

Every change is made under one lock and published, as JSON text, to every subscriber under
that same lock, so a page that subscribes gets a snapshot and then exactly the changes made
after it, in order: a late-joining browser, or a second one, sees what the first one sees.
The chat's threads call in (listener, stream, review), pages answer from the server's loop;
each call holds the lock for a few dictionary operations and a ``json.dumps``.

A request is answered once: the first answer completes its future and wins; any later one is
refused with the reason (``already answered``), which the page shows.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..usage._run import ChatRun
from ._records import (
    MAX_DRAFT,
    MAX_ENDED_CHATS,
    MAX_SETTLED_REQUESTS,
    AnswerRefusedError,
    ChatRecord,
    HumanRequest,
    RequestRecord,
    Subscriber,
    WebHumanClosedError,
    closed_text,
    encode,
    fail,
    trim,
)
from ._render import capped

__all__ = ["Hub"]


class Hub:
    """See the module docstring."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._chats: dict[str, ChatRecord] = {}
        self._requests: dict[str, RequestRecord] = {}
        self._subscribers: dict[int, Subscriber] = {}
        self._console: list[str] = []  # printed outside any chat
        self._console_size = 0
        self._ids = itertools.count(1)
        self._closed = False

    # -- subscribers ------------------------------------------------------------------------

    def subscribe(self, deliver: Subscriber) -> tuple[str, Callable[[], None]]:
        """Register ``deliver`` for every change from now on; (the snapshot, unsubscribe)."""
        with self._lock:
            key = next(self._ids)
            snapshot = encode(
                {
                    "type": "snapshot",
                    "session": f"s{key}",
                    "closed": self._closed,
                    "chats": [chat.full_view() for chat in self._chats.values()],
                    "requests": [r.view() for r in self._requests.values()],
                    "console": "".join(self._console),
                }
            )
            if self._closed:
                return snapshot, lambda: None
            self._subscribers[key] = deliver

        def unsubscribe() -> None:
            with self._lock:
                self._subscribers.pop(key, None)

        return snapshot, unsubscribe

    def _publish(self, event: dict[str, Any]) -> None:
        text = encode(event)
        for deliver in list(self._subscribers.values()):
            deliver(text)

    # -- chats --------------------------------------------------------------------------------

    def _chat(self, run: ChatRun | None) -> ChatRecord | None:
        """The chat of ``run``, if it started while this hub listened (the report of a chat
        that started before would never say it ended: it is left off the page)."""
        if run is None or self._closed:
            return None
        return self._chats.get(run.id)

    def _forget_old_chats(self) -> None:
        """Keep the newest :data:`MAX_ENDED_CHATS` ended chats (and the requests that are no
        longer pending, :data:`MAX_SETTLED_REQUESTS`): a long-running process's page must not
        hold every chat it ever ran. Open pages keep what they were sent."""
        ended = [c for c in self._chats.values() if c.status in ("ended", "failed")]
        for chat in ended[: max(0, len(ended) - MAX_ENDED_CHATS)]:
            del self._chats[chat.id]
        settled = [r for r in self._requests.values() if r.status != "pending"]
        for request in settled[: max(0, len(settled) - MAX_SETTLED_REQUESTS)]:
            del self._requests[request.public.id]

    def _lineage(self, chat: ChatRecord) -> Iterator[ChatRecord]:
        current: ChatRecord | None = chat
        while current is not None:
            yield current
            current = self._chats.get(current.parent_id) if current.parent_id else None

    def chat_started(self, run: ChatRun) -> None:
        with self._lock:
            if self._closed:
                return
            parent = run.parent.id if run.parent is not None else None
            chat = self._chats[run.id] = ChatRecord(run.id, parent, run.sender, run.recipient, run)
            self._publish({"type": "chat", "chat": chat.view()})
            self._forget_old_chats()

    def chat_ended(
        self,
        run: ChatRun,
        *,
        reason: str | None,
        summary: str | None,
        cost: float | None,
        tokens: int | None,
        error: str | None,
    ) -> None:
        with self._lock:
            chat = self._chat(run)
            if chat is None:
                return
            chat.run = None
            chat.status = "failed" if error else "ended"
            chat.termination_reason, chat.summary, chat.error = reason, summary, error
            if cost is not None:  # the chat's own total, nested chats included
                chat.cost = cost
            if tokens is not None:
                chat.tokens = tokens
            chat.speaking.clear()
            chat.ended = time.time()
            self._end_draft(chat)
            self._publish({"type": "chat", "chat": chat.view()})
            for request in list(self._requests.values()):
                if request.public.chat_id == chat.id and request.status == "pending":
                    # Its asker is gone (the chat was cancelled or failed): nobody waits.
                    self._settle(request, "withdrawn", None, None, None)
                    fail(request.future, EOFError("the chat ended without this answer"))

    def turn(self, run: ChatRun | None, agent: str, started: bool) -> None:
        with self._lock:
            chat = self._chat(run)
            if chat is None:
                return
            if started:
                chat.speaking.append(agent)
            elif agent in chat.speaking:
                del chat.speaking[len(chat.speaking) - 1 - chat.speaking[::-1].index(agent)]
            self._publish({"type": "chat", "chat": chat.view()})

    def spent(self, run: ChatRun | None, cost: float, tokens: int) -> None:
        """A model call of ``run``'s chat: its cost counts in the chats above it too."""
        with self._lock:
            chat = self._chat(run)
            if chat is None:
                return
            self._end_draft(chat)
            for owner in self._lineage(chat):
                owner.cost += cost
                owner.tokens += tokens
                self._publish({"type": "chat", "chat": owner.view()})

    def add_item(self, run: ChatRun | None, item: dict[str, Any]) -> int | None:
        """Add ``item`` (a message, a tool call, code, a note) to the chat; its id."""
        with self._lock:
            chat = self._chat(run)
            if chat is None:
                return None
            item_id = next(self._ids)
            item = {**item, "id": item_id}
            chat.positions[item_id] = len(chat.items)
            chat.items.append(item)
            if item.get("kind") == "message":
                self._end_draft(chat)
            self._publish({"type": "item", "chat": chat.id, "item": item})
            return item_id

    def update_item(self, run: ChatRun | None, item_id: int | None, **changes: Any) -> None:
        with self._lock:
            chat = self._chat(run)
            if chat is None or item_id is None or item_id not in chat.positions:
                return
            at = chat.positions[item_id]
            item = chat.items[at] = {**chat.items[at], **changes}
            self._publish({"type": "item", "chat": chat.id, "item": item})

    def last_message_to(self, run: ChatRun | None, agent: str | None) -> dict[str, Any] | None:
        """The last message the chat's ``agent`` received: what an input prompt answers."""
        with self._lock:
            chat = self._chats.get(run.id) if run is not None else None
            items: list[dict[str, Any]] = chat.items if chat is not None else []
            received = [i for i in items if i["kind"] == "message" and i["recipient"] == agent]
            return received[-1] if received else None

    # -- printed output -------------------------------------------------------------------------

    def printed(self, run: ChatRun | None, text: str) -> None:
        """Output printed in ``run``'s chat (or outside chats): its console."""
        with self._lock:
            if self._closed:
                return
            chat = self._chat(run)
            if chat is None:
                self._console.append(text)
                self._console_size = trim(self._console, self._console_size + len(text))
            else:
                chat.console.append(text)
                chat.console_size = trim(chat.console, chat.console_size + len(text))
            self._publish({"type": "console", "chat": chat.id if chat else None, "text": text})

    def streamed(self, run: ChatRun | None, speaker: str, text: str, reset: bool) -> None:
        """A piece of the reply ``speaker``'s model is streaming in ``run``'s chat: it grows
        the chat's draft of the coming message (``reset``: the stream broke, the draft so far
        is void)."""
        with self._lock:
            chat = None if self._closed else self._chat(run)
            if chat is None:
                return
            if reset:
                self._end_draft(chat)
                return
            if not text:
                return
            if chat.draft is None or chat.draft["speaker"] != speaker:
                chat.draft = {"speaker": speaker, "text": ""}
            if len(chat.draft["text"]) < MAX_DRAFT:
                chat.draft["text"] += text
            self._publish({"type": "token", "chat": chat.id, "speaker": speaker, "text": text})

    def _end_draft(self, chat: ChatRecord) -> None:
        if chat.draft is not None:
            chat.draft = None
            self._publish({"type": "draft_end", "chat": chat.id})

    # -- requests -------------------------------------------------------------------------------

    def ask(
        self,
        run: ChatRun | None,
        kind: str,
        prompt: str,
        *,
        agent: str | None,
        sender: str | None,
        password: bool = False,
        message: dict[str, Any] | None = None,
        tool_call: dict[str, Any] | None = None,
        code_blocks: list[dict[str, str]] | None = None,
    ) -> tuple[HumanRequest, concurrent.futures.Future[str]]:
        """A new request; its future completes with the answer (or the hub's closing error)."""
        with self._lock:
            if self._closed:
                raise WebHumanClosedError(closed_text(agent))
            chat = self._chat(run)
            if message is None and chat is not None:
                last = self.last_message_to(run, agent)
                message = {k: v for k, v in last.items() if k != "id"} if last else None
            public = HumanRequest(
                f"r{next(self._ids)}",
                kind,
                chat.id if chat else None,
                agent,
                sender,
                prompt,
                password,
                message,
                tool_call,
                code_blocks,
            )
            self._forget_old_chats()
            request = self._requests[public.id] = RequestRecord(public)
            if run is not None and run.stopped() is not None:
                # Asked after the page stopped the chat: the answer is the stop.
                self._settle(request, "answered", "stop", "exit", "stop")
            else:
                self._publish({"type": "request", "request": request.view()})
                self._changed.notify_all()
            return public, request.future

    def _settle(
        self,
        request: RequestRecord,
        status: str,
        action: str | None,
        answer: str | None,
        by: str | None,
    ) -> None:
        request.status, request.action, request.answer, request.answered_by = (
            status,
            action,
            answer,
            by,
        )
        self._publish({"type": "request", "request": request.view()})
        if status == "answered" and answer is not None and not request.future.done():
            request.future.set_result(answer)

    def answer(self, request_id: str, text: str, *, action: str, by: str) -> None:
        """Answer a request; :class:`AnswerRefusedError` if it cannot be (see the module)."""
        with self._lock:
            request = self._requests.get(request_id)
            if request is None:
                raise AnswerRefusedError(f"no request {request_id!r}")
            if request.status != "pending" or request.future.done():
                word = "answered" if request.status == "answered" else request.status
                raise AnswerRefusedError(f"already {word}")
            if action == "stop":
                chat = self._chats.get(request.public.chat_id or "")
                if chat is not None and chat.run is not None:
                    self._stop(chat.id, by)
                if request.status == "pending":  # outside a chat, "exit" is all a stop can be
                    self._settle(request, "answered", "stop", "exit", by)
                return
            self._settle(request, "answered", action, text, by)
            self._note_answer(request)

    def _note_answer(self, request: RequestRecord) -> None:
        chat = self._chats.get(request.public.chat_id or "")
        if chat is None:
            return
        who = request.public.agent or "the agent"
        tool = request.public.tool_call
        if tool is not None and request.action in ("approve", "reject"):
            verb = "approved" if request.action == "approve" else "rejected"
            text = f"The human {verb} {who}'s call of {tool['name']}"
            text += f": {request.answer}" if request.action == "reject" else "."
        elif request.public.code_blocks is not None and request.action in ("approve", "reject"):
            verb = "approved" if request.action == "approve" else "rejected"
            text = f"The human {verb} running {who}'s code"
            text += f": {request.answer}" if request.action == "reject" else "."
        elif request.action == "approve":
            text = f"The human approved: {who} replies on its own."
        elif request.public.password:
            text = f"The human answered {who} (hidden)."
        elif request.answer:
            text = f"The human answered {who}: {request.answer}"
        else:
            text = f"The human answered {who} with nothing (auto-reply)."
        item_id = next(self._ids)
        item = {"kind": "note", "text": capped(text), "id": item_id}
        chat.positions[item_id] = len(chat.items)
        chat.items.append(item)
        self._publish({"type": "item", "chat": chat.id, "item": item})

    def withdraw(self, request_id: str) -> None:
        """The asker stopped waiting (its chat was cancelled): the request is off the page."""
        with self._lock:
            request = self._requests.get(request_id)
            if request is not None and request.status == "pending":
                self._settle(request, "withdrawn", None, None, None)

    def kind(self, request_id: str) -> str:
        with self._lock:
            request = self._requests.get(request_id)
            if request is None:
                raise AnswerRefusedError(f"no request {request_id!r}")
            return request.public.kind

    def pending(self) -> list[HumanRequest]:
        with self._lock:
            return [r.public for r in self._requests.values() if r.status == "pending"]

    def next_request(self, timeout: float | None) -> HumanRequest:
        """The oldest pending request, waiting up to ``timeout`` seconds for one."""
        with self._lock:
            if not self._changed.wait_for(lambda: self.pending() or self._closed, timeout):
                raise TimeoutError(f"no request for the human within {timeout} s")
            waiting = self.pending()
            if not waiting:
                raise WebHumanClosedError("the web human was closed")
            return waiting[0]

    # -- stopping and closing -----------------------------------------------------------------

    def stop(self, chat_id: str, by: str) -> None:
        """Stop the chat (and the chats below it); its waiting requests are answered "exit"."""
        with self._lock:
            self._stop(chat_id, by)

    def _stop(self, chat_id: str | None, by: str) -> None:
        chat = self._chats.get(chat_id or "")
        if chat is None:
            raise AnswerRefusedError(f"no chat {chat_id!r}")
        if chat.run is None:
            raise AnswerRefusedError("the chat has already ended")
        chat.run.stop("stopped")
        chat.status = "stopping"
        self._publish({"type": "chat", "chat": chat.view()})
        for request in list(self._requests.values()):
            owner = self._chats.get(request.public.chat_id or "")
            if request.status != "pending" or owner is None:
                continue
            if any(c is chat for c in self._lineage(owner)):
                self._settle(request, "answered", "stop", "exit", by)

    def close(self) -> None:
        """Fail every waiting request with :class:`WebHumanClosedError`, take no new ones, and
        tell every subscriber (``None``)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for request in self._requests.values():
                if request.status == "pending":
                    self._settle(request, "closed", None, None, None)
                    fail(request.future, WebHumanClosedError(closed_text(request.public.agent)))
            self._publish({"type": "closed"})
            subscribers, self._subscribers = list(self._subscribers.values()), {}
            self._changed.notify_all()
        for deliver in subscribers:
            deliver(None)
