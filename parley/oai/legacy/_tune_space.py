"""The search spaces of ``Completion.tune``: the default space, and the space FLAML searches,
built from the default and the caller's overrides as AutoGen built it.

FLAML searches numbers and choices, not templates, so prompts, message lists and stop
sequences are searched as *indices* into lists kept on the side (:class:`SearchProblem`), and a
trial's config is turned back into request parameters by :meth:`SearchProblem.request`. A
choice of several models becomes a hierarchical ``subspace`` (each model with its own
``max_tokens``, ``n``, ... dimensions), so that the search learns per model.

flaml is an optional dependency (``pip install 'parley[tune]'``): it is imported here, on first
use, never by ``import parley``.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

__all__ = [
    "PROMPT_ERROR",
    "Region",
    "SearchProblem",
    "TrialRequest",
    "build_problem",
    "default_search_space",
    "flaml_modules",
    "plain",
    "served_by",
]

logger = logging.getLogger("parley.oai.completion")

PROMPT_ERROR = "prompt must be a string or a list of strings."
MESSAGES_ERROR = "messages must be a list of dicts or a list of lists."
STOP_ERROR = (
    "stop must be a string, a list of strings, or a list of lists of strings (None allowed)."
)
# The dimensions that belong to one model in a hierarchical space: their good values differ
# from model to model (a strong model needs fewer samples, ...).
_PER_MODEL = ("max_tokens", "temperature_or_top_p", "best_of", "n")

# (model, prompt or messages index, stop index): the requests of one region differ only in
# max_tokens, n and sampling, so what one trial proves about their cost holds for the others.
Region = tuple[str, int | None, int | None]


def flaml_modules() -> SimpleNamespace:
    """flaml's pieces tune uses (``tune``, ``Domain``, ``Categorical``, ``BlendSearch``, ``CFO``),
    or ImportError saying how to install them."""
    try:
        with warnings.catch_warnings():
            # flaml announces at import that its AutoML part is not installed; tune needs none
            # of it, and under -W error the announcement would be an exception.
            warnings.filterwarnings("ignore", message=r"flaml\.automl is not available")
            from flaml import tune
            from flaml.tune.sample import Categorical, Domain
            from flaml.tune.searcher.blendsearch import CFO, BlendSearch
    except ImportError as e:
        raise ImportError(
            "Completion.tune needs flaml, an optional dependency: pip install 'parley[tune]'"
        ) from e
    return SimpleNamespace(
        tune=tune, Domain=Domain, Categorical=Categorical, BlendSearch=BlendSearch, CFO=CFO
    )


def default_search_space(chat: bool) -> dict[str, Any]:
    """AutoGen's default space: the model, temperature *or* top_p, max_tokens, n, and the
    prompt ``"{prompt}"``; ``ChatCompletion`` chooses among chat models only."""
    tune = flaml_modules().tune
    models = (
        ["gpt-3.5-turbo", "gpt-4"]
        if chat
        else ["text-ada-001", "text-babbage-001", "text-davinci-003", "gpt-3.5-turbo", "gpt-4"]
    )
    return {
        "model": tune.choice(models),
        "temperature_or_top_p": tune.choice(
            [{"temperature": tune.uniform(0, 2)}, {"top_p": tune.uniform(0, 1)}]
        ),
        "max_tokens": tune.lograndint(50, 1000),
        "n": tune.randint(1, 100),
        "prompt": "{prompt}",
    }


def plain(value: Any) -> Any:
    """``value`` with numpy scalars turned into Python numbers (flaml samples numpy values),
    recursively, so that configs compare, hash and serialise as the user's own values."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy":
        return item()
    return value


def served_by(
    model: str, price: Any, config_list: list[dict[str, Any]] | None
) -> list[tuple[str, Any]]:
    """The (model, price) pairs a request for ``model`` priced ``price`` may be answered by:
    each config-list entry's own model and ``price`` win over the request's, as in ``create``
    (an entry is merged over the call), so an entry may price a model no table knows."""
    if not config_list:
        return [(model, price)]
    return [(str(entry.get("model") or model), entry.get("price", price)) for entry in config_list]


@dataclass(frozen=True)
class TrialRequest:
    """What one trial asks: ``params`` for ``create`` (templates filled in, without the config
    list), ``config_list`` passed beside them, and the facts pruning needs."""

    params: dict[str, Any]
    config_list: list[dict[str, Any]] | None
    region: Region
    prune_hp: str

    @property
    def model(self) -> str:
        return str(self.params["model"])

    def served_by(self) -> list[tuple[str, Any]]:
        """The (model, price) pairs that may answer this trial's requests (:func:`served_by`)."""
        return served_by(self.model, self.params.get("price"), self.config_list)

    @property
    def completions(self) -> int:
        """How many completions per instance the trial asks for (``n``, or ``best_of``)."""
        return int(self.params.get(self.prune_hp, 1))

    @property
    def template(self) -> tuple[str, int | None]:
        """(model, template index): the requests whose input tokens are the same."""
        return self.region[0], self.region[1]


@dataclass(frozen=True)
class SearchProblem:
    """The space FLAML searches and the lists its indices point into."""

    space: dict[str, Any]
    models: list[str]
    prompts: list[Any] | None
    messages: list[list[dict[str, Any]]] | None
    stops: list[Any] | None
    config_list: list[dict[str, Any]] | None
    prune_hp: str
    hierarchical: bool

    def request(self, config: Mapping[str, Any]) -> TrialRequest:
        """The request parameters of a trial's ``config`` (a point of :attr:`space`)."""
        params: dict[str, Any] = {}
        for key, value in plain(config).items():
            if key == "subspace":
                params.update(value)
            else:
                params[key] = value
        params.update(params.pop("temperature_or_top_p", None) or {})
        template_index = stop_index = None
        if self.prompts is not None:
            template_index = int(params["prompt"])
            params["prompt"] = self.prompts[template_index]
        if self.messages is not None:
            template_index = int(params["messages"])
            params["messages"] = self.messages[template_index]
        if self.stops is not None:
            stop_index = int(params["stop"])
            params["stop"] = self.stops[stop_index]
        config_list = params.pop("config_list", self.config_list)
        # None means "the API's default": leave the key out (a stop choice of None, say).
        params = {k: v for k, v in params.items() if v is not None}
        region = (str(params.get("model")), template_index, stop_index)
        return TrialRequest(params, config_list, region, self.prune_hp)


def _templates(value: Any, message: str) -> list[Any]:
    if isinstance(value, str) or callable(value):
        return [value]
    if isinstance(value, (list, tuple)) and value:
        return list(value)
    raise AssertionError(message)


def _conversations(value: Any) -> list[list[dict[str, Any]]]:
    if isinstance(value, (list, tuple)) and value:
        if all(isinstance(m, Mapping) for m in value):
            return [[dict(m) for m in value]]
        if all(
            isinstance(c, (list, tuple)) and c and all(isinstance(m, Mapping) for m in c)
            for c in value
        ):
            return [[dict(m) for m in c] for c in value]
    raise AssertionError(MESSAGES_ERROR)


def _stops(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and value:
        if all(isinstance(s, str) for s in value):
            return [list(value)]
        if all(
            s is None or (isinstance(s, (list, tuple)) and all(isinstance(x, str) for x in s))
            for s in value
        ):
            return [None if s is None else list(s) for s in value]
    raise AssertionError(STOP_ERROR)


def build_problem(default: Mapping[str, Any], overrides: Mapping[str, Any]) -> SearchProblem:
    """The search problem of ``tune(**overrides)`` over the class's ``default`` space.

    Constants stay in the space (FLAML passes them through) except a constant ``config_list``,
    which holds credentials and endpoints: it is kept aside and given to every request.
    """
    flaml = flaml_modules()
    tune, Domain, Categorical = flaml.tune, flaml.Domain, flaml.Categorical
    space = {**default, **overrides}
    if "messages" in space:
        space.pop("prompt", None)  # AutoGen's rule: messages win over the default prompt
    if "temperature" in space or "top_p" in space:
        space.pop("temperature_or_top_p", None)
        if "temperature" in space and "top_p" in space:
            logger.warning("temperature and top_p are not recommended to vary together.")
        else:
            name = "temperature" if "temperature" in space else "top_p"
            space["temperature_or_top_p"] = {name: space.pop(name)}
    prune_hp = "best_of" if space.get("best_of", 1) != 1 else "n"

    prompts = messages = stops = None
    if "prompt" in space:
        prompts = _templates(space["prompt"], PROMPT_ERROR)
        space["prompt"] = tune.choice(list(range(len(prompts))))
    if "messages" in space:
        messages = _conversations(space["messages"])
        space["messages"] = tune.choice(list(range(len(messages))))
    if "stop" in space:
        stops = _stops(space["stop"])
        space["stop"] = tune.choice(list(range(len(stops))))
    config_list = None
    if "config_list" in space and not isinstance(space["config_list"], Domain):
        config_list = [dict(entry) for entry in space.pop("config_list") or []] or None

    if "model" not in space:
        raise KeyError("model")
    model = space["model"]
    if isinstance(model, (list, tuple)):
        model = tune.choice(list(model))  # a list of names is a choice, as prompts are
    models = list(model.categories) if isinstance(model, Categorical) else [model]
    if not models or not all(isinstance(m, str) for m in models):
        raise TypeError(f"model must be a name or a tune.choice of names, got {model!r}")
    hierarchical = len(models) > 1
    if hierarchical:
        space.pop("model")
        per_model = {k: space.pop(k) for k in _PER_MODEL if k in space}
        space["subspace"] = tune.choice([{"model": m, **per_model} for m in models])
    else:
        space["model"] = models[0]
    return SearchProblem(
        space, models, prompts, messages, stops, config_list, prune_hp, hierarchical
    )
