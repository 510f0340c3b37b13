"""``parley.math_utils``: AutoGen's answer extraction, equivalence and voting, on the examples
AutoGen 0.2 was checked against."""

from __future__ import annotations

import pytest

from parley import math_utils
from parley.math_utils import (
    eval_math_responses,
    get_answer,
    is_equiv,
    is_equiv_chain_of_thought,
    last_boxed_only_string,
    remove_boxed,
    voting_counts,
)
from parley.testing import FakeLLMServer


@pytest.mark.parametrize(
    ("solution", "answer"),
    [
        ("so \\boxed{\\frac{1}{2}} and \\boxed{3}", "3"),
        ("the answer is \\boxed{\\frac{1}{2}}.", "\\frac{1}{2}"),
        ("nested \\boxed{\\sqrt{x^{2}}} done", "\\sqrt{x^{2}}"),
        ("no box", None),
        ("\\fbox{7}", None),  # found, but only a \boxed box can be removed
        ("\\boxed 5", None),
        ("unbalanced \\boxed{1", None),
        (None, None),
    ],
)
def test_get_answer(solution: str | None, answer: str | None) -> None:
    assert get_answer(solution) == answer


def test_the_box_helpers() -> None:
    assert remove_boxed("\\boxed{42}") == "42"
    assert remove_boxed("\\fbox{42}") is None
    assert remove_boxed("x \\boxed{42}") is None
    assert last_boxed_only_string("a \\boxed{1} b \\boxed{{2}} c") == "\\boxed{{2}}"
    assert last_boxed_only_string("only \\fbox{3} here") == "\\fbox{3}"
    assert last_boxed_only_string("nothing") is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("0.5", "\\frac{1}{2}"),
        ("1/2", "\\frac12"),
        ("\\dfrac{1}{2}", "\\frac{1}{2}"),
        ("\\tfrac{3}{4}", "\\frac34"),
        ("\\frac3{4}", "\\frac{3}{4}"),
        ("50\\%", "50"),
        ("x = 3", "3"),
        ("\\$5", "5"),
        ("10^\\circ", "10"),
        ("10^{\\circ}", "10"),
        ("3\\text{ cm}", "3"),
        (".5", "0.5"),
        ("\\sqrt3", "\\sqrt{3}"),
        ("\\left(1,2\\right)", "(1,2)"),
        ("1\n2", "12"),
    ],
)
def test_equivalent_answers(a: str, b: str) -> None:
    assert is_equiv(a, b) == 1.0


@pytest.mark.parametrize(("a", "b"), [("2", "2.0"), ("abc = 3", "3"), ("1/3", "\\frac{1}{2}")])
def test_different_answers(a: str, b: str) -> None:
    assert is_equiv(a, b) == 0.0


def test_none_answers(capsys: pytest.CaptureFixture[str]) -> None:
    assert is_equiv(None, None) == 1.0
    assert "WARNING: Both None" in capsys.readouterr().out
    assert is_equiv("1", None) == 0.0
    assert is_equiv(None, "1") == 0.0


def test_a_normalisation_error_falls_back_to_equality() -> None:
    two_units = "3\\text{ cm}\\text{ m}"
    assert is_equiv(two_units, two_units) == 1.0
    assert is_equiv(two_units, "3") == 0.0


def test_chain_of_thought_compares_the_boxed_answers() -> None:
    assert is_equiv_chain_of_thought("so \\boxed{0.5}", "hence \\boxed{\\frac12}") == 1.0
    assert is_equiv_chain_of_thought("so \\boxed{2}", "hence \\boxed{3}") == 0.0


def test_voting_counts() -> None:
    assert voting_counts(["\\boxed{1}", "x", "\\boxed{2}", "\\boxed{1}"]) == {0: 2, 2: 1}
    assert voting_counts(["no", "answers"]) == {}


def test_eval_math_responses() -> None:
    responses = ["\\boxed{2}", "\\boxed{2.0}", "\\boxed{3}", "no answer"]
    assert eval_math_responses(responses, "so the answer is \\boxed{2}", extra="ignored") == {
        "expected_success": 0.68359375,
        "success": True,
        "success_vote": 1.0,
        "voted_answer": "\\boxed{2}",
        "votes": 1,
    }


def test_eval_math_responses_votes_for_the_largest_group() -> None:
    responses = ["\\boxed{3}", "\\boxed{2}", "\\boxed{\\frac{4}{2}}", "\\boxed{2}"]
    result = eval_math_responses(responses, "\\boxed{2}")
    assert result["voted_answer"] == "\\boxed{2}"
    assert result["votes"] == 2
    assert result["success_vote"] == 1.0


def test_eval_math_responses_edge_cases() -> None:
    assert eval_math_responses([]) == {
        "expected_success": 0,
        "success": False,
        "success_vote": 0,
        "voted_answer": None,
        "votes": 0,
    }
    no_box = eval_math_responses(["no", "box"], "\\boxed{1}")
    assert no_box["voted_answer"] == "no"
    assert no_box["votes"] == 0
    assert no_box["success"] is False


@pytest.mark.usefixtures("legacy_completion")
def test_solve_problem_votes_over_the_completions(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(
        choices=["so \\boxed{2}", "it is \\boxed{3}", "\\boxed{2.0}", "\\boxed{3}"],
        usage={"prompt_tokens": 100, "completion_tokens": 40},
    )
    answer, cost = math_utils.solve_problem(
        "What is 1 + 1?", n=4, base_url=fake_llm.base_url, api_key="sk-test"
    )
    # the first response of the largest group; 2 and 2.0 differ, so 3 wins
    assert answer == "it is \\boxed{3}"
    assert cost == pytest.approx((0.03 * 100 + 0.06 * 40) / 1000)
    sent = fake_llm.last_request
    assert (sent["model"], sent["n"]) == ("gpt-4", 4)
    assert sent["messages"] == [
        {
            "role": "user",
            "content": "What is 1 + 1? Solve the problem carefully. Simplify your answer as much "
            "as possible. Put the final answer in \\boxed{}.",
        }
    ]


@pytest.mark.usefixtures("legacy_completion")
def test_solve_problem_options(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("no box here")
    fake_llm.add_reply("\\boxed{4}")
    # without a boxed answer the vote falls on the first response
    answer, _ = math_utils.solve_problem("2 + 2", config_list=fake_llm.config_list("gpt-4o"))
    assert answer == "no box here"
    assert fake_llm.last_request["model"] == "gpt-4o"
    # AutoGen's literal template on request
    answer, _ = math_utils.solve_problem(
        "2 + 2", allow_format_str_template=False, config_list=fake_llm.config_list("gpt-4")
    )
    assert answer == "\\boxed{4}"
    assert fake_llm.last_request["messages"][0]["content"].startswith("{problem} Solve")
