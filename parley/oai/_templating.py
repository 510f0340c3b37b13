"""Fill ``prompt`` and ``messages`` templates with a request's ``context``, as ``create`` does
before each config's request (a prompt is filled, messages only when the context is not empty).

A template is a ``str`` (``str.format``-ted only when ``allow_format_str_template`` is true,
as in AutoGen, because ordinary text with braces must survive), a callable
``template(context) -> str``, or a ``jinja2.Template`` (rendered with the context's keys).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["instantiate", "instantiate_messages", "is_jinja_template", "prompt_to_messages"]


def is_jinja_template(template: Any) -> bool:
    # Checked by type name so that jinja2 is imported only by those who use it.
    return any(
        cls.__module__.startswith("jinja2") and cls.__name__ == "Template"
        for cls in type(template).__mro__
    )


def instantiate(
    template: Any,
    context: Mapping[str, Any] | None = None,
    allow_format_str_template: bool = False,
) -> Any:
    """The template filled with ``context``; unchanged when there is no context."""
    if not context or template is None:
        return template
    if isinstance(template, str):
        if not allow_format_str_template:
            return template
        try:
            return template.format(**context)
        except (KeyError, IndexError) as e:
            raise ValueError(
                f"template {template[:80]!r} names {e} which is not in the context "
                f"(keys: {sorted(context)}); escape literal braces as {{{{ }}}}"
            ) from e
    if is_jinja_template(template):
        return template.render(**context)
    if callable(template):
        return template(context)
    return template


def instantiate_messages(
    messages: Sequence[Mapping[str, Any]],
    context: Mapping[str, Any] | None,
    allow_format_str_template: bool,
) -> list[dict[str, Any]]:
    """New message dicts with templated contents; the caller's dicts are left as they are."""
    if not context:
        return [dict(m) for m in messages]
    out = []
    for m in messages:
        m = dict(m)
        if m.get("content"):
            m["content"] = instantiate(m["content"], context, allow_format_str_template)
        out.append(m)
    return out


def prompt_to_messages(prompt: Any) -> list[dict[str, Any]]:
    """A (filled) ``prompt`` as chat messages: one user message.

    parley sends prompts to the chat endpoint (the legacy completions endpoint serves no current
    model), which is what AutoGen's own legacy ``Completion`` class did for chat models.
    """
    if isinstance(prompt, (list, tuple)):
        raise ValueError(
            "a list of prompts (a batch completion) is not supported; call create once per prompt"
        )
    return [{"role": "user", "content": prompt}]
