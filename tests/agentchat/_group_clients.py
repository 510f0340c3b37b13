"""A custom model client for group-chat tests: it always answers with one fixed text."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


class FixedAnswerClient:
    """A model client (AutoGen's ModelClient protocol) whose every answer is ``ANSWER``."""

    ANSWER = ""

    def __init__(self, config: dict[str, Any], **kwargs: Any) -> None:
        self.config = config

    def create(self, params: dict[str, Any]) -> Any:
        message = SimpleNamespace(content=self.ANSWER, tool_calls=None, function_call=None)
        return SimpleNamespace(
            choices=[SimpleNamespace(message=message)],
            model=self.config["model"],
            usage=None,
            cost=0,
        )

    def message_retrieval(self, response: Any) -> list[Any]:
        return [c.message.content for c in response.choices]

    def cost(self, response: Any) -> float:
        return 0.0

    @staticmethod
    def get_usage(response: Any) -> dict[str, Any]:
        return {}


def answering(class_name: str, answer: str) -> type[FixedAnswerClient]:
    """A client class named ``class_name`` (what ``model_client_cls`` matches) saying ``answer``."""
    return type(class_name, (FixedAnswerClient,), {"ANSWER": answer})
