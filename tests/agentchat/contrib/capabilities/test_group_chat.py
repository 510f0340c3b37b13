"""Transforms in group chats, on the strict fake server: speaker selection through
``select_speaker_transform_messages``, and a long tool-using chat kept inside a small context
window by ``MessageTokenLimiter``."""

from __future__ import annotations

import itertools
from typing import Annotated, Any

import openai
import pytest

from parley import ConversableAgent, GroupChat, GroupChatManager, UserProxyAgent
from parley.agentchat.contrib.capabilities import (
    MessageHistoryLimiter,
    MessageTokenLimiter,
    TransformMessages,
)
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer
from parley.token_count_utils import count_token

from ..._spec_support import VARIANTS, call
from ._histories import pairing_errors

SELECTING = "You coordinate a conversation"
PAGE = "The archive page lists old records of the harbour, one line each, " * 6  # ~80 tokens


def is_selection(request: dict[str, Any]) -> bool:
    return str(request["messages"][0]["content"]).startswith(SELECTING)


def researcher(fake_llm: FakeLLMServer) -> ConversableAgent:
    return ConversableAgent(
        "researcher",
        system_message="Read the archive with fetch.",
        llm_config=fake_llm.llm_config(),
        human_input_mode="NEVER",
    )


def with_fetch(caller: ConversableAgent, executor: ConversableAgent, pages: list[int]) -> None:
    @executor.register_for_execution()
    @caller.register_for_llm(description="Fetch one page of the archive.")
    def fetch(page: Annotated[int, "page number"]) -> str:
        pages.append(page)
        return f"page {page}: {PAGE}"


def fetch_pages() -> Any:
    """A model that asks for page 1, 2, 3, ... one call per request."""
    numbers = itertools.count(1)

    def fetch_next(request: dict[str, Any]) -> dict[str, Any]:
        return {"tool_calls": [{"name": "fetch", "arguments": {"page": next(numbers)}}]}

    return fetch_next


@VARIANTS
async def test_speaker_selection_sees_transformed_histories(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    fetch_next = fetch_pages()

    def respond(request: dict[str, Any]) -> Any:
        if is_selection(request):
            return "researcher"
        return fetch_next(request)

    fake_llm.responder = respond
    research = researcher(fake_llm)
    executor = UserProxyAgent("executor", human_input_mode="NEVER", code_execution_config=False)
    pages: list[int] = []
    with_fetch(research, executor, pages)
    group = GroupChat(
        [executor, research],
        [],
        max_round=9,
        select_speaker_transform_messages=TransformMessages(
            transforms=[MessageHistoryLimiter(max_messages=2)], verbose=False
        ),
    )
    manager = GroupChatManager(group, llm_config=fake_llm.llm_config())
    with IOStream.set_default(IOScripted()):
        await call(variant, executor, "initiate_chat", manager, message="read the archive")
    selections = [r["messages"] for r in fake_llm.requests if is_selection(r)]
    assert selections, "the model chose speakers"
    for messages in selections:
        # The system message, then at most two: the newest call and result pair does not fit
        # beside the selection prompt, so it goes whole, never half.
        assert len(messages) <= 3
        assert not pairing_errors(messages)
    assert pages == [1, 2, 3, 4]


def long_chat(
    fake_llm: FakeLLMServer, transforms: TransformMessages | None
) -> tuple[GroupChat, Any]:
    fake_llm.responder = fetch_pages()
    research = researcher(fake_llm)
    executor = UserProxyAgent("executor", human_input_mode="NEVER", code_execution_config=False)
    with_fetch(research, executor, [])
    if transforms is not None:
        transforms.add_to_agent(research)
    group = GroupChat(
        [executor, research], [], max_round=30, speaker_selection_method="round_robin"
    )
    return group, GroupChatManager(group, llm_config=False)


WINDOW = 1000


@VARIANTS
async def test_a_long_tool_chat_overflows_a_small_window(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    fake_llm.context_window = WINDOW
    group, manager = long_chat(fake_llm, None)
    with IOStream.set_default(IOScripted()), pytest.raises(openai.BadRequestError) as raised:
        await call(variant, group.agents[0], "initiate_chat", manager, message="read it all")
    assert raised.value.code == "context_length_exceeded"
    assert len(group.messages) < 30


@VARIANTS
async def test_the_token_limiter_keeps_it_inside_the_window(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    fake_llm.context_window = WINDOW
    limiter = TransformMessages(transforms=[MessageTokenLimiter(max_tokens=400)], verbose=False)
    group, manager = long_chat(fake_llm, limiter)
    with IOStream.set_default(IOScripted()):
        await call(variant, group.agents[0], "initiate_chat", manager, message="read it all")
    assert len(group.messages) == 30  # ran to max_round
    requests = [r["messages"] for r in fake_llm.requests]
    assert len(requests) == 15
    for messages in requests:
        assert count_token(messages, model="gpt-4-0613") <= WINDOW
        assert not pairing_errors(messages)
    # The newest results are always there: each request ends with the newest page.
    assert requests[-1][-1]["content"].startswith("page 14: ")
