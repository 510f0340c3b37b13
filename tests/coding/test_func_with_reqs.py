"""parley.coding.func_with_reqs: imports, function objects, stubs and the functions module text.

The expected texts are AutoGen 0.2's where it behaved well (see
website/docs/code-execution/functions.md), and parley's fixes where it did not (the module
docstring lists them).
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from parley.coding import func_with_reqs as fwr
from parley.coding.func_with_reqs import (
    Alias,
    FunctionWithRequirements,
    FunctionWithRequirementsStr,
    ImportFromModule,
    _build_python_functions_file,
    _import_to_str,
    to_stub,
    with_requirements,
)

# -- imports -------------------------------------------------------------------------------------


def test_imports_render_as_autogen_verified() -> None:
    assert _import_to_str("os") == "import os"
    assert _import_to_str(Alias("numpy", "np")) == "import numpy as np"
    assert (
        _import_to_str(ImportFromModule("typing", ["List", Alias("Dict", "D")]))
        == "from typing import List, Dict as D"
    )


def test_the_package_exports_the_user_facing_names() -> None:
    import parley.coding as coding

    assert coding.with_requirements is with_requirements
    assert coding.FunctionWithRequirements is FunctionWithRequirements
    assert coding.FunctionWithRequirementsStr is FunctionWithRequirementsStr
    assert coding.Alias is Alias
    assert coding.ImportFromModule is ImportFromModule
    assert set(fwr.__all__) >= {"to_stub", "Import", "with_requirements"}


# -- function objects ----------------------------------------------------------------------------


def test_with_requirements_keeps_the_function_usable_and_described() -> None:
    packages = ["pkg-a"]

    @with_requirements(python_packages=packages, global_imports=["math"])
    def area(r: float) -> float:
        """Area of a circle."""
        return math.pi * r * r

    assert isinstance(area, FunctionWithRequirements)
    assert area(1.0) == math.pi
    assert area.__name__ == "area"
    assert area.__doc__ == "Area of a circle."
    assert area.__wrapped__ is area.func
    assert area.python_packages == ["pkg-a"]
    assert area.global_imports == ["math"]
    area.python_packages.append("pkg-b")
    assert packages == ["pkg-a"]  # the caller's list is not shared


def test_from_callable_wraps_with_requirements() -> None:
    wrapped = FunctionWithRequirements.from_callable(len, ["x"], [Alias("os", "o")])
    assert wrapped([1, 2]) == 2
    assert wrapped.python_packages == ["x"]
    assert wrapped.global_imports == [Alias("os", "o")]


def test_a_string_function_compiles_and_is_not_callable_here() -> None:
    source = "def repeat(s: str, n: int) -> str:\n    return s * n\n"
    func = FunctionWithRequirements.from_str(source, python_packages=["p"])
    assert isinstance(func, FunctionWithRequirementsStr)
    assert not isinstance(func, FunctionWithRequirements)  # as in AutoGen
    assert func.func == source
    assert func._func_name == "repeat"
    assert func._compiled_func("ab", 2) == "abab"
    assert func.python_packages == ["p"]
    with pytest.raises(
        NotImplementedError,
        match="String based function with requirement objects are not directly callable",
    ):
        func()


@pytest.mark.parametrize(
    "source",
    ["x = 1", "", "def a():\n    pass\ndef b():\n    pass\n"],
    ids=["no function", "empty", "two functions"],
)
def test_a_string_must_define_exactly_one_function(source: str) -> None:
    with pytest.raises(ValueError, match=r"^The string must contain exactly one function$"):
        FunctionWithRequirements.from_str(source)


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("def broken(:\n    pass\n", "invalid syntax"),
        ("def f(x: NotDefined) -> int:\n    return 1\n", "name 'NotDefined' is not defined"),
    ],
)
def test_a_string_that_does_not_run_is_refused(source: str, why: str) -> None:
    with pytest.raises(ValueError, match=f"^Could not compile function: .*{why}"):
        FunctionWithRequirements.from_str(source)


def test_a_string_may_import_functions_it_does_not_define() -> None:
    # AutoGen counted the imported sqrt as a second function.
    func = FunctionWithRequirements.from_str(
        "from math import sqrt\n\ndef norm(x: float, y: float) -> float:\n"
        "    return sqrt(x * x + y * y)\n"
    )
    assert func._func_name == "norm"
    assert func._compiled_func(3.0, 4.0) == 5.0


def test_names_used_only_in_the_body_need_not_exist() -> None:
    func = FunctionWithRequirements.from_str("def now():\n    return datetime.now()\n")
    assert func._func_name == "now"


# -- stubs ---------------------------------------------------------------------------------------


def plain(x: int) -> int:
    return x


def test_stub_without_docstring_is_autogen_verified() -> None:
    assert to_stub(plain) == "def plain(x: int) -> int:\n    ..."


def test_stub_of_a_pep257_docstring_keeps_its_layout() -> None:
    def scale(values: list[float], factor: float = 2.0) -> list[float]:
        """Multiply every value.

        Args:
            values: the numbers.
            factor: what to multiply by.
        """
        return [v * factor for v in values]

    # AutoGen indented "Args:" and the lines under it four spaces too far.
    # (This module's annotations are strings: `from __future__ import annotations`.)
    assert to_stub(scale) == (
        "def scale(values: list[float], factor: float = 2.0) -> list[float]:\n"
        '    """Multiply every value.\n'
        "\n"
        "    Args:\n"
        "        values: the numbers.\n"
        "        factor: what to multiply by.\n"
        '    """\n'
        "    ..."
    )


def test_stub_of_a_one_line_and_a_next_line_docstring() -> None:
    def one() -> None:
        """Do one thing."""

    def below() -> None:
        """
        Starts below the quotes.
        """

    assert to_stub(one) == 'def one() -> None:\n    """Do one thing."""\n    ...'
    assert to_stub(below) == 'def below() -> None:\n    """Starts below the quotes."""\n    ...'


def test_stub_of_string_and_wrapped_functions() -> None:
    text = FunctionWithRequirements.from_str(
        'def repeat(s: str, n: int) -> str:\n    """Repeat s."""\n    return s * n\n'
    )
    assert to_stub(text) == 'def repeat(s: str, n: int) -> str:\n    """Repeat s."""\n    ...'
    # Made without the decorator, so without __name__: AutoGen failed here.
    assert to_stub(FunctionWithRequirements(func=plain)) == to_stub(plain)
    assert to_stub(with_requirements()(plain)) == to_stub(plain)


def test_stub_of_an_async_function_with_string_annotations() -> None:
    namespace: dict[str, Any] = {}
    # A module without `from __future__ import annotations`, quoting by hand.
    source = "async def fetch(url: 'Url', retries: 'int' = 3) -> 'bytes':\n    return b''\n"
    exec(compile(source, "fetch.py", "exec", dont_inherit=True), namespace)
    assert to_stub(namespace["fetch"]) == (
        "async def fetch(url: Url, retries: int = 3) -> bytes:\n    ..."
    )


# -- the functions module ------------------------------------------------------------------------


def _run_module(text: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(text, "functions.py", "exec"), namespace)
    return namespace


def counted(func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    return wrapper


@with_requirements(global_imports=["math", Alias("statistics", "st")])
@counted
@functools.lru_cache(
    maxsize=128,
)
def hypotenuse(a: float, b: float) -> float:
    """The long side."""
    return math.sqrt(a * a + b * b)


@with_requirements(global_imports=[ImportFromModule("statistics", ["mean"]), "math"])
def average(values: list[float]) -> float:
    return mean(values) + st.median(values) * 0  # noqa: F821 - names the module imports


def test_the_module_holds_imports_first_seen_then_plain_functions() -> None:
    text = FunctionWithRequirements.from_str(
        "def repeat(s: str, n: int) -> str:\n    return s * n\n"
    )
    content = _build_python_functions_file([hypotenuse, average, plain, text])
    assert content == (
        "import math\n"
        "import statistics as st\n"
        "from statistics import mean\n"
        "\n"
        # Stacked and multi-line decorators are gone (AutoGen removed one line only).
        "def hypotenuse(a: float, b: float) -> float:\n"
        '    """The long side."""\n'
        "    return math.sqrt(a * a + b * b)\n\n\n"
        "def average(values: list[float]) -> float:\n"
        "    return mean(values) + st.median(values) * 0  # noqa: F821 - names the module imports\n"
        "\n\n"
        "def plain(x: int) -> int:\n"
        "    return x\n\n\n"
        "def repeat(s: str, n: int) -> str:\n"
        "    return s * n\n\n\n"
    )
    module = _run_module(content)
    assert module["hypotenuse"](3, 4) == 5.0
    assert module["average"]([1.0, 3.0]) == 2.0
    assert module["repeat"]("ab", 2) == "abab"


def test_a_function_defined_in_a_block_is_dedented() -> None:
    if True:

        @with_requirements(global_imports=["math"])
        def inner(x: float) -> float:
            return math.floor(x)

    content = _build_python_functions_file([inner])
    assert content == "import math\n\ndef inner(x: float) -> float:\n    return math.floor(x)\n\n\n"
    assert _run_module(content)["inner"](2.5) == 2


def test_functions_that_cannot_go_into_a_module_are_refused() -> None:
    namespace: dict[str, Any] = {}
    exec("def made_by_exec():\n    return 1\n", namespace)
    with pytest.raises(ValueError, match=r"'made_by_exec' cannot be read .*from_str"):
        _build_python_functions_file([namespace["made_by_exec"]])
    square = lambda x: x * x  # noqa: E731 - the case under test
    with pytest.raises(ValueError, match="not defined by a def statement"):
        _build_python_functions_file([square])
    with pytest.raises(TypeError, match="is not a function"):
        _build_python_functions_file([print])

    def text() -> str:
        return """
left of its def"""

    with pytest.raises(ValueError, match="could not be parsed on its own"):
        _build_python_functions_file([text])


def test_a_function_whose_file_changed_since_import_is_refused_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib
    import os

    module = tmp_path / "changing_module.py"
    module.write_text("def shout(text):\n    return text.upper()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    shout = importlib.import_module("changing_module").shout
    # The file is edited after the import: its first lines are now another function's.
    module.write_text(
        "def whisper(text):\n    return text.lower()\n\n\ndef shout(text):\n    pass\n"
    )
    stat = module.stat()
    os.utime(module, (stat.st_atime, stat.st_mtime + 5))
    try:
        with pytest.raises(ValueError, match=r"'shout' is not its def \(its file changed"):
            _build_python_functions_file([shout])
    finally:
        sys.modules.pop("changing_module", None)
