"""``MathUserProxyAgent`` (AutoGen's ``autogen.agentchat.contrib.math_user_proxy_agent``):
MathChat's user proxy.

It opens the chat with a math problem framed by a prompt (``message_generator``), runs the
assistant's ```python``` queries (and ```wolfram``` ones with a Wolfram Alpha app id), answers
with their output, and ends the chat when a message has a ``\\boxed{}`` answer and no query.

Code runs as for any user proxy: ``code_execution_config`` decides where (Docker by default;
``{"use_docker": False, "work_dir": ...}`` runs it on this machine, an explicit opt-in), with
``timeout`` (default 5 s) per query. As in AutoGen, each query runs after the code of the
earlier queries that ran (their top-level prints removed; of a failed query, its imports), so
their variables and imports stay defined. Differences from AutoGen: the config's ``timeout``
is honoured (AutoGen forced 5 s); the earlier code is not run twice over in each later query
(AutoGen's kept code held it once more after each query); and code that ran but printed
nothing is kept too (AutoGen kept it only when some earlier code had a ``print``, so ``x=3``
was forgotten unless one had). Without a Wolfram Alpha app id a ``wolfram`` query raises
:class:`WolframAlphaUnavailableError`, a ``ValueError`` as AutoGen's was.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from ..._core.runtime import run_in_thread
from ...code_utils import UNKNOWN, execute_code, extract_code, infer_lang
from ...math_utils import get_answer
from .. import _sync_chat
from .._registry import ReplyEntry, insert_reply
from ..agent import Agent
from ..user_proxy_agent import UserProxyAgent
from . import _math_prompts as texts
from ._wolfram import WolframAlphaAPIWrapper, WolframAlphaUnavailableError

__all__ = [
    "DEFAULT_REPLY",
    "PROMPTS",
    "MathUserProxyAgent",
    "WolframAlphaAPIWrapper",
    "WolframAlphaUnavailableError",
]

PROMPTS = texts.PROMPTS
DEFAULT_REPLY = texts.DEFAULT_REPLY
_MAX_OUTPUT = 2000
_DEFAULT_TIMEOUT = 5
# What execute_code takes from code_execution_config (not last_n_messages, executor, ...).
_EXECUTE_KEYS = ("work_dir", "use_docker", "sandbox", "timeout")
# A traceback's file line names a temporary file the model never saw.
_FILE_LINE = re.compile(r'\s*File "[^"]*", line \d+(, in [^\n]*)?\n')


def _is_termination_msg_mathchat(message: dict[str, Any] | str) -> bool:
    """A message ends the chat when it has a boxed answer and no python/wolfram query."""
    content = message if isinstance(message, str) else message.get("content")
    if not isinstance(content, str):
        return False
    for lang, _ in extract_code(content):
        if lang in ("python", "wolfram"):
            return False
    return bool(get_answer(content))


def _add_print_to_last_line(code: str) -> str:
    """Print the last line's value when the code prints nothing (``x=1\\nx+1``)."""
    lines = code.strip().split("\n")
    last = lines[-1]
    if "print(" in code or "=" in last or "\t" in last or last.startswith((" ", "#")):
        return code
    try:
        # Only an expression can be printed (AutoGen also wrapped `pass`, `import x`...).
        compile(last, "<query>", "eval")
    except SyntaxError:
        return code
    lines[-1] = f"print({last})"
    return "\n".join(lines)


def _remove_print(code: str) -> str:
    """The code without its top-level prints, as AutoGen kept it for later queries. A print
    inside a block stays (removing it could leave the block empty), so it prints again each
    time the kept code runs before a later query, as in AutoGen."""
    return "\n".join(line for line in code.splitlines() if not line.startswith("print("))


async def _math_reply(
    agent: MathUserProxyAgent, messages: Any = None, sender: Any = None, config: Any = None
) -> tuple[bool, Any]:
    return await agent._a_generate_math_reply(messages, sender, config)


class MathUserProxyAgent(UserProxyAgent):
    """MathChat's user proxy: poses the problem, runs the queries, stops at the boxed answer."""

    MAX_CONSECUTIVE_AUTO_REPLY = 15  # AutoGen's constant; not applied unless passed
    DEFAULT_REPLY = texts.DEFAULT_REPLY

    def __init__(
        self,
        name: str | None = "MathChatAgent",
        is_termination_msg: Callable[[dict[str, Any]], bool] | None = _is_termination_msg_mathchat,
        human_input_mode: Literal["ALWAYS", "NEVER", "TERMINATE"] = "NEVER",
        default_auto_reply: str | dict[str, Any] | None = DEFAULT_REPLY,
        max_invalid_q_per_step: int = 3,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            name=name or "MathChatAgent",
            is_termination_msg=is_termination_msg,
            human_input_mode=human_input_mode,
            default_auto_reply=default_auto_reply,
            **kwargs,
        )
        # Tried right after the termination check, before the generic code-execution reply.
        entry = ReplyEntry(
            [Agent, None], MathUserProxyAgent._generate_math_reply, _math_reply, builtin=True
        )
        insert_reply(self._reply_func_list, entry, 2)
        self.max_invalid_q_per_step = max_invalid_q_per_step
        self._wolfram: WolframAlphaAPIWrapper | None = None
        self._reset()

    def _reset(self) -> None:
        """Forget the earlier queries' code and the counters (a new problem)."""
        self._valid_q_count = 0
        self._total_q_count = 0
        self._accum_invalid_q_per_step = 0
        self._previous_code = ""
        self.last_reply: str | None = None

    @staticmethod
    def message_generator(sender: Any, recipient: Any, context: dict[str, Any]) -> str:
        """The first message: ``initiate_chat(assistant, message=proxy.message_generator,
        problem=...)``, with ``prompt_type`` (``"default"``, ``"python"``, ``"two_tools"``) or
        a ``customized_prompt`` put before the problem."""
        sender._reset()
        problem = context.get("problem")
        if problem is None:
            raise ValueError(
                "MathUserProxyAgent.message_generator needs a `problem` in the context"
            )
        customized = context.get("customized_prompt")
        if customized is not None:
            return f"{customized}{problem}"
        return f"{PROMPTS[context.get('prompt_type', 'default')]}{problem}"

    # -- running queries ------------------------------------------------------------------

    def _execute_config(self) -> dict[str, Any]:
        config = self._code_execution_config
        if config is False:
            raise ValueError(
                f"{self.name}: code_execution_config is False, so python queries cannot run"
            )
        chosen = {k: config[k] for k in _EXECUTE_KEYS if k in config}
        chosen.setdefault("timeout", _DEFAULT_TIMEOUT)
        return chosen

    def execute_one_python_code(self, pycode: str) -> tuple[str, bool]:
        """Run one python query after the earlier successful ones; ``(output, is_success)``."""
        pycode = pycode.replace("; ", "\n").replace(";", "\n")
        code = _add_print_to_last_line(pycode)
        config = self._execute_config()
        prefix = self._previous_code
        exit_code, output, _ = execute_code(prefix + code, lang="python", **config)
        ok = exit_code == 0
        if not ok:
            output = "Error: " + _FILE_LINE.sub("\n", output).strip()
        elif output.strip() == "":
            ok = "print" in code
            output = texts.NO_OUTPUT if ok else texts.NO_OUTPUT_PRINT
        if len(output) > _MAX_OUTPUT:
            output, ok = texts.TOO_LONG, False

        # Code that ran is kept, printing or not (``x=3`` defines x for the next query); of
        # code that failed only the imports are.
        if exit_code == 0:
            kept = _remove_print(code)
        else:
            kept = "\n".join(line for line in code.split("\n") if "import" in line)
        if kept.strip():
            candidate = prefix + kept + "\n"
            if execute_code(candidate, lang="python", **config)[0] == 0:
                self._previous_code = candidate
        return output, ok

    def execute_one_wolfram_query(self, query: str) -> tuple[str, bool]:
        """Ask Wolfram Alpha (needs ``WOLFRAM_ALPHA_APPID`` and network); ``(text, is_success)``."""
        if self._wolfram is None:
            self._wolfram = WolframAlphaAPIWrapper()
        return self._wolfram.run(query)

    # -- the reply ------------------------------------------------------------------------

    async def _a_generate_math_reply(
        self, messages: list[dict[str, Any]] | None = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, Any]:
        if messages is None:
            messages = self._oai_messages[sender]
        content = messages[-1].get("content") or ""
        blocks = extract_code(content)
        if len(blocks) == 1 and blocks[0][0] == UNKNOWN:
            return True, self._default_auto_reply

        outputs, all_ok = [], True
        for lang, code in blocks:
            lang = lang or infer_lang(code)
            if lang == "python":
                output, ok = await run_in_thread(self.execute_one_python_code, code)
            elif lang == "wolfram":
                output, ok = await run_in_thread(self.execute_one_wolfram_query, code)
            else:
                output, ok = texts.UNKNOWN_LANGUAGE, False
            outputs.append(output)
            self._total_q_count += 1
            if ok:
                self._valid_q_count += 1
            else:
                all_ok = False
        reply = "\n".join(outputs).strip()

        if reply == self.last_reply:
            return True, reply + texts.SAME_AS_LAST
        self.last_reply = reply
        if all_ok:
            self._accum_invalid_q_per_step = 0
        else:
            self._accum_invalid_q_per_step += 1
            if self._accum_invalid_q_per_step > self.max_invalid_q_per_step:
                self._accum_invalid_q_per_step = 0
                reply = texts.REVISIT
        return True, reply

    def _generate_math_reply(
        self, messages: list[dict[str, Any]] | None = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, Any]:
        """Run the queries of the last message and answer with their output."""
        return _sync_chat.run_sync(self._a_generate_math_reply(messages, sender, config))
