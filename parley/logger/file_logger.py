"""``FileLogger``: the runtime log as JSON lines in ``./autogen_logs/<filename>`` (AutoGen's
place and default name, ``runtime.log``; the folder is made in the current directory).

Each record is one JSON object per line with AutoGen's keys (plus ``chat_id`` inside a chat).
An absolute ``filename`` is used as it is (``os.path.join``, as in AutoGen). As AutoGen's, the
logger writes from the moment it is made: ``log_*`` calls before ``start()`` open the file.
Unlike AutoGen's, whose first line was plain text, the session's first line is JSON too
(``{"session_id": ..., "event_name": "session_start", ...}``), so every line parses. Records
are queued by the thread that logs them and written by a writer thread of the logger's own,
not through a stdlib ``logging`` logger (AutoGen's also propagated each line to the root
logger's handlers).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from functools import partial
from typing import IO, Any

from .._protected_paths import protect
from . import _records
from ._completion import Completion, CompletionLogger, record_method
from ._records import (
    agent_class,
    client_class,
    dumps,
    dumps_request,
    dumps_response,
    dumps_state,
    snapshot,
    snapshot_request,
    source_name,
)
from ._secrets import remember_environment, scrub
from ._writer import Writer
from .logger_utils import format_ts

__all__ = ["FileLogger"]

logger = logging.getLogger(__name__)

# Left out of the constructor arguments written (besides every credential), as by the SQLite
# logger: an agent's ``locals()`` hold ``self``.
_EXCLUDE = ("self", "__class__")


class _File:
    """The writer thread's side: the open file and the lines of the current batch."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.file: IO[str] | None = None
        self.lines: list[str] = []

    def open(self) -> None:
        self.file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - kept open

    def write(self, record: dict[str, Any], fragments: dict[str, str]) -> None:
        """A line: ``record``'s fields, then ``fragments`` (keys to JSON text) spliced in."""
        line = scrub(json.dumps(record, default=_text))
        if fragments:
            extra = ", ".join(f"{json.dumps(k)}: {v}" for k, v in fragments.items())
            line = f"{line[:-1]}, {extra}}}"
        self.lines.append(line)

    def commit(self) -> None:
        if self.file is not None and self.lines:
            self.file.write("\n".join(self.lines) + "\n")
            self.file.flush()
        self.lines.clear()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


def _text(obj: Any) -> str:
    return f"<<non-serializable: {type(obj).__qualname__}>>"


class FileLogger(CompletionLogger):
    """Logs JSON lines to ``./autogen_logs/<config.get("filename", "runtime.log")>``."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.session_id = str(uuid.uuid4())
        self.log_dir = os.path.join(os.getcwd(), "autogen_logs")
        os.makedirs(self.log_dir, exist_ok=True)
        self.log_file = os.path.join(self.log_dir, str(config.get("filename", "runtime.log")))
        self._file = _File(self.log_file)
        self._writer = Writer("parley-file-logger", self._file)
        self._opening = threading.Lock()

    def start(self) -> str:
        """Open the file and write the session's first line; returns the session id."""
        self._open()
        self._record({"session_id": self.session_id, "event_name": "session_start"}, time.time())
        self.flush()
        return self.session_id

    def _open(self) -> None:
        # Records logged before start() are written too, as AutoGen's were (its file handler
        # was set up by the constructor).
        with self._opening:
            if self._writer.started:
                return
            remember_environment()
            # It holds prompts and results: no code executor's work dir may hold it.
            protect(self.log_file, "a runtime log (FileLogger)")
            try:
                self._writer.start()
            except OSError as error:
                logger.error("[file_logger] cannot open %s: %s", self.log_file, error)
                raise

    def stop(self) -> None:
        """Write what is queued and close the file."""
        self._writer.close()

    def flush(self) -> None:
        """Wait until every record queued so far is in the file."""
        self._writer.flush()

    def get_connection(self) -> None:
        """None: a file has no connection."""
        return

    # -- records --------------------------------------------------------------------------

    def _record(self, fields: dict[str, Any], ts: float, **deferred: Any) -> None:
        """Queue a line: ``fields`` as they are; each ``deferred`` value, ``(serializer,
        value, as_text)``, serialized on the writer thread: as a JSON string holding the JSON
        (``as_text``, as AutoGen's ``json_state``) or as nested JSON."""
        if not self._writer.started:
            self._open()
        fields["thread_id"] = threading.get_ident()
        chat = _records.chat_id()
        if chat is not None:
            fields["chat_id"] = chat
        self._writer.put(self._write, fields, ts, deferred)

    def _write(self, fields: dict[str, Any], ts: float, deferred: dict[str, Any]) -> None:
        record = dict(fields)
        record.setdefault("timestamp", format_ts(ts))
        fragments: dict[str, str] = {}
        for key, (serialize, value, as_text) in deferred.items():
            text = serialize(value)
            fragments[key] = json.dumps(text) if as_text else text
        self._file.write(record, fragments)

    def _log_completion(self, completion: Completion) -> None:
        now = time.time()
        self._record(
            {
                "invocation_id": str(completion.invocation_id),
                "client_id": completion.client_id,
                "wrapper_id": completion.wrapper_id,
                "is_cached": completion.is_cached,
                "cost": completion.cost,
                "start_time": completion.start_time,
                "end_time": format_ts(now),
                "source_name": source_name(completion.source),
            },
            now,
            request=(dumps_request, snapshot_request(completion.request), False),
            response=(dumps_response, completion.response, False),
        )

    @record_method
    def log_new_agent(self, agent: Any, init_args: dict[str, Any] | None = None) -> None:
        from .._agent_protocol import Agent

        client = getattr(agent, "client", None)
        now = time.time()
        self._record(
            {
                "id": id(agent),
                "agent_name": getattr(agent, "name", None) or "",
                "wrapper_id": getattr(client, "wrapper_id", "") if client is not None else "",
                "session_id": self.session_id,
                "current_time": format_ts(now),
                "agent_type": type(agent).__name__,
            },
            now,
            args=(
                partial(dumps, exclude=_EXCLUDE, no_recursive=(Agent,)),
                snapshot(init_args or {}),
                False,
            ),
        )

    @record_method
    def log_event(self, source: Any, name: str, **kwargs: Any) -> None:
        module, cls = agent_class(source)
        fields: dict[str, Any] = {
            "source_id": id(source),
            "source_name": source_name(source),
            "event_name": name,
        }
        if cls is not None:
            fields["agent_module"], fields["agent_class"] = module, cls
        self._record(fields, time.time(), json_state=(dumps_state, snapshot(kwargs), True))

    @record_method
    def log_new_wrapper(self, wrapper: Any, init_args: dict[str, Any]) -> None:
        self._record(
            {"wrapper_id": id(wrapper), "session_id": self.session_id},
            time.time(),
            json_state=(partial(dumps, exclude=_EXCLUDE), snapshot(init_args), True),
        )

    @record_method
    def log_new_client(self, client: Any, wrapper: Any, init_args: dict[str, Any]) -> None:
        self._record(
            {
                "client_id": id(client),
                "wrapper_id": id(wrapper),
                "session_id": self.session_id,
                "class": client_class(client),
            },
            time.time(),
            json_state=(partial(dumps, exclude=_EXCLUDE), snapshot(init_args), True),
        )

    @record_method
    def log_function_use(
        self, source: Any, function: Any, args: dict[str, Any], returns: Any
    ) -> None:
        self._record(
            {
                "source_id": id(source),
                "source_name": source_name(source),
                "agent_module": type(source).__module__,
                "agent_class": type(source).__name__,
                "function_name": getattr(function, "__name__", None) or str(function),
            },
            time.time(),
            input_args=(dumps, snapshot(args), True),
            returns=(dumps, returns, True),
        )
