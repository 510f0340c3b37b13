"""parley: the AutoGen 0.2 programming model, rebuilt lean, fast and safe.

``import parley as autogen`` is meant to run AutoGen 0.2 code unchanged. Heavy dependencies
(openai, docker, redis, jupyter) are imported lazily, where they are used.
"""

from .version import __version__

__all__ = ["__version__"]
