"""The API reference: a page per public module of parley, made at build time.

A module is public when no part of its dotted name starts with ``_``. Each page holds one
mkdocstrings directive; the pages are added to the navigation under "API reference", so a new
module is documented without anyone listing it (``tests/docs`` checks that none is missed).
"""

from __future__ import annotations

import pkgutil
from typing import Any

from mkdocs.structure.files import File, Files

SECTION = "API reference"


def public_modules() -> list[str]:
    import parley

    names = ["parley"]
    for info in pkgutil.walk_packages(parley.__path__, "parley."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            names.append(info.name)
    return sorted(names)


def _page(module: str) -> str:
    return f"reference/{module}.md"


def on_config(config: Any) -> Any:
    pages = [{module: _page(module)} for module in public_modules()]
    config["nav"] = [*config["nav"], {SECTION: pages}]
    return config


def on_files(files: Files, config: Any) -> Files:
    for module in public_modules():
        content = f"# `{module}`\n\n::: {module}\n"
        files.append(File.generated(config, _page(module), content=content))
    return files
