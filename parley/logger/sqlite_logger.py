"""``SqliteLogger``: the runtime log in a SQLite database (AutoGen's tables, see ``_schema``).

Every record is queued by the thread that logs it and written by one writer thread that owns
the database connection (``_writer``), in WAL mode with one commit per batch: many concurrent
chats and threads log without ever meeting "database is locked", and the event loop only pays
for a shallow snapshot and a queue put. SQL errors are logged, never raised into a chat.

``get_connection()`` returns a connection of the caller's (the same one on every call, usable
from any thread) that first waits for the records queued so far to be written, and so do its
cursors, so a query sees everything logged before it; with ``":memory:"`` it reaches the same
in-memory database as the writer (``_sqlite_connections``). Only the records parley's listener
sends (a chat's) wait for their batch: a ``log_*`` call from anywhere else returns once its
row is committed, as AutoGen's did (``_completion.record_method``). ``stop()`` writes what is
queued, closes the writer's connection and that one.
"""

from __future__ import annotations

import datetime
import json
import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from .._core.reports import ToolCallStep
from .._protected_paths import protect
from . import _records
from . import _statements as sql
from ._completion import Completion, CompletionLogger, record_method
from ._records import (
    agent_class,
    client_class,
    dumps,
    dumps_state,
    encode_request,
    encode_response,
    encode_state,
    snapshot,
    source_name,
)
from ._secrets import remember_environment, scrub
from ._sqlite_connections import Database, ReaderConnection, connect_reader
from ._writer import Writer
from .logger_utils import format_ts

__all__ = ["SqliteLogger"]

logger = logging.getLogger(__name__)

# AutoGen leaves these out of the constructor arguments it logs.
_EXCLUDE = (
    "self",
    "__class__",
    "api_key",
    "organization",
    "base_url",
    "azure_endpoint",
    "azure_ad_token",
    "azure_ad_token_provider",
)


class SqliteLogger(CompletionLogger):
    """Logs to the SQLite database ``config["dbname"]`` (default ``"logs.db"``)."""

    schema_version = 1

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.dbname: str = str(config.get("dbname", "logs.db"))
        self.session_id = str(uuid.uuid4())
        self._db = Database(self.dbname)
        rows = (self._event_row, self._completion_row)  # indexed by _EVENT, _COMPLETION
        self._writer = Writer("parley-sqlite-logger", self._db, rows)
        self._reader: ReaderConnection | None = None
        self._lock = threading.Lock()
        self._stored: dict[int, int] = {}  # transcript -> messages stored (writer thread)
        # Bound once: a bound method made per record is one more object per queued record for
        # the garbage collector to promote while the record waits (see _writer).
        self._write_row = self._write

    # -- lifetime -------------------------------------------------------------------------

    def start(self) -> str:
        """Open (or create) the database and start the writer; returns the session id.
        Raises ``sqlite3.Error`` when the database cannot be opened."""
        remember_environment()
        if self.dbname and not self.dbname.startswith(":"):  # not ":memory:"
            # It holds prompts and results: no code executor's work dir may hold it.
            protect(self.dbname, "a runtime log (SqliteLogger)")
        try:
            self._writer.start()
        except sqlite3.Error as error:
            logger.error("[SqliteLogger] cannot open database %s: %s", self.dbname, error)
            raise
        return self.session_id

    def stop(self) -> None:
        """Write what is queued and close the connections."""
        self._writer.close()
        with self._lock:
            reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()

    def flush(self) -> None:
        """Wait until every record queued so far is in the database."""
        self._writer.flush()

    def get_connection(self) -> sqlite3.Connection | None:
        """A connection to the database (see the module docstring); None once stopped."""
        if not self._writer.running:
            return None
        self.flush()
        with self._lock:
            if self._reader is None:
                self._reader = connect_reader(self._db, self.flush)
            return self._reader

    # -- records --------------------------------------------------------------------------

    def _put(
        self, statement: sql.Statement, build: Callable[..., tuple[Any, ...]], *args: Any
    ) -> None:
        self._writer.put(self._write_row, statement, build, args)

    def _write(
        self, statement: sql.Statement, build: Callable[..., tuple[Any, ...]], args: tuple[Any, ...]
    ) -> None:
        self._db.run(statement, build(*args))

    def _log_completion(self, completion: Completion) -> None:
        # Encoded here, queued as a row of text (see _writer): a response and a request's
        # objects waiting for their batch would be promoted by the garbage collector.
        request_json, transcript, count = encode_request(completion.request)
        usage = getattr(completion.response, "usage", None)
        model = getattr(completion.response, "model", None) or (
            completion.request.get("model") if isinstance(completion.request, dict) else None
        )
        self._writer.put_row(
            (
                _COMPLETION,
                str(completion.invocation_id),
                completion.client_id,
                completion.wrapper_id,
                source_name(completion.source),
                request_json,
                transcript,
                count,
                encode_response(completion.response),
                int(completion.is_cached),
                completion.cost,
                completion.start_time,
                time.time(),
                _records.chat_id(),
                model if isinstance(model, str) else None,
                _int_or_none(getattr(usage, "prompt_tokens", None)),
                _int_or_none(getattr(usage, "completion_tokens", None)),
                _int_or_none(getattr(usage, "total_tokens", None)),
            )
        )

    def _completion_row(self, item: tuple[Any, ...]) -> None:
        (
            _,
            invocation_id,
            client_id,
            wrapper_id,
            name,
            request_json,
            transcript,
            count,
            response_json,
            is_cached,
            cost,
            start_time,
            end,
            chat,
            model,
            prompt_tokens,
            completion_tokens,
            total_tokens,
        ) = item
        serial = None
        if transcript is not None:
            serial = transcript.serial
            self._store_messages(serial, transcript, count)
        else:
            count = None
        self._db.run(
            sql.COMPLETION,
            (
                invocation_id,
                client_id,
                wrapper_id,
                self.session_id,
                scrub(request_json),
                scrub(response_json),
                is_cached,
                cost,
                start_time,
                format_ts(end),
                name,
                chat,
                model,
                _duration(start_time, end),
                prompt_tokens,
                completion_tokens,
                total_tokens,
                serial,
                count,
            ),
        )

    def _store_messages(self, serial: int, transcript: Any, count: int) -> None:
        """Queue the transcript's first ``count`` messages not stored yet (writer thread)."""
        stored = self._stored.get(serial, 0)
        if count <= stored:
            return
        if len(self._stored) >= _TRANSCRIPTS_MAX:
            self._stored.clear()  # stored again if sent again, and ignored by the database
        self._stored[serial] = count
        for position in range(stored, count):
            self._db.run(
                sql.REQUEST_MESSAGE,
                (self.session_id, serial, position, transcript.message_json(position)),
            )

    @record_method
    def log_new_agent(self, agent: Any, init_args: dict[str, Any] | None = None) -> None:
        client = getattr(agent, "client", None)
        wrapper_id = getattr(client, "wrapper_id", "") if client is not None else ""
        name = getattr(agent, "name", None) or ""
        self._put(
            sql.AGENT,
            self._agent_row,
            id(agent),
            wrapper_id,
            name,
            type(agent).__name__,
            snapshot(init_args or {}),
            time.time(),
        )

    def _agent_row(
        self, agent_id: int, wrapper_id: Any, name: str, cls: str, init_args: Any, ts: float
    ) -> tuple[Any, ...]:
        from .._agent_protocol import Agent

        args = dumps(init_args, exclude=_EXCLUDE, no_recursive=(Agent,))
        return (agent_id, wrapper_id, self.session_id, name, cls, args, format_ts(ts))

    @record_method
    def log_event(self, source: Any, name: str, **kwargs: Any) -> None:
        module, cls = agent_class(source)
        now, chat = time.time(), _records.chat_id()
        state = encode_state(kwargs)
        if state is None or name in _CHAT_EVENTS or name == "code_execution":
            snap = snapshot(kwargs)
            if name in _CHAT_EVENTS:
                statement, build = _CHAT_EVENTS[name]
                self._put(statement, getattr(self, build), snap)
            elif name == "code_execution":
                self._put(sql.CODE, self._code_row, source, snap, now, chat)
        self._writer.put_row(
            (
                _EVENT,
                id(source),
                source_name(source),
                name,
                module,
                cls,
                snap if state is None else state,
                now,
                chat,
            )
        )

    def _event_row(self, item: tuple[Any, ...]) -> None:
        _, source_id, source, name, module, cls, state, ts, chat = item
        text = scrub(state) if type(state) is str else dumps_state(state)
        self._db.run(
            sql.EVENT,
            (source_id, source, name, module, cls, text, format_ts(ts), chat, self.session_id),
        )

    def _chat_start_row(self, data: dict[str, Any]) -> tuple[Any, ...]:
        message = data.get("message")
        return (
            data.get("chat_id"),
            data.get("parent_chat_id"),
            self.session_id,
            data.get("sender"),
            data.get("recipient"),
            message if isinstance(message, str) or message is None else dumps(message),
            data.get("max_turns") if isinstance(data.get("max_turns"), int) else None,
            data.get("start_time"),
        )

    def _chat_end_row(self, data: dict[str, Any]) -> tuple[Any, ...]:
        summary = data.get("summary")
        return (
            data.get("end_time"),
            data.get("duration"),
            data.get("termination_reason"),
            summary if isinstance(summary, str) or summary is None else dumps(summary),
            data.get("total_cost"),
            data.get("llm_calls"),
            data.get("total_tokens"),
            dumps(data.get("cost")),
            data.get("chat_id"),
        )

    def _code_row(
        self, source: Any, data: dict[str, Any], ts: float, chat: str | None
    ) -> tuple[Any, ...]:
        languages = data.get("languages")
        return (
            self.session_id,
            chat,
            id(source),
            source_name(source),
            data.get("executor"),
            json.dumps(languages) if languages is not None else None,
            _scrubbed(data.get("code")),
            data.get("exit_code"),
            _scrubbed(data.get("output")),
            data.get("start_time"),
            format_ts(ts),
            data.get("duration"),
        )

    @record_method
    def log_new_wrapper(self, wrapper: Any, init_args: dict[str, Any]) -> None:
        self._put(sql.WRAPPER, self._wrapper_row, id(wrapper), snapshot(init_args), time.time())

    def _wrapper_row(self, wrapper_id: int, init_args: Any, ts: float) -> tuple[Any, ...]:
        return (wrapper_id, self.session_id, dumps(init_args, exclude=_EXCLUDE), format_ts(ts))

    @record_method
    def log_new_client(self, client: Any, wrapper: Any, init_args: dict[str, Any]) -> None:
        self._put(
            sql.CLIENT,
            self._client_row,
            id(client),
            id(wrapper),
            client_class(client),
            snapshot(init_args),
            time.time(),
        )

    def _client_row(
        self, client_id: int, wrapper_id: int, cls: str, init_args: Any, ts: float
    ) -> tuple[Any, ...]:
        args = dumps(init_args, exclude=_EXCLUDE)
        return (client_id, wrapper_id, self.session_id, cls, args, format_ts(ts))

    @record_method
    def log_function_use(
        self, source: Any, function: Any, args: dict[str, Any], returns: Any
    ) -> None:
        step = _records.reported_step()
        self._put(
            sql.FUNCTION,
            self._function_row,
            id(source),
            source_name(source),
            getattr(function, "__name__", None) or str(function),
            snapshot(args),
            returns,
            time.time(),
            _records.chat_id(),
            step.attrs["call_id"] if isinstance(step, ToolCallStep) else None,
            step.duration if step is not None else None,
        )

    def _function_row(
        self,
        source_id: int,
        source: str,
        function: str,
        args: Any,
        returns: Any,
        ts: float,
        chat: str | None,
        call_id: str | None,
        duration: float | None,
    ) -> tuple[Any, ...]:
        return (
            source_id,
            source,
            function,
            dumps(args),
            dumps(returns),
            format_ts(ts),
            chat,
            self.session_id,
            call_id,
            duration,
        )


def _scrubbed(text: Any) -> Any:
    return scrub(text) if isinstance(text, str) else text


def _int_or_none(value: Any) -> int | None:
    return value if type(value) is int else None


def _duration(start_time: str, end: float) -> float | None:
    try:
        start = datetime.datetime.fromisoformat(start_time)  # get_current_ts()'s format
    except (TypeError, ValueError):
        return None
    return max(0.0, end - start.replace(tzinfo=datetime.timezone.utc).timestamp())


_TRANSCRIPTS_MAX = 65536
# The writer's row handlers (see _writer), by index.
_EVENT, _COMPLETION = 0, 1

_CHAT_EVENTS = {
    "chat_start": (sql.CHAT_START, "_chat_start_row"),
    "chat_end": (sql.CHAT_END, "_chat_end_row"),
}
