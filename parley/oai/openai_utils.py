"""Config-list helpers with AutoGen's names and behaviour (``autogen.oai.openai_utils``).

A config list is a list of dicts, one per endpoint/model, tried in order (the JSON array of
AutoGen's ``OAI_CONFIG_LIST`` file). These
functions load one (from JSON, key files or a ``.env`` file), filter it, and turn a request
into a cache key. They never modify the dicts and lists they are given.

Differences from AutoGen, each on purpose:

* ``filter_config``: ``None`` among the acceptable values matches a config that lacks the key
  (or holds ``None``), as AutoGen's docstring promises but its code doesn't do. A bare string
  as the acceptable values is one value, not a set of substrings (AutoGen tests
  ``"gpt-4" in "gpt-4o"``, which is true).
* ``config_list_from_json`` rejects a file or variable that holds anything but a JSON array of
  objects with a ``ValueError`` naming the source, and its JSON errors name the source too.
* ``config_list_from_dotenv`` skips a ``model_api_key_map`` entry of an unsupported type with a
  logged warning (AutoGen reuses the previous model's config, or crashes on the first entry). It
  copies ``model_api_key_map`` instead of adding the default models to the caller's dict, and it
  filters in memory instead of writing the API keys to a temporary file. ``.env`` files are read
  with python-dotenv, as in AutoGen, but a line it cannot parse is an error naming the file and
  line (python-dotenv skips it with a logged warning), and the upward search for a ``.env``
  starts at the current directory (AutoGen's started beside its own source file).
* ``get_key`` leaves credentials out of the cache key: besides ``NON_CACHE_KEY`` at the top level,
  any key at any depth whose name looks like a credential (its words include ``token``,
  ``secret``, ``password``, ``credential(s)``, ``auth``, ``authorization``, ``cookie``,
  ``apikey``, or a pair such as ``api_key``/``access_key``/``private_key``) is dropped when its
  value is a string, ``None`` or another non-container, non-number object. Request parameters
  such as ``max_tokens``, ``max_completion_tokens`` and ``stop_token_ids`` (plural "tokens", or
  a list value) stay. In ``extra_headers``, a header is also dropped when its value is a
  credential whatever its name: it starts with an HTTP authentication scheme (``Bearer ...``,
  ``Basic ...``) or looks like an OpenAI-style key (``sk-...``). A value JSON can't hold raises a
  ``TypeError`` naming where it is.
* ``get_config_list`` rejects a bare string as ``api_keys`` (AutoGen would make one config per
  character).

Kept for compatibility, though questionable: ``config_list_openai_aoai`` (and so
``config_list_from_models`` and ``config_list_gpt4_gpt35``) writes the key and base files it
reads into ``OPENAI_API_KEY``, ``OPENAI_API_BASE``, ``AZURE_OPENAI_API_KEY`` and
``AZURE_OPENAI_API_BASE`` in ``os.environ``, overwriting what was there.
"""

from __future__ import annotations

from . import _config_lists
from ._cache_key import NON_CACHE_KEY, get_key
from ._config_lists import *  # noqa: F403 - the config-list helpers, listed once, in _config_lists
from ._config_lists import DEFAULT_AZURE_API_VERSION, get_config
from ._cost import OAI_PRICE1K

__all__ = ["DEFAULT_AZURE_API_VERSION", "NON_CACHE_KEY", "OAI_PRICE1K", "get_config", "get_key"]
__all__ += _config_lists.__all__
