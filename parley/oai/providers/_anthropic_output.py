"""OpenAI's ``response_format`` on Anthropic's Messages API, and the answer read back.

Two mechanisms, chosen by model:

- **native** (``output_config.format``, a JSON schema): Claude models of generation 4.5 and
  later decode under the schema; the answer is a text block holding the JSON document, and the
  request's real tools stay callable as they are;
- **a forced tool** for older models and for ``json_object`` (which has no schema to send): a
  tool named after the schema whose ``input_schema`` is the schema. Alone, it is forced
  (``tool_choice`` naming it). Next to the caller's own tools it is offered with them under
  ``tool_choice: any``, so the model either calls a real tool or answers through the output
  tool, never in free text; a ``tool_choice`` naming one of the caller's tools is kept (the
  answer comes on a later turn), and ``none`` forces the output tool. The call to the output
  tool is the answer: its input, as JSON text, is the reply's content, and it is not reported
  as a tool call (when the model calls a real tool in the same turn, the real calls are the
  reply and the early answer is dropped; a stream has sent both by then).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._response_format import OutputSchema, requested

__all__ = ["OutputTool", "apply", "native_schemas"]

_DESCRIPTION = (
    "Give your final answer by calling this tool: its input is the answer, in the structure "
    "the user asked for."
)
# Claude model names: the family, then the generation (major, and a one-digit minor).
_GENERATION = re.compile(r"claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d)(?!\d))?")
_FIRST_NATIVE = (4, 5)


def native_schemas(model: str) -> bool:
    """Whether ``model`` (an Anthropic name; Bedrock's and Vertex's ids work too) takes
    ``output_config.format``: Claude's structured outputs, generation 4.5 and later."""
    found = _GENERATION.search(model)
    if found is None:
        return False
    generation = (int(found.group(1)), int(found.group(2) or 0))
    return generation >= _FIRST_NATIVE


@dataclass(frozen=True)
class OutputTool:
    """The tool that carries the answer in a request (see the module's docs)."""

    name: str


def _tool_name(wanted: OutputSchema | bool, taken: set[str]) -> str:
    name = wanted.name if isinstance(wanted, OutputSchema) else "json_response"
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "response"
    while name in taken:  # never shadow one of the caller's tools
        name = f"{name[:56]}_answer"
    return name


def apply(
    body: dict[str, Any], params: Mapping[str, Any], model: str, user_choice: Any
) -> OutputTool | None:
    """Add the request's ``response_format`` to the Messages API ``body`` (which already has
    the caller's tools and ``tool_choice``): ``output_config`` or the output tool. The output
    tool, when one carries the answer, else None. ``user_choice`` is the request's OpenAI
    ``tool_choice``."""
    wanted = requested(params)
    if not wanted:
        return None
    if isinstance(wanted, OutputSchema) and native_schemas(model):
        output_config = dict(body.get("output_config") or {})
        output_config["format"] = {"type": "json_schema", "schema": dict(wanted.schema)}
        body["output_config"] = output_config
        return None
    schema = dict(wanted.schema) if isinstance(wanted, OutputSchema) else {"type": "object"}
    description = (wanted.description if isinstance(wanted, OutputSchema) else None) or ""
    tools = list(body.get("tools") or ())
    tool = OutputTool(_tool_name(wanted, {str(t.get("name")) for t in tools}))
    spec = {"name": tool.name, "description": description or _DESCRIPTION, "input_schema": schema}
    body["tools"] = [*tools, spec]
    choice = dict(body.get("tool_choice") or {})
    parallel_off = choice.pop("disable_parallel_tool_use", None)
    if not tools or choice.get("type") == "none":
        choice = {"type": "tool", "name": tool.name}
    elif not (isinstance(user_choice, Mapping) and choice.get("type") == "tool"):
        choice = {"type": "any"}
    if parallel_off:
        choice["disable_parallel_tool_use"] = True
    body["tool_choice"] = choice
    return tool
