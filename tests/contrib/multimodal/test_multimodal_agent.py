"""MultimodalConversableAgent (website/docs/multimodal.md) in real chats on the fake server:
images in its messages reach the model as PNG data URIs, its history holds them as PIL images."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from parley import ConversableAgent, UserProxyAgent
from parley.agentchat.contrib.img_utils import get_pil_image, pil_to_data_uri
from parley.agentchat.contrib.multimodal_conversable_agent import (
    DEFAULT_LMM_SYS_MSG,
    DEFAULT_MODEL,
    MultimodalConversableAgent,
)
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

from .conftest import draw_picture, same_pixels


def _user() -> UserProxyAgent:
    return UserProxyAgent(
        "user", human_input_mode="NEVER", code_execution_config=False, max_consecutive_auto_reply=0
    )


def _viewer(server: FakeLLMServer, **kwargs: Any) -> MultimodalConversableAgent:
    kwargs.setdefault("human_input_mode", "NEVER")
    return MultimodalConversableAgent("viewer", llm_config=server.llm_config(), **kwargs)


def test_defaults() -> None:
    agent = MultimodalConversableAgent("viewer", llm_config=False)
    assert agent.system_message == [{"type": "text", "text": DEFAULT_LMM_SYS_MSG}]
    assert MultimodalConversableAgent.DEFAULT_CONFIG == {"model": DEFAULT_MODEL}
    assert DEFAULT_MODEL == "gpt-4-vision-preview"


def test_a_system_message_with_an_image(picture_file: Path, picture: Any) -> None:
    agent = MultimodalConversableAgent(
        "viewer", system_message=f"Compare with <img {picture_file}>.", llm_config=False
    )
    parts = agent.system_message
    assert [p["type"] for p in parts] == ["text", "image_url", "text"]
    assert same_pixels(parts[1]["image_url"]["url"], picture)
    agent.update_system_message("Just text.")
    assert agent.system_message == [{"type": "text", "text": "Just text."}]


def test_a_drawn_image_reaches_the_model(
    fake_llm: FakeLLMServer, picture_file: Path, picture: Any
) -> None:
    fake_llm.add_reply("A red bar, a blue disc and a green line.")
    viewer, user = _viewer(fake_llm), _user()
    io_ = IOScripted()
    with IOStream.set_default(io_):
        result = user.initiate_chat(viewer, message=f"What is in <img {picture_file}>?")

    request = fake_llm.received[-1]
    assert len(request.image_urls) == 1
    assert same_pixels(get_pil_image(request.image_urls[0]), picture)
    sent = request.json["messages"]
    assert sent[0] == {"role": "system", "content": [{"type": "text", "text": DEFAULT_LMM_SYS_MSG}]}
    assert [p["type"] for p in sent[1]["content"]] == ["text", "image_url", "text"]
    assert sent[1]["content"][0] == {"type": "text", "text": "What is in "}
    assert sent[1]["role"] == "user"

    # The viewer keeps the image as a PIL image; the user's own copy is the text it sent.
    stored = viewer.chat_messages[user][0]["content"]
    assert same_pixels(stored[1]["image_url"]["url"], picture)
    assert result.chat_history[0]["content"] == f"What is in <img {picture_file}>?"
    assert result.summary == "A red bar, a blue disc and a green line."
    # Printed with the image as <image>, never as base64.
    assert "What is in <image>?" in io_.text
    assert "base64" not in io_.text


def test_images_as_data_uris_and_content_parts(fake_llm: FakeLLMServer, picture: Any) -> None:
    other = draw_picture((20, 20))
    fake_llm.add_reply("Two pictures.")
    viewer, user = _viewer(fake_llm), _user()
    message = {
        "content": [
            {"type": "text", "text": f"Compare <img {pil_to_data_uri(picture)}> with "},
            {"type": "image_url", "image_url": {"url": pil_to_data_uri(other)}},
        ]
    }
    with IOStream.set_default(IOScripted()):
        user.initiate_chat(viewer, message=message)
    urls = fake_llm.received[-1].image_urls
    # The data URI in a text part of a list is sent as written (only str content is parsed).
    assert len(urls) == 1
    assert same_pixels(get_pil_image(urls[0]), other)


def test_a_conversation_sends_every_image_again(
    fake_llm: FakeLLMServer, picture_file: Path, picture: Any
) -> None:
    fake_llm.add_reply("A picture.")
    fake_llm.add_reply("Still the same picture.")
    viewer = _viewer(fake_llm)
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config=False,
        max_consecutive_auto_reply=1,
        default_auto_reply="And now?",
    )
    with IOStream.set_default(IOScripted()):
        user.initiate_chat(viewer, message=f"Look: <img {picture_file}>")
    first, second = fake_llm.received[-2:]
    assert len(first.image_urls) == len(second.image_urls) == 1
    assert second.image_urls == first.image_urls
    assert [m["role"] for m in second.json["messages"]] == ["system", "user", "assistant", "user"]
    assert second.json["messages"][-1]["content"] == [{"type": "text", "text": "And now?"}]


def test_a_reflection_summary_sends_the_images(
    fake_llm: FakeLLMServer, picture_file: Path, picture: Any
) -> None:
    fake_llm.add_reply("A drawing.")
    fake_llm.add_reply("The user asked about a drawing.")
    viewer, user = _viewer(fake_llm), _user()
    with IOStream.set_default(IOScripted()):
        result = user.initiate_chat(
            viewer, message=f"What is <img {picture_file}>?", summary_method="reflection_with_llm"
        )
    assert result.summary == "The user asked about a drawing."
    summary_request = fake_llm.received[-1]
    assert summary_request.json["messages"][-1]["role"] == "system"
    assert same_pixels(get_pil_image(summary_request.image_urls[0]), picture)


def test_terminate_in_list_content_ends_the_chat(fake_llm: FakeLLMServer) -> None:
    viewer, user = _viewer(fake_llm), _user()
    with IOStream.set_default(IOScripted()):
        result = user.initiate_chat(
            viewer, message={"content": [{"type": "text", "text": "TERMINATE"}]}
        )
    assert fake_llm.received == []
    assert result.termination_reason == "is_termination_msg"


async def test_an_async_chat(fake_llm: FakeLLMServer, picture_file: Path, picture: Any) -> None:
    fake_llm.add_reply("Async answer.")
    viewer, user = _viewer(fake_llm), _user()
    with IOStream.set_default(IOScripted()):
        result = await asyncio.wait_for(
            user.a_initiate_chat(viewer, message=f"<img {picture_file}> What is it?"), 30
        )
    assert result.summary == "Async answer."
    assert same_pixels(get_pil_image(fake_llm.received[-1].image_urls[0]), picture)


def test_generate_reply_directly(fake_llm: FakeLLMServer, picture: Any) -> None:
    fake_llm.add_reply("direct")
    viewer = _viewer(fake_llm)
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is it?"},
                {"type": "image_url", "image_url": {"url": picture}},
            ],
        }
    ]
    assert viewer.generate_reply(messages) == "direct"
    assert same_pixels(get_pil_image(fake_llm.received[-1].image_urls[0]), picture)
    assert messages[0]["content"][1]["image_url"]["url"] is picture  # not changed in place
    fake_llm.add_reply("again")
    assert viewer.generate_oai_reply(messages) == (True, "again")


def test_a_template_is_filled_as_the_base_agent_fills_it(fake_llm: FakeLLMServer) -> None:
    """The viewer's request is the base agent's (the same preparation), images encoded on top:
    a callable template is filled from its context, and the history keeps the filled text."""
    fake_llm.add_reply("filled")
    viewer, user = _viewer(fake_llm), _user()
    messages = [
        {"role": "user", "content": lambda context: f"n={context['n']}", "context": {"n": 3}}
    ]
    assert viewer.generate_reply(messages, user) == "filled"
    assert fake_llm.received[-1].json["messages"][-1]["content"] == "n=3"
    assert messages[0]["content"] == "n=3"


def test_a_plain_agent_receiving_from_the_viewer(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("I see nothing.")
    viewer = _viewer(fake_llm)
    plain = ConversableAgent(
        "plain", llm_config=False, human_input_mode="NEVER", max_consecutive_auto_reply=0
    )
    with IOStream.set_default(IOScripted()):
        plain.initiate_chat(viewer, message="Anything there?")
    assert plain.chat_messages[viewer][-1]["content"] == "I see nothing."


def test_bad_messages(picture: Any) -> None:
    with pytest.raises(AssertionError, match="must have a `content` field"):
        MultimodalConversableAgent._message_to_dict({"role": "user"})
    with pytest.raises(ValueError, match="Unsupported message type"):
        MultimodalConversableAgent._message_to_dict(42)
    io_ = IOScripted()
    with IOStream.set_default(io_), pytest.raises(ValueError, match="audio"):
        MultimodalConversableAgent._message_to_dict({"content": [{"type": "audio"}]})
    assert "compatible with the content_str function" in io_.text
    tool_call = {"tool_calls": [{"id": "1", "function": {"name": "f", "arguments": "{}"}}]}
    assert MultimodalConversableAgent._message_to_dict(tool_call) == tool_call


def test_strict_server_refuses_an_image_in_the_agents_own_message(
    fake_llm: FakeLLMServer, picture_file: Path
) -> None:
    """An image the agent sent itself is an assistant message's image, which OpenAI's API
    refuses: the fake refuses it too."""
    import openai

    viewer = _viewer(fake_llm)
    listener = ConversableAgent(
        "listener",
        llm_config=False,
        human_input_mode="NEVER",
        default_auto_reply="ok",
        max_consecutive_auto_reply=1,
    )
    with IOStream.set_default(IOScripted()), pytest.raises(openai.BadRequestError) as caught:
        viewer.initiate_chat(listener, message=f"Mine: <img {picture_file}>")
    assert "Image URLs are only allowed for messages with role 'user'" in str(caught.value)


def test_in_a_group_chat(fake_llm: FakeLLMServer, picture_file: Path, picture: Any) -> None:
    from parley import GroupChat, GroupChatManager

    fake_llm.add_reply("A drawing with a disc.")
    viewer, user = _viewer(fake_llm), _user()
    group = GroupChat(
        [user, viewer], messages=[], max_round=2, speaker_selection_method="round_robin"
    )
    manager = GroupChatManager(group, llm_config=False)
    with IOStream.set_default(IOScripted()):
        user.initiate_chat(manager, message=f"Team, what is <img {picture_file}>?")
    assert same_pixels(get_pil_image(fake_llm.received[-1].image_urls[0]), picture)
    assert group.messages[-1]["content"] == "A drawing with a disc."
    assert group.messages[0]["content"] == f"Team, what is <img {picture_file}>?"
