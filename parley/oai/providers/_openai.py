"""A ModelClient over the openai package, on its fast lower-level request path.

``chat.completions.create`` walks every message through a typed transform before sending;
at a few hundred messages that costs more than the request. parley's configs and messages are
already validated, so the body goes to ``AsyncOpenAI.post`` as it is: the openai client still
supplies auth, headers, base URL, Azure routing, timeouts and its error types. A request's
``extra_headers``, ``extra_query`` and ``extra_body`` are applied as ``create`` applies them:
HTTP headers (over the client's own, ``Authorization`` included), URL query parameters, and
keys merged over the JSON body. OpenAI's legacy text completions (``POST /completions``, with a
``prompt``: the API of ``gpt-3.5-turbo-instruct``) take the same path, options and errors
(:meth:`OpenAIClient.a_create_completion`).

Clients are async only. An ``AsyncOpenAI`` (and its connection pool) belongs to the event loop
that makes the request: async callers use one on their own loop, sync callers one on parley's
runner loop (:mod:`parley._core.runtime`). On each loop, clients with identical settings are shared,
so a hundred agents on one endpoint use one pool; it is closed when its loop shuts down.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ..._core.runtime import loop_resource, run_sync
from ..._credentials import remember_environment, remember_in, scrubbing_errors
from ...exceptions import ConfigError
from .._cost import USAGE_KEYS, cached_prompt_tokens, compute_cost, response_usage
from .._profiles import ProfileAdapter
from .._reply_checks import check_reply, checked_chunks, malformed, reading_reply
from .._streaming import collect_stream, collect_text_stream
from ._tool_images import with_images_after_results

if TYPE_CHECKING:
    from openai.types import Completion

__all__ = ["OpenAIClient", "missing_credentials", "request_options"]


@functools.lru_cache(maxsize=1)
def _security_option() -> dict[str, Any]:
    # Newer openai versions send credentials only for the auth schemes a request names (the
    # request option "security", listed in the public openai.RequestOptions); chat completions
    # name bearer auth alone, so an admin key configured on the client is not sent with them.
    import openai

    options = getattr(openai, "RequestOptions", None)
    names = getattr(options, "__annotations__", {})
    return {"security": {"bearer_auth": True}} if "security" in names else {}


def _pool_key(kwargs: Mapping[str, Any], azure: bool) -> object:
    """A key for sharing a client: its settings, or a key of its own when a setting cannot be
    compared (a callable, an http_client)."""
    try:
        return ("openai", json.dumps([azure, sorted(kwargs.items())], sort_keys=True))
    except TypeError:
        return object()


async def _close(client: Any) -> None:
    await client.close()


async def _leave_open(client: Any) -> None:
    """A client over the caller's own ``http_client``: closing it would close theirs."""


def missing_credentials(kwargs: Mapping[str, Any], api_type: str | None) -> str | None:
    """Why the openai client could not authenticate, or None. Checked when the agent is built
    (as AutoGen's eager client did) rather than at its first request."""
    if kwargs.get("api_key") or kwargs.get("http_client") is not None:
        return None
    if api_type and api_type.startswith("azure"):
        if kwargs.get("azure_ad_token") or kwargs.get("azure_ad_token_provider"):
            return None
        if os.environ.get("AZURE_OPENAI_API_KEY") or os.environ.get("AZURE_OPENAI_AD_TOKEN"):
            return None
        return "no api_key, azure_ad_token or azure_ad_token_provider, and AZURE_OPENAI_API_KEY is not set"
    if os.environ.get("OPENAI_API_KEY"):
        return None
    return "no api_key in the config and the OPENAI_API_KEY environment variable is not set"


def request_options(params: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a request's params into its JSON body and the openai request options."""
    body = dict(params)
    options: dict[str, Any] = dict(_security_option())
    if "timeout" in body:
        options["timeout"] = body.pop("timeout")
    # As chat.completions.create does: the headers and query go on the HTTP request (the
    # request options' "headers" and "params"), extra_body is merged over the JSON body.
    extra_headers = body.pop("extra_headers", None)
    extra_query = body.pop("extra_query", None)
    extra_body = body.pop("extra_body", None)
    if extra_headers is not None:
        options["headers"] = extra_headers
    if extra_query is not None:
        options["params"] = extra_query
    if extra_body is not None:
        body.update(extra_body)
    return body, options


class OpenAIClient:
    """The ModelClient for OpenAI and OpenAI-compatible endpoints, and Azure OpenAI."""

    RESPONSE_USAGE_KEYS: ClassVar[list[str]] = list(USAGE_KEYS)
    # A typed response_format goes out as OpenAI's json_schema (the Responses subclass maps it
    # to text.format); see ProviderClient.STRUCTURED_OUTPUT.
    STRUCTURED_OUTPUT: ClassVar[str] = "native"

    def __init__(
        self,
        client_kwargs: Mapping[str, Any],
        *,
        api_type: str | None,
        api_version: str | None,
        model_profile: object = None,
    ) -> None:
        # Chat requests are adapted to their model's profile (a config's ``model_profile``
        # over the table's: parley.oai._profiles) before they are sent.
        self.adapt = ProfileAdapter(model_profile)
        kwargs = dict(client_kwargs)
        kwargs["max_retries"] = 0  # parley's RetryPolicy retries; the SDK must not retry again
        self.azure = bool(api_type and api_type.startswith("azure"))
        if self.azure:
            if api_version is not None:
                kwargs["api_version"] = api_version
            if "base_url" in kwargs and "azure_endpoint" not in kwargs:
                kwargs["azure_endpoint"] = kwargs.pop("base_url")
        self._kwargs = kwargs
        remember_in(kwargs)  # its keys are scrubbed from every error text from now on
        remember_environment()  # and OPENAI_API_KEY & co., which the SDK reads itself
        self._key = _pool_key(kwargs, self.azure)
        self._close = _leave_open if kwargs.get("http_client") is not None else _close

    @property
    def provider_name(self) -> str:
        """The provider as OpenTelemetry's GenAI conventions name it (a model call span's
        ``gen_ai.provider.name``), the Responses API's client included."""
        return "azure.ai.openai" if self.azure else "openai"

    def _async_client(self) -> Any:
        """The running loop's client for these settings."""
        return loop_resource(self._key, self._new_client, self._close)

    def _new_client(self) -> Any:
        import openai

        cls = openai.AsyncAzureOpenAI if self.azure else openai.AsyncOpenAI
        try:
            return cls(**self._kwargs)
        except openai.OpenAIError as e:
            raise ConfigError(f"cannot create the {cls.__name__} client: {e}") from e

    async def a_create(self, params: dict[str, Any]) -> Any:
        """Send one chat-completion request; a streamed one is collected into one response.
        The images of tool results go in a user message after them (:mod:`._tool_images`)."""
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        return await self._post(
            "/chat/completions",
            self.adapt(with_images_after_results(params)),
            ChatCompletion,
            ChatCompletionChunk,
            collect_stream,
        )

    def create(self, params: dict[str, Any]) -> Any:
        """The ModelClient protocol's blocking form."""
        return run_sync(self.a_create(params))

    async def a_create_completion(self, params: dict[str, Any]) -> Completion:
        """Send one legacy text-completion request (``POST /completions``, with ``prompt``
        instead of ``messages``); returns an ``openai.types.Completion``, a streamed one
        collected into one."""
        from openai.types import Completion

        # A text completion's chunks have the shape of the whole response.
        response: Completion = await self._post(
            "/completions", params, Completion, Completion, collect_text_stream
        )
        return response

    def create_completion(self, params: dict[str, Any]) -> Completion:
        """:meth:`a_create_completion`'s blocking form."""
        return run_sync(self.a_create_completion(params))

    @scrubbing_errors
    async def _post(
        self,
        path: str,
        params: dict[str, Any],
        cast_to: type[Any],
        chunk_type: type[Any],
        collect: Callable[[Any, Mapping[str, Any]], Awaitable[Any]],
    ) -> Any:
        """POST ``params`` to ``path``: a ``cast_to``, or a stream of ``chunk_type`` collected
        into one by ``collect``. An answer that is no reply (not JSON, the wrong shape or
        types, no choices) is a MalformedResponseError (:mod:`parley.oai._reply_checks`). Every
        error is scrubbed of the configured credentials, its chain included (a server may
        echo the key: :mod:`parley._credentials`)."""
        from openai import AsyncStream

        client = self._async_client()
        body, options = request_options(params)
        provider = "azure" if self.azure else "openai"
        try:
            if not body.get("stream"):
                answer = await client.post(path, body=body, cast_to=cast_to, options=options)
                return check_reply(answer, cast_to, provider)
            if not self.azure:
                body.setdefault("stream_options", {"include_usage": True})
            stream = await client.post(
                path,
                body=body,
                cast_to=cast_to,
                options=options,
                stream=True,
                stream_cls=AsyncStream[chunk_type],  # type: ignore[valid-type]
            )
            try:
                with reading_reply(provider):  # chunks without a choice: no reply
                    collected = await collect(checked_chunks(stream, chunk_type, provider), body)
            finally:
                await stream.close()
            return check_reply(collected, cast_to, provider)
        except json.JSONDecodeError as e:
            where = (
                self._kwargs.get("base_url")
                or self._kwargs.get("azure_endpoint")
                or "the model server"
            )
            raise malformed(
                provider,
                f"{where} answered model {params.get('model')!r} with a body that is not "
                f"valid JSON: {e}",
            ) from e

    def message_retrieval(self, response: Any) -> list[Any]:
        """Per choice: the message object if it calls tools or a function, else its text."""
        out: list[Any] = []
        for choice in response.choices:
            message = choice.message
            if getattr(message, "tool_calls", None) or getattr(message, "function_call", None):
                out.append(message)
            else:
                out.append(message.content)
        return out

    def cost(self, response: Any) -> float:
        """USD cost by parley's prices: cached prompt tokens at the family's cached rate,
        reasoning tokens as output (OpenAI counts them in completion_tokens)."""
        usage = response.usage
        if usage is None:
            return 0.0
        return compute_cost(
            response.model,
            usage.prompt_tokens,
            usage.completion_tokens or 0,
            cached_tokens=cached_prompt_tokens(usage),
            cached_rate=self.adapt.cached_input_rate(response.model),
        )

    @staticmethod
    def get_usage(response: Any) -> dict[str, Any]:
        return response_usage(response)
