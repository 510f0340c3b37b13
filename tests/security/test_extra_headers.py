"""``extra_headers``, ``extra_query`` and ``extra_body`` go where the openai client puts them.

They used to be sent as literal JSON body fields (a header never reached the server). And cache
keys must not hold the credentials that ``extra_headers`` often carry.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest

from parley.cache import Cache
from parley.exceptions import ConfigError
from parley.oai import OpenAIWrapper
from parley.oai.openai_utils import get_key
from parley.testing import FakeLLMServer

HI = [{"role": "user", "content": "hi"}]
SECRET = "sk-parley-secret-0123456789"
EXTRAS = {
    "extra_headers": {"X-Trace-Id": "trace-1", "OpenAI-Beta": "assistants=v2"},
    "extra_query": {"tenant": "blue", "n": 2},
    "extra_body": {"custom_option": {"depth": 3}, "temperature": 0.5},
}


def _check_request_shape(server: FakeLLMServer) -> None:
    record = server.received[-1]
    assert record.headers["x-trace-id"] == "trace-1"
    assert record.headers["openai-beta"] == "assistants=v2"
    assert parse_qs(record.query) == {"tenant": ["blue"], "n": ["2"]}
    body = record.json
    assert body["custom_option"] == {"depth": 3}
    assert body["temperature"] == 0.5  # extra_body wins, as in chat.completions.create
    for key in ("extra_headers", "extra_query", "extra_body"):
        assert key not in body


@pytest.mark.parametrize("stream", [False, True])
def test_extras_in_a_config_entry_reach_the_wire(fake_llm: FakeLLMServer, stream: bool) -> None:
    fake_llm.responder = lambda request: "ok"
    client = OpenAIWrapper(config_list=fake_llm.config_list(**EXTRAS))
    response = client.create(messages=HI, temperature=0.1, stream=stream)
    assert response.choices[0].message.content == "ok"
    _check_request_shape(fake_llm)


def test_extras_in_a_create_call_reach_the_wire(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = lambda request: "ok"
    client = OpenAIWrapper(config_list=fake_llm.config_list())
    client.create(messages=HI, temperature=0.1, **EXTRAS)
    _check_request_shape(fake_llm)


def test_extras_reach_an_azure_deployment(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = lambda request: "ok"
    entry = {
        "model": "gpt-4o",
        "api_type": "azure",
        "api_version": "2024-02-01",
        "base_url": fake_llm.url,
        "api_key": "azure-key",
        **EXTRAS,
    }
    OpenAIWrapper(config_list=[entry]).create(messages=HI)
    record = fake_llm.received[-1]
    assert record.path == "/openai/deployments/gpt-4o/chat/completions"
    assert parse_qs(record.query) == {"api-version": ["2024-02-01"], "tenant": ["blue"], "n": ["2"]}
    assert record.headers["x-trace-id"] == "trace-1"
    assert record.headers["api-key"] == "azure-key"


def test_a_header_can_replace_the_authorization_header() -> None:
    with FakeLLMServer(api_key="sk-right") as server:
        server.add_reply("ok")
        config = {**server.config_list()[0], "api_key": "sk-wrong"}
        config["extra_headers"] = {"Authorization": "Bearer sk-right"}
        response = OpenAIWrapper(config_list=[config]).create(messages=HI)
        assert response.choices[0].message.content == "ok"
        assert server.received[-1].headers["authorization"] == "Bearer sk-right"


CREDENTIAL_HEADERS = {
    "Authorization": f"Bearer {SECRET}",
    "api-key": SECRET,
    "X-Api-Key": SECRET,
    "Proxy-Authorization": f"Basic {SECRET}",
    "Cookie": f"session={SECRET}",
    "X-Gateway": f"Bearer {SECRET}",  # a credential under a name that does not say so
}


def test_cache_keys_hold_no_credentials_from_extra_headers() -> None:
    params = {"model": "m", "messages": HI, "extra_headers": {**CREDENTIAL_HEADERS, "X-Kept": "1"}}
    key = get_key(params)
    assert SECRET not in key
    assert json.loads(key)["extra_headers"] == {"X-Kept": "1"}


def test_requests_differing_only_in_credential_headers_share_an_entry(
    fake_llm: FakeLLMServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake_llm.responder = lambda request: "ok"
    client = OpenAIWrapper(config_list=fake_llm.config_list())
    with caplog.at_level(logging.DEBUG), Cache.disk(1, tmp_path) as cache:
        client.create(messages=HI, cache=cache, extra_headers=CREDENTIAL_HEADERS)
        other = {
            name: value.replace(SECRET, "sk-other") for name, value in CREDENTIAL_HEADERS.items()
        }
        client.create(messages=HI, cache=cache, extra_headers=other)
    assert len(fake_llm.requests) == 1
    assert fake_llm.received[0].headers["x-gateway"] == f"Bearer {SECRET}"
    stored = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert stored
    assert SECRET.encode() not in stored
    assert SECRET not in caplog.text


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("extra_headers", {"Authorization": [f"Bearer {SECRET}"]}),
        ("extra_headers", f"Authorization: Bearer {SECRET}"),
        ("extra_query", [("key", SECRET)]),
        ("extra_body", SECRET),
    ],
)
def test_malformed_extras_are_config_errors_that_show_no_value(field: str, value: Any) -> None:
    with pytest.raises(ConfigError) as info:
        OpenAIWrapper(config_list=[{"model": "m", "api_key": "k", field: value}])
    assert f"'{field}" in str(info.value)
    assert SECRET not in str(info.value)
