"""A config entry is checked once and kept as parley's own immutable copy: the caller's dicts are
never changed, a custom client gets a dict of its own, and nothing shows the entry's key."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, ClassVar

import pytest

from parley.oai import OpenAIWrapper
from parley.oai._config import validate_entry
from parley.testing import FakeLLMServer

HI = [{"role": "user", "content": "hi"}]
SECRET = "sk-entry-secret-0123456789abcdef"


def test_the_callers_dicts_are_unchanged_after_building_and_using_the_wrapper(
    fake_llm: FakeLLMServer,
) -> None:
    config_list = fake_llm.config_list(
        api_rate_limit=100.0, retry_budget=5, price=[0.001, 0.002], tags=["t"], temperature=0
    )
    base = {"cache_seed": None, "max_tokens": 5, "max_retries": 1, "stop": ["x"]}
    before = copy.deepcopy((config_list, base))
    fake_llm.add_reply("first").add_reply("second")
    client = OpenAIWrapper(config_list=config_list, **base)
    messages = [{"role": "user", "content": "Hi {n}"}]
    client.create(messages=messages, context={"n": 1}, allow_format_str_template=True)
    client.create(messages=messages, timeout=30)
    assert (config_list, base) == before
    assert messages == [{"role": "user", "content": "Hi {n}"}]
    first, second = fake_llm.requests
    assert first["messages"][0]["content"] == "Hi 1"
    # The entry's and the llm_config's request parameters are sent, its options are not.
    assert {k: first[k] for k in ("temperature", "max_tokens", "stop")} == {
        "temperature": 0,
        "max_tokens": 5,
        "stop": ["x"],
    }
    assert not {"price", "tags", "api_rate_limit", "retry_budget", "cache_seed"} & set(second)


class Recording:
    """A custom model client that keeps (and scribbles on) the config it is given."""

    seen: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, config: dict[str, Any], **kwargs: Any) -> None:
        Recording.seen.append(dict(config))  # as given, before the scribbling
        config["model"] = "changed-by-the-client"
        config.pop("temperature", None)

    def create(self, params: dict[str, Any]) -> Any:
        raise AssertionError("not called")

    def message_retrieval(self, response: Any) -> list[str]:
        return []

    def cost(self, response: Any) -> float:
        return 0.0

    @staticmethod
    def get_usage(response: Any) -> dict[str, Any]:
        return {}


def test_a_custom_client_gets_a_dict_of_its_own() -> None:
    Recording.seen = []
    config_list = [
        {"model": "m", "model_client_cls": "Recording"},
        {"model": "m", "model_client_cls": "Recording"},
    ]
    # The llm_config's client keys configure built-in clients only; its other keys are defaults
    # a custom client receives with the entry's own, as in AutoGen.
    client = OpenAIWrapper(config_list=config_list, temperature=0.5, api_key=SECRET)
    client.register_model_client(Recording)
    client.register_model_client(Recording)
    expected = {"temperature": 0.5, "model": "m", "model_client_cls": "Recording"}
    assert Recording.seen == [expected, expected]  # the first client's changes reach no other
    assert config_list == [
        {"model": "m", "model_client_cls": "Recording"},
        {"model": "m", "model_client_cls": "Recording"},
    ]
    rebuilt = OpenAIWrapper(config_list=config_list, temperature=0.5)
    rebuilt.register_model_client(Recording)
    assert Recording.seen[2] == expected


def test_a_checked_entry_is_immutable_and_does_not_show_its_key() -> None:
    given = {
        "model": "gpt-4o",
        "api_key": SECRET,
        "default_headers": {"Authorization": f"Bearer {SECRET}"},
        "extra_body": {"token": SECRET},
        "temperature": 0.2,
    }
    entry = validate_entry(given, "llm_config", require_model=True)
    for shown in (repr(entry), str(entry), f"{entry!r}", repr(entry.under(entry))):
        assert SECRET not in shown
        assert "gpt-4o" in shown
    assert "api_key" in repr(entry)  # the key's name is shown, to say what the entry holds
    assert entry.model == "gpt-4o"
    assert entry.client_kwargs["api_key"] == SECRET
    assert entry.params == {"model": "gpt-4o", "extra_body": {"token": SECRET}, "temperature": 0.2}
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.model = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        entry.params["temperature"] = 1  # type: ignore[index]
    given["temperature"] = 1.5  # the caller's later change is not the entry's
    assert entry.params["temperature"] == 0.2
    copied = entry.as_dict()
    copied["model"] = "x"
    assert entry.as_dict()["model"] == "gpt-4o"
    assert given["model"] == "gpt-4o"


def test_an_entrys_options_win_over_the_calls(fake_llm: FakeLLMServer) -> None:
    """As in AutoGen: a config's own values override the same keys given to create()."""
    fake_llm.add_reply("x", usage={"prompt_tokens": 1000, "completion_tokens": 0})
    fake_llm.add_reply("y", usage={"prompt_tokens": 1000, "completion_tokens": 0})
    client = OpenAIWrapper(config_list=fake_llm.config_list(price=[1.0, 0.0], temperature=0))
    assert client.create(messages=HI, price=[2.0, 0.0], temperature=1).cost == 1.0
    assert fake_llm.last_request["temperature"] == 0
    plain = OpenAIWrapper(config_list=fake_llm.config_list())
    assert plain.create(messages=HI, price=[2.0, 0.0]).cost == 2.0
