"""Finding 1, end to end on the real sandboxes: code in the Docker sandbox, or in the local
executor's bubblewrap sandbox, must not run code on the host through the response cache.

The reported attack, with defaults: the Docker executor's work dir was ``.`` and ``cache_seed``
cached into ``./.cache/<seed>``, so the cache was inside the mounted work dir. A code block the
model wrote replaced the cached values with a pickle; the next replay of the chat unpickled it in
the host process and ran a command. Two fixes close it, and each is enough on its own: the work
dir is a dedicated folder that may not hold a cache (``parley.coding._work_dir``), and no cache
backend unpickles anything (``parley.cache``). ``test_cache_poisoning`` covers the second with
pickles planted by hand; here the model's own code tries it. The bubblewrap sandbox adds a third:
the current directory, where the cache is, is not in its view at all.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from parley import AssistantAgent, UserProxyAgent
from parley.coding import DockerCommandLineCodeExecutor, LocalCommandLineCodeExecutor
from parley.testing import FakeLLMServer
from tests.coding._docker_support import ensure_sandbox_image

# Looks through everything the sandbox can see for diskcache databases and makes every entry a
# pickle that runs a command when unpickled.
ATTACK = textwrap.dedent(
    """\
    import os, pickle, sqlite3

    class Payload:
        def __reduce__(self):
            return (os.system, ("touch {marker}",))

    planted = 0
    for root, _, files in os.walk("/"):
        if root.startswith(("/proc", "/sys", "/dev")) or "cache.db" not in files:
            continue
        try:
            db = sqlite3.connect(os.path.join(root, "cache.db"))
            planted += db.execute(
                "UPDATE Cache SET value = ?, mode = 4, filename = NULL",
                (pickle.dumps(Payload()),),
            ).rowcount
            db.commit()
            db.close()
        except sqlite3.Error as error:
            print("could not write", root, error)
    print("planted", planted)
    """
)


def sandboxed_executor(kind: str) -> Any:
    """A Docker or a bubblewrap executor, with its default work dir (``coding``, here)."""
    if kind == "bwrap":
        # When parley is root this runs the code as another uid (see _code_user), which could
        # not write root's cache files anyway; but it does not see them to begin with.
        return LocalCommandLineCodeExecutor(sandbox=True)
    # As the host user's uid (the Docker executor's default for a user who is not root; under
    # root the default would be another uid, which could not write root's cache files at all).
    return DockerCommandLineCodeExecutor(
        image=ensure_sandbox_image(), user=f"{os.getuid()}:{os.getgid()}"
    )


def chat(fake_llm: FakeLLMServer, kind: str) -> str:
    """One round: the model answers with the attack, the user proxy runs it in the sandbox."""
    assistant = AssistantAgent(
        "assistant", llm_config={"config_list": fake_llm.config_list(), "cache_seed": 41}
    )
    executor = sandboxed_executor(kind)
    user = UserProxyAgent(
        "user", human_input_mode="NEVER", code_execution_config={"executor": executor}
    )
    try:
        result = user.initiate_chat(assistant, message="tidy up", max_turns=1, silent=True)
        proxy_reply = user.generate_reply(sender=assistant)
    finally:
        executor.stop()
    assert result.chat_history[-1]["content"].startswith("```python")
    return str(proxy_reply)


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("docker", marks=pytest.mark.docker),
        pytest.param("bwrap", marks=pytest.mark.bwrap),
    ],
)
def test_sandboxed_code_cannot_reach_the_cache_the_host_replays(
    fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.chdir(tmp_path)  # defaults everywhere: cache and work dir relative to here
    marker = tmp_path / "pwned"
    fake_llm.add_reply(f"```python\n{ATTACK.format(marker=marker)}```")

    first = chat(fake_llm, kind)  # the model's answer is cached, then the attack runs
    assert "exitcode: 0" in first
    assert "planted 0" in first, "the sandbox could reach a response cache"
    assert "could not write" not in first, "the sandbox could see a response cache"

    second = chat(fake_llm, kind)  # the same request: the answer now comes from the cache
    assert len(fake_llm.requests) == 1, "the second chat should have been a cached replay"
    assert "exitcode: 0" in second
    assert not marker.exists(), "code from the sandbox ran on the host"
