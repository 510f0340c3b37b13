"""AutoGen's legacy ``Completion`` / ``ChatCompletion`` classes (``autogen.oai.completion``).

They served openai<1 only; with a current openai every entry point raised ``AssertionError``.
parley keeps the names so that old imports work, and points to ``OpenAIWrapper``.
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["ChatCompletion", "Completion"]

_MESSAGE = (
    "{name}.{method} needs openai<1, which parley does not support: use "
    "parley.OpenAIWrapper(config_list=...).create(...) instead"
)


class _Legacy(type):
    def __getattr__(cls, method: str) -> Any:
        if method.startswith("__"):
            raise AttributeError(method)

        def unsupported(*args: Any, **kwargs: Any) -> NoReturn:
            raise AssertionError(_MESSAGE.format(name=cls.__name__, method=method))

        return unsupported


class Completion(metaclass=_Legacy):
    """Legacy; every method raises AssertionError pointing to OpenAIWrapper."""

    cache_seed = 41
    retry_wait_time = 10
    max_retry_period = 120
    request_timeout = 60


class ChatCompletion(Completion):
    """Legacy; every method raises AssertionError pointing to OpenAIWrapper."""
