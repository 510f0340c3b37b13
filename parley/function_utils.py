"""Tool schemas from type hints (``autogen.function_utils``).

Filled by the function-calling issue.
"""
