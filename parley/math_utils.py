"""Answers to math problems: extract the boxed answer, compare answers, vote (AutoGen's
``autogen.math_utils``), following the MATH benchmark's conventions.

An answer is the content of the last ``\\boxed{...}`` of a response. Two answers are
equivalent when they are equal after :func:`_strip_string` normalises away notation that does
not change the value (``\\dfrac`` and ``\\frac``, ``0.5`` and ``\\frac{1}{2}``, a trailing unit,
a leading ``x =``...); it is a string normalisation, not algebra: ``2`` and ``2.0`` differ.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "eval_math_responses",
    "get_answer",
    "is_equiv",
    "is_equiv_chain_of_thought",
    "last_boxed_only_string",
    "remove_boxed",
    "solve_problem",
    "voting_counts",
]

_PROMPT = (
    "{problem} Solve the problem carefully. Simplify your answer as much as possible. Put the "
    "final answer in \\boxed{{}}."
)


def solve_problem(problem: str, **config: Any) -> tuple[Any, Any]:
    """Ask ``Completion.create`` to solve ``problem`` with the answer boxed (default
    ``model="gpt-4"``; ``config`` overrides it and may add ``n`` for a vote); returns ``(the
    voted response, cost)``.

    Unlike AutoGen, the prompt's ``{problem}`` is filled (AutoGen sent it to the model
    literally, as it did not pass ``allow_format_str_template``); an
    ``allow_format_str_template`` in ``config`` still wins.
    """
    from .code_utils import DEFAULT_MODEL
    from .oai.completion import Completion

    params = {"model": DEFAULT_MODEL, "prompt": _PROMPT, "allow_format_str_template": True}
    response = Completion.create({"problem": problem}, **{**params, **config})
    results = eval_math_responses(Completion.extract_text(response))
    return results.get("voted_answer"), response["cost"]


def remove_boxed(string: str) -> str | None:
    """The text inside ``\\boxed{...}`` when ``string`` is exactly such a box, else None."""
    left = "\\boxed{"
    if string.startswith(left) and string.endswith("}"):
        return string[len(left) : -1]
    return None


def last_boxed_only_string(string: str) -> str | None:
    """The last ``\\boxed`` (else the last ``\\fbox``) of ``string`` up to its matching closing
    brace; None if there is none or its braces do not close."""
    start = string.rfind("\\boxed")
    if start < 0:
        start = string.rfind("\\fbox")
        if start < 0:
            return None
    depth = 0
    for i in range(start, len(string)):
        if string[i] == "{":
            depth += 1
        elif string[i] == "}":
            depth -= 1
            if depth == 0:
                return string[start : i + 1]
    return None


def get_answer(solution: str | None) -> str | None:
    """The content of the last box of ``solution`` (None if it has none)."""
    if solution is None:
        return None
    boxed = last_boxed_only_string(solution)
    return None if boxed is None else remove_boxed(boxed)


def _fix_fracs(string: str) -> str:
    """``\\fracab`` and ``\\fraca{b}`` as ``\\frac{a}{b}``."""
    parts = string.split("\\frac")
    out = parts[0]
    for part in parts[1:]:
        out += "\\frac"
        if part.startswith("{"):
            out += part
            continue
        if len(part) < 2:
            return string
        a, b, rest = part[0], part[1], part[2:]
        if b == "{":
            out += "{" + a + "}" + b + rest
        else:
            out += "{" + a + "}{" + b + "}" + rest
    return out


def _fix_a_slash_b(string: str) -> str:
    """An integer ratio written ``a/b`` (and nothing else) as ``\\frac{a}{b}``."""
    if string.count("/") != 1:
        return string
    a, b = string.split("/")
    try:
        numerator, denominator = int(a), int(b)
    except ValueError:
        return string
    if string != f"{numerator}/{denominator}":
        return string
    return f"\\frac{{{numerator}}}{{{denominator}}}"


def _remove_right_units(string: str) -> str:
    """Drop a unit written after the value as ``\\text{ ...}`` (one at most)."""
    if "\\text{ " not in string:
        return string
    parts = string.split("\\text{ ")
    assert len(parts) == 2, f"more than one unit in {string!r}"
    return parts[0]


def _fix_sqrt(string: str) -> str:
    """``\\sqrtX`` (one character) as ``\\sqrt{X}``."""
    if "\\sqrt" not in string:
        return string
    parts = string.split("\\sqrt")
    out = parts[0]
    for part in parts[1:]:
        if part and part[0] != "{":
            out += "\\sqrt{" + part[0] + "}" + part[1:]
        else:
            out += "\\sqrt" + part
    return out


def _strip_string(string: str) -> str:
    """``string`` in the normal form the equivalence test compares (see the module docstring);
    the steps and their order are the MATH benchmark's."""
    string = string.replace("\n", "").replace("\\!", "").replace("\\\\", "\\")
    string = string.replace("tfrac", "frac").replace("dfrac", "frac")
    string = string.replace("\\left", "").replace("\\right", "")
    string = string.replace("^{\\circ}", "").replace("^\\circ", "")
    string = string.replace("\\$", "")
    string = _remove_right_units(string)
    string = string.replace("\\%", "").replace("%", "")
    string = string.replace(" .", " 0.").replace("{.", "{0.")
    if not string:
        return string
    if string[0] == ".":
        string = "0" + string
    # "x = 3" and "k=3" mean 3; a longer left-hand side is part of the answer.
    if len(string.split("=")) == 2 and len(string.split("=")[0]) <= 2:
        string = string.split("=")[1]
    string = _fix_sqrt(string)
    string = string.replace(" ", "")
    string = _fix_fracs(string)
    if string == "0.5":
        string = "\\frac{1}{2}"
    return _fix_a_slash_b(string)


def is_equiv(str1: str | None, str2: str | None) -> float:
    """1.0 if the two answers are the same after normalisation, else 0.0 (two Nones are
    equivalent, with a printed warning, as in AutoGen)."""
    if str1 is None and str2 is None:
        print("WARNING: Both None")
        return 1.0
    if str1 is None or str2 is None:
        return 0.0
    try:
        return float(_strip_string(str1) == _strip_string(str2))
    except Exception:
        return float(str1 == str2)


def is_equiv_chain_of_thought(str1: str | None, str2: str | None) -> float:
    """Whether two worked solutions box equivalent answers."""
    return is_equiv(get_answer(str1), get_answer(str2))


def voting_counts(responses: list[str]) -> dict[int, int]:
    """Responses with a boxed answer, grouped by equivalence: ``{index of the group's first
    response: its size}``. Responses without a box do not vote."""
    answers = [get_answer(response) for response in responses]
    counts: dict[int, int] = {}
    for i, answer in enumerate(answers):
        if answer is None:
            continue
        for first in counts:
            if is_equiv(answer, answers[first]):
                counts[first] += 1
                break
        else:
            counts[i] = 1
    return counts


def eval_math_responses(
    responses: list[str], solution: str | None = None, **args: Any
) -> dict[str, Any]:
    """Score several responses to one problem against its ``solution``: the chance that one of
    them is right (``expected_success``), whether any is (``success``), and the majority
    vote's response, its size and whether it is right. Other keyword arguments (the rest of a
    data instance) are ignored, so this can be ``tune``'s ``eval_func``."""
    n = len(responses)
    if not n:
        return {
            "expected_success": 0,
            "success": False,
            "success_vote": 0,
            "voted_answer": None,
            "votes": 0,
        }
    success_list = []
    if solution is not None:
        success_list = [is_equiv_chain_of_thought(response, solution) for response in responses]
    counts = voting_counts(responses)
    voted, votes = 0, 0
    for first, size in counts.items():
        if size > votes:
            voted, votes = first, size
    success_rate = sum(success_list) / n
    return {
        "expected_success": 1 - (1 - success_rate) ** n,
        "success": any(success_list),
        "success_vote": is_equiv_chain_of_thought(responses[voted], solution),
        "voted_answer": responses[voted],
        "votes": votes,
    }
