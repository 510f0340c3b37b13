"""Which Google API a Gemini config entry speaks to, by AutoGen's rule, and its Vertex AI
settings for the google-genai client.

An entry with an ``api_key`` uses the Gemini API (Vertex AI's express mode with ``vertexai``
or ``use_vertexai`` true); an entry with Vertex AI's settings (``project_id``, ``location``,
``credentials``, ``google_application_credentials``) uses Vertex AI, and so does one with no
key at all (Google's application default credentials), unless ``GOOGLE_API_KEY`` or
``GEMINI_API_KEY`` is set. Nothing is set globally: AutoGen's ``vertexai.init`` and its write
of ``GOOGLE_APPLICATION_CREDENTIALS`` into the environment have no counterpart here; each client
carries its own project, location and credentials.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ...exceptions import ConfigAssertionError, ConfigError
from ._base import require

__all__ = ["VERTEX_KEYS", "api_key", "check_credentials", "uses_vertexai", "vertex_settings"]

# Config keys that configure Vertex AI (AutoGen's, and google-genai's ``vertexai`` flag).
VERTEX_KEYS = (
    "project_id",
    "location",
    "credentials",
    "google_application_credentials",
    "vertexai",
    "use_vertexai",
)
_PLACES = ("project_id", "location", "credentials", "google_application_credentials")
_KEY_ENVIRONMENT = ("GOOGLE_API_KEY", "GEMINI_API_KEY")  # the order google-genai reads them
_CLOUD_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]


def _flag(config: Mapping[str, Any]) -> bool | None:
    for key in ("use_vertexai", "vertexai"):
        if config.get(key) is not None:
            return bool(config[key])
    return None


def uses_vertexai(config: Mapping[str, Any]) -> bool:
    """Whether ``config`` speaks to Vertex AI. An ``api_key`` with a project, location or
    credentials of Vertex AI is :class:`~parley.exceptions.ConfigAssertionError` (an
    ``AssertionError``, as AutoGen's): the two ways in exclude each other."""
    given = [k for k in _PLACES if config.get(k) is not None]
    if config.get("api_key"):
        if given:
            raise ConfigAssertionError(
                f"the gemini config has an api_key and {', '.join(given)}: Vertex AI's project, "
                "location and credentials are not used with an API key (leave out api_key to "
                "use Vertex AI, or the Vertex AI settings to use the Gemini API)"
            )
        return bool(_flag(config))  # Vertex AI's express mode takes a key
    flag = _flag(config)
    if given and flag is False:
        raise ConfigAssertionError(
            f"the gemini config turns Vertex AI off but sets {', '.join(given)}, which only "
            "Vertex AI uses"
        )
    if given or flag is not None:
        return bool(given) or bool(flag)
    return not any(os.environ.get(name) for name in _KEY_ENVIRONMENT)


def api_key(config: Mapping[str, Any]) -> str | None:
    """AutoGen's ``GeminiClient.api_key``: the config's key or, on the Gemini API, the
    environment's; None on Vertex AI with Google credentials."""
    if config.get("api_key"):
        return str(config["api_key"])
    if uses_vertexai(config):
        return None
    return next((os.environ[n] for n in _KEY_ENVIRONMENT if os.environ.get(n)), None)


def check_credentials(config: Mapping[str, Any]) -> None:
    """``credentials`` must be a ``google.auth`` credentials object (AutoGen asserted it)."""
    credentials = config.get("credentials")
    if credentials is None:
        return
    base = require("google.auth.credentials", "gemini").Credentials
    if not isinstance(credentials, base):
        raise ConfigAssertionError(
            "the gemini config's credentials must be a google.auth.credentials.Credentials "
            f"object, not {type(credentials).__name__}"
        )


def vertex_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """google-genai ``Client`` arguments for Vertex AI: the key (express mode), or the project,
    location and credentials (the service-account or user file
    ``google_application_credentials`` names, loaded for this client alone; its project is the
    default one); None lets the SDK find them (environment, application default credentials)."""
    if config.get("api_key"):
        return {"vertexai": True, "api_key": str(config["api_key"])}
    project = config.get("project_id")
    credentials = config.get("credentials")
    path = config.get("google_application_credentials")
    if credentials is None and path:
        credentials, found = _from_file(str(path))
        project = project or found
    return {
        "vertexai": True,
        "project": project,
        "location": config.get("location"),
        "credentials": credentials,
    }


def _from_file(path: str) -> tuple[Any, str | None]:
    """The credentials of a service-account or user key file, and its project. Only those two
    kinds: an external-account file makes google-auth run what the file says to get a token,
    which a config entry should not be able to ask for."""
    with open(path, encoding="utf-8") as file:
        info = json.load(file)
    kind = info.get("type") if isinstance(info, dict) else None
    if kind == "service_account":
        service_account = require("google.oauth2.service_account", "gemini")
        made = service_account.Credentials.from_service_account_info(info, scopes=_CLOUD_SCOPES)
        return made, info.get("project_id")
    if kind == "authorized_user":
        user = require("google.oauth2.credentials", "gemini")
        made = user.Credentials.from_authorized_user_info(info, scopes=_CLOUD_SCOPES)
        return made, info.get("quota_project_id")
    raise ConfigError(
        f"the gemini config's google_application_credentials file {path!r} is of type {kind!r}: "
        "parley reads service_account and authorized_user files (pass other kinds as "
        "credentials=, a google.auth credentials object)"
    )
