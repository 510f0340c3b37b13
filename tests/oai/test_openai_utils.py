"""Config-list helpers (``openai_utils``): loading, filtering, key files, .env files, cache keys."""

from __future__ import annotations

import copy
import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from parley.oai import _cost
from parley.oai.openai_utils import (
    DEFAULT_AZURE_API_VERSION,
    NON_CACHE_KEY,
    OAI_PRICE1K,
    config_list_from_dotenv,
    config_list_from_json,
    config_list_from_models,
    config_list_gpt4_gpt35,
    config_list_openai_aoai,
    filter_config,
    get_config,
    get_config_list,
    get_key,
)

LOGGER = "parley.oai.openai_utils"
ENDPOINT_VARS = [
    "OPENAI_API_KEY",
    "OPENAI_API_BASE",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_API_BASE",
]
SCRATCH_VARS = [
    "OAI_CONFIG_LIST",
    "PARLEY_TEST_KEY_A",
    "PARLEY_TEST_KEY_B",
    "PARLEY_TEST_BASE",
    "PARLEY_TEST_VERSION",
]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset the variables these helpers read or write; teardown removes whatever they set."""
    for name in ENDPOINT_VARS + SCRATCH_VARS:
        monkeypatch.setenv(name, "placeholder")  # recorded as unset, so teardown removes it
        monkeypatch.delenv(name)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --- constants -----------------------------------------------------------------------------------


def test_constants() -> None:
    assert NON_CACHE_KEY == [
        "api_key",
        "base_url",
        "api_type",
        "api_version",
        "azure_ad_token",
        "azure_ad_token_provider",
        "credentials",
        "tool_config",
    ]
    assert DEFAULT_AZURE_API_VERSION == "2024-02-01"
    assert OAI_PRICE1K is _cost.OAI_PRICE1K


# --- config_list_from_json -----------------------------------------------------------------------

CONFIGS = [
    {"model": "gpt-4", "api_key": "sk-1"},
    {"model": "my-deploy", "api_type": "azure", "base_url": "https://x/", "api_key": "k"},
]


def test_from_json_env_holding_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OAI_CONFIG_LIST", json.dumps(CONFIGS))
    assert config_list_from_json("OAI_CONFIG_LIST") == CONFIGS


def test_from_json_env_holding_a_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "configs.json", json.dumps(CONFIGS))
    monkeypatch.setenv("OAI_CONFIG_LIST", str(path))
    assert config_list_from_json("OAI_CONFIG_LIST", file_location="/nonexistent") == CONFIGS


def test_from_json_file_in_file_location(tmp_path: Path) -> None:
    _write(tmp_path / "OAI_CONFIG_LIST", json.dumps(CONFIGS))
    assert config_list_from_json("OAI_CONFIG_LIST", file_location=str(tmp_path)) == CONFIGS


@pytest.mark.parametrize("file_location", ["", None])
def test_from_json_relative_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, file_location: str | None
) -> None:
    _write(tmp_path / "OAI_CONFIG_LIST", json.dumps(CONFIGS))
    monkeypatch.chdir(tmp_path)
    assert config_list_from_json("OAI_CONFIG_LIST", file_location=file_location) == CONFIGS


def test_from_json_empty_env_var_falls_back_to_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "OAI_CONFIG_LIST", json.dumps(CONFIGS))
    monkeypatch.setenv("OAI_CONFIG_LIST", "")
    assert config_list_from_json("OAI_CONFIG_LIST", file_location=str(tmp_path)) == CONFIGS


def test_from_json_applies_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OAI_CONFIG_LIST", json.dumps(CONFIGS))
    assert config_list_from_json("OAI_CONFIG_LIST", filter_dict={"model": ["gpt-4"]}) == [
        CONFIGS[0]
    ]


def test_from_json_neither_env_nor_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        config_list_from_json("OAI_CONFIG_LIST", file_location=str(tmp_path))


def test_from_json_env_with_missing_path_is_parsed_as_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OAI_CONFIG_LIST", "/no/such/OAI_CONFIG_LIST.json")
    with pytest.raises(json.JSONDecodeError, match=r"\$OAI_CONFIG_LIST"):
        config_list_from_json("OAI_CONFIG_LIST")


def test_from_json_bad_json_file_names_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "OAI_CONFIG_LIST", '[{"model": "gpt-4",}]')
    with pytest.raises(json.JSONDecodeError, match=str(path)) as info:
        config_list_from_json("OAI_CONFIG_LIST", file_location=str(tmp_path))
    assert info.value.pos == 19  # the position still points at the error


@pytest.mark.parametrize("content", ['{"model": "gpt-4"}', '"gpt-4"', '["gpt-4"]', "null"])
def test_from_json_rejects_anything_but_an_array_of_objects(
    monkeypatch: pytest.MonkeyPatch, content: str
) -> None:
    monkeypatch.setenv("OAI_CONFIG_LIST", content)
    with pytest.raises(ValueError, match="JSON array of objects"):
        config_list_from_json("OAI_CONFIG_LIST")


# --- filter_config -------------------------------------------------------------------------------

A = {"model": "gpt-4", "tags": ["fast", "paid"], "api_type": "openai"}
B = {"model": "gpt-3.5-turbo", "tags": ["cheap"]}
C = {"model": "gpt-4o", "tags": [], "api_type": None}
D = {"model": "llama", "api_type": "ollama"}
ALL = [A, B, C, D]


@pytest.mark.parametrize(
    ("filter_dict", "exclude", "expected"),
    [
        ({"model": ["gpt-4"]}, False, [A]),
        ({"model": ["gpt-4", "llama"]}, False, [A, D]),
        ({"model": {"gpt-4o"}}, False, [C]),
        ({"model": ("gpt-4o",)}, False, [C]),
        ({"model": []}, False, []),
        ({"tags": ["paid"]}, False, [A]),
        ({"tags": ["cheap", "fast"]}, False, [A, B]),
        ({"model": ["gpt-4", "gpt-3.5-turbo"], "tags": ["cheap"]}, False, [B]),
        ({"api_type": ["openai"]}, False, [A]),
        # None among the acceptable values matches a missing (or None) key: parley's fix
        ({"api_type": ["openai", None]}, False, [A, B, C]),
        ({"api_type": [None]}, False, [B, C]),
        ({"nope": [None]}, False, ALL),
        ({"nope": ["x"]}, False, []),
        # a bare string is one value, not a set of substrings
        ({"model": "gpt-4"}, False, [A]),
        ({"model": "gpt-4o-mini"}, False, []),
        # exclude drops a config that matches any key
        ({"model": ["gpt-4"]}, True, [B, C, D]),
        ({"model": ["gpt-4"], "tags": ["cheap"]}, True, [C, D]),
        ({"tags": ["fast"], "api_type": ["ollama"]}, True, [B, C]),
        ({"api_type": [None]}, True, [A, D]),
        ({"nope": ["x"]}, True, ALL),
    ],
)
def test_filter_config(
    filter_dict: dict[str, Any], exclude: bool, expected: list[dict[str, Any]]
) -> None:
    before = copy.deepcopy(ALL)
    result = filter_config(ALL, filter_dict, exclude=exclude)
    assert result == expected
    assert all(any(r is c for c in ALL) for r in result)  # the original dicts, not copies
    assert before == ALL


@pytest.mark.parametrize("filter_dict", [None, {}])
@pytest.mark.parametrize("exclude", [False, True])
def test_filter_config_without_filter_returns_the_same_list(
    filter_dict: dict[str, Any] | None, exclude: bool
) -> None:
    assert filter_config(ALL, filter_dict, exclude=exclude) is ALL


def test_filter_config_returns_a_new_list() -> None:
    result = filter_config(ALL, {"nope": [None]})
    assert result == ALL
    assert result is not ALL


def test_filter_config_rejects_non_dict_entries() -> None:
    with pytest.raises(TypeError, match=r"config_list\[1\]"):
        filter_config([A, "gpt-4"], {"model": ["gpt-4"]})  # type: ignore[list-item]


# --- get_config / get_config_list ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((["a", "b"],), [{"api_key": "a"}, {"api_key": "b"}]),
        (
            (["a", "b"], ["u1", "u2"], "azure", "v1"),
            [
                {"api_key": "a", "base_url": "u1", "api_type": "azure", "api_version": "v1"},
                {"api_key": "b", "base_url": "u2", "api_type": "azure", "api_version": "v1"},
            ],
        ),
        (
            (["a", "  ", "", "c"], ["u1", "u2", "u3", "u4"]),
            [
                {"api_key": "a", "base_url": "u1"},
                {"api_key": "c", "base_url": "u4"},
            ],
        ),
        ((["a"], [""]), [{"api_key": "a", "base_url": ""}]),  # a list of "" is still truthy
        ((["a"], None, "", ""), [{"api_key": "a"}]),
        (([],), []),
        ((["\n"],), []),
    ],
)
def test_get_config_list(args: tuple[Any, ...], expected: list[dict[str, Any]]) -> None:
    assert get_config_list(*args) == expected


def test_get_config_list_length_mismatch() -> None:
    with pytest.raises(AssertionError, match="base_urls"):
        get_config_list(["a", "b"], base_urls=["x"])


def test_get_config_list_rejects_a_single_string() -> None:
    with pytest.raises(TypeError, match="api_keys"):
        get_config_list("sk-abc")


def test_get_config_reads_env_vars_or_takes_literals(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARLEY_TEST_BASE", "https://from-env/")
    monkeypatch.setenv("PARLEY_TEST_VERSION", "2030-01-01")
    assert get_config("k", "PARLEY_TEST_BASE", "azure", "PARLEY_TEST_VERSION") == {
        "api_key": "k",
        "base_url": "https://from-env/",
        "api_type": "azure",
        "api_version": "2030-01-01",
    }
    assert get_config("k", "https://literal/") == {"api_key": "k", "base_url": "https://literal/"}
    assert get_config(None, "", None, "") == {"api_key": None}


# --- config_list_openai_aoai / from_models / gpt4_gpt35 ------------------------------------------

AZURE_BASE = "https://x.openai.azure.com/"


@pytest.fixture
def key_files(tmp_path: Path) -> Path:
    _write(tmp_path / "key_openai.txt", "sk-1\nsk-2\n")
    _write(tmp_path / "key_aoai.txt", "az-1\n")
    _write(tmp_path / "base_aoai.txt", f"{AZURE_BASE}\n")
    return tmp_path


OPENAI_CONFIGS = [{"api_key": "sk-1"}, {"api_key": "sk-2"}]
AZURE_CONFIGS = [
    {
        "api_key": "az-1",
        "base_url": AZURE_BASE,
        "api_type": "azure",
        "api_version": DEFAULT_AZURE_API_VERSION,
    }
]


@pytest.mark.parametrize(
    ("exclude", "expected"),
    [
        (None, OPENAI_CONFIGS + AZURE_CONFIGS),
        ("openai", AZURE_CONFIGS),
        ("aoai", OPENAI_CONFIGS),
    ],
)
def test_openai_aoai_from_key_files(
    key_files: Path, exclude: str | None, expected: list[dict[str, Any]]
) -> None:
    assert config_list_openai_aoai(key_file_path=str(key_files), exclude=exclude) == expected


def test_openai_aoai_writes_the_files_into_the_environment(key_files: Path) -> None:
    # AutoGen compatibility: documented in the module docstring
    config_list_openai_aoai(key_file_path=str(key_files))
    assert os.environ["OPENAI_API_KEY"] == "sk-1\nsk-2"
    assert os.environ["AZURE_OPENAI_API_KEY"] == "az-1"
    assert os.environ["AZURE_OPENAI_API_BASE"] == AZURE_BASE
    assert "OPENAI_API_BASE" not in os.environ  # its file is missing, which is only logged


def test_openai_aoai_excluded_kind_leaves_its_variables_alone(key_files: Path) -> None:
    config_list_openai_aoai(key_file_path=str(key_files), exclude="aoai")
    assert "AZURE_OPENAI_API_KEY" not in os.environ
    assert os.environ["OPENAI_API_KEY"] == "sk-1\nsk-2"


def test_openai_aoai_with_openai_base_file(key_files: Path) -> None:
    _write(key_files / "base_openai.txt", "https://a/\nhttps://b/")
    assert config_list_openai_aoai(key_file_path=str(key_files), exclude="aoai") == [
        {"api_key": "sk-1", "base_url": "https://a/"},
        {"api_key": "sk-2", "base_url": "https://b/"},
    ]


def test_openai_aoai_from_environment_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-a\naz-b")
    monkeypatch.setenv("AZURE_OPENAI_API_BASE", "https://a/\nhttps://b/")
    assert config_list_openai_aoai(key_file_path=None) == [
        {"api_key": "sk-env"},
        {
            "api_key": "az-a",
            "base_url": "https://a/",
            "api_type": "azure",
            "api_version": "2024-02-01",
        },
        {
            "api_key": "az-b",
            "base_url": "https://b/",
            "api_type": "azure",
            "api_version": "2024-02-01",
        },
    ]


def test_openai_aoai_nothing_anywhere(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert config_list_openai_aoai(key_file_path=str(tmp_path)) == []
    assert "key_openai.txt" in caplog.text  # the missing files are logged


def test_openai_aoai_skips_none_file_names(key_files: Path) -> None:
    result = config_list_openai_aoai(
        key_file_path=str(key_files), openai_api_key_file=None, aoai_api_key_file=None
    )
    assert result == []
    assert "OPENAI_API_KEY" not in os.environ


def test_openai_aoai_mismatched_azure_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "a\nb")
    monkeypatch.setenv("AZURE_OPENAI_API_BASE", "https://only-one/")
    with pytest.raises(AssertionError):
        config_list_openai_aoai(key_file_path=None)


def test_from_models_is_model_major(key_files: Path) -> None:
    result = config_list_from_models(key_file_path=str(key_files), model_list=["gpt-4", "gpt-4o"])
    assert result == [
        {"api_key": "sk-1", "model": "gpt-4"},
        {"api_key": "sk-2", "model": "gpt-4"},
        {**AZURE_CONFIGS[0], "model": "gpt-4"},
        {"api_key": "sk-1", "model": "gpt-4o"},
        {"api_key": "sk-2", "model": "gpt-4o"},
        {**AZURE_CONFIGS[0], "model": "gpt-4o"},
    ]
    assert result[0] is not result[3]


@pytest.mark.parametrize("model_list", [None, []])
def test_from_models_without_models(key_files: Path, model_list: list[str] | None) -> None:
    result = config_list_from_models(key_file_path=str(key_files), model_list=model_list)
    assert result == OPENAI_CONFIGS + AZURE_CONFIGS


def test_gpt4_gpt35(key_files: Path) -> None:
    result = config_list_gpt4_gpt35(key_file_path=str(key_files), exclude="aoai")
    assert result == [
        {"api_key": "sk-1", "model": "gpt-4"},
        {"api_key": "sk-2", "model": "gpt-4"},
        {"api_key": "sk-1", "model": "gpt-3.5-turbo"},
        {"api_key": "sk-2", "model": "gpt-3.5-turbo"},
    ]


# --- config_list_from_dotenv ---------------------------------------------------------------------

SECRET = "sk-dotenv-secret-123"


def test_from_dotenv_default_models(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    env_file = _write(tmp_path / ".env", f'OPENAI_API_KEY="{SECRET}"\n')
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        result = config_list_from_dotenv(str(env_file))
    assert result == [
        {"api_key": SECRET, "model": "gpt-4"},
        {"api_key": SECRET, "model": "gpt-3.5-turbo"},
    ]
    assert os.environ["OPENAI_API_KEY"] == SECRET  # loading sets the variables
    assert "gpt-3.5-turbo" in caplog.text
    assert SECRET not in caplog.text


def test_from_dotenv_map_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARLEY_TEST_BASE", "https://resolved/")
    env_file = _write(
        tmp_path / "my.env",
        "PARLEY_TEST_KEY_A=key-a\nexport PARLEY_TEST_KEY_B='key-b'\nOPENAI_API_KEY=sk-default\n",
    )
    key_map = {
        "model-a": "PARLEY_TEST_KEY_A",
        "model-b": {
            "api_key_env_var": "PARLEY_TEST_KEY_B",
            "base_url": "PARLEY_TEST_BASE",
            "api_type": "azure",
            "api_version": "2024-02-01",
        },
        "model-c": {"base_url": "https://literal/"},  # key defaults to OPENAI_API_KEY
    }
    snapshot = copy.deepcopy(key_map)
    result = config_list_from_dotenv(str(env_file), model_api_key_map=key_map)
    assert result == [
        {"api_key": "key-a", "model": "model-a"},
        {
            "api_key": "key-b",
            "base_url": "https://resolved/",
            "api_type": "azure",
            "api_version": "2024-02-01",
            "model": "model-b",
        },
        {"api_key": "sk-default", "base_url": "https://literal/", "model": "model-c"},
        {"api_key": "sk-default", "model": "gpt-4"},
        {"api_key": "sk-default", "model": "gpt-3.5-turbo"},
    ]
    assert key_map == snapshot  # the caller's map gets no default models


def test_from_dotenv_keeps_existing_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-environment")
    env_file = _write(tmp_path / ".env", "OPENAI_API_KEY=sk-from-file\n")
    result = config_list_from_dotenv(str(env_file), filter_dict={"model": ["gpt-4"]})
    assert result == [{"api_key": "sk-from-environment", "model": "gpt-4"}]


def test_from_dotenv_searches_upward(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / ".env", "PARLEY_TEST_KEY_A=found-upward\n")
    deep = tmp_path / "x" / "y"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    result = config_list_from_dotenv(model_api_key_map={"m": "PARLEY_TEST_KEY_A"})
    assert result == [{"api_key": "found-upward", "model": "m"}]


def test_from_dotenv_missing_file_warns_and_uses_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        result = config_list_from_dotenv(str(tmp_path / "absent.env"))
    assert [c["model"] for c in result] == ["gpt-4", "gpt-3.5-turbo"]
    assert "absent.env" in caplog.text
    assert SECRET not in caplog.text


def test_from_dotenv_skips_unsupported_and_keyless_models(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    env_file = _write(tmp_path / ".env", "PARLEY_TEST_KEY_A=key-a\nPARLEY_TEST_KEY_B=   \n")
    key_map: dict[str, Any] = {
        "bad-first": 5,  # AutoGen crashes here; parley skips it
        "good": "PARLEY_TEST_KEY_A",
        "bad-later": ["PARLEY_TEST_KEY_A"],  # AutoGen would reuse "good"'s config
        "blank-key": "PARLEY_TEST_KEY_B",
        "unset-key": "PARLEY_TEST_NOT_SET_ANYWHERE",
    }
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        result = config_list_from_dotenv(str(env_file), model_api_key_map=key_map)
    assert result == [{"api_key": "key-a", "model": "good"}]
    warned = caplog.text
    for model in ("bad-first", "bad-later"):
        assert repr(model) in warned
    for model in ("blank-key", "unset-key", "gpt-4"):
        assert f"API key not found or empty for model {model}." in warned
    assert "int" in warned
    assert "key-a" not in warned


def test_from_dotenv_nothing_found_logs_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    env_file = _write(tmp_path / ".env", "# nothing here\n")
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        assert config_list_from_dotenv(str(env_file)) == []
    assert [r.levelno for r in caplog.records] == [logging.ERROR]


def test_from_dotenv_filter_can_empty_the_list(tmp_path: Path) -> None:
    env_file = _write(tmp_path / ".env", f"OPENAI_API_KEY={SECRET}\n")
    assert config_list_from_dotenv(str(env_file), filter_dict={"model": ["gpt-4o"]}) == []


def test_from_dotenv_unknown_option_is_a_clear_error(tmp_path: Path) -> None:
    env_file = _write(tmp_path / ".env", "PARLEY_TEST_KEY_A=k\n")
    with pytest.raises(TypeError, match=r"'m'.*temperature"):
        config_list_from_dotenv(
            str(env_file),
            model_api_key_map={"m": {"api_key_env_var": "PARLEY_TEST_KEY_A", "temperature": 0}},
        )


def test_from_dotenv_non_string_key_variable_is_a_clear_error(tmp_path: Path) -> None:
    env_file = _write(tmp_path / ".env", "")
    with pytest.raises(TypeError, match=r"'m'.*api_key_env_var"):
        config_list_from_dotenv(str(env_file), model_api_key_map={"m": {"api_key_env_var": 1}})


def test_from_dotenv_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    env_file = _write(tmp_path / ".env", f"OK=1\nOPENAI_API_KEY {SECRET}\n")
    with pytest.raises(ValueError, match=r"\.env, line 2") as info:
        config_list_from_dotenv(str(env_file))
    assert SECRET not in str(info.value)


# --- get_key -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"model": "gpt-4", "temperature": 0}, {"model": "gpt-4", "temperature": 0}),
        (
            dict.fromkeys(NON_CACHE_KEY, "x") | {"model": "m"},
            {"model": "m"},
        ),
        (
            {"model": "m", "max_tokens": 5, "max_completion_tokens": 7, "stop_token_ids": [1]},
            {"model": "m", "max_tokens": 5, "max_completion_tokens": 7, "stop_token_ids": [1]},
        ),
        (
            {"model": "m", "prompt_cache_key": "p", "top_logprobs": 2, "seed": 1},
            {"model": "m", "prompt_cache_key": "p", "top_logprobs": 2, "seed": 1},
        ),
        # credential-looking names are left out, at any depth
        (
            {
                "model": "m",
                "aws_secret_key": "s",
                "aws_session_token": "t",
                "aws_access_key": "a",
                "client_secret": "c",
                "password": "p",
                "apiKey": "k",
                "hf_token": "h",
            },
            {"model": "m"},
        ),
        (
            {
                "model": "m",
                "extra_headers": {"Authorization": "Bearer sk", "api-key": "k", "X-Id": "1"},
            },
            {"model": "m", "extra_headers": {"X-Id": "1"}},
        ),
        (
            {"model": "m", "auth": {"user": "u", "password": "p"}},
            {"model": "m", "auth": {"user": "u"}},
        ),
        # a tool parameter named like a credential is schema, not a secret
        (
            {"tools": [{"properties": {"token": {"type": "string"}}, "required": ["token"]}]},
            {"tools": [{"properties": {"token": {"type": "string"}}, "required": ["token"]}]},
        ),
        ({"model": "m", "stop": ("a", "b")}, {"model": "m", "stop": ["a", "b"]}),
        ({}, {}),
    ],
)
def test_get_key(config: dict[str, Any], expected: dict[str, Any]) -> None:
    snapshot = copy.deepcopy(config)
    assert get_key(config) == json.dumps(expected, sort_keys=True)
    assert config == snapshot


def test_get_key_is_independent_of_order_and_endpoint() -> None:
    messages = [{"role": "user", "content": "hi"}]
    one = {"model": "gpt-4", "messages": messages, "api_key": "sk-1", "base_url": "https://a/"}
    two = {"base_url": "https://b/", "api_key": "sk-2", "messages": messages, "model": "gpt-4"}
    assert get_key(one) == get_key(two)
    assert get_key(one) != get_key({**one, "temperature": 1})


def test_get_key_matches_autogen_for_plain_requests() -> None:
    request = {
        "model": "gpt-4",
        "messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "é"}],
        "temperature": 0.5,
        "n": 1,
        "stop": None,
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        "api_key": "sk-never-in-the-key",
    }
    plain = {k: v for k, v in request.items() if k not in NON_CACHE_KEY}
    key = get_key(request)
    assert key == json.dumps(plain, sort_keys=True)
    assert "sk-never-in-the-key" not in key


def test_get_key_drops_non_serialisable_credentials() -> None:
    # a token provider callable must not break caching
    assert get_key({"model": "m", "azure_ad_token_provider": lambda: "t"}) == '{"model": "m"}'


@pytest.mark.parametrize(
    ("config", "where"),
    [
        ({"model": "m", "filter_func": lambda **_: True}, "['filter_func']"),
        ({"tools": [{"function": print}]}, "['tools'][0]['function']"),
        ({"model": "m", "n": {1, 2}}, "['n']"),
        ({"model": "m", "stop": b"x"}, "['stop']"),
    ],
)
def test_get_key_rejects_non_json_values_naming_them(config: dict[str, Any], where: str) -> None:
    with pytest.raises(TypeError) as info:
        get_key(config)
    assert where in str(info.value)
    assert "JSON" in str(info.value)


def test_get_key_rejects_non_dict() -> None:
    with pytest.raises(TypeError, match="dict"):
        get_key([("model", "m")])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("request_params", "digest"),
    [
        (
            {
                "model": "gpt-4",
                "messages": [{"role": "user", "content": "hi"}],
                "temperature": 0,
                "api_key": "sk-x",
                "base_url": "http://x",
            },
            "3a188ec9ed5eeec75e63451097d241ead83b3c8f7f415c975b3d96d5f554fa5a",
        ),
        (
            {
                "model": "m",
                "messages": [{"role": "user", "content": "hi"}],
                "extra_headers": {"OpenAI-Beta": "assistants=v2", "Authorization": "Bearer sk-1"},
                "extra_body": {"a": 1},
                "extra_query": {"t": "b"},
            },
            "5f5b968e565c15ed1452fabe9a7827f70471d3adc523c86c0ddddacb8b213cae",
        ),
    ],
)
def test_cache_keys_are_stable(request_params: dict[str, Any], digest: str) -> None:
    # Existing parley caches stay valid: the key of a request is pinned.
    from parley.oai._cache_key import cache_key

    assert cache_key(request_params) == digest


def test_extra_headers_holding_credentials_under_any_name_are_left_out() -> None:
    headers = {
        "X-Gateway": "Bearer abc",
        "X-Basic": "basic dXNlcjpwYXNz",
        "X-Openai": "sk-proj-0123456789abcdef",
        "X-Mode": "token-efficient",  # a value, not a scheme and its token
        "OpenAI-Beta": "assistants=v2",
    }
    key = json.loads(get_key({"model": "m", "extra_headers": headers}))
    assert key["extra_headers"] == {"X-Mode": "token-efficient", "OpenAI-Beta": "assistants=v2"}
    assert headers["X-Gateway"] == "Bearer abc"  # the caller's dict is not changed


# --- AutoGen's own wording (0.2 tests compare the log text and the assertion message) -----------


def test_from_dotenv_missing_file_uses_autogens_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        config_list_from_dotenv(dotenv_file_path="non_existent_path")
    assert "The specified .env file non_existent_path does not exist." in caplog.text


def test_from_dotenv_without_any_file_says_it_reads_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env here nor above (tmp_path's parents hold none)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        result = config_list_from_dotenv()
    assert "No .env file found. Loading configurations from environment variables." in caplog.text
    assert result != []


def test_from_dotenv_names_the_model_without_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PARLEY_TEST_KEY_A", "key-a")
    key_map = {"gpt-4": "PARLEY_TEST_NOT_SET_ANYWHERE", "gpt-3.5-turbo": "PARLEY_TEST_KEY_A"}
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        result = config_list_from_dotenv(model_api_key_map=key_map)
    assert [c["model"] for c in result] == ["gpt-3.5-turbo"]
    assert "API key not found or empty for model gpt-4" in caplog.text


@pytest.mark.parametrize("keys", [["k1", "k2", "k3"], []])
def test_get_config_list_mismatch_message_is_autogens(keys: list[str]) -> None:
    urls = ["https://one", "https://two"]
    with pytest.raises(AssertionError) as raised:
        get_config_list(keys, urls, "openai", "v1")
    assert str(raised.value) == "The length of api_keys must match the length of base_urls"


def test_get_config_list_on_autogens_example() -> None:
    keys = ["key1", "", "key3"]
    urls = ["https://api.service1.com", "https://api.service2.com", "https://api.service3.com"]
    assert get_config_list(keys, urls, "openai", "v1") == [
        {"api_key": "key1", "base_url": urls[0], "api_type": "openai", "api_version": "v1"},
        {"api_key": "key3", "base_url": urls[2], "api_type": "openai", "api_version": "v1"},
    ]
    assert all("base_url" not in c for c in get_config_list(keys, None, "openai", "v1"))
