"""parley: the AutoGen 0.2 programming model, rebuilt lean, fast and safe.

``import parley as autogen`` is meant to run AutoGen 0.2 code unchanged: ``autogen.X`` is the
object ``autogen.X`` names in AutoGen 0.2 (agents, group chats, ``OpenAIWrapper``, the config
helpers, ``Cache``, the exceptions, ``logger``...).

Importing the package runs almost nothing: each public name is imported on first access (a
module ``__getattr__``), so ``import parley`` costs a few milliseconds and a program pays only
for what it uses. ``from parley import *``, ``dir(parley)`` and ``parley.__all__`` work as with
eager imports; sub-packages (``parley.agentchat``, ``parley.oai``...) are attributes too.
"""

from __future__ import annotations

import logging
import sys as _sys
from types import ModuleType as _ModuleType
from typing import TYPE_CHECKING
from typing import Any as _Any

from ._lazy import lazy_exports
from .version import __version__ as __version__

# As in AutoGen: `autogen.logger` is the stdlib logger "autogen" (here "parley"), level INFO,
# and stays so when the sub-package parley.logger (AutoGen's autogen.logger: SqliteLogger...)
# is imported: the import system's binding of the sub-package here is refused (AutoGen's
# __init__ rebinds the name after importing it). `from parley.logger import SqliteLogger`
# reaches the package; so does `import parley.logger as m` (which binds m to the attribute,
# the stdlib logger, as in AutoGen): the logger answers the names it lacks from the package.
logger = logging.getLogger("parley")
logger.setLevel(logging.INFO)


class _PackageLogger(logging.Logger):
    """The stdlib logger "parley", answering for the package parley.logger's public names."""

    def __getattr__(self, name: str) -> _Any:
        if name.startswith("__"):
            raise AttributeError(name)
        import importlib

        package = importlib.import_module("parley.logger")
        if hasattr(package, name):
            return getattr(package, name)
        try:
            return importlib.import_module(f"parley.logger.{name}")
        except ModuleNotFoundError:
            raise AttributeError(f"'Logger' object has no attribute {name!r}") from None


class _Package(_ModuleType):
    def __setattr__(self, name: str, value: _Any) -> None:
        if name == "logger" and isinstance(value, _ModuleType):
            return  # the sub-package being bound by the import system: see above
        super().__setattr__(name, value)


if type(logger) is logging.Logger:  # not if a program set its own logger class first
    logger.__class__ = _PackageLogger
_sys.modules[__name__].__class__ = _Package

if TYPE_CHECKING:
    # What type checkers see. (Keeping __getattr__ out of their sight keeps a misspelt
    # parley.<name> an error for them.)
    from .agentchat import Agent as Agent
    from .agentchat import AssistantAgent as AssistantAgent
    from .agentchat import ChatResult as ChatResult
    from .agentchat import ConversableAgent as ConversableAgent
    from .agentchat import GroupChat as GroupChat
    from .agentchat import GroupChatManager as GroupChatManager
    from .agentchat import UserProxyAgent as UserProxyAgent
    from .agentchat import gather_usage_summary as gather_usage_summary
    from .agentchat import initiate_chats as initiate_chats
    from .agentchat import register_function as register_function
    from .code_utils import DEFAULT_MODEL as DEFAULT_MODEL
    from .code_utils import FAST_MODEL as FAST_MODEL
    from .exception_utils import *  # noqa: F403
    from .oai import *  # noqa: F403
else:
    # Where the public names come from: the modules AutoGen star-imports give their whole
    # __all__ (looked up cheapest first), but for parley's additions to agentchat and oai, which stay
    # there. Cache comes from parley.cache, so that it does not import the completion client.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {"DEFAULT_MODEL": ".code_utils", "FAST_MODEL": ".code_utils", "Cache": ".cache"},
        whole=(".exception_utils", ".oai", ".agentchat"),
        exclude=(
            "APPROVE",
            "EXIT",
            "LLMAgent",
            "OutputSchema",
            "PendingToolCall",
            "ReviewRequest",
        ),
        # The sub-modules that are attributes of AutoGen 0.2 after `import autogen` (and
        # parley's durable chats and batches).
        submodules=(
            "agentchat",
            "batch",
            "cache",
            "code_utils",
            "coding",
            "durable",
            "exception_utils",
            "exceptions",
            "formatting_utils",
            "function_utils",
            "graph_utils",
            "io",
            "oai",
            "runtime_logging",
            "token_count_utils",
            "types",
            "version",
        ),
        defines=("__version__", "logger"),
    )
