"""AutoGen-compatible code helpers (``autogen.code_utils``).

The code-execution functions are filled by the code-execution issue; the model-name constants
that ``autogen`` re-exports live here already.
"""

__all__ = ["DEFAULT_MODEL", "FAST_MODEL"]

DEFAULT_MODEL = "gpt-4"
FAST_MODEL = "gpt-3.5-turbo"
