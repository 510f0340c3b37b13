"""AutoGen/FLAML's enhanced-inference API, kept for AutoGen 0.2 code: ``Completion`` and
``ChatCompletion`` (``completion``, at AutoGen's path ``parley.oai.completion``) and their
``tune``.

- ``completion``: the two classes (class methods over class-level state: cache, history);
- ``_params``: a config and templates turned into one request; ``_call``: sending it through the
  OpenAI client, with the legacy disk cache and retry rules; ``_history``: the call log;
  ``_evaluate``: ``test``'s metrics;
- ``_tune*``: ``tune``'s search (flaml or optuna), its budget, pruning, checks and resumable log.

Beside the completion client (:mod:`parley.oai.client`), which it does not use: it calls the
OpenAI client of :mod:`parley.oai.providers` directly, as AutoGen's legacy path did.
"""
