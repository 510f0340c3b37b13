"""Fail if any two modules of a package import each other, directly or through others.

    python scripts/check_import_cycles.py [PACKAGE]     (default: parley)

Each module is a node of the import graph (grimp builds it from the source, without running
it); a package's ``__init__`` is a module like any other. Imports under ``if TYPE_CHECKING:``
are left out, since they never run; imports inside functions count, since they run on first
use. Every group of modules that reach each other (a strongly connected component) is listed
with the imports that hold it together, and the exit status is 1 if there is any.

import-linter's ``acyclic_siblings`` contract (pyproject.toml) sees the cycles between the
children of a package, but not one that goes through the package's own ``__init__``; this
check sees both.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping

import grimp


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The components of more than one node, each sorted (Tarjan's algorithm, iterative: a
    package's import chains can be deeper than Python's recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, ())))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def main(argv: list[str]) -> int:
    package = argv[1] if len(argv) > 1 else "parley"
    graph = grimp.build_graph(package, exclude_type_checking_imports=True, cache_dir=None)
    imports = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    cycles = strongly_connected(imports)
    if not cycles:
        print(f"no import cycles among the {len(imports)} modules of {package}")
        return 0
    print(f"{len(cycles)} import cycle(s) among the modules of {package}:")
    for number, component in enumerate(cycles, 1):
        members = set(component)
        print(f"\n{number}. {len(component)} modules: {', '.join(component)}")
        for importer in component:
            for imported in sorted(imports[importer] & members):
                details = graph.get_import_details(importer=importer, imported=imported)
                lines = ", ".join(str(d["line_number"]) for d in details)
                print(f"   {importer} -> {imported}  (line {lines})")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
