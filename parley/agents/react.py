"""``ReActAgent``: reason and act in a loop (Thought / Action / Action Input / Observation)
until the model writes a Final Answer.

Each step sends one prompt: the tools, the format, the question and the steps so far (the
*scratchpad*). The request asks the model to stop before ``Observation:``; the agent also cuts
the text there itself, for servers that ignore ``stop``. It reads the Action and its input,
runs the tool and appends what it returned as the Observation. A model's mistakes (an unknown
tool, a reply in the wrong format) and a tool's errors become observations, so the model can
correct itself; the loop ends at a Final Answer or after ``max_iterations`` model calls.

Tools are plain objects with ``name``, ``description`` and ``use(input: str) -> str`` (sync or
async), or functions registered on the agent the usual way. :class:`PythonTool` runs Python
code through a code executor, which the user must give it: code never runs by default.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from .._core.runtime import run_in_thread
from ..coding.base import CodeBlock, CodeExecutor
from . import _react_parse, _react_prompt, _react_tools
from .loop_agent import LoopAgent, ask_model

__all__ = ["STOP_SEQUENCES", "PythonTool", "ReActAgent", "ReActStep", "StopReason", "Tool"]

# Where the model must stop writing: the tool's result is the agent's to write. (OpenAI takes
# at most 4 stop sequences.)
STOP_SEQUENCES = ("\nObservation:", "\n\tObservation:")

StopReason = Literal["final_answer", "max_iterations"]


@runtime_checkable
class Tool(Protocol):
    """What a :class:`ReActAgent` can use: a ``name`` the model writes after ``Action:``, a
    ``description`` telling the model what the tool does and what input it takes, and
    ``use(input)`` returning the text the model reads as the Observation. ``use`` may be a
    plain method (run in a worker thread) or ``async``.

    Any object with these members is a tool; it need not inherit from this class.
    """

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def use(self, input: str) -> str | Awaitable[str]: ...


@dataclass(frozen=True)
class ReActStep:
    """One step of a run: the model's ``thought``, the ``action`` (tool name) it chose with its
    ``input``, and the ``observation`` it was given back. A reply in the wrong format is a
    step with ``action`` and ``input`` None and the format problem as the observation."""

    thought: str
    action: str | None
    input: str | None
    observation: str


_PYTHON_DESCRIPTION = (
    "runs a Python script and returns what it prints (or the error). Each run starts afresh: "
    "nothing is kept between runs, so print() every value you need to see. Input: the code."
)
# A Markdown code block around the whole input, with or without a language tag; or `inline`.
_FENCED = re.compile(r"\A\s*```[\w+.-]*[ \t]*\n?(?P<code>.*?)\n?[ \t]*```\s*\Z", re.DOTALL)
_INLINE = re.compile(r"\A\s*`(?P<code>[^`\n]+)`\s*\Z")


class PythonTool:
    """A tool that runs its input as Python code through ``code_executor``.

    Args:
        code_executor: a :mod:`parley.coding` executor (e.g. ``LocalCommandLineCodeExecutor``,
            ``DockerCommandLineCodeExecutor``), or a config for
            :meth:`parley.coding.factory.CodeExecutorFactory.create`, e.g.
            ``{"executor": "commandline-local", "commandline-local": {"work_dir": "coding"}}``.
            Required: running code is always the user's explicit choice.
        name: the name the model uses after ``Action:``.
        description: what the model is told about the tool.

    The code runs in a worker thread (the event loop stays free; cancelling the run stops the
    code). Markdown fences the model puts around the code are removed. The observation is
    what the code printed, or the exit code and the error output.
    """

    def __init__(
        self,
        code_executor: CodeExecutor | Mapping[str, Any],
        name: str = "python_repl",
        description: str = _PYTHON_DESCRIPTION,
    ) -> None:
        self.code_executor = _executor(code_executor)
        self.name = name
        self.description = description

    async def use(self, input: str) -> str:
        """Run ``input`` as Python; what it printed, or the error."""
        code = _strip_fences(input)
        if not code.strip():
            return "Error: the Action Input was empty: give the Python code to run."
        block = CodeBlock(code=code, language="python")
        result = await run_in_thread(self.code_executor.execute_code_blocks, [block])
        output = result.output.strip()
        if result.exit_code != 0:
            return f"Error (exit code {result.exit_code}):\n{output}"
        return output or "(the code printed nothing: print() the values you want to see)"


def _executor(code_executor: object) -> CodeExecutor:
    if isinstance(code_executor, CodeExecutor):
        return code_executor
    if isinstance(code_executor, Mapping):
        if "executor" not in code_executor:
            raise ValueError(
                "PythonTool's code_executor config needs an 'executor' key, e.g. "
                "{'executor': 'commandline-local', 'commandline-local': {'work_dir': 'coding'}}; "
                f"got keys {sorted(map(str, code_executor))}"
            )
        from ..coding.factory import CodeExecutorFactory

        return CodeExecutorFactory.create(code_executor)
    raise TypeError(
        "PythonTool needs a code executor (e.g. LocalCommandLineCodeExecutor(work_dir=...)) or "
        "an executor config {'executor': 'commandline-local', ...}; got "
        f"{type(code_executor).__name__}"
    )


def _strip_fences(text: str) -> str:
    match = _FENCED.match(text) or _INLINE.match(text)
    return match["code"] if match else text


class ReActAgent(LoopAgent):
    """An agent that answers by reasoning and using tools, step by step (ReAct).

    Args:
        name: the agent's name.
        tools: objects with ``name``, ``description`` and ``use(input) -> str`` (see
            :class:`Tool`), e.g. :class:`PythonTool`. Functions registered on the agent
            (``register_for_llm`` with ``register_for_execution``, or ``function_map``) are
            tools too, also when registered after construction.
        llm_config: the model, as for any agent. The tools are described in the prompt, so
            any chat-completions model works, without a tool-calling API.
        max_iterations: the most model calls in one run; then the run stops with a reply
            saying so (and ``stop_reason`` "max_iterations").
        prompt_template: replaces the default prompt. Its placeholders ``{input}`` (the
            question), ``{tools}`` (one "name: description" line per tool) and
            ``{scratchpad}`` (the steps so far; put it right after the last ``Thought:``) are
            required; ``{date}`` (today, ISO format) and ``{tool_names}`` (comma-separated)
            are optional. Other braces are kept as written.
        system_message: sent as a system message before each prompt when not empty.
        **kwargs: the other arguments of ``ConversableAgent``.

    ``run(task)`` / ``await a_run(task)`` return the final answer. Sent a message in a chat
    (two-agent, group, nested), the agent runs on the message's text and replies with the
    final answer. After a run, :attr:`steps` and :attr:`stop_reason` tell how it went.
    """

    def __init__(
        self,
        name: str,
        tools: Sequence[Tool] = (),
        *,
        llm_config: dict[str, Any] | Literal[False] | None = None,
        max_iterations: int = 10,
        prompt_template: str | None = None,
        system_message: str = "",
        description: str | None = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(max_iterations, bool) or not isinstance(max_iterations, int):
            raise TypeError(f"max_iterations must be an int, got {max_iterations!r}")
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {max_iterations}")
        template = _react_prompt.DEFAULT_TEMPLATE if prompt_template is None else prompt_template
        _react_prompt.check_template(template)
        own_tools = _tool_tuple(tools)
        super().__init__(
            name,
            llm_config=llm_config,
            system_message=system_message,
            description=description if description is not None else _describe(own_tools),
            **kwargs,
        )
        self._own_tools = own_tools
        self.max_iterations = max_iterations
        self.prompt_template = template
        self.steps: list[ReActStep] = []
        self.stop_reason: StopReason | None = None
        self._all_tools()  # a function in function_map named like a tool: raise now

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The tools given to the constructor (registered functions come on top)."""
        return self._own_tools

    def _all_tools(self) -> dict[str, Tool]:
        return _react_tools.index_tools([*self._own_tools, *_react_tools.registered_tools(self)])

    # A loop's own run(task), not ConversableAgent's run(recipient, message=...) event stream.
    async def a_run(self, task: str) -> str:  # type: ignore[override]
        """Run the loop on ``task``; returns the final answer (or, at the iteration limit, a
        reply saying there is none). :attr:`steps` fills as it goes."""
        tools = self._all_tools()
        names = [tool.name for tool in tools.values()]
        values = {
            "date": datetime.date.today().isoformat(),
            "tools": _react_prompt.describe_tools({t.name: t.description for t in tools.values()}),
            "tool_names": ", ".join(names),
            "input": task,
            "scratchpad": "",
        }
        steps: list[ReActStep] = []
        self.steps, self.stop_reason = steps, None
        for _ in range(self.max_iterations):
            prompt = _react_prompt.render(self.prompt_template, values)
            turn = await ask_model(self, self._messages(prompt), stop=list(STOP_SEQUENCES))
            text = _react_parse.cut_at_observation(turn.text).strip()
            step = _react_parse.parse_step(text)
            if isinstance(step, _react_parse.FinalAnswer):
                self.stop_reason = "final_answer"
                return step.answer
            if isinstance(step, _react_parse.Action):
                observation = await self._observe(tools, names, step)
                steps.append(ReActStep(step.thought, step.tool, step.input, observation))
            else:
                observation = _format_problem(step.problem, names)
                steps.append(ReActStep(step.thought, None, None, observation))
            values["scratchpad"] += _react_prompt.scratchpad_entry(text, observation)
        self.stop_reason = "max_iterations"
        return (
            f"Stopped after {self.max_iterations} iterations without a final answer "
            f"(the iteration limit; see the agent's steps for what it tried)."
        )

    def _messages(self, prompt: str) -> list[dict[str, Any]]:
        system = self.system_message
        head = [{"role": "system", "content": system}] if system else []
        return [*head, {"role": "user", "content": prompt}]

    async def _observe(
        self, tools: Mapping[str, Tool], names: list[str], action: _react_parse.Action
    ) -> str:
        tool = tools.get(_react_tools.tool_key(action.tool))
        if tool is None:
            valid = ", ".join(names) if names else "none: write a Final Answer"
            return f"{action.tool!r} is not a tool here. The valid tools are: {valid}."
        return await _react_tools.run_tool(tool, action.input)


def _tool_tuple(tools: object) -> tuple[Tool, ...]:
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable):
        single = " (for one tool write tools=[tool])" if hasattr(tools, "use") else ""
        raise TypeError(f"tools must be a list of tools, got {type(tools).__name__}{single}")
    listed = tuple(tools)
    for i, tool in enumerate(listed):
        _react_tools.check_tool(tool, f"tools[{i}]")
    _react_tools.index_tools(listed)
    return listed


def _describe(tools: tuple[Tool, ...]) -> str:
    using = f" with the tools {', '.join(t.name for t in tools)}" if tools else ""
    return f"Answers a question by reasoning step by step and acting{using} (ReAct)."


def _format_problem(problem: str, names: list[str]) -> str:
    tools = ", ".join(names) if names else "none"
    return (
        f"Invalid format: {problem}. Reply either with 'Action: <tool name>' and 'Action Input: "
        f"<input>' on two lines (tools: {tools}), or with 'Final Answer: <answer>'."
    )
