"""The ModelClient protocol (AutoGen's ``autogen.oai.client.ModelClient``): what a custom model
client must provide, constructed as ``cls(config_entry, **kwargs)`` by ``register_model_client``
(``website/docs/providers.md``, "Your own model client", has an example).

Any object with these members works; parley also uses an optional ``a_create(params)``
coroutine when a client has one (:class:`AsyncModelClient`), and otherwise runs the blocking
``create`` in a worker thread so that it never stalls the event loop. Caching, retries,
fallback, cost and usage are layers around the client (:mod:`parley.oai.client`): a client only
makes one request.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from ._cost import USAGE_KEYS

__all__ = ["AsyncModelClient", "ModelClient", "ModelClientResponseProtocol"]


@runtime_checkable
class ModelClientResponseProtocol(Protocol):
    """What a response must expose: ``.choices[i].message.content`` and ``.model``."""

    choices: Any
    model: str


@runtime_checkable
class ModelClient(Protocol):
    """A model client: AutoGen's protocol, constructed as ``cls(config: dict, **kwargs)``, where
    ``config`` is the config entry (``model``, ``model_client_cls`` and the entry's other keys).

    Implement the four members below; ``create``'s ``params`` are the request: the entry's
    parameters and the ``messages`` (OpenAI-shaped), and for a chat agent its ``tools``."""

    RESPONSE_USAGE_KEYS: ClassVar[list[str]] = list(USAGE_KEYS)

    def create(self, params: dict[str, Any]) -> Any:
        """Send the request ``params`` and return the response."""
        ...

    def message_retrieval(self, response: Any) -> list[Any]:
        """The texts (or message objects, for tool/function calls) of a response's choices."""
        ...

    def cost(self, response: Any) -> float:
        """Dollars the response cost."""
        ...

    @staticmethod
    def get_usage(response: Any) -> dict[str, Any]:
        """Usage with the keys in RESPONSE_USAGE_KEYS."""
        ...


@runtime_checkable
class AsyncModelClient(ModelClient, Protocol):
    """A model client that can also be awaited: parley calls ``a_create`` instead of running
    ``create`` in a worker thread (a parley extension; AutoGen 0.2 only calls ``create``)."""

    async def a_create(self, params: dict[str, Any]) -> Any:
        """The same request as :meth:`create`, awaited on the caller's event loop; cancelling
        the awaiting task should abandon the request."""
        ...
