"""Code execution replies: the user proxy runs the code blocks it receives.

Two forms, as in AutoGen: the legacy config (``work_dir``, ``use_docker``, ``timeout``,
``last_n_messages``) runs blocks through ``code_utils.execute_code`` via the agent's
``run_code``; the executor form (``{"executor": ...}``) runs them through a ``CodeExecutor``.

Docker is the default, as in AutoGen, but it is checked when code is about to run, not when the
agent is built (AutoGen raised at construction even for users who never ran code, #1381); a
missing engine is one clear error, never a silent fallback to the host. The legacy config's
``"sandbox": True`` (parley only) runs blocks on this machine under bubblewrap instead of
Docker (``parley.coding._bwrap``); that one is checked when the agent is built, so a machine
where bubblewrap cannot run refuses the agent rather than a block. Execution blocks, so it
runs in a worker thread and never stalls the event loop; cancelling the chat (a cancelled task,
Ctrl-C in a sync chat) tells the executor to stop the block (``parley._core.runtime``).

Either form takes ``"requires_approval": True`` (parley only; AutoGen has no such key): the
agent's human approves the blocks of a message before they run (``_approval.approve_code``).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from .._core import reports as _reports
from .._core.runtime import run_in_thread
from ..exceptions import DangerousCommandError
from . import _approval
from ._journaled import journaled_code

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .._agent_protocol import Agent
    from ..types import Message
    from ._state import AgentCore, History

    #: The implementation of the code-execution reply an agent registers.
    CodeReply = Callable[
        [AgentCore, History, Agent | None, Any], Awaitable[tuple[bool, str | None]]
    ]

__all__ = [
    "execute_code_blocks",
    "generate_code_execution_reply",
    "generate_code_execution_reply_using_executor",
    "setup_code_execution",
]

_EXECUTOR_ONLY = {
    "use_docker": "'use_docker' in code_execution_config is not valid when 'executor' is set; "
    "configure the executor instead (e.g. DockerCommandLineCodeExecutor).",
    "work_dir": "'work_dir' in code_execution_config is not valid when 'executor' is set; "
    "pass work_dir to the executor instead.",
    "timeout": "'timeout' in code_execution_config is not valid when 'executor' is set; "
    "pass timeout to the executor instead.",
    "sandbox": "'sandbox' in code_execution_config is not valid when 'executor' is set; "
    'pass LocalCommandLineCodeExecutor(sandbox=True) (or "commandline-local": '
    '{"sandbox": True}) instead.',
}


# Keys of a legacy code_execution_config that are not execute_code's keywords.
_NOT_RUN_CODE_KEYWORDS = frozenset({"last_n_messages", "requires_approval"})


def setup_code_execution(agent: AgentCore, config: dict[str, Any]) -> CodeReply:
    """Prepare the agent's code execution; returns the reply function's implementation."""
    if not isinstance(config.get("requires_approval", False), bool):
        raise ValueError(
            "'requires_approval' in code_execution_config must be True or False, got "
            f"{config['requires_approval']!r}"
        )
    if "executor" in config:
        for key, message in _EXECUTOR_ONLY.items():
            if key in config:
                raise ValueError(message)
        from ..coding.factory import CodeExecutorFactory

        agent.code_executor = CodeExecutorFactory.create(config)
        return generate_code_execution_reply_using_executor
    if config.get("sandbox"):
        from ..coding._legacy_execute import check_sandbox_config

        check_sandbox_config(config.get("use_docker"))  # before any code is in sight
        agent.use_docker = False
    else:
        from ..code_utils import decide_use_docker

        agent.use_docker = decide_use_docker(config.get("use_docker"))
    config["use_docker"] = agent.use_docker
    return generate_code_execution_reply


def _scan_window(agent: AgentCore, messages: list[Message], last_n: Any) -> int:
    if not (
        (isinstance(last_n, (int, float)) and not isinstance(last_n, bool) and last_n >= 0)
        or last_n == "auto"
    ):
        raise ValueError(
            "last_n_messages must be either a non-negative integer, or the string 'auto'."
        )
    if last_n != "auto":
        return int(last_n)
    n = 0
    for message in reversed(messages):
        if message.get("role") != "user":
            break
        n += 1
    return n


def _reply_text(exit_code: int, output: str) -> str:
    status = "execution succeeded" if exit_code == 0 else "execution failed"
    return f"exitcode: {exit_code} ({status})\nCode output: {output}"


async def _approved(
    agent: AgentCore,
    config: Any,
    blocks: list[tuple[str, str]],
    message: Message,
    sender: Agent | None,
) -> str | None:
    """None when the blocks may run (approved, or no approval asked for): else the reply
    that stands for them."""
    if not config.get("requires_approval"):
        return None
    from ..code_utils import infer_lang
    from ..coding.base import CodeBlock

    shown = [CodeBlock(code=code, language=lang or infer_lang(code)) for lang, code in blocks]
    refused = await _approval.approve_code(agent, shown, message, sender)
    return None if refused is None else _reply_text(1, refused)


def _approval_of(config: Any) -> str | None:
    return "approved" if config.get("requires_approval") else None


async def _run_legacy(
    agent: AgentCore, blocks: list[tuple[str, str]], approval: str | None
) -> tuple[int, str]:
    languages, codes = [lang for lang, _ in blocks], [code for _, code in blocks]
    with _reports.code_execution_step(agent, languages, codes, approval=approval) as step:
        exit_code, logs = await run_in_thread(agent.execute_code_blocks, blocks)
        step.end(exit_code=exit_code, output=logs)
    return exit_code, logs


async def _run_with_executor(
    agent: AgentCore, executor: Any, blocks: list[Any], approval: str | None
) -> tuple[int, str]:
    languages, codes = [b.language for b in blocks], [b.code for b in blocks]
    with _reports.code_execution_step(agent, languages, codes, executor, approval) as step:
        try:
            result = await run_in_thread(executor.execute_code_blocks, blocks)
        except DangerousCommandError as refused:
            # The model reads why, as with a legacy code_execution_config; AutoGen's executor
            # path ended the whole chat with the ValueError instead.
            step.end(exit_code=1, output=str(refused))
            return 1, str(refused)
        step.end(exit_code=result.exit_code, output=result.output)
    return int(result.exit_code), str(result.output)


async def generate_code_execution_reply(
    agent: AgentCore, messages: History = None, sender: Agent | None = None, config: Any = None
) -> tuple[bool, str | None]:
    """Run the code of the newest message that has some (legacy form)."""
    from ..code_utils import UNKNOWN, extract_code

    own = agent.state.code_execution_config
    code_config = config if config is not None else own
    if code_config is False:
        return False, None
    if messages is None:
        messages = agent.state.messages[sender]
    n = _scan_window(agent, messages, code_config.get("last_n_messages", "auto"))
    for message in reversed(messages[-n:] if n else []):
        content = message.get("content")
        if not content:
            continue
        blocks = extract_code(content)
        if len(blocks) == 1 and blocks[0][0] == UNKNOWN:
            continue
        refused = await _approved(agent, code_config, blocks, message, sender)
        if refused is not None:
            return True, refused
        run = partial(_run_legacy, agent, blocks, _approval_of(code_config))
        exit_code, logs = await journaled_code(agent.name, run)
        return True, _reply_text(exit_code, logs)
    return False, None


def execute_code_blocks(agent: AgentCore, code_blocks: list[tuple[str, str]]) -> tuple[int, str]:
    """Run (language, code) blocks in order, stopping at the first failure (legacy form)."""
    from ..code_utils import infer_lang
    from ..io import IOStream

    out = IOStream.get_default()
    logs_all = ""
    exit_code = 0
    config = agent.state.code_execution_config
    assert config is not False
    # The rest of the config is execute_code's (or an overriding run_code's) keywords.
    run_config = {k: v for k, v in config.items() if k not in _NOT_RUN_CODE_KEYWORDS}
    for i, (lang, code) in enumerate(code_blocks):
        lang = lang or infer_lang(code)
        out.print(
            f"\n>>>>>>>> EXECUTING CODE BLOCK {i} (inferred language is {lang})...", flush=True
        )
        if lang in ("bash", "shell", "sh"):
            exit_code, logs, image = agent.run_code(code, lang=lang, **run_config)
        elif lang in ("python", "Python", "py"):
            from ..coding._paths import filename_from_code

            filename = filename_from_code(code)
            exit_code, logs, image = agent.run_code(
                code, lang="python", filename=filename, **run_config
            )
        else:
            exit_code, logs, image = 1, f"unknown language {lang}", None
        if image is not None:
            config["use_docker"] = image
        logs_all += "\n" + logs
        if exit_code != 0:
            break
    return exit_code, logs_all


async def generate_code_execution_reply_using_executor(
    agent: AgentCore, messages: History = None, sender: Agent | None = None, config: Any = None
) -> tuple[bool, str | None]:
    """Run the code of the newest message that has some, through the agent's executor."""
    from ..io import IOStream

    if config is not None:
        raise ValueError(
            "config is not supported for _generate_code_execution_reply_using_executor."
        )
    code_config = agent.state.code_execution_config
    if code_config is False:
        return False, None
    if messages is None:
        messages = agent.state.messages[sender]
    n = _scan_window(agent, messages, code_config.get("last_n_messages", "auto"))
    executor = agent.code_executor
    for message in reversed(messages[-n:] if n else []):
        content = message.get("content")
        if not content:
            continue
        blocks = executor.code_extractor.extract_code_blocks(content)
        if not blocks:
            continue
        pairs = [(b.language, b.code) for b in blocks]
        refused = await _approved(agent, code_config, pairs, message, sender)
        if refused is not None:
            return True, refused
        out = IOStream.get_default()
        if len(blocks) == 1:
            out.print(
                f"\n>>>>>>>> EXECUTING CODE BLOCK (inferred language is {blocks[0].language})...",
                flush=True,
            )
        else:
            shown = ", ".join(b.language for b in blocks)
            out.print(
                f"\n>>>>>>>> EXECUTING {len(blocks)} CODE BLOCKS (inferred languages are [{shown}])...",
                flush=True,
            )
        run = partial(_run_with_executor, agent, executor, blocks, _approval_of(code_config))
        exit_code, output = await journaled_code(agent.name, run)
        return True, _reply_text(exit_code, output)
    return False, None
