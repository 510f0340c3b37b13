"""The legacy LLM helpers of ``parley.code_utils`` (generate_code, improve_function,
improve_code, generate_assertions, eval_function_completions, PassAssertionFilter, implement)
on a FakeLLMServer through the real openai client; completions run with ``execute_code``
locally (``use_docker=False``), and once in the Docker sandbox."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from parley import code_utils
from parley.code_utils import (
    PassAssertionFilter,
    eval_function_completions,
    generate_assertions,
    generate_code,
    implement,
    improve_code,
    improve_function,
)
from parley.oai import Completion
from parley.testing import FakeLLMServer

DEFINITION = 'def add_one(x):\n    """Add one to x.\n\n    >>> add_one(1)\n    2\n    """\n'
GOOD = "    return x + 1\n"
BAD = "    return x - 1\n"
BROKEN = "    return (x +\n"  # does not even compile
TEST = "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(-1) == 0\n"
ASSERTIONS = "assert add_one(1) == 2"
USAGE = {"prompt_tokens": 1000, "completion_tokens": 100}


def cost_of(model: str, usage: dict[str, int] = USAGE) -> float:
    """The cost of a reply with ``usage`` by the legacy price table."""
    prompt, completion = {"gpt-3.5-turbo": (0.0015, 0.002), "gpt-4": (0.03, 0.06)}[model]
    return (prompt * usage["prompt_tokens"] + completion * usage["completion_tokens"]) / 1000


@pytest.fixture(autouse=True)
def workspace(legacy_completion: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of the test's own; code runs in ``coding/`` under the test's directory (the
    default work dir of execute_code is relative to the current directory)."""
    workspace = legacy_completion.parent
    monkeypatch.chdir(workspace)
    return workspace


def server_config(server: FakeLLMServer) -> dict[str, Any]:
    return {"base_url": server.base_url, "api_key": "sk-test"}


def content(request: dict[str, Any]) -> str:
    (message,) = request["messages"]
    assert message["role"] == "user"
    text: str = message["content"]
    return text


def fake_assertions(server: FakeLLMServer) -> Any:
    """generate_assertions asking the fake server (the filter calls it with the definition
    only, so the server's address is bound in)."""
    return functools.partial(generate_assertions, **server_config(server))


# -- the prompt helpers ------------------------------------------------------------------------


def test_generate_assertions_sends_its_filled_template(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(ASSERTIONS, usage=USAGE)
    text, cost = generate_assertions(DEFINITION, **server_config(fake_llm))
    assert (text, cost) == (ASSERTIONS, pytest.approx(cost_of("gpt-3.5-turbo")))
    sent = fake_llm.last_request
    assert set(sent) == {"model", "messages", "max_tokens", "stop"}
    assert (sent["model"], sent["max_tokens"], sent["stop"]) == ("gpt-3.5-turbo", 256, "\n\n")
    prompt = content(sent)
    assert prompt.endswith(f"\n\nfunc signature:\n{DEFINITION}\nassertions:")
    assert "{definition}" not in prompt
    assert "one assertion for each example" in prompt


def test_the_callers_config_wins(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("a")
    fake_llm.add_reply("b")
    # AutoGen's behaviour on request: the template goes out as it is
    generate_assertions(DEFINITION, allow_format_str_template=False, **server_config(fake_llm))
    assert content(fake_llm.last_request).endswith("func signature:\n{definition}\nassertions:")
    # the caller's own template is filled too, and the caller's options replace the defaults
    generate_assertions(
        DEFINITION,
        prompt="Assert {definition}",
        model="gpt-4",
        max_tokens=9,
        **server_config(fake_llm),
    )
    sent = fake_llm.last_request
    assert content(sent) == f"Assert {DEFINITION}"
    assert (sent["model"], sent["max_tokens"]) == ("gpt-4", 9)
    # a placeholder the helper does not provide is a clear error, before any request
    with pytest.raises(ValueError, match=r"'signature'.*not in the context"):
        generate_assertions(DEFINITION, prompt="{signature}", **server_config(fake_llm))
    assert len(fake_llm.requests) == 2


def test_improve_function(fake_llm: FakeLLMServer, workspace: Path) -> None:
    source = 'def table():\n    return {"a": 1}  # braces in the file are not a template\n'
    (workspace / "calc.py").write_text(source)
    fake_llm.add_reply("def table():\n    return dict(a=1)\n", usage=USAGE)
    text, cost = improve_function("calc.py", "table", "use dict()", **server_config(fake_llm))
    assert text == "def table():\n    return dict(a=1)\n"
    assert cost == pytest.approx(cost_of("gpt-4"))
    sent = fake_llm.last_request
    # request_timeout=600 is the client's timeout, never part of the request
    assert set(sent) == {"model", "messages"}
    assert sent["model"] == "gpt-4"
    prompt = content(sent)
    assert prompt.startswith("Improve the function 'table' so that it meets this objective: ")
    assert "'use dict()'" in prompt
    assert prompt.endswith(f"\n{source}")


def test_improve_code_lists_the_files_and_asks_for_code_on_request(
    fake_llm: FakeLLMServer, workspace: Path
) -> None:
    (workspace / "a.py").write_text("A = 1\n")
    (workspace / "b.py").write_text("B = {}\n")
    fake_llm.add_reply("1. rename A", usage=USAGE)
    fake_llm.add_reply("1. rename B\n```python\nb = {}\n```")
    text, cost = improve_code(["a.py", "b.py"], "clearer names", **server_config(fake_llm))
    assert (text, cost) == ("1. rename A", pytest.approx(cost_of("gpt-4")))
    sent = fake_llm.last_request
    assert (set(sent), sent["model"]) == ({"model", "messages"}, "gpt-4")
    prompt = content(sent)
    assert "suggestions to improve it, so that it meets this objective: 'clearer names'" in prompt
    # each file as "<name>:\n<text>\n\n", then the template's own line break
    assert prompt.endswith("'.\na.py:\nA = 1\n\n\nb.py:\nB = {}\n\n\n\n")
    assert "improved code" not in prompt
    text, _ = improve_code(
        ["b.py"], "clearer names", suggest_only=False, model="gpt-4o", **server_config(fake_llm)
    )
    assert text.startswith("1. rename B")
    sent = fake_llm.last_request
    assert sent["model"] == "gpt-4o"
    assert "suggestions to improve it, then the improved code, so that" in content(sent)


def test_generate_code_extracts_the_blocks(fake_llm: FakeLLMServer) -> None:
    reply = "Here:\n```python\nprint(1)\n```\nand\n```sh\necho 2\n```"
    fake_llm.add_reply(reply, usage=USAGE)
    blocks, cost = generate_code(
        prompt="Write {task}",
        context={"task": "a script"},
        model="gpt-4",
        **server_config(fake_llm),
    )
    assert blocks == [("python", "print(1)"), ("sh", "echo 2")]
    assert cost == pytest.approx(cost_of("gpt-4"))
    # no template of its own: the caller's is filled only when the caller asks, as create does
    assert content(fake_llm.last_request) == "Write {task}"
    fake_llm.add_reply("no blocks at all")
    blocks, _ = generate_code(
        prompt="Write {task}",
        context={"task": "a script"},
        allow_format_str_template=True,
        model="gpt-4",
        **server_config(fake_llm),
    )
    assert blocks == [("unknown", "no blocks at all")]
    assert content(fake_llm.last_request) == "Write a script"
    fake_llm.add_reply("<code>x = 1</code>")
    blocks, _ = generate_code(
        r"<code>()(.*?)</code>", prompt="p", model="gpt-4", **server_config(fake_llm)
    )
    assert blocks == [("", "x = 1")]


def test_the_helpers_are_code_utils_names() -> None:
    from parley import _llm_code_helpers

    for name in (
        "generate_code",
        "improve_function",
        "improve_code",
        "generate_assertions",
        "eval_function_completions",
        "implement",
        "PassAssertionFilter",
    ):
        assert name in code_utils.__all__
        assert getattr(code_utils, name) is getattr(_llm_code_helpers, name)
    assert (code_utils.DEFAULT_MODEL, code_utils.FAST_MODEL) == ("gpt-4", "gpt-3.5-turbo")


# -- eval_function_completions -----------------------------------------------------------------


def evaluate(responses: list[str], **kwargs: Any) -> dict[str, Any]:
    return eval_function_completions(responses, DEFINITION, use_docker=False, **kwargs)


def test_against_a_test_without_assertions() -> None:
    assert evaluate([GOOD, BAD], test=TEST, entry_point="add_one") == {
        "expected_success": 1 - (1 - 1 / 2) ** 2,
        "success": True,
    }
    assert evaluate([BAD, BROKEN], test=TEST, entry_point="add_one") == {
        "expected_success": 0,
        "success": False,
    }
    # a whole function is run as it is; a check function of the model's own is cut off
    whole = "def add_one(x):\n    return x + 1\n\ndef check(candidate):\n    assert False\n"
    assert evaluate([whole], test=TEST, entry_point="add_one")["success"] is True


def test_no_responses_is_a_value_error() -> None:
    for assertions in (None, ASSERTIONS, generate_assertions):
        with pytest.raises(ValueError, match="at least one response"):
            evaluate([], test=TEST, entry_point="add_one", assertions=assertions)


def test_a_string_of_assertions_is_ignored() -> None:
    responses = [BAD, GOOD]
    # AutoGen keeps only generated assertions: the bad completion passes (it runs), and the
    # returned assertions are None
    assert evaluate(responses, assertions=ASSERTIONS) == {
        "index_selected": 0,
        "succeed_assertions": True,
        "gen_cost": 0,
        "assertions": None,
    }
    assert evaluate(responses, test=TEST, entry_point="add_one", assertions=ASSERTIONS) == {
        "index_selected": 0,
        "succeed_assertions": True,
        "success": False,
        "gen_cost": 0,
        "assertions": None,
    }
    assert responses == [BAD, GOOD]
    # what fails is a completion that does not run
    metrics = evaluate([BROKEN, BROKEN + "\ndef check(c):\n    pass\n"], assertions=ASSERTIONS)
    assert (metrics["index_selected"], metrics["succeed_assertions"]) == (1, False)


def test_a_generator_with_several_responses_asks_the_model(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(ASSERTIONS, usage=USAGE)
    metrics = evaluate(
        [BROKEN, BAD, GOOD], test=TEST, entry_point="add_one", assertions=fake_assertions(fake_llm)
    )
    assert metrics == {
        "index_selected": 2,
        "succeed_assertions": True,
        "success": True,
        "gen_cost": pytest.approx(cost_of("gpt-3.5-turbo")),
        "assertions": ASSERTIONS,
    }
    assert content(fake_llm.last_request).endswith(f"func signature:\n{DEFINITION}\nassertions:")
    # none passing: the last one is selected
    fake_llm.add_reply("assert add_one(5) == 6")
    metrics = evaluate([BAD, BAD], assertions=fake_assertions(fake_llm))
    assert (metrics["index_selected"], metrics["succeed_assertions"]) == (1, False)
    assert "success" not in metrics


def test_a_single_response_does_not_generate_assertions(fake_llm: FakeLLMServer) -> None:
    generator = fake_assertions(fake_llm)
    # with a test, the one response is selected unchecked and tested
    assert evaluate([GOOD], test=TEST, entry_point="add_one", assertions=generator) == {
        "index_selected": 0,
        "succeed_assertions": False,
        "success": True,
        "gen_cost": 0,
        "assertions": None,
    }
    # without one, it is run
    metrics = evaluate([BAD], assertions=generator)
    assert (metrics["index_selected"], metrics["succeed_assertions"]) == (0, True)
    assert fake_llm.requests == []


# -- PassAssertionFilter and implement ---------------------------------------------------------


def completions(server: FakeLLMServer, texts: list[str]) -> Any:
    """A Completion response with one choice per text."""
    server.add_reply(choices=texts, usage=USAGE)
    return Completion.create(
        prompt="# Python 3" + DEFINITION, model="gpt-4", n=len(texts), **server_config(server)
    )


def test_pass_assertion_filter(fake_llm: FakeLLMServer) -> None:
    checker = PassAssertionFilter(fake_assertions(fake_llm), use_docker=False)
    assert (checker.cost, checker.metrics, checker.responses) == (0, None, None)
    response = completions(fake_llm, [BAD, GOOD])
    fake_llm.add_reply(ASSERTIONS, usage=USAGE)
    assert checker.pass_assertions({"definition": DEFINITION}, response) is True
    assert checker.cost == pytest.approx(cost_of("gpt-3.5-turbo"))
    assert checker.responses == [BAD, GOOD]
    assert checker.metrics == {
        "index_selected": 1,
        "succeed_assertions": True,
        "gen_cost": checker.cost,
        "assertions": ASSERTIONS,
    }
    # the generated text replaces the generator, and, being a string, is not used next time
    assert checker.pass_assertions(context={"definition": DEFINITION}, response=response) is True
    assert checker.metrics["index_selected"] == 0
    assert checker.metrics["assertions"] is None
    assert checker.cost == pytest.approx(cost_of("gpt-3.5-turbo"))
    # and with none left, it still selects (AutoGen's filter raised KeyError here)
    other = completions(fake_llm, [BROKEN, GOOD, BAD])
    assert checker.pass_assertions({"definition": DEFINITION}, other) is True
    assert (checker.metrics["index_selected"], checker.responses) == (1, [BROKEN, GOOD, BAD])
    assert len(fake_llm.requests) == 3


def step(server: FakeLLMServer, model: str, **extra: Any) -> dict[str, Any]:
    """One config of implement's list: its prompt template, the model, the fake server."""
    return {"prompt": "# Python 3{definition}", "model": model, **server_config(server), **extra}


def test_implement_escalates_when_the_first_config_fails(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(BROKEN, usage=USAGE)
    fake_llm.add_reply(GOOD + "\ndef check(candidate):\n    pass\n", usage=USAGE)
    configs = [step(fake_llm, "gpt-3.5-turbo"), step(fake_llm, "gpt-4")]
    code, cost, config_id = implement(DEFINITION, configs, assertions=ASSERTIONS, use_docker=False)
    assert (code, config_id) == (GOOD + "\n", 1)
    assert cost == pytest.approx(cost_of("gpt-3.5-turbo") + cost_of("gpt-4"))
    assert [r["model"] for r in fake_llm.requests] == ["gpt-3.5-turbo", "gpt-4"]
    assert [content(r) for r in fake_llm.requests] == ["# Python 3" + DEFINITION] * 2


def test_implement_returns_the_first_config_that_passes(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(ASSERTIONS, usage=USAGE)
    fake_llm.add_reply(GOOD, usage=USAGE)
    configs = [step(fake_llm, "gpt-3.5-turbo"), step(fake_llm, "gpt-4")]
    code, cost, config_id = implement(
        DEFINITION, configs, assertions=fake_assertions(fake_llm), use_docker=False
    )
    assert (code, config_id) == (GOOD, 0)
    # the assertions are generated first (two configs and a generator), their cost counted
    assert cost == pytest.approx(2 * cost_of("gpt-3.5-turbo"))
    first, second = fake_llm.requests
    assert (first["max_tokens"], first["stop"]) == (256, "\n\n")
    assert content(second) == "# Python 3" + DEFINITION


def test_implement_with_one_config_keeps_the_callers_flag(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(GOOD)
    # one config: nothing generated up front, and one completion gives the filter nothing to do
    code, _, config_id = implement(
        DEFINITION,
        [step(fake_llm, "gpt-4", allow_format_str_template=False)],
        assertions=fake_assertions(fake_llm),
        use_docker=False,
    )
    assert (code, config_id) == (GOOD, 0)
    assert [content(r) for r in fake_llm.requests] == ["# Python 3{definition}"]


@pytest.fixture
def openai_env(fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> FakeLLMServer:
    """The openai client's own environment variables point at the fake server, so that
    configs without a base_url (implement's defaults) reach it."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    return fake_llm


def test_implement_default_escalation(openai_env: FakeLLMServer, legacy_completion: Path) -> None:
    server = openai_env
    server.add_reply(ASSERTIONS, usage=USAGE)  # generate_assertions, with its defaults
    server.add_reply(BROKEN, usage=USAGE)  # step 0
    server.add_reply(choices=[BROKEN, BAD + "x = (\n"], usage=USAGE)  # step 1, n=7
    server.add_reply(BROKEN, usage=USAGE)  # step 2
    server.add_reply(BROKEN, usage=USAGE)  # step 3, n=2 (the one choice repeated)
    server.add_reply(BAD, usage=USAGE)  # step 4: runs, so it passes
    code, cost, config_id = implement(DEFINITION, use_docker=False)
    assert (code, config_id) == (BAD, 4)
    assert cost == pytest.approx(3 * cost_of("gpt-3.5-turbo") + 3 * cost_of("gpt-4"))
    stops = ["\nclass", "\ndef", "\nif", "\nprint"]
    generation, *steps = server.requests
    assert (generation["model"], generation["max_tokens"]) == ("gpt-3.5-turbo", 256)
    assert [{k: v for k, v in r.items() if k != "messages"} for r in steps] == [
        {"model": "gpt-3.5-turbo", "temperature": 0},
        {"model": "gpt-3.5-turbo", "stop": stops, "n": 7},
        {"model": "gpt-4", "temperature": 0},
        {"model": "gpt-4", "stop": stops, "n": 2},
        {"model": "gpt-4", "stop": stops, "n": 1},
    ]
    assert {content(r) for r in steps} == {"# Python 3" + DEFINITION}
    # the steps' cache seeds 0, 0, 1, 2, 2 under the root set_cache chose
    assert sorted(p.name for p in legacy_completion.iterdir()) == ["0", "1", "2", "41"]
    assert server.received[-1].headers["authorization"] == "Bearer sk-from-env"


# -- Docker ------------------------------------------------------------------------------------


@pytest.fixture
def sandbox_image(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    from parley.coding.docker_commandline_code_executor import _close_legacy_executors
    from tests.coding._docker_support import ensure_sandbox_image

    image = ensure_sandbox_image()
    monkeypatch.setenv("PARLEY_SANDBOX_IMAGE", image)  # the image use_docker=True starts with
    yield image
    _close_legacy_executors()


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_completions_run_in_docker_by_default(workspace: Path) -> None:
    # passes only where the code does not run in this process's work dir: in the container
    here = os.path.realpath(workspace / "coding")
    in_container = f"    import os\n    assert os.getcwd() != {here!r}\n    return x + 1\n"
    metrics = eval_function_completions([BAD, in_container], DEFINITION, TEST, "add_one")
    assert metrics == {"expected_success": 0.75, "success": True}
    metrics = eval_function_completions(
        [BROKEN, in_container], DEFINITION, TEST, "add_one", assertions=ASSERTIONS
    )
    assert (metrics["index_selected"], metrics["success"]) == (1, True)


def test_setting_code_utils_working_dir_moves_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import parley.code_utils as code_utils

    monkeypatch.setattr(code_utils, "WORKING_DIR", str(tmp_path / "elsewhere"))
    exit_code, logs, _ = code_utils.execute_code(
        "open('marker.txt', 'w').write('x')", use_docker=False
    )
    assert exit_code == 0, logs
    assert (tmp_path / "elsewhere" / "marker.txt").exists()
