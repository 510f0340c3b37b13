"""``VisionCapability`` (AutoGen's ``vision_capability``): a text-only agent reads images through
their captions.

Added to an agent, it registers a ``process_last_received_message`` hook: each image in the
last received message (an ``<img src>`` tag in a text, or an ``image_url`` content part) is
captioned, by a multimodal model (``lmm_config``) or by ``custom_caption_func``, and the
message the agent's model reads becomes text, each image as
``<img src> in case you can not see, the caption of this image is: ...``.

Needs Pillow: ``pip install 'parley[lmm]'``.

Differences from AutoGen, on purpose: as every parley hook, it changes what the model reads,
not the stored message (README, "Hooks don't rewrite history"); so that the model still reads
earlier images as their captions (AutoGen's hook wrote them into the history), a second hook,
on ``process_all_messages_before_reply``, puts each captioned text back in its place, and a
message is captioned once; an image given as a data URI
or a PIL image is named ``<image>`` in the text instead of being written out (its base64 text
would only cost a text model tokens); the checks hold under ``python -O``; a system message
that is a list of content parts gets the capability's sentence as a text part; the warning
about an unknown part type goes to the current ``IOStream``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....code_utils import content_str
from ..img_utils import convert_base64_to_data_uri, get_image_data, get_pil_image, gpt4v_formatter
from .agent_capability import AgentCapability

__all__ = ["DEFAULT_DESCRIPTION_PROMPT", "VisionCapability"]

DEFAULT_DESCRIPTION_PROMPT = (
    "Write a detailed caption for this image. Pay special attention to any details that might "
    "be useful or relevant to the ongoing conversation."
)
_SYSTEM_SENTENCE = "You've been given the ability to interpret images."


class VisionCapability(AgentCapability):
    """Let an agent without vision read the images it receives, as captions.

    Args:
        lmm_config: the ``llm_config`` of a multimodal model that writes the captions (an
            ``OpenAIWrapper`` is built from it now), or a falsy value with
            ``custom_caption_func``.
        description_prompt: what the multimodal model is asked with each image (None: the
            default).
        custom_caption_func: ``func(image_url, pil_image, lmm_client) -> str`` writing the
            caption instead of the model (``lmm_client`` is None without ``lmm_config``).
    """

    def __init__(
        self,
        lmm_config: dict[str, Any] | None,
        description_prompt: str | None = DEFAULT_DESCRIPTION_PROMPT,
        custom_caption_func: Callable[..., str] | None = None,
    ) -> None:
        if not (lmm_config or custom_caption_func):
            raise AssertionError(
                "Vision Capability requires a valid lmm_config or custom_caption_func."
            )
        self._lmm_config = lmm_config
        # None would send a text part without text, which the API refuses: the default then.
        self._description_prompt = description_prompt or DEFAULT_DESCRIPTION_PROMPT
        self._parent_agent: Any = None
        self._custom_caption_func = custom_caption_func
        self._lmm_client: Any = None
        # The text each captioned message became, by its text: the model reads earlier
        # messages with their captions too, as in AutoGen (whose hook rewrote the history).
        self._captioned: dict[str, str] = {}
        if lmm_config:
            from ....oai import OpenAIWrapper

            self._lmm_client = OpenAIWrapper(**lmm_config)

    def add_to_agent(self, agent: Any) -> None:
        """Tell the agent (in its system message) it can interpret images, and caption the
        images of each message it receives."""
        self._parent_agent = agent
        system = agent.system_message
        if isinstance(system, list):
            agent.update_system_message(
                [*system, {"type": "text", "text": "\n" + _SYSTEM_SENTENCE}]
            )
        else:
            agent.update_system_message(f"{system or ''}\n{_SYSTEM_SENTENCE}")
        agent.register_hook(
            hookable_method="process_last_received_message",
            hook=self.process_last_received_message,
        )
        agent.register_hook(
            hookable_method="process_all_messages_before_reply", hook=self._with_captions
        )

    def process_last_received_message(self, content: str | list[dict[str, Any]]) -> str:
        """``content`` as text, each image followed by its caption (see the module docstring).
        A str's ``<img src>`` tags are the images (nothing is loaded but what is captioned);
        a str captioned before is not captioned again."""
        original = content
        if isinstance(content, str):
            if content in self._captioned:
                return self._captioned[content]
            content = gpt4v_formatter(content, img_format="url")
        text = ""
        for item in content:
            if not isinstance(item, dict):
                raise AssertionError(f"a content part must be a dict, got {item!r}")
            kind = item.get("type")
            if kind == "text":
                text += item.get("text", "")
            elif kind == "image_url":
                url = item["image_url"]["url"]
                caption = self._caption(url)
                text += (
                    f"{_tag(url)} in case you can not see, the caption of this image is: "
                    f"{caption}\n"
                )
            else:
                from ....io import IOStream

                # AutoGen's words, "test" (sic) included.
                IOStream.get_default().print(
                    "Warning: the input type should either be `test` or `image_url`. "
                    f"Skip {kind} here."
                )
        if isinstance(original, str) and text != original:
            self._captioned[original] = text
        return text

    def _with_captions(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``messages`` with each earlier captioned message as its captioned text (copies)."""
        if not self._captioned:
            return messages
        out = []
        for message in messages:
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, str) and content in self._captioned:
                message = {**message, "content": self._captioned[content]}
            out.append(message)
        return out

    def _caption(self, url: Any) -> str:
        if self._custom_caption_func is not None:
            return str(self._custom_caption_func(url, get_pil_image(url), self._lmm_client))
        if self._lmm_client is not None:
            data = get_image_data(url)
            assert isinstance(data, str)
            return self._get_image_caption(data)
        return ""

    def _get_image_caption(self, img_data: str) -> str:
        """The multimodal model's caption of an image given as base64 text."""
        response = self._lmm_client.create(
            context=None,
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": self._description_prompt},
                        {
                            "type": "image_url",
                            "image_url": {"url": convert_base64_to_data_uri(img_data)},
                        },
                    ],
                }
            ],
            agent=self._parent_agent,
        )
        answer = self._lmm_client.extract_text_or_completion_object(response)[0]
        return content_str(answer if isinstance(answer, (str, list)) else None)


def _tag(url: Any) -> str:
    """How an image shows in the text: its ``<img>`` tag when it has a short name (a path, a
    URL), ``<image>`` for image data."""
    if isinstance(url, str) and not url.startswith("data:"):
        return f"<img {url}>"
    return "<image>"
