"""AutoGen's path ``autogen.oai.bedrock``: the client of models on Amazon Bedrock.

The client lives in :mod:`parley.oai.providers.bedrock`; this module names the same objects for
AutoGen 0.2 code, and it is the module a config entry's ``api_type`` loads the client from, so a
test that patches ``parley.oai.bedrock.BedrockClient`` changes the client ``OpenAIWrapper`` builds.
Patching a member (``BedrockClient.create``) works from either path: it is one class.
"""

from .providers._bedrock_errors import PROVIDER as PROVIDER
from .providers.bedrock import PRICES, BedrockClient, model_name

__all__ = ["PRICES", "BedrockClient", "model_name"]
