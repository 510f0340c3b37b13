"""``MultimodalConversableAgent`` (AutoGen's
``autogen.agentchat.contrib.multimodal_conversable_agent``): an agent whose messages hold images.

Every message it stores, sent or received, is kept as content parts: each ``<img src>`` tag of a
text becomes an ``image_url`` part holding the loaded PIL image (a local file, a data URI,
base64 text; an http(s) URL only when downloads are allowed, see
:mod:`parley.agentchat.contrib.img_utils`), between text parts. The images become PNG data URIs
only in the request to the model. Its system message is content parts too, so
``agent.system_message`` is a list. Printing shows an image as ``<image>``.

Needs Pillow: ``pip install 'parley[lmm]'``.

Differences from AutoGen, on purpose: the model request is built as the base agent builds it
(a template filled from its context, tool results expanded, parley's own keys such as
``context`` left out, names checked; only the images are encoded on top) and goes through the
chat's ``cache``; a tool call in the model's answer is kept as the base agent keeps
it; a received message's images are loaded once (AutoGen loaded them again to print them, a
second download for a URL); a dict message with a tool or function call but no ``content`` is
accepted; a ``reflection_with_llm`` summary of its chat sends its images as data URIs (AutoGen's
request failed on the PIL images).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._core.runtime import to_thread
from ...code_utils import content_str
from ...io import IOStream
from ...types import Message
from .._messages import nothing_to_store
from .._replies import Request, generate_oai_reply, prepare_request
from .._state import as_dicts
from .._sync_chat import sync_face
from ..conversable_agent import ConversableAgent
from .img_utils import gpt4v_formatter, message_formatter_pil_to_b64

__all__ = ["DEFAULT_LMM_SYS_MSG", "DEFAULT_MODEL", "MultimodalConversableAgent"]

DEFAULT_LMM_SYS_MSG = "You are a helpful AI assistant."
DEFAULT_MODEL = "gpt-4-vision-preview"


def _is_terminate(message: dict[str, Any]) -> bool:
    return content_str(message.get("content")) == "TERMINATE"


class MultimodalConversableAgent(ConversableAgent):
    """A :class:`ConversableAgent` whose messages and system message are content parts with
    images; see the module docstring."""

    DEFAULT_CONFIG: Any = {"model": DEFAULT_MODEL}  # noqa: RUF012 - AutoGen's class attribute

    def __init__(
        self,
        name: str,
        system_message: str | list[Any] | None = DEFAULT_LMM_SYS_MSG,
        is_termination_msg: Callable[[dict[str, Any]], bool] | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            name,
            system_message,
            is_termination_msg if is_termination_msg is not None else _is_terminate,
            *args,
            **kwargs,
        )
        # The system message as content parts: its <img> tags are images too.
        self.update_system_message(system_message)  # type: ignore[arg-type]

    def _builtin_replies(self) -> list[tuple[Callable[..., Any], Callable[..., Any]]]:
        # The model reply is this class's, in the base reply's place.
        return [
            (MultimodalConversableAgent.generate_oai_reply, _multimodal_oai_reply)
            if public is ConversableAgent.generate_oai_reply
            else (public, impl)
            for public, impl in super()._builtin_replies()
        ]

    def update_system_message(self, system_message: str | list[Any]) -> None:
        """Set the system message; a str is turned into content parts (``<img>`` tags become
        images)."""
        self._oai_system_message[0]["content"] = self._message_to_dict(system_message)["content"]

    @property
    def system_message(self) -> list[Any]:  # type: ignore[override]
        """The system message, as content parts."""
        content: list[Any] = self._oai_system_message[0]["content"]
        return content

    @staticmethod
    def _message_to_dict(message: Any) -> dict[str, Any]:
        """A message as the agent stores it: a str becomes content parts with its ``<img>``
        tags loaded as PIL images; a list is the content; a dict's str content is converted
        the same way (the dict is copied, not changed)."""
        if isinstance(message, str):
            return {"content": gpt4v_formatter(message, img_format="pil")}
        if isinstance(message, list):
            return {"content": message}
        if not isinstance(message, dict) and callable(getattr(message, "model_dump", None)):
            message = message.model_dump(exclude_none=True)  # an openai message object
        if not isinstance(message, dict):
            raise ValueError(f"Unsupported message type: {type(message)}")
        if "content" not in message and not (
            message.get("tool_calls") or message.get("function_call")
        ):
            raise AssertionError("The message dict must have a `content` field")
        content = message.get("content")
        if isinstance(content, str):
            message = {**message, "content": gpt4v_formatter(content, img_format="pil")}
        elif content is not None:
            try:
                content_str(content)
            except (TypeError, ValueError, AssertionError):
                IOStream.get_default().print(
                    "The `content` field should be compatible with the content_str function!"
                )
                raise
        stored: dict[str, Any] = message
        return stored

    def _process_received_message(self, message: Any, sender: Any, silent: Any) -> None:
        # Printed from what was stored, so that its images are not loaded a second time.
        if not self._append_oai_message(message, "user", sender, False):
            nothing_to_store(False, self.name, getattr(sender, "name", ""), message)
        if not self._is_silent(sender, silent):
            self._print_received_message(self.state.messages[sender][-1], sender)

    def chat_messages_for_summary(self, agent: Any) -> list[dict[str, Any]]:
        """The history with ``agent`` for a ``reflection_with_llm`` summary, its images as PNG
        data URIs (a request cannot carry a PIL image)."""
        return message_formatter_pil_to_b64(as_dicts(self.state.messages[agent]))

    async def a_generate_oai_reply(
        self, messages: Any = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, Any]:
        """Ask the agent's model, its images sent as PNG data URIs."""
        return await _multimodal_oai_reply(self, messages, sender, config)

    generate_oai_reply = sync_face(a_generate_oai_reply)


async def _multimodal_request(agent: Any, messages: list[Message], sender: Any) -> Request:
    # The base agent's request (template filled, built by the memo), its images then encoded;
    # encoding images as PNG takes CPU time: not on the event loop.
    context, request = await prepare_request(agent, messages, sender)
    return context, await to_thread(message_formatter_pil_to_b64, list(request))


async def _multimodal_oai_reply(
    agent: Any, messages: Any = None, sender: Any = None, config: Any = None
) -> tuple[bool, Any]:
    return await generate_oai_reply(agent, messages, sender, config, prepare=_multimodal_request)
