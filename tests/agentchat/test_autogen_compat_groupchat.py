"""AutoGen 0.2's group-chat internals that extensions call, with AutoGen's results.

Plugins register ``GroupChatManager.run_chat`` on agents of their own; extensions and
AutoGen-style tests call the private steps of speaker selection (``_prepare_and_select_agents``,
``_validate_speaker_name``, ``_process_speaker_selection_result``, ``_create_internal_agents``,
...) and of resuming (``_valid_resume_messages``, ``_process_resume_termination``). Each test
states what AutoGen 0.2 returns and checks that parley's face returns it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from parley import Agent, ChatResult, ConversableAgent, GroupChat, GroupChatManager
from parley.agentchat.contrib.capabilities import transform_messages, transforms
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

from ._group_clients import answering
from ._spec_support import VARIANTS, call


def member(name: str, **kwargs: Any) -> ConversableAgent:
    kwargs.setdefault("human_input_mode", "NEVER")
    kwargs.setdefault("llm_config", False)
    kwargs.setdefault("default_auto_reply", f"{name} speaking")
    return ConversableAgent(name, **kwargs)


def trio() -> tuple[ConversableAgent, ConversableAgent, ConversableAgent]:
    return member("Chief_Marketing_Officer"), member("Product_Manager"), member("Designer")


# -- run_chat as a reply function of any agent ------------------------------------------------


@VARIANTS
async def test_run_chat_registered_on_a_plain_agent_runs_the_group(variant: str) -> None:
    alice, bob = member("alice"), member("bob")
    group = GroupChat([alice, bob], [], max_round=3, speaker_selection_method="round_robin")
    deputy = ConversableAgent("deputy_manager", llm_config=False)
    deputy.register_reply(
        Agent,
        GroupChatManager.run_chat if variant == "sync" else GroupChatManager.a_run_chat,
        config=group,
        reset_config=GroupChat.reset,
    )
    with IOStream.set_default(IOScripted()):
        await call(variant, alice, "initiate_chat", deputy, message="hello")
    assert [(m["name"], m["content"]) for m in group.messages] == [
        ("alice", "hello"),
        ("bob", "bob speaking"),
        ("alice", "alice speaking"),
    ]
    # The deputy never answers the initiator: its history with it holds what alice sent and
    # the broadcast of bob's message, as with a real manager.
    assert [(m["role"], m["content"]) for m in alice.chat_messages[deputy]] == [
        ("assistant", "hello"),
        ("user", "bob speaking"),
        ("assistant", "alice speaking"),
    ]


@VARIANTS
async def test_run_chat_called_directly_returns_true_none(variant: str) -> None:
    alice, bob = member("alice"), member("bob")
    group = GroupChat([alice, bob], [], max_round=2, speaker_selection_method="round_robin")
    manager = GroupChatManager(group, silent=True)
    opening = [{"content": "start", "role": "user"}]
    result = await call(variant, manager, "run_chat", messages=opening, sender=alice, config=group)
    assert result == (True, None)
    assert [m["name"] for m in group.messages] == ["alice", "bob"]
    assert manager.last_speaker is bob


def test_run_chat_without_a_group_chat_says_so() -> None:
    alice = member("alice")
    host = ConversableAgent("host", llm_config=False)
    with pytest.raises(TypeError, match="config=groupchat"):
        GroupChatManager.run_chat(host, messages=[{"content": "x"}], sender=alice)


# -- _prepare_and_select_agents -----------------------------------------------------------------


def test_prepare_round_robin_picks_the_next_agent() -> None:
    cmo, pm, designer = trio()
    group = GroupChat([cmo, pm, designer], [], speaker_selection_method="round_robin")
    picked, eligible, messages = group._prepare_and_select_agents(pm)
    assert picked is designer
    assert eligible == [cmo, pm, designer]
    assert messages is None


def test_prepare_auto_leaves_the_choice_and_blanks_the_pending_call() -> None:
    cmo, pm, designer = trio()
    pm.register_function({"lookup": lambda: "x"})
    designer.register_function({"lookup": lambda: "x"})
    call_message = {
        "role": "assistant",
        "content": None,
        "name": "Chief_Marketing_Officer",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
        ],
    }
    transcript = [{"role": "user", "content": "begin", "name": "Designer"}, call_message]
    group = GroupChat([cmo, pm, designer], list(transcript))
    picked, eligible, messages = group._prepare_and_select_agents(cmo)
    # Two agents can run the call: the model chooses between them.
    assert picked is None
    assert eligible == [pm, designer]
    assert messages is not None
    assert [m.get("content") for m in messages] == ["begin", ""]
    assert not messages[-1].get("tool_calls")
    # The transcript itself keeps the call.
    assert group.messages[-1]["tool_calls"] == call_message["tool_calls"]


def test_prepare_with_a_call_nobody_can_run_is_an_error() -> None:
    first, second = member("first"), member("second")
    group = GroupChat([first, second], [])
    group.messages = [
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "get_random_number", "arguments": "{}"},
        }
    ]
    with pytest.raises(ValueError, match="No agent can execute the function get_random_number"):
        group._prepare_and_select_agents(second)


def test_prepare_returns_the_only_agent_the_graph_allows() -> None:
    cmo, pm, designer = trio()
    graph = {cmo: [pm], pm: [designer, cmo], designer: [cmo]}
    group = GroupChat(
        [cmo, pm, designer],
        [],
        allowed_or_disallowed_speaker_transitions=graph,
        speaker_transitions_type="allowed",
    )
    assert group._prepare_and_select_agents(cmo) == (pm, [pm], None)


def test_prepare_takes_a_custom_selector_s_agent() -> None:
    cmo, pm, designer = trio()
    group = GroupChat([cmo, pm, designer], [], speaker_selection_method=lambda last, g: cmo)
    picked, _, messages = group._prepare_and_select_agents(designer)
    assert picked is cmo
    assert messages is None


# -- _validate_speaker_name ---------------------------------------------------------------------


def selection_chat(answer: str) -> list[dict[str, Any]]:
    return [
        {"content": "Product_Manager presents first.", "name": "Chair", "role": "assistant"},
        {"content": answer, "role": "user"},
    ]


def test_validate_single_name_marks_the_selection() -> None:
    cmo, pm, designer = trio()
    group = GroupChat([cmo, pm, designer], [])
    messages = selection_chat("Product_Manager should go next")
    assert group._validate_speaker_name(None, messages, None, None, 2, 1, [cmo, pm]) == (
        True,
        None,
    )
    assert messages[-1] == {"role": "user", "content": "[AGENT SELECTED]Product_Manager"}


@pytest.mark.parametrize(
    ("answer", "template"),
    [
        ("Product_Manager, then Chief_Marketing_Officer", "select_speaker_auto_multiple_template"),
        ("the PM, I think", "select_speaker_auto_none_template"),
    ],
)
def test_validate_asks_again_while_attempts_are_left(answer: str, template: str) -> None:
    cmo, pm, designer = trio()
    group = GroupChat(
        [cmo, pm, designer],
        [],
        select_speaker_auto_multiple_template="Several names; pick one of {agentlist}.",
        select_speaker_auto_none_template="No name; pick one of {agentlist}.",
        role_for_select_speaker_messages="user",
    )
    messages = selection_chat(answer)
    before = list(messages)
    result = group._validate_speaker_name(None, messages, None, None, 1, 2, [cmo, pm])
    assert result == (
        True,
        {
            "content": getattr(group, template).format(
                agentlist="['Chief_Marketing_Officer', 'Product_Manager']"
            ),
            "name": "checking_agent",
            "override_role": "user",
        },
    )
    assert messages == before  # nothing recorded while the model may still answer


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("Product_Manager, then Chief_Marketing_Officer", "returned multiple names"),
        ("the PM, I think", "did not include any agent names"),
    ],
)
def test_validate_records_the_failure_after_the_last_attempt(answer: str, why: str) -> None:
    cmo, pm, designer = trio()
    group = GroupChat([cmo, pm, designer], [])
    messages = selection_chat(answer)
    assert group._validate_speaker_name(None, messages, None, None, 0, 3, None) == (True, None)
    assert messages[-1] == {
        "role": "user",
        "content": f"[AGENT SELECTION FAILED]Select speaker attempt #3 of 3 failed as it {why}.",
    }


# -- _process_speaker_selection_result and _finalize_speaker ---------------------------------------


def outcome(last: str) -> ChatResult:
    return ChatResult(
        chat_history=[
            {"content": "who next?", "role": "assistant"},
            {"content": "Designer", "role": "user"},
            {"content": last, "role": "user"},
        ]
    )


def test_selection_result_gives_the_marked_agent() -> None:
    cmo, pm, designer = trio()
    group = GroupChat([cmo, pm, designer], [])
    result = outcome("[AGENT SELECTED]Designer")
    assert group._process_speaker_selection_result(result, cmo, None) is designer


@pytest.mark.parametrize(
    "last",
    [
        "[AGENT SELECTION FAILED]Select speaker attempt #3 of 3 failed as it returned nothing.",
        "no marker at all",
    ],
)
def test_selection_result_without_a_selection_gives_the_next_agent(last: str) -> None:
    cmo, pm, designer = trio()
    group = GroupChat([cmo, pm, designer], [])
    assert group._process_speaker_selection_result(outcome(last), pm, None) is designer
    # ... the next one among the eligible agents, wrapping round
    assert group._process_speaker_selection_result(outcome(last), designer, [cmo, pm]) is cmo


def test_selection_result_of_an_empty_chat_is_none() -> None:
    cmo, pm, designer = trio()
    group = GroupChat([cmo, pm, designer], [])
    assert group._process_speaker_selection_result(ChatResult(chat_history=[]), cmo, None) is None


def test_finalize_speaker() -> None:
    cmo, pm, designer = trio()
    group = GroupChat([cmo, pm, designer], [])
    assert group._finalize_speaker(cmo, True, "I pick Designer.", None) is designer
    # no answer at all, or one naming nobody or several: the next agent in order
    assert group._finalize_speaker(cmo, False, "", None) is pm
    assert group._finalize_speaker(cmo, True, "nobody", None) is pm
    assert (
        group._finalize_speaker(pm, True, "Designer or Chief_Marketing_Officer", None) is designer
    )


# -- the internal selection agents ----------------------------------------------------------------


def test_internal_agents_run_autogen_s_selection_protocol(fake_llm: FakeLLMServer) -> None:
    """The pieces compose as AutoGen's private selection chat did: the checker starts with the
    prompt, judges each answer, asks again, and the result names the speaker."""
    cmo, pm, designer = trio()
    group = GroupChat(
        [cmo, pm, designer], [{"content": "kick off", "name": "Designer", "role": "user"}]
    )
    manager = GroupChatManager(group, llm_config=fake_llm.llm_config())
    fake_llm.add_reply("Maybe the marketing lead?").add_reply("Chief_Marketing_Officer")
    agents = [cmo, pm]
    attempts = 1 + group.max_retries_for_selecting_speaker
    state = {"attempt": 0}

    def validate(recipient: Any, messages: Any, sender: Any, config: Any) -> Any:
        state["attempt"] += 1
        left = attempts - state["attempt"]
        return group._validate_speaker_name(
            recipient, messages, sender, config, left, state["attempt"], agents
        )

    _, _, history = group._prepare_and_select_agents(designer)
    assert history is not None
    checking, selecting = group._create_internal_agents(
        agents, attempts, history, validate, manager
    )
    assert (checking.name, selecting.name) == ("checking_agent", "speaker_selection_agent")
    assert selecting.system_message == group.select_speaker_msg(agents)
    assert selecting.llm_config == manager.llm_config
    assert selecting.chat_messages[checking] == history
    result = checking.initiate_chat(
        selecting,
        message={"content": group.select_speaker_prompt(agents), "override_role": "system"},
        max_turns=2 * attempts,
        clear_history=False,
        silent=True,
    )
    assert group._process_speaker_selection_result(result, designer, agents) is cmo
    # The second request carried the "no name" follow-up after the first answer.
    second = fake_llm.requests[1]["messages"]
    assert second[0] == {"role": "system", "content": group.select_speaker_msg(agents)}
    assert second[-2]["content"] == "Maybe the marketing lead?"
    assert second[-1]["content"] == group.select_speaker_auto_none_template.format(
        agentlist="['Chief_Marketing_Officer', 'Product_Manager']"
    )


EchoClient = answering("EchoClient", "Product_Manager")

OWN_CONFIG = {"config_list": [{"model": "echo", "model_client_cls": "EchoClient"}]}


def test_internal_selection_agent_gets_the_custom_client() -> None:
    group = GroupChat(
        [],
        [],
        select_speaker_auto_llm_config=OWN_CONFIG,
        select_speaker_auto_model_client_cls=[EchoClient],
    )
    _, selecting = group._create_internal_agents(
        agents=[], max_attempts=3, messages=[], validate_speaker_name=lambda *a: (True, None)
    )
    assert selecting.llm_config is not False
    assert selecting.llm_config["config_list"][0]["model"] == "echo"
    reply = selecting.generate_reply(messages=[{"role": "user", "content": "who?"}])
    assert reply == "Product_Manager"  # the custom client answered


@pytest.mark.parametrize(
    ("classes", "error", "match"),
    [
        (None, ValueError, "EchoClient"),
        ([type("OtherClient", (EchoClient,), {})], ValueError, "EchoClient"),
    ],
)
def test_register_client_from_config_errors(classes: Any, error: type, match: str) -> None:
    group = GroupChat([], [], select_speaker_auto_model_client_cls=classes)
    target = ConversableAgent("t", llm_config=OWN_CONFIG)
    with pytest.raises(error, match=match):
        group._register_client_from_config(target, OWN_CONFIG["config_list"][0])


def test_register_client_from_config_with_two_classes_of_one_name() -> None:
    other = type("EchoClient", (EchoClient,), {})
    group = GroupChat([], [], select_speaker_auto_model_client_cls=[EchoClient, other])
    target = ConversableAgent("t", llm_config=OWN_CONFIG)
    with pytest.raises(RuntimeError, match="More than one unique 'model_client_cls'"):
        group._register_client_from_config(target, OWN_CONFIG["config_list"][0])


def test_register_custom_model_clients_without_an_own_config_does_nothing() -> None:
    group = GroupChat([], [], select_speaker_auto_model_client_cls=EchoClient)
    target = ConversableAgent("t", llm_config=OWN_CONFIG)
    group._register_custom_model_clients(target)  # the group has no selection config
    assert target.client.pending_model_clients() == ["EchoClient"]
    group.select_speaker_auto_llm_config = OWN_CONFIG
    group._register_custom_model_clients(target)
    assert target.client.pending_model_clients() == []


# -- _auto_select_speaker -------------------------------------------------------------------------


@VARIANTS
async def test_auto_select_speaker_asks_the_manager_s_model(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    cmo, pm, designer = trio()
    group = GroupChat([cmo, pm, designer], [{"content": "hi", "name": "Designer", "role": "user"}])
    manager = GroupChatManager(group, llm_config=fake_llm.llm_config())
    fake_llm.add_reply("Product_Manager")
    if variant == "sync":
        picked = await asyncio.to_thread(group._auto_select_speaker, designer, manager, None, None)
    else:
        picked = await group.a_auto_select_speaker(designer, manager, None, None)
    assert picked is pm
    assert fake_llm.requests[0]["messages"][0]["content"] == group.select_speaker_msg()


def test_auto_select_speaker_falls_back_to_the_next_agent() -> None:
    cmo, pm, designer = trio()
    group = GroupChat([cmo, pm, designer], [{"content": "hi", "name": "Designer", "role": "user"}])
    manager = GroupChatManager(group, llm_config=False)
    assert group._auto_select_speaker(designer, manager, None, None) is cmo
    assert group._auto_select_speaker(cmo, manager, None, [cmo, designer]) is designer


# -- select_speaker_transform_messages --------------------------------------------------------------


def test_speaker_selection_transforms_attribute() -> None:
    a, b = member("a"), member("b")
    limiter = transform_messages.TransformMessages(
        transforms=[transforms.MessageHistoryLimiter(max_messages=10)]
    )
    assert GroupChat([a, b], [])._speaker_selection_transforms is None
    group = GroupChat([a, b], [], select_speaker_transform_messages=limiter)
    assert group._speaker_selection_transforms is limiter
    with pytest.raises(
        ValueError, match="select_speaker_transform_messages must be None or MessageTransforms"
    ):
        GroupChat(
            [a, b],
            [],
            select_speaker_transform_messages=[transforms.MessageHistoryLimiter(max_messages=1)],
        )


# -- resume internals ----------------------------------------------------------------------------


def resumable() -> GroupChatManager:
    coder, tester = member("Coder"), member("Tester")
    return GroupChatManager(GroupChat([coder, tester], []), name="boss")


def test_valid_resume_messages() -> None:
    manager = resumable()
    with pytest.raises(ValueError, match="no messages"):
        manager._valid_resume_messages([])
    with pytest.raises(ValueError, match="Chairperson"):
        manager._valid_resume_messages(
            [{"content": "hi", "role": "system"}, {"content": "x", "name": "Chairperson"}]
        )
    # members, the admin and the manager itself may appear
    for name in ("Coder", "Admin", "boss"):
        assert manager._valid_resume_messages([{"content": "x", "name": name}]) is None


def test_process_resume_termination_edits_the_last_message() -> None:
    manager = resumable()
    messages = [{"content": "start"}, {"content": "done. TERMINATE now", "name": "Coder"}]
    manager._process_resume_termination("TERMINATE", messages)
    assert messages[-1]["content"] == "done.  now"
    assert messages[0]["content"] == "start"
    manager._process_resume_termination(lambda text: text.upper(), messages)
    assert messages[-1]["content"] == "DONE.  NOW"
    manager._process_resume_termination("ABSENT", messages)
    assert messages[-1]["content"] == "DONE.  NOW"


def test_process_resume_termination_warns_when_the_chat_would_end(
    caplog: pytest.LogCaptureFixture,
) -> None:
    manager = resumable()
    manager._is_termination_msg = lambda m: "TERMINATE" in (m.get("content") or "")
    messages = [{"content": "all done TERMINATE", "name": "Coder"}]
    with caplog.at_level(logging.WARNING):
        manager._process_resume_termination("THE-END", messages)
    assert "Last message meets termination criteria and this may terminate the chat" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        manager._process_resume_termination("TERMINATE", messages)
    assert "termination criteria" not in caplog.text


# -- reflection summary of a group chat -------------------------------------------------------------


@VARIANTS
async def test_reflection_summary_of_the_group_uses_summary_args(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    alice, bob = member("alice"), member("bob")
    group = GroupChat([alice, bob], [], max_round=3, speaker_selection_method="round_robin")
    manager = GroupChatManager(group, llm_config=fake_llm.llm_config(), silent=True)
    fake_llm.add_reply("They greeted each other.")
    result = await call(
        variant,
        alice,
        "initiate_chat",
        manager,
        message="hello",
        summary_method="reflection_with_llm",
        summary_args={"summary_prompt": "Sum it up.", "summary_role": "user"},
    )
    assert result.summary == "They greeted each other."
    sent = fake_llm.requests[-1]["messages"]
    # the whole group transcript, then the prompt with the role asked for
    assert [m["content"] for m in sent[-4:-1]] == ["hello", "bob speaking", "alice speaking"]
    assert sent[-1] == {"role": "user", "content": "Sum it up."}


# -- a subclass's own steps are used by the rounds ---------------------------------------------------


class LastInLine(GroupChat):
    """AutoGen-style extension: its own first step always picks the last agent."""

    def _prepare_and_select_agents(self, last_speaker: Agent) -> Any:
        _, eligible, messages = super()._prepare_and_select_agents(last_speaker)
        return self.agents[-1], eligible, messages


class AlwaysFirst(GroupChat):
    """AutoGen-style extension: its "auto" step (sync) always picks the first agent."""

    def _auto_select_speaker(
        self, last_speaker: Agent, selector: Any, messages: Any, agents: Any
    ) -> Agent:
        assert messages is not None  # the transcript the model would have read
        return self.agents[0]


class AlwaysSecond(GroupChat):
    """The same with the async "auto" step."""

    async def a_auto_select_speaker(
        self, last_speaker: Agent, selector: Any, messages: Any, agents: Any
    ) -> Agent:
        return self.agents[1]


@VARIANTS
@pytest.mark.parametrize(
    ("cls", "expected"),
    [
        (LastInLine, ["Designer", "Designer", "Designer"]),
        (AlwaysFirst, ["Chief_Marketing_Officer", "Chief_Marketing_Officer"]),
        (AlwaysSecond, ["Product_Manager", "Product_Manager"]),
    ],
)
async def test_rounds_use_a_subclass_s_selection_steps(
    variant: str, cls: type[GroupChat], expected: list[str]
) -> None:
    cmo, pm, designer = trio()
    user = member("user")
    group = cls([cmo, pm, designer], [], max_round=len(expected) + 1)
    # No model anywhere: without the overrides "auto" would take turns in order.
    manager = GroupChatManager(group, llm_config=False, silent=True)
    await call(variant, user, "initiate_chat", manager, message="go")
    assert [m["name"] for m in group.messages] == ["user", *expected]
