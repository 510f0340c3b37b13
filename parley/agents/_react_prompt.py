"""The ReAct prompt: the default template, checking a user's template, and rendering one step's
prompt (the question and the scratchpad of the steps so far).

Placeholders are replaced in one pass and nothing else in the template is touched, so a
template may contain JSON or code with braces as it is (no ``{{`` escaping, unlike
``str.format``), and a tool's output that contains ``{input}`` stays as it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "DEFAULT_TEMPLATE",
    "OPTIONAL_PLACEHOLDERS",
    "REQUIRED_PLACEHOLDERS",
    "check_template",
    "describe_tools",
    "render",
    "scratchpad_entry",
]

DEFAULT_TEMPLATE = """\
Today is {date}. Work out the answer to the question at the end. These tools are at your service:

{tools}

Reason step by step and write every step in this format:

Question: the question you are answering
Thought: what you know so far and what you will do next
Action: the tool you pick, written exactly as one of [{tool_names}]
Action Input: what to give that tool
Observation: what the tool gave back
(Thought, Action, Action Input and Observation repeat as many times as you need.)
Thought: I have what I need to answer
Final Answer: your answer to the question

Write one Action and its Action Input, then stop: the Observation will be written for you.

Question: {input}
Thought:{scratchpad}"""

# A template without these cannot work: the model would not see the question, its past steps
# or its tools.
REQUIRED_PLACEHOLDERS = ("input", "scratchpad", "tools")
OPTIONAL_PLACEHOLDERS = ("date", "tool_names")
_PLACEHOLDER = re.compile(r"\{(" + "|".join(REQUIRED_PLACEHOLDERS + OPTIONAL_PLACEHOLDERS) + r")\}")
NO_TOOLS = "(none: answer from what you know)"


def check_template(template: str) -> None:
    """Raise ``ValueError`` naming the required placeholders ``template`` lacks."""
    if not isinstance(template, str):
        raise TypeError(f"prompt_template must be a str, got {type(template).__name__}")
    present = set(_PLACEHOLDER.findall(template))
    missing = [name for name in REQUIRED_PLACEHOLDERS if name not in present]
    if missing:
        listed = ", ".join("{" + name + "}" for name in missing)
        raise ValueError(
            f"prompt_template lacks {listed}: a ReAct prompt must contain {{input}} (the "
            "question), {tools} (the tools' names and descriptions) and {scratchpad} (the steps "
            "so far, after the last 'Thought:'); {date} and {tool_names} are optional"
        )


def render(template: str, values: Mapping[str, str]) -> str:
    """``template`` with each placeholder replaced by ``values[name]``."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def describe_tools(tools: Mapping[str, str]) -> str:
    """The ``{tools}`` text: one ``name: description`` line per tool."""
    if not tools:
        return NO_TOOLS
    return "\n".join(f"{name}: {' '.join(text.split())}" for name, text in tools.items())


def scratchpad_entry(model_text: str, observation: str) -> str:
    """What one step adds after the prompt's last ``Thought:``: the model's text, the
    observation, and the next ``Thought:`` for the model to continue from."""
    return f" {model_text.strip()}\nObservation: {observation}\nThought:"
