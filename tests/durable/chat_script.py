"""The durable chat the tests interrupt, and the script that runs it in a child process.

``python chat_script.py CONFIG_LIST_JSON TMP MODE K [not-idempotent]`` runs the chat with a
store in TMP/chats.db and SIGKILLs itself at the K-th model call, tool call or code block:
at its start (MODE "start": the steps before it are committed) or at its end (MODE "end":
its work is done, its result not yet committed). Each tool call and code block appends a
line to a file in TMP, so the test counts how often each ran.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from parley import AssistantAgent, UserProxyAgent, _events, register_function
from parley.coding import LocalCommandLineCodeExecutor
from parley.durable import ChatStore

CHAT_ID = "chat-1"
TASK = "Record a note, then run some code."
KINDS = ("llm_call", "tool_call", "code_execution")
# The steps of the chat, in order: the model asks for the tool, then writes code, then ends;
# the summary is one more model call.
STEPS = ("llm_call", "tool_call", "llm_call", "code_execution", "llm_call", "llm_call")


def respond(body: dict[str, Any]) -> Any:
    """The model: its answer by how far the chat is (the same request, the same answer)."""
    messages = body["messages"]
    if "Summarize" in str(messages[-1].get("content")):
        return "The note was recorded and the code ran."
    tool_results = [m for m in messages if m.get("role") == "tool"]
    if not tool_results:
        return {"tool_calls": [{"name": "record", "arguments": {"text": "hi"}, "id": "call_1"}]}
    if not any("exitcode" in str(m.get("content")) for m in messages):
        return "```python\nprint('code ran')\nopen('code.txt', 'a').write('ran\\n')\n```"
    return "TERMINATE"


def build(
    config_list: list[dict[str, Any]], tmp: Path, idempotent: bool = True
) -> tuple[UserProxyAgent, AssistantAgent]:
    """The two agents, as a script builds them (again, to resume)."""
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={"executor": LocalCommandLineCodeExecutor(work_dir=work)},
        is_termination_msg=lambda m: "TERMINATE" in str(m.get("content") or ""),
    )
    assistant = AssistantAgent("assistant", llm_config={"config_list": config_list})

    def record(text: str) -> str:
        with open(tmp / "tool.txt", "a") as f:
            f.write(text + "\n")
        return f"recorded {text}"

    register_function(
        record,
        caller=assistant,
        executor=user,
        description="Record a note.",
        idempotent=idempotent,
    )
    return user, assistant


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


def chat(user: UserProxyAgent, assistant: AssistantAgent, **durable: Any) -> Any:
    return user.initiate_chat(
        assistant, message=TASK, summary_method="reflection_with_llm", **durable
    )


def main(argv: list[str]) -> None:
    config_list, tmp, mode, k = json.loads(argv[1]), Path(argv[2]), argv[3], int(argv[4])
    user, assistant = build(config_list, tmp, idempotent="not-idempotent" not in argv)
    _events.add_listener(_KillAt(mode, k))
    chat(user, assistant, store=ChatStore(tmp / "chats.db"), chat_id=CHAT_ID)


if __name__ == "__main__":
    main(sys.argv)
