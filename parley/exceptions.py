"""Every error parley raises on purpose, in one tree.

::

    Exception
    ├── ParleyError                          base of parley's own errors
    │   ├── ConfigError (+ ValueError)       an llm_config / config_list entry is malformed
    │   │   ├── DotenvSyntaxError            a .env line is not KEY=VALUE (file and line given)
    │   │   └── ConfigOptionError (+ TypeError)  an option's value is none it can take (hide_tools)
    │   ├── ModelClientError (+ RuntimeError) a model client is not registered
    │   ├── LocalModelUnavailableError (+ RuntimeError)  the `local` extra is not installed
    │   ├── CompletionError                  a completion request failed
    │   │   ├── AllConfigsFailedError        every config in the list failed; ``failures`` says how
    │   │   ├── StructuredOutputError (+ ValueError)  a reply does not fit its response_format
    │   │   │                                after its retries; the raw reply, schema, problems
    │   │   └── ModelAPIError                a model provider's API refused or failed a request
    │   │       ├── RateLimitError           429 / throttled; ``retry_after`` when the provider said
    │   │       ├── AuthenticationError      401 / 403: the credentials were refused
    │   │       ├── BadRequestError          400, 404, 413, 422: the request itself is wrong
    │   │       ├── ModelServerError         5xx: the provider failed
    │   │       │   └── MalformedResponseError  an answer that is no reply: not JSON, the wrong
    │   │       │                                shape or types, empty with no reason given
    │   │       └── ModelConnectionError     no answer: connection refused, reset or timed out
    │   ├── GroupChatConfigError (+ ValueError)  a GroupChat setting (``visibility``) is malformed
    │   ├── InvalidAgentNameError (+ ValueError)  an agent name OpenAI rejects as a message name
    │   ├── InvalidMessageError (+ ValueError, TypeError)  a message no model request could carry
    │   ├── JupyterGatewayError (+ OSError)  a Jupyter kernel gateway refused a request or went away
    │   ├── ArgumentsValidationError (+ ValueError)  a model's tool arguments do not fit the function
    │   ├── OutsideWorkDirError (+ ValueError)  a code block's file would land outside the work dir
    │   ├── UnsafeCodeFileError (+ OSError)  a code block's file name is a FIFO, link, device...
    │   ├── InvalidRequirementError (+ ValueError)  a python_packages entry is not a requirement
    │   ├── DangerousCommandError (+ ValueError)  the local executor refused a destructive shell command
    │   ├── UnsafeWorkDirError (+ ValueError)  a work dir holds a cache, a venv, sources, keys, logs
    │   ├── ExecutionCancelledError          a code block was stopped because its chat was cancelled
    │   ├── ImageBuildError (+ RuntimeError)  `parley sandbox build` could not build an image
    │   ├── SandboxUnavailableError (+ RuntimeError)  bubblewrap (``sandbox=True``) cannot run here
    │   ├── RayStartError (+ RuntimeError)  a batch's new Ray instance did not start in time
    │   ├── InputExhaustedError (+ EOFError)  a scripted human (IOScripted) ran out of answers
    │   ├── RunError                         a run (``agent.run``) cannot give what was asked
    │   │   ├── InputRequestError (+ RuntimeError)  an input request answered twice, after its
    │   │   │                                run ended, or not from a run (a parsed event)
    │   │   ├── InputTimeoutError (+ TimeoutError)  nobody answered a run's input request in time
    │   │   └── RunNotFinishedError (+ RuntimeError)  a run's result read while it waits for an
    │   │                                    input nobody can answer (its events are not read)
    │   ├── ImageLoadError (+ ValueError)     an image (path, URL, data URI, base64) could not be loaded
    │   │   └── ImageDownloadNotAllowedError  an image URL was not fetched: downloads are off by default
    │   ├── DocumentRefusedError             RetrieveChat refused a document over its read limits
    │   ├── AgentBuilderError (+ RuntimeError)  AgentBuilder's models or config are unusable
    │   ├── AgentLibraryError (+ ValueError)  an agent library unreadable, or a bad selection from it
    │   ├── WolframAlphaUnavailableError (+ RuntimeError)  a wolfram query without an app id
    │   ├── BudgetExceededError              a model request was refused: its chat's budget is spent
    │   ├── DurableChatError (+ RuntimeError)  a durable chat cannot start, record or resume
    │   │   ├── ReplayDivergedError          a resumed chat took another path than its journal
    │   │   ├── UncertainToolCallError       a non-idempotent tool was running when its chat stopped
    │   │   ├── JournalIntegrityError        a journal record is forged, altered, moved or unreadable
    │   │   └── ChatLeaseError               the chat is running in another process (its lease)
    │   ├── MCPError                         an MCP server (``parley.mcp``) could not be used
    │   │   ├── MCPConfigError (+ ValueError)  an ``mcpServers`` entry is malformed (which, why)
    │   │   ├── MCPToolNameError (+ ValueError)  an MCP tool's name collides with a registered one
    │   │   └── MCPCallError                 a call failed: an error result, a timeout, a dead
    │   │                                    server (the model reads its text as the tool's result)
    │   ├── RedactedError                    stands in, in a chain of errors, for one whose text
    │   │                                    held a credential that could not be scrubbed in place
    │   └── ChatPaused                       not an error: a durable chat stopped to wait for input
    │
    └── AutoGen 0.2's own exceptions (``autogen.exception_utils``), kept for compatibility:
        AgentNameConflict, NoEligibleSpeaker, SenderRequired, InvalidCarryOverType,
        UndefinedNextAgent

Warnings::

    UserWarning
    ├── MessageRepairedWarning               a message was stored repaired (lone surrogates)
    └── UnsandboxedExecutionWarning          generated code runs on the host (once per process)

Errors carry the context needed to act on them (which config, which field, which request) and
are raised ``from`` the underlying error so nothing is lost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "AgentBuilderError",
    "AgentLibraryError",
    "AgentNameConflict",
    "AllConfigsFailedError",
    "ArgumentsValidationError",
    "AuthenticationError",
    "BadRequestError",
    "BudgetExceededError",
    "ChatLeaseError",
    "ChatPaused",
    "CompletionError",
    "ConfigAssertionError",
    "ConfigError",
    "ConfigFailure",
    "ConfigOptionError",
    "DangerousCommandError",
    "DocumentRefusedError",
    "DotenvSyntaxError",
    "DurableChatError",
    "ExecutionCancelledError",
    "GroupChatConfigError",
    "ImageBuildError",
    "ImageDownloadNotAllowedError",
    "ImageLoadError",
    "InputExhaustedError",
    "InputRequestError",
    "InputTimeoutError",
    "InvalidAgentNameError",
    "InvalidCarryOverType",
    "InvalidMessageError",
    "InvalidRequirementError",
    "JournalIntegrityError",
    "JupyterGatewayError",
    "LocalModelUnavailableError",
    "MCPCallError",
    "MCPConfigError",
    "MCPError",
    "MCPToolNameError",
    "MalformedResponseError",
    "MessageRepairedWarning",
    "ModelAPIError",
    "ModelClientError",
    "ModelConnectionError",
    "ModelServerError",
    "NoEligibleSpeaker",
    "OutsideWorkDirError",
    "ParleyError",
    "RateLimitError",
    "RayStartError",
    "RedactedError",
    "ReplayDivergedError",
    "RunError",
    "RunNotFinishedError",
    "SandboxUnavailableError",
    "SenderRequired",
    "StructuredOutputError",
    "UncertainToolCallError",
    "UndefinedNextAgent",
    "UnsafeCodeFileError",
    "UnsafeWorkDirError",
    "UnsandboxedExecutionWarning",
    "WolframAlphaUnavailableError",
]


class _RebuiltFromFields:
    """Pickles an error whose message is derived from its constructor's arguments: it is
    rebuilt from the fields named in ``_fields_to_rebuild`` (in the constructor's order), as
    errors cross to subprocesses and Ray workers that way."""

    _fields_to_rebuild: ClassVar[tuple[str, ...]] = ()

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), tuple(getattr(self, name) for name in self._fields_to_rebuild)


class ParleyError(Exception):
    """Base class of the errors parley raises on purpose."""


class ConfigError(ParleyError, ValueError):
    """An ``llm_config`` or ``config_list`` entry is malformed: the message says which and where."""


class ConfigOptionError(ConfigError, TypeError):
    """A config option holds a value it cannot take (``hide_tools="sometimes"``). A
    ``TypeError`` too, because AutoGen raised that for it."""


class ConfigAssertionError(ConfigError, AssertionError):
    """A request names no model (AutoGen's provider clients asserted one: an
    ``AssertionError`` as there, raised under ``python -O`` too)."""


class ModelClientError(ParleyError, RuntimeError):
    """A model client is missing (not registered) or does not follow the ModelClient protocol."""


class CompletionError(ParleyError):
    """A completion request failed."""


@dataclass(frozen=True)
class ConfigFailure:
    """Why one config of a ``config_list`` failed: its index, model and the error."""

    index: int
    model: str | None
    error: BaseException

    def __str__(self) -> str:
        return (
            f"config {self.index} (model {self.model!r}): {type(self.error).__name__}: {self.error}"
        )


class AllConfigsFailedError(CompletionError):
    """Every config was tried and failed. ``failures`` lists each one, in order."""

    def __init__(self, failures: Sequence[ConfigFailure]) -> None:
        self.failures = list(failures)
        lines = "\n".join(f"  - {f}" for f in self.failures)
        super().__init__(f"all {len(self.failures)} configs in config_list failed:\n{lines}")


class StructuredOutputError(_RebuiltFromFields, CompletionError, ValueError):
    """A model's reply does not conform to the ``response_format`` it was asked for, after the
    retries its config allows (``structured_output_retries``, each showing the model what was
    wrong). ``schema_name`` names the schema, ``raw`` is the last reply's text as it came,
    ``errors`` what does not conform (one entry each, with where), ``attempts`` how many
    replies were checked."""

    _fields_to_rebuild = ("schema_name", "raw", "errors", "attempts")

    def __init__(
        self, schema_name: str, raw: str, errors: Sequence[str], attempts: int = 1
    ) -> None:
        self.schema_name = schema_name
        self.raw = raw
        self.errors = list(errors)
        self.attempts = attempts
        shown = raw if len(raw) <= 200 else raw[:197] + "..."
        tries = "" if attempts == 1 else f" after {attempts} replies"
        super().__init__(
            f"the reply does not conform to the schema {schema_name!r}{tries}: "
            f"{'; '.join(self.errors)}. The reply: {shown!r}"
        )


class ModelAPIError(CompletionError):
    """A model provider's API refused or failed a request (the native clients of
    ``parley.oai.anthropic``, ``gemini``, ``bedrock``, ...; the openai SDK raises its own).

    ``provider`` names the API (``"anthropic"``), ``status_code`` is the HTTP status (None when
    no answer came), ``headers`` the response's headers (lower-cased names), ``retry_after`` the
    seconds the provider asked to wait, if it did. parley's retry and fallback read these, so a
    config list may mix providers.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status_code: int | None = None,
        headers: Mapping[str, str] | None = None,
        retry_after: float | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(f"{provider}: {message}")
        self.provider = provider
        self.status_code = status_code
        self.headers: dict[str, str] = {k.lower(): v for k, v in (headers or {}).items()}
        self.retry_after = retry_after
        self.code = code


class RateLimitError(ModelAPIError):
    """The provider throttled the request (HTTP 429, Bedrock's ThrottlingException, ...)."""


class AuthenticationError(ModelAPIError):
    """The provider refused the credentials (HTTP 401 or 403)."""


class BadRequestError(ModelAPIError):
    """The provider refused the request itself (HTTP 400, 404, 413, 422): retrying it as it is
    cannot succeed."""


class ModelServerError(ModelAPIError):
    """The provider failed (HTTP 5xx)."""


class RedactedError(ParleyError):
    """Stands in, in the chain of an error parley raises (its ``__cause__`` or
    ``__context__``), for an error whose text held a configured credential and could not be
    scrubbed in place (an SDK's error computing its message from private state). ``kind`` is
    the replaced error's type name; the message is its text, scrubbed; the traceback is its."""

    def __init__(self, kind: str, text: str) -> None:
        super().__init__(f"{kind}: {text}")
        self.kind = kind


class MalformedResponseError(ModelServerError):
    """The provider answered (usually with a success status) but not with a reply: a body that
    is not JSON, JSON of the wrong shape or types (``[]``, ``null``, ``{}``, ``"choices": 7``),
    or no content and no reason for it. The message names the provider and what was wrong.
    It is the server's fault, as a 5xx is: retried, then the next config is tried."""


class ModelConnectionError(ModelAPIError):
    """No answer came: the connection was refused, reset or timed out."""


class DotenvSyntaxError(ConfigError):
    """A ``.env`` file has a line that isn't ``KEY=VALUE``; ``source`` and ``line`` say where."""

    def __init__(self, source: str, line: int, problem: str) -> None:
        super().__init__(f"{source}, line {line}: {problem}")
        self.source = source
        self.line = line


class LocalModelUnavailableError(ParleyError, RuntimeError):
    """The local model or its runtime is not installed; the message says how to install it."""


class GroupChatConfigError(ParleyError, ValueError):
    """A ``GroupChat`` setting is malformed (``visibility``): the message names the value and
    what is wrong with it."""


class InvalidAgentNameError(ParleyError, ValueError):
    """An agent's name cannot go into an OpenAI message's ``name`` field."""


class InvalidMessageError(ParleyError, ValueError, TypeError):
    """A message was refused before it was stored: stored, it would have made every later
    model request of the chat fail. The message says what is wrong and where.

    It is a ``ValueError`` because AutoGen raises that for a message it cannot store, and a
    ``TypeError`` because a message of the wrong type raised that before.
    """


class MessageRepairedWarning(UserWarning):
    """A message held text no request can carry (lone surrogates, e.g. from bytes decoded with
    ``surrogateescape``); it was stored with each one replaced by U+FFFD."""


class ArgumentsValidationError(_RebuiltFromFields, ParleyError, ValueError):
    """A model's tool-call arguments do not fit the function's signature.

    ``str(error)`` is meant to be sent back to the model, e.g. ``Invalid arguments for add: b:
    Input should be a valid integer (got 'x'); c: unexpected argument``. ``problems`` holds one
    entry per failing field.
    """

    _fields_to_rebuild = ("function_name", "problems")

    def __init__(self, function_name: str, problems: list[str]) -> None:
        super().__init__(f"Invalid arguments for {function_name}: {'; '.join(problems)}")
        self.function_name = function_name
        self.problems = problems


class OutsideWorkDirError(ParleyError, ValueError):
    """A code block asked to write a file outside the executor's work dir."""


class UnsafeCodeFileError(_RebuiltFromFields, ParleyError, OSError):
    """A code block's file was not written: its name in the work dir is something other than a
    regular file (a named pipe, a symbolic link, a device, a socket, a directory), which code
    that ran there earlier may have left. Opening such a thing to write can wait for ever (a
    FIFO) or write elsewhere (a link). The executors report it as a failed block. ``path`` is
    the file, ``kind`` what it is."""

    _fields_to_rebuild = ("path", "kind")

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(
            f"{path} is {kind}, not a regular file: a code block's file is only ever written "
            "as a regular file; remove it or use another file name"
        )
        self.path = path
        self.kind = kind

    def __str__(self) -> str:
        return str(self.args[0])


class InvalidRequirementError(_RebuiltFromFields, ParleyError, ValueError):
    """A user function's ``python_packages`` entry is not a requirement parley lets pip
    install: it is a pip option (``--index-url=...``, ``--target=...``), a path, or text that
    is not a PEP 508 requirement. Refused before pip runs; ``entry`` is the refused text,
    ``reason`` why."""

    _fields_to_rebuild = ("entry", "reason")

    def __init__(self, entry: str, reason: str) -> None:
        super().__init__(
            f"python_packages entry {entry!r} is refused: {reason}. Give requirement specifiers "
            "only (PEP 508, e.g. 'pandas>=2', 'requests[socks]', 'name @ https://host/x.whl'); "
            "configure pip's index with PIP_INDEX_URL / PIP_FIND_LINKS or pip.conf instead"
        )
        self.entry = entry
        self.reason = reason


class UnsafeWorkDirError(_RebuiltFromFields, ParleyError, ValueError):
    """A code executor's work dir holds (or lies inside) something code must not write or read:
    a response cache, a virtualenv, parley's sources, a git repository, a config list, ``.env``
    or runtime log. Code that could change those could get code run outside its sandbox later;
    code that could read them would see API keys, prompts and results. ``work_dir`` is the
    refused directory,
    ``problem`` what is wrong with it."""

    _fields_to_rebuild = ("work_dir", "problem")

    def __init__(self, work_dir: str, problem: str) -> None:
        super().__init__(
            f"work_dir {work_dir!r} cannot be used for running code: {problem}. Code running "
            "there could read it, or change it and so get code run outside its sandbox later. "
            "Use a dedicated directory as work_dir (the default, 'coding', is one)."
        )
        self.work_dir = work_dir
        self.problem = problem


class ExecutionCancelledError(ParleyError):
    """A code block was stopped, with every process it started, because the chat running it was
    cancelled (a cancelled task, Ctrl-C in a sync chat)."""


class SandboxUnavailableError(ParleyError, RuntimeError):
    """The local sandbox (``LocalCommandLineCodeExecutor(sandbox=True)``, bubblewrap) cannot run
    on this machine: bubblewrap or a tool it needs is missing, or the kernel refuses the
    namespaces it creates. Raised when the executor (or the agent) is built, never when code is
    about to run; the message says what to install or enable. parley never runs the code
    without the sandbox instead."""


class RayStartError(ParleyError, RuntimeError):
    """``run_chats(backend="ray")`` started a new Ray instance and its node did not come up:
    each attempt timed out waiting for the node to register (a loaded machine), until
    ``RayBackend.init_timeout`` seconds were spent. ``attempts`` and ``budget`` say how many
    and how long; the last of Ray's errors is the cause."""

    def __init__(self, attempts: int, budget: float) -> None:
        super().__init__(
            f"the Ray instance this batch started did not come up: {attempts} attempt(s) in "
            f"{budget:.0f} s (RayBackend.init_timeout) each timed out waiting for its node to "
            "register, which happens on a loaded machine; give init_timeout more seconds, "
            "start fewer things at once, or start the cluster first (`ray start --head`, "
            "with RAY_raylet_start_wait_time_s set) and pass its address"
        )
        self.attempts = attempts
        self.budget = budget

    def __reduce__(self) -> tuple[type[RayStartError], tuple[int, float]]:
        return type(self), (self.attempts, self.budget)


class JupyterGatewayError(ParleyError, OSError):
    """A Jupyter kernel gateway refused a request (``status`` is the HTTP status) or could not
    be reached, or the connection to a kernel closed (``status`` is None). An ``OSError``, as
    the ``requests`` errors AutoGen's client raised were."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status

    def __reduce__(self) -> tuple[type[JupyterGatewayError], tuple[str, int | None]]:
        return type(self), (str(self), self.status)


class UnsandboxedExecutionWarning(UserWarning):
    """Generated code is about to run on this machine without a sandbox (warned once per
    process). Local execution is not isolation; the Docker executor and the local executor's
    ``sandbox=True`` (bubblewrap) are."""


class ImageBuildError(ParleyError, RuntimeError):
    """A sandbox image could not be built (``parley sandbox build``); the message says which
    tool or source was missing and the tail of its output."""


class DurableChatError(ParleyError, RuntimeError):
    """A durable chat (``parley.durable``) cannot start or resume: an unknown ``chat_id``, one
    already in the store, agents other than the journal's, a step it cannot record."""


class ReplayDivergedError(DurableChatError):
    """A resumed chat sent a message other than the one its journal recorded at that point:
    the agents (their code, prompts or tools) are not those of the interrupted run."""


class UncertainToolCallError(DurableChatError):
    """A tool declared not idempotent was running when its chat stopped: whether it took
    effect is unknown, so resuming does not run it again by itself. ``tool``, ``call_id`` and
    ``arguments`` name the call; resume with ``on_uncertain_tool=`` to decide."""

    def __init__(self, tool: str, call_id: str | None, arguments: Any) -> None:
        super().__init__(
            f"tool {tool!r} (call {call_id}) was running when the chat stopped and is not "
            "idempotent: it may or may not have taken effect. Resume with "
            "on_uncertain_tool= to rerun it, skip it or give its result."
        )
        self.tool = tool
        self.call_id = call_id
        self.arguments = arguments


class JournalIntegrityError(DurableChatError):
    """A durable chat's journal holds a record this host did not write as it is (its MAC, made
    with the store's key, does not match: forged, altered, moved to another chat or step, or
    reordered), one written without a MAC (an older parley), or one whose content is not what
    such a step records. Nothing of it is replayed. ``chat_id`` and ``step`` (None: the chat's
    header) name the record."""

    def __init__(self, chat_id: str, step: str | None, problem: str) -> None:
        where = f"step {step}" if step is not None else "its header"
        super().__init__(f"durable chat {chat_id!r}: {where} {problem}")
        self.chat_id = chat_id
        self.step = step
        self.problem = problem


class ChatLeaseError(DurableChatError):
    """Durable chat ``chat_id`` is held by another live run (``owner``: host, process and run):
    a second ``resume`` or ``initiate_chat`` of it is refused while the first one runs (or
    until its lease expires, when its process died without releasing it); or, with ``lost``
    true, this run lost its lease to another one and stopped before recording more."""

    def __init__(
        self, chat_id: str, owner: str, message: str | None = None, *, lost: bool = False
    ) -> None:
        super().__init__(
            message
            or f"durable chat {chat_id!r} is running elsewhere (owner {owner}): wait for it to "
            "end or pause, or, if that process is gone, for its lease to expire"
        )
        self.chat_id = chat_id
        self.owner = owner
        self.lost = lost


class DangerousCommandError(ParleyError, ValueError):
    """The local executor refused a shell block with a destructive command (``rm -rf`` in any
    spelling, ``dd`` to a device...; ``parley/coding/_guard.py``). A guard, not a sandbox.
    In a chat the agent reports it to the model as a failed run (exit code 1) instead of
    ending the chat; ``reason`` says what was refused."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"Potentially dangerous command detected: {reason}")
        self.reason = reason


class ChatPaused(ParleyError):
    """A durable chat stopped to wait for a human input that will come later (raised by
    :class:`parley.durable.PausingIO`, or by any input function or review hook, out of
    ``initiate_chat`` / ``resume``). Its question is recorded: ``store.pending_inputs()`` lists
    it, ``store.answer(chat_id, text)`` answers it, and ``resume`` goes on from there.
    ``chat_id``, ``agent`` and ``prompt`` say which chat waits, for whom, asking what."""

    def __init__(self, prompt: str = "", chat_id: str | None = None, agent: str | None = None):
        super().__init__(prompt)
        self.prompt = prompt
        self.chat_id = chat_id
        self.agent = agent

    def __str__(self) -> str:
        return (
            f"chat {self.chat_id!r} paused: agent {self.agent!r} waits for its human's answer "
            f"to {self.prompt!r}; answer with store.answer(), then resume the chat"
        )


class InputExhaustedError(_RebuiltFromFields, ParleyError, EOFError):
    """An :class:`IOScripted` stream was asked for input after its script ran out.

    It is an ``EOFError`` because that is what the builtin ``input`` raises when its input
    ends, so code that already handles the end of stdin handles this too.
    """

    _fields_to_rebuild = ("prompt", "answered")

    def __init__(self, prompt: str, answered: int) -> None:
        self.prompt = prompt
        self.answered = answered
        super().__init__(
            f"IOScripted has no reply left for the input prompt {prompt!r} "
            f"(it already answered {answered} prompt(s)); give it more replies "
            "(IOScripted([...]) or .add_replies(...)) or a callable fn(prompt) -> str"
        )


class RunError(ParleyError):
    """A run (``agent.run`` / ``a_run``, :mod:`parley.io.run_response`) cannot give what was
    asked of it; the subclasses say what."""


class InputRequestError(RunError, RuntimeError):
    """An input request of a run was answered twice, after its run ended, or was not received
    from a run at all (an event parsed back from JSON has nobody to answer)."""


class InputTimeoutError(_RebuiltFromFields, RunError, TimeoutError):
    """Nobody answered a run's input request within the run's ``input_timeout``: the chat
    stops with this error (``agent`` asked ``prompt``)."""

    _fields_to_rebuild = ("prompt", "agent", "timeout")

    def __init__(self, prompt: str, agent: str | None, timeout: float) -> None:
        self.prompt = prompt
        self.agent = agent
        self.timeout = timeout
        super().__init__(
            f"nobody answered {agent or 'the agent'}'s input request {prompt!r} within "
            f"{timeout:g}s (the run's input_timeout): read the run's events and answer each "
            "input_request with event.respond(text)"
        )


class RunNotFinishedError(RunError, RuntimeError):
    """A run's result (``summary``, ``messages``, ``cost``, ``last_speaker``) was read while
    the run waits for a human's answer that nobody is reading its events to give."""


class ImageLoadError(ParleyError, ValueError):
    """An image given as a path, URL, data URI or base64 text could not be loaded
    (``parley.agentchat.contrib.img_utils``); the message says which and why."""


class ImageDownloadNotAllowedError(ImageLoadError):
    """An image URL was not fetched because image downloads are not allowed (the default: parley
    reaches no network on its own). ``img_utils.allow_image_downloads()`` or the environment
    variable ``PARLEY_ALLOW_IMAGE_DOWNLOADS=1`` allows them."""


class DocumentRefusedError(_RebuiltFromFields, ParleyError):
    """RetrieveChat did not index a document: it is over one of its read limits (its size, the
    size it unpacks to, or the time it takes; see ``parley.retrieve_utils.ReadLimits``).
    ``source`` is the file or URL, ``reason`` which limit and by how much."""

    _fields_to_rebuild = ("source", "reason")

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


class AgentBuilderError(ParleyError, RuntimeError):
    """``AgentBuilder``'s models are missing from the config list, or its config is unusable."""


class AgentLibraryError(ParleyError, ValueError):
    """An agent library that cannot be read, or a selection the builder model got wrong."""


class WolframAlphaUnavailableError(ParleyError, ValueError, RuntimeError):
    """A ``wolfram`` query was asked for but Wolfram Alpha cannot be reached (no app id). A
    ``ValueError``, as AutoGen's missing-app-id error was (a ``RuntimeError`` too, as parley's
    was)."""


class BudgetExceededError(_RebuiltFromFields, ParleyError):
    """A model request was refused before it was sent: the chat it belongs to has reached a
    limit of its :class:`parley.usage.Budget`. Inside a chat the turn that asked ends there,
    with no reply, and the chat ends with ``termination_reason`` = ``reason``; it reaches your
    code only from a request made outside a turn. ``reason`` is ``"budget:cost"``,
    ``"budget:tokens"``, ``"budget:llm_calls"`` or ``"budget:seconds"``, or the reason the chat
    was stopped with (``ChatRun.stop``: ``"stopped"``); ``chat_id`` the chat's id."""

    _fields_to_rebuild = ("reason", "chat_id")

    def __init__(self, reason: str, chat_id: str | None = None) -> None:
        what = "the chat's budget is spent" if reason.startswith("budget:") else "the chat stopped"
        super().__init__(f"{what} ({reason}); no further model request is made")
        self.reason = reason
        self.chat_id = chat_id


# -- AutoGen 0.2 compatibility (autogen.exception_utils) -----------------------------------


class AgentNameConflict(Exception):
    def __init__(
        self, msg: str = "Found multiple agents with the same name.", *args: Any, **kwargs: Any
    ) -> None:
        super().__init__(msg, *args, **kwargs)


class _MessageError(Exception):
    default = ""

    def __init__(self, message: str | None = None) -> None:
        self.message = message if message is not None else self.default
        super().__init__(self.message)


class NoEligibleSpeaker(_MessageError):
    default = "No eligible speakers."


class SenderRequired(_MessageError):
    default = "Sender is required but not provided."


class InvalidCarryOverType(_MessageError):
    default = "Carryover should be a string or a list of strings."


class UndefinedNextAgent(_MessageError):
    default = "The provided agents list does not overlap with agents in the group."


class MCPError(ParleyError):
    """An MCP server (:mod:`parley.mcp`) could not be used; ``server`` names it."""

    def __init__(self, server: str, message: str) -> None:
        super().__init__(f"MCP server {server!r}: {message}")
        self.server = server


class MCPConfigError(MCPError, ValueError):
    """An ``mcpServers`` entry is malformed: the message names the server and the key."""


class MCPToolNameError(MCPError, ValueError):
    """A tool from an MCP server would take a name already registered on an agent (a function
    or another server's tool): the message names both."""


class MCPCallError(MCPError):
    """A call to an MCP server failed: the server answered with an error result, the call timed
    out, or the server went away. In a chat its text becomes the tool's result for the model."""
