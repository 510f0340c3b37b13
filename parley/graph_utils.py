"""Speaker-transition graphs (AutoGen's ``autogen.graph_utils``).

A graph is a dict ``{agent: [agent, ...]}`` keyed and valued by agent objects (not names):
who may (an "allowed" graph) or may not (a "disallowed" graph) speak right after the key.
``GroupChat`` checks its graph here at construction, and turns a disallowed graph into an
allowed one, so a mistake surfaces naming the agent instead of as a confusing selection
failure in the middle of a chat.

Differences from AutoGen, on purpose:

- Each ``ValueError`` starts with AutoGen's sentence and goes on to name the offending agent
  and value. The logged warnings keep AutoGen's texts, with the agent names sorted (AutoGen's
  order came from a set and changed between runs).
- The warnings go to the root logger, as in AutoGen, but through ``logging.getLogger()``:
  AutoGen's ``logging.warning(...)`` configures the root logger as a side effect
  (``logging.basicConfig``) when the program has not.
- ``visualize_speaker_transitions_dict`` draws on a new figure (AutoGen drew over the current
  one) and closes it once saved to ``export_path``, so repeated calls do not pile up open
  figures; without the ``graphs`` extra it raises ``ModuleNotFoundError`` saying how to install
  it (AutoGen logged that and re-raised the bare import error).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ._agent_protocol import is_agent

if TYPE_CHECKING:
    from ._agent_protocol import Agent

__all__ = [
    "check_graph_validity",
    "has_self_loops",
    "invert_disallowed_to_allowed",
    "visualize_speaker_transitions_dict",
]

# AutoGen logs these through the root logger; so do we (see the module docstring).
_root_logger = logging.getLogger()

_GRAPH = "allowed_speaker_transitions_dict"


def has_self_loops(allowed_speaker_transitions: dict[Any, list[Any]]) -> bool:
    """Whether some agent may speak right after itself (it is in its own list)."""
    return any(any(t is s for t in ts) for s, ts in allowed_speaker_transitions.items())


def check_graph_validity(
    allowed_speaker_transitions_dict: dict[Any, list[Any]], agents: Sequence[Agent]
) -> None:
    """Raise ``ValueError`` if the graph is malformed; log a warning for suspicious shapes.

    Errors, checked in this order over the whole graph: not a dict; a value that is not a
    list; a key that is not one of ``agents``; a target that is not an agent. Warnings: agents
    with no edge at all; agents of the graph and ``agents`` that differ; repeated targets.
    """
    check_graph_shape(allowed_speaker_transitions_dict, agents, _GRAPH)
    _log_doubts(allowed_speaker_transitions_dict, agents)


def check_graph_shape(graph: Any, agents: Sequence[Any], what: str = _GRAPH) -> None:
    """The errors of :func:`check_graph_validity`, without its warnings; ``what`` names the
    graph in the messages (``GroupChat`` checks a disallowed graph under its field's name)."""
    if not isinstance(graph, dict):
        raise ValueError(
            f"{what} must be a dictionary. It should map an agent to a list of agents, "
            f"got {type(graph).__name__}."
        )
    for source, targets in graph.items():
        if not isinstance(targets, list):
            raise ValueError(
                f"{what} must be a dictionary with lists as values. The targets of "
                f"{_label(source)} must be a list of agents, got {type(targets).__name__} "
                f"{targets!r}."
            )
    for source in graph:
        if not any(source is agent for agent in agents):
            raise ValueError(
                f"{what} has keys not in agents. It has {_label(source)} as a key, but it is "
                f"not a member of agents: {[getattr(a, 'name', a) for a in agents]}."
            )
    for source, targets in graph.items():
        for target in targets:
            if not is_agent(target):
                hint = " (use the agent object, not its name)" if isinstance(target, str) else ""
                raise ValueError(
                    f"{what} has values that are not lists of Agents. The targets of "
                    f"{_label(source)} must be agents, got {type(target).__name__} "
                    f"{target!r}{hint}."
                )


def _log_doubts(graph: dict[Any, list[Any]], agents: Sequence[Any]) -> None:
    targets = {id(t): t for ts in graph.values() for t in ts}
    with_edges = {id(s): s for s, ts in graph.items() if ts} | targets
    isolated = [a for a in agents if id(a) not in with_edges]
    if isolated:
        _root_logger.warning(
            "Warning: There are isolated agent nodes, there are not incoming nor outgoing "
            "edges. Isolated agents: %s",
            _names(isolated),
        )
    members = {id(a): a for a in agents}
    offending = [a for i, a in members.items() if i not in with_edges] + [
        a for i, a in with_edges.items() if i not in members
    ]
    if offending:
        _root_logger.warning(
            "Warning: The set of agents in allowed_speaker_transitions do not match agents. "
            "Offending agents: %s",
            _names(offending),
        )
    for source, ts in graph.items():
        repeated = {id(t): t for t in ts if sum(t is u for u in ts) > 1}
        if repeated:
            _root_logger.warning(
                "Agent '%s' has duplicate elements: %s. Please remove duplicates manually.",
                getattr(source, "name", source),
                _names(repeated.values()),
            )


def invert_disallowed_to_allowed(
    disallowed_speaker_transitions_dict: dict[Any, list[Any]], agents: Sequence[Agent]
) -> dict[Any, list[Any]]:
    """The allowed graph: every agent after every agent, itself included, in ``agents`` order,
    minus the disallowed transitions. A key that is not one of ``agents`` raises ``KeyError``.
    """
    allowed: dict[Any, list[Any]] = {agent: list(agents) for agent in agents}
    for source, banned in disallowed_speaker_transitions_dict.items():
        # Looked up by identity, like the graph's keys; a stranger is a KeyError, as in AutoGen.
        key = next((agent for agent in allowed if agent is source), None)
        if key is None:
            raise KeyError(source)
        allowed[key] = [agent for agent in allowed[key] if not any(agent is b for b in banned)]
    return allowed


def visualize_speaker_transitions_dict(
    speaker_transitions_dict: dict[Any, list[Any]],
    agents: Sequence[Agent],
    export_path: str | None = None,
) -> None:
    """Draw the graph with networkx and matplotlib (the ``graphs`` extra).

    Nodes are the names of ``agents`` (and of any target outside them), edges go from a key's
    name to each target's name. With ``export_path`` the drawing is saved there (any format
    matplotlib knows from the file's extension) and the figure closed; otherwise it is shown
    with ``plt.show()``.
    """
    try:
        import matplotlib.pyplot as plt
        import networkx as nx
    except ImportError as e:
        raise ModuleNotFoundError(
            f"visualize_speaker_transitions_dict needs networkx and matplotlib ({e}); install "
            "them with: pip install 'parley[graphs]'",
            name=e.name,
        ) from e

    graph = nx.DiGraph()
    graph.add_nodes_from(agent.name for agent in agents)
    for source, targets in speaker_transitions_dict.items():
        for target in targets:
            graph.add_edge(source.name, target.name)
    figure = plt.figure()
    nx.draw(graph, ax=figure.gca(), with_labels=True, font_weight="bold")
    if export_path is None:
        plt.show()
        return
    try:
        figure.savefig(export_path)
    finally:
        plt.close(figure)


def _label(agent: Any) -> str:
    return repr(getattr(agent, "name", agent))


def _names(agents: Iterable[Any]) -> list[str]:
    return sorted(str(getattr(agent, "name", agent)) for agent in agents)
