"""``SocietyOfMindAgent`` (AutoGen's ``autogen.agentchat.contrib.society_of_mind_agent``).

The agent answers a message by running a whole group chat — its "inner monologue" — and
replying with one message prepared from the group's transcript: by default the agent's own
model is asked for a standalone answer (``response_preparer=None`` with an ``llm_config``), or
the last inner message is used with ``TERMINATE`` removed (no ``llm_config``); a ``str`` is the
final instruction of that model call, a callable ``f(agent, messages) -> str`` prepares the
reply itself.

Unlike AutoGen, the agent also answers in async chats (``a_initiate_chat``): its reply
function is a coroutine, the inner chat runs on the caller's loop, and the default preparer's
model call is async there. As in AutoGen, an exception in the inner chat does not fail the
outer one: it is logged with its traceback and the reply is prepared from the transcript so
far.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any, Literal

from ..._core.calls import call_user
from .. import _code_execution, _human, _replies
from .._agent_registration import reply_configs
from .._registry import ReplyEntry, builtin_reply, insert_reply
from .._sync_chat import sync_face
from ..agent import Agent
from ..conversable_agent import ConversableAgent
from ..groupchat import GroupChat, GroupChatManager

__all__ = ["SocietyOfMindAgent"]

logger = logging.getLogger(__name__)

Preparer = Callable[["SocietyOfMindAgent", list[dict[str, Any]]], Any]

DEFAULT_RESPONSE_PROMPT = (
    "Now write the reply to the original request as if you were answering it yourself, "
    "directly and completely. The reply must stand on its own: do not mention the team, the "
    "discussion above or any of its intermediate steps."
)
_TRANSCRIPT_INTRO = (
    "A request was sent to you earlier, and a team of helpers worked on it together. What "
    "follows is the transcript of their discussion."
)


class _LLMPreparer:
    """The model-based preparer: ``agent._llm_response_preparer(prompt, messages)``, also
    awaited as such in async chats."""

    def __init__(self, prompt: str) -> None:
        self.prompt = prompt

    def __call__(self, agent: SocietyOfMindAgent, messages: list[dict[str, Any]]) -> str:
        return agent._llm_response_preparer(self.prompt, messages)


def _strip_terminate(agent: SocietyOfMindAgent, messages: list[dict[str, Any]]) -> str:
    return str(messages[-1]["content"]).replace("TERMINATE", "").strip()


def _transcript_message(message: dict[str, Any]) -> dict[str, Any]:
    """One inner message as the preparer's model sees it: a user message, without tool
    calls, with a function call written out when it was all there was."""
    msg = copy.deepcopy(message)
    msg["role"] = "user"
    if msg.get("content") is None:
        msg["content"] = ""
    msg.pop("tool_calls", None)
    msg.pop("tool_responses", None)
    call = msg.pop("function_call", None)
    if call and msg["content"] == "":
        msg["content"] = f"{call.get('name', '')}({call.get('arguments', '')})"
    return msg


async def _inner_monologue(
    agent: SocietyOfMindAgent, messages: Any = None, sender: Any = None, config: Any = None
) -> tuple[bool, Any]:
    return await agent.a_generate_inner_monologue_reply(messages, sender, config)


class SocietyOfMindAgent(ConversableAgent):
    """An agent whose every reply is a group chat's work (see the module docstring)."""

    def __init__(
        self,
        name: str,
        chat_manager: GroupChatManager,
        response_preparer: str | Preparer | None = None,
        is_termination_msg: Callable[[dict[str, Any]], bool] | None = None,
        max_consecutive_auto_reply: int | None = None,
        human_input_mode: Literal["ALWAYS", "NEVER", "TERMINATE"] = "TERMINATE",
        function_map: dict[str, Callable[..., Any]] | None = None,
        code_execution_config: dict[str, Any] | Literal[False] = False,
        llm_config: dict[str, Any] | Literal[False] | None = False,
        default_auto_reply: str | dict[str, Any] | None = "",
        **kwargs: Any,
    ) -> None:
        kwargs.pop("system_message", None)  # always "": the inner group does the thinking
        super().__init__(
            name=name,
            system_message="",
            is_termination_msg=is_termination_msg,
            max_consecutive_auto_reply=max_consecutive_auto_reply,
            human_input_mode=human_input_mode,
            function_map=function_map,
            code_execution_config=code_execution_config,
            llm_config=llm_config,
            default_auto_reply=default_auto_reply,
            **kwargs,
        )
        self._chat_manager: GroupChatManager | None = None
        self._group_chat: GroupChat | None = None
        self.update_chat_manager(chat_manager)

        self.response_preparer: Preparer
        if response_preparer is None:
            self.response_preparer = (
                _LLMPreparer(DEFAULT_RESPONSE_PROMPT)
                if self.client is not None
                else _strip_terminate
            )
        elif isinstance(response_preparer, str):
            self.response_preparer = _LLMPreparer(response_preparer)
        elif callable(response_preparer):
            self.response_preparer = response_preparer
        else:
            raise TypeError(
                "response_preparer must be None, a prompt (str) or a callable "
                f"f(agent, messages) -> str; got {type(response_preparer).__name__}"
            )
        self._rebuild_reply_functions()

    def _rebuild_reply_functions(self) -> None:
        """AutoGen's four reply functions, first tried first: termination and human input,
        function calls, code execution, the inner monologue. No tool-call or model reply."""
        base = ConversableAgent
        builtins = dict(self._builtin_replies())
        code_public: Callable[..., Any] = base.generate_code_execution_reply
        code_impl: Callable[..., Any] = _code_execution.generate_code_execution_reply
        for public, impl in builtins.items():
            if impl in (
                _code_execution.generate_code_execution_reply,
                _code_execution.generate_code_execution_reply_using_executor,
            ):
                code_public, code_impl = public, impl
        entries: list[ReplyEntry] = [
            builtin_reply(
                [Agent, None], SocietyOfMindAgent.generate_inner_monologue_reply, _inner_monologue
            ),
            builtin_reply([Agent, None], code_public, code_impl),
            builtin_reply(
                [Agent, None],
                base.generate_function_call_reply,
                _replies.generate_function_call_reply,
            ),
            builtin_reply(
                [Agent, None],
                base.check_termination_and_human_reply,
                _human.check_termination_and_human_reply,
            ),
        ]
        self._reply_func_list.clear()
        for entry in entries:
            insert_reply(self._reply_func_list, entry, 0)

    # -- the inner group chat -------------------------------------------------------------

    @property
    def chat_manager(self) -> GroupChatManager | None:
        """The manager of the inner group chat."""
        return self._chat_manager

    def update_chat_manager(self, chat_manager: GroupChatManager | None) -> None:
        """Use ``chat_manager``'s group chat (found among its reply functions' configs)."""
        self._chat_manager = chat_manager
        self._group_chat = None
        if chat_manager is None:
            return
        for config in reply_configs(chat_manager):
            if isinstance(config, GroupChat):
                self._group_chat = config
                break

    def _inner_group(self) -> GroupChat:
        if self._group_chat is None:
            raise AttributeError(
                f"SocietyOfMindAgent {self.name!r}: its chat manager runs no GroupChat (no "
                "reply function of the manager has a GroupChat as its config)"
            )
        return self._group_chat

    async def a_generate_inner_monologue_reply(
        self,
        messages: list[dict[str, Any]] | None = None,
        sender: Agent | None = None,
        config: Any = None,
    ) -> tuple[bool, Any]:
        """Run the inner group chat on ``messages`` and reply with the prepared response."""
        manager = self._chat_manager
        if manager is None:
            return False, None
        if messages is None:
            messages = self._oai_messages[sender]
        manager.reset()
        self.update_chat_manager(manager)
        group = self._inner_group()

        # Every member starts from the outer conversation so far (all but its last message,
        # which opens the inner chat), told to it by the manager.
        history = messages[:-1]
        for member in group.agents:
            member.reset()  # type: ignore[attr-defined]
            for message in history:
                told = dict(message)
                if "name" not in told:
                    told["name"] = (
                        self.name
                        if told.get("role") == "assistant"
                        else getattr(sender, "name", self.name)
                    )
                await manager.a_send(told, member, request_reply=False, silent=True)

        try:
            await self.a_initiate_chat(manager, message=messages[-1], clear_history=False)
        except Exception:
            # AutoGen's behaviour: the outer chat goes on, answered from the transcript so far.
            logger.exception("SocietyOfMindAgent %r: the inner group chat failed", self.name)
        return True, await self._a_prepare(group.messages)

    generate_inner_monologue_reply = sync_face(a_generate_inner_monologue_reply)

    async def _a_prepare(self, messages: list[dict[str, Any]]) -> Any:
        preparer = self.response_preparer
        if isinstance(preparer, _LLMPreparer):
            return await self._a_llm_response_preparer(preparer.prompt, messages)
        return await call_user(preparer, self, messages)

    # -- the model-based preparer ---------------------------------------------------------

    def _preparer_request(
        self, prompt: str, messages: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        return [
            {"role": "system", "content": _TRANSCRIPT_INTRO},
            *(_transcript_message(m) for m in messages),
            {"role": "system", "content": prompt},
        ]

    def _preparer_text(self, response: Any) -> str:
        extracted = self.client.extract_text_or_completion_object(response)[0]
        if isinstance(extracted, str):
            return extracted
        return str(extracted.model_dump())

    def _llm_response_preparer(self, prompt: str, messages: list[dict[str, Any]]) -> str:
        """Ask the agent's model to turn the inner transcript ``messages`` into one reply,
        ``prompt`` being the last instruction."""
        if self.client is None:
            raise ValueError(
                f"SocietyOfMindAgent {self.name!r} has no llm_config: a response preparer "
                "prompt needs a model"
            )
        response = self.client.create(
            context=None,
            messages=self._preparer_request(prompt, messages),
            cache=self.client_cache,
            agent=self,
        )
        return self._preparer_text(response)

    async def _a_llm_response_preparer(self, prompt: str, messages: list[dict[str, Any]]) -> str:
        if self.client is None:
            raise ValueError(
                f"SocietyOfMindAgent {self.name!r} has no llm_config: a response preparer "
                "prompt needs a model"
            )
        response = await self.client.a_create(
            context=None,
            messages=self._preparer_request(prompt, messages),
            cache=self.client_cache,
            agent=self,
        )
        return self._preparer_text(response)
