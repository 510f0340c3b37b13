"""The durable chats the tests interrupt, and the script that runs one in a child process.

``python chat_script.py SCENARIO CONFIG_LIST_JSON TMP STORE MODE K [not-idempotent]`` runs
scenario SCENARIO ("pair", "group" or "queue") with a store (STORE: "sqlite" for TMP/chats.db,
or a redis:// URL) and SIGKILLs itself at the K-th model call, tool call or code block: at its
start (MODE "start": the steps before it are committed) or at its end (MODE "end": its work is
done, its result not yet committed). Each tool call and code block appends a line to a file in
TMP, so the test counts how often each ran.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parley import (
    AssistantAgent,
    ConversableAgent,
    GroupChat,
    GroupChatManager,
    UserProxyAgent,
    register_function,
)
from parley._core import events as _events
from parley.coding import LocalCommandLineCodeExecutor
from parley.durable import ChatPaused, ChatStore, PausingIO, RedisChatStore
from parley.io import IOStream

CHAT_ID = "chat-1"
TASK = "Record a note, then run some code."
REVIEW = "Review what was done."
KINDS = ("llm_call", "tool_call", "code_execution")
CODE = "```python\nprint('code ran')\nopen('code.txt', 'a').write('ran\\n')\n```"
CODER_PROMPT = "You are the coder."
PLANNER_PROMPT = "You are the planner."
REVIEWER_PROMPT = "You are the reviewer."


def respond(body: dict[str, Any]) -> Any:
    """The model: its answer by how far the chat is (the same request, the same answer)."""
    messages = body["messages"]
    system = str(messages[0].get("content")) if messages else ""
    last = str(messages[-1].get("content"))
    text = " ".join(str(m.get("content")) for m in messages)
    has_tool_result = any(m.get("role") == "tool" for m in messages)
    if "Summarize" in last:
        return "The note was recorded and the code ran."
    if "who should speak next" in last:  # a group chat's speaker selection
        if "exitcode" in text:
            return "planner"
        return "user" if "```python" in text else "coder"
    if system.startswith((PLANNER_PROMPT, REVIEWER_PROMPT)):
        return "All done. TERMINATE"
    if not has_tool_result:
        return {"tool_calls": [{"name": "record", "arguments": {"text": "hi"}, "id": "call_1"}]}
    if "exitcode" not in text:
        return CODE
    return "TERMINATE"


def _terminates(message: dict[str, Any]) -> bool:
    return "TERMINATE" in str(message.get("content") or "")


def _user(tmp: Path, human_input_mode: str = "NEVER") -> UserProxyAgent:
    work = tmp / "work"
    work.mkdir(parents=True, exist_ok=True)
    return UserProxyAgent(
        "user",
        human_input_mode=human_input_mode,  # type: ignore[arg-type]
        code_execution_config={"executor": LocalCommandLineCodeExecutor(work_dir=work)},
        is_termination_msg=_terminates,
        default_auto_reply="Go on.",
    )


def _record_tool(tmp: Path, caller: Any, executor: Any, idempotent: bool) -> None:
    def record(text: str) -> str:
        with open(tmp / "tool.txt", "a") as f:
            f.write(text + "\n")
        return f"recorded {text}"

    register_function(
        record,
        caller=caller,
        executor=executor,
        description="Record a note.",
        idempotent=idempotent,
    )


@dataclass
class Chat:
    """A scenario's agents, as a script builds them (again, to resume), and how it runs."""

    agents: dict[str, ConversableAgent]
    run: Callable[..., Any]  # (**durable) -> result
    resume: Callable[..., Any]  # (store, **kw) -> result (async when the resume is)
    group: GroupChat | None = None

    def state(self) -> Any:
        """Every agent's histories, counters and human inputs, by partner name."""
        out = [
            (
                name,
                {a.name: m for a, m in agent.chat_messages.items()},
                {a.name: n for a, n in agent._consecutive_auto_reply_counter.items()},
                list(agent.state.human_input),
            )
            for name, agent in sorted(self.agents.items())
        ]
        return out, (list(self.group.messages) if self.group is not None else None)


def _pair(config_list: list[dict[str, Any]], tmp: Path, idempotent: bool, mode: str) -> Chat:
    from parley.durable import a_resume, resume

    user = _user(tmp, mode)
    assistant = AssistantAgent("assistant", llm_config={"config_list": config_list})
    _record_tool(tmp, assistant, user, idempotent)

    def run(**durable: Any) -> Any:
        return user.initiate_chat(
            assistant, message=TASK, summary_method="reflection_with_llm", **durable
        )

    def again(store: Any, asynchronous: bool = False, **kw: Any) -> Any:
        how = a_resume if asynchronous else resume
        return how(CHAT_ID, store=store, sender=user, recipient=assistant, **kw)

    return Chat({"user": user, "assistant": assistant}, run, again)


def _group(config_list: list[dict[str, Any]], tmp: Path, idempotent: bool, mode: str) -> Chat:
    from parley.durable import resume

    llm = {"config_list": config_list}
    user = _user(tmp, mode)
    user.description = "Runs the code and the tools."
    coder = AssistantAgent("coder", system_message=CODER_PROMPT, llm_config=llm)
    coder.description = "Writes code and records notes."
    planner = AssistantAgent("planner", system_message=PLANNER_PROMPT, llm_config=llm)
    planner.description = "Says when the work is done."
    _record_tool(tmp, coder, user, idempotent)
    group = GroupChat([user, coder, planner], messages=[], max_round=12)
    manager = GroupChatManager(group, llm_config=llm, is_termination_msg=_terminates)

    def run(**durable: Any) -> Any:
        return user.initiate_chat(manager, message=TASK, **durable)

    def again(store: Any, **kw: Any) -> Any:
        return resume(CHAT_ID, store=store, sender=user, recipient=manager, **kw)

    agents = {"user": user, "coder": coder, "planner": planner, "chat_manager": manager}
    return Chat(agents, run, again, group)


def _queue(config_list: list[dict[str, Any]], tmp: Path, idempotent: bool, mode: str) -> Chat:
    from parley.durable import resume

    llm = {"config_list": config_list}
    user = _user(tmp, mode)
    assistant = AssistantAgent("assistant", llm_config=llm)
    reviewer = AssistantAgent("reviewer", system_message=REVIEWER_PROMPT, llm_config=llm)
    _record_tool(tmp, assistant, user, idempotent)
    queue = [
        {"recipient": assistant, "message": TASK, "summary_method": "reflection_with_llm"},
        {"recipient": reviewer, "message": REVIEW, "summary_method": "last_msg"},
    ]

    def run(**durable: Any) -> Any:
        return user.initiate_chats(queue, **durable)

    def again(store: Any, **kw: Any) -> Any:
        return resume(CHAT_ID, store=store, sender=user, chat_queue=queue, **kw)

    return Chat({"user": user, "assistant": assistant, "reviewer": reviewer}, run, again)


def _concurrent(config_list: list[dict[str, Any]], tmp: Path, idempotent: bool, mode: str) -> Chat:
    from parley.agentchat._sync_chat import run_sync
    from parley.durable import resume

    llm = {"config_list": config_list}
    user = _user(tmp, mode)
    assistant = AssistantAgent("assistant", llm_config=llm)
    reviewer = AssistantAgent("reviewer", system_message=REVIEWER_PROMPT, llm_config=llm)
    planner = AssistantAgent("planner", system_message=PLANNER_PROMPT, llm_config=llm)
    _record_tool(tmp, assistant, user, idempotent)
    queue = [
        {"chat_id": 1, "recipient": assistant, "message": TASK, "summary_method": "last_msg"},
        {"chat_id": 2, "recipient": reviewer, "message": REVIEW, "summary_method": "last_msg"},
        {"chat_id": 3, "recipient": planner, "message": "Plan.", "prerequisites": [1, 2]},
    ]

    def run(**durable: Any) -> Any:
        return run_sync(user.a_initiate_chats(queue, **durable))

    def again(store: Any, **kw: Any) -> Any:
        return resume(CHAT_ID, store=store, sender=user, chat_queue=queue, **kw)

    agents = {"user": user, "assistant": assistant, "reviewer": reviewer, "planner": planner}
    return Chat(agents, run, again)


SCENARIOS: dict[str, Callable[..., Chat]] = {
    "pair": _pair,
    "group": _group,
    "queue": _queue,
    "concurrent": _concurrent,
}
# The steps of each uninterrupted chat, in order (a pair's summary is one more model call).
STEPS = {
    "pair": ("llm_call", "tool_call", "llm_call", "code_execution", "llm_call", "llm_call"),
    "group": (
        *("llm_call", "llm_call", "tool_call"),  # select coder, coder calls; user runs the tool
        *("llm_call", "llm_call"),  # select coder, coder writes code
        *("llm_call", "code_execution"),  # select user, user runs it
        *("llm_call", "llm_call"),  # select planner, planner ends the chat
    ),
    "queue": (
        *("llm_call", "tool_call", "llm_call", "code_execution", "llm_call", "llm_call"),
        "llm_call",  # the reviewer
    ),
    # The first two chats run at once, so their steps interleave in no fixed order.
    "concurrent": ("llm_call",) * 2
    + ("tool_call", "llm_call", "code_execution", "llm_call")
    + ("llm_call",),  # the planner, once both are done
}


def build(
    scenario: str,
    config_list: list[dict[str, Any]],
    tmp: Path,
    idempotent: bool = True,
    human_input_mode: str = "NEVER",
) -> Chat:
    return SCENARIOS[scenario](config_list, tmp, idempotent, human_input_mode)


def store_of(spec: str, tmp: Path) -> Any:
    return ChatStore(tmp / "chats.db") if spec == "sqlite" else RedisChatStore(spec)


class _KillAt(_events.Listener):
    def __init__(self, mode: str, k: int) -> None:
        self.mode, self.k, self.seen = mode, k, 0

    def on_step_start(self, step: _events.Step) -> None:
        if step.kind in KINDS:
            self.seen += 1
            if self.mode == "start" and self.seen == self.k:
                os.kill(os.getpid(), signal.SIGKILL)

    def on_step_end(self, step: _events.Step) -> None:
        if step.kind in KINDS and self.mode == "end" and self.seen == self.k:
            os.kill(os.getpid(), signal.SIGKILL)


class _DieAtInput:
    """A human who never answers: the process dies while it waits."""

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        pass

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")


def main(argv: list[str]) -> None:
    scenario, config_list, tmp = argv[1], json.loads(argv[2]), Path(argv[3])
    store, mode, k = store_of(argv[4], tmp), argv[5], int(argv[6])
    if mode in ("pause", "die-at-input"):  # the human is asked at the end: pause, or die
        chat = build(scenario, config_list, tmp, human_input_mode="TERMINATE")
        stream = PausingIO() if mode == "pause" else _DieAtInput()
        with IOStream.set_default(stream):
            try:
                chat.run(store=store, chat_id=CHAT_ID)
            except ChatPaused as paused:
                print(json.dumps([paused.chat_id, paused.agent, paused.prompt]))
                sys.exit(3)
        return
    chat = build(scenario, config_list, tmp, idempotent="not-idempotent" not in argv)
    _events.add_listener(_KillAt(mode, k))
    chat.run(store=store, chat_id=CHAT_ID)


if __name__ == "__main__":
    main(sys.argv)
