"""The ModelClient protocol (AutoGen's ``autogen.oai.client.ModelClient``): what a custom model
client must provide, constructed as ``cls(config_entry, **kwargs)`` by ``register_model_client``.

Any object with these members works; parley also uses an optional ``a_create(params)``
coroutine when a client has one, and otherwise runs the blocking ``create`` in a worker thread
so that it never stalls the event loop.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from ._cost import USAGE_KEYS

__all__ = ["ModelClient", "ModelClientResponseProtocol"]


@runtime_checkable
class ModelClientResponseProtocol(Protocol):
    """What a response must expose: ``.choices[i].message.content`` and ``.model``."""

    choices: Any
    model: str


@runtime_checkable
class ModelClient(Protocol):
    """A model client: AutoGen's protocol, constructed as ``cls(config: dict, **kwargs)``."""

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
