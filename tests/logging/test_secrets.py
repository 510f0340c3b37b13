"""Credentials never reach a record: by key, and by value wherever they end up."""

from __future__ import annotations

import json

from parley.logger._secrets import is_secret_key, remember, scrub
from parley.logger.logger_utils import get_current_ts, to_dict


def test_secret_keys() -> None:
    for key in (
        "api_key",
        "azure_ad_token",
        "azure_ad_token_provider",
        "Authorization",
        "x-api-key",
        "client_secret",
        "password",
        "hf_token",
        "apiKey",
        "http_client",
        "organization",
        "base_url",
    ):
        assert is_secret_key(key), key
    for key in ("max_tokens", "prompt_tokens", "model", "temperature", "messages", "session_id"):
        assert not is_secret_key(key), key


def test_to_dict_strips_nested_credentials_and_survives_cycles() -> None:
    class Holder:
        def __init__(self) -> None:
            self.api_key = "sk-holder-secret"
            self.name = "h"
            self.me = self

    data = {
        "config_list": [{"model": "m", "api_key": "sk-one-secret", "max_tokens": 5}],
        "default_headers": {"Authorization": "Bearer sk-two-secret", "X-Trace": "t"},
        "holder": Holder(),
        "blob": b"\x00\x01",
    }
    out = to_dict(data)
    text = json.dumps(out)
    assert "secret" not in text
    assert out["config_list"] == [{"model": "m", "max_tokens": 5}]
    assert out["default_headers"] == {"X-Trace": "t"}
    assert out["holder"]["name"] == "h"
    assert out["blob"] == "<bytes: 2 bytes>"
    assert scrub("the key sk-one-secret leaked") == "the key <redacted> leaked"


def test_remembered_values_are_scrubbed_anywhere() -> None:
    remember("tok-REMEMBERED-123")
    assert scrub('{"output": "tok-REMEMBERED-123"}') == '{"output": "<redacted>"}'


def test_timestamps_in_autogens_format() -> None:
    ts = get_current_ts()
    assert len(ts) == 26
    assert ts[4] == "-"
    assert ts[10] == " "
    assert ts[19] == "."
