"""VisionCapability (website/docs/multimodal.md): a text-only agent reads the images it receives as
captions, written by a multimodal model on a fake server or by a custom function."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from parley import AssistantAgent, ConversableAgent, UserProxyAgent
from parley.agentchat.contrib.capabilities.vision_capability import (
    DEFAULT_DESCRIPTION_PROMPT,
    VisionCapability,
)
from parley.agentchat.contrib.img_utils import get_pil_image, pil_to_data_uri
from parley.agentchat.contrib.multimodal_conversable_agent import MultimodalConversableAgent
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

from .conftest import same_pixels

CAPTION_LINE = "in case you can not see, the caption of this image is: "


@pytest.fixture
def lmm() -> Iterator[FakeLLMServer]:
    """The multimodal model that writes captions (the agent's own model is ``fake_llm``)."""
    with FakeLLMServer() as server:
        yield server


def _pair(server: FakeLLMServer) -> tuple[UserProxyAgent, ConversableAgent]:
    user = UserProxyAgent(
        "user", human_input_mode="NEVER", code_execution_config=False, max_consecutive_auto_reply=0
    )
    helper = ConversableAgent(
        "helper",
        system_message="You answer questions.",
        llm_config=server.llm_config(),
        human_input_mode="NEVER",
    )
    return user, helper


def test_the_lmm_captions_the_image(
    fake_llm: FakeLLMServer, lmm: FakeLLMServer, picture_file: Path, picture: Any
) -> None:
    lmm.add_reply("A red bar beside a blue disc.")
    fake_llm.add_reply("It shows a red bar and a blue disc.")
    user, helper = _pair(fake_llm)
    VisionCapability(lmm.llm_config()).add_to_agent(helper)
    assert helper.system_message == (
        "You answer questions.\nYou've been given the ability to interpret images."
    )
    with IOStream.set_default(IOScripted()):
        result = user.initiate_chat(helper, message=f"What is in <img {picture_file}>?")

    # The multimodal model got the description prompt and the image.
    caption_request = lmm.received[-1].json["messages"]
    assert caption_request[0]["content"][0] == {"type": "text", "text": DEFAULT_DESCRIPTION_PROMPT}
    assert same_pixels(get_pil_image(lmm.received[-1].image_urls[0]), picture)
    # The agent's own model read text only, the caption in place of the image.
    last = fake_llm.received[-1].json["messages"][-1]
    assert last["content"] == (
        f"What is in <img {picture_file}> {CAPTION_LINE}A red bar beside a blue disc.\n?"
    )
    assert fake_llm.received[-1].image_urls == []
    assert result.summary == "It shows a red bar and a blue disc."
    # parley's hooks change what the model reads, not the stored message.
    assert helper.chat_messages[user][0]["content"] == f"What is in <img {picture_file}>?"


def test_a_custom_caption_function(
    fake_llm: FakeLLMServer, picture_file: Path, picture: Any
) -> None:
    seen: list[tuple[Any, Any, Any]] = []

    def caption(url: Any, image: Any, client: Any) -> str:
        seen.append((url, image, client))
        return f"a {image.width}x{image.height} drawing"

    fake_llm.add_reply("ok")
    user, helper = _pair(fake_llm)
    VisionCapability(lmm_config=None, custom_caption_func=caption).add_to_agent(helper)
    with IOStream.set_default(IOScripted()):
        user.initiate_chat(helper, message=f"<img {picture_file}> and <img {picture_file}>")
    assert len(seen) == 2
    url, image, client = seen[0]
    assert url == str(picture_file)
    assert same_pixels(image, picture)
    assert client is None
    sent = fake_llm.received[-1].json["messages"][-1]["content"]
    expected = f"<img {picture_file}> {CAPTION_LINE}a 48x32 drawing\n"
    assert sent == f"{expected} and {expected}"
    assert len(fake_llm.received) == 1  # only the agent's own model was asked


def test_image_parts_and_data_uris(
    fake_llm: FakeLLMServer, lmm: FakeLLMServer, picture: Any
) -> None:
    lmm.add_reply("a drawing")
    fake_llm.add_reply("ok")
    capability = VisionCapability(lmm.llm_config(), description_prompt="Describe briefly.")
    helper = AssistantAgent("helper", llm_config=fake_llm.llm_config())
    capability.add_to_agent(helper)
    content = [
        {"type": "text", "text": "Look: "},
        {"type": "image_url", "image_url": {"url": pil_to_data_uri(picture)}},
    ]
    text = capability.process_last_received_message(content)
    # Image data is named, not written out: a text model gains nothing from base64.
    assert text == f"Look: <image> {CAPTION_LINE}a drawing\n"
    assert lmm.received[-1].json["messages"][0]["content"][0]["text"] == "Describe briefly."
    assert same_pixels(get_pil_image(lmm.received[-1].image_urls[0]), picture)


def test_a_multimodal_agent_with_the_capability(
    fake_llm: FakeLLMServer, picture_file: Path
) -> None:
    agent = MultimodalConversableAgent("viewer", llm_config=fake_llm.llm_config())
    VisionCapability(None, custom_caption_func=lambda url, image, client: "pic").add_to_agent(agent)
    assert agent.system_message[-1] == {
        "type": "text",
        "text": "\nYou've been given the ability to interpret images.",
    }
    stored = MultimodalConversableAgent._message_to_dict(f"see <img {picture_file}>")["content"]
    capability_text = agent.hook_lists["process_last_received_message"][0](stored)
    assert capability_text == f"see <image> {CAPTION_LINE}pic\n"


def test_unknown_parts_are_skipped_with_a_warning() -> None:
    capability = VisionCapability(None, custom_caption_func=lambda *a: "x")
    io_ = IOScripted()
    with IOStream.set_default(io_):
        text = capability.process_last_received_message(
            [{"type": "text", "text": "hi"}, {"type": "input_audio", "input_audio": {}}]
        )
    assert text == "hi"
    assert "Skip input_audio here." in io_.text
    with pytest.raises(AssertionError):
        capability.process_last_received_message(["not a dict"])  # type: ignore[list-item]


def test_it_needs_a_model_or_a_function() -> None:
    with pytest.raises(
        AssertionError,
        match=r"Vision Capability requires a valid lmm_config or custom_caption_func\.",
    ):
        VisionCapability(lmm_config={})


def test_earlier_images_keep_their_captions(
    fake_llm: FakeLLMServer, lmm: FakeLLMServer, picture_file: Path
) -> None:
    lmm.add_reply("first caption")
    fake_llm.add_reply("one")
    fake_llm.add_reply("two")
    helper = ConversableAgent("helper", llm_config=fake_llm.llm_config(), human_input_mode="NEVER")
    VisionCapability(lmm.llm_config()).add_to_agent(helper)
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config=False,
        max_consecutive_auto_reply=1,
        default_auto_reply="And the colours?",
    )
    with IOStream.set_default(IOScripted()):
        user.initiate_chat(helper, message=f"Look: <img {picture_file}>")
    second = fake_llm.received[-1].json["messages"]
    assert second[1]["content"] == f"Look: <img {picture_file}> {CAPTION_LINE}first caption\n"
    assert second[-1]["content"] == "And the colours?"
    assert len(lmm.received) == 1  # captioned once
    assert helper.chat_messages[user][0]["content"] == f"Look: <img {picture_file}>"


def test_autogens_examples(lmm: FakeLLMServer, picture_file: Path) -> None:
    # AutoGen's examples, with a picture drawn here (AutoGen's test_image.png is a Git LFS
    # pointer in its archive) and the caption written by the fake multimodal model.
    lmm.add_reply("A sample image caption.")
    vision = VisionCapability(lmm.llm_config(), custom_caption_func=None)
    agent = ConversableAgent(name="conversable agent", llm_config=False)
    vision.add_to_agent(agent)
    assert callable(agent.process_last_received_message)
    text = "Test message without image"
    assert vision.process_last_received_message(text) == text
    content = [{"type": "image_url", "image_url": {"url": str(picture_file)}}]
    assert vision.process_last_received_message(content) == (
        f"<img {picture_file}> {CAPTION_LINE}A sample image caption.\n"
    )
    assert len(lmm.received) == 1  # text alone asked the model nothing

    def describe(image_url: str, image_data: Any = None, lmm_client: Any = None) -> str:
        return f"An image description. The image is from {image_url}."

    custom = VisionCapability(lmm.llm_config(), custom_caption_func=describe)
    captioned = custom.process_last_received_message(content)
    assert f" An image description. The image is from {picture_file}." in captioned
    assert len(lmm.received) == 1
