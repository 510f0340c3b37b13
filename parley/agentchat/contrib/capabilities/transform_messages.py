"""``TransformMessages``: an agent capability that passes the history through message transforms
before the agent replies (AutoGen's ``transform_messages``)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from ._output import say
from .transforms import (
    MessageHistoryLimiter,
    MessageTokenLimiter,
    MessageTransform,
    TextMessageCompressor,
    TextMessageContentName,
)

if TYPE_CHECKING:
    from ...conversable_agent import ConversableAgent

__all__ = ["TransformMessages"]

# parley's transforms never change the list or the dicts they are given, so they need no copy.
# Any other transform gets a deep copy, as AutoGen gave every transform: it may edit it freely.
_PURE = {
    cls.apply_transform
    for cls in (
        MessageHistoryLimiter,
        MessageTokenLimiter,
        TextMessageCompressor,
        TextMessageContentName,
    )
}


class TransformMessages:
    """Applies ``transforms`` in order to the messages an agent is about to reply to.

    ``add_to_agent(agent)`` registers the transformation as the agent's
    ``process_all_messages_before_reply`` hook: the transformed list is what the reply functions
    (and so the model) see for this reply; the stored history is not changed. A leading
    system-role message is set aside, never transformed, and put back first. With ``verbose``
    each transform that changed something prints its log line (yellow) to the current
    ``IOStream``.

    Example::

        from parley.agentchat.contrib.capabilities import transform_messages, transforms

        context_handling = transform_messages.TransformMessages(
            transforms=[
                transforms.MessageHistoryLimiter(max_messages=10),
                transforms.MessageTokenLimiter(max_tokens=1000, max_tokens_per_message=50),
            ]
        )
        context_handling.add_to_agent(assistant)

    Differences from AutoGen 0.2, on purpose: the transforms apply in async chats too (parley
    runs sync hooks in both kinds of chat; AutoGen's capabilities did nothing in
    ``a_initiate_chat``); the log lines go through ``IOStream`` (AutoGen used bare ``print``);
    the history is not deep-copied for parley's own transforms, which never change what they
    are given (a long history costs what the kept part costs).
    """

    def __init__(self, *, transforms: list[MessageTransform] = [], verbose: bool = True):  # noqa: B006 - never mutated; AutoGen's signature
        self._transforms = transforms
        self._verbose = verbose

    def add_to_agent(self, agent: ConversableAgent) -> None:
        """Transform the messages ``agent`` replies to. Adding the same instance twice to one
        agent raises ``AssertionError`` (a hook is registered once)."""
        agent.register_hook(
            hookable_method="process_all_messages_before_reply", hook=self._transform_messages
        )

    def _transform_messages(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # messages[0]: an empty list raises IndexError, a first message without "role"
        # KeyError, as in AutoGen.
        system_message = None
        if messages[0]["role"] == "system":
            system_message = copy.deepcopy(messages[0])
            messages = messages[1:]
        for transform in self._transforms:
            pure = getattr(type(transform), "apply_transform", None) in _PURE
            before = messages
            after = transform.apply_transform(before if pure else copy.deepcopy(before))
            if self._verbose:
                logs_str, had_effect = transform.get_logs(before, after)
                if had_effect:
                    say(logs_str)
            messages = after
        out = list(messages)  # never the caller's list itself
        if system_message is not None:
            out.insert(0, system_message)
        return out
