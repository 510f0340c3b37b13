"""Config lists: load them (from JSON, key files or a ``.env`` file) and filter them.

AutoGen's helpers of ``autogen.oai.openai_utils`` (exported by ``autogen.oai`` and ``autogen``
too); their differences from AutoGen are listed in :mod:`parley.oai.openai_utils`. They never
modify the dicts and lists they are given. Each file they read (a config list, a key file, a
``.env``) is registered as protected (``parley._protected_paths``): code executors refuse a
work dir that holds it.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._protected_paths import protect
from ._dotenv import find_env_file, load_env_file

__all__ = [
    "config_list_from_dotenv",
    "config_list_from_json",
    "config_list_from_models",
    "config_list_gpt4_gpt35",
    "config_list_openai_aoai",
    "filter_config",
    "get_config_list",
]

# The name AutoGen users know these messages by.
logger = logging.getLogger("parley.oai.openai_utils")

DEFAULT_AZURE_API_VERSION = "2024-02-01"
# Files read here hold API keys: registered so that no code executor's work dir holds them.
_CONFIG_LIST = "a config list parley loaded"


def _acceptable(values: Any) -> list[Any]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        return [values]
    return list(values)


def _satisfies(value: Any, acceptable: list[Any]) -> bool:
    if value is None:
        return None in acceptable
    if isinstance(value, (list, tuple)):
        return any(item in acceptable for item in value)
    return value in acceptable


def filter_config(
    config_list: list[dict[str, Any]],
    filter_dict: Mapping[str, Any] | None,
    exclude: bool = False,
) -> list[dict[str, Any]]:
    """Configs matching every key of ``filter_dict`` (or, with ``exclude``, none of them).

    A config's value matches when it is one of the acceptable values or, for a list value such
    as ``tags``, shares one with them. No filter returns ``config_list`` itself.
    """
    if not filter_dict:
        return config_list
    criteria = {key: _acceptable(values) for key, values in filter_dict.items()}
    kept = []
    for i, config in enumerate(config_list):
        if not isinstance(config, Mapping):
            raise TypeError(f"config_list[{i}] is a {type(config).__name__}, not a dict")
        if all(_satisfies(config.get(k), vals) != exclude for k, vals in criteria.items()):
            kept.append(config)
    return kept


def _load_json(text: str, source: str) -> list[dict[str, Any]]:
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError as err:
        raise json.JSONDecodeError(
            f"{source} is not valid JSON: {err.msg}", err.doc, err.pos
        ) from None
    if not isinstance(loaded, list) or not all(isinstance(c, dict) for c in loaded):
        raise ValueError(f"{source} must hold a JSON array of objects (one per model/endpoint)")
    return loaded


def config_list_from_json(
    env_or_file: str,
    file_location: str | None = "",
    filter_dict: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Load a config list from the variable ``env_or_file`` (JSON or a file path) or that file.

    If the environment variable is set and non-empty, it names an existing file to read, or else
    holds the JSON itself. Otherwise the file ``file_location/env_or_file`` is read.
    """
    env_value = os.environ.get(env_or_file)
    if env_value:
        if os.path.exists(env_value):
            text = Path(env_value).read_text(encoding="utf-8")
            protect(env_value, _CONFIG_LIST)
            source = f"the file {env_value!r} named by ${env_or_file}"
        else:
            text = env_value
            source = f"${env_or_file} (not an existing file, so read as JSON)"
    else:
        path = env_or_file if file_location is None else os.path.join(file_location, env_or_file)
        text = Path(path).read_text(encoding="utf-8")
        protect(path, _CONFIG_LIST)
        source = f"the file {path!r}"
    return filter_config(_load_json(text, source), filter_dict)


def get_config(
    api_key: str | None,
    base_url: str | None = None,
    api_type: str | None = None,
    api_version: str | None = None,
) -> dict[str, Any]:
    """``{"api_key": api_key}`` plus each given option, read from the environment variable it
    names if there is one, else taken literally."""
    config: dict[str, Any] = {"api_key": api_key}
    for name, value in (
        ("base_url", base_url),
        ("api_type", api_type),
        ("api_version", api_version),
    ):
        if value:
            config[name] = os.environ.get(value, value)
    return config


def get_config_list(
    api_keys: Sequence[str],
    base_urls: Sequence[str] | None = None,
    api_type: str | None = None,
    api_version: str | None = None,
) -> list[dict[str, Any]]:
    """One config per non-blank key, with the base URL of the same index and the options given.

    ``base_urls``, when given, must be as long as ``api_keys`` (``AssertionError`` otherwise).
    """
    if isinstance(api_keys, str):
        raise TypeError("api_keys must be a list of API keys, not a single string")
    if base_urls is not None and len(api_keys) != len(base_urls):
        # AutoGen's words exactly: 0.2 code and tests compare the message
        raise AssertionError("The length of api_keys must match the length of base_urls")
    config_list = []
    for i, api_key in enumerate(api_keys):
        if not api_key.strip():
            continue
        config: dict[str, Any] = {"api_key": api_key}
        if base_urls:
            config["base_url"] = base_urls[i]
        if api_type:
            config["api_type"] = api_type
        if api_version:
            config["api_version"] = api_version
        config_list.append(config)
    return config_list


def _file_into_env(folder: str, file_name: str | None, env_var: str) -> None:
    if file_name is None:
        return
    path = os.path.join(folder, file_name)
    try:
        os.environ[env_var] = Path(path).read_text(encoding="utf-8").strip()
        protect(path, "a key file parley loaded")
    except FileNotFoundError:
        logger.info("%s not found; %s is left as it is.", path, env_var)


def config_list_openai_aoai(
    key_file_path: str | None = ".",
    openai_api_key_file: str | None = "key_openai.txt",
    aoai_api_key_file: str | None = "key_aoai.txt",
    openai_api_base_file: str | None = "base_openai.txt",
    aoai_api_base_file: str | None = "base_aoai.txt",
    exclude: str | None = None,
) -> list[dict[str, Any]]:
    """OpenAI configs, then Azure OpenAI configs, from key files and environment variables.

    Each file found in ``key_file_path`` is written into its environment variable first (see
    the module docstring); a variable may hold several newline-separated keys or bases.
    ``exclude`` is ``"openai"`` or ``"aoai"`` to leave one kind out.
    """
    if key_file_path is not None:
        if exclude != "openai":
            _file_into_env(key_file_path, openai_api_key_file, "OPENAI_API_KEY")
            _file_into_env(key_file_path, openai_api_base_file, "OPENAI_API_BASE")
        if exclude != "aoai":
            _file_into_env(key_file_path, aoai_api_key_file, "AZURE_OPENAI_API_KEY")
            _file_into_env(key_file_path, aoai_api_base_file, "AZURE_OPENAI_API_BASE")
    aoai_config = (
        get_config_list(
            api_keys=os.environ.get("AZURE_OPENAI_API_KEY", "").split("\n"),
            base_urls=os.environ.get("AZURE_OPENAI_API_BASE", "").split("\n"),
            api_type="azure",
            api_version=DEFAULT_AZURE_API_VERSION,
        )
        if exclude != "aoai"
        else []
    )
    openai_bases = os.environ.get("OPENAI_API_BASE")
    openai_config = (
        get_config_list(
            api_keys=os.environ.get("OPENAI_API_KEY", "").split("\n"),
            base_urls=None if openai_bases is None else openai_bases.split("\n"),
        )
        if exclude != "openai"
        else []
    )
    return openai_config + aoai_config


def config_list_from_models(
    key_file_path: str | None = ".",
    openai_api_key_file: str | None = "key_openai.txt",
    aoai_api_key_file: str | None = "key_aoai.txt",
    aoai_api_base_file: str | None = "base_aoai.txt",
    exclude: str | None = None,
    model_list: list[str] | None = None,
) -> list[dict[str, Any]]:
    """``config_list_openai_aoai``'s configs, one copy per model of ``model_list``, model-major."""
    config_list = config_list_openai_aoai(
        key_file_path=key_file_path,
        openai_api_key_file=openai_api_key_file,
        aoai_api_key_file=aoai_api_key_file,
        aoai_api_base_file=aoai_api_base_file,
        exclude=exclude,
    )
    if model_list:
        config_list = [{**config, "model": model} for model in model_list for config in config_list]
    return config_list


def config_list_gpt4_gpt35(
    key_file_path: str | None = ".",
    openai_api_key_file: str | None = "key_openai.txt",
    aoai_api_key_file: str | None = "key_aoai.txt",
    aoai_api_base_file: str | None = "base_aoai.txt",
    exclude: str | None = None,
) -> list[dict[str, Any]]:
    """``config_list_from_models`` for ``["gpt-4", "gpt-3.5-turbo"]``."""
    return config_list_from_models(
        key_file_path,
        openai_api_key_file,
        aoai_api_key_file,
        aoai_api_base_file,
        exclude,
        model_list=["gpt-4", "gpt-3.5-turbo"],
    )


_DOTENV_OPTIONS = frozenset({"api_key_env_var", "base_url", "api_type", "api_version"})


def _dotenv_entry(model: str, spec: Any) -> dict[str, Any] | None:
    if isinstance(spec, str):
        return get_config(api_key=os.environ.get(spec))
    if isinstance(spec, Mapping):
        unknown = sorted(str(k) for k in spec if k not in _DOTENV_OPTIONS)
        if unknown:
            raise TypeError(
                f"model_api_key_map[{model!r}] has unsupported keys {unknown}; "
                f"allowed: {sorted(_DOTENV_OPTIONS)}"
            )
        key_var = spec.get("api_key_env_var", "OPENAI_API_KEY")
        if not isinstance(key_var, str):
            raise TypeError(
                f"model_api_key_map[{model!r}]['api_key_env_var'] must be the name of an "
                f"environment variable, not {type(key_var).__name__}"
            )
        options = {k: v for k, v in spec.items() if k != "api_key_env_var"}
        return get_config(api_key=os.environ.get(key_var), **options)
    logger.warning(
        "Skipping model %r: model_api_key_map values must be an environment variable name or a "
        "dict, not %s.",
        model,
        type(spec).__name__,
    )
    return None


def config_list_from_dotenv(
    dotenv_file_path: str | None = None,
    model_api_key_map: Mapping[str, Any] | None = None,
    filter_dict: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Configs built from a ``.env`` file and the environment, one per model.

    The file (``dotenv_file_path``, or the first ``.env`` in the current directory or above) is
    loaded into ``os.environ`` without overriding variables already set. ``model_api_key_map``
    maps a model to the variable holding its key, or to a dict with ``api_key_env_var`` and
    optional ``base_url``/``api_type``/``api_version``; ``gpt-4`` and ``gpt-3.5-turbo`` are
    added with ``OPENAI_API_KEY`` unless present. Models without a key are skipped.
    """
    if dotenv_file_path:
        if Path(dotenv_file_path).exists():
            load_env_file(dotenv_file_path)
        else:
            logger.warning("The specified .env file %s does not exist.", dotenv_file_path)
    else:
        found = find_env_file()
        if found is None:
            logger.warning("No .env file found. Loading configurations from environment variables.")
        else:
            load_env_file(found)

    key_map = dict(model_api_key_map or {})
    for model in ("gpt-4", "gpt-3.5-turbo"):
        key_map.setdefault(model, "OPENAI_API_KEY")

    configs = []
    for model, spec in key_map.items():
        config = _dotenv_entry(model, spec)
        if config is None:
            continue
        if not config["api_key"] or not config["api_key"].strip():
            logger.warning(
                "API key not found or empty for model %s. Please ensure path to .env file is "
                "correct.",
                model,
            )
            continue
        config["model"] = model
        configs.append(config)

    config_list = filter_config(configs, filter_dict)
    if not config_list:
        logger.error("No configurations loaded.")
        return []
    logger.info("Models available: %s", [config["model"] for config in config_list])
    return config_list
