"""MathUserProxyAgent: MathChat on the fake server, python queries run locally in a tmp dir."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from parley import AssistantAgent
from parley.agentchat.contrib.math_user_proxy_agent import (
    PROMPTS,
    MathUserProxyAgent,
    WolframAlphaUnavailableError,
    _add_print_to_last_line,
    _is_termination_msg_mathchat,
)
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

VARIANTS = pytest.mark.parametrize("variant", ["sync", "async"])


def proxy(tmp_path: Path, **kwargs: Any) -> MathUserProxyAgent:
    # Local execution is an explicit opt-in; the code runs in the test's own directory.
    kwargs.setdefault("code_execution_config", {"use_docker": False, "work_dir": str(tmp_path)})
    return MathUserProxyAgent("mathproxyagent", **kwargs)


async def solve(variant: str, user: MathUserProxyAgent, assistant: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("message", MathUserProxyAgent.message_generator)
    with IOStream.set_default(IOScripted()):
        if variant == "async":
            return await user.a_initiate_chat(assistant, **kwargs)
        return await asyncio.to_thread(user.initiate_chat, assistant, **kwargs)


@VARIANTS
async def test_solves_a_problem_with_python_queries(
    variant: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.add_reply(
        "Let me compute.\n```python\nfrom fractions import Fraction\nx = Fraction(3, 4)\nx * 2\n```"
    )
    fake_llm.add_reply("Now the square:\n```python\nprint(x ** 2)\n```")
    fake_llm.add_reply("So the answer is $\\boxed{\\frac{9}{16}}$.")
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = proxy(tmp_path)
    result = await solve(variant, user, assistant, problem="What is (3/4)^2?", prompt_type="python")

    first = fake_llm.requests[0]["messages"][-1]["content"]
    assert first == PROMPTS["python"] + "What is (3/4)^2?"
    # The first query's last line was printed for the model; the second query reused x.
    assert fake_llm.requests[1]["messages"][-1]["content"] == "3/2"
    assert fake_llm.requests[2]["messages"][-1]["content"] == "9/16"
    assert result.chat_history[-1]["content"].endswith("\\boxed{\\frac{9}{16}}$.")
    assert result.termination_reason == "is_termination_msg"
    assert len(fake_llm.requests) == 3


async def test_errors_are_reported_without_file_paths(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.add_reply("```python\nimport math\n1/0\n```")
    fake_llm.add_reply("Oops. \\boxed{0}")
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    await solve("async", proxy(tmp_path), assistant, problem="p")
    reply = fake_llm.requests[1]["messages"][-1]["content"]
    assert reply.startswith("Error: ")
    assert "ZeroDivisionError" in reply
    assert 'File "' not in reply


async def test_no_code_gets_the_default_reply_and_repeats_are_flagged(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.add_reply("I am thinking.")
    fake_llm.add_reply("```python\nprint(6 * 7)\n```")
    fake_llm.add_reply("```python\nprint(6 * 7)\n```")
    fake_llm.add_reply("```\nthis is not code at all\n```")
    fake_llm.add_reply("The answer is \\boxed{42}.")
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    await solve("async", proxy(tmp_path), assistant, problem="6*7?")
    replies = [r["messages"][-1]["content"] for r in fake_llm.requests[1:]]
    assert replies[0] == MathUserProxyAgent.DEFAULT_REPLY
    assert replies[1] == "42"
    assert replies[2].startswith("42\n")
    assert "same from the last, please try a new approach" in replies[2]
    assert replies[3] == "Error: Unknown language."


async def test_too_many_invalid_queries_ask_to_revisit(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    for i in range(3):
        fake_llm.add_reply(f"```python\nraise ValueError('bad {i}')\n```")
    fake_llm.add_reply("\\boxed{1}")
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    await solve("async", proxy(tmp_path, max_invalid_q_per_step=2), assistant, problem="p")
    replies = [r["messages"][-1]["content"] for r in fake_llm.requests[1:]]
    assert "bad 0" in replies[0]
    assert "bad 1" in replies[1]
    assert replies[2].startswith("Please revisit the problem statement")


async def test_customized_prompt_and_unknown_prompt_type(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.add_reply("\\boxed{2}")
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    await solve("async", proxy(tmp_path), assistant, problem="1+1?", customized_prompt="Go: ")
    assert fake_llm.requests[0]["messages"][-1]["content"] == "Go: 1+1?"
    with pytest.raises(KeyError):
        MathUserProxyAgent.message_generator(
            proxy(tmp_path), assistant, {"problem": "x", "prompt_type": "wolfram"}
        )


def test_termination_and_print_rules() -> None:
    assert _is_termination_msg_mathchat({"content": "so \\boxed{3}"})
    assert not _is_termination_msg_mathchat({"content": "\\boxed{3}\n```python\nprint(3)\n```"})
    assert not _is_termination_msg_mathchat({"content": "no answer yet"})
    assert not _is_termination_msg_mathchat({"content": None})
    assert _add_print_to_last_line("x=1\nx+1") == "x=1\nprint(x+1)"
    assert _add_print_to_last_line("x=1\ny=x+1") == "x=1\ny=x+1"
    assert _add_print_to_last_line("print(1)\n2") == "print(1)\n2"


def test_wolfram_query_without_app_id_fails_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WOLFRAM_ALPHA_APPID", raising=False)
    with pytest.raises(WolframAlphaUnavailableError, match="WOLFRAM_ALPHA_APPID"):
        proxy(tmp_path).execute_one_wolfram_query("integrate x^2")


def test_defaults() -> None:
    agent = MathUserProxyAgent(code_execution_config=False)
    assert agent.name == "MathChatAgent"
    assert agent.human_input_mode == "NEVER"
    assert MathUserProxyAgent.MAX_CONSECUTIVE_AUTO_REPLY == 15
    names = [e.func.__name__ for e in agent._reply_func_list]
    assert names[:2] == ["check_termination_and_human_reply", "_generate_math_reply"]


def test_wolfram_without_app_id_is_a_value_error_as_in_autogen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # AutoGen 0.2 code catches ValueError around a wolfram query it cannot run.
    monkeypatch.delenv("WOLFRAM_ALPHA_APPID", raising=False)
    with pytest.raises(ValueError, match="WOLFRAM_ALPHA_APPID"):
        proxy(tmp_path).execute_one_wolfram_query("2x=3")


def test_replies_are_autogens_texts() -> None:
    assert MathUserProxyAgent.DEFAULT_REPLY == (
        "Continue. Please keep solving the problem until you need to query. "
        "(If you get to the answer, put it in \\boxed{}.)"
    )


def test_remove_print_keeps_prints_inside_blocks() -> None:
    from parley.agentchat.contrib.math_user_proxy_agent import _remove_print

    assert _remove_print('print("hello")\na = 4*5\nprint("world")') == "a = 4*5"
    indented = "if 4 > 5:\n\tprint('True')"
    assert _remove_print(indented) == indented


def test_earlier_queries_state_is_kept_for_later_ones(tmp_path: Path) -> None:
    # AutoGen's sequence: each answer as AutoGen gave it, and y still defined at the end.
    agent = proxy(tmp_path)
    run = agent.execute_one_python_code
    assert run("x=3") == ("No output found. Make sure you print the results.", False)
    assert run("if 4 > 5:\n\tprint('True')") == ("No output found.", True)
    error, ok = run("2+'2'")
    assert error.startswith("Error:")
    assert not ok
    assert "TypeError" in error
    run("x=3\ny=x*2")
    out, ok = run("print(y)")
    assert (out.strip(), ok) == ("6", True)
    too_long, ok = run("print('*'*2001)")
    assert not ok
    assert too_long == (
        "Your requested query response is too long. You might have made a mistake. "
        "Please revise your reasoning and query."
    )
    # A query that printed nothing still defines its names for the next one.
    run("z = 7")
    assert run("print(z + x)")[0].strip() == "10"
    # Imports of a failed query are kept, the rest of it is not.
    run("import math\nw = 1/0")
    out, ok = run("print(math.floor(2.5))")
    assert (out.strip(), ok) == ("2", True)
    assert "NameError" in run("print(w)")[0]


def test_earlier_prints_inside_blocks_print_again(tmp_path: Path) -> None:
    # As in AutoGen: kept code runs before each later query, indented prints included.
    agent = proxy(tmp_path)
    agent.execute_one_python_code("for i in range(2):\n    print(i)")
    assert agent.execute_one_python_code("print('next')")[0].split() == ["0", "1", "next"]


def test_a_new_problem_forgets_the_earlier_code(tmp_path: Path) -> None:
    agent = proxy(tmp_path)
    agent.execute_one_python_code("q = 1")
    MathUserProxyAgent.message_generator(agent, None, {"problem": "1+1"})
    assert "NameError" in agent.execute_one_python_code("print(q)")[0]
