"""One model answer from a client: the step under the LLM reply and the reflection summary.

:func:`ask_client` sends a request and turns the response into a reply (text, or a message
dict whose function and tool names the API accepts). AutoGen named the step
``ConversableAgent._generate_oai_reply_from_client(llm_client, messages, cache)``; AutoGen code
and tests override or patch it (a subclass that retries, or keeps a provider's extra fields),
so the LLM reply (``_replies.generate_oai_reply``) and the summary by reflection
(:func:`client_reply`) call the agent's own method when it is not parley's (:func:`own_step`,
looked up at each call: a test patches the class after agents exist), and parley's async step
otherwise.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._core.runtime import to_thread
from ._messages import request_messages, sanitize_name
from ._overrides import own
from ._sync_chat import run_sync

if TYPE_CHECKING:
    from ._state import AgentCore

__all__ = [
    "ask_client",
    "client_reply",
    "generate_oai_reply_from_client",
    "own_step",
    "reply_from_client",
]

logger = logging.getLogger(__name__)


async def ask_client(
    agent: Any, client: Any, context: Any, request: Sequence[Mapping[str, Any]], cache: Any
) -> Any:
    """The reply ``client`` gives to the API-ready ``request``; None (logged) when the model
    returned neither content nor a call."""
    response = await client.a_create(context=context, messages=request, cache=cache, agent=agent)
    extracted = client.extract_text_or_completion_object(response)[0]
    if extracted is None:
        logger.warning("the model returned no content and no tool call: %r", response)
        return None
    return _normalize_reply(extracted)


async def reply_from_client(
    agent: Any,
    client: Any,
    messages: list[dict[str, Any]],
    cache: Any,
    speakers: Collection[str] = (),
) -> Any:
    """AutoGen's step on stored messages: the last one's ``context`` taken out (it goes with
    this request only), bundled tool responses unrolled, then :func:`ask_client`."""
    context = messages[-1].pop("context", None) if messages else None
    return await ask_client(agent, client, context, request_messages([], messages, speakers), cache)


def generate_oai_reply_from_client(
    self: Any, llm_client: Any, messages: list[dict[str, Any]], cache: Any
) -> Any:
    """``ConversableAgent._generate_oai_reply_from_client``: the reply ``llm_client`` gives to
    ``messages`` (text, a message dict for a call, or None)."""
    return run_sync(reply_from_client(self, llm_client, messages, cache, (self.name,)))


async def client_reply(
    agent: AgentCore,
    client: Any,
    messages: list[dict[str, Any]],
    cache: Any,
    speakers: Collection[str] = (),
) -> Any:
    """The reply through ``agent``'s ``_generate_oai_reply_from_client``: parley's step, or the
    agent's own (an override or a patch, called as AutoGen calls it, in a worker thread)."""
    overridden = own_step(agent)
    if overridden is None:
        return await reply_from_client(agent, client, messages, cache, speakers)
    return await to_thread(overridden, llm_client=client, messages=messages, cache=cache)


def own_step(agent: Any) -> Callable[..., Any] | None:
    """``agent``'s ``_generate_oai_reply_from_client`` when it is its own (a subclass's
    override, a patch of the class or of the agent), None when it is parley's."""
    return own(agent, "_generate_oai_reply_from_client", generate_oai_reply_from_client)


def _normalize_reply(reply: Any) -> Any:
    """A reply the conversation can send back to the API: a message object as a dict, its
    function and tool names as the API accepts them, a tool call's missing id and type gone."""
    if hasattr(reply, "model_dump"):
        reply = reply.model_dump(exclude_none=True)
    if not isinstance(reply, dict):
        return reply
    if reply.get("function_call") and reply["function_call"].get("name"):
        reply["function_call"]["name"] = sanitize_name(reply["function_call"]["name"])
    for tc in reply.get("tool_calls") or ():
        fn = tc.get("function") or {}
        if fn.get("name"):
            fn["name"] = sanitize_name(fn["name"])
        for key in ("id", "type"):
            if key in tc and tc[key] is None:
                del tc[key]
    return reply
