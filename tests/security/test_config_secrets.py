"""Config errors never show a secret, and secrets must be strings to be used at all."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from parley.exceptions import ConfigError
from parley.oai import OpenAIWrapper
from parley.testing import FakeLLMServer

SECRET = "sk-parley-secret-0123456789"


def _config_error(caplog: pytest.LogCaptureFixture, **kwargs: Any) -> str:
    with caplog.at_level(logging.DEBUG), pytest.raises(ConfigError) as info:
        OpenAIWrapper(**kwargs)
    message = str(info.value)
    for shown in (message, repr(info.value), caplog.text):
        assert SECRET not in shown
        assert SECRET[3:] not in shown
    assert info.value.__cause__ is None or SECRET not in str(info.value.__cause__)
    assert info.value.__suppress_context__ or SECRET not in str(info.value.__context__)
    return message


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("api_key", [SECRET]),
        ("api_key", (SECRET, "other")),
        ("api_key", {"key": SECRET}),
        ("azure_ad_token", [SECRET]),
        ("api_key", 12345),
    ],
)
def test_a_malformed_secret_field_is_named_but_not_shown(
    caplog: pytest.LogCaptureFixture, field: str, value: Any
) -> None:
    message = _config_error(caplog, config_list=[{"model": "m", field: value}])
    assert "config_list[0]" in message
    assert repr(field) in message
    assert "12345" not in message


@pytest.mark.parametrize("value", [SECRET.encode(), bytearray(SECRET.encode())])
@pytest.mark.parametrize("field", ["api_key", "azure_ad_token", "admin_api_key"])
def test_a_bytes_secret_is_refused(
    caplog: pytest.LogCaptureFixture, field: str, value: Any
) -> None:
    message = _config_error(caplog, config_list=[{"model": "m", field: value}])
    assert "config_list[0]" in message
    assert repr(field) in message
    assert "str" in message


def test_a_bytes_secret_in_a_custom_field_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    entry = {"model": "m", "model_client_cls": "Mine", "aws_secret_key": SECRET.encode()}
    message = _config_error(caplog, config_list=[entry])
    assert "'aws_secret_key'" in message


def test_a_bytes_api_key_is_never_sent(fake_llm: FakeLLMServer) -> None:
    config = {**fake_llm.config_list()[0], "api_key": b"sk-bytes"}
    with pytest.raises(ConfigError, match="api_key"):
        OpenAIWrapper(config_list=[config])
    assert fake_llm.received == []


@pytest.mark.parametrize(
    "entry",
    [
        SECRET,  # a key where a config dict belongs
        [("api_key", SECRET), ("model", "m")],  # pairs instead of a dict
        ("model", SECRET),
    ],
    ids=["str", "pairs", "tuple"],
)
def test_an_entry_that_is_not_a_dict_is_not_shown(
    caplog: pytest.LogCaptureFixture, entry: Any
) -> None:
    message = _config_error(caplog, config_list=[{"model": "m"}, entry])
    assert "config_list[1] must be a dict" in message


def test_an_llm_config_that_is_not_a_dict_is_not_shown() -> None:
    from parley.oai._config import validate_entry

    with pytest.raises(ConfigError) as info:
        validate_entry([("api_key", SECRET)], "llm_config", require_model=False)
    assert SECRET not in str(info.value)


def test_secrets_nested_in_another_fields_input_are_masked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    entry = {"model": "m", "tags": [{"api_key": SECRET, "name": "prod"}]}
    message = _config_error(caplog, config_list=[entry])
    assert "'tags" in message
    assert "'name': 'prod'" in message  # the rest of the input is still shown


def test_other_fields_still_show_their_input(caplog: pytest.LogCaptureFixture) -> None:
    message = _config_error(
        caplog, config_list=[{"model": "m", "api_key": SECRET, "temperature": "hot"}]
    )
    assert "'temperature'" in message
    assert "'hot'" in message


def test_a_secret_as_a_key_name_is_not_shown(caplog: pytest.LogCaptureFixture) -> None:
    _config_error(caplog, config_list=[{"model": "m", 1: "x", SECRET: "oops"}])


def test_non_string_credentials_that_are_not_bytes_still_work(fake_llm: FakeLLMServer) -> None:
    def provider() -> str:
        return "token"

    # A token provider is a callable, and custom clients may take credential objects.
    OpenAIWrapper(
        config_list=[
            {
                "model": "m",
                "api_type": "azure",
                "base_url": fake_llm.url,
                "api_version": "2024-02-01",
                "azure_ad_token_provider": provider,
            },
            {"model": "m", "model_client_cls": "Mine", "credentials": object()},
        ]
    )
