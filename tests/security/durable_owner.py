"""A process that resumes (or starts) the durable chat of ``tests/durable/chat_script.py``
("pair", its tool registered ``idempotent=False``), for the lease tests.

``python durable_owner.py CONFIG_LIST_JSON TMP STORE LEASE_SECONDS resume|initiate``: STORE is
"sqlite" (``TMP/chats.db``) or a redis:// URL. Exit 0 when the chat ran to its end; 4 when its
claim was refused (another run holds the chat), 5 when it lost its lease while it ran; the
error's text and owner are printed as JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from parley.durable import ChatStore, RedisChatStore
from parley.exceptions import ChatLeaseError
from tests.durable import chat_script as script


def store_of(spec: str, tmp: Path, lease_seconds: float) -> Any:
    if spec == "sqlite":
        return ChatStore(tmp / "chats.db", lease_seconds=lease_seconds)
    return RedisChatStore(spec, lease_seconds=lease_seconds)


def main(argv: list[str]) -> None:
    config_list, tmp, spec = json.loads(argv[1]), Path(argv[2]), argv[3]
    store, mode = store_of(spec, tmp, float(argv[4])), argv[5]
    chat = script.build("pair", config_list, tmp, idempotent=False)
    try:
        if mode == "resume":
            chat.resume(store)
        else:
            chat.run(store=store, chat_id=script.CHAT_ID)
    except ChatLeaseError as e:
        print(json.dumps({"error": str(e), "owner": e.owner, "lost": e.lost}), flush=True)
        sys.exit(5 if e.lost else 4)


if __name__ == "__main__":
    main(sys.argv)
