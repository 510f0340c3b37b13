"""What ``optimize`` asks its optimiser model, and how the rewritten prompts are read back."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import Any

from ._tag_loop import Transcript
from ._tag_prompts import TagPrompts

__all__ = [
    "OPTIMIZER_SYSTEM",
    "clip",
    "optimizer_messages",
    "parse_prompt_tags",
    "prompt_tag",
]

OPTIMIZER_SYSTEM = (
    "You improve the prompts that steer an AI agent. The agent works in a loop: each of its "
    "replies is exactly one tool call written <TOOL: NAME>input</TOOL>, it reads the tool's "
    "result, and it finishes with <TOOL: END_RUN>final answer</TOOL>. Every text it reads comes "
    "from one of its named prompts. You are shown those prompts and the transcripts of the runs "
    "that scored worst. Work out what went wrong in those runs and which prompt is to blame, "
    "then rewrite the prompts so that the agent does better on tasks like these."
)

_RETURN_FORMAT = (
    "Return each prompt you change in the same form as above: "
    '<PROMPT name="NAME">the new text</PROMPT>. Leave out the prompts you keep as they are. '
    "Keep every required placeholder, in braces, exactly as written. You may think first: "
    "text outside the tags is ignored."
)

# A reply naming its prompt with single or double quotes; the text runs to the next closing tag.
_PROMPT_TAG = re.compile(r"<PROMPT\s+name\s*=\s*[\"']([^\"'<>]*)[\"']\s*>([\s\S]*?)</PROMPT>")
_CLIP = 6000  # characters of one transcript shown to the optimiser (or a judge)


def prompt_tag(name: str, text: str) -> str:
    """``text`` wrapped in the tag the optimiser answers with."""
    return f'<PROMPT name="{name}">\n{text}\n</PROMPT>'


def parse_prompt_tags(text: str) -> dict[str, str]:
    """Every ``<PROMPT name="...">`` block of ``text`` by name, stripped; a later block of the
    same name wins (a model correcting itself)."""
    return {name.strip(): body.strip() for name, body in _PROMPT_TAG.findall(text)}


def clip(text: str, limit: int = _CLIP) -> str:
    """``text`` cut in the middle to ``limit`` characters: the start and the end of a run say
    the most."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut} characters left out ...]\n{text[-half:]}"


def _placeholders(name: str) -> str:
    required, optional = TagPrompts.placeholders(name)
    parts = []
    if required:
        parts.append("must contain " + ", ".join("{" + p + "}" for p in required))
    if optional:
        parts.append("may use " + ", ".join("{" + p + "}" for p in optional))
    return "; ".join(parts) if parts else "no placeholders"


def optimizer_messages(
    prompts: TagPrompts,
    names: Collection[str],
    worst: Sequence[tuple[Transcript, float]],
) -> list[dict[str, Any]]:
    """The optimiser's request: the prompts it may rewrite, the worst runs, the answer format."""
    shown = [
        f"Prompt {name} ({_placeholders(name)}):\n{prompt_tag(name, getattr(prompts, name))}"
        for name in TagPrompts.names()
        if name in names
    ]
    runs = [
        f"### Run {i}: score {score:g}\nTask: {t.task}\nStopped by: {t.stop_reason} after "
        f"{t.steps} model call(s)\nFinal reply: {t.reply}\nTranscript:\n{clip(t.text())}"
        for i, (t, score) in enumerate(worst, start=1)
    ]
    user = (
        "## The agent's prompts you may rewrite\n\n"
        + "\n\n".join(shown)
        + "\n\n## The runs that scored worst (higher scores are better)\n\n"
        + "\n\n".join(runs)
        + "\n\n## Your answer\n\n"
        + _RETURN_FORMAT
    )
    return [{"role": "system", "content": OPTIMIZER_SYSTEM}, {"role": "user", "content": user}]
