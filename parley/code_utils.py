"""AutoGen-compatible code helpers (``autogen.code_utils``); filled by the code-execution issue."""
