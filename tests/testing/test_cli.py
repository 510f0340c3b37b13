"""``python -m parley.testing.server`` in its own process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import openai


def test_server_process_serves_a_script(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    "first",
                    {"tool_calls": [{"name": "f", "arguments": {"a": 1}}]},
                    {"error": 429},
                ],
                "default": "after the script",
            }
        )
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "parley.testing.server", "--port", "0", "--script", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        with openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=0) as c:
            msgs = [{"role": "user", "content": "hi"}]
            assert (
                c.chat.completions.create(model="m", messages=msgs).choices[0].message.content
                == "first"
            )
            r = c.chat.completions.create(model="m", messages=msgs)
            assert r.choices[0].message.tool_calls[0].function.arguments == '{"a": 1}'  # type: ignore[index]
            try:
                c.chat.completions.create(model="m", messages=msgs)
                raise AssertionError("expected a 429")
            except openai.RateLimitError:
                pass
            assert (
                c.chat.completions.create(model="m", messages=msgs).choices[0].message.content
                == "after the script"
            )
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert "Warning" not in err
    assert f"http://127.0.0.1:{port}/v1" in err


def test_bad_script_is_a_clear_error(tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text(json.dumps([{"contnet": "typo"}]))
    proc = subprocess.run(
        [sys.executable, "-m", "parley.testing.server", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode != 0
    assert "contnet" in proc.stderr
