"""User functions that generated code can import (AutoGen's ``autogen.coding.func_with_reqs``).

Hand functions to an executor (``LocalCommandLineCodeExecutor(functions=[...])``) and the code
the model writes can ``from functions import my_function``. A function may carry what it needs:
pip requirements (``python_packages``) and the imports its module must start with
(``global_imports``: ``"os"``, :class:`Alias`, :class:`ImportFromModule`)::

    @with_requirements(python_packages=["pandas"], global_imports=[Alias("pandas", "pd")])
    def load(path: str) -> "pd.DataFrame":
        return pd.read_csv(path)

The executor writes the functions into one module (:func:`_build_python_functions_file`) and
describes them to the model with :func:`to_stub` (``format_functions_for_prompt``).

Same names, signatures, texts and errors as AutoGen 0.2. The differences, each a fix of a flaw
AutoGen had:

* The functions module is the same on every run: global imports come in the order first seen,
  without duplicates (AutoGen collected them in a set, in a different order each run).
* Every decorator is removed from a function's source, found with the AST, so stacked and
  multi-line decorators work and a function defined inside another block (indented) too;
  AutoGen removed one first line when the source began with ``@``, leaving broken source
  otherwise. The module holds the plain function (other decorators are dropped as well).
* A :class:`FunctionWithRequirements` made directly (``FunctionWithRequirements(func=f)``,
  ``from_callable``) works like a decorated one (AutoGen failed on its missing ``__name__``).
* A function whose source cannot be read, or that is not a ``def``, is a ``ValueError`` naming
  it and saying what to do; anything but a function is a ``TypeError``.
* :func:`to_stub` cleans docstrings as :func:`inspect.cleandoc` does (PEP 257: the first line
  may follow the quotes; the others lose their common indentation), so they keep their layout
  (AutoGen indented their continuation lines twice); a multi-line docstring closes its quotes
  on a line of their own. Annotations written as strings (``from __future__ import
  annotations``) appear without quotes, and ``async def`` functions keep their ``async``.
* :class:`FunctionWithRequirementsStr` counts only the functions its source *defines*: a
  source that imports a function (``from math import sqrt``) and defines one is accepted.
* The ``python_packages`` of string functions are installed by the executors (AutoGen forgot
  them), and the requirement lists are copied, never shared with the caller.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, NoReturn, ParamSpec, TypeVar, Union

__all__ = [
    "Alias",
    "FunctionWithRequirements",
    "FunctionWithRequirementsStr",
    "Import",
    "ImportFromModule",
    "UserFunction",
    "to_stub",
    "with_requirements",
]

T = TypeVar("T")
P = ParamSpec("P")


@dataclass
class Alias:
    """``import name as alias``, or ``name as alias`` inside an :class:`ImportFromModule`."""

    name: str
    alias: str


@dataclass
class ImportFromModule:
    """``from module import a, b as c`` (an import is a name or an :class:`Alias`)."""

    module: str
    imports: list[str | Alias]


Import = Union[str, ImportFromModule, Alias]  # noqa: UP007 - a runtime alias on Python 3.10
"""A global import: ``"os"`` is ``import os``."""


def _import_to_str(im: Import) -> str:
    """The import statement ``im`` stands for."""
    if isinstance(im, str):
        return f"import {im}"
    if isinstance(im, Alias):
        return f"import {im.name} as {im.alias}"
    names = ", ".join(i if isinstance(i, str) else f"{i.name} as {i.alias}" for i in im.imports)
    return f"from {im.module} import {names}"


@dataclass
class FunctionWithRequirements(Generic[T, P]):
    """A function with the pip requirements and global imports it needs; calling it calls the
    function."""

    func: Callable[P, T]
    python_packages: list[str] = field(default_factory=list)
    global_imports: list[Import] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Copies: the caller's lists (often shared defaults) are never changed through us.
        self.python_packages = list(self.python_packages)
        self.global_imports = list(self.global_imports)

    @classmethod
    def from_callable(
        cls,
        func: Callable[P, T],
        python_packages: Sequence[str] = (),
        global_imports: Sequence[Import] = (),
    ) -> FunctionWithRequirements[T, P]:
        """Wrap ``func`` with its requirements."""
        return cls(
            func=func, python_packages=list(python_packages), global_imports=list(global_imports)
        )

    @staticmethod
    def from_str(
        func: str,
        python_packages: Sequence[str] = (),
        global_imports: Sequence[Import] = (),
    ) -> FunctionWithRequirementsStr:
        """A function given as source text (see :class:`FunctionWithRequirementsStr`)."""
        return FunctionWithRequirementsStr(func, python_packages, global_imports)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> T:
        return self.func(*args, **kwargs)


_STR_MODULE = "func_module"


@dataclass(init=False)
class FunctionWithRequirementsStr:
    """A function given as source text: one ``def``, run once here as a throw-away module
    (names its definition uses, in annotations or defaults, must exist then; names used only
    in its body need not). Not callable here: it exists for the executor's module.

    Raises ``ValueError("Could not compile function: ...")`` if the source fails to run, and
    ``ValueError("The string must contain exactly one function")`` unless it defines exactly
    one function.
    """

    func: str
    _compiled_func: Callable[..., Any] = field(repr=False, compare=False)
    _func_name: str = field(repr=False, compare=False)
    python_packages: list[str] = field(default_factory=list)
    global_imports: list[Import] = field(default_factory=list)

    def __init__(
        self,
        func: str,
        python_packages: Sequence[str] = (),
        global_imports: Sequence[Import] = (),
    ) -> None:
        self.func = func
        self.python_packages = list(python_packages)
        self.global_imports = list(global_imports)
        module = types.ModuleType(_STR_MODULE)
        try:
            # dont_inherit: this module's `from __future__ import annotations` must not apply.
            code = compile(func, f"<{_STR_MODULE}>", "exec", dont_inherit=True)
            exec(code, module.__dict__)
        except Exception as error:
            raise ValueError(f"Could not compile function: {error}") from error
        defined = [
            (name, value)
            for name, value in vars(module).items()
            if inspect.isfunction(value) and value.__module__ == _STR_MODULE
        ]
        if len(defined) != 1:
            raise ValueError("The string must contain exactly one function")
        self._func_name, self._compiled_func = defined[0]

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise NotImplementedError(
            "String based function with requirement objects are not directly callable"
        )


UserFunction = Union[  # noqa: UP007 - a runtime alias on Python 3.10
    FunctionWithRequirements[Any, ...], FunctionWithRequirementsStr, Callable[..., Any]
]
"""What an executor's ``functions`` list holds."""


def with_requirements(
    python_packages: Sequence[str] = (),
    global_imports: Sequence[Import] = (),
) -> Callable[[Callable[P, T]], FunctionWithRequirements[T, P]]:
    """Decorator: the function wrapped in a :class:`FunctionWithRequirements`, keeping its name,
    docstring and signature (``functools.update_wrapper``)."""

    def wrapper(func: Callable[P, T]) -> FunctionWithRequirements[T, P]:
        wrapped = FunctionWithRequirements(
            func=func, python_packages=list(python_packages), global_imports=list(global_imports)
        )
        functools.update_wrapper(wrapped, func)
        return wrapped

    return wrapper


def _function_of(func: UserFunction) -> types.FunctionType:
    """The plain Python function behind ``func`` (a :class:`FunctionWithRequirements` is
    unwrapped, as are decorators that set ``__wrapped__``); TypeError for anything else."""
    if isinstance(func, FunctionWithRequirementsStr):
        return func._compiled_func  # type: ignore[return-value]
    target: Any = func
    while isinstance(target, FunctionWithRequirements):
        target = target.func
    target = inspect.unwrap(target)
    if not inspect.isfunction(target):
        raise TypeError(
            f"{func!r} is not a function: an executor's functions must be functions (def), "
            "FunctionWithRequirements or FunctionWithRequirementsStr objects."
        )
    return target


def _to_code(func: UserFunction) -> str:
    """The source ``func`` has in the functions module: a string function's text as given;
    a function's own source, dedented, from its ``def`` on (without decorators)."""
    if isinstance(func, FunctionWithRequirementsStr):
        return func.func
    target = _function_of(func)
    name = target.__qualname__
    try:
        source = textwrap.dedent(inspect.getsource(target))
    except (OSError, TypeError) as error:
        raise ValueError(
            f"The source of function {name!r} cannot be read ({error}), and the functions module "
            "needs it: define the function in a file or a notebook cell, or give its source as "
            "text with FunctionWithRequirements.from_str(...)."
        ) from error
    try:
        statements = ast.parse(source).body
    except SyntaxError as error:
        # Seen when a function inside a block holds a multi-line string less indented than
        # its def, so that dedenting cannot remove the block's indentation.
        raise ValueError(
            f"The source of function {name!r} could not be parsed on its own ({error}): define "
            "it at the top level of its module, or give its source as text with "
            "FunctionWithRequirements.from_str(...)."
        ) from error
    is_def = len(statements) == 1 and isinstance(
        statements[0], (ast.FunctionDef, ast.AsyncFunctionDef)
    )
    if target.__name__ == "<lambda>":
        raise ValueError(
            f"Function {name!r} is not defined by a def statement of its own (a lambda?), so its "
            "source cannot go into the functions module: define it with def."
        )
    found = statements[0] if is_def else None
    if not isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)) or (
        found.name != target.__name__
    ):
        # inspect read the lines the code object points at, but they are not this def: the
        # file was changed after the function was defined, or its source is kept elsewhere.
        raise ValueError(
            f"The source read for function {name!r} is not its def (its file changed since it "
            "was defined?): reload its module, or give its source as text with "
            "FunctionWithRequirements.from_str(...)."
        )
    # A def's line number is that of the `def` itself, after its decorators.
    lines = source.splitlines(keepends=True)
    return "".join(lines[statements[0].lineno - 1 :])


def _unique(items: Iterable[str]) -> list[str]:
    """``items`` without repeats, in the order first seen."""
    return list(dict.fromkeys(items))


def _carrying_requirements(funcs: Iterable[UserFunction]) -> list[Any]:
    return [
        f for f in funcs if isinstance(f, (FunctionWithRequirements, FunctionWithRequirementsStr))
    ]


# The two below serve the executors' functions setup (parley.coding._functions_setup): public
# names, left out of __all__ (they are no part of AutoGen's API for users).


def python_packages_of(funcs: Sequence[UserFunction]) -> list[str]:
    """The pip requirements of all ``funcs``, in the order first seen, without repeats."""
    return _unique(p for f in _carrying_requirements(funcs) for p in f.python_packages)


def functions_module_text(funcs: Sequence[UserFunction]) -> str:
    """The text of the functions module: the global imports of all ``funcs`` (in the order
    first seen, without repeats), a blank line, then each function's source."""
    imports = _unique(
        _import_to_str(i) for f in _carrying_requirements(funcs) for i in f.global_imports
    )
    content = "\n".join(imports) + "\n\n"
    for func in funcs:
        content += _to_code(func) + "\n\n"
    return content


# AutoGen's name, which extensions call: kept as a compatibility face.
_build_python_functions_file = functions_module_text


class _Bare(str):
    """An annotation written as a string, shown without quotes in a signature."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


def _signature(func: Callable[..., Any]) -> inspect.Signature:
    """``func``'s signature, with string annotations shown as written, not quoted."""
    signature = inspect.signature(func)

    def bare(annotation: Any) -> Any:
        return _Bare(annotation) if isinstance(annotation, str) else annotation

    parameters = [p.replace(annotation=bare(p.annotation)) for p in signature.parameters.values()]
    return signature.replace(
        parameters=parameters, return_annotation=bare(signature.return_annotation)
    )


def to_stub(func: UserFunction) -> str:
    """``def name(signature):``, its docstring, and ``...``: what the model is told about a
    function (``format_functions_for_prompt``)."""
    target = _function_of(func)
    keyword = "async def" if inspect.iscoroutinefunction(target) else "def"
    content = f"{keyword} {target.__name__}{_signature(target)}:\n"
    if target.__doc__:
        doc = inspect.cleandoc(target.__doc__).replace('"""', r"\"\"\"")
        quoted = f'"""{doc}"""' if "\n" not in doc else f'"""{doc}\n"""'
        content += textwrap.indent(quoted, "    ") + "\n"
    return content + "    ..."
