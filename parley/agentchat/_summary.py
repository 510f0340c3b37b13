"""A chat's summary, and AutoGen's summary helpers that ``ConversableAgent`` carries.

:func:`summarize` makes the summary ``initiate_chat`` returns: none, the last message, the
model's reflection on the chat, or a callable's. AutoGen made it through a chain of private
methods that subclasses override: ``_summarize_chat`` picks ``_last_msg_as_summary`` or
``_reflection_with_llm_as_summary``, which asks ``_reflection_with_llm``, which asks
``_generate_oai_reply_from_client``. The faces of those methods are here, over the same steps.

**Overrides.** Each step asks the next one through the sender's own method only when it is not
parley's face (:func:`parley.agentchat._overrides.own`: a subclass's override or a patch,
called as AutoGen called it, in a worker thread as user code that may block); otherwise it goes
on in parley's async steps. A summary is made once per chat, so looking the methods up each
time costs nothing a chat would notice, and a patch made after the agents exist is honoured.
An override that calls ``super()`` reaches the face, which goes on from there (never back to
the override).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from .._core.calls import call_user
from .._core.runtime import to_thread
from ..exceptions import BudgetExceededError
from ..usage import _run as _usage
from ._client_reply import client_reply
from ._overrides import own
from ._sync_chat import run_sync
from .utils import SUMMARY_METHODS

if TYPE_CHECKING:
    from ._state import AgentCore

__all__ = [
    "DEFAULT_SUMMARY_PROMPT",
    "last_msg_as_summary",
    "last_msg_summary",
    "reflect",
    "reflection_summary",
    "reflection_with_llm",
    "reflection_with_llm_as_summary",
    "summarize",
    "summarize_chat",
]

logger = logging.getLogger(__name__)

DEFAULT_SUMMARY_PROMPT = (
    "Summarize the takeaway from the conversation. Do not add any introductory phrases."
)


# -- parley's steps -------------------------------------------------------------------------------


def last_msg_summary(recipient: AgentCore, sender: AgentCore) -> str:
    try:
        last = recipient.last_message(sender)
        if last is None:
            raise TypeError("there is no last message")
        content = last["content"]
    except (IndexError, AttributeError, KeyError, TypeError) as e:
        logger.warning("cannot take the last message as the summary: %s", e)
        return ""
    if isinstance(content, str):
        return content.replace("TERMINATE", "")
    if isinstance(content, list):
        texts = [
            str(p.get("text", "")).replace("TERMINATE", "")
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        ]
        return "\n".join(texts)
    return ""


async def reflect(
    agent: AgentCore,
    prompt: str,
    messages: list[dict[str, Any]],
    llm_agent: Any = None,
    cache: Any = None,
    role: str | None = None,
    *,
    speakers: Collection[str] = (),
) -> Any:
    """AutoGen's ``_reflection_with_llm``: the model's answer to ``messages`` followed by
    ``prompt`` as a ``role`` message (``"system"`` by default), asked of ``llm_agent``'s client
    (``agent``'s when it has none) through ``agent``'s ``_generate_oai_reply_from_client``."""
    asked = llm_agent if getattr(llm_agent, "client", None) is not None else agent
    client = getattr(asked, "client", None)
    if client is None:
        raise ValueError("No OpenAIWrapper client is found.")
    request = [*messages, {"role": role or "system", "content": prompt}]
    with _usage.acting_for(asked, "summary"):
        return await client_reply(agent, client, request, cache, speakers)


async def reflection_summary(
    sender: AgentCore, recipient: AgentCore, args: Mapping[str, Any]
) -> Any:
    """AutoGen's ``_reflection_with_llm_as_summary``: the recipient's model (the sender's
    when it has none) summarizes their chat, through the sender's ``_reflection_with_llm``;
    "" when the API refuses the request, the last message when a budget refuses it before it
    is sent."""
    prompt = args.get("summary_prompt") or DEFAULT_SUMMARY_PROMPT
    if not isinstance(prompt, str):
        raise ValueError(f"summary_prompt must be a str, got {type(prompt).__name__}")
    role = args.get("summary_role") or "system"
    if not isinstance(role, str):
        raise ValueError(f"summary_role must be a str, got {type(role).__name__}")
    history = list(recipient.chat_messages_for_summary(sender))
    overridden = own(sender, "_reflection_with_llm", reflection_with_llm)
    import openai

    try:
        if overridden is not None:
            summary = await to_thread(
                overridden, prompt, history, llm_agent=recipient, cache=args.get("cache"), role=role
            )
        else:
            summary = await reflect(
                sender,
                prompt,
                history,
                recipient,
                args.get("cache"),
                role,
                speakers=(sender.name, recipient.name),
            )
    except openai.BadRequestError as e:
        logger.warning("cannot summarize the chat with the LLM: %s", e)
        return ""
    except BudgetExceededError as e:  # refused before it was sent: the last message stands in
        logger.warning("%s: the chat's summary is its last message", e)
        return last_msg_summary(recipient, sender)
    return summary if summary is not None else ""


async def summarize(
    sender: AgentCore,
    recipient: AgentCore,
    method: str | Callable[..., Any] | None,
    args: dict[str, Any],
) -> Any:
    """The chat's summary by ``method``: none, the last message, the model's reflection on
    the chat, or a callable's ``(sender, recipient, summary_args)``; the first two through the
    sender's ``_last_msg_as_summary`` / ``_reflection_with_llm_as_summary`` when it has its
    own."""
    if method is None:
        return ""
    if method == "last_msg":
        overridden = own(sender, "_last_msg_as_summary", last_msg_as_summary)
        if overridden is None:
            return last_msg_summary(recipient, sender)
        return await to_thread(overridden, sender, recipient, args)
    if method == "reflection_with_llm":
        overridden = own(sender, "_reflection_with_llm_as_summary", reflection_with_llm_as_summary)
        if overridden is None:
            return await reflection_summary(sender, recipient, args)
        return await to_thread(overridden, sender, recipient, args)
    if callable(method):
        return await call_user(method, sender, recipient, args)
    raise ValueError(
        f"If not None, the summary_method must be a string from {SUMMARY_METHODS} or a callable."
    )


# -- AutoGen's methods (ConversableAgent's faces; the first parameter of a method is ``self``) --


def summarize_chat(
    self: Any,
    summary_method: Any,
    summary_args: Mapping[str, Any] | None,
    recipient: Any = None,
    cache: Any = None,
) -> Any:
    """The summary of this agent's chat with ``recipient`` by ``summary_method``, as
    ``initiate_chat`` makes it; ``cache`` unless ``summary_args`` names one (the caller's dict
    is not changed)."""
    args = dict(summary_args or {})
    args.setdefault("cache", cache)
    return run_sync(summarize(self, recipient, summary_method, args))


def last_msg_as_summary(sender: Any, recipient: Any, summary_args: Any = None) -> str:
    """The recipient's last message with ``sender``, ``TERMINATE`` removed ("" if none)."""
    return last_msg_summary(recipient, sender)


def reflection_with_llm_as_summary(sender: Any, recipient: Any, summary_args: Any) -> Any:
    """The chat summarized by the recipient's model (``summary_prompt``, ``summary_role``,
    ``cache`` from ``summary_args``)."""
    return run_sync(reflection_summary(sender, recipient, summary_args or {}))


def reflection_with_llm(
    self: Any,
    prompt: str,
    messages: Any,
    llm_agent: Any = None,
    cache: Any = None,
    role: str | None = None,
) -> Any:
    """The answer of ``llm_agent``'s model (this agent's when it has none) to ``messages``
    followed by ``prompt`` as a ``role`` message (``"system"`` by default)."""
    return run_sync(reflect(self, prompt, list(messages), llm_agent, cache, role))
