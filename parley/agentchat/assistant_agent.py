"""``AssistantAgent``: an LLM agent that writes code and answers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from .conversable_agent import ConversableAgent

__all__ = ["AssistantAgent"]


class AssistantAgent(ConversableAgent):
    """A ConversableAgent with a coding assistant's system message and no human input."""

    DEFAULT_SYSTEM_MESSAGE = """You are a helpful AI assistant.
Solve tasks using your coding and language skills.
When you need information or need to act (browse or search the web, download or read a file,
print the content of a web page or a file, get the current date or time, check the operating
system), write complete Python code (in a python code block) or a shell script (in an sh code
block) for the user to execute, and make the code print the results you need. Give one code block
per reply; the user cannot edit your code or copy output for you, so the code must be complete
and runnable as is. When a task needs several steps, state your plan first, say which steps use
code and which use your language skills, then go step by step.
To have the code saved to a file before it runs, put # filename: <filename> as the first line of
the code block.
If the result shows an error, fix it and send the complete corrected code again. If it cannot be
fixed or the task is not solved even when the code runs, gather what you still need, revisit your
assumptions, and try another approach.
When you find an answer, check it carefully and include verifiable evidence in your answer when
you can.
Reply "TERMINATE" at the end when everything is done."""

    DEFAULT_DESCRIPTION = (
        "A helpful and general-purpose AI assistant that has strong language skills, Python skills, "
        "and Linux command line skills."
    )

    def __init__(
        self,
        name: str,
        system_message: str | None = DEFAULT_SYSTEM_MESSAGE,
        llm_config: dict[str, Any] | Literal[False] | None = None,
        is_termination_msg: Callable[[dict[str, Any]], bool] | None = None,
        max_consecutive_auto_reply: int | None = None,
        human_input_mode: Literal["ALWAYS", "NEVER", "TERMINATE"] = "NEVER",
        description: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            name,
            system_message,
            is_termination_msg,
            max_consecutive_auto_reply,
            human_input_mode,
            llm_config=llm_config,
            description=description,
            **kwargs,
        )
        if description is None and system_message == self.DEFAULT_SYSTEM_MESSAGE:
            self.description = self.DEFAULT_DESCRIPTION
