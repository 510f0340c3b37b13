"""GroupChat: construction checks, its methods, and speaker selection (callable, function-call
filter, repeat rule, transition graph, then the "manual", "round_robin", "random" or "auto" method)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from parley import ConversableAgent, GroupChat, GroupChatManager
from parley.agentchat.groupchat import GroupChat as GroupChatFromModule
from parley.exceptions import AgentNameConflict, NoEligibleSpeaker, UndefinedNextAgent
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

from ._group_clients import answering
from ._spec_support import VARIANTS, call

SELECTING = "You coordinate a conversation"


def agent(name: str, **kwargs: Any) -> ConversableAgent:
    kwargs.setdefault("human_input_mode", "NEVER")
    kwargs.setdefault("description", f"{name} does {name}'s job.")
    return ConversableAgent(name, **kwargs)


def trio() -> tuple[ConversableAgent, ConversableAgent, ConversableAgent]:
    return agent("alice"), agent("bob"), agent("carol")


def is_selection(request: dict[str, Any]) -> bool:
    return str(request["messages"][0]["content"]).startswith(SELECTING)


def selector(server: FakeLLMServer, answers: list[str] | None = None) -> GroupChatManager:
    """Stand-in for the manager in direct select_speaker calls."""
    queue = list(answers or [])

    def respond(request: dict[str, Any]) -> str:
        assert is_selection(request)
        return queue.pop(0)

    server.responder = respond
    return GroupChatManager(GroupChat([], []), llm_config=server.llm_config())


def said(name: str, content: Any = "hi", **extra: Any) -> dict[str, Any]:
    return {"role": "user", "name": name, "content": content, **extra}


# -- construction --------------------------------------------------------------------------


def test_agents_and_messages_are_required() -> None:
    with pytest.raises(TypeError):
        GroupChat(agents=list(trio()))  # type: ignore[call-arg]
    assert GroupChatFromModule is GroupChat


def test_defaults_allow_everyone_after_everyone() -> None:
    a, b, c = trio()
    group = GroupChat([a, b, c], [])
    assert group.max_round == 10
    assert group.admin_name == "Admin"
    assert group.speaker_selection_method == "auto"
    assert group.allow_repeat_speaker is True
    assert group.allowed_speaker_transitions_dict == {a: [a, b, c], b: [a, b, c], c: [a, b, c]}


def test_allow_repeat_speaker_false_and_list() -> None:
    a, b, c = trio()
    assert GroupChat(
        [a, b, c], [], allow_repeat_speaker=False
    ).allowed_speaker_transitions_dict == {
        a: [b, c],
        b: [a, c],
        c: [a, b],
    }
    group = GroupChat([a, b, c], [], allow_repeat_speaker=[b])
    assert group.allowed_speaker_transitions_dict[b] == [a, b, c]
    assert group.allowed_speaker_transitions_dict[a] == [b, c]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"allow_repeat_speaker": "yes"}, "allow_repeat_speaker"),
        ({"speaker_transitions_type": "maybe"}, "speaker_transitions_type"),
        ({"select_speaker_message_template": ""}, "select_speaker_message_template"),
        ({"role_for_select_speaker_messages": ""}, "role_for_select_speaker_messages"),
        ({"select_speaker_auto_multiple_template": None}, "multiple_template"),
        ({"select_speaker_auto_none_template": ""}, "none_template"),
        ({"max_retries_for_selecting_speaker": None}, "max_retries"),
        ({"max_retries_for_selecting_speaker": -1}, "max_retries"),
        ({"select_speaker_auto_verbose": None}, "verbose"),
        ({"select_speaker_transform_messages": object()}, "TransformMessages"),
        ({"select_speaker_prompt_template": "pick {agent}"}, r"\{roles\} and \{agentlist\}"),
    ],
)
def test_bad_settings_are_refused_at_construction(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        GroupChat(list(trio()), [], **kwargs)


def test_non_agents_are_refused() -> None:
    with pytest.raises(TypeError, match=r"agents\[1\] is str"):
        GroupChat([agent("a"), "b"], [])  # type: ignore[list-item]


def test_an_empty_prompt_template_disables_the_prompt() -> None:
    group = GroupChat(list(trio()), [], select_speaker_prompt_template="")
    assert group.select_speaker_prompt_template is None
    assert group.select_speaker_prompt() is None


def test_an_invalid_method_is_refused_only_at_the_first_selection(fake_llm: FakeLLMServer) -> None:
    a, b, c = trio()
    group = GroupChat([a, b, c], [said("alice")], speaker_selection_method="foo")
    with pytest.raises(ValueError, match="speaker_selection_method"):
        group.select_speaker(a, selector(fake_llm))


def test_the_transitions_type_is_case_insensitive() -> None:
    a, b, c = trio()
    group = GroupChat(
        [a, b, c],
        [],
        allowed_or_disallowed_speaker_transitions={a: [b], b: [c], c: [a]},
        speaker_transitions_type="ALLOWED",
    )
    assert group.speaker_transitions_type == "allowed"
    assert group.allowed_speaker_transitions_dict == {a: [b], b: [c], c: [a]}


def test_a_graph_and_allow_repeat_speaker_are_exclusive() -> None:
    a, b, c = trio()
    with pytest.raises(ValueError, match="Don't provide both"):
        GroupChat(
            [a, b, c],
            [],
            allow_repeat_speaker=False,
            allowed_or_disallowed_speaker_transitions={a: [b]},
            speaker_transitions_type="allowed",
        )


def test_a_graph_needs_its_type() -> None:
    a, b, c = trio()
    with pytest.raises(ValueError, match="speaker_transitions_type is None"):
        GroupChat([a, b, c], [], allowed_or_disallowed_speaker_transitions={a: [b]})


@pytest.mark.parametrize(
    ("graph", "match"),
    [
        ("alice->bob", "must be a dict"),
        ({"a": "b"}, "must be a list"),
        ({"a": ["bob"]}, r"must be agents, got str 'bob' \(use the agent object"),
        ({"outsider": ["a"]}, "'outsider' as a key, but it is not a member"),
    ],
)
def test_a_malformed_graph_is_refused_naming_the_problem(graph: Any, match: str) -> None:
    a, b, c = trio()
    outsider = agent("outsider")
    by_name = {"a": a, "b": b, "outsider": outsider}
    if isinstance(graph, dict):
        graph = {
            by_name[k]: v if isinstance(v, str) else [by_name.get(t, t) for t in v]
            for k, v in graph.items()
        }
    with pytest.raises(ValueError, match=match):
        GroupChat(
            [a, b, c],
            [],
            allowed_or_disallowed_speaker_transitions=graph,
            speaker_transitions_type="allowed",
        )


def test_a_disallowed_graph_is_inverted_with_self_loops() -> None:
    a, b, c = trio()
    group = GroupChat(
        [a, b, c],
        [],
        allowed_or_disallowed_speaker_transitions={a: [b, a], b: [c]},
        speaker_transitions_type="disallowed",
    )
    assert group.allowed_speaker_transitions_dict == {a: [c], b: [a, b], c: [a, b, c]}


def test_suspicious_graphs_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    a, b, c = trio()
    with caplog.at_level(logging.WARNING):
        GroupChat(
            [a, b, c],
            [],
            allowed_or_disallowed_speaker_transitions={a: [b, b]},
            speaker_transitions_type="allowed",
        )
    # AutoGen's texts, through the root logger (parley.graph_utils is the one check).
    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        (
            "root",
            "Warning: There are isolated agent nodes, there are not incoming nor outgoing "
            "edges. Isolated agents: ['carol']",
        ),
        (
            "root",
            "Warning: The set of agents in allowed_speaker_transitions do not match agents. "
            "Offending agents: ['carol']",
        ),
        (
            "root",
            "Agent 'alice' has duplicate elements: ['bob']. Please remove duplicates manually.",
        ),
    ]


def test_a_manager_may_not_call_tools(fake_llm: FakeLLMServer) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    with pytest.raises(ValueError, match="not allowed to make function/tool calls"):
        GroupChatManager(GroupChat(list(trio()), []), llm_config=fake_llm.llm_config(tools=tools))


def test_manager_defaults() -> None:
    group = GroupChat(list(trio()), [])
    manager = GroupChatManager(group, silent=True)
    assert manager.name == "chat_manager"
    assert manager.groupchat is group
    assert manager.silent is None  # the private flag only governs the group rounds
    assert manager.system_message == "Group chat manager."
    assert manager.last_speaker is None
    assert manager.chat_messages_for_summary(agent("x")) is group.messages


def test_the_group_run_is_a_reply_function_that_can_be_replaced() -> None:
    a, b, c = trio()
    group = GroupChat([a, b, c], [], speaker_selection_method="round_robin")
    manager = GroupChatManager(group)
    group.max_round = 3  # the reply function's config is the live group, not a copy
    configs: list[Any] = []

    def instead(
        recipient: Any, messages: Any = None, sender: Any = None, config: Any = None
    ) -> Any:
        configs.append(config)
        return True, "handled by the replacement"

    manager.replace_reply_func(GroupChatManager.run_chat, instead)
    with IOStream.set_default(IOScripted()):
        result = agent("user").initiate_chat(manager, message="hi", max_turns=1)
    assert configs == [group]
    assert configs[0].max_round == 3
    assert group.messages == []  # the rounds did not run
    assert result.chat_history[-1]["content"] == "handled by the replacement"


def test_the_public_home_is_the_groupchat_module() -> None:
    import typing

    assert GroupChat.__module__ == GroupChatManager.__module__ == "parley.agentchat.groupchat"
    hints = typing.get_type_hints(GroupChat)  # the field types resolve from there too
    assert hints["max_round"] is int
    assert hints["messages"] == list[dict[str, Any]]


def test_autogens_lists_of_accepted_values_are_kept() -> None:
    assert GroupChat._VALID_SPEAKER_SELECTION_METHODS == ["auto", "manual", "random", "round_robin"]
    assert GroupChat._VALID_SPEAKER_TRANSITIONS_TYPE == ["allowed", "disallowed", None]


# -- methods -------------------------------------------------------------------------------


def test_append_stores_a_named_text_copy() -> None:
    a, b, c = trio()
    group = GroupChat([a, b, c], [])
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "see "},
            {"type": "image_url", "image_url": {"url": "x"}},
        ],
    }
    group.append(message, b)
    assert group.messages == [{"role": "user", "content": "see <image>", "name": "bob"}]
    assert "name" not in message
    assert isinstance(message["content"], list)
    group.append({"role": "function", "name": "add", "content": None}, b)
    assert group.messages[-1] == {"role": "function", "name": "add", "content": ""}
    group.reset()
    assert group.messages == []


def test_agent_by_name_and_nested_agents() -> None:
    a, b, _c = trio()
    inner_x, inner_y = agent("x"), agent("y")
    inner = GroupChatManager(GroupChat([inner_x, inner_y], []), name="inner")
    group = GroupChat([a, b, inner], [])
    assert group.agent_names == ["alice", "bob", "inner"]
    assert group.agent_by_name("bob") is b
    assert group.agent_by_name("x") is None
    assert group.agent_by_name("x", recursive=True) is inner_x
    assert group.nested_agents() == [a, b, inner, inner_x, inner_y]
    twin = agent("bob")
    dup = GroupChat([a, b, twin], [])
    assert dup.agent_by_name("bob") is b
    with pytest.raises(AgentNameConflict):
        dup.agent_by_name("bob", raise_on_name_conflict=True)


def test_next_agent() -> None:
    a, b, c = trio()
    group = GroupChat([a, b, c], [])
    assert group.next_agent(a) is b
    assert group.next_agent(c) is a
    assert group.next_agent(agent("outsider")) is a
    assert group.next_agent(a, [a, c]) is c
    assert group.next_agent(c, [b]) is b
    with pytest.raises(UndefinedNextAgent):
        group.next_agent(a, [agent("stranger")])
    with pytest.raises(UndefinedNextAgent):
        group.next_agent(a, [])


def test_prompts_are_filled() -> None:
    a, b, c = trio()
    group = GroupChat([a, b, c], [])
    message = group.select_speaker_msg([a, c])
    assert "alice: alice does alice's job.\ncarol: carol does carol's job." in message
    assert "['alice', 'carol']" in message
    assert "['alice', 'bob', 'carol']" in str(group.select_speaker_prompt())
    intro = group.introductions_msg()
    assert intro.startswith(GroupChat.DEFAULT_INTRO_MSG + "\n\n")
    assert intro.endswith("carol: carol does carol's job.")
    custom = GroupChat([a, b], [], select_speaker_message_template="{agentlist} {{literal}}")
    assert custom.select_speaker_msg() == "['alice', 'bob'] {literal}"


def test_an_empty_description_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    group = GroupChat([agent("a", description=" "), agent("b")], [])
    with caplog.at_level(logging.WARNING):
        group.select_speaker_msg()
    assert "'a' has an empty description" in caplog.text


def test_mentioned_agents() -> None:
    agents = [agent("data_analyst"), agent("coder"), agent("coder_2")]
    group = GroupChat(agents, [])
    text = "coder, then data analyst, data\\_analyst and data_analyst; not coders or coder_2x"
    assert group._mentioned_agents(text, None) == {"data_analyst": 3, "coder": 1}
    assert group._mentioned_agents({"content": "coder_2"}, None) == {"coder_2": 1}


# -- selection -----------------------------------------------------------------------------


@VARIANTS
async def test_round_robin(variant: str) -> None:
    a, b, c = trio()
    group = GroupChat([a, b, c], [said("alice")], speaker_selection_method="round_robin")
    manager = GroupChatManager(group)
    assert await call(variant, group, "select_speaker", a, manager) is b
    assert await call(variant, group, "select_speaker", c, manager) is a
    assert await call(variant, group, "select_speaker", agent("outsider"), manager) is a


async def test_method_names_are_case_insensitive() -> None:
    a, b, c = trio()
    group = GroupChat([a, b, c], [said("alice")], speaker_selection_method="Round_Robin")
    assert await group.a_select_speaker(a, GroupChatManager(group)) is b


async def test_random_respects_the_repeat_rule() -> None:
    a, b, c = trio()
    group = GroupChat(
        [a, b, c], [said("alice")], speaker_selection_method="random", allow_repeat_speaker=False
    )
    manager = GroupChatManager(group)
    picks = {await group.a_select_speaker(a, manager) for _ in range(40)}
    assert picks == {b, c}


async def test_a_group_of_one_cannot_select() -> None:
    a = agent("alice")
    group = GroupChat([a], [said("alice")], speaker_selection_method="round_robin")
    with pytest.raises(ValueError, match="underpopulated"):
        await group.a_select_speaker(a, GroupChatManager(group))


@VARIANTS
async def test_manual_selection(variant: str) -> None:
    a, b, c = trio()
    group = GroupChat([a, b, c], [said("alice")], speaker_selection_method="manual")
    manager = GroupChatManager(group)
    io = IOScripted(["3", "", "x", "0", "9"])
    with IOStream.set_default(io):
        assert await call(variant, group, "select_speaker", a, manager) is c
        assert await call(variant, group, "select_speaker", a, manager) is b  # next in order
        assert await call(variant, group, "select_speaker", c, manager) is a  # 3 bad answers
    assert "1: alice\n" in io.text
    assert "3: carol\n" in io.text
    assert io.text.count("Invalid input") == 3
    assert len(io.prompts) == 5


async def test_manual_fallback_respects_the_graph() -> None:
    a, b, c = trio()
    group = GroupChat(
        [a, b, c],
        [said("alice")],
        speaker_selection_method="Manual",
        allowed_or_disallowed_speaker_transitions={a: [c, b], b: [a], c: [a]},
        speaker_transitions_type="allowed",
    )
    with IOStream.set_default(IOScripted(["q"])):
        assert await group.a_select_speaker(b, GroupChatManager(group)) is a
    with IOStream.set_default(IOScripted([""])):
        assert await group.a_select_speaker(a, GroupChatManager(group)) is b


@VARIANTS
async def test_a_callable_method(variant: str) -> None:
    a, b, c = trio()
    seen: list[Any] = []

    def choose(last: Any, group: GroupChat) -> Any:
        seen.append((last.name, len(group.messages)))
        return {"alice": c, "bob": "round_robin", "carol": None}[last.name]

    group = GroupChat([a, b, c], [said("alice")], speaker_selection_method=choose)
    manager = GroupChatManager(group)
    assert await call(variant, group, "select_speaker", a, manager) is c
    assert await call(variant, group, "select_speaker", b, manager) is c
    with pytest.raises(NoEligibleSpeaker):
        await call(variant, group, "select_speaker", c, manager)
    assert seen == [("alice", 1), ("bob", 1), ("carol", 1)]


@pytest.mark.parametrize(("returned", "match"), [("outsider", "not in the group"), (7, "int")])
async def test_a_callable_method_returning_nonsense(returned: Any, match: str) -> None:
    a, b, c = trio()
    value = agent("outsider") if returned == "outsider" else returned
    group = GroupChat([a, b, c], [said("alice")], speaker_selection_method=lambda *_: value)
    with pytest.raises(ValueError, match=match):
        await group.a_select_speaker(a, GroupChatManager(group))


async def test_an_async_callable_method_is_awaited() -> None:
    a, b, c = trio()

    async def choose(last: Any, group: GroupChat) -> Any:
        return b

    group = GroupChat([a, b, c], [said("alice")], speaker_selection_method=choose)
    assert await group.a_select_speaker(a, GroupChatManager(group)) is b


# -- transitions -----------------------------------------------------------------------------


async def test_the_graph_decides_when_one_agent_is_eligible(fake_llm: FakeLLMServer) -> None:
    a, b, c = trio()
    group = GroupChat(
        [a, b, c],
        [said("alice")],
        allowed_or_disallowed_speaker_transitions={a: [c], b: [a, c], c: [a]},
        speaker_transitions_type="allowed",
    )
    manager = selector(fake_llm, ["alice"])
    assert await group.a_select_speaker(a, manager) is c
    assert fake_llm.requests == []  # no need to ask the model
    assert await group.a_select_speaker(b, manager) is a
    request = fake_llm.requests[0]
    assert "['alice', 'carol']" in request["messages"][0]["content"]


async def test_a_sink_ends_the_selection() -> None:
    a, b, c = trio()
    group = GroupChat(
        [a, b, c],
        [said("bob")],
        allowed_or_disallowed_speaker_transitions={a: [b]},
        speaker_transitions_type="allowed",
    )
    with pytest.raises(NoEligibleSpeaker, match="bob"):
        await group.a_select_speaker(b, GroupChatManager(group))


async def test_an_outsider_is_followed_by_anyone_in_the_graph() -> None:
    a, b, c = trio()
    group = GroupChat(
        [a, b, c],
        [said("user")],
        speaker_selection_method="round_robin",
        allowed_or_disallowed_speaker_transitions={a: [b], b: [c], c: [a]},
        speaker_transitions_type="allowed",
    )
    assert await group.a_select_speaker(agent("user"), GroupChatManager(group)) is a


# -- auto ------------------------------------------------------------------------------------


@VARIANTS
async def test_auto_asks_the_model(variant: str, fake_llm: FakeLLMServer) -> None:
    a, b, c = trio()
    history = [said("user", "plan it"), said("alice", "here is a plan")]
    group = GroupChat([a, b, c], list(history))
    manager = selector(fake_llm, ["carol"])
    assert await call(variant, group, "select_speaker", a, manager) is c
    (request,) = fake_llm.requests
    messages = request["messages"]
    assert messages[0] == {"role": "system", "content": group.select_speaker_msg()}
    assert messages[1:3] == history
    assert messages[3] == {"role": "system", "content": group.select_speaker_prompt()}
    assert request["model"] == "fake-model"


async def test_auto_with_user_role_prompts(fake_llm: FakeLLMServer) -> None:
    a, b, c = trio()
    group = GroupChat([a, b, c], [said("alice")], role_for_select_speaker_messages="user")
    assert await group.a_select_speaker(a, selector(fake_llm, ["bob"])) is b
    assert fake_llm.requests[0]["messages"][-1]["role"] == "user"


async def test_auto_without_prompt_ends_with_the_transcript(fake_llm: FakeLLMServer) -> None:
    a, b, c = trio()
    group = GroupChat([a, b, c], [said("alice")], select_speaker_prompt_template=None)
    assert await group.a_select_speaker(a, selector(fake_llm, ["bob"])) is b
    assert fake_llm.requests[0]["messages"][1:] == [said("alice")]


@pytest.mark.parametrize(
    "answer",
    [
        "bob",
        " bob\n",
        "**bob**",
        "`bob`.",
        "'bob'",
        "Bob",
        "I think bob should go next.",
        "bob bob",
    ],
)
async def test_auto_matches_answers_robustly(answer: str, fake_llm: FakeLLMServer) -> None:
    a, b, c = trio()
    group = GroupChat([a, b, c], [said("alice")])
    assert await group.a_select_speaker(a, selector(fake_llm, [answer])) is b
    assert len(fake_llm.requests) == 1


async def test_an_exact_name_wins_over_names_it_contains(fake_llm: FakeLLMServer) -> None:
    pm, manager_agent, dev = agent("product_manager"), agent("manager"), agent("dev")
    group = GroupChat([pm, manager_agent, dev], [said("dev")])
    assert await group.a_select_speaker(dev, selector(fake_llm, ["product manager"])) is pm


async def test_auto_retries_with_correction_prompts(fake_llm: FakeLLMServer) -> None:
    a, b, c = trio()
    group = GroupChat([a, b, c], [said("alice")])
    manager = selector(fake_llm, ["TERMINATE", "alice or bob", "bob"])
    assert await group.a_select_speaker(a, manager) is b
    first, second, third = (r["messages"] for r in fake_llm.requests)
    agentlist = "['alice', 'bob', 'carol']"
    none_prompt = group.select_speaker_auto_none_template.format(agentlist=agentlist)
    multiple_prompt = group.select_speaker_auto_multiple_template.format(agentlist=agentlist)
    assert second[len(first) :] == [
        {"role": "assistant", "content": "TERMINATE"},
        {"role": "system", "content": none_prompt},
    ]
    assert third[len(second) :] == [
        {"role": "assistant", "content": "alice or bob"},
        {"role": "system", "content": multiple_prompt},
    ]


async def test_auto_falls_back_to_round_robin(
    fake_llm: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    a, b, c = trio()
    group = GroupChat([a, b, c], [said("alice")], max_retries_for_selecting_speaker=1)
    manager = selector(fake_llm, ["TERMINATE", "nobody"])
    with caplog.at_level(logging.WARNING):
        assert await group.a_select_speaker(b, manager) is c
    assert len(fake_llm.requests) == 2
    assert "carol speaks next (round robin)" in caplog.text


async def test_auto_without_a_model_is_round_robin() -> None:
    a, b, c = trio()
    group = GroupChat([a, b, c], [said("alice")])
    assert await group.a_select_speaker(a, GroupChatManager(group)) is b


async def test_selection_warnings_are_given_once_per_group(
    caplog: pytest.LogCaptureFixture,
) -> None:
    a, b = agent("alice"), agent("bob")
    group = GroupChat([a, b], [said("alice")])  # "auto", no model, two agents
    manager = GroupChatManager(group)
    with caplog.at_level(logging.WARNING):
        picks = [await group.a_select_speaker(x, manager) for x in (a, b, a, b)]
    assert picks == [b, a, b, a]
    assert caplog.text.count("speakers take turns in order instead") == 1
    assert caplog.text.count("underpopulated with two agents") == 1
    other = GroupChat([a, b], [said("alice")])
    with caplog.at_level(logging.WARNING):
        await other.a_select_speaker(a, GroupChatManager(other))
    assert caplog.text.count("speakers take turns in order instead") == 2  # another group


async def test_the_selection_agent_is_built_once(fake_llm: FakeLLMServer) -> None:
    agents_seen: list[ConversableAgent] = []

    class Record:
        """A stand-in for TransformMessages: it is attached to the selection agent."""

        def add_to_agent(self, agent: ConversableAgent) -> None:
            agents_seen.append(agent)

    a, b, c = trio()
    group = GroupChat([a, b, c], [said("alice")], select_speaker_transform_messages=Record())
    manager = selector(fake_llm, ["bob", "carol", "alice"])
    assert [await group.a_select_speaker(a, manager) for _ in range(3)] == [b, c, a]
    assert len(agents_seen) == 1
    other_manager = selector(fake_llm, ["carol"])  # another manager: another client
    assert await group.a_select_speaker(a, other_manager) is c
    assert len(agents_seen) == 2


async def test_auto_verbose_prints_the_attempts(fake_llm: FakeLLMServer) -> None:
    a, b, c = trio()
    group = GroupChat([a, b, c], [said("alice")], select_speaker_auto_verbose=True)
    io = IOScripted()
    with IOStream.set_default(io):
        await group.a_select_speaker(a, selector(fake_llm, ["nobody", "carol"]))
    assert "attempt 1 of 3 failed as it did not include any agent names" in io.text
    assert "attempt 2 of 3 successfully selected: carol" in io.text


async def test_auto_uses_its_own_llm_config(fake_llm: FakeLLMServer) -> None:
    a, b, c = trio()
    group = GroupChat(
        [a, b, c],
        [said("alice")],
        select_speaker_auto_llm_config=fake_llm.llm_config(model="selector-model"),
    )
    assert await group.a_select_speaker(a, selector(fake_llm, ["bob"])) is b
    assert fake_llm.requests[0]["model"] == "selector-model"


async def test_auto_blanks_a_pending_tool_call_and_sanitizes_names(
    fake_llm: FakeLLMServer,
) -> None:
    a, b, c = agent("Product Manager"), agent("bob"), agent("carol")
    call_message = {
        "role": "assistant",
        "name": "Product Manager",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    group = GroupChat([a, b, c], [said("Product Manager"), call_message], func_call_filter=False)
    assert await group.a_select_speaker(a, selector(fake_llm, ["carol"])) is c
    messages = fake_llm.requests[0]["messages"]  # the strict fake server accepted them
    assert messages[1]["name"] == messages[2]["name"] == "Product_Manager"
    assert "tool_calls" not in messages[2]
    assert group.messages[1] is call_message  # the transcript itself is untouched


async def test_auto_registers_a_custom_model_client(fake_llm: FakeLLMServer) -> None:
    PickCarol = answering("PickCarol", "carol")
    a, b, c = trio()
    config = {"config_list": [{"model": "pick", "model_client_cls": "PickCarol"}]}
    missing = GroupChat([a, b, c], [said("alice")], select_speaker_auto_llm_config=config)
    with pytest.raises(ValueError, match="no class was given"):
        await missing.a_select_speaker(a, GroupChatManager(missing))
    wrong = GroupChat(
        [a, b, c],
        [said("alice")],
        select_speaker_auto_llm_config=config,
        select_speaker_auto_model_client_cls=[FakeLLMServer],
    )
    with pytest.raises(ValueError, match="named 'PickCarol'"):
        await wrong.a_select_speaker(a, GroupChatManager(wrong))
    group = GroupChat(
        [a, b, c],
        [said("alice")],
        select_speaker_auto_llm_config=config,
        select_speaker_auto_model_client_cls=[PickCarol],
    )
    assert await group.a_select_speaker(a, GroupChatManager(group)) is c


# -- the function-call filter ------------------------------------------------------------------


def tool_call_by(name: str, *functions: str) -> dict[str, Any]:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": f, "arguments": "{}"}}
        for i, f in enumerate(functions)
    ]
    return {"role": "assistant", "name": name, "content": "", "tool_calls": calls}


async def test_a_tool_call_goes_to_the_agent_that_can_run_it(fake_llm: FakeLLMServer) -> None:
    a, b, c = (
        agent("alice"),
        agent("bob", function_map={"f": len}),
        agent("carol", function_map={"f": len, "g": len}),
    )
    group = GroupChat([a, b, c], [tool_call_by("alice", "f", "g")])
    assert await group.a_select_speaker(a, selector(fake_llm)) is c
    group.messages[:] = [
        {"role": "assistant", "content": "", "function_call": {"name": "g", "arguments": "{}"}}
    ]
    assert await group.a_select_speaker(a, selector(fake_llm)) is c
    assert fake_llm.requests == []


async def test_several_able_agents_are_chosen_by_the_method() -> None:
    a, b, c = (
        agent("alice"),
        agent("bob", function_map={"f": len}),
        agent("carol", function_map={"f": len}),
    )
    group = GroupChat(
        [a, b, c], [tool_call_by("alice", "f")], speaker_selection_method="round_robin"
    )
    assert await group.a_select_speaker(b, GroupChatManager(group)) is c


async def test_an_unknown_function_goes_to_the_only_agent_with_functions() -> None:
    a, b, c = agent("alice"), agent("bob", function_map={"f": len}), agent("carol")
    group = GroupChat([a, b, c], [tool_call_by("alice", "nope")])
    assert await group.a_select_speaker(a, GroupChatManager(group)) is b
    group = GroupChat([a, agent("b2"), c], [tool_call_by("alice", "nope")])
    with pytest.raises(ValueError, match="No agent can execute the function nope"):
        await group.a_select_speaker(a, GroupChatManager(group))


async def test_the_filter_can_be_turned_off() -> None:
    a, b, c = agent("alice"), agent("bob"), agent("carol", function_map={"f": len})
    group = GroupChat(
        [a, b, c],
        [tool_call_by("alice", "f")],
        func_call_filter=False,
        speaker_selection_method="round_robin",
    )
    assert await group.a_select_speaker(a, GroupChatManager(group)) is b


# -- tool calls stay with their results ---------------------------------------------------------


def result_by(name: str, *ids: str) -> dict[str, Any]:
    responses = [{"tool_call_id": i, "role": "tool", "content": "ok"} for i in ids]
    return {"role": "tool", "name": name, "content": "ok", "tool_responses": responses}


def test_tail_never_starts_with_orphan_results() -> None:
    from parley.agentchat._group_history import tail

    history = [said("a"), tool_call_by("a", "f"), result_by("b", "c0"), said("b", "after")]
    assert tail(history, 2) == history[1:]
    assert tail(history, 1) == history[3:]
    assert tail(history, 9) == history
    assert tail(history, 0) == []


def test_pair_tool_calls_repairs_what_was_cut() -> None:
    from parley.agentchat._group_history import pair_tool_calls

    call = tool_call_by("a", "f", "g")
    complete = [said("a"), call, result_by("b", "c0", "c1"), said("b")]
    repaired, changed = pair_tool_calls(complete)
    assert changed == 0
    assert all(x is y for x, y in zip(repaired, complete, strict=True))
    orphan_result = [result_by("b", "c0", "c1"), said("b")]
    repaired, changed = pair_tool_calls(orphan_result)
    assert changed == 1
    assert repaired[0] == {"role": "user", "name": "b", "content": "ok"}
    unanswered = [said("a"), call, said("b")]
    repaired, changed = pair_tool_calls(unanswered)
    assert changed == 1
    assert "tool_calls" not in repaired[1]
    assert repaired[1]["content"] == ""
    partly = [call, result_by("b", "c0"), said("b")]
    repaired, _ = pair_tool_calls(partly)
    assert [m["role"] for m in repaired] == ["assistant", "user", "user"]
    assert "tool_calls" not in repaired[0]
    pending = [said("a"), call]
    assert pair_tool_calls(pending, allow_pending_last=True) == (pending, 0)
    assert call["tool_calls"]  # the caller's dicts are never modified


async def test_selection_transforms_cannot_orphan_a_tool_result(fake_llm: FakeLLMServer) -> None:
    class KeepLast:
        """A stand-in for TransformMessages(MessageHistoryLimiter(max_messages=3))."""

        def add_to_agent(self, agent: ConversableAgent) -> None:
            agent.register_hook("process_all_messages_before_reply", lambda ms: ms[-3:])

    a, b, c = trio()
    group = GroupChat(
        [a, b, c],
        [said("carol"), tool_call_by("alice", "f"), result_by("bob", "c0"), said("bob", "next")],
        select_speaker_transform_messages=KeepLast(),
    )
    assert await group.a_select_speaker(b, selector(fake_llm, ["carol"])) is c
    messages = fake_llm.requests[0]["messages"]  # the strict fake server accepted them
    assert [m["role"] for m in messages] == ["system", "user", "user", "system"]
