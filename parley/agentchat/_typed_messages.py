"""The parsed objects of a chat's typed replies, read back from its history.

An agent whose ``llm_config`` has a ``response_format`` (at its top level, else in its first
config entry) replies with JSON text that its client checked against that schema; the history
keeps the text. :func:`last_parsed` parses it again where a user asks for the object
(``ChatResult.parsed``, ``agent.last_parsed_reply()``), so the object is the same however the
text arrived: asked of the model, from the cache, or replayed from a durable chat's journal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..exceptions import StructuredOutputError
from ..oai._structured import OutputSchema, output_schema_of

__all__ = ["agent_schema", "chat_parsed", "last_parsed"]


def agent_schema(agent: Any) -> OutputSchema | None:
    """The schema of ``agent``'s model replies (None: untyped, or not an LLM agent)."""
    config = getattr(agent, "llm_config", None)
    if not isinstance(config, Mapping):
        return None
    given = config.get("response_format")
    if given is None:
        entries = config.get("config_list") or ()
        first = entries[0] if entries else None
        given = first.get("response_format") if isinstance(first, Mapping) else None
    return output_schema_of(given, f"{getattr(agent, 'name', 'agent')}'s response_format")


def last_parsed(
    messages: Sequence[Mapping[str, Any]],
    schema_of: Callable[[Mapping[str, Any]], OutputSchema | None],
) -> Any:
    """The parsed object of the last of ``messages`` whose author has a schema (``schema_of``
    says, per message) and whose text conforms to it; None when there is none. A message that
    calls tools, or whose text does not conform (a greeting, a human's answer), is passed over."""
    for message in reversed(messages):
        if message.get("tool_calls") or message.get("function_call"):
            continue
        if message.get("role") in ("tool", "function"):
            continue
        schema = schema_of(message)
        if schema is None or message.get("content") is None:
            continue
        try:
            return schema.validate(message["content"])
        except StructuredOutputError:
            continue
    return None


def chat_parsed(history: Sequence[Mapping[str, Any]], sender: Any, recipient: Any) -> Any:
    """``ChatResult.parsed``: the last typed reply in ``sender``'s history with ``recipient``
    (in a group chat, the manager: a message's ``name`` says which member spoke)."""
    by_name: dict[str, Any] = {}
    group = getattr(recipient, "groupchat", None)
    for agent in getattr(group, "agents", None) or ():
        by_name[getattr(agent, "name", "")] = agent
    by_name[getattr(recipient, "name", "")] = recipient
    schemas: dict[int, OutputSchema | None] = {}

    def schema_of(message: Mapping[str, Any]) -> OutputSchema | None:
        if message.get("role") == "assistant":
            author = sender
        else:
            author = by_name.get(str(message.get("name")), recipient)
        if id(author) not in schemas:
            schemas[id(author)] = agent_schema(author)
        return schemas[id(author)]

    return last_parsed(history, schema_of)
