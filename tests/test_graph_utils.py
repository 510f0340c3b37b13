"""``parley.graph_utils``: AutoGen's speaker-transition graph helpers (README, "Speaker-transition
graphs"; notebooks/speaker_transitions.ipynb)."""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import parley
from parley import ConversableAgent
from parley.graph_utils import (
    check_graph_validity,
    has_self_loops,
    invert_disallowed_to_allowed,
    visualize_speaker_transitions_dict,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def agent(name: str) -> ConversableAgent:
    return ConversableAgent(name, human_input_mode="NEVER")


A, B, C = agent("a"), agent("b"), agent("c")
AGENTS = [A, B, C]


def test_the_module_is_an_attribute_of_parley() -> None:
    assert parley.graph_utils.check_graph_validity is check_graph_validity
    assert set(parley.graph_utils.__all__) == {
        "check_graph_validity",
        "has_self_loops",
        "invert_disallowed_to_allowed",
        "visualize_speaker_transitions_dict",
    }


def test_has_self_loops() -> None:
    assert has_self_loops({A: [B, A], B: [C]})
    assert not has_self_loops({A: [B, C], B: [A], C: []})
    assert not has_self_loops({})


def test_invert_includes_self_edges_in_agents_order() -> None:
    # Verified on AutoGen: {a: [b]} over [a, b, c].
    assert invert_disallowed_to_allowed({A: [B]}, AGENTS) == {
        A: [A, C],
        B: [A, B, C],
        C: [A, B, C],
    }


def test_invert_of_an_unknown_key_is_a_key_error() -> None:
    stranger = agent("stranger")
    with pytest.raises(KeyError):
        invert_disallowed_to_allowed({stranger: [A]}, AGENTS)


def test_invert_leaves_the_callers_dict_alone() -> None:
    disallowed = {A: [B]}
    allowed = invert_disallowed_to_allowed(disallowed, AGENTS)
    allowed[A].append(B)
    assert disallowed == {A: [B]}


@given(
    st.dictionaries(
        st.sampled_from(range(4)), st.lists(st.sampled_from(range(4)), max_size=6), max_size=4
    )
)
def test_allowed_and_disallowed_make_the_complete_graph(banned: dict[int, list[int]]) -> None:
    agents = [A, B, C, agent("d")]
    disallowed = {agents[k]: [agents[t] for t in ts] for k, ts in banned.items()}
    allowed = invert_disallowed_to_allowed(disallowed, agents)
    for source in agents:
        forbidden = disallowed.get(source, [])
        assert not any(t is f for t in allowed[source] for f in forbidden)
        union = {id(t) for t in allowed[source]} | {id(t) for t in forbidden}
        assert union == {id(t) for t in agents}  # every agent, itself included
        assert allowed[source] == [t for t in agents if all(t is not f for f in forbidden)]


# -- check_graph_validity: errors, in AutoGen's order ---------------------------------------------


@pytest.mark.parametrize(
    ("graph", "autogen_text", "context"),
    [
        ([A, B], "allowed_speaker_transitions_dict must be a dictionary.", "got list"),
        (
            {A: B},
            "allowed_speaker_transitions_dict must be a dictionary with lists as values.",
            "The targets of 'a' must be a list of agents, got ConversableAgent",
        ),
        (
            {agent("x"): [A]},
            "allowed_speaker_transitions_dict has keys not in agents.",
            "'x' as a key, but it is not a member of agents: ['a', 'b', 'c']",
        ),
        (
            {A: ["b"]},
            "allowed_speaker_transitions_dict has values that are not lists of Agents.",
            "got str 'b' (use the agent object, not its name)",
        ),
    ],
)
def test_the_four_errors(graph: Any, autogen_text: str, context: str) -> None:
    with pytest.raises(ValueError, match=re.escape(autogen_text)) as info:
        check_graph_validity(graph, AGENTS)
    assert str(info.value).startswith(autogen_text)
    assert context in str(info.value)


def test_errors_are_checked_over_the_whole_graph_in_order() -> None:
    # An unknown key comes first in the dict, a non-list value later: the value check wins.
    with pytest.raises(ValueError, match="with lists as values"):
        check_graph_validity({agent("x"): [A], B: "c"}, AGENTS)
    # A name as a target before an unknown key: the key check wins.
    with pytest.raises(ValueError, match="keys not in agents"):
        check_graph_validity({A: ["b"], agent("x"): [A]}, AGENTS)


def test_a_valid_graph_passes_silently(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        check_graph_validity({A: [B], B: [C], C: [A]}, AGENTS)
    assert caplog.records == []


# -- check_graph_validity: warnings through the root logger ---------------------------------------


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[tuple[str, int, str]]:
    return [(r.name, r.levelno, r.getMessage()) for r in caplog.records]


def test_isolated_agents_and_a_mismatch_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    d = agent("d")
    with caplog.at_level(logging.WARNING):
        check_graph_validity({A: [B], B: [A], C: []}, [*AGENTS, d])
    assert warnings_of(caplog) == [
        (
            "root",
            logging.WARNING,
            "Warning: There are isolated agent nodes, there are not incoming nor outgoing edges. "
            "Isolated agents: ['c', 'd']",
        ),
        (
            "root",
            logging.WARNING,
            "Warning: The set of agents in allowed_speaker_transitions do not match agents. "
            "Offending agents: ['c', 'd']",
        ),
    ]


def test_a_target_outside_the_agents_only_warns(caplog: pytest.LogCaptureFixture) -> None:
    outsider = agent("outsider")
    with caplog.at_level(logging.WARNING):
        check_graph_validity({A: [B, outsider], B: [C], C: [A]}, AGENTS)
    assert warnings_of(caplog) == [
        (
            "root",
            logging.WARNING,
            "Warning: The set of agents in allowed_speaker_transitions do not match agents. "
            "Offending agents: ['outsider']",
        )
    ]


def test_duplicate_targets_are_logged_once_each(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        check_graph_validity({A: [C, B, C, B, B], B: [C], C: [A]}, AGENTS)
    assert warnings_of(caplog) == [
        (
            "root",
            logging.WARNING,
            "Agent 'a' has duplicate elements: ['b', 'c']. Please remove duplicates manually.",
        )
    ]


def test_warnings_do_not_configure_the_root_logger() -> None:
    # AutoGen's logging.warning() would call basicConfig and add a handler to the root logger.
    root = logging.getLogger()
    before = list(root.handlers)
    check_graph_validity({A: [B], B: [A], C: []}, AGENTS)
    assert root.handlers == before


# -- visualize_speaker_transitions_dict -----------------------------------------------------------


@pytest.fixture
def pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # headless
    import matplotlib.pyplot as plt

    return plt


def test_a_png_is_written(tmp_path: Path, pyplot: Any) -> None:
    target = tmp_path / "graph.png"
    open_before = pyplot.get_fignums()
    visualize_speaker_transitions_dict({A: [B, C], B: [A], C: [C]}, AGENTS, str(target))
    assert target.read_bytes().startswith(PNG_SIGNATURE)
    assert pyplot.get_fignums() == open_before  # the saved figure is closed


def test_the_drawn_graph_has_names_as_nodes(pyplot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import networkx as nx

    drawn: list[Any] = []
    monkeypatch.setattr(nx, "draw", lambda graph, **kwargs: drawn.append((graph, kwargs)))
    shown: list[bool] = []
    monkeypatch.setattr(pyplot, "show", lambda: shown.append(True))
    outsider = agent("outsider")
    visualize_speaker_transitions_dict({A: [B, outsider], B: [A]}, AGENTS)
    (graph, kwargs), *_ = drawn
    assert sorted(graph.nodes) == ["a", "b", "c", "outsider"]
    assert sorted(graph.edges) == [("a", "b"), ("a", "outsider"), ("b", "a")]
    assert kwargs["with_labels"] is True
    assert kwargs["font_weight"] == "bold"
    assert shown == [True]
    pyplot.close("all")


@pytest.mark.parametrize("missing", ["networkx", "matplotlib.pyplot"])
def test_without_the_graphs_extra_the_error_says_what_to_install(
    missing: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, missing, None)  # makes `import missing` fail
    with pytest.raises(ModuleNotFoundError, match=re.escape("pip install 'parley[graphs]'")):
        visualize_speaker_transitions_dict({A: [B]}, AGENTS)


def test_import_parley_and_graph_utils_never_import_the_drawing_libraries() -> None:
    import json
    import subprocess

    code = (
        "import json, sys, parley\n"
        "parley.graph_utils.check_graph_validity\n"
        "print(json.dumps([m for m in ('networkx', 'matplotlib', 'parley.agentchat') "
        "if m in sys.modules]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(result.stdout) == []


def test_an_object_following_the_agent_protocol_is_an_agent() -> None:
    class Duck:
        def __init__(self) -> None:
            self.name = "duck"  # only on the instance: the Protocol itself decides
            self.description = "quacks"

        def send(self, *args: Any) -> None: ...
        async def a_send(self, *args: Any) -> None: ...
        def receive(self, *args: Any) -> None: ...
        async def a_receive(self, *args: Any) -> None: ...
        def generate_reply(self, *args: Any, **kwargs: Any) -> None: ...
        async def a_generate_reply(self, *args: Any, **kwargs: Any) -> None: ...

    duck = Duck()
    assert isinstance(duck, parley.Agent)
    check_graph_validity({A: [duck], duck: [A]}, [A, duck])
    assert parley.Agent.__module__ == "parley.agentchat.agent"  # its public home
