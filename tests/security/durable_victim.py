"""The durable chat the journal-forgery tests attack, and the script that runs it in a child
process until it is killed.

``python durable_victim.py CONFIG_LIST_JSON TMP chat|batch`` runs the chat (``chat``: one
``initiate_chat``; ``batch``: ``run_chats`` over one input) with its store at
``TMP/project/chats.db`` and SIGKILLs itself when the first code block starts: the model's first
response is committed then. ``... batch-to-end LEASE_SECONDS`` runs the batch to its end and
prints its errors' types and messages as JSON (the lease tests stall it on the way). The assistant can call ``pay``, a tool of the host that writes
``TMP/paid.txt``; the model never asks for it.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from parley import AssistantAgent, UserProxyAgent, register_function
from parley._core import events as _events
from parley.batch import BatchItem, run_chats
from parley.coding import LocalCommandLineCodeExecutor
from parley.durable import ChatStore

CHAT_ID = "victim"
BATCH_ID = "nightly"
TASK = "Say hello from Python."
CODE = "```python\nprint('hello')\n```"


def respond(body: dict[str, Any]) -> Any:
    text = " ".join(str(m.get("content")) for m in body["messages"])
    if "Summarize" in str(body["messages"][-1].get("content")):
        return "It said hello."
    return "TERMINATE" if "exitcode" in text else CODE


def store_path(tmp: Path) -> Path:
    return tmp / "project" / "chats.db"


def agents(config_list: list[dict[str, Any]], tmp: Path) -> tuple[UserProxyAgent, AssistantAgent]:
    work = tmp / "work"
    work.mkdir(parents=True, exist_ok=True)
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={"executor": LocalCommandLineCodeExecutor(work_dir=work)},
        is_termination_msg=lambda m: "TERMINATE" in str(m.get("content") or ""),
        default_auto_reply="Go on.",
    )
    assistant = AssistantAgent("assistant", llm_config={"config_list": config_list})

    def pay(to: str, amount: int) -> str:
        with open(tmp / "paid.txt", "a") as f:
            f.write(f"{to} {amount}\n")
        return f"paid {amount} to {to}"

    register_function(
        pay, caller=assistant, executor=user, description="Pay someone.", idempotent=False
    )
    return user, assistant


class Factory:
    """The batch's chat factory."""

    def __init__(self, config_list: list[dict[str, Any]], tmp: Path) -> None:
        self.config_list, self.tmp = config_list, tmp

    def __call__(self, item: BatchItem[int]) -> Any:
        user, assistant = agents(self.config_list, self.tmp)
        return item.initiate_chat(user, assistant, message=TASK)


class _KillAtCode(_events.Listener):
    def on_step_start(self, step: _events.Step) -> None:
        if step.kind == "code_execution":
            os.kill(os.getpid(), signal.SIGKILL)


def main(argv: list[str]) -> None:
    config_list, tmp, mode = json.loads(argv[1]), Path(argv[2]), argv[3]
    store_path(tmp).parent.mkdir(parents=True, exist_ok=True)
    if mode == "batch-to-end":
        store = ChatStore(store_path(tmp), lease_seconds=float(argv[4]))
        batch = run_chats(Factory(config_list, tmp), [0], store=store, batch_id=BATCH_ID)
        print(json.dumps([[e.type, e.message] for e in batch.errors.values()]), flush=True)
        return
    store = ChatStore(store_path(tmp))
    _events.add_listener(_KillAtCode())
    if mode == "chat":
        user, assistant = agents(config_list, tmp)
        user.initiate_chat(assistant, message=TASK, store=store, chat_id=CHAT_ID)
    else:
        run_chats(Factory(config_list, tmp), [0], store=store, batch_id=BATCH_ID)


if __name__ == "__main__":
    main(sys.argv)
