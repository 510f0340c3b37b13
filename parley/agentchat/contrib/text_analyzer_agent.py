"""``TextAnalyzerAgent`` (AutoGen's ``autogen.agentchat.contrib.text_analyzer_agent``).

An agent that answers a pair of messages — a TEXT, then INSTRUCTIONS — by asking its model to
apply the instructions to the text. Teachability and ImageGeneration use it as a helper::

    analyzer = TextAnalyzerAgent(llm_config=llm_config)
    analyzer.analyze_text("I was born in 1990.", "Does the TEXT mention a year? Answer yes or no.")
"""

from __future__ import annotations

from typing import Any, Literal

from ..agent import Agent
from ..conversable_agent import ConversableAgent

__all__ = ["TextAnalyzerAgent"]

system_message = (
    "You are a careful analyst of text.\n"
    "The user gives you a TEXT to analyze, together with INSTRUCTIONS that appear twice: once "
    "before the TEXT and once after it.\n"
    "Apply the INSTRUCTIONS to the TEXT and answer with the result of your analysis, in the form "
    "the INSTRUCTIONS ask for and nothing else."
)


class TextAnalyzerAgent(ConversableAgent):
    """Answers a TEXT message followed by an INSTRUCTIONS message with its model's analysis.

    The reply function it adds (before the model reply) expects exactly those two messages
    from the sender, as ``Teachability`` sends them after resetting the analyzer.
    """

    def __init__(
        self,
        name: str = "analyzer",
        system_message: str | None = system_message,
        human_input_mode: Literal["ALWAYS", "NEVER", "TERMINATE"] = "NEVER",
        llm_config: dict[str, Any] | Literal[False] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            name=name,
            system_message=system_message,
            human_input_mode=human_input_mode,
            llm_config=llm_config,
            **kwargs,
        )
        self.register_reply(Agent, TextAnalyzerAgent._analyze_in_reply, position=2)

    async def _analyze_in_reply(
        self,
        messages: list[dict[str, Any]] | None = None,
        sender: Agent | None = None,
        config: Any = None,
    ) -> tuple[bool, str | dict[str, Any] | None]:
        """The analysis of the sender's two messages (text, instructions) as a final reply."""
        if self.llm_config is False:
            raise ValueError(
                "TextAnalyzerAgent requires self.llm_config to be set in its base class."
            )
        if messages is None:
            messages = self.chat_messages[sender]
        if len(messages) != 2:
            raise AssertionError(
                f"TextAnalyzerAgent answers exactly two messages (the TEXT, then the "
                f"INSTRUCTIONS), got {len(messages)}; reset() the analyzer before each analysis"
            )
        text, instructions = messages[0].get("content"), messages[1].get("content")
        return True, await self.a_analyze_text(_as_text(text), _as_text(instructions))

    async def a_analyze_text(
        self, text_to_analyze: str, analysis_instructions: str
    ) -> str | dict[str, Any] | None:
        """Ask the model to apply ``analysis_instructions`` to ``text_to_analyze``: one request
        with the system message and one user message (instructions, text, instructions)."""
        instructions = f"# INSTRUCTIONS\n{analysis_instructions}\n"
        prompt = "\n".join([instructions, f"# TEXT\n{text_to_analyze}\n", instructions])
        _, reply = await self.a_generate_oai_reply(
            messages=[{"role": "user", "content": prompt}], sender=None, config=None
        )
        result: str | dict[str, Any] | None = reply
        return result

    def analyze_text(
        self, text_to_analyze: str, analysis_instructions: str
    ) -> str | dict[str, Any] | None:
        """The sync face of :meth:`a_analyze_text`."""
        from .._sync_chat import run_sync

        return run_sync(self.a_analyze_text(text_to_analyze, analysis_instructions))


def _as_text(content: Any) -> str:
    # A multimodal message is analysed by its text parts (an analyzer has no eyes).
    if isinstance(content, str):
        return content
    from ...code_utils import content_str

    return content_str(content)
