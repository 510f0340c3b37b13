"""OpenAI-shaped messages in the shape of Cohere's chat v1 API, as AutoGen 0.2's Cohere client
sent them: ``chat_history`` turns of ``USER`` / ``CHATBOT`` ``message``s, the system text as
the ``preamble``, the last user message as ``message``, tools as ``parameter_definitions`` and
tool results as ``tool_results``. parley's client speaks chat v2
(:mod:`parley.oai.providers.cohere`); this shape is for AutoGen code that builds v1 requests.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

__all__ = ["v1_messages"]

_CONTINUE = "Please continue."


def _tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    function = tool["function"]
    definitions: dict[str, Any] = {}
    for name, schema in function["parameters"]["properties"].items():
        description = schema["description"]
        if "enum" in schema:
            # v1 has no enums: the values are told in the description.
            values = ", ".join(str(v) for v in schema["enum"])
            description = f"{description}. Possible values are {values}."
        definitions[name] = {"description": description, "type": schema["type"], "required": True}
    return {
        "name": function["name"],
        "description": function["description"],
        "parameter_definitions": definitions,
    }


def _result(call: Mapping[str, Any], output: Any) -> dict[str, Any]:
    arguments = call["function"]["arguments"]
    return {
        "call": {"name": call["function"]["name"], "parameters": json.loads(arguments or "{}")},
        "outputs": [{"value": output}],
    }


def v1_messages(
    messages: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any],
    cohere_params: MutableMapping[str, Any],
) -> tuple[list[dict[str, Any]], str, str]:
    """(``chat_history``, ``preamble``, ``message``); ``cohere_params`` gets the ``tools`` of
    ``params`` and, once tools have run, their ``tool_results`` and ``force_single_step``
    False (then ``message`` is "" and the history ends with the chatbot)."""
    if "tools" in params:
        tools = [_tool(t) for t in params["tools"]]
        if tools:
            cohere_params["tools"] = tools
    history: list[dict[str, Any]] = []
    preamble = ""
    calls: list[Mapping[str, Any]] = []
    results: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "system":
            preamble = f"{preamble}\n{message['content']}" if preamble else message["content"]
        elif "tool_calls" in message:
            calls.extend(message["tool_calls"])
            history.append({"role": "CHATBOT", "message": message["content"]})
        elif role == "tool":
            if "tool_call_id" in message:
                call = next((c for c in calls if c["id"] == message["tool_call_id"]), None)
                if call is not None:
                    results.append(_result(call, message["content"]))
        elif isinstance(message.get("content"), str):
            speaker = "USER" if role == "user" else "CHATBOT"
            history.append({"role": speaker, "message": message["content"]})
    if results:
        cohere_params["tool_results"] = results
        cohere_params["force_single_step"] = False
        if history[-1]["role"] == "USER":
            history.append({"role": "CHATBOT", "message": _CONTINUE})
        return history, preamble, ""
    if history[-1]["role"] == "USER":
        return history[:-1], preamble, history[-1]["message"]
    return history, preamble, _CONTINUE
