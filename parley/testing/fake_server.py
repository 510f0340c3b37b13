"""``FakeLLMServer``: a real HTTP server on loopback that speaks OpenAI's chat-completions protocol
(and its legacy text completions), and the chat APIs of other providers, from one script.

Besides OpenAI's paths (and those OpenAI-compatible SDKs use: Groq's ``/openai/v1``; Mistral,
Together and Cerebras use ``/v1``) it answers, each in the provider's own JSON, stream framing,
error shape and auth header, for that provider's SDK pointed at ``server.url``:

- Anthropic Messages, ``POST /v1/messages`` (named SSE events; ``x-api-key``);
- Gemini, ``POST /v1beta/models/{model}:generateContent`` and ``:streamGenerateContent``
  (also ``/v1/...``, which google-genai asks given a ``base_url``; SSE with ``alt=sse``);
- Bedrock Converse, ``POST /model/{modelId}/converse`` and ``/converse-stream`` (AWS
  event-stream frames; SigV4 not verified, the access key id must be the api key if set);
- Ollama, ``POST /api/chat`` (NDJSON stream unless ``"stream": false``);
- Cohere v2, ``POST /v2/chat`` (typed SSE events).

Each request is read as an OpenAI chat-completions body (system/user/assistant/tool messages,
``tool_calls``, ``tools``, ``max_tokens``, ``stop``, ``stream``, ``model``): that is what a
responder receives, so one responder answers every provider, and what
``RecordedRequest.chat`` holds; ``RecordedRequest.protocol`` names the provider and ``.json``
stays its own body. Scripted usage is reported in the provider's fields, tool calls as its
tool-use blocks, errors in its shape (``add_error(429, headers={"Retry-After": "1"})`` is
Anthropic's ``rate_limit_error``, Gemini's ``RESOURCE_EXHAUSTED``, Bedrock's
``ThrottlingException``). ``strict`` checks what each provider rejects (Anthropic: the first
message not ``user``, roles not alternating, a ``tool_result`` without its ``tool_use``,
``system`` among the messages, no ``max_tokens``; Gemini: roles other than ``user``/``model``,
a ``functionResponse`` not after a ``functionCall``; Bedrock: roles not alternating from
``user``, a ``toolResult`` without its ``toolUse``). ``config_list(model, api_type=...)``
gives an entry with AutoGen's keys for that provider.

Prompt caching is simulated (:mod:`parley.testing._prompt_cache`): Anthropic's ``cache_control``
breakpoints are checked as the API checks them (at most four, on blocks that take one) and a
prefix seen at a breakpoint before comes back as ``cache_read_input_tokens``, a new one as
``cache_creation_input_tokens``; an OpenAI chat request with a ``prompt_cache_key`` reports the
repeated prefix of its messages (from 1024 tokens) as ``prompt_tokens_details.cached_tokens``.
The cache lasts for the server's lifetime (``reset()`` empties it).

It answers from a script, so agents can be tested through the real ``openai`` client without
a model, a key or a network::

    from parley.testing import FakeLLMServer

    with FakeLLMServer() as server:
        server.add_reply("hello")
        server.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 1, "b": 2}}])
        server.add_error(429, headers={"Retry-After": "1"})
        llm_config = {"config_list": server.config_list()}
        ...
        assert server.requests[0]["messages"][-1]["content"] == "..."
        assert server.received[0].headers["x-trace-id"] == "..."  # names lower-cased

What the client did with its connections shows too. A request whose client closed the
connection before the answer was sent (a cancelled call: the caller gave up on a slow reply)
is *abandoned*: the server stops working on it and lists it in ``server.abandoned``::

        server.add_reply("too late", delay=30)
        task = asyncio.create_task(client.a_create(messages=...))
        ...
        task.cancel()
        server.wait_for_abandoned(1)  # the cancellation reached the wire

``server.open_connections`` counts the client connections open now (keep-alive connections
included), to check that a client closes its connection pool.

It also answers OpenAI's legacy text completions (``POST /v1/completions``, the API of
``gpt-3.5-turbo-instruct``: ``client.completions.create(model=..., prompt=...)``) from the
same script: a reply's text becomes the choice's ``text``. A list of k prompts with ``n``
choices each gets k * n choices (choice ``i`` answers prompt ``i // n``; the scripted choices
are repeated to fill them), ``echo`` puts the prompt before the text, ``logprobs=k`` gets
OpenAI's logprobs object with made-up, deterministic values, and ``stream`` streams it as
``text_completion`` chunks. A responder tells the two kinds apart by the body (``prompt``
rather than ``messages``), a test by :attr:`RecordedRequest.path`. A reply with tool calls
cannot answer a text completion: the server answers a 500 saying so and keeps the error in
``server.errors``.

A reply's text is cut before the first of the request's ``stop`` sequences, as a real model
stops generating there (so a ReAct loop asking to stop at ``Observation:`` sees what it would
see from a model).

Where an answer comes from, for each completion request (chat or text):

1. the queue (``add_reply``, ``add_error``, ``add_disconnect``, ``add_malformed``), first in
   first out;
2. else ``server.responder(request_body)`` if set: it returns a ``str``, a reply dict, an
   item from :mod:`parley.testing`, or ``None`` to fall through;
3. else ``default`` given to the constructor (a reply used for every such request);
4. else an HTTP 500 whose message says the script ran out (with ``x-should-retry: false`` so
   the openai client does not retry it): a test that makes one call too many fails at once
   with a message saying so, never hangs.

The server runs its own event loop (aiohttp's low-level web server) in a daemon thread, so it works the same from sync code,
async tests and notebooks. Responders run on that loop, one at a time; they must not block
(to simulate a slow model, return a reply with ``delay=``). An exception in a responder is
answered with a 500 and kept in ``server.errors``; the ``fake_llm`` pytest fixture fails the
test if any are left.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import threading
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any

from .._core.lifetime import Serving
from ._http import HttpRequest, HttpResponse, HttpServer
from ._prompt_cache import PromptCache
from ._render import Ids
from ._request_log import RecordedRequest, RequestLog
from ._script import (
    Disconnect,
    MalformedReply,
    Reply,
    ScriptItem,
    make_error,
    make_reply,
    to_item,
)
from ._serve import handle
from ._wire import Wire

__all__ = ["FakeLLMServer", "RecordedRequest", "Responder"]

Responder = Callable[[dict[str, Any]], Any]
DEFAULT_API_KEY = "sk-parley-fake"
_START_TIMEOUT = 10.0


class FakeLLMServer(Serving):
    """A scripted OpenAI-compatible server of chat (and legacy text) completions on ``host``
    (loopback by default).

    Args:
        host: interface to bind; keep the default loopback address in tests.
        port: 0 picks a free port.
        strict: reject what OpenAI's API rejects (bad ``name`` fields, tool results without
            their tool call, bad tool names, out-of-range options), with OpenAI's wording.
            Missing ``model``/``messages`` (``prompt`` for a text completion) and bad JSON
            are always rejected.
        default: the answer when the queue is empty and no responder answers (see the module
            docstring); ``None`` answers with an explicit "script exhausted" error.
        api_key: when set, requests must carry ``Authorization: Bearer <api_key>`` or get 401.
        models: the ids listed by ``GET /v1/models``.
        responder: see :attr:`responder`.
        context_window: when set, a request whose messages (or longest prompt) count more
            tokens (as ``parley.token_count_utils.count_token`` counts them) gets OpenAI's
            400 ``context_length_exceeded``.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        strict: bool = True,
        default: Any = None,
        api_key: str | None = None,
        models: Iterable[str] = ("fake-model",),
        responder: Responder | None = None,
        context_window: int | None = None,
    ) -> None:
        self.host = host
        self.strict = strict
        self.default: ScriptItem | None = None if default is None else to_item(default)
        self.api_key = api_key
        self.models = tuple(models)
        self.responder: Responder | None = responder
        self.context_window = context_window
        self.errors: list[BaseException] = []
        self._requested_port = port
        self._lock = threading.Lock()
        self._queue: collections.deque[ScriptItem] = collections.deque()
        self._log = RequestLog()
        self._ids = Ids()
        self._prompt_cache = PromptCache()  # the providers' prompt caches, simulated
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._http: HttpServer | None = None
        self._port: int | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> FakeLLMServer:
        """Start serving (idempotent); returns once the port is bound."""
        if self._thread is not None:
            return self
        ready = threading.Event()
        failure: list[BaseException] = []
        loop = asyncio.new_event_loop()
        http = HttpServer(self._handle, self.host, self._requested_port)

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(http.start())
            except BaseException as e:  # reported to the starting thread
                failure.append(e)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(http.close())
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        thread = threading.Thread(target=run, name="parley-fake-llm", daemon=True)
        thread.start()
        if not ready.wait(_START_TIMEOUT):
            raise RuntimeError(f"FakeLLMServer did not start within {_START_TIMEOUT} s")
        if failure:
            thread.join()
            where = f"{self.host}:{self._requested_port}"
            raise RuntimeError(
                f"FakeLLMServer could not listen on {where}: {failure[0]}"
            ) from failure[0]
        self._loop, self._thread, self._http = loop, thread, http
        self._port = http.port
        return self

    def stop(self) -> None:
        """Stop serving and close every connection (idempotent)."""
        if self._thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(_START_TIMEOUT)
        self._thread = self._loop = self._http = None

    async def __aenter__(self) -> FakeLLMServer:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)

    # -- addresses and configs ------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError(
                "FakeLLMServer is not started: use `with FakeLLMServer() as server:`"
            )
        return self._port

    @property
    def url(self) -> str:
        """The server's root, e.g. ``http://127.0.0.1:8123``."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI ``base_url``, e.g. ``http://127.0.0.1:8123/v1``."""
        return f"{self.url}/v1"

    def config_list(self, model: str = "fake-model", **extra: Any) -> list[dict[str, Any]]:
        """A fresh ``config_list`` with one entry pointing at this server.

        With ``api_type`` (AutoGen's key) the entry has that provider's keys: ``base_url`` is
        the root its SDK expects (``server.url``: the SDKs of Anthropic, Gemini, Ollama,
        Cohere, Mistral, Together, Groq and Cerebras add their own paths; also
        ``client_host`` for Ollama), and for ``"bedrock"`` dummy AWS credentials
        (``aws_access_key`` is the api key, which the server checks when it has one) and
        ``aws_region``, with ``base_url`` as the endpoint URL.
        """
        return [{"model": model, **self._provider_keys(extra.get("api_type")), **extra}]

    def _provider_keys(self, api_type: Any) -> dict[str, Any]:
        key = self.api_key or DEFAULT_API_KEY
        if api_type in (None, "openai", "azure", "responses"):
            return {"base_url": self.base_url, "api_key": key}
        if api_type == "bedrock":
            return {
                "base_url": self.url,
                "aws_region": "us-east-1",
                "aws_access_key": key,
                "aws_secret_key": "parley-fake-secret",
            }
        if api_type == "ollama":
            return {"base_url": self.url, "client_host": self.url, "api_key": key}
        return {"base_url": self.url, "api_key": key}

    def llm_config(self, model: str = "fake-model", **extra: Any) -> dict[str, Any]:
        """A fresh ``llm_config`` for an agent: ``{"config_list": [...], **extra}``."""
        return {"config_list": self.config_list(model), **extra}

    # -- the script -----------------------------------------------------------------------

    def add_reply(self, content: str | None = None, **kwargs: Any) -> FakeLLMServer:
        """Queue a reply. Keywords: ``tool_calls`` (list of ``{"name", "arguments", "id"?}``;
        dict arguments are sent as JSON, str arguments as is), ``function_call``,
        ``finish_reason``, ``refusal``, ``choices`` (several choices), ``usage``, ``model``,
        ``delay`` (seconds before answering), ``chunk_delay`` (seconds between streamed
        chunks), ``drop_after_chunks`` (cut a stream after that many chunks)."""
        return self.add(make_reply(content, **kwargs))

    def add_error(self, status: int, message: str | None = None, **kwargs: Any) -> FakeLLMServer:
        """Queue an HTTP error with an OpenAI-style body. Keywords: ``type``, ``code``,
        ``param``, ``headers`` (e.g. ``{"Retry-After": "1"}``), ``body`` (sent verbatim
        instead), ``delay``."""
        return self.add(make_error(status, message, **kwargs))

    def add_disconnect(self, delay: float = 0.0) -> FakeLLMServer:
        """Queue a dropped connection: the request is read, then the connection is reset."""
        return self.add(Disconnect(delay=delay))

    def add_malformed(
        self,
        body: str | None = None,
        *,
        status: int = 200,
        delay: float = 0.0,
        content_type: str = "application/json",
    ) -> FakeLLMServer:
        """Queue a response whose JSON body is broken (``body`` verbatim if given, for any
        wire: ``"[]"``, ``"null"``, a stream's ``"data: {}\\n\\n"`` with ``content_type``
        ``"text/event-stream"``)."""
        if body is None:
            item = MalformedReply(delay=delay, status=status, content_type=content_type)
        else:
            item = MalformedReply(body, status, content_type=content_type, delay=delay)
        return self.add(item)

    def add(self, *items: Any) -> FakeLLMServer:
        """Queue items: strs, reply dicts (the JSON script format) or parley.testing items."""
        built = [to_item(i) for i in items]
        with self._lock:
            self._queue.extend(built)
        return self

    @property
    def pending(self) -> int:
        """How many queued answers are left."""
        return len(self._queue)  # one read of a deque: no lock needed

    def reset(self) -> None:
        """Forget the queue, the request logs, recorded responder errors and the prompt
        cache."""
        with self._lock:
            self._queue.clear()
            self.errors.clear()
        self._log.clear()
        self._prompt_cache.clear()

    # -- what was received ----------------------------------------------------------------

    @property
    def received(self) -> list[RecordedRequest]:
        """Every completion request received (chat and text, told apart by ``path``), in
        order, as :class:`RecordedRequest`: method, path, query string, headers (lower-cased
        names) and body."""
        return self._log.received

    @property
    def requests(self) -> list[Any]:
        """The parsed body of every completion request (chat or text) received, in order."""
        return [r.json for r in self._log.received if r.json is not None]

    @property
    def last_request(self) -> Any:
        requests = self.requests
        if not requests:
            raise LookupError("FakeLLMServer has received no completion request yet")
        return requests[-1]

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[Any]:
        """Block until ``count`` completion requests have arrived (or raise TimeoutError)."""
        self._log.wait_for_received(count, timeout)
        return self.requests

    @property
    def abandoned(self) -> list[RecordedRequest]:
        """The completion requests whose client closed the connection before the answer
        was sent (while the server waited for a ``delay``, say), in order."""
        return self._log.abandoned

    def wait_for_abandoned(self, count: int = 1, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until ``count`` requests were abandoned (or raise TimeoutError)."""
        self._log.wait_for_abandoned(count, timeout)
        return self.abandoned

    @property
    def open_connections(self) -> int:
        """How many client connections are open now (idle keep-alive ones included)."""
        http = self._http
        return 0 if http is None else http.open_connections

    # -- serving (the request side is parley/testing/_serve.py) ---------------------------

    async def _handle(self, request: HttpRequest) -> HttpResponse:
        return await handle(self, request)

    def _sendable(self, item: ScriptItem, wire: Wire, chat: Mapping[str, Any]) -> ScriptItem:
        """``item`` as ``wire`` sends it for the request ``chat``, or a 500 saying why it
        cannot answer it (a script mistake, kept in :attr:`errors` as a responder's exception
        is)."""
        problem = wire.unsendable(item) if isinstance(item, Reply) else None
        if problem is None and isinstance(item, Reply):
            shaped = wire.answering(item, chat)
            problem, item = (shaped, item) if isinstance(shaped, str) else (None, shaped)
        if problem is None:
            return item
        with self._lock:
            self.errors.append(ValueError(problem))
        return make_error(500, problem, type="script_error", headers={"x-should-retry": "false"})

    async def _next_item(self, body: dict[str, Any], wire: Wire) -> ScriptItem:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            try:
                answer = self.responder(body)
                if inspect.isawaitable(answer):
                    answer = await answer
                if answer is not None:
                    return to_item(answer)
            except Exception as e:
                with self._lock:
                    self.errors.append(e)
                return make_error(
                    500,
                    f"FakeLLMServer responder raised {type(e).__name__}: {e}",
                    type="responder_error",
                    headers={"x-should-retry": "false"},
                )
        if self.default is not None:
            return self.default
        count = len(self._log.received)
        return make_error(
            500,
            f"FakeLLMServer: no scripted answer left for {wire.what} request #{count} "
            "(the queue is empty and no responder answered). Queue more with "
            "server.add_reply(...), set server.responder, or pass default= to FakeLLMServer.",
            type="script_exhausted",
            headers={"x-should-retry": "false"},
        )
