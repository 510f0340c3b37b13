"""The chats the batch tests run, and the fake model they talk to.

A module (not test code) so that Ray workers import the factories by name: the test cluster
puts this checkout on their ``PYTHONPATH``. Run as a script it is the child process of the
interrupted-batch test: ``python chats.py CONFIG_JSON STORE_PATH BATCH_ID N CONCURRENCY``.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from dataclasses import dataclass
from typing import Any

from parley import ConversableAgent, GroupChat, GroupChatManager
from parley.batch import BatchItem

PRICE = [0.001, 0.002]  # USD per 1k prompt / completion tokens: costs that add up


def respond(body: dict[str, Any]) -> Any:
    """The model: a reply that depends only on the request (the same chat, the same answer),
    naming the task the chat is about so that a test can tell the chats' requests apart."""
    messages = body["messages"]
    last = str(messages[-1].get("content"))
    if "who should speak next" in last:  # a group chat's speaker selection
        return "critic" if str(messages[-2].get("name")) == "writer" else "writer"
    if "Summarize" in last:
        return f"summary of task {task_of(body)}"
    return f"reply {len(messages)} to task {task_of(body)}"


def task_of(body: dict[str, Any]) -> int:
    """The task number a request is about (every chat's first message names it)."""
    for message in body["messages"]:
        match = re.search(r"task (\d+)", str(message.get("content")))
        if match:
            return int(match.group(1))
    return -1


def agents(config: dict[str, Any]) -> tuple[ConversableAgent, ConversableAgent]:
    llm = {**config, "cache_seed": None}
    user = ConversableAgent("user", llm_config=llm, human_input_mode="NEVER")
    assistant = ConversableAgent("assistant", llm_config=llm, human_input_mode="NEVER")
    return user, assistant


@dataclass(frozen=True)
class PairChat:
    """Two agents, ``turns`` turns about task ``item.input`` (async)."""

    config: dict[str, Any]
    turns: int = 2

    async def __call__(self, item: BatchItem[int]) -> Any:
        user, assistant = agents(self.config)
        return await item.a_initiate_chat(
            user, assistant, message=f"Solve task {item.input}.", max_turns=self.turns
        )


@dataclass(frozen=True)
class NodeTaggedPairChat(PairChat):
    """``PairChat`` whose requests name the test cluster's node they come from (the
    ``x-node`` header: the node's marker in the worker's environment), so that a test can
    see when a node is busy with chats."""

    async def __call__(self, item: BatchItem[int]) -> Any:
        node = os.environ.get("PARLEY_TEST_RAY_CLUSTER", "")
        entries = [{**e, "default_headers": {"x-node": node}} for e in self.config["config_list"]]
        tagged = PairChat({**self.config, "config_list": entries}, self.turns)
        return await tagged(item)


@dataclass(frozen=True)
class LockedUp:
    """``PairChat``, but chat 3's result holds a lock, which cannot go back to the driver of a
    Ray batch; the others can."""

    config: dict[str, Any]

    async def __call__(self, item: BatchItem[int]) -> Any:
        result = await PairChat(self.config)(item)
        return threading.Lock() if item.input == 3 else result


@dataclass(frozen=True)
class SyncPairChat:
    """The same chat from a sync factory."""

    config: dict[str, Any]
    turns: int = 2

    def __call__(self, item: BatchItem[int]) -> Any:
        user, assistant = agents(self.config)
        return item.initiate_chat(
            user, assistant, message=f"Solve task {item.input}.", max_turns=self.turns
        )


@dataclass(frozen=True)
class GroupOfThree:
    """A group chat: user, writer and critic, three rounds."""

    config: dict[str, Any]

    async def __call__(self, item: BatchItem[int]) -> Any:
        llm = {**self.config, "cache_seed": None}
        user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
        writer = ConversableAgent("writer", llm_config=llm, human_input_mode="NEVER")
        critic = ConversableAgent("critic", llm_config=llm, human_input_mode="NEVER")
        group = GroupChat([user, writer, critic], messages=[], max_round=3)
        manager = GroupChatManager(group, llm_config=llm)
        return await item.a_initiate_chat(user, manager, message=f"Write about task {item.input}.")


@dataclass(frozen=True)
class TwoInARow:
    """A chat queue: a first chat, then a second one that gets its summary as carryover."""

    config: dict[str, Any]

    async def __call__(self, item: BatchItem[int]) -> Any:
        user, assistant = agents(self.config)
        reviewer = ConversableAgent(
            "reviewer", llm_config={**self.config, "cache_seed": None}, human_input_mode="NEVER"
        )
        queue = [
            {"recipient": assistant, "message": f"Solve task {item.input}.", "max_turns": 1},
            {"recipient": reviewer, "message": "Review it.", "max_turns": 1},
        ]
        return await item.a_initiate_chats(queue, sender=user)


def histories(results: Any) -> list[Any]:
    """What the tests compare between runs: each chat's transcript and summary."""
    out = []
    for result in results:
        if isinstance(result, list):
            out.append([(r.chat_history, r.summary) for r in result])
        else:
            out.append(None if result is None else (result.chat_history, result.summary))
    return out


def _main() -> None:
    from parley.batch import run_chats
    from parley.durable import ChatStore

    config, path, batch_id, count, concurrency = sys.argv[1:6]
    result = run_chats(
        PairChat(json.loads(config), turns=3),
        range(int(count)),
        store=ChatStore(path, synchronous="NORMAL"),
        batch_id=batch_id,
        concurrency=int(concurrency),
        progress=False,
    )
    print(f"done: {len(result.succeeded())} ok, {len(result.errors)} failed", flush=True)


if __name__ == "__main__":
    _main()
