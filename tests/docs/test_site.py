"""The built docs site in a real browser (headless Chromium from Debian's packages, driven by
selenium through chromium-driver): the home page, a tutorial page and an API page load, with
their navigation, the search index and highlighted code; screenshots are kept as artifacts.

The site is the one ``scripts/test.sh`` built (``PARLEY_SITE_DIR``), or built here with
``mkdocs build --strict`` when the tests run on their own.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .._loopback_http import QuietHandler, serving

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
WAIT = 20.0


@pytest.fixture(scope="module")
def site_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = os.environ.get("PARLEY_SITE_DIR")
    if built and (Path(built) / "index.html").exists():
        return Path(built)
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q"]
    done = subprocess.run(
        [*cmd, "-f", str(ROOT / "website" / "mkdocs.yml"), "-d", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def site_url(site_dir: Path) -> Iterator[str]:
    with serving(functools.partial(QuietHandler, directory=str(site_dir))) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(WAIT)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("PARLEY_TEST_ARTIFACTS")
    path = Path(where) / "docs-site" if where else tmp_path_factory.mktemp("artifacts")
    path.mkdir(parents=True, exist_ok=True)
    print(f"docs site screenshots in {path}")
    return path


def _wait(driver: Any, css: str) -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT).until(ec.presence_of_element_located((By.CSS_SELECTOR, css)))


def _nav_titles(driver: Any) -> list[str]:
    from selenium.webdriver.common.by import By

    links = driver.find_elements(By.CSS_SELECTOR, "nav.md-nav--primary .md-nav__link")
    return [str(link.get_attribute("textContent")).strip() for link in links]


def test_home_page_navigation_and_search(browser: Any, site_url: str, artifacts: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser.get(site_url + "/")
    _wait(browser, "nav.md-nav--primary")
    assert "parley" in browser.title
    titles = _nav_titles(browser)
    for expected in ("Getting started", "Tutorial", "Agents and initiate_chat", "API reference"):
        assert expected in titles, titles
    browser.save_screenshot(str(artifacts / "home.png"))

    # Search runs in the page, over the index the build wrote: typing finds the API pages.
    field = _wait(browser, "input.md-search__input")
    browser.find_element(By.CSS_SELECTOR, "label.md-search__icon, .md-search__input").click()
    field.send_keys("initiate_chat")
    _wait(browser, ".md-search-result__item")
    results = browser.find_elements(By.CSS_SELECTOR, ".md-search-result__item")
    assert results, "the search found nothing"
    browser.save_screenshot(str(artifacts / "search.png"))
    field.send_keys(Keys.ESCAPE)


def test_a_tutorial_page_has_highlighted_code(browser: Any, site_url: str, artifacts: Path) -> None:
    from selenium.webdriver.common.by import By

    browser.get(site_url + "/tutorial/agents/")
    _wait(browser, "article h1")
    # Pygments marks tokens (names, keywords, strings) with classes inside each code block.
    blocks = browser.find_elements(By.CSS_SELECTOR, "article .highlight pre code")
    assert blocks, "no code block on the page"
    tokens = browser.find_elements(By.CSS_SELECTOR, "article .highlight code span.kn, span.n")
    assert len(tokens) > 5
    browser.save_screenshot(str(artifacts / "tutorial-agents.png"))


def test_an_api_page_documents_the_class(browser: Any, site_url: str, artifacts: Path) -> None:
    from selenium.webdriver.common.by import By

    browser.get(site_url + "/reference/parley.agentchat.conversable_agent/")
    heading = _wait(browser, "[id='parley.agentchat.conversable_agent.ConversableAgent']")
    assert "ConversableAgent" in str(heading.get_attribute("textContent"))
    methods = browser.find_elements(
        By.CSS_SELECTOR, "[id^='parley.agentchat.conversable_agent.ConversableAgent.']"
    )
    names = {str(m.get_attribute("id")).rsplit(".", 1)[-1] for m in methods}
    assert {"initiate_chat", "register_reply", "generate_reply"} <= names
    browser.save_screenshot(str(artifacts / "api-conversable-agent.png"))


def test_the_search_index_covers_every_page(site_dir: Path) -> None:
    index = json.loads((site_dir / "search" / "search_index.json").read_text())
    locations = {doc["location"].split("#")[0] for doc in index["docs"]}
    assert "tutorial/agents/" in locations
    assert "reference/parley.durable/" in locations
