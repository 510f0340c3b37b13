"""``BedrockClient``: models on Amazon Bedrock through boto3's ``bedrock-runtime`` Converse and
ConverseStream APIs (``api_type: "bedrock"``), at AutoGen's path ``autogen.oai.bedrock``.

::

    config_list = [{"api_type": "bedrock", "model": "anthropic.claude-3-5-sonnet-20240620-v1:0",
                    "aws_region": "us-east-1", "aws_access_key": "...", "aws_secret_key": "..."}]

Credentials are AutoGen's keys ``aws_access_key``, ``aws_secret_key``, ``aws_session_token``,
``aws_profile_name`` and ``aws_region``; without them boto3's own chain (environment, profile,
instance role) is used. They configure the boto3 client only: no request, cache key or log
sees them. ``base_url`` is the endpoint URL; ``timeout`` the read timeout.

boto3 blocks, so every call runs in a worker thread: the request, and each event of a stream
(one hop per event, so the streamed text reaches the IOStream as it comes). A cancelled caller
closes the stream's connection. boto3's own retries are off: parley's retry policy retries.
How requests and answers are translated: :mod:`parley.oai.providers._bedrock_messages`,
:mod:`parley.oai.providers._bedrock_replies`; errors: :mod:`parley.oai.providers._bedrock_errors`.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
import time
import weakref
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar

from ..._core.runtime import to_thread
from ..._credentials import remember
from .._reply_checks import reading_reply
from ._base import ProviderClient, collect, require
from ._bedrock_errors import PROVIDER, bedrock_error
from ._bedrock_messages import converse_request, inference_and_fields, system_prompts
from ._bedrock_replies import StreamReader, read_response
from ._params import model_of
from ._sdk_calls import sdk_errors

__all__ = ["PRICES", "BedrockClient", "model_name"]


# The geography of a cross-region inference profile's id ("us.anthropic.claude-...").
_REGION_PREFIX = re.compile(r"^(?:us|us-gov|eu|apac|jp|au|ca|global)\.")
_CONNECT_TIMEOUT = 10.0
_DEFAULT_TIMEOUT = 600.0  # long answers take minutes; openai's SDK waits as long


def model_name(model: str) -> str:
    """The foundation model id of a Bedrock model id, inference profile id or ARN, as the
    price table names it (``us.meta.llama3-1-8b-instruct-v1:0`` is ``meta.llama3-...``)."""
    return _REGION_PREFIX.sub("", model.rpartition("/")[2])


class BedrockClient(ProviderClient):
    """AutoGen's ``BedrockClient``: OpenAI-shaped requests to Bedrock's Converse API, its
    answers as ``ChatCompletion``s."""

    PROVIDER: ClassVar[str] = PROVIDER
    SDK: ClassVar[str] = "boto3"
    STRUCTURED_OUTPUT: ClassVar[str] = "native"  # outputConfig.textFormat (_bedrock_messages)

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        self._lock = threading.Lock()
        self._runtime: Any = None

    def _client(self) -> Any:
        """The boto3 client, made on first use (in a worker thread: it takes ~100 ms)."""
        with self._lock:
            if self._runtime is None:
                self._runtime = self._new_client()
                # Its connections close when this client goes, not at interpreter exit.
                weakref.finalize(self, self._runtime.close)
            return self._runtime

    def _new_client(self) -> Any:
        config = require("botocore.config", "bedrock")
        c = self._config
        session = self._module.Session(
            aws_access_key_id=c.get("aws_access_key") or None,
            aws_secret_access_key=c.get("aws_secret_key") or None,
            aws_session_token=c.get("aws_session_token") or None,
            region_name=c.get("aws_region") or None,
            profile_name=c.get("aws_profile_name") or None,
        )
        timeout = float(c["timeout"]) if c.get("timeout") is not None else _DEFAULT_TIMEOUT
        settings = config.Config(
            retries={"total_max_attempts": 1, "mode": "standard"},
            read_timeout=timeout,
            connect_timeout=min(timeout, _CONNECT_TIMEOUT),
        )
        endpoint = c.get("base_url")
        client = session.client(
            "bedrock-runtime", endpoint_url=str(endpoint) if endpoint else None, config=settings
        )
        _remember_credentials(session)
        return client

    def _model(self, params: Mapping[str, Any]) -> str:
        given = {"model": params.get("model") or self._config.get("model")}
        return model_of(
            given, "Please provide the 'model` in the config_list to use Amazon Bedrock"
        )

    def parse_custom_params(self, params: Mapping[str, Any]) -> None:
        """AutoGen's method: notes ``supports_system_prompts`` (default True) as
        ``self._supports_system_prompts``; each request reads it from its own params."""
        self._supports_system_prompts = system_prompts(params)

    def parse_params(self, params: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """AutoGen's ``(base_params, additional_params)``: the ``inferenceConfig`` and the
        ``additionalModelRequestFields`` this client sends for ``params``, each parameter given
        of the type AutoGen's client took, else None (with a ``UserWarning``; not sent).
        AutoGen's names (``temperature``, ``topP``, ``maxTokens``; ``top_k``, ``k``, ``seed``)
        and OpenAI's (``max_tokens``, ``top_p``, which AutoGen sent as a model field, ``stop``)
        are read. No model: :class:`~parley.exceptions.ConfigAssertionError` (an
        ``AssertionError``)."""
        self._model(params)
        return inference_and_fields(params)

    async def a_create(self, params: dict[str, Any]) -> Any:
        model = self._model(params)
        request = converse_request(params, model)
        with reading_reply(PROVIDER), sdk_errors(PROVIDER, bedrock_error):
            if not params.get("stream"):
                return read_response(await to_thread(self._call, "converse", request), model)
            response = await to_thread(self._call, "converse_stream", request)
            events = response["stream"]
            try:
                return await collect(_chunks(response, model, iter(events)), params)
            except BaseException:
                _cut(events)
                raise
            finally:
                events.close()

    def _call(self, operation: str, request: dict[str, Any]) -> Any:
        return getattr(self._client(), operation)(**request)

    @staticmethod
    def price_name(model: str) -> str:
        return model_name(model)


def _remember_credentials(session: Any) -> None:
    """Note the credentials boto3 found (a profile's, the environment's, an instance role's),
    so that they are scrubbed from error texts as a config's own keys are. The session keeps
    what it resolved for the client just made: no second lookup."""
    credentials = session.get_credentials()
    if credentials is None:
        return
    frozen = credentials.get_frozen_credentials()
    for value in (frozen.access_key, frozen.secret_key, frozen.token):
        remember(value)


def _cut(events: Any) -> None:
    """Shut down a stream's connection: a worker thread waiting in it for the next event
    wakes up, and the server stops (closing alone does neither: the waiting read holds the
    socket open until the read timeout). botocore keeps the connection privately: if it is not
    where it was, the read timeout ends the wait instead."""
    connection = getattr(getattr(events, "_raw_stream", None), "_connection", None)
    sock = getattr(connection, "sock", None)
    if isinstance(sock, socket.socket):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


async def _chunks(response: Mapping[str, Any], model: str, events: Any) -> AsyncIterator[Any]:
    reader = StreamReader(response, model, int(time.time()))
    end = object()
    while (event := await to_thread(next, events, end)) is not end:
        for piece in reader.read(event):
            yield piece


PRICES = BedrockClient.PRICES  # the table of prices.json the client uses
