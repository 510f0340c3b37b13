"""A griffe extension for the API reference: parley's sync methods are made from their async
twins (``initiate_chat = sync_face(a_initiate_chat)``, ``resume = sync_of(a_resume, ...)``,
in ``parley/agentchat/_sync_chat.py``), so the static reader sees attributes. This turns each
into the function it is: the async one's parameters and return type, and a docstring saying
which coroutine it blocks on (with that coroutine's own docstring)."""

from __future__ import annotations

import re
from typing import Any

import griffe

_SYNC = re.compile(r"^(?:sync_face|sync_of)\((?P<target>\w+)")


class SyncFaces(griffe.Extension):
    def on_members(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        for name, member in list(obj.members.items()):
            if member.is_alias or not member.is_attribute:
                continue
            match = _SYNC.match(str(getattr(member, "value", "") or ""))
            if match is None:
                continue
            target = obj.members.get(match.group("target"))
            if target is None or target.is_alias or not target.is_function:
                continue
            own = member.docstring.value if member.docstring else ""
            theirs = target.docstring.value if target.docstring else ""
            text = own or f"The blocking form of `{target.name}` (same arguments, same result)."
            if theirs and not own:
                text += "\n\n" + theirs
            function = griffe.Function(
                name,
                lineno=member.lineno,
                endlineno=member.endlineno,
                parameters=target.parameters,
                returns=target.returns,
                docstring=griffe.Docstring(text, parent=None),
            )
            obj.set_member(name, function)
            function.docstring.parent = function  # type: ignore[union-attr]
