"""The shapes of the dicts parley takes and gives, for type checkers (AutoGen's ``autogen.types``).

Messages, tool calls and LLM configs are plain dicts at run time, as in AutoGen; these
``TypedDict`` s only let a type checker read them::

    from parley.types import ConfigEntry, LLMConfig, Message

    entry: ConfigEntry = {"model": "gpt-4o-mini", "api_key": "sk-..."}
    llm_config: LLMConfig = {"config_list": [entry], "temperature": 0, "cache_seed": None}
    message: Message = {"role": "user", "content": "Plot a chart of NVDA"}

A key a type lists is optional unless said otherwise (``total=False``); every key is checked for
its value's type, and a misspelt key is an error. A config may hold request parameters this
module does not list (any the model's API takes): build such a dict untyped, or add a
``# type: ignore[typeddict-unknown-key]``.

AutoGen 0.2 defines ``MessageContentType``, ``UserMessageTextContentPart`` and
``UserMessageImageContentPart`` in ``autogen.types``; they keep their names and meaning here.
This module imports only ``typing`` and ``collections.abc``: importing it costs next to nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, TypeAlias, TypedDict

__all__ = [
    "ConfigEntry",
    "ContentPart",
    "FunctionCall",
    "FunctionResponse",
    "FunctionSchema",
    "ImageURL",
    "JinjaTemplate",
    "LLMConfig",
    "Message",
    "MessageContentType",
    "Role",
    "TemplateContent",
    "ToolCall",
    "ToolResponse",
    "ToolResultContent",
    "ToolSchema",
    "UserMessageImageContentPart",
    "UserMessageTextContentPart",
]

# --- Message content ----------------------------------------------------------------------------

#: A message's ``content``: text, a list of content parts (the multimodal form), or ``None``
#: (a message that only proposes function or tool calls).
MessageContentType: TypeAlias = str | list[dict[str, Any] | str] | None


class UserMessageTextContentPart(TypedDict):
    """A text part of a multimodal message: ``{"type": "text", "text": "..."}``."""

    type: Literal["text"]
    text: str


class _ImageURLRequired(TypedDict):
    url: str


class ImageURL(_ImageURLRequired, total=False):
    """Where an image part's image is: an ``http(s)`` URL or a ``data:`` URL; ``url`` is
    required, ``detail`` optional."""

    detail: Literal["auto", "low", "high"]


class UserMessageImageContentPart(TypedDict):
    """An image part of a multimodal message:
    ``{"type": "image_url", "image_url": {"url": "..."}}``."""

    type: Literal["image_url"]
    image_url: ImageURL


#: One part of a multimodal ``content`` list.
ContentPart: TypeAlias = UserMessageTextContentPart | UserMessageImageContentPart


class JinjaTemplate(Protocol):
    """A ``jinja2.Template`` as template content: rendered with the message's ``context`` as
    keyword arguments (``template.render(**context)``). Only a ``jinja2.Template`` (or a
    subclass) is rendered; other objects with a ``render`` method are not templates."""

    def render(self, *args: Any, **kwargs: Any) -> str: ...


#: A template ``content``, filled with the message's ``context`` when the message is sent: a
#: callable given the context dict, or a ``jinja2.Template`` rendered with its keys. (A ``str``
#: is filled too, with ``str.format``, when the llm_config's ``allow_format_str_template`` is
#: true.) Without a context, a template is sent as it is.
TemplateContent: TypeAlias = Callable[[dict[str, Any]], str] | JinjaTemplate

# --- Function and tool calls ----------------------------------------------------------------------


class FunctionCall(TypedDict):
    """A call a model proposes: the function's name and its arguments as a JSON **string**."""

    name: str
    arguments: str


class ToolCall(TypedDict):
    """One entry of a message's ``tool_calls``; ``id`` pairs it with its ``ToolResponse``."""

    id: str
    type: Literal["function"]
    function: FunctionCall


#: What a tool's result sends the model: its text (as AutoGen made it), or,
#: when the tool returned a list of content parts with at least one image, those parts (each
#: client carries the images the way its API takes them: website/docs/tutorial/tools.md).
ToolResultContent: TypeAlias = str | list[ContentPart]


class _ToolResponseRequired(TypedDict):
    role: Literal["tool"]
    content: ToolResultContent


class ToolResponse(_ToolResponseRequired, total=False):
    """The result of one tool call, as bundled in a message's ``tool_responses``."""

    # Absent only when the call had no ``id`` (a model that sends none): nothing to pair with.
    tool_call_id: str


class FunctionResponse(TypedDict):
    """The result of a legacy ``function_call``: a message of role ``"function"``, also found
    in ``tool_responses`` when a human interrupted a message's calls (every call is answered)."""

    role: Literal["function"]
    name: str
    content: ToolResultContent


# --- Tool and function schemas -----------------------------------------------------------------


class _FunctionSchemaRequired(TypedDict):
    name: str


class FunctionSchema(_FunctionSchemaRequired, total=False):
    """A function described to a model: its name (required), what it does, and the JSON Schema
    of its arguments. An entry of an llm_config's legacy ``functions``, and the ``function`` of
    a :class:`ToolSchema`."""

    description: str
    parameters: dict[str, Any]
    strict: bool


class ToolSchema(TypedDict):
    """An entry of an llm_config's ``tools`` (what ``register_for_llm`` puts there):
    ``{"type": "function", "function": {"name": ..., "description": ..., "parameters": ...}}``."""

    type: Literal["function"]
    function: FunctionSchema


# --- Messages -----------------------------------------------------------------------------------

Role: TypeAlias = Literal["system", "user", "assistant", "function", "tool"]


class Message(TypedDict, total=False):
    """A conversation message, OpenAI chat style (the keys agents read and write).

    A bare string message ``"hi"`` means ``{"content": "hi"}``. A stored message always has
    ``content`` (``None`` when it only proposes ``function_call`` or ``tool_calls``) and
    ``role``; a ``role`` other than ``"function"`` or ``"tool"`` given by the caller is replaced
    by the receiving agent (``"user"``) or the sending one (``"assistant"``).
    """

    # A Sequence, not a list: a list of typed parts or of plain dicts can be passed as it is.
    # A callable is a template, filled from ``context`` when the message is sent.
    content: str | Sequence[ContentPart | dict[str, Any] | str] | TemplateContent | None
    role: Role
    #: The speaker (or, for role ``"function"``, the function) name.
    name: str
    #: A legacy single function call proposed by a model.
    function_call: FunctionCall
    tool_calls: list[ToolCall]
    #: parley and AutoGen bundle the results of a message's ``tool_calls`` under this key.
    tool_responses: list[ToolResponse | FunctionResponse]
    #: For a single tool response: which call it answers.
    tool_call_id: str
    #: Template variables for ``content`` (see ``OpenAIWrapper.instantiate``).
    context: dict[str, Any]
    #: Forces the role the message is stored with (group-chat speaker selection uses it).
    override_role: str
    #: parley's own: the reasoning items a Responses API model returned with this assistant
    #: message, sent back with it on the next turn (``api_type: "responses"``) and left out of
    #: every other request.
    parley_reasoning: list[dict[str, Any]]


# --- LLM configs ----------------------------------------------------------------------------------


class _RequestParameters(TypedDict, total=False):
    # Sent with every completion request (a config entry's values win over the call's).
    model: str
    temperature: float
    top_p: float
    max_tokens: int
    n: int
    stop: str | list[str] | None
    seed: int
    presence_penalty: float
    frequency_penalty: float
    logit_bias: dict[str, float]
    logprobs: bool
    top_logprobs: int
    response_format: dict[str, Any]
    stream: bool
    tools: list[dict[str, Any]]
    tool_choice: str | dict[str, Any]
    parallel_tool_calls: bool
    functions: list[dict[str, Any]]
    function_call: str | dict[str, Any]
    user: str
    extra_headers: dict[str, str]
    extra_query: dict[str, Any]
    extra_body: dict[str, Any]


class _ClientOptions(TypedDict, total=False):
    # Configure the OpenAI client object (never sent as request parameters).
    api_key: str
    base_url: str
    organization: str
    project: str
    timeout: float | None
    max_retries: int
    default_headers: dict[str, str]
    default_query: dict[str, Any]
    http_client: Any
    api_version: str
    azure_endpoint: str
    azure_deployment: str
    azure_ad_token: str
    azure_ad_token_provider: str | Callable[[], str]


class ConfigEntry(_RequestParameters, _ClientOptions, total=False):
    """One entry of a ``config_list`` (one line of an ``OAI_CONFIG_LIST`` file): an endpoint
    and model, tried in list order; ``model`` is in practice required."""

    #: ``"openai"`` (the default) or ``"azure..."``.
    api_type: str
    #: For ``filter_config`` only.
    tags: list[str]
    #: ``[prompt_price_per_1k, completion_price_per_1k]`` in USD, overriding the built-in table.
    price: list[float] | float
    #: At most this many requests per second through this entry.
    api_rate_limit: float
    #: The class name of a custom ``ModelClient``, registered with ``register_model_client``.
    model_client_cls: str
    #: parley: the seconds all retries of one request may take together.
    retry_budget: float


class LLMConfig(ConfigEntry, total=False):
    """An agent's ``llm_config`` (``OpenAIWrapper(**llm_config)``): the entries to try, and
    defaults that apply to every entry (an entry's own values win)."""

    # Sequence of either: a ``config_list_from_json(...)`` result (``list[dict[str, Any]]``)
    # and a ``list[ConfigEntry]`` both fit.
    config_list: Sequence[ConfigEntry | dict[str, Any]]
    #: Seed of the legacy disk cache (``None``: no caching); a ``cache=`` given to a chat wins.
    cache_seed: int | str | None
    #: A response cache (an ``AbstractCache``, e.g. ``Cache.disk()``).
    cache: Any
    #: ``filter_func(context=..., response=...) -> bool``: a rejected response moves on to the
    #: next entry.
    filter_func: Callable[..., bool]
    #: Whether string contents are ``str.format``-ted with a message's ``context``.
    allow_format_str_template: bool
    context: dict[str, Any]
