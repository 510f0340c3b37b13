"""``UserProxyAgent``: stands in for the human and runs the code it receives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal

from .conversable_agent import ConversableAgent

__all__ = ["UserProxyAgent"]


class UserProxyAgent(ConversableAgent):
    """A ConversableAgent that asks its human every turn and executes code by default."""

    DEFAULT_USER_PROXY_AGENT_DESCRIPTIONS: ClassVar[dict[str, str]] = {
        "ALWAYS": "An attentive HUMAN user who can answer questions about the task, and can perform "
        "tasks such as running Python code or inputting command line commands at a Linux terminal "
        "and reporting back the execution results.",
        "TERMINATE": "A user that can run Python code or input command line commands at a Linux "
        "terminal and report back the execution results.",
        "NEVER": "A computer terminal that performs no other action than running Python scripts "
        "(provided to it quoted in ```python code blocks), or sh shell scripts (provided to it "
        "quoted in ```sh code blocks).",
    }

    def __init__(
        self,
        name: str,
        is_termination_msg: Callable[[dict[str, Any]], bool] | None = None,
        max_consecutive_auto_reply: int | None = None,
        human_input_mode: Literal["ALWAYS", "TERMINATE", "NEVER"] = "ALWAYS",
        function_map: dict[str, Callable[..., Any]] | None = None,
        code_execution_config: dict[str, Any] | Literal[False] = {},  # noqa: B006 - copied by the base
        default_auto_reply: str | dict[str, Any] | None = "",
        llm_config: dict[str, Any] | Literal[False] | None = False,
        system_message: str | list[Any] | None = "",
        description: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            name=name,
            system_message=system_message,
            is_termination_msg=is_termination_msg,
            max_consecutive_auto_reply=max_consecutive_auto_reply,
            human_input_mode=human_input_mode,
            function_map=function_map,
            code_execution_config=code_execution_config,
            llm_config=llm_config,
            default_auto_reply=default_auto_reply,
            description=(
                description
                if description is not None
                else self.DEFAULT_USER_PROXY_AGENT_DESCRIPTIONS[human_input_mode]
            ),
            **kwargs,
        )
