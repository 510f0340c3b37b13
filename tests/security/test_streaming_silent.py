"""Streamed replies respect the chat's ``silent``, and a stream cut off part-way does not leave
its partial text on screen looking like the answer."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest

from parley import ConversableAgent, GroupChat, GroupChatManager
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

VARIANTS = pytest.mark.parametrize("variant", ["sync", "async"])
PARTIAL = "partial words that are cut off before the end"
FULL = "the complete answer"
CUT_NOTICE = "cut off"


async def call(variant: str, obj: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    if variant == "async":
        return await getattr(obj, "a_" + method)(*args, **kwargs)
    return await asyncio.to_thread(getattr(obj, method), *args, **kwargs)


def streaming(server: FakeLLMServer, name: str = "assistant", **kwargs: Any) -> ConversableAgent:
    config = {"config_list": server.config_list(stream=True), "cache_seed": None}
    return ConversableAgent(name, llm_config=config, human_input_mode="NEVER", **kwargs)


def user(**kwargs: Any) -> ConversableAgent:
    return ConversableAgent("user", llm_config=False, human_input_mode="NEVER", **kwargs)


def script_cut_then_full(server: FakeLLMServer) -> None:
    server.add_reply(PARTIAL, drop_after_chunks=3)
    server.add_reply(FULL)


@VARIANTS
async def test_silent_chat_prints_nothing_streamed(variant: str, fake_llm: FakeLLMServer) -> None:
    script_cut_then_full(fake_llm)
    sender, assistant = user(), streaming(fake_llm)
    with IOStream.set_default(IOScripted()) as io:
        result = await call(
            variant, sender, "initiate_chat", assistant, message="hi", max_turns=1, silent=True
        )
    assert result.chat_history[-1]["content"] == FULL
    assert len(fake_llm.requests) == 2  # the cut stream was retried
    assert io.text == ""


@VARIANTS
async def test_silent_send_prints_nothing_streamed(variant: str, fake_llm: FakeLLMServer) -> None:
    script_cut_then_full(fake_llm)
    sender, assistant = user(), streaming(fake_llm)
    with IOStream.set_default(IOScripted()) as io:
        await call(variant, sender, "send", "hi", assistant, request_reply=True, silent=True)
    assert sender.chat_messages[assistant][-1]["content"] == FULL
    assert io.text == ""


async def test_agent_level_silent_prints_nothing_streamed(fake_llm: FakeLLMServer) -> None:
    """The replying agent's own ``silent=True`` hides its messages, so also their stream."""
    fake_llm.add_reply(FULL)
    sender, assistant = user(), streaming(fake_llm, silent=True)
    with IOStream.set_default(IOScripted()) as io:
        await sender.a_initiate_chat(assistant, message="hi", max_turns=1)
    assert FULL not in io.text
    assert "hi" in io.text  # the user's message is still printed


async def test_agent_level_silent_false_streams_in_a_silent_chat(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(FULL)
    sender, assistant = user(), streaming(fake_llm, silent=False)
    with IOStream.set_default(IOScripted()) as io:
        await sender.a_initiate_chat(assistant, message="hi", max_turns=1, silent=True)
    assert io.text.count(FULL) == 2  # streamed, then printed by the receiver


async def test_silent_group_chat_prints_nothing_streamed(fake_llm: FakeLLMServer) -> None:
    script_cut_then_full(fake_llm)
    initiator = user()
    writer = streaming(fake_llm, "writer")
    chat = GroupChat(
        agents=[initiator, writer], messages=[], max_round=2, speaker_selection_method="round_robin"
    )
    manager = GroupChatManager(chat, llm_config=False, silent=True)
    with IOStream.set_default(IOScripted()) as io:
        await initiator.a_initiate_chat(manager, message="go", silent=True)
    assert [m["content"] for m in chat.messages] == ["go", FULL]
    assert io.text == ""


async def test_silent_reflection_summary_prints_nothing_streamed(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(FULL)
    fake_llm.add_reply("the summary")
    sender, assistant = user(), streaming(fake_llm)
    with IOStream.set_default(IOScripted()) as io:
        result = await sender.a_initiate_chat(
            assistant,
            message="hi",
            max_turns=1,
            silent=True,
            summary_method="reflection_with_llm",
        )
    assert result.summary == "the summary"
    assert io.text == ""


@VARIANTS
async def test_a_cut_stream_is_marked_as_not_part_of_the_chat(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    script_cut_then_full(fake_llm)
    sender, assistant = user(), streaming(fake_llm)
    with IOStream.set_default(IOScripted()) as io:
        result = await call(variant, sender, "initiate_chat", assistant, message="hi", max_turns=1)
    assert result.chat_history[-1]["content"] == FULL
    text = io.text
    partial = text.index("partial")
    notice = text.index(CUT_NOTICE, partial)
    # The partial text is closed by a line of its own saying it is not the answer, then the
    # retry streams the answer again from the start.
    notice_line = text[text.rindex("\n", 0, notice) + 1 : text.index("\n", notice)]
    assert "not part of the chat" in notice_line
    assert "partial" not in notice_line
    assert text.index(FULL) > notice
    assert PARTIAL not in text  # it was cut


async def test_a_stream_cut_with_no_retry_left_is_marked_too(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(PARTIAL, drop_after_chunks=3)
    config = {
        "config_list": fake_llm.config_list(stream=True, max_retries=0),
        "cache_seed": None,
    }
    assistant = ConversableAgent("assistant", llm_config=config, human_input_mode="NEVER")
    sender = user()
    with IOStream.set_default(IOScripted()) as io, pytest.raises(openai.APIConnectionError):
        await sender.a_initiate_chat(assistant, message="hi", max_turns=1)
    assert "partial" in io.text
    assert "not part of the chat" in io.text
    assert [m["content"] for m in sender.chat_messages[assistant]] == ["hi"]


async def test_speaker_selection_streams_only_when_verbose(fake_llm: FakeLLMServer) -> None:
    """The "auto" selection's own chat is shown only with select_speaker_auto_verbose, so is
    the stream of its answer."""
    fake_llm.responder = lambda request: "I pick writer"
    initiator = user()
    writer = ConversableAgent("writer", llm_config=False, default_auto_reply="written")
    chat = GroupChat(agents=[initiator, writer], messages=[], max_round=2)
    config = {"config_list": fake_llm.config_list(stream=True), "cache_seed": None}
    manager = GroupChatManager(chat, llm_config=config)
    with IOStream.set_default(IOScripted()) as io:
        await initiator.a_initiate_chat(manager, message="go")
    assert [m["content"] for m in chat.messages] == ["go", "written"]
    assert "I pick" not in io.text
    assert "Next speaker: writer" in io.text
