"""The model clients, one module per API a config entry's ``api_type`` names.

- ``anthropic``, ``bedrock``, ``cerebras``, ``cohere``, ``gemini``, ``groq``, ``mistral``,
  ``ollama``, ``together``: each provider's ``ModelClient``, which turns an OpenAI-shaped request
  into the provider's API and its answer back into an ``openai`` ``ChatCompletion``. AutoGen 0.2
  code imports them from AutoGen's paths (``parley.oai.anthropic``, ...), which name the same
  classes; a config loads them from there too, on first use, so ``import parley`` never imports
  a provider SDK.
- ``_openai``: the client of OpenAI and Azure OpenAI (the default, when no provider matches).
- ``_registry``: which ``api_type`` selects which client, and which entry keys configure the
  client rather than the request.
- What the clients share: ``_base`` (the base class, building openai's response types, errors by
  status), ``_messages`` (reading OpenAI messages), ``_sdk_calls`` (calling an SDK),
  ``_openai_compatible`` (the SDKs shaped like OpenAI's); each provider's own translation
  modules are ``_<provider>_*``.

Adding a provider: a module here with a :class:`~parley.oai.providers._base.ProviderClient`
subclass, a line in ``_registry``'s ``PROVIDERS``, and a module at ``parley.oai.<name>`` naming
the client (the registry loads it from there). A model client of your own needs none of this:
implement :class:`parley.oai.model_client.ModelClient` and register it on the agent.

Below the completion client (:mod:`parley.oai.client` picks a client per config entry) and
above the helpers every client uses (costs, retries, reply checks, streaming).
"""
