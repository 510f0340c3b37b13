"""What the three single-agent loops share: an agent whose reply is a whole loop.

A ``LoopAgent`` is a ``ConversableAgent`` whose model step (the place of ``generate_oai_reply``
in the reply chain) runs the agent's own loop on the task it was sent and replies with the
loop's result. Termination checks, human input modes, tool and code replies before it work as
for any agent, so a loop agent takes part in two-agent, group and nested chats unchanged.

Its model calls go through the agent's own client (:func:`ask_model`): cache, retries,
fallback across the config list and the usage totals are the client's, as for any agent. The
loops describe their tools in the prompt, so the tool schemas registered with
``register_for_llm`` stay out of the requests (``_tools_in_requests``): the loops work with
models that have no tool-calling API.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..agentchat import _human
from ..agentchat._sync_chat import sync_face
from ..agentchat.conversable_agent import ConversableAgent
from ..code_utils import content_str

__all__ = ["LoopAgent", "ModelTurn", "ask_human", "ask_model", "task_text"]


@dataclass(frozen=True)
class ModelTurn:
    """One model answer: its text and what it cost (0 when cached or unpriced)."""

    text: str
    cost: float


async def ask_model(
    agent: ConversableAgent, messages: list[dict[str, Any]], **params: Any
) -> ModelTurn:
    """One completion through ``agent``'s client; ``params`` (``stop``, ``temperature``...) go
    into the request."""
    client = agent.client
    if client is None:
        raise ValueError(
            f"agent {agent.name!r} has no model: give it an llm_config "
            "(e.g. llm_config={'config_list': [...]})"
        )
    response = await client.a_create(
        messages=messages, cache=agent.client_cache, agent=agent, **params
    )
    extracted = client.extract_text_or_completion_object(response)[0]
    text = (
        extracted
        if isinstance(extracted, str)
        else content_str(getattr(extracted, "content", None))
    )
    return ModelTurn(text or "", float(getattr(response, "cost", 0.0) or 0.0))


async def ask_human(
    agent: ConversableAgent, prompt: str, about: Mapping[str, Any] | None = None
) -> str:
    """One answer from ``agent``'s human: its review function, a ``get_human_input`` override
    or the current IOStream (a console, a script, a web page)."""
    message = dict(about) if about is not None else {"role": "assistant", "content": prompt}
    return await _human.ask_human(agent, prompt, message, None)


def task_text(messages: list[dict[str, Any]] | None) -> str:
    """The task a loop is given: the text of the last message it received."""
    if not messages:
        return ""
    return content_str(messages[-1].get("content"))


class LoopAgent(ConversableAgent):
    """A ``ConversableAgent`` whose model step is a loop: ``a_run(task)`` returns its result.

    ``run(task)`` is the sync face. Sent a message in a chat, the agent runs the loop on the
    message's text and replies with the result.
    """

    _tools_in_requests: ClassVar[bool] = False

    def __init__(self, name: str, **kwargs: Any) -> None:
        kwargs.setdefault("human_input_mode", "NEVER")
        super().__init__(name, **kwargs)
        self.replace_reply_func(ConversableAgent.generate_oai_reply, LoopAgent._loop_reply)

    async def _loop_reply(
        self, messages: list[dict[str, Any]] | None = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, Any]:
        if messages is None and sender is not None:
            messages = self.chat_messages.get(sender)
        return True, await self.a_run(task_text(messages))

    # A loop's own run(task), not ConversableAgent's run(recipient, message=...) event stream.
    async def a_run(self, task: str) -> str:  # type: ignore[override]
        """Run the loop on ``task``; returns the text the agent replies with."""
        raise NotImplementedError

    run = sync_face(a_run)  # type: ignore[arg-type]
