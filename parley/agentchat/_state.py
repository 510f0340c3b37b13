"""An agent's conversation state as one object, and the face the helper modules see.

:class:`AgentState` is everything an agent remembers of its conversations: the history with
each partner, the consecutive auto-reply counters and limits, whether it answers what it
receives, and what its human typed; and the settings the steps read (the system message, the
code-execution config, the termination test, whether tool schemas go into requests).
``ConversableAgent`` owns one (``agent.state``) and keeps AutoGen's attribute names
(``_oai_messages``, ``_consecutive_auto_reply_counter``, ``_oai_system_message``, ...) as views
of it, since extensions written for AutoGen read and set them.

:class:`AgentCore` is the part of an agent that the step modules (``_turn``, ``_human``,
``_replies``, ``_code_execution``, ``_tools``, ``_chat_flow``, ``_nested``) use. They depend on this
Protocol, never on ``ConversableAgent`` itself, so the agent module imports them and nothing
imports it back.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, cast, overload

from .._agent_protocol import Agent
from ..types import Message
from ._messages import RequestMemo, stored_message

if TYPE_CHECKING:
    from ..io.base import OutputStream

__all__ = [
    "AgentCore",
    "AgentState",
    "History",
    "StateView",
    "as_dict",
    "as_dicts",
    "as_messages",
]

T = TypeVar("T")

History = list[Message] | None
"""The messages a reply function answers (None: the history with the sender)."""


def as_dicts(messages: list[Message]) -> list[dict[str, Any]]:
    """A history as AutoGen's public signatures type it: the same list (a ``Message`` is a
    plain dict at run time), so what a caller changes in it changes the history."""
    return cast("list[dict[str, Any]]", messages)


@overload
def as_dict(message: Message) -> dict[str, Any]: ...
@overload
def as_dict(message: Message | None) -> dict[str, Any] | None: ...
def as_dict(message: Message | None) -> dict[str, Any] | None:
    """A message a step built, as AutoGen's public signatures type it (the same dict)."""
    return cast("dict[str, Any] | None", message)


def as_messages(messages: list[dict[str, Any]]) -> list[Message]:
    """Messages a caller hands to a step as they are (``generate_reply``'s ``messages``, a
    constructor's ``chat_messages``): unchecked, as in AutoGen, and read as ``Message`` s."""
    return cast("list[Message]", messages)


def _never(message: dict[str, Any]) -> bool:
    return False


class AgentState:
    """What an agent remembers of its conversations (see the module docstring)."""

    __slots__ = (
        "auto_reply_counter",
        "code_execution_config",
        "human_input",
        "human_review",
        "is_termination_msg",
        "max_auto_reply",
        "max_auto_reply_per_sender",
        "messages",
        "reply_at_receive",
        "request_memos",
        "system_message",
        "tools_in_requests",
    )

    def __init__(
        self,
        messages: dict[Any, list[dict[str, Any]]] | None,
        max_auto_reply: int,
        default_limit: Callable[[], int],
    ) -> None:
        self.messages: dict[Any, list[Message]] = (
            defaultdict(list)
            if messages is None
            else cast("dict[Any, list[Message]]", messages)  # the caller's, as in AutoGen
        )
        self.max_auto_reply = max_auto_reply
        # A sender without its own limit gets ``default_limit()`` when first seen.
        self.max_auto_reply_per_sender: dict[Any, int] = defaultdict(default_limit)
        self.auto_reply_counter: dict[Any, int] = defaultdict(int)
        self.reply_at_receive: dict[Any, bool] = defaultdict(bool)
        self.human_input: list[str] = []
        self.request_memos: dict[Any, RequestMemo] = {}
        # The settings the steps read; the agent sets them (AutoGen's ``_oai_system_message``,
        # ``_code_execution_config`` and ``_is_termination_msg`` are views of the first three).
        self.system_message: list[dict[str, Any]] = []
        self.code_execution_config: dict[str, Any] | Literal[False] = False
        self.is_termination_msg: Callable[[dict[str, Any]], Any] = _never
        self.tools_in_requests = True
        # What answers for the human (``register_human_review``; a ``_human.ReviewRequest`` in).
        self.human_review: Callable[[Any], Any] | None = None

    def store(
        self,
        partner: Any,
        message: str | Mapping[str, Any],
        *,
        sending: bool,
        own_name: str,
        role: str | None = None,
        checked: bool = False,
    ) -> Message | None:
        """Append ``message`` to the history with ``partner`` in its stored form
        (``_messages.stored_message``, whose arguments these are) and return that; return None
        and store nothing if it has neither content nor a call. The one way a message enters a
        history: parley's turn and AutoGen's ``_append_oai_message`` both come here."""
        stored = stored_message(
            message,
            sending=sending,
            own_name=own_name,
            partner_name=getattr(partner, "name", ""),
            role=role,
            checked=checked,
        )
        if stored is not None:
            self.messages[partner].append(stored)
        return stored

    def request_memo(self, sender: Any, speakers: Collection[str] = ()) -> RequestMemo:
        """The memo that builds model requests for the conversation with ``sender``
        (``speakers``: see ``RequestMemo``, given when it is made)."""
        memo = self.request_memos.get(sender)
        if memo is None:
            memo = self.request_memos[sender] = RequestMemo(speakers)
        return memo

    def last_message(self, agent: Any = None) -> Message | None:
        if agent is None:
            n = len(self.messages)
            if n == 0:
                return None
            if n == 1:
                for conversation in self.messages.values():
                    return conversation[-1]
            raise ValueError(
                "More than one conversation is found. Please specify the sender to get the last message."
            )
        if agent not in self.messages:
            raise KeyError(
                f"The agent '{agent.name}' is not present in any conversation. No history available for this agent."
            )
        return self.messages[agent][-1]

    def clear_history(
        self,
        owner: str,
        out: OutputStream,
        recipient: Any = None,
        nr_messages_to_preserve: int | None = None,
    ) -> None:
        # The request memos hold copies of what is cleared: let them go too.
        if recipient is not None:
            self.request_memos.pop(recipient, None)
            self.messages[recipient].clear()
            if nr_messages_to_preserve:
                out.print(
                    "WARNING: `nr_preserved_messages` is ignored when clearing chat history with a specific agent.",
                    flush=True,
                )
            return
        self.request_memos.clear()
        if not nr_messages_to_preserve:
            self.messages.clear()
            return
        for key, messages in self.messages.items():
            keep = nr_messages_to_preserve
            first = messages[-keep] if len(messages) >= keep else None
            if first is not None and "tool_responses" in first and len(messages) > keep:
                keep += 1  # never keep a tool response without the call it answers
                out.print(
                    f"Preserving one more message for {owner} to not divide history between "
                    "tool call and tool response.",
                    flush=True,
                )
            self.messages[key] = messages[-keep:]

    def set_max_auto_reply(self, value: int, sender: Any = None) -> None:
        if sender is None:
            self.max_auto_reply = value
            for key in self.max_auto_reply_per_sender:
                self.max_auto_reply_per_sender[key] = value
        else:
            self.max_auto_reply_per_sender[sender] = value

    def reset_counter(self, sender: Any = None) -> None:
        if sender is None:
            self.auto_reply_counter.clear()
        else:
            self.auto_reply_counter[sender] = 0

    def stop_reply_at_receive(self, sender: Any = None) -> None:
        if sender is None:
            self.reply_at_receive.clear()
        else:
            self.reply_at_receive[sender] = False


class StateView(Generic[T]):
    """An agent attribute that reads and writes one field of its ``state`` (for AutoGen's
    attribute names: ``agent._oai_messages`` is ``agent.state.messages``).

    ``before_state`` is what a subclass wrote under that name (AutoGen code defines a method
    ``_is_termination_msg`` and passes ``is_termination_msg=self._is_termination_msg`` to the
    base's ``__init__``): read before the agent has its state, as AutoGen's instance attribute
    did not exist yet either; the state's field afterwards."""

    def __init__(self, field: str, before_state: Any = None) -> None:
        self.field = field
        self.before_state = before_state

    @overload
    def __get__(self, agent: None, owner: type) -> StateView[T]: ...

    @overload
    def __get__(self, agent: object, owner: type) -> T: ...

    def __get__(self, agent: object, owner: type) -> StateView[T] | T:
        if agent is None:
            return self
        try:
            state = agent.state  # type: ignore[attr-defined]
        except AttributeError:
            if self.before_state is None:
                raise
            bind = getattr(self.before_state, "__get__", None)
            return bind(agent, owner) if bind is not None else self.before_state  # type: ignore[no-any-return]
        value: T = getattr(state, self.field)
        return value

    def __set__(self, agent: object, value: T) -> None:
        setattr(agent.state, self.field, value)  # type: ignore[attr-defined]


class AgentCore(Agent, Protocol):
    """What the step modules need of an agent (``ConversableAgent`` provides it).

    AutoGen's settings that extensions set by their underscored names (``_oai_system_message``,
    ``_code_execution_config``, ``_is_termination_msg``) the steps read from ``state``, of which
    those names are views. AutoGen's overridable helpers the agent hands over where they are
    used (``_turn.TurnSetup``, ``_chat_flow.ChatSetup``, ``register_for_execution``'s ``wrap``);
    ``_wrap_function`` is declared here because the registration mixin, typed against this
    Protocol, hands it over.
    """

    state: AgentState
    client: Any
    client_cache: Any
    previous_cache: Any
    llm_config: Any
    code_executor: Any
    use_docker: Any

    @property
    def name(self) -> str: ...

    @property
    def function_map(self) -> dict[str, Callable[..., Any]]: ...

    @property
    def human_input_mode(self) -> str: ...

    @property
    def _wrap_function(self) -> Callable[[Any], Any]: ...

    def get_human_input(self, prompt: str) -> str: ...

    def last_message(self, agent: Agent | None = None) -> dict[str, Any] | None: ...

    def chat_messages_for_summary(self, agent: Agent) -> list[dict[str, Any]]: ...

    async def a_get_human_input(self, prompt: str) -> str: ...

    def execute_code_blocks(self, code_blocks: list[tuple[str, str]]) -> tuple[int, str]: ...

    def run_code(self, code: str, **kwargs: Any) -> tuple[int, str, str | None]: ...

    @property
    def register_reply(self) -> Callable[..., None]: ...
