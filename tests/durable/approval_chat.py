"""A durable chat whose tool call and code both need the human's approval, and the script that
runs (or resumes) it in a child process.

``python approval_chat.py CONFIG_LIST_JSON TMP STORE HUMAN ACTION`` starts (ACTION "start") or
resumes ("resume") chat ``CHAT_ID`` of STORE ("sqlite" for TMP/chats.db, or a redis:// URL).
HUMAN says what happens when the human is asked: "pause" (``PausingIO``: the chat pauses, the
script prints the question and exits with 3), "die" (the process SIGKILLs itself while it
waits), "run" (the chat runs as ``user.run(...)``: the script prints the run's first input
request event as JSON and SIGKILLs itself while the chat waits for its answer) or "none" (a
human who cannot answer: every answer must come from the store). A chat that ends prints its
result as JSON. Each run of the tool and of the code appends a line to a
file in TMP, so the test counts how often each ran.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from parley import AssistantAgent, UserProxyAgent, register_function
from parley.coding import LocalCommandLineCodeExecutor
from parley.durable import ChatPaused, ChatStore, PausingIO, RedisChatStore, resume
from parley.io import IOScripted, IOStream

CHAT_ID = "approvals-1"
TASK = "Archive the logs, then count them."
CODE = "```python\nopen('code.txt', 'a').write('ran\\n')\nprint('counted 3 logs')\n```"
PAUSED = 3


def respond(body: dict[str, Any]) -> Any:
    """The model: a tool call first, then code, then the end (by what the chat holds)."""
    messages = body["messages"]
    if not any(m.get("role") == "tool" for m in messages):
        return {
            "tool_calls": [
                {"name": "archive", "arguments": {"folder": "logs"}, "id": "call_archive"}
            ]
        }
    if not any("exitcode" in str(m.get("content")) for m in messages):
        return CODE
    return "Done. TERMINATE"


def build(config_list: list[dict[str, Any]], tmp: Path) -> tuple[UserProxyAgent, AssistantAgent]:
    """The chat's agents, as every process builds them (again, to resume)."""
    work = tmp / "work"
    work.mkdir(parents=True, exist_ok=True)
    assistant = AssistantAgent("assistant", llm_config={"config_list": config_list})
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={
            "executor": LocalCommandLineCodeExecutor(work_dir=work),
            "requires_approval": True,
        },
        is_termination_msg=lambda m: "TERMINATE" in str(m.get("content")),
    )

    def archive(folder: str) -> str:
        with open(tmp / "tool.txt", "a") as f:
            f.write(folder + "\n")
        return f"archived {folder}"

    register_function(
        archive,
        caller=assistant,
        executor=user,
        description="Archive a folder.",
        requires_approval=True,
        idempotent=False,
    )
    return user, assistant


def store_of(spec: str, tmp: Path) -> Any:
    return ChatStore(tmp / "chats.db") if spec == "sqlite" else RedisChatStore(spec)


class DieAtInput(IOScripted):
    """A human who never answers: the process dies while it waits."""

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")


def human(kind: str) -> IOStream:
    if kind == "pause":
        return PausingIO()
    if kind == "die":
        return DieAtInput([])
    return IOScripted([])  # asked anything, it raises: the answers must all be recorded


def run_and_die_at_the_request(user: UserProxyAgent, assistant: AssistantAgent, store: Any) -> None:
    response = user.run(assistant, message=TASK, store=store, chat_id=CHAT_ID)
    for event in response.events:
        if event.type == "input_request":
            print(event.model_dump_json(), flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        if event.type in ("error", "run_completion"):
            print(event.model_dump_json(), flush=True)
            sys.exit(1)  # the chat was to wait for an approval


def main(argv: list[str]) -> None:
    config_list, tmp, spec, kind, action = json.loads(argv[1]), Path(argv[2]), *argv[3:6]
    user, assistant = build(config_list, tmp)
    store = store_of(spec, tmp)
    if kind == "run":
        run_and_die_at_the_request(user, assistant, store)
    with IOStream.set_default(human(kind)):
        try:
            if action == "start":
                result = user.initiate_chat(assistant, message=TASK, store=store, chat_id=CHAT_ID)
            else:
                result = resume(CHAT_ID, store=store, sender=user, recipient=assistant)
        except ChatPaused as paused:
            print(json.dumps([paused.chat_id, paused.agent, paused.prompt]))
            sys.exit(PAUSED)
    print(json.dumps([result.termination_reason, result.human_input]))


if __name__ == "__main__":
    main(sys.argv)
