"""AutoGen's path ``autogen.oai.completion``: the legacy ``Completion`` and ``ChatCompletion``.

They live in :mod:`parley.oai.legacy.completion`; this module names the same objects for AutoGen
0.2 code (``parley.Completion`` and ``parley.oai.Completion`` are them too). Their warnings go
to the logger ``parley.oai.completion``, this module's name, as AutoGen's go to
``autogen.oai.completion``. Patching a member (``Completion.create``) works from either path: it
is one class.
"""

from .legacy._params import CHAT_MODELS as CHAT_MODELS
from .legacy._params import PRICE_1K as PRICE_1K
from .legacy.completion import ChatCompletion, Completion
from .legacy.completion import logger as logger

__all__ = ["ChatCompletion", "Completion"]
