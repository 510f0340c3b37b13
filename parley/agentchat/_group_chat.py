"""``GroupChat``: the participants, the shared transcript and the rules for who speaks next.

It holds data and checks it; choosing the next speaker is the job of the
:class:`~._speaker_selection.SpeakerSelector` each group owns. ``parley.agentchat.groupchat``
is its public home; see that module for the ways it differs from AutoGen on purpose.

No ``from __future__ import annotations`` here: the public home is another module, so the
fields' types must be objects, not names, for ``typing.get_type_hints(GroupChat)`` to work.
"""

import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from .._agent_protocol import is_agent as _is_agent
from ..exceptions import AgentNameConflict, UndefinedNextAgent
from ..graph_utils import check_graph_shape, check_graph_validity, invert_disallowed_to_allowed
from . import _group_compat as _compat
from ._auto_selection import mentioned_agents
from ._group_visibility import Rule, check_visibility
from ._messages import check_message, content_text
from ._speaker_selection import (
    SPEAKER_SELECTION_METHODS,
    SPEAKER_TRANSITIONS_TYPES,
    SpeakerSelector,
)
from ._sync_chat import run_sync
from .agent import Agent

__all__ = ["GroupChat"]

logger = logging.getLogger(__name__)

_SELECT_MESSAGE = """You coordinate a conversation between several participants. These are the participants and their roles:
{roles}

Read the conversation that follows. Then decide who should speak next, choosing one of {agentlist}. Answer with that participant's name only."""

_SELECT_PROMPT = (
    "Given the conversation above, who should speak next? Choose one of {agentlist} and answer "
    "with the name only."
)

_AUTO_MULTIPLE = """Your answer named more than one participant; give just the name of the next speaker. Decide with these rules, in order:
    1. If the text speaks as a participant (for example "As the planner, ..."), choose that participant.
    2. If the text says who should speak next, choose that name.
    3. Otherwise choose the first participant the text names.
    Names are case-sensitive: write the name exactly, one of {agentlist}.
    Answer with ONLY the name, without any explanation."""

_AUTO_NONE = """Your answer did not name any participant; give just the name of the next speaker. Decide with these rules, in order:
    1. If the text speaks as a participant (for example "As the planner, ..."), choose that participant.
    2. If the text says who should speak next, choose that name.
    3. Otherwise choose the first participant the text names.
    The possible names are {agentlist}; they are case-sensitive: write the name exactly.
    Answer with ONLY the name, without any explanation."""

_TEMPLATES = (
    "select_speaker_message_template",
    "select_speaker_prompt_template",
    "select_speaker_auto_multiple_template",
    "select_speaker_auto_none_template",
)
_MANUAL_TRIES = 3


def _full_transitions(
    agents: list[Agent], allow_repeat: bool | list[Agent]
) -> dict[Any, list[Any]]:
    """Every agent may follow every other one; itself too when repeats are allowed for it."""
    return {
        a: [
            b
            for b in agents
            if b is not a
            or allow_repeat is True
            or (isinstance(allow_repeat, list) and a in allow_repeat)
        ]
        for a in agents
    }


@dataclass
class GroupChat:
    """A group of agents, their shared transcript and the speaker-selection rules.

    ``agents`` and ``messages`` are required (``messages`` is the transcript, kept in place).

    ``visibility`` (parley only) says which messages each member receives, and so what its
    model is sent; the manager, ``messages`` and the "auto" speaker selection (which runs as the
    manager) always have the whole transcript:

    - ``"all"`` (the default): every member receives every message, as in AutoGen.
    - ``"addressed"``: a member receives the messages it sent, the broadcasts (the chat's
      initial message), and the messages addressed to it: the message after which it was
      chosen to speak, and a message whose text names it as ``@name``.
    - a callable ``(message, agent) -> bool``: ``message`` as stored in ``messages`` (with the
      sender's ``name``), ``agent`` the member; it decides every message but the member's own.
    - a dict ``{member name: [sender names]}``: the member receives the messages of those
      senders, its own and the initial message; members not in the dict receive everything.

    Under every rule a tool call and its results go together: the results to exactly the
    members that received the call, and the call always to the member chosen to run it (the
    speaker after it), so no member's request has a result without its call or a call without
    its results.
    """

    agents: list[Agent]
    messages: list[dict[str, Any]]
    max_round: int = 10
    admin_name: str = "Admin"
    func_call_filter: bool = True
    speaker_selection_method: (
        Literal["auto", "manual", "random", "round_robin"] | Callable[..., Any]
    ) = "auto"
    max_retries_for_selecting_speaker: int = 2
    allow_repeat_speaker: bool | list[Agent] | None = None
    allowed_or_disallowed_speaker_transitions: dict[Any, list[Any]] | None = None
    speaker_transitions_type: Literal["allowed", "disallowed", None] = None
    enable_clear_history: bool = False
    send_introductions: bool = False
    select_speaker_message_template: str = _SELECT_MESSAGE
    select_speaker_prompt_template: str | None = _SELECT_PROMPT
    select_speaker_auto_multiple_template: str = _AUTO_MULTIPLE
    select_speaker_auto_none_template: str = _AUTO_NONE
    select_speaker_transform_messages: Any = None
    select_speaker_auto_verbose: bool | None = False
    select_speaker_auto_model_client_cls: type | list[type] | None = None
    select_speaker_auto_llm_config: dict[str, Any] | Literal[False] | None = None
    role_for_select_speaker_messages: str | None = "system"
    # parley only: who sees which message (see the class docstring and _group_visibility).
    visibility: Literal["all", "addressed"] | Rule | dict[str, list[str]] = "all"

    allowed_speaker_transitions_dict: dict[Any, list[Any]] = field(init=False)
    # Chooses the speakers; it keeps the "auto" selection agent and the warnings given.
    _speaker_selector: SpeakerSelector = field(
        default_factory=SpeakerSelector, init=False, repr=False, compare=False
    )

    # AutoGen's names for the accepted values, kept for code that reads them.
    _VALID_SPEAKER_SELECTION_METHODS: ClassVar[list[str]] = list(SPEAKER_SELECTION_METHODS)
    _VALID_SPEAKER_TRANSITIONS_TYPE: ClassVar[list[str | None]] = list(SPEAKER_TRANSITIONS_TYPES)
    DEFAULT_INTRO_MSG = (
        "Hello everyone. A team has been put together for this conversation. The participants are:"
    )

    def __post_init__(self) -> None:
        # The order of the checks is AutoGen's, so the same bad input fails the same way.
        self._check_agents()
        repeat = self.allow_repeat_speaker
        if repeat is not None and not isinstance(repeat, (bool, list)):
            raise ValueError("GroupChat allow_repeat_speaker should be a bool or a list of Agents.")
        kind = self.speaker_transitions_type
        if isinstance(kind, str):
            kind = self.speaker_transitions_type = kind.lower()  # type: ignore[assignment]
        if kind not in SPEAKER_TRANSITIONS_TYPES:
            raise ValueError(
                f"GroupChat speaker_transitions_type is set to {kind!r}. It should be one of "
                f"{list(SPEAKER_TRANSITIONS_TYPES)} (case insensitive)."
            )
        self.allowed_speaker_transitions_dict = self._transitions(kind)
        self._check_templates()
        self._check_selection_settings()
        check_visibility(self.visibility, self.agent_names)

    def _check_agents(self) -> None:
        for i, agent in enumerate(self.agents):
            if not _is_agent(agent):
                raise TypeError(
                    f"GroupChat agents must be agents; agents[{i}] is {type(agent).__name__} {agent!r}"
                )
        names = self.agent_names
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            logger.warning(
                "GroupChat has several agents named %s: selection by name always picks the first",
                duplicates,
            )

    def _transitions(self, kind: str | None) -> dict[Any, list[Any]]:
        """Who may speak after whom: from the graph given, or everyone after everyone."""
        graph = self.allowed_or_disallowed_speaker_transitions
        repeat = self.allow_repeat_speaker
        if graph is None and repeat is None:
            self.allow_repeat_speaker = repeat = True
        if graph is not None and repeat is not None:
            raise ValueError(
                "Don't provide both allowed_or_disallowed_speaker_transitions and "
                "allow_repeat_speaker in group chat: a transition graph says who may repeat. "
                "Set one of them to None."
            )
        if graph is None:
            assert repeat is not None
            return _full_transitions(self.agents, repeat)
        if kind is None:
            raise ValueError(
                "GroupChat allowed_or_disallowed_speaker_transitions is given, but "
                "speaker_transitions_type is None. Set speaker_transitions_type to 'allowed' "
                "or 'disallowed'."
            )
        if kind == "allowed":
            check_graph_validity(graph, self.agents)
            return {k: list(v) for k, v in graph.items()}
        # Checked before it is inverted: a malformed one would fail there with a bare
        # KeyError or TypeError.
        check_graph_shape(graph, self.agents, "allowed_or_disallowed_speaker_transitions")
        allowed = invert_disallowed_to_allowed(graph, self.agents)
        check_graph_validity(allowed, self.agents)
        return allowed

    def _check_templates(self) -> None:
        if not self.select_speaker_message_template:
            raise ValueError("select_speaker_message_template cannot be empty or None.")
        if self.select_speaker_prompt_template == "":
            self.select_speaker_prompt_template = None
        if not self.role_for_select_speaker_messages:
            raise ValueError("role_for_select_speaker_messages cannot be empty or None.")
        if not self.select_speaker_auto_multiple_template:
            raise ValueError("select_speaker_auto_multiple_template cannot be empty or None.")
        if not self.select_speaker_auto_none_template:
            raise ValueError("select_speaker_auto_none_template cannot be empty or None.")
        # Filled now with empty values, so a stray placeholder fails here and not in round one.
        for attr in _TEMPLATES:
            template = getattr(self, attr)
            if template is None:
                continue
            try:
                template.format(roles="", agentlist="")
            except (KeyError, IndexError, ValueError) as e:
                raise ValueError(
                    f"GroupChat {attr} cannot be filled: {type(e).__name__}: {e}. Its only "
                    "placeholders are {roles} and {agentlist}; write other braces doubled, "
                    "as {{ and }}."
                ) from e

    def _check_selection_settings(self) -> None:
        retries = self.max_retries_for_selecting_speaker
        if not isinstance(retries, int):
            raise ValueError("max_retries_for_selecting_speaker cannot be None or non-int")
        if retries < 0:
            raise ValueError(
                "max_retries_for_selecting_speaker must be greater than or equal to zero"
            )
        transforms = self.select_speaker_transform_messages
        if transforms is not None and not callable(getattr(transforms, "add_to_agent", None)):
            raise ValueError(
                "select_speaker_transform_messages must be None or MessageTransforms. (a "
                f"TransformMessages, or an object with an add_to_agent method), got "
                f"{type(transforms).__name__}"
            )
        if not isinstance(self.select_speaker_auto_verbose, bool):
            raise ValueError("select_speaker_auto_verbose cannot be None or non-bool")

    # -- members and the transcript ----------------------------------------------------------

    @property
    def agent_names(self) -> list[str]:
        return [agent.name for agent in self.agents]

    def reset(self) -> None:
        """Forget the transcript (in place)."""
        self.messages.clear()

    def append(self, message: Mapping[str, Any], speaker: Agent) -> None:
        """Add a copy of ``message`` to the transcript, named after ``speaker`` (unless it is a
        function result, whose name is the function's) and with text content."""
        checked = check_message(
            message, sending=True, own_name=speaker.name, partner_name="the group chat"
        )
        message = {"content": checked} if isinstance(checked, str) else dict(checked)
        if message.get("role") != "function":
            message["name"] = speaker.name
        message["content"] = content_text(message.get("content"))
        self.messages.append(message)

    def agent_by_name(
        self, name: str, recursive: bool = False, raise_on_name_conflict: bool = False
    ) -> Agent | None:
        """The first agent called ``name`` (also in nested group chats when ``recursive``)."""
        agents = self.nested_agents() if recursive else self.agents
        found = [agent for agent in agents if agent.name == name]
        if raise_on_name_conflict and len(found) > 1:
            raise AgentNameConflict()
        return found[0] if found else None

    def nested_agents(self) -> list[Agent]:
        """The agents, followed by those of the group chats their managers run, recursively."""
        out: list[Agent] = []
        seen: set[int] = {id(self)}

        def visit(group: GroupChat) -> None:
            out.extend(group.agents)
            for agent in group.agents:
                # A manager is known by the GroupChat it runs (this module does not import the
                # manager's: the manager depends on GroupChat, not the other way round).
                inner = getattr(agent, "groupchat", None)
                if isinstance(inner, GroupChat) and id(inner) not in seen:
                    seen.add(id(inner))
                    visit(inner)

        visit(self)
        return out

    def next_agent(self, agent: Agent, agents: list[Agent] | None = None) -> Agent:
        """The agent after ``agent`` in the group's order, among ``agents`` (default: all)."""
        if agents is None:
            agents = self.agents
        if not all(a in self.agents for a in agents):
            raise UndefinedNextAgent()
        names = self.agent_names
        index = names.index(agent.name) if agent.name in names else -1
        if agents == self.agents:
            return agents[(index + 1) % len(agents)]
        n = len(self.agents)
        for step in range(1, n + 1):
            candidate = self.agents[(index + step) % n]
            if candidate in agents:
                return candidate
        raise UndefinedNextAgent()

    # -- prompts ---------------------------------------------------------------------------

    def _participant_roles(self, agents: list[Agent] | None = None) -> str:
        roles = []
        for agent in self.agents if agents is None else agents:
            if not str(agent.description).strip():
                logger.warning(
                    "The agent '%s' has an empty description, and may not work well with GroupChat.",
                    agent.name,
                )
            roles.append(f"{agent.name}: {agent.description}".strip())
        return "\n".join(roles)

    def select_speaker_msg(self, agents: list[Agent] | None = None) -> str:
        """The selection model's system message: roles and names of ``agents``."""
        agents = self.agents if agents is None else agents
        return self.select_speaker_message_template.format(
            roles=self._participant_roles(agents), agentlist=f"{[a.name for a in agents]}"
        )

    def select_speaker_prompt(self, agents: list[Agent] | None = None) -> str | None:
        """The last message of a selection request, or None when the template is disabled."""
        if self.select_speaker_prompt_template is None:
            return None
        agents = self.agents if agents is None else agents
        return self.select_speaker_prompt_template.format(agentlist=f"{[a.name for a in agents]}")

    def introductions_msg(self, agents: list[Agent] | None = None) -> str:
        """The message introducing the participants (``send_introductions``)."""
        return f"{self.DEFAULT_INTRO_MSG}\n\n{self._participant_roles(agents)}"

    def _mentioned_agents(self, message_content: Any, agents: list[Agent] | None) -> dict[str, int]:
        return mentioned_agents(message_content, self.agents if agents is None else agents)

    # -- selection ---------------------------------------------------------------------------

    def manual_select_speaker(self, agents: list[Agent] | None = None) -> Agent | None:
        """Ask the human for the next speaker; None if they decline (empty answer or ``q``)."""
        from ..io import IOStream

        out = IOStream.get_default()
        agents = self.agents if agents is None else agents
        out.print("Please select the next speaker from the following list:")
        for i, agent in enumerate(agents, 1):
            out.print(f"{i}: {agent.name}")
        for _ in range(_MANUAL_TRIES):
            answer = out.input(
                "Enter the number of the next speaker (enter nothing or `q` to let the next "
                "agent in order speak): "
            ).strip()
            if answer in ("", "q"):
                return None
            if answer.isdigit() and 1 <= int(answer) <= len(agents):
                return agents[int(answer) - 1]
            out.print(f"Invalid input. Please enter a number between 1 and {len(agents)}.")
        out.print(f"You have tried {_MANUAL_TRIES} times. The next agent in order will speak.")
        return None

    def random_select_speaker(self, agents: list[Agent] | None = None) -> Agent:
        return random.choice(self.agents if agents is None else agents)

    async def a_select_speaker(self, last_speaker: Agent, selector: Any) -> Agent:
        """The next speaker after ``last_speaker``; ``selector`` is the manager, whose LLM
        config the "auto" method uses. ``NoEligibleSpeaker`` when nobody may speak."""
        return await self._speaker_selector.select(self, last_speaker, selector)

    def select_speaker(self, last_speaker: Agent, selector: Any) -> Agent:
        """The sync form of :meth:`a_select_speaker`."""
        return run_sync(self.a_select_speaker(last_speaker, selector))

    # -- AutoGen's private selection steps, which extensions call (see _group_compat) ---------

    _speaker_selection_transforms = property(_compat.get_transforms, _compat.set_transforms)
    _prepare_and_select_agents = _compat.prepare_and_select_agents
    _auto_select_speaker = _compat.auto_select_speaker
    a_auto_select_speaker = _compat.a_auto_select_speaker
    _validate_speaker_name = _compat.validate_speaker_name
    _process_speaker_selection_result = _compat.process_speaker_selection_result
    _finalize_speaker = _compat.finalize_speaker
    _register_client_from_config = _compat.register_client_from_config
    _register_custom_model_clients = _compat.register_custom_model_clients
    _create_internal_agents = _compat.create_internal_agents
