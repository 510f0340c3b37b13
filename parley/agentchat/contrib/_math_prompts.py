"""MathChat's texts: the first-message prompts by type and the replies MathUserProxyAgent sends."""

from __future__ import annotations

__all__ = [
    "DEFAULT_REPLY",
    "NO_OUTPUT",
    "NO_OUTPUT_PRINT",
    "PROMPTS",
    "REVISIT",
    "SAME_AS_LAST",
    "TOO_LONG",
    "UNKNOWN_LANGUAGE",
]

_RULES = """Rules for your queries:
- Print every result you need to see (use `print`); nothing else is shown to you.
- Prefer exact values: use fractions and radicals (sympy works well) rather than decimals.
- Each query runs after your earlier successful queries, so their variables are still defined.
- Wait for the result of a query before you rely on it.
"""

_DEFAULT = (
    """Solve the math problem below. Pick the approach that fits it best:
Case 1: the problem can be solved by one Python program. Write the whole program in one
```python
...
```
block and print the answer.
Case 2: the problem needs reasoning more than computation. Solve it step by step yourself.
Case 3: neither works on its own. Solve it step by step, and when a step needs a computation,
send a Python query in a ```python``` block and wait for its result before you go on.

"""
    + _RULES
    + """
When you have the final answer, put it in \\boxed{} (a fraction as \\frac{a}{b}, not a decimal).

Problem: """
)

_PYTHON = (
    """Solve the math problem below step by step. For every computation, write Python code in a
```python
...
```
block; I will run it and tell you the output.

"""
    + _RULES
    + """
When you have the final answer, put it in \\boxed{}.

Problem: """
)

_TWO_TOOLS = (
    """Solve the math problem below step by step. You have two tools for computations:
- Python: write code in a ```python``` block and print what you need;
- Wolfram Alpha: write one query in a ```wolfram``` block (for example, to solve an equation
  or compute an integral).
I will run each query and tell you its result.

"""
    + _RULES
    + """
When you have the final answer, put it in \\boxed{}.

Problem: """
)

PROMPTS = {"default": _DEFAULT, "python": _PYTHON, "two_tools": _TWO_TOOLS}
"""The first message's text before the problem, by ``prompt_type``."""

# The replies are AutoGen's texts: 0.2 code compares against them (MathUserProxyAgent.DEFAULT_REPLY).
DEFAULT_REPLY = (
    "Continue. Please keep solving the problem until you need to query. (If you get to the "
    "answer, put it in \\boxed{}.)"
)
SAME_AS_LAST = "\nYour query or result is same from the last, please try a new approach."
REVISIT = (
    "Please revisit the problem statement and your reasoning. If you think this step is "
    "correct, solve it yourself and continue the next step. Otherwise, correct this step."
)
UNKNOWN_LANGUAGE = "Error: Unknown language."
NO_OUTPUT_PRINT = "No output found. Make sure you print the results."
NO_OUTPUT = "No output found."
TOO_LONG = (
    "Your requested query response is too long. You might have made a mistake. Please revise "
    "your reasoning and query."
)
