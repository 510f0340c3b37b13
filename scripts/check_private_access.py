"""Fail when a module of parley reads a private name that another module owns.

A leading underscore says "nobody outside this module touches it". The check keeps that true,
so that a module's private parts can change without breaking its neighbours:

- ``obj._name`` (read or written) is flagged unless ``obj`` is ``self``, ``cls`` or ``super()``, or the module itself
  defines ``_name`` (a class of this module reading its own attribute on another instance).
- ``from module import _name`` is flagged unless ``_name`` is a module (``_name.py`` or a
  package): private *modules* are how a package splits its work, and any module of the package
  may import them.

Dunder names are public. A line may carry ``# private-ok: REASON`` where two owners happen to use
one name (AutoGen's ``func._name`` marker on a function and an agent's ``_name``); the reason is
required. A few private names of the standard library are documented API
(``os._exit``, ``sys._getframe``, a named tuple's ``_replace``); they are listed below.

Usage: ``python scripts/check_private_access.py [PATH ...]`` (default: ``parley``). Prints one
line per read and exits 1 when there is any.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

# Private by name, public by documentation.
DOCUMENTED = frozenset(
    {
        "_exit",  # os._exit: leave a forked child without running the parent's handlers
        "_getframe",  # sys._getframe
        "_replace",  # namedtuple
        "_asdict",  # namedtuple
        "_fields",  # namedtuple
        "_make",  # namedtuple
        "_field_defaults",  # namedtuple
        "_value2member_map_",  # enum
        "_missing_",  # enum hook
        "_generate_next_value_",  # enum hook
        "_name_",  # enum
        "_value_",  # enum
    }
)

OWN_RECEIVERS = frozenset({"self", "cls", "mcs", "metacls"})


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _defined_names(tree: ast.Module) -> set[str]:
    """Names this module gives a value to: its functions, classes, globals and attributes."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, (ast.Store, ast.Del))
            and _own_receiver(node.value)
        ):
            names.add(node.attr)
        elif isinstance(node, ast.alias) and node.asname:
            names.add(node.asname)
        elif isinstance(node, ast.Call) and _is_setattr(node):
            # setattr(obj, "_name", value) defines the attribute as surely as an assignment.
            names.add(node.args[1].value)  # type: ignore[attr-defined]
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets
        ):
            for elt in ast.walk(node.value):
                if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                    names.add(elt.value)
    return names


def _is_setattr(node: ast.Call) -> bool:
    return (
        isinstance(node.func, ast.Name)
        and node.func.id in {"setattr", "object.__setattr__"}
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    )


def _own_receiver(value: ast.expr) -> bool:
    if isinstance(value, ast.Name):
        return value.id in OWN_RECEIVERS
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "super"
    )


def _module_path(path: Path, node: ast.ImportFrom, root: Path) -> Path | None:
    """The folder of the package ``from X import ...`` names, when it is inside parley."""
    if node.level:
        base = path.parent
        for _ in range(node.level - 1):
            base = base.parent
        parts = node.module.split(".") if node.module else []
        return base.joinpath(*parts)
    if node.module and node.module.split(".")[0] == root.name:
        return root.parent.joinpath(*node.module.split("."))
    return None


def _is_module(package: Path | None, name: str) -> bool:
    if package is None:
        return False
    return (package / f"{name}.py").is_file() or (package / name / "__init__.py").is_file()


def _marker_names(tree: ast.Module) -> set[str]:
    """Private attributes this module writes on objects that are not its own (markers)."""
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and _is_private(node.attr)
        and not _own_receiver(node.value)
    }


def check_file(
    path: Path, tree: ast.Module, lines: list[str], root: Path, owned_anywhere: set[str]
) -> Iterator[str]:
    own = _defined_names(tree)
    # A marker attached to a foreign object (a function, a handler) belongs to the module that
    # attaches it, as long as no class claims that name as its own attribute.
    own |= _marker_names(tree) - owned_anywhere
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            name = node.attr
            if (
                _is_private(name)
                and name not in own
                and name not in DOCUMENTED
                and not _own_receiver(node.value)
                and not _waived(lines, node.lineno)
            ):
                verb = "reads" if isinstance(node.ctx, ast.Load) else "writes"
                yield f"{path}:{node.lineno}: {verb} {ast.unparse(node)} (owned elsewhere)"
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            package = _module_path(path, node, root)
            for alias in node.names:
                if _is_private(alias.name) and not _is_module(package, alias.name):
                    source = "." * node.level + (node.module or "")
                    yield f"{path}:{node.lineno}: imports {alias.name} from {source}"


def _waived(lines: list[str], lineno: int) -> bool:
    """``# private-ok: REASON`` on the line: a name clash the check cannot tell apart."""
    _, _, reason = lines[lineno - 1].partition("# private-ok:")
    return bool(reason.strip())


def main(argv: list[str]) -> int:
    targets = [Path(a) for a in argv] or [Path("parley")]
    found = 0
    for target in targets:
        root = target if target.is_dir() else target.parent
        while (root.parent / "__init__.py").is_file():
            root = root.parent
        files = sorted(root.rglob("*.py"))
        texts = {f: f.read_text(encoding="utf-8") for f in files}
        trees = {f: ast.parse(text, filename=str(f)) for f, text in texts.items()}
        owned_anywhere: set[str] = set()
        for tree in trees.values():
            owned_anywhere |= _defined_names(tree)
        wanted = set(target.rglob("*.py")) if target.is_dir() else {target}
        for file in files:
            if file not in wanted:
                continue
            for line in check_file(
                file, trees[file], texts[file].splitlines(), root, owned_anywhere
            ):
                print(line)
                found += 1
    if found:
        print(f"{found} reads of private names owned by another module", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
