"""``import parley``: cheap, yet every AutoGen 0.2 top-level name and sub-module is there.

What a fresh interpreter loads is checked in a subprocess, so that the modules other tests
imported do not count.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import parley

# AutoGen 0.2's top-level names and where parley defines them; `parley.__all__` (what
# `from parley import *` gives) is these and `logger`.
AUTOGEN_NAMES = {
    "Agent": "parley.agentchat",
    "AssistantAgent": "parley.agentchat",
    "ChatResult": "parley.agentchat",
    "ConversableAgent": "parley.agentchat",
    "GroupChat": "parley.agentchat",
    "GroupChatManager": "parley.agentchat",
    "UserProxyAgent": "parley.agentchat",
    "gather_usage_summary": "parley.agentchat",
    "initiate_chats": "parley.agentchat",
    "register_function": "parley.agentchat",
    "DEFAULT_MODEL": "parley.code_utils",
    "FAST_MODEL": "parley.code_utils",
    "AgentNameConflict": "parley.exception_utils",
    "InvalidCarryOverType": "parley.exception_utils",
    "NoEligibleSpeaker": "parley.exception_utils",
    "SenderRequired": "parley.exception_utils",
    "UndefinedNextAgent": "parley.exception_utils",
    "Cache": "parley.oai",
    "ChatCompletion": "parley.oai",
    "Completion": "parley.oai",
    "ModelClient": "parley.oai",
    "OpenAIWrapper": "parley.oai",
    "config_list_from_dotenv": "parley.oai",
    "config_list_from_json": "parley.oai",
    "config_list_from_models": "parley.oai",
    "config_list_gpt4_gpt35": "parley.oai",
    "config_list_openai_aoai": "parley.oai",
    "filter_config": "parley.oai",
    "get_config_list": "parley.oai",
    "__version__": "parley.version",
}
# The sub-modules that are attributes of AutoGen 0.2 after `import autogen`, and parley has.
SUB_PACKAGES = ["agentchat", "cache", "coding", "io", "oai"]
MODULES = [
    "code_utils",
    "exception_utils",
    "exceptions",
    "formatting_utils",
    "function_utils",
    "graph_utils",
    "types",
    "version",
]
HEAVY = [
    "anthropic",
    "asyncio",
    "boto3",
    "botocore",
    "cerebras",
    "cohere",
    "diskcache",
    "docker",
    "dotenv",
    "flaml",
    "google.genai",
    "groq",
    "httpx",
    "jinja2",
    "jsonschema",
    "matplotlib",
    "mistralai",
    "networkx",
    "numpy",
    "ollama",
    "openai",
    "optuna",
    "pgvector",
    "PIL",
    "psycopg",
    "pydantic",
    "redis",
    "tiktoken",
    "together",
]


def _fresh(code: str) -> Any:
    """Run ``code`` in a new interpreter; it prints one JSON value, returned here."""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_import_parley_loads_no_sub_package_and_no_heavy_library() -> None:
    loaded = _fresh(
        "import json, sys, parley\n"
        f"print(json.dumps([m for m in sys.modules if m.startswith('parley.') or m in {HEAVY!r}]))"
    )
    assert sorted(loaded) == ["parley._lazy", "parley.version"]


def test_first_use_of_a_name_imports_only_what_it_needs() -> None:
    loaded = _fresh(
        "import json, sys, parley\n"
        "parley.Cache, parley.AgentNameConflict\n"
        f"print(json.dumps([m for m in {[*HEAVY, 'parley.oai', 'parley.agentchat']!r}"
        " if m in sys.modules]))"
    )
    assert loaded == []


def test_every_autogen_name_is_the_object_of_its_module() -> None:
    assert set(parley.__all__) == {*AUTOGEN_NAMES, "logger"}
    for name, module in AUTOGEN_NAMES.items():
        assert getattr(parley, name) is getattr(importlib.import_module(module), name), name
    assert parley.Cache is parley.oai.Cache


def test_star_import_gives_all_and_dir_lists_it() -> None:
    namespace: dict[str, object] = {}
    exec("from parley import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(parley.__all__)
    assert set(parley.__all__) <= set(dir(parley))


def test_star_import_in_a_fresh_interpreter() -> None:
    names = _fresh(
        "import json\nfrom parley import *\n"
        "print(json.dumps(sorted(n for n in dir() if not n.startswith('__') or n == '__version__')))"
    )
    assert set(names) == {*AUTOGEN_NAMES, "logger", "json"}


def test_logger_is_the_parley_logger_at_info() -> None:
    import logging

    assert parley.logger is logging.getLogger("parley")
    assert parley.logger.level == logging.INFO


@pytest.mark.parametrize(
    "name",
    [*SUB_PACKAGES, *MODULES],
)
def test_sub_modules_are_attributes(name: str) -> None:
    module = getattr(parley, name)
    assert isinstance(module, types.ModuleType)
    assert module is sys.modules[f"parley.{name}"]


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'parley' has no attribute 'ConversableAgnt'"):
        _ = parley.ConversableAgnt  # type: ignore[attr-defined]
    assert not hasattr(parley, "_private")
    assert not hasattr(parley, "testing_no_such_module")


def test_private_probes_import_nothing() -> None:
    # Tools (IPython, inspect, pickle) probe modules for underscore names; that must stay free.
    loaded = _fresh(
        "import json, sys, parley\n"
        "hasattr(parley, '_repr_html_'), hasattr(parley, '__wrapped__')\n"
        "print(json.dumps([m for m in sys.modules if m.startswith('parley.')]))"
    )
    assert sorted(loaded) == ["parley._lazy", "parley.version"]


@pytest.mark.parametrize(
    ("package", "absent"),
    [
        ("parley.cache", ["diskcache", "redis", "sqlite3", "parley.cache.disk_cache"]),
        ("parley.io", ["websockets", "parley.io.scripted", "parley.io.websockets"]),
        (
            "parley.local",
            ["llama_cpp", "openai", "parley.oai", "parley.testing", "importlib.metadata"],
        ),
        ("parley.types", ["parley.agentchat", "parley.oai", "pydantic"]),
    ],
)
def test_sub_packages_import_lazily(package: str, absent: list[str]) -> None:
    loaded = _fresh(
        f"import json, sys, {package}\nprint(json.dumps([m for m in {absent!r} if m in sys.modules]))"
    )
    assert loaded == []


@pytest.mark.parametrize("package", ["parley.cache", "parley.io", "parley.local"])
def test_sub_package_names_are_importable(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        value = getattr(module, name)
        assert getattr(value, "__name__", name) == name
        assert name in dir(module)
    namespace: dict[str, object] = {}
    exec(f"from {package} import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(module.__all__)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'nope'"):
        _ = module.nope


def test_a_cache_still_works_after_a_lazy_import(tmp_path: Path) -> None:
    result = _fresh(
        "import json, os, sys\n"
        f"os.chdir({str(tmp_path)!r})\n"
        "from parley import Cache\n"
        "with Cache.disk(cache_seed=7) as cache:\n"  # binds the backend, as in AutoGen
        "    cache.set('k', {'v': 1})\n"
        "    print(json.dumps([cache.get('k'), type(cache).__name__]))"
    )
    assert result == [{"v": 1}, "DiskCache"]


def test_the_price_table_is_where_autogen_has_it() -> None:
    from parley.oai import client, openai_utils

    assert client.OAI_PRICE1K is openai_utils.OAI_PRICE1K
    assert "OAI_PRICE1K" not in parley.oai.__all__  # not exported there by AutoGen either
