"""parley.types: a type checker accepts the dicts users write and catches their mistakes.

mypy runs in a subprocess on small user modules; ``--follow-imports=skip`` keeps it to
``parley/types.py`` and ``parley/__init__.py`` (everything they import is taken as ``Any``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import typing
from pathlib import Path

import pytest

import parley
import parley.types

pytest.importorskip("mypy")

GOOD = """
from typing import Any

from parley.types import (
    ConfigEntry,
    FunctionCall,
    FunctionResponse,
    FunctionSchema,
    LLMConfig,
    Message,
    MessageContentType,
    ToolCall,
    ToolResponse,
    ToolSchema,
    UserMessageImageContentPart,
    UserMessageTextContentPart,
)

# What config_list_from_json returns, and an entry written by hand.
config_list: list[dict[str, Any]] = [{"model": "gpt-4", "api_key": "sk-..."}]
azure: ConfigEntry = {
    "model": "my-deploy",
    "api_type": "azure",
    "base_url": "https://x.openai.azure.com/",
    "api_version": "2024-02-01",
    "api_key": "...",
    "tags": ["gpt-4", "azure"],
    "price": [0.03, 0.06],
    "api_rate_limit": 2.0,
}
llm_config: LLMConfig = {
    "config_list": config_list,
    "temperature": 0,
    "cache_seed": 42,
    "timeout": 120,
    "tools": [{"type": "function", "function": {"name": "add", "parameters": {}}}],
}
fallbacks: LLMConfig = {"config_list": [azure, {"model": "gpt-4o-mini"}], "cache_seed": None}
local: LLMConfig = {"config_list": [{"model": "m", "model_client_cls": "MyClient"}]}

text: UserMessageTextContentPart = {"type": "text", "text": "What is in this picture?"}
image: UserMessageImageContentPart = {
    "type": "image_url",
    "image_url": {"url": "https://example.com/cat.png", "detail": "low"},
}
question: Message = {"role": "user", "name": "user", "content": [text, image]}
plain_parts: list[dict[str, Any]] = [{"type": "text", "text": "hi"}]
also_fine: Message = {"content": plain_parts}
hello: Message = {"content": "hello"}

call: ToolCall = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
}
proposal: Message = {"role": "assistant", "content": None, "tool_calls": [call]}
response: ToolResponse = {"tool_call_id": "call_1", "role": "tool", "content": "3"}
results: Message = {"role": "tool", "content": "3", "tool_responses": [response]}
legacy: FunctionCall = {"name": "add", "arguments": "{}"}
legacy_message: Message = {"content": None, "function_call": legacy}
with_context: Message = {"content": "Hi {name}", "context": {"name": "Bob"}}

def greeting(context: dict[str, Any]) -> str:
    return "Hi " + str(context["name"])

template: Message = {"content": greeting, "context": {"name": "Bob"}}

class Page:  # the shape of a jinja2.Template
    def render(self, *args: Any, **kwargs: Any) -> str:
        return "a page"

jinja: Message = {"content": Page(), "context": {"title": "t"}}
tool: ToolSchema = {
    "type": "function",
    "function": {"name": "add", "description": "Add.", "parameters": {"type": "object"}},
}
legacy_function: FunctionSchema = {"name": "add"}
# A human who interrupts a message's calls answers each one, the legacy call included.
interrupted: FunctionResponse = {"role": "function", "name": "add", "content": "USER INTERRUPTED"}
no_id: ToolResponse = {"role": "tool", "content": "3"}
answered: Message = {"role": "user", "content": "stop", "tool_responses": [interrupted, no_id]}

def shorten(content: MessageContentType) -> MessageContentType:
    return content[:10] if isinstance(content, str) else content
"""

BAD = """
from parley.types import ConfigEntry, LLMConfig, Message, ToolCall, ToolSchema

entry: ConfigEntry = {"model": "gpt-4", "api_keys": "sk-..."}  # line 4: misspelt key
config: LLMConfig = {"temperature": "low"}  # line 5: not a number
message: Message = {"role": "bot", "content": "hi"}  # line 6: no such role
call: ToolCall = {"id": "1", "type": "function", "function": {"name": "f", "arguments": {}}}  # 7
partial: ToolCall = {"id": "1", "function": {"name": "f", "arguments": "{}"}}  # 8: no "type"
template: Message = {"content": lambda: "hi", "context": {}}  # line 9: takes no context
tool: ToolSchema = {"type": "function", "function": {"description": "d"}}  # line 10: no name
"""


def _mypy(tmp_path: Path, source: str) -> tuple[int, str]:
    sample = tmp_path / "sample.py"
    sample.write_text(textwrap.dedent(source))
    package = Path(parley.__file__).parent
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=skip",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            str(sample),
            str(package / "__init__.py"),
            str(package / "types.py"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(package.parent)},
        timeout=300,
        check=False,
    )
    return result.returncode, result.stdout + result.stderr


def test_mypy_accepts_the_dicts_users_write(tmp_path: Path) -> None:
    status, output = _mypy(tmp_path, GOOD)
    assert status == 0, output


def test_mypy_catches_mistakes_in_them(tmp_path: Path) -> None:
    status, output = _mypy(tmp_path, BAD)
    assert status == 1
    lines = sorted({int(n) for n in re.findall(r"sample\.py:(\d+): error", output)})
    assert lines == [4, 5, 6, 7, 8, 9, 10], output
    assert 'Extra key "api_keys"' in output


def test_mypy_rejects_a_misspelt_top_level_name(tmp_path: Path) -> None:
    # parley.<name> is resolved on first access at run time; type checkers still see the names.
    status, output = _mypy(
        tmp_path, "import parley\nparley.ConversableAgent\nparley.ConversableAgnt\nparley.logger\n"
    )
    assert status == 1
    assert re.findall(r"sample\.py:(\d+): error", output) == ["3"], output


def test_types_resolve_at_run_time() -> None:
    # get_type_hints evaluates every annotation: none may name something undefined at run time.
    for name in parley.types.__all__:
        value = getattr(parley.types, name)
        if isinstance(value, type):
            typing.get_type_hints(value)
    assert parley.types.Message.__required_keys__ == frozenset()
    assert parley.types.ToolCall.__required_keys__ == {"id", "type", "function"}
    assert parley.types.ImageURL.__required_keys__ == {"url"}
    assert parley.types.ToolResponse.__required_keys__ == {"role", "content"}
    assert parley.types.ToolSchema.__required_keys__ == {"type", "function"}
    assert parley.types.FunctionSchema.__required_keys__ == {"name"}
    assert "config_list" in parley.types.LLMConfig.__optional_keys__
    assert "api_key" in parley.types.LLMConfig.__optional_keys__


def test_autogen_names_keep_their_meaning() -> None:
    # AutoGen 0.2's autogen.types: the same three names, the same keys.
    assert parley.types.UserMessageTextContentPart.__required_keys__ == {"type", "text"}
    assert parley.types.UserMessageImageContentPart.__required_keys__ == {"type", "image_url"}
    assert typing.get_args(parley.types.MessageContentType)[0] is str
    assert type(None) in typing.get_args(parley.types.MessageContentType)


def test_importing_parley_types_imports_only_typing() -> None:
    # The package's __init__ needs logging (for parley.logger); beyond that and typing, only
    # parley's own small modules load.
    code = (
        "import json, logging, sys, typing\n"
        "before = set(sys.modules)\n"
        "import parley.types\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(result.stdout) == ["parley", "parley._lazy", "parley.types", "parley.version"]
