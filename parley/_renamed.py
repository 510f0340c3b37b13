"""Extension points renamed from a private to a public name, kept working under both.

A store's primitives (``parley.durable.BaseChatStore``) and an executor's steps
(``parley.coding.executor_base.CommandLineExecutorBase``) had names with a leading underscore
although users implement them. They are public now; a class written against the old names (one
that overrides ``_write_step`` or ``_run``, or calls ``super()._run(...)``) keeps working,
silently: in each class that defines one of the two names, the other is the same member.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["mirror_renamed"]


def mirror_renamed(cls: type, renamed: Mapping[str, str]) -> None:
    """Give ``cls`` (its own namespace, not its bases') the missing name of each
    ``public -> old`` pair of ``renamed`` it defines one of, bound to the member it defines.

    The base then calls the public name and finds an override written under the old one; and
    an override's ``super()`` call under either name reaches the parent's member."""
    own = vars(cls)
    for public, old in renamed.items():
        if old in own and public not in own:
            setattr(cls, public, own[old])
        elif public in own and old not in own:
            setattr(cls, old, own[public])
