"""``AutonomousAgent``: AutoGPT 0.2's loop as a parley agent.

Given a name, a role and goals, the agent thinks in cycles. Each cycle it sends the model its
system prompt (goals, constraints, commands, resources, self-evaluation advice, the JSON reply
format), the time, memories the recent history reminds it of, as much recent history as fits
``token_limit`` tokens, and a trigger; reads the JSON reply (repairing the usual breakage, and
telling the model what was wrong when it cannot); shows the plan; asks the human to authorise
the command (``y``, ``y -N``, ``n`` or feedback); runs it; and remembers the outcome. It stops
on ``task_complete``, the human's ``n``, ``max_cycles`` or ``budget``.

::

    from parley.agents import AutonomousAgent

    agent = AutonomousAgent(
        "writer",
        role="an assistant that writes short reports",
        goals=["Write a haiku about the sea to haiku.txt"],
        llm_config={"config_list": [...]},
        workspace="out",
        memory=False,
    )
    print(agent.run(""))          # the final report
    agent.cycles, agent.stop_reason  # what each cycle did, and why it stopped
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..coding.base import CodeExecutor
from ..io import IOStream
from ._autonomous_commands import (
    FINISH_COMMANDS,
    Command,
    builtin_commands,
    check_command_names,
    run_command,
    user_commands,
)
from ._autonomous_cycle import (
    Authorise,
    CycleRecord,
    Feedback,
    ModelReply,
    StopReason,
    StopRun,
    parse_authorisation,
    plan_text,
    read_reply,
)
from ._autonomous_prompt import (
    DEFAULT_ROLE,
    AutonomousPrompts,
    fit_history,
    memory_message,
    memory_query,
    model_name,
    system_prompt,
    time_message,
)
from ._json_repair import ReplyFormatError
from ._loop_agent import LoopAgent, ask_human, ask_model

if TYPE_CHECKING:
    from ..memory import LongTermMemory

__all__ = ["AutonomousAgent", "AutonomousPrompts", "Command", "CycleRecord", "StopReason"]

MAX_GOALS = 5
_AUTHORISE = (
    "Authorise the command? 'y' runs it, 'y -N' runs the next N commands without asking, "
    "'n' stops {name}, anything else is sent to {name} as feedback: "
)


class AutonomousAgent(LoopAgent):
    """AutoGPT 0.2's autonomous loop: goals, a JSON thought and command per cycle, human
    authorisation, short- and long-term memory, and a workspace the file commands stay in.

    Args:
        name: the agent's name (also in its prompt).
        role: what the agent is, in a phrase ("an assistant that ..."); also its description.
        goals: up to 5 goals. The task of a run (``run(task)``, or a message received in a
            chat) is added as the last one.
        llm_config: the model, as for any agent.
        workspace: the directory the file commands are confined to (created if missing).
        commands: the built-in commands to enable, by name; ``None`` enables the file
            commands and ``task_complete``, plus ``execute_python`` and
            ``execute_python_file`` when there is a ``code_executor``. Functions registered
            with ``register_for_llm`` / ``register_for_execution`` (or ``function_map``) are
            commands too, and replace a built-in of the same name.
        code_executor: a :mod:`parley.coding` executor (or a ``CodeExecutorFactory`` config
            dict; a ``"commandline-local"`` one runs in the workspace unless told otherwise)
            for the Python commands. Without one the agent cannot run code.
        memory: the long-term memory; ``None`` makes a :class:`parley.memory.LongTermMemory`
            with the default embedding model (the ``memory`` extra), ``False`` runs without.
        memory_k: how many memories to recall each cycle.
        token_limit: the tokens of recent history (short-term memory) sent each cycle.
        max_cycles: cycles per run before it stops.
        budget: USD a run may spend; the cycle that reaches it is the last.
        continuous: never ask the human to authorise (AutoGPT's continuous mode).
        json_retries: how many times a cycle tells the model its reply could not be read and
            asks again, before the run stops.
        prompts: the fixed wording of the prompts (:class:`AutonomousPrompts`).
        **kwargs: passed to ``ConversableAgent`` (the system message is built by the agent).

    After a run, :attr:`cycles` holds a :class:`CycleRecord` per cycle and
    :attr:`stop_reason` why the run ended (a :data:`StopReason`).
    """

    def __init__(
        self,
        name: str,
        role: str = DEFAULT_ROLE,
        goals: Sequence[str] = (),
        *,
        llm_config: dict[str, Any] | Literal[False] | None = None,
        workspace: str | Path = "workspace",
        commands: Collection[str] | None = None,
        code_executor: CodeExecutor | Mapping[str, Any] | None = None,
        memory: LongTermMemory | Literal[False] | None = None,
        memory_k: int = 5,
        token_limit: int = 4000,
        max_cycles: int = 25,
        budget: float | None = None,
        continuous: bool = False,
        json_retries: int = 3,
        prompts: AutonomousPrompts | None = None,
        **kwargs: Any,
    ) -> None:
        if "system_message" in kwargs:
            raise TypeError(
                "AutonomousAgent builds its system message from its name, role, goals and "
                "commands; change its wording with prompts=AutonomousPrompts(...) instead"
            )
        self.goals: tuple[str, ...] = _check_goals(goals)
        _check_limits(memory_k, token_limit, max_cycles, budget, json_retries)
        self.role = role
        self.workspace = Path(workspace).resolve()
        self.workspace.mkdir(parents=True, exist_ok=True)
        self._command_executor = _make_executor(code_executor, self.workspace)
        self._builtin_names = check_command_names(commands, self._command_executor is not None)
        self.memory: LongTermMemory | None = _make_memory(memory)
        self.memory_k = memory_k
        self.token_limit = token_limit
        self.max_cycles = max_cycles
        self.budget = budget
        self.continuous = continuous
        self.json_retries = json_retries
        self.prompts = prompts or AutonomousPrompts()
        kwargs.setdefault("description", role)
        super().__init__(name, llm_config=llm_config, system_message="", **kwargs)
        self.cycles: list[CycleRecord] = []
        self.stop_reason: StopReason | None = None
        self.update_system_message(self.build_system_prompt(self.goals))

    # -- what the model is told and can do ------------------------------------------------

    def command_table(self) -> dict[str, Command]:
        """The commands of a run, by name: the enabled built-ins, then the registered
        functions (which replace a built-in of the same name). Override to change them."""
        table = builtin_commands(self._builtin_names, self.workspace, self._command_executor)
        llm_config = self.llm_config if isinstance(self.llm_config, Mapping) else None
        table.update(user_commands(llm_config, self.function_map, self._call_function))
        return table

    def build_system_prompt(
        self, goals: Sequence[str], commands: Mapping[str, Command] | None = None
    ) -> str:
        """The system prompt for ``goals`` (and the current commands). Override to write it
        your own way; the fixed wording is in :attr:`prompts`."""
        return system_prompt(
            self.prompts,
            name=self.name,
            role=self.role,
            goals=goals,
            commands=self.command_table() if commands is None else commands,
            token_limit=self.token_limit,
            has_memory=self.memory is not None,
        )

    async def _call_function(self, name: str, args: dict[str, Any]) -> str:
        _, result = await self.a_execute_function({"name": name, "arguments": args})
        return str(result.get("content") or "")

    # -- the loop -------------------------------------------------------------------------

    async def a_run(self, task: str) -> str:
        """Run cycles toward the goals (and ``task``, if any) until the task is complete or a
        limit stops it; returns the final report."""
        goals = [*self.goals, task.strip()] if task and task.strip() else list(self.goals)
        self.cycles = []
        self.stop_reason = None
        if not goals:
            self.stop_reason = "no_goals"
            return "Nothing to do: the agent has no goals and was given no task."
        commands = self.command_table()
        self.update_system_message(self.build_system_prompt(goals, commands))
        out = IOStream.get_default()
        history: list[dict[str, Any]] = []
        remembered: dict[str, dict[str, Any]] = {}  # memory id -> its cycle's reply message
        spent = 0.0
        authorised = 0  # commands the human authorised in advance ("y -N")
        report = ""
        for _ in range(self.max_cycles):
            request = await self._request(history, goals, remembered)
            reply, cost, problem = await self._ask(request)
            spent += cost
            if reply is None:
                self.cycles.append(CycleRecord({}, "", {}, f"Error: {problem}", None, cost))
                self.stop_reason = "invalid_reply"
                report = (
                    f"Stopped: the model's reply could not be read after {self.json_retries + 1}"
                    f" tries ({problem})."
                )
                break
            out.print(plan_text(self.name, reply), flush=True)
            feedback: str | None = None
            if not self.continuous and authorised == 0:
                answer = parse_authorisation(await self._ask_authorisation(reply))
                if isinstance(answer, StopRun):
                    self.cycles.append(
                        CycleRecord(
                            reply.thoughts, reply.command, reply.args, _NOT_RUN_STOP, None, cost
                        )
                    )
                    self.stop_reason = "human_stop"
                    report = f"Stopped: the human ended the run at cycle {len(self.cycles)}."
                    break
                if isinstance(answer, Feedback):
                    feedback = answer.text
                elif isinstance(answer, Authorise):
                    authorised = answer.cycles
                    if answer.cycles > 1:
                        out.print(f"AUTHORISED: the next {answer.cycles} commands.", flush=True)
            if feedback is None and authorised > 0:
                authorised -= 1
            reply_message = {"role": "assistant", "content": reply.as_json()}
            history.append(reply_message)
            if feedback is not None:
                result = _NOT_RUN_FEEDBACK
                history.append({"role": "user", "content": feedback})
            elif reply.command in FINISH_COMMANDS and _finishes(reply.command, commands):
                result = str(reply.args.get("reason") or "The task is complete.")
                self.stop_reason = "task_complete"
                report = result
            else:
                result = await self._execute(reply, commands)
                history.append(
                    {"role": "system", "content": f"Command {reply.command} returned: {result}"}
                )
                out.print(f"SYSTEM: Command {reply.command} returned: {result}", flush=True)
            self.cycles.append(
                CycleRecord(reply.thoughts, reply.command, reply.args, result, feedback, cost)
            )
            await self._remember(reply, result, feedback, reply_message, remembered)
            if self.stop_reason is not None:
                break
            if self.budget is not None and spent >= self.budget:
                self.stop_reason = "budget"
                report = (
                    f"Stopped: the run cost ${spent:.4f}, reaching its budget of "
                    f"${self.budget:.4f}."
                )
                break
        else:
            self.stop_reason = "cycle_limit"
            report = f"Stopped: the limit of {self.max_cycles} cycles was reached."
        out.print(f"{self.name} finished ({self.stop_reason}): {report}", flush=True)
        return report

    async def _request(
        self,
        history: list[dict[str, Any]],
        goals: Sequence[str],
        remembered: Mapping[str, dict[str, Any]],
    ) -> list[dict[str, Any]]:
        """The messages of a cycle: prompt, time, memories, recent history, trigger."""
        recent = fit_history(history, self.token_limit, model_name(self._llm_mapping()))
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.system_message},
            time_message(self.prompts, datetime.now().astimezone()),
        ]
        if self.memory is not None:
            shown = {id(m) for m in recent}
            # Memories of cycles still in the recent history would only repeat them.
            skip = {i for i, m in remembered.items() if id(m) in shown}
            hits = await self.memory.a_search(
                memory_query(recent, goals), self.memory_k + len(skip)
            )
            texts = [h.text for h in hits if h.id not in skip][: self.memory_k]
            recalled = memory_message(self.prompts, texts)
            if recalled is not None:
                messages.append(recalled)
        messages.extend(dict(m) for m in recent)
        messages.append({"role": "user", "content": self.prompts.trigger})
        return messages

    async def _ask(self, request: list[dict[str, Any]]) -> tuple[ModelReply | None, float, str]:
        """The model's reply read; a reply that cannot be read is explained to the model and
        asked again, ``json_retries`` times. (reply or None, cost, the last problem)."""
        messages = list(request)
        cost = 0.0
        problem = ""
        for _ in range(self.json_retries + 1):
            turn = await ask_model(self, messages)
            cost += turn.cost
            try:
                return read_reply(turn.text), cost, ""
            except ReplyFormatError as error:
                problem = str(error)
            IOStream.get_default().print(f"SYSTEM: the reply could not be read: {problem}")
            messages = [
                *request,
                {"role": "assistant", "content": turn.text},
                {"role": "user", "content": self.prompts.invalid_reply.format(error=problem)},
            ]
        return None, cost, problem

    async def _ask_authorisation(self, reply: ModelReply) -> str:
        prompt = _AUTHORISE.format(name=self.name)
        about = {"role": "assistant", "name": self.name, "content": reply.as_json()}
        return await ask_human(self, prompt, about)

    async def _execute(self, reply: ModelReply, commands: Mapping[str, Command]) -> str:
        command = commands.get(reply.command)
        if command is None or command.run is None:
            known = ", ".join(commands) or "none"
            return f"Error: unknown command {reply.command!r}. The commands are: {known}."
        return await run_command(command, reply.args)

    async def _remember(
        self,
        reply: ModelReply,
        result: str,
        feedback: str | None,
        reply_message: dict[str, Any],
        remembered: dict[str, dict[str, Any]],
    ) -> None:
        if self.memory is None:
            return
        text = (
            f"Assistant reply: {reply.as_json()}\nResult: {result}\n"
            f"Human feedback: {feedback if feedback is not None else 'none'}"
        )
        remembered[await self.memory.a_add(text)] = reply_message

    def _llm_mapping(self) -> Mapping[str, Any] | None:
        return self.llm_config if isinstance(self.llm_config, Mapping) else None


_NOT_RUN_STOP = "Not run: the human stopped the run."
_NOT_RUN_FEEDBACK = "Not run: the human gave feedback instead."


def _finishes(name: str, commands: Mapping[str, Command]) -> bool:
    """Whether ``name`` ends the run: task_complete is enabled and not replaced by a user
    function of that name."""
    builtin = commands.get("task_complete")
    if builtin is None or builtin.run is not None:
        return False
    return name == "task_complete" or name not in commands


def _check_goals(goals: Sequence[str]) -> tuple[str, ...]:
    if isinstance(goals, str):
        raise TypeError(f"goals must be a list of strings, e.g. [{goals!r}]")
    checked = tuple(str(g).strip() for g in goals)
    if len(checked) > MAX_GOALS:
        raise ValueError(
            f"an AutonomousAgent takes at most {MAX_GOALS} goals, got {len(checked)}: merge "
            "some, or give the rest as the task of a run"
        )
    if not all(checked):
        raise ValueError("a goal is empty; remove it")
    return checked


def _check_limits(
    memory_k: int, token_limit: int, max_cycles: int, budget: float | None, json_retries: int
) -> None:
    for label, value, low in (
        ("memory_k", memory_k, 1),
        ("token_limit", token_limit, 1),
        ("max_cycles", max_cycles, 1),
        ("json_retries", json_retries, 0),
    ):
        if not isinstance(value, int) or value < low:
            raise ValueError(f"{label} must be an integer >= {low}, got {value!r}")
    if budget is not None and not budget > 0:
        raise ValueError(f"budget must be a positive number of USD (or None), got {budget!r}")


def _make_executor(
    spec: CodeExecutor | Mapping[str, Any] | None, workspace: Path
) -> CodeExecutor | None:
    if spec is None:
        return None
    if isinstance(spec, Mapping):
        from ..coding.factory import CodeExecutorFactory

        config = dict(spec)
        if config.get("executor") == "commandline-local":
            local = dict(config.get("commandline-local") or {})
            local.setdefault("work_dir", str(workspace))
            config["commandline-local"] = local
        return CodeExecutorFactory.create(config)
    if isinstance(spec, CodeExecutor):
        return spec
    raise TypeError(
        "code_executor must be a parley.coding executor (e.g. LocalCommandLineCodeExecutor, "
        f"DockerCommandLineCodeExecutor) or a CodeExecutorFactory config dict, got {spec!r}"
    )


def _make_memory(memory: LongTermMemory | Literal[False] | None) -> LongTermMemory | None:
    if memory is False:
        return None
    if memory is not None:
        return memory
    from ..memory import LongTermMemory

    try:
        return LongTermMemory()
    except ImportError as e:
        raise ImportError(
            f"AutonomousAgent's default long-term memory needs the `memory` extra: pip install "
            f"'parley[memory]' ({e}). Or pass memory=False to run without long-term memory, or "
            "memory=LongTermMemory(embedding_function=...) with an embedding of your own."
        ) from e
