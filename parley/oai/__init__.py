"""The completion client and config helpers (AutoGen's ``autogen.oai``)."""

from ..cache import Cache
from . import _config_lists
from ._config_lists import *  # noqa: F403 - the config-list helpers, listed once, in _config_lists
from .client import ModelClient, OpenAIWrapper
from .legacy.completion import ChatCompletion, Completion

__all__ = ["Cache", "ChatCompletion", "Completion", "ModelClient", "OpenAIWrapper"]
__all__ += _config_lists.__all__
