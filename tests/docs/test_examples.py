"""Every Python example of the docs site runs, page by page, against a real fake model.

Each page runs in a fresh working directory holding an ``OAI_CONFIG_LIST`` file whose entries
(gpt-4o, gpt-4o-mini, gpt-4, gpt-3.5-turbo) point at a :class:`FakeLLMServer` on loopback, so
``config_list_from_json("OAI_CONFIG_LIST")`` in an example works as it would for a user. The
page's blocks share one namespace (a page reads as one script) that starts with ``server`` (the
fake model: hidden setups script its replies; without a script it answers ``TERMINATE``) and
``human`` (an ``IOScripted`` playing the person at the keyboard: it answers ``exit`` unless a
setup queues other answers). Blocks with top-level ``await`` run on the page's event loop.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import linecache
import os
from pathlib import Path
from typing import Any

import pytest

from parley.io import IOScripted, IOStream
from parley.oai import ChatCompletion, Completion
from parley.testing import FakeLLMServer

from .._class_state import kept_class_state
from ._pages import Page, read_page

DOCS = Path(__file__).resolve().parents[2] / "website" / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
MODELS = ("gpt-4o", "gpt-4o-mini", "gpt-4", "gpt-3.5-turbo")
KNOWN_MARKERS = {
    "docker",
    "jupyter",
    "redis",
    "local_model",
    "slow",
    "bwrap",
    "browser",
    "ray",
    "pgvector",
}


def _param(path: Path) -> Any:
    page = read_page(path)
    unknown = set(page.markers) - KNOWN_MARKERS
    if unknown:
        raise ValueError(f"{path}: unknown docs-test markers {sorted(unknown)}")
    marks = [getattr(pytest.mark, name) for name in page.markers]
    return pytest.param(page, marks=marks, id=str(path.relative_to(DOCS)))


@pytest.fixture
def page_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OAI_CONFIG_LIST", raising=False)
    return tmp_path


@pytest.mark.timeout(300)
@pytest.mark.parametrize("page", [_param(p) for p in PAGES])
def test_page_examples_run(page: Page, page_dir: Path) -> None:
    if not page.chunks:
        return
    with FakeLLMServer(default="TERMINATE") as server:
        configs = [entry for m in MODELS for entry in server.config_list(m)]
        (page_dir / "OAI_CONFIG_LIST").write_text(json.dumps(configs))
        human = IOScripted(lambda prompt: "exit", echo=IOStream.get_global_default())
        namespace: dict[str, Any] = {"__name__": "__main__", "server": server, "human": human}
        # The legacy Completion classes keep state on the class: no page leaves it to the next.
        with (
            kept_class_state(Completion, ChatCompletion),
            IOStream.set_default(human),
            asyncio.Runner() as runner,
        ):
            for chunk in page.chunks:
                where = f"{page.path.relative_to(DOCS.parent)}:{chunk.line}"
                # The block's source, for inspect.getsource (as a script file or a notebook
                # cell has it): a code executor's user functions and tracebacks read it.
                lines = chunk.code.splitlines(keepends=True)
                linecache.cache[where] = (len(chunk.code), None, lines, where)
                try:
                    code = compile(chunk.code, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
                except SyntaxError as e:
                    pytest.fail(f"{where}: the example is not valid Python: {e}")
                result = eval(code, namespace)
                if inspect.iscoroutine(result):
                    runner.run(result)
        assert not server.errors, f"the fake model failed requests: {server.errors}"


def test_every_page_is_in_the_navigation() -> None:
    import yaml

    config = (DOCS.parent / "mkdocs.yml").read_text()
    listed = set()

    def walk(node: Any) -> None:
        if isinstance(node, str):
            listed.add(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    walk(yaml.safe_load(config)["nav"])
    pages = {str(p.relative_to(DOCS)) for p in PAGES}
    assert pages - listed == set(), "pages missing from mkdocs.yml's nav"
    assert listed - pages == set(), "nav entries without a page"


def test_setup_blocks_and_markers_are_read(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text(
        "# T\n<!-- docs-test: docker -->\n<!-- docs-setup\nx = 1\n-->\n"
        "```python\ny = x + 1\n```\n\n```bash\nls\n```\n\n- item\n\n    ```py\n    z = y\n    ```\n"
    )
    read = read_page(page)
    assert [(c.code.strip(), c.hidden) for c in read.chunks] == [
        ("x = 1", True),
        ("y = x + 1", False),
        ("z = y", False),
    ]
    assert read.markers == ["docker"]
    assert os.path.exists(page)
