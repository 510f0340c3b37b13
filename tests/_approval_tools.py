"""Tools that need the human's approval, each noting the calls that ran: the approval tests'
shared parts (agent chats, durable chats, runs, the web page, AG-UI)."""

from __future__ import annotations

from typing import Any

import parley
from parley import ConversableAgent


def add_delete_file(
    caller: ConversableAgent, executor: ConversableAgent, deleted: list[str], **options: Any
) -> None:
    """``delete_file(path)``, approved per call; the paths it deleted go to ``deleted``."""

    def delete_file(path: str) -> str:
        deleted.append(path)
        return f"deleted {path}"

    parley.register_function(
        delete_file,
        caller=caller,
        executor=executor,
        description="Delete a file.",
        requires_approval=True,
        **options,
    )


def add_send_email(
    caller: ConversableAgent, executor: ConversableAgent, sent: list[str], **options: Any
) -> None:
    """``send_email(to, body)``, approved per call; the addresses it sent to go to ``sent``."""

    def send_email(to: str, body: str) -> str:
        sent.append(to)
        return f"sent to {to}"

    parley.register_function(
        send_email,
        caller=caller,
        executor=executor,
        description="Send an email.",
        requires_approval=True,
        **options,
    )
