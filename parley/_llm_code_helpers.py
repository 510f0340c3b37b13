"""AutoGen's legacy LLM helpers of ``autogen.code_utils``, on the enhanced-inference API
(``parley.oai.Completion``); ``parley.code_utils`` re-exports them.

Ask a model for code (:func:`generate_code`), for a better function or better code
(:func:`improve_function`, :func:`improve_code`), for assertions from a docstring
(:func:`generate_assertions`); run candidate function bodies (:func:`eval_function_completions`);
and implement a function by escalating through configs until a completion passes
(:func:`implement`, :class:`PassAssertionFilter`). Those that ask a model return the cost (USD)
with their result. ``Completion`` is imported on first call, so importing ``code_utils`` does not
load the model client; code runs with ``execute_code`` (``parley.coding._legacy_execute``).

Deliberate differences from AutoGen 0.2:

* The helpers fill their own prompt templates (``{definition}``, ``{objective}`` ...): they pass
  ``allow_format_str_template=True`` to ``Completion.create``. AutoGen's never did, and
  ``create`` leaves templates alone without that flag, so AutoGen sent the placeholders to the
  model literally and the helpers could not work. An ``allow_format_str_template`` in the
  caller's ``**config`` (or in an entry of ``implement``'s ``configs``) still wins.
  :func:`generate_code` has no template of its own and passes the caller's config unchanged.
* :func:`eval_function_completions` with no responses raises ``ValueError`` (AutoGen divided by
  zero, or failed on an unbound variable when given assertions), and it leaves the caller's list
  as it is (AutoGen cut the ``check`` functions out of its items in place).
* :func:`implement` escalates: :class:`PassAssertionFilter` selects by assertions on every
  call. AutoGen's filter, after its first call had replaced its assertions with None, called
  ``eval_function_completions(..., assertions=None)``, which scores against a test instead and
  returns no ``"assertions"`` key: the second config's check raised ``KeyError``.
* :func:`implement` and :class:`PassAssertionFilter` take a keyword-only ``use_docker``
  (default ``True``, the value AutoGen always used) for the completions the filter runs, so
  that they can run without Docker.

AutoGen's other behaviours are kept, quirks included: an ``assertions`` *string* given to
:func:`eval_function_completions` is dropped (only a generator, called when there is more than
one response, produces assertions); so the assertions :func:`implement` generates up front, which
it hands to the filter as a string, are never run either: a completion passes when its code runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .coding._blocks import CODE_BLOCK_PATTERN, extract_code
from .coding._legacy_execute import execute_code

__all__ = [
    "DEFAULT_MODEL",
    "FAST_MODEL",
    "PassAssertionFilter",
    "eval_function_completions",
    "generate_assertions",
    "generate_code",
    "implement",
    "improve_code",
    "improve_function",
]

DEFAULT_MODEL = "gpt-4"
FAST_MODEL = "gpt-3.5-turbo"

# A generator of assertions: definition -> (assertions text, cost).
AssertionGenerator = Callable[[str], tuple[str, float]]

_IMPROVE_FUNCTION_CONFIG: Final[dict[str, Any]] = {
    "prompt": (
        "Improve the function '{func_name}' so that it meets this objective: '{objective}'.\n"
        "Here is the file that defines it:\n{file_string}"
    ),
    "model": DEFAULT_MODEL,
    "request_timeout": 600,
}
_IMPROVE_CODE_CONFIG: Final[dict[str, Any]] = {
    "prompt": (
        "Review the code of the files below and give a list of suggestions to improve "
        "it{followup}, so that it meets this objective: '{objective}'.\n{code}\n"
    ),
    "model": DEFAULT_MODEL,
    "request_timeout": 900,
}
_IMPROVE_CODE_FOLLOWUP = ", then the improved code"
_GENERATE_ASSERTIONS_CONFIG: Final[dict[str, Any]] = {
    "prompt": (
        "Read the function signature and docstring below. Write one assertion for each example "
        "in the docstring, no more and no fewer, and give the assertions no messages.\n\n"
        "func signature:\n{definition}\nassertions:"
    ),
    "model": FAST_MODEL,
    "max_tokens": 256,
    "stop": "\n\n",
}
# implement's escalation: the fast model first, greedy then sampled, then the default model.
# The stop sequences end a completion where the function body ends.
_FUNC_COMPLETION_PROMPT = "# Python 3{definition}"
_FUNC_COMPLETION_STOP = ["\nclass", "\ndef", "\nif", "\nprint"]
_IMPLEMENT_CONFIGS: Final[list[dict[str, Any]]] = [
    {"model": FAST_MODEL, "prompt": _FUNC_COMPLETION_PROMPT, "temperature": 0, "cache_seed": 0},
    {
        "model": FAST_MODEL,
        "prompt": _FUNC_COMPLETION_PROMPT,
        "stop": _FUNC_COMPLETION_STOP,
        "n": 7,
        "cache_seed": 0,
    },
    {"model": DEFAULT_MODEL, "prompt": _FUNC_COMPLETION_PROMPT, "temperature": 0, "cache_seed": 1},
    {
        "model": DEFAULT_MODEL,
        "prompt": _FUNC_COMPLETION_PROMPT,
        "stop": _FUNC_COMPLETION_STOP,
        "n": 2,
        "cache_seed": 2,
    },
    {
        "model": DEFAULT_MODEL,
        "prompt": _FUNC_COMPLETION_PROMPT,
        "stop": _FUNC_COMPLETION_STOP,
        "n": 1,
        "cache_seed": 2,
    },
]
_FILL = "allow_format_str_template"
_FILTER_TIMEOUT = 3  # seconds for each completion PassAssertionFilter runs, as in AutoGen


def _ask(
    context: dict[str, Any], defaults: dict[str, Any], config: dict[str, Any]
) -> tuple[str, float]:
    """The first text of a completion of ``defaults`` updated by ``config``, with the helper's
    template filled from ``context``; and its cost."""
    from .oai.completion import Completion

    response = Completion.create(context, **{**defaults, _FILL: True, **config})
    return Completion.extract_text(response)[0], response["cost"]


def generate_code(
    pattern: str = CODE_BLOCK_PATTERN, **config: Any
) -> tuple[list[tuple[str, str]], float]:
    """The ``(language, code)`` blocks (by ``pattern``) of a completion of ``config``, and its
    cost. ``config`` is ``Completion.create``'s arguments (prompt or messages, model, context
    ...), passed as they are."""
    from .oai.completion import Completion

    response = Completion.create(**config)
    return extract_code(Completion.extract_text(response)[0], pattern), response["cost"]


def improve_function(
    file_name: str, func_name: str, objective: str, **config: Any
) -> tuple[str, float]:
    """The model's improvement of function ``func_name`` of the file ``file_name`` towards
    ``objective`` (the whole file is sent), and its cost. Defaults: ``model="gpt-4"``,
    ``request_timeout=600``; ``config`` overrides them."""
    with open(file_name, encoding="utf-8") as f:
        file_string = f.read()
    context = {"func_name": func_name, "objective": objective, "file_string": file_string}
    return _ask(context, _IMPROVE_FUNCTION_CONFIG, config)


def improve_code(
    files: list[str], objective: str, suggest_only: bool = True, **config: Any
) -> tuple[str, float]:
    """The model's suggestions for the code of ``files`` towards ``objective`` (followed by the
    improved code unless ``suggest_only``), and its cost. Defaults: ``model="gpt-4"``,
    ``request_timeout=900``; ``config`` overrides them."""
    code = ""
    for file_name in files:
        with open(file_name, encoding="utf-8") as f:
            code += f"{file_name}:\n{f.read()}\n\n"
    followup = "" if suggest_only else _IMPROVE_CODE_FOLLOWUP
    context = {"objective": objective, "code": code, "followup": followup}
    return _ask(context, _IMPROVE_CODE_CONFIG, config)


def generate_assertions(definition: str, **config: Any) -> tuple[str, float]:
    """Assertions for the examples in the docstring of ``definition`` (a signature and
    docstring), and their cost. Defaults: ``model="gpt-3.5-turbo"``, ``max_tokens=256``,
    ``stop="\\n\\n"``; ``config`` overrides them."""
    return _ask({"definition": definition}, _GENERATE_ASSERTIONS_CONFIG, config)


def _remove_check(response: str) -> str:
    """``response`` without a ``check`` function the model may have written (and what follows
    it), since the test code defines its own."""
    position = response.find("def check(")
    return response if position < 0 else response[:position]


class _Runner:
    """Runs completions of one function ``definition`` with ``execute_code``."""

    def __init__(
        self, definition: str, timeout: float | None, use_docker: bool | str | list[str] | None
    ) -> None:
        self.definition = definition
        self._timeout = timeout
        self._use_docker = use_docker

    def passes(self, response: str, tail: str) -> bool:
        """Whether the completion ``response`` followed by ``tail`` runs with exit code 0;
        a response that is a whole ``def`` is run without the definition before it."""
        body = response if response.startswith("def") else self.definition + response
        code = f"{body}\n{tail}"
        return execute_code(code, timeout=self._timeout, use_docker=self._use_docker)[0] == 0


def _require(responses: list[str]) -> int:
    if not responses:
        raise ValueError("eval_function_completions needs at least one response to evaluate")
    return len(responses)


def eval_function_completions(
    responses: list[str],
    definition: str,
    test: str | None = None,
    entry_point: str | None = None,
    assertions: str | AssertionGenerator | None = None,
    timeout: float | None = 3,
    use_docker: bool | str | list[str] | None = True,
) -> dict[str, Any]:
    """Run completions of the function ``definition`` (a whole ``def`` or a body continuing
    it) with ``execute_code`` and report how they did.

    Without ``assertions``, each runs against ``test`` (which defines ``check``, called with
    ``entry_point``): ``{"expected_success": 1 - (1 - passed/n) ** n, "success": any passed}``.

    With ``assertions``: a generator (``definition -> (text, cost)``) is called when there are
    several responses; anything else (a string, a generator with one response) means no
    assertions, as in AutoGen. With several responses or no ``test``, the first response whose
    code (plus the assertions, if any) exits with 0 is selected, else the last; a single
    response with a ``test`` is selected unchecked. Returns ``index_selected``,
    ``succeed_assertions``, ``gen_cost``, ``assertions`` (the text, or None), and ``success``
    (the selected response against ``test``) when there is a test.

    Raises ``ValueError`` for an empty ``responses`` (see the module docstring).
    """
    n = _require(responses)
    run = _Runner(definition, timeout, use_docker)
    if assertions is None:
        passed = sum(run.passes(_remove_check(r), _test_call(test, entry_point)) for r in responses)
        return {"expected_success": 1 - (1 - passed / n) ** n, "success": passed > 0}
    return _select(responses, run, assertions, test, entry_point)


def _test_call(test: str | None, entry_point: str | None) -> str:
    # f-string, as AutoGen: a missing test or entry point shows as "None" in the program.
    return f"{test}\ncheck({entry_point})"


def _select(
    responses: list[str],
    run: _Runner,
    assertions: str | AssertionGenerator | None,
    test: str | None,
    entry_point: str | None,
) -> dict[str, Any]:
    """:func:`eval_function_completions` with ``assertions``, where None means none."""
    n = _require(responses)
    assertion_text: str | None = None
    gen_cost = 0.0
    if callable(assertions) and n > 1:
        assertion_text, gen_cost = assertions(run.definition)
    selected, chosen, succeeded = 0, responses[0], False
    if n > 1 or test is None:
        for i, response in enumerate(responses):
            selected, chosen = i, _remove_check(response)
            # "None" when there are no assertions: a harmless expression
            if run.passes(chosen, f"{assertion_text}"):
                succeeded = True
                break
    metrics: dict[str, Any] = {"index_selected": selected, "succeed_assertions": succeeded}
    if test is not None:
        metrics["success"] = run.passes(chosen, _test_call(test, entry_point))
    metrics.update(gen_cost=gen_cost, assertions=assertion_text)
    return metrics


class PassAssertionFilter:
    """A ``filter_func`` for ``Completion.create`` that accepts a response when one of its
    completions passes :func:`eval_function_completions` with ``assertions``.

    After each call: ``cost`` is the total cost of the assertions generated so far,
    ``metrics`` the last evaluation, ``responses`` the last response's texts. The assertions
    the evaluation returns replace ``assertions`` for the next call, as in AutoGen (so a
    generator is used at most once, and a string is dropped); every call selects by assertions,
    even when there are none left (AutoGen's raised ``KeyError`` then; see the module
    docstring). Each completion runs for at most 3 seconds.
    """

    def __init__(
        self,
        assertions: str | AssertionGenerator | None,
        *,
        use_docker: bool | str | list[str] | None = True,
    ) -> None:
        self._assertions = assertions
        self._use_docker = use_docker
        self.cost = 0.0
        self.metrics: dict[str, Any] | None = None
        self.responses: list[str] | None = None

    def pass_assertions(self, context: dict[str, Any], response: Any, **_: Any) -> bool:
        """Whether a completion of ``response`` passes; ``context["definition"]`` is the
        function they complete."""
        from .oai.completion import Completion

        responses = Completion.extract_text(response)
        # Always by assertions, even once they are None (see the module docstring).
        run = _Runner(context["definition"], _FILTER_TIMEOUT, self._use_docker)
        metrics = _select(responses, run, self._assertions, None, None)
        self._assertions = metrics["assertions"]
        self.cost += metrics["gen_cost"]
        self.metrics = metrics
        self.responses = responses
        return bool(metrics["succeed_assertions"])


def implement(
    definition: str,
    configs: list[dict[str, Any]] | None = None,
    assertions: str | AssertionGenerator = generate_assertions,
    *,
    use_docker: bool | str | list[str] | None = True,
) -> tuple[str, float, int]:
    """An implementation of ``definition`` (a signature and docstring): ``(the selected
    completion, the total cost, the index of the config that made it)``.

    ``configs`` (default: five steps from ``gpt-3.5-turbo`` to ``gpt-4``) are tried in order as
    ``Completion.create``'s ``config_list`` until a completion passes
    :class:`PassAssertionFilter`; each needs a ``prompt`` (or ``messages``), filled with
    ``{definition}``. With several configs, a generator ``assertions`` is called first and its
    cost counted (see the module docstring for what becomes of its assertions).
    """
    from .oai.completion import Completion

    cost = 0.0
    configs = configs or _IMPLEMENT_CONFIGS
    if len(configs) > 1 and callable(assertions):
        assertions, cost = assertions(definition)
    checker = PassAssertionFilter(assertions, use_docker=use_docker)
    response = Completion.create(
        {"definition": definition},
        config_list=configs,
        filter_func=checker.pass_assertions,
        allow_format_str_template=True,
    )
    cost += checker.cost + response["cost"]
    # The filter ran: create calls it on every response when given a config list.
    assert checker.metrics is not None
    assert checker.responses is not None
    selected = _remove_check(checker.responses[checker.metrics["index_selected"]])
    return selected, cost, response["config_id"]
