"""A chat's question to its human as an AG-UI interrupt, and a resume entry as the answer.

AG-UI has no channel from the client into a running run: a run that needs the human ends with
``RUN_FINISHED`` whose outcome is an interrupt, and the client's next request on the thread
answers it in ``resume``. parley's question is an ``InputRequestEvent``; its answer is text
(``respond``), so each kind of interrupt says, in its ``responseSchema``, what payload becomes
which text:

- a tool call waiting for approval (reason ``tool_call``, ``toolCallId`` the call's):
  ``{"approved": true}`` runs it; ``{"approved": false, "feedback": "..."}`` rejects it (the
  model reads the feedback); ``"endChat": true`` with a rejection also ends the chat. A
  cancelled entry rejects the call (it does not run) and the chat goes on.
- the code blocks of a message waiting for approval (reason ``code_execution``; the blocks,
  ``{"language", "code"}`` each, in ``metadata.parley.code_blocks``): the same payloads as a
  tool call's, for all the blocks at once.
- any other question (reason ``input_required``): ``{"text": "..."}`` (or the bare string) is
  the human's reply; ``""`` lets the agent answer on its own and ``"exit"`` ends the chat, as
  at a console. A cancelled entry ends the chat: nobody is there to answer.
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import Interrupt, ResumeEntry

from ..events import InputRequestEvent
from ._input import Refusal

__all__ = ["APPROVAL_SCHEMA", "INPUT_SCHEMA", "answer_text", "interrupt_for"]

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "description": "true: run the call (or the code)"},
        "feedback": {
            "type": "string",
            "description": "why it is rejected: the model reads it as the call's result "
            "(the code's output)",
        },
        "endChat": {"type": "boolean", "description": "reject it and end the chat"},
    },
    "required": ["approved"],
}
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {
            "type": "string",
            "description": "the human's reply; empty: the agent replies on its own; "
            "'exit': end the chat",
        }
    },
    "required": ["text"],
}
_EXIT = "exit"
_APPROVE = ""


def interrupt_for(
    request: InputRequestEvent,
    interrupt_id: str,
    tool_call_id: str | None,
    expires_at: str | None,
) -> Interrupt:
    """The interrupt that asks the client what ``request`` asks the human."""
    asked = request.content
    facts: dict[str, Any] = {"agent": asked.agent, "sender": asked.sender}
    call_id = None
    if asked.tool_call is not None:
        reason, schema, call_id = "tool_call", APPROVAL_SCHEMA, tool_call_id
        facts.update(tool=asked.tool_call.name, arguments=asked.tool_call.arguments)
    elif asked.code_blocks is not None:
        reason, schema = "code_execution", APPROVAL_SCHEMA
        facts["code_blocks"] = [b.model_dump(mode="json") for b in asked.code_blocks]
    else:
        reason, schema = "input_required", INPUT_SCHEMA
        facts["password"] = asked.password
    return Interrupt(
        id=interrupt_id,
        reason=reason,
        message=asked.prompt,
        tool_call_id=call_id,
        response_schema=schema,
        expires_at=expires_at,
        metadata={"parley": facts},
    )


def answer_text(request: InputRequestEvent, entry: ResumeEntry) -> str | Refusal:
    """The text ``entry`` answers ``request`` with, or why it cannot."""
    asked = request.content
    approval = asked.tool_call is not None or asked.code_blocks is not None
    if entry.status == "cancelled":
        return "the human cancelled the approval" if approval else _EXIT
    payload = entry.payload
    if approval:
        return _approval(payload)
    if isinstance(payload, str):
        return payload
    if isinstance(payload, dict) and isinstance(payload.get("text"), str):
        return str(payload["text"])
    return Refusal(
        "invalid_payload",
        f'the answer to interrupt {entry.interrupt_id} must be {{"text": "..."}} (a string), '
        f"got {payload!r}",
    )


def _approval(payload: Any) -> str | Refusal:
    if not isinstance(payload, dict) or not isinstance(payload.get("approved"), bool):
        return Refusal(
            "invalid_payload",
            f'an approval\'s answer must be {{"approved": true|false, "feedback"?: "...", '
            f'"endChat"?: bool}}, got {payload!r}',
        )
    feedback = payload.get("feedback", "")
    end = payload.get("endChat", False)
    if not isinstance(feedback, str) or not isinstance(end, bool):
        return Refusal(
            "invalid_payload",
            f"an approval's feedback is a string and endChat a boolean, got {payload!r}",
        )
    if payload["approved"]:
        if end:
            return Refusal("invalid_payload", "endChat goes with a rejection, not an approval")
        return _APPROVE
    if end:
        return _EXIT
    # A rejection must not read as an approval (empty) or as the end of the chat ("exit").
    if not feedback.strip() or feedback == _EXIT:
        return "the human rejected it"
    return feedback
