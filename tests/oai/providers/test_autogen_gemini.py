"""AutoGen 0.2's GeminiClient internals and Vertex AI settings, as AutoGen's tests and extensions
use them: which API a config speaks to (and the AssertionError for an API key with Vertex AI's
project or location), ``_oai_messages_to_gemini_messages``, ``_concat_parts``,
``_to_vertexai_safety_settings`` and ``_to_json`` (google-genai objects with ``to_dict``), and
Vertex AI requests through the SDK to FakeLLMServer with a token from the given credentials."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest

from parley.exceptions import ConfigAssertionError
from parley.oai import OpenAIWrapper
from parley.oai.gemini import GeminiClient
from parley.testing import FakeLLMServer

from ..._loopback_http import serving
from . import scenarios

genai_types = pytest.importorskip("google.genai.types")

MODEL = "gemini-2.0-flash"
PNG = "data:image/png;base64,iVBORw0KGgo="
TOKEN = "ya29.parley-test-token"
_KEY_ENV = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI")


@pytest.fixture
def no_key_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _KEY_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def client(no_key_in_env: None) -> GeminiClient:
    return GeminiClient(api_key="fake_api_key")


def _access_token(token: str = TOKEN) -> Any:
    from google.oauth2.credentials import Credentials

    return Credentials(token=token)


# -- which API: AutoGen's rule -----------------------------------------------------------------


@pytest.mark.parametrize(
    "vertex", [{"location": "us-west1"}, {"project_id": "my-project"}, {"credentials": "token"}]
)
def test_an_api_key_with_vertex_settings_is_an_assertion_error(
    no_key_in_env: None, vertex: dict[str, Any]
) -> None:
    with pytest.raises(AssertionError) as raised:
        GeminiClient(api_key="fake_api_key", **vertex)
    assert isinstance(raised.value, ConfigAssertionError)
    assert next(iter(vertex)) in str(raised.value)
    assert "fake_api_key" not in str(raised.value)


def test_a_key_means_the_gemini_api(client: GeminiClient) -> None:
    assert client.api_key == "fake_api_key"
    assert client.use_vertexai is False


def test_no_key_anywhere_means_vertex_ai_with_google_credentials(no_key_in_env: None) -> None:
    client = GeminiClient()
    assert client.use_vertexai is True
    assert client.api_key is None


def test_the_environments_key_is_the_clients(
    no_key_in_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "from-env")
    client = GeminiClient()
    assert (client.api_key, client.use_vertexai) == ("from-env", False)
    # Vertex AI's settings in the config win over a key in the environment.
    client = GeminiClient(project_id="p", location="europe-west4")
    assert (client.api_key, client.use_vertexai) == (None, True)


def test_vertex_ai_settings_without_a_key(no_key_in_env: None) -> None:
    client = GeminiClient(credentials=_access_token(), project_id="p", location="us-west1")
    assert client.use_vertexai is True
    assert client.api_key is None


def test_credentials_must_be_google_auth_credentials(no_key_in_env: None) -> None:
    with pytest.raises(AssertionError, match=r"google\.auth\.credentials\.Credentials"):
        GeminiClient(credentials={"token": "x"}, project_id="p")


def test_vertex_ai_turned_off_with_its_settings_is_refused(no_key_in_env: None) -> None:
    with pytest.raises(AssertionError, match="project_id"):
        GeminiClient(use_vertexai=False, project_id="p")


# -- Vertex AI through the SDK, on loopback ----------------------------------------------------


def _vertex_entry(server: FakeLLMServer, **settings: Any) -> dict[str, Any]:
    return {"api_type": "google", "model": MODEL, "base_url": server.url, **settings}


def test_vertex_ai_requests_carry_the_project_location_and_token(no_key_in_env: None) -> None:
    with FakeLLMServer(api_key=TOKEN) as server:
        server.add_reply("Hello from Vertex AI.")
        config = _vertex_entry(
            server, project_id="my-project", location="europe-west4", credentials=_access_token()
        )
        wrapper = OpenAIWrapper(config_list=[config], cache_seed=None)
        answer = wrapper.create(messages=scenarios.HI)
        assert wrapper.extract_text_or_completion_object(answer) == ["Hello from Vertex AI."]
        request = server.received[0]
    assert request.path == (
        f"/v1beta1/projects/my-project/locations/europe-west4/publishers/google/models/{MODEL}"
        ":generateContent"
    )
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert "x-goog-api-key" not in request.headers


def test_a_wrong_token_is_refused_by_vertex_ai(no_key_in_env: None) -> None:
    from parley.exceptions import ModelAPIError

    with FakeLLMServer(api_key=TOKEN) as server:
        config = _vertex_entry(
            server, project_id="p", location="us-west1", credentials=_access_token("other")
        )
        with pytest.raises(ModelAPIError):
            OpenAIWrapper(config_list=[config], cache_seed=None, max_retries=0).create(
                messages=scenarios.HI
            )


class _TokenEndpoint(BaseHTTPRequestHandler):
    """Google's OAuth token endpoint for a service account's signed JWT grant."""

    grants: ClassVar[list[dict[str, list[str]]]] = []

    def do_POST(self) -> None:
        from urllib.parse import parse_qs

        body = self.rfile.read(int(self.headers["content-length"])).decode()
        self.grants.append(parse_qs(body))
        reply = json.dumps({"access_token": TOKEN, "expires_in": 3600, "token_type": "Bearer"})
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(reply.encode())

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def token_endpoint() -> Iterator[str]:
    _TokenEndpoint.grants = []
    with serving(_TokenEndpoint) as url:
        yield f"{url}/token"


def _service_account_file(tmp_path: Path, token_uri: str) -> Path:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    path = tmp_path / "service-account.json"
    info = {
        "type": "service_account",
        "project_id": "file-project",
        "private_key_id": "k1",
        "private_key": pem,
        "client_email": "bot@file-project.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": token_uri,
    }
    path.write_text(json.dumps(info))
    return path


def test_a_service_account_file_signs_in_and_names_the_project(
    no_key_in_env: None, tmp_path: Path, token_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    path = _service_account_file(tmp_path, token_endpoint)
    with FakeLLMServer(api_key=TOKEN) as server:
        server.add_reply("signed in")
        config = _vertex_entry(
            server, google_application_credentials=str(path), location="us-central1"
        )
        answer = OpenAIWrapper(config_list=[config], cache_seed=None).create(messages=scenarios.HI)
        assert answer.choices[0].message.content == "signed in"
        request = server.received[0]
    assert "/projects/file-project/locations/us-central1/" in request.path
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert _TokenEndpoint.grants[0]["grant_type"] == ["urn:ietf:params:oauth:grant-type:jwt-bearer"]
    # The file is this client's: nothing is set for the rest of the process (AutoGen set it).
    assert "GOOGLE_APPLICATION_CREDENTIALS" not in os.environ


# -- _oai_messages_to_gemini_messages ----------------------------------------------------------


def test_messages_become_alternating_turns_with_one_part_per_message(
    client: GeminiClient,
) -> None:
    messages = [
        {"role": "system", "content": "You answer questions about planets."},
        {"role": "model", "content": "What would you like to know?"},
        {"role": "user", "content": "Which planet is smallest?"},
        {"role": "user", "content": "And which is largest?"},
        {"role": "assistant", "content": "Mercury."},
        {"role": "model", "content": "Jupiter."},
        {"role": "user", "content": "Thanks!"},
    ]
    contents = client._oai_messages_to_gemini_messages(messages)
    assert [(c.role, [p.text for p in c.parts]) for c in contents] == [
        ("user", ["You answer questions about planets."]),
        ("model", ["What would you like to know?"]),
        ("user", ["Which planet is smallest?", "And which is largest?"]),
        ("model", ["Mercury.", "Jupiter."]),
        ("user", ["Thanks!"]),
    ]
    assert all(isinstance(c, genai_types.Content) for c in contents)
    assert contents[2].to_dict() == {
        "role": "user",
        "parts": [{"text": "Which planet is smallest?"}, {"text": "And which is largest?"}],
    }


def test_the_last_turn_is_the_users(client: GeminiClient) -> None:
    contents = client._oai_messages_to_gemini_messages(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    )
    assert [c.role for c in contents] == ["user", "model", "user"]
    assert contents[-1].parts[0].text == "continue"


def test_images_tool_calls_and_results_are_parts(client: GeminiClient) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}
    contents = client._oai_messages_to_gemini_messages(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": PNG}},
                ],
            },
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "2"},
        ]
    )
    image = contents[0].parts[1].inline_data
    assert (image.mime_type, image.data[:4]) == ("image/png", b"\x89PNG")
    assert contents[1].to_dict()["parts"] == [
        {"function_call": {"id": "c1", "name": "add", "args": {"a": 1}}}
    ]
    response = contents[2].parts[0].function_response
    assert (contents[2].role, response.name, response.response) == ("user", "add", {"result": "2"})


def test_the_contents_are_what_the_client_sends(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("Mercury.")
    config = scenarios.entry(fake_llm, "google", MODEL)
    messages = [
        {"role": "user", "content": "Which planet is smallest?"},
        {"role": "assistant", "content": "Ask me."},
        {"role": "user", "content": "Which?"},
    ]
    OpenAIWrapper(config_list=[config], cache_seed=None).create(messages=messages)
    face = GeminiClient(api_key="k")._oai_messages_to_gemini_messages(messages)
    sent = fake_llm.received[0].json["contents"]
    assert sent == [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in face]


# -- _concat_parts -----------------------------------------------------------------------------


def test_adjacent_texts_are_joined(client: GeminiClient) -> None:
    Part = genai_types.Part
    parts = client._concat_parts([Part(text="Hello, "), Part(text="world"), Part(text="!")])
    assert [p.to_dict() for p in parts] == [{"text": "Hello, world!"}]


def test_parts_without_text_stay_in_place_and_no_text_is_empty(client: GeminiClient) -> None:
    Part = genai_types.Part
    call = Part(function_call=genai_types.FunctionCall(name="f", args={}))
    parts = client._concat_parts([Part(text="a"), Part(text="b"), call, Part(text="")])
    assert [p.text for p in parts] == ["ab", None, "empty"]
    assert parts[1].function_call.name == "f"
    assert client._concat_parts([]) == []


# -- _to_vertexai_safety_settings ---------------------------------------------------------------

_CATEGORIES = [
    "HARM_CATEGORY_HARASSMENT",
    "HARM_CATEGORY_HATE_SPEECH",
    "HARM_CATEGORY_SEXUALLY_EXPLICIT",
    "HARM_CATEGORY_DANGEROUS_CONTENT",
]


def test_safety_setting_dicts_become_setting_objects() -> None:
    settings = [{"category": c, "threshold": "BLOCK_ONLY_HIGH"} for c in _CATEGORIES]
    converted = GeminiClient._to_vertexai_safety_settings(settings)
    expected = [
        genai_types.SafetySetting(
            category=genai_types.HarmCategory[c],
            threshold=genai_types.HarmBlockThreshold.BLOCK_ONLY_HIGH,
        )
        for c in _CATEGORIES
    ]
    assert [s.to_dict() for s in converted] == [e.to_json_dict() for e in expected]
    assert all(isinstance(s, genai_types.SafetySetting) for s in converted)


def test_an_unknown_category_or_threshold_is_logged_and_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = [
        {"category": "HARM_CATEGORY_RUDENESS", "threshold": "BLOCK_ONLY_HIGH"},
        {"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_SOMETIMES"},
        {"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"},
    ]
    with caplog.at_level(logging.ERROR):
        converted = GeminiClient._to_vertexai_safety_settings(settings)
    assert [s.to_dict() for s in converted] == [settings[2]]
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any("HARM_CATEGORY_RUDENESS" in m for m in logged)
    assert any("BLOCK_SOMETIMES" in m for m in logged)


def test_settings_already_in_the_sdks_form_are_returned_as_they_are() -> None:
    as_dict = {
        genai_types.HarmCategory.HARM_CATEGORY_HARASSMENT: (
            genai_types.HarmBlockThreshold.BLOCK_ONLY_HIGH
        )
    }
    assert GeminiClient._to_vertexai_safety_settings(as_dict) is as_dict
    as_objects = [
        genai_types.SafetySetting(category="HARM_CATEGORY_HARASSMENT", threshold="BLOCK_NONE")
    ]
    assert GeminiClient._to_vertexai_safety_settings(as_objects) is as_objects


def test_converted_settings_are_sent_as_given(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    dicts = [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}]
    converted = GeminiClient._to_vertexai_safety_settings(dicts)
    config = scenarios.entry(fake_llm, "google", MODEL, safety_settings=converted)
    OpenAIWrapper(config_list=[config], cache_seed=None).create(messages=scenarios.HI)
    assert fake_llm.received[0].json["safetySettings"] == dicts


# -- _to_json ----------------------------------------------------------------------------------


def test_to_json_reads_json_and_keeps_other_text(client: GeminiClient) -> None:
    assert client._to_json('{"sum": 3}') == {"sum": 3}
    assert client._to_json("three") == "three"


# -- without the SDK ---------------------------------------------------------------------------


def test_without_the_sdk_the_faces_name_the_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['google.genai'] = None\n"
        "from parley.oai.gemini import GeminiClient\n"
        "try:\n"
        "    GeminiClient._to_vertexai_safety_settings([{'category': 'x', 'threshold': 'y'}])\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'parley[gemini]'" in done.stdout


def test_a_credentials_file_of_another_kind_is_refused(no_key_in_env: None, tmp_path: Path) -> None:
    from parley.exceptions import ConfigError

    path = tmp_path / "external.json"
    path.write_text(json.dumps({"type": "external_account", "credential_source": {"file": "x"}}))
    config = {"api_type": "google", "model": MODEL, "google_application_credentials": str(path)}
    with pytest.raises(ConfigError, match="external_account"):
        OpenAIWrapper(config_list=[config], cache_seed=None, max_retries=0).create(
            messages=scenarios.HI
        )
