"""Completion.tune's search spaces: the defaults and how the caller's overrides shape the space
FLAML searches (pure: no requests)."""

from __future__ import annotations

import logging
import subprocess
import sys
from typing import Any

import pytest

from parley.oai import ChatCompletion, Completion
from parley.oai.legacy._tune_space import build_problem, default_search_space, flaml_modules

# flaml says at import that its AutoML part is missing; parley's import helper hushes that.
_flaml = flaml_modules()
tune, Categorical, Domain = _flaml.tune, _flaml.Categorical, _flaml.Domain


def _point(space: dict[str, Any], **values: Any) -> dict[str, Any]:
    """A trial's config: ``values`` over the space's constants (its other dimensions unset)."""
    constants = {k: v for k, v in space.items() if not isinstance(v, Domain)}
    return {**constants, **values}


def _categories(domain: object) -> list[object]:
    assert isinstance(domain, Categorical)
    return list(domain.categories)


def test_default_spaces() -> None:
    space = Completion.default_search_space
    assert set(space) == {"model", "temperature_or_top_p", "max_tokens", "n", "prompt"}
    assert _categories(space["model"]) == [
        "text-ada-001",
        "text-babbage-001",
        "text-davinci-003",
        "gpt-3.5-turbo",
        "gpt-4",
    ]
    assert _categories(ChatCompletion.default_search_space["model"]) == ["gpt-3.5-turbo", "gpt-4"]
    assert space["prompt"] == "{prompt}"
    assert (space["max_tokens"].lower, space["max_tokens"].upper) == (50, 1000)
    assert (space["n"].lower, space["n"].upper) == (1, 100)
    temperature, top_p = _categories(space["temperature_or_top_p"])
    assert (temperature["temperature"].lower, temperature["temperature"].upper) == (0, 2)
    assert (top_p["top_p"].lower, top_p["top_p"].upper) == (0, 1)
    # Built once per class, on first read.
    assert Completion.default_search_space is space
    assert default_search_space(chat=True) is not ChatCompletion.default_search_space


def test_import_parley_and_the_completion_classes_leave_flaml_alone() -> None:
    code = (
        "import sys, parley\n"
        "parley.ChatCompletion.create, parley.oai.completion.Completion.tune\n"
        "print(sorted(m for m in ('flaml', 'numpy', 'optuna') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_one_model_and_prompt_templates_become_index_choices() -> None:
    problem = build_problem(
        ChatCompletion.default_search_space,
        {"model": "gpt-4", "prompt": ["{a}", "{a}!"], "allow_format_str_template": True},
    )
    space = problem.space
    assert not problem.hierarchical
    assert space["model"] == "gpt-4"
    assert _categories(space["prompt"]) == [0, 1]
    assert problem.prompts == ["{a}", "{a}!"]
    assert space["allow_format_str_template"] is True  # constants stay in the space
    request = problem.request(
        _point(space, prompt=1, max_tokens=60, n=3, temperature_or_top_p={"top_p": 0.5})
    )
    assert request.params == {
        "model": "gpt-4",
        "prompt": "{a}!",
        "allow_format_str_template": True,
        "max_tokens": 60,
        "n": 3,
        "top_p": 0.5,
    }
    assert request.region == ("gpt-4", 1, None)
    assert request.config_list is None


def test_a_single_prompt_string_is_a_one_item_choice() -> None:
    problem = build_problem(ChatCompletion.default_search_space, {"model": "gpt-4"})
    assert problem.prompts == ["{prompt}"]
    assert _categories(problem.space["prompt"]) == [0]


@pytest.mark.parametrize("prompt", [5, None, [], {"a": 1}])
def test_a_prompt_that_is_no_string_or_list_is_an_assertion_error(prompt: object) -> None:
    with pytest.raises(AssertionError, match=r"prompt must be a string or a list of strings\."):
        build_problem(ChatCompletion.default_search_space, {"prompt": prompt})


def test_messages_drop_the_prompt() -> None:
    conversation = [{"role": "user", "content": "{q}"}]
    problem = build_problem(
        ChatCompletion.default_search_space, {"model": "gpt-4", "messages": conversation}
    )
    assert "prompt" not in problem.space
    assert problem.prompts is None
    assert problem.messages == [conversation]
    other = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "{q}"}]
    problem = build_problem(
        ChatCompletion.default_search_space,
        {"model": "gpt-4", "prompt": "ignored", "messages": [conversation, other]},
    )
    assert problem.messages == [conversation, other]
    assert _categories(problem.space["messages"]) == [0, 1]
    request = problem.request(_point(problem.space, messages=1, n=1))
    assert request.params["messages"] == other
    assert "prompt" not in request.params
    assert request.region == ("gpt-4", 1, None)


@pytest.mark.parametrize("messages", ["hi", [], [{"role": "user"}, ["x"]], [[]], 3])
def test_bad_messages_are_an_assertion_error(messages: object) -> None:
    with pytest.raises(
        AssertionError, match=r"messages must be a list of dicts or a list of lists"
    ):
        build_problem(ChatCompletion.default_search_space, {"messages": messages})


@pytest.mark.parametrize(
    ("stop", "choices"),
    [
        ("\n", ["\n"]),
        (["\n", "###"], [["\n", "###"]]),
        ([["\n"], None, ["###", "END"]], [["\n"], None, ["###", "END"]]),
    ],
)
def test_stop_forms(stop: object, choices: list[object]) -> None:
    problem = build_problem(ChatCompletion.default_search_space, {"model": "gpt-4", "stop": stop})
    assert problem.stops == choices
    assert _categories(problem.space["stop"]) == list(range(len(choices)))
    for index, choice in enumerate(choices):
        request = problem.request(_point(problem.space, stop=index, prompt=0, n=1))
        # A None choice sends no stop at all.
        assert request.params.get("stop") == choice
        assert ("stop" in request.params) == (choice is not None)
        assert request.region == ("gpt-4", 0, index)


@pytest.mark.parametrize("stop", [3, [], ["a", ["b"]], [["a"], 3]])
def test_bad_stop_is_an_assertion_error(stop: object) -> None:
    with pytest.raises(AssertionError, match="stop must be a string"):
        build_problem(ChatCompletion.default_search_space, {"stop": stop})


def test_temperature_or_top_p(caplog: pytest.LogCaptureFixture) -> None:
    default = {**ChatCompletion.default_search_space, "model": "gpt-4"}
    problem = build_problem(default, {"temperature": 0.3})
    assert problem.space["temperature_or_top_p"] == {"temperature": 0.3}
    assert "temperature" not in problem.space
    problem = build_problem(default, {"top_p": tune.uniform(0, 0.5)})
    assert set(problem.space["temperature_or_top_p"]) == {"top_p"}
    assert not caplog.records
    with caplog.at_level(logging.WARNING, logger="parley.oai.completion"):
        problem = build_problem(default, {"temperature": 0.3, "top_p": 0.9})
    assert "temperature_or_top_p" not in problem.space
    assert (problem.space["temperature"], problem.space["top_p"]) == (0.3, 0.9)
    assert "temperature and top_p are not recommended to vary together." in caplog.messages


def test_best_of_is_pruned_instead_of_n() -> None:
    default = ChatCompletion.default_search_space
    assert build_problem(default, {}).prune_hp == "n"
    assert build_problem(default, {"best_of": 1}).prune_hp == "n"
    problem = build_problem(default, {"model": "gpt-4", "best_of": tune.randint(1, 5), "n": 1})
    assert problem.prune_hp == "best_of"
    assert problem.request(_point(problem.space, best_of=3, prompt=0)).completions == 3


def test_a_constant_config_list_is_kept_out_of_the_space_and_given_to_every_request() -> None:
    config_list = [{"base_url": "http://127.0.0.1:1/v1", "api_key": "sk-secret"}]
    problem = build_problem(
        ChatCompletion.default_search_space, {"model": "gpt-4", "config_list": config_list}
    )
    assert "config_list" not in problem.space
    request = problem.request(_point(problem.space, prompt=0, n=1))
    assert request.config_list == config_list
    assert "config_list" not in request.params
    # A config list that is itself searched stays a dimension.
    searched = tune.choice([config_list, config_list])
    problem = build_problem(
        ChatCompletion.default_search_space, {"model": "gpt-4", "config_list": searched}
    )
    assert isinstance(problem.space["config_list"], Domain)
    request = problem.request(_point(problem.space, config_list=config_list, prompt=0, n=1))
    assert request.config_list == config_list


def test_several_models_make_a_hierarchical_space() -> None:
    problem = build_problem(
        ChatCompletion.default_search_space, {"presence_penalty": 0.5, "prompt": "{q}"}
    )
    assert problem.hierarchical
    assert problem.models == ["gpt-3.5-turbo", "gpt-4"]
    assert not {"model", "max_tokens", "n", "temperature_or_top_p"} & set(problem.space)
    per_model = _categories(problem.space["subspace"])
    assert [p["model"] for p in per_model] == ["gpt-3.5-turbo", "gpt-4"]
    for p in per_model:
        assert set(p) == {"model", "max_tokens", "n", "temperature_or_top_p"}
    assert problem.space["presence_penalty"] == 0.5
    request = problem.request(
        {
            "subspace": {
                "model": "gpt-4",
                "max_tokens": 100,
                "n": 2,
                "temperature_or_top_p": {"temperature": 1.0},
            },
            "prompt": 0,
            "presence_penalty": 0.5,
        }
    )
    assert request.params == {
        "model": "gpt-4",
        "max_tokens": 100,
        "n": 2,
        "temperature": 1.0,
        "prompt": "{q}",
        "presence_penalty": 0.5,
    }
    # A plain list of model names is a choice too.
    problem = build_problem(ChatCompletion.default_search_space, {"model": ["gpt-4", "o1"]})
    assert problem.models == ["gpt-4", "o1"]


def test_numpy_values_from_flaml_come_back_as_python_numbers() -> None:
    import numpy as np

    problem = build_problem(ChatCompletion.default_search_space, {"model": "gpt-4"})
    request = problem.request(
        {
            "model": "gpt-4",
            "prompt": np.int64(0),
            "n": np.int64(3),
            "max_tokens": 50,
            "temperature_or_top_p": {"top_p": np.float64(0.25)},
        }
    )
    assert request.params["n"] == 3
    assert type(request.params["n"]) is int
    assert type(request.params["top_p"]) is float
