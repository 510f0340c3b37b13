"""Speaker-transition graphs of a group chat: validation and the allowed-transitions dict.

This is AutoGen's ``autogen.graph_utils`` as ``GroupChat`` uses it at construction. A graph
maps an agent to the agents that may (``"allowed"``) or may not (``"disallowed"``) speak right
after it; a disallowed graph is turned into an allowed one. Mistakes in the graph are reported
at construction, naming the offending agent, instead of surfacing as a confusing selection
failure in the middle of a chat.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ._registry import _is_agent

__all__ = [
    "check_graph_validity",
    "full_transitions",
    "has_self_loops",
    "invert_disallowed_to_allowed",
]

logger = logging.getLogger(__name__)


def _label(agent: Any) -> str:
    return repr(getattr(agent, "name", agent))


def check_graph_validity(
    allowed_speaker_transitions_dict: Any,
    agents: Sequence[Any],
    *,
    what: str = "graph",
    warn: bool = True,
) -> None:
    """Raise ``ValueError`` if the graph is malformed; log a warning for suspicious shapes.

    Errors: not a dict; a value that is not a list; a key that is not a member of the group;
    a target that is not an agent. Warnings: agents with no edge at all, a node set that
    differs from the group, duplicate targets.
    """
    graph = allowed_speaker_transitions_dict
    if not isinstance(graph, dict):
        raise ValueError(
            f"the speaker transition {what} must be a dict mapping an agent to a list of "
            f"agents, got {type(graph).__name__}"
        )
    members = list(agents)
    for source, targets in graph.items():
        if not isinstance(targets, list):
            raise ValueError(
                f"the speaker transition {what}: the targets of {_label(source)} must be a list "
                f"of agents, got {type(targets).__name__} {targets!r}"
            )
        if not any(source is m for m in members):
            raise ValueError(
                f"the speaker transition {what} has {_label(source)} as a key, but it is not a "
                f"member of the group chat ({[getattr(m, 'name', m) for m in members]})"
            )
        for target in targets:
            if not _is_agent(target):
                hint = " (use the agent object, not its name)" if isinstance(target, str) else ""
                raise ValueError(
                    f"the speaker transition {what}: the targets of {_label(source)} must be "
                    f"agents, got {type(target).__name__} {target!r}{hint}"
                )
        if len({id(t) for t in targets}) != len(targets):
            logger.warning(
                "the speaker transition %s lists a target of %s more than once",
                what,
                _label(source),
            )
    if not warn:
        return
    nodes = set(map(id, graph)) | {id(t) for ts in graph.values() for t in ts}
    with_edges = {id(s) for s, ts in graph.items() if ts} | {
        id(t) for ts in graph.values() for t in ts
    }
    for member in members:
        if id(member) not in with_edges:
            logger.warning(
                "agent %s has no speaker transition to or from it: it can never speak after "
                "another agent",
                _label(member),
            )
    if nodes != {id(m) for m in members}:
        logger.warning(
            "the agents of the speaker transition %s differ from the agents of the group chat",
            what,
        )


def full_transitions(agents: Sequence[Any], allow_repeat: bool | list[Any]) -> dict[Any, list[Any]]:
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


def invert_disallowed_to_allowed(
    disallowed_speaker_transitions_dict: dict[Any, list[Any]], agents: Sequence[Any]
) -> dict[Any, list[Any]]:
    """All-to-all transitions (self loops included) minus the disallowed ones."""
    return {
        a: [
            b
            for b in agents
            if not any(b is d for d in disallowed_speaker_transitions_dict.get(a, ()))
        ]
        for a in agents
    }


def has_self_loops(allowed_speaker_transitions: dict[Any, list[Any]]) -> bool:
    return any(any(t is s for t in ts) for s, ts in allowed_speaker_transitions.items())
