"""The page in a real browser: headless Chromium (Debian's ``chromium``) driven by selenium
through ``chromium-driver``. A person watches a chat on the fake model server, approves a code
block, answers by typing, and the chat finishes with that answer; two people on one chat see
the same request and only the first answer counts; the page's controls have accessible names
and work from the keyboard alone.

A screenshot of the finished scenario is saved under ``$PARLEY_TEST_ARTIFACTS`` (by default
``artifacts/`` in pytest's base temporary directory); its path is printed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

import parley
from parley import AssistantAgent, UserProxyAgent
from parley.testing import FakeLLMServer
from parley.web import WebHuman

from ._support import CODE_REPLY, PRICE, WAIT, approving_coder_chat, coder_chat

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PENDING = 'article.request[data-status="pending"]'


def _start_browser() -> WebDriver:
    for path in (CHROMIUM, CHROMEDRIVER):
        if shutil.which(path) is None:
            pytest.fail(
                f"{path} is missing: run scripts/install-system-deps.sh (it installs the Debian "
                "packages chromium and chromium-driver of scripts/debian-packages.txt)",
                pytrace=False,
            )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # As root, Chromium runs only without its sandbox; the page it loads is our own.
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument("--window-size=1280,1600")
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(WAIT)
    return driver


@pytest.fixture(scope="module")
def browsers() -> Iterator[Callable[[int], WebDriver]]:
    """``browsers(i)``: the module's i-th browser session, started on first use."""
    drivers: list[WebDriver] = []

    def get(index: int) -> WebDriver:
        while len(drivers) <= index:
            drivers.append(_start_browser())
        return drivers[index]

    yield get
    for driver in drivers:
        driver.quit()


@pytest.fixture
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("PARLEY_TEST_ARTIFACTS")
    path = Path(where) if where else tmp_path_factory.getbasetemp() / "artifacts"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _wait(driver: WebDriver, condition: Callable[[WebDriver], Any]) -> Any:
    return WebDriverWait(driver, WAIT).until(condition)


def _pending_card(driver: WebDriver, containing: str) -> WebElement:
    """The pending request card whose text includes ``containing``."""

    def find(d: WebDriver) -> WebElement | bool:
        for card in d.find_elements(By.CSS_SELECTOR, PENDING):
            if containing in card.text:
                return card
        return False

    card: WebElement = _wait(driver, find)
    return card


def _labelled(card: WebElement, label_text: str) -> WebElement:
    """The control of ``card`` whose <label> says ``label_text``."""
    label = card.find_element(By.XPATH, f".//label[normalize-space()='{label_text}']")
    return card.find_element(By.ID, label.get_attribute("for") or "")


def _chat_status(driver: WebDriver) -> str:
    return driver.find_element(By.CSS_SELECTOR, "article.chat .chat-status").text


def test_a_person_watches_approves_and_answers(
    human: WebHuman,
    browsers: Callable[[int], WebDriver],
    background: Any,
    fake_llm: FakeLLMServer,
    tmp_path: Path,
    artifacts: Path,
) -> None:
    user, assistant = coder_chat(
        fake_llm,
        tmp_path,
        replies=[CODE_REPLY, "It printed the greeting. Anything else?", "TERMINATE"],
    )
    user.register_human_review(human.review)
    driver = browsers(0)
    driver.get(human.url)
    _wait(driver, lambda d: "Connected" in d.find_element(By.ID, "connection").text)

    def chat() -> Any:
        with human.attach():
            return user.initiate_chat(assistant, message="Greet the page.", max_turns=3)

    result = background(chat)
    # The chat and its messages appear; the code block waits for approval.
    _wait(
        driver,
        lambda d: (
            "user \u2192 assistant" in d.find_element(By.CSS_SELECTOR, "article.chat h3").text
        ),
    )
    card = _pending_card(driver, "print('hello from the page')")
    assert "user waits for your review" in card.find_element(By.TAG_NAME, "h3").text
    transcript = driver.find_element(By.CSS_SELECTOR, "article.chat ol.transcript")
    _wait(driver, lambda d: "Greet the page." in transcript.text)
    review = artifacts / "web_human_review.png"
    assert driver.save_screenshot(str(review))
    card.find_element(By.CSS_SELECTOR, "button.approve").click()

    # The code runs and its output shows in the transcript.
    output = _wait(
        driver,
        lambda d: next(
            (
                o
                for o in d.find_elements(By.CSS_SELECTOR, "li.code pre.output")
                if "hello from the page" in o.text
            ),
            False,
        ),
    )
    assert "exit code 0" in output.find_element(By.XPATH, "..").text

    # The assistant asks; the person types an answer and presses Enter.
    card = _pending_card(driver, "Anything else?")
    box = _labelled(card, "Feedback (sent with Reject)")
    box.send_keys("Thanks, that is all.", Keys.ENTER)

    chat_result = result.result(WAIT)
    _wait(driver, lambda d: "Ended (max_turns)" in _chat_status(d))
    assert "Thanks, that is all." in [m["content"] for m in chat_result.chat_history]
    assert chat_result.human_input == ["", "Thanks, that is all."]
    assert fake_llm.requests[-1]["messages"][-1]["content"] == "Thanks, that is all."
    _wait(driver, lambda d: "The human answered user: Thanks, that is all." in transcript.text)
    cost = f"cost ${chat_result.cost['usage_including_cached_inference']['total_cost']:.4f}"
    assert cost in _chat_status(driver)
    assert driver.find_elements(By.CSS_SELECTOR, PENDING) == []

    screenshot = artifacts / "web_human_scenario.png"
    assert driver.save_screenshot(str(screenshot))
    assert screenshot.stat().st_size > 0
    print(f"screenshots of the page: {review} (a code block to review), {screenshot} (the end)")


def test_two_people_on_one_chat(
    human: WebHuman, browsers: Callable[[int], WebDriver], background: Any, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply("Ready to deploy?")
    fake_llm.add_reply("TERMINATE")
    configs = [{**c, "price": PRICE} for c in fake_llm.config_list()]
    assistant = AssistantAgent("assistant", llm_config={"config_list": configs})
    user = UserProxyAgent("user", human_input_mode="ALWAYS", code_execution_config=False)
    user.register_human_review(human.review)
    alice, bob = browsers(0), browsers(1)
    for driver in (alice, bob):
        driver.get(human.url)
    result = background(user.initiate_chat, assistant, message="Deploy.", max_turns=2)

    # Both see the same pending request.
    cards = [_pending_card(driver, "Ready to deploy?") for driver in (alice, bob)]
    assert cards[0].get_attribute("data-request") == cards[1].get_attribute("data-request")
    _labelled(cards[0], "Feedback (sent with Reject)").send_keys("Not on a Friday.", Keys.ENTER)

    answered = "Answered: Another session rejected it with feedback \u201cNot on a Friday.\u201d."
    _wait(bob, lambda d: answered in cards[1].text)
    _wait(alice, lambda d: "Answered: You rejected it with feedback" in cards[0].text)
    # Bob's late click reaches the server, which refuses it; his page says so.
    approve = cards[1].find_element(By.CSS_SELECTOR, "button.approve")
    assert approve.get_attribute("aria-disabled") == "true"
    approve.click()
    _wait(
        bob,
        lambda d: (
            "Refused: already answered" in cards[1].find_element(By.CSS_SELECTOR, ".refusal").text
        ),
    )
    assert "Refused: already answered" in bob.find_element(By.ID, "alerts").text

    chat_result = result.result(WAIT)
    assert chat_result.human_input == ["Not on a Friday."]
    for driver in (alice, bob):
        _wait(driver, lambda d: "Ended (max_turns)" in _chat_status(d))


def test_accessible_names_live_regions_and_keyboard_only(
    human: WebHuman, browsers: Callable[[int], WebDriver], background: Any, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply("What is your name?")
    fake_llm.add_reply("Hello, Ada. TERMINATE")
    configs = [{**c, "price": PRICE} for c in fake_llm.config_list()]
    assistant = AssistantAgent("assistant", llm_config={"config_list": configs})
    user = UserProxyAgent("user", human_input_mode="ALWAYS", code_execution_config=False)
    driver = browsers(0)
    driver.get(human.url)

    def chat() -> Any:
        with human.attach():
            return user.initiate_chat(assistant, message="Hi.", max_turns=2)

    result = background(chat)
    card = _pending_card(driver, "What is your name?")

    # Every control has an accessible name (as the browser computes it for assistive tech).
    controls = driver.find_elements(By.CSS_SELECTOR, "input, button, textarea, select")
    assert controls
    names = {control.accessible_name for control in controls}
    assert all(names), [c.get_attribute("outerHTML") for c in controls if not c.accessible_name]
    assert {"Your answer", "Send", "Stop chat", "Stop the chat user \u2192 assistant"} <= names
    # Headings give the page its outline; new messages are announced.
    assert driver.find_element(By.TAG_NAME, "h1").text == "parley: the human in the loop"
    assert [h.text for h in driver.find_elements(By.TAG_NAME, "h2")] == ["Waiting for you", "Chats"]
    transcript = driver.find_element(By.CSS_SELECTOR, "article.chat ol.transcript")
    assert transcript.get_attribute("aria-live") == "polite"
    assert driver.find_element(By.ID, "alerts").get_attribute("role") == "alert"
    assert driver.find_element(By.ID, "connection").get_attribute("role") == "status"

    # Keyboard only: Tab to the answer box, type, Enter.
    box = _labelled(card, "Your answer")
    keys = ActionChains(driver)
    for _ in range(10):
        if driver.switch_to.active_element == box:
            break
        keys.send_keys(Keys.TAB).perform()
    assert driver.switch_to.active_element == box
    keys.send_keys("Ada", Keys.ENTER).perform()

    chat_result = result.result(WAIT)
    assert [m["content"] for m in chat_result.chat_history][2] == "Ada"
    _wait(driver, lambda d: "Answered: You answered \u201cAda\u201d." in card.text)
    _wait(driver, lambda d: "Hello, Ada. TERMINATE" in transcript.text)


def test_chat_text_is_shown_as_text_never_run(
    human: WebHuman, browsers: Callable[[int], WebDriver], background: Any, fake_llm: FakeLLMServer
) -> None:
    attack = (
        "<img src=x onerror=\"document.title='pwned'\">"
        "<script>document.title='pwned'</script>TERMINATE"
    )
    fake_llm.add_reply(attack)
    configs = [{**c, "price": PRICE} for c in fake_llm.config_list()]
    assistant = AssistantAgent("assistant", llm_config={"config_list": configs})
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config=False,
        is_termination_msg=lambda m: "TERMINATE" in str(m.get("content") or ""),
    )
    driver = browsers(0)
    driver.get(human.url)
    title = driver.title
    background(user.initiate_chat, assistant, message="<b>bold?</b>").result(WAIT)
    transcript = driver.find_element(By.CSS_SELECTOR, "article.chat ol.transcript")
    _wait(driver, lambda d: attack in transcript.text)
    assert "<b>bold?</b>" in transcript.text
    assert transcript.find_elements(By.CSS_SELECTOR, "img, script, b") == []
    assert driver.title == title


def test_a_tool_call_waits_for_approval_on_the_page(
    human: WebHuman, browsers: Callable[[int], WebDriver], background: Any, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply(
        tool_calls=[
            {"name": "send_email", "arguments": {"to": "boss@example.com", "body": "I quit"}},
            {"name": "send_email", "arguments": {"to": "me@example.com", "body": "a note"}},
        ]
    )
    fake_llm.add_reply("TERMINATE")
    configs = [{**c, "price": PRICE} for c in fake_llm.config_list()]
    assistant = AssistantAgent("assistant", llm_config={"config_list": configs})
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    sent: list[str] = []

    def send_email(to: str, body: str) -> str:
        sent.append(to)
        return f"sent to {to}"

    parley.register_function(
        send_email, caller=assistant, executor=user, description="Send.", requires_approval=True
    )
    user.register_human_review(human.review)
    driver = browsers(0)
    driver.get(human.url)
    result = background(user.initiate_chat, assistant, message="Send the emails.")

    # The card names the tool and shows the call's arguments; Enter in the box rejects.
    card = _pending_card(driver, "boss@example.com")
    assert "user asks to run the tool send_email" in card.find_element(By.TAG_NAME, "h3").text
    assert "Tool call: send_email" in card.text
    _labelled(card, "Feedback (sent with Reject)").send_keys("Not to the boss.", Keys.ENTER)
    card = _pending_card(driver, "me@example.com")
    card.find_element(By.CSS_SELECTOR, "button.approve").click()
    _wait(driver, lambda d: "Answered: You approved the call." in card.text)

    chat_result = result.result(WAIT)
    assert sent == ["me@example.com"]
    assert chat_result.human_input == ["Not to the boss.", ""]
    transcript = driver.find_element(By.CSS_SELECTOR, "article.chat ol.transcript")
    _wait(
        driver,
        lambda d: (
            "The human rejected user's call of send_email: Not to the boss." in transcript.text
        ),
    )


def test_code_waiting_for_approval_shows_its_blocks_on_the_page(
    human: WebHuman,
    browsers: Callable[[int], WebDriver],
    background: Any,
    fake_llm: FakeLLMServer,
    tmp_path: Path,
) -> None:
    user, assistant = approving_coder_chat(
        fake_llm,
        tmp_path,
        replies=["Here:\n```python\nopen('ran.txt', 'w').write('ran')\n```", "TERMINATE"],
    )
    user.register_human_review(human.review)
    driver = browsers(0)
    driver.get(human.url)
    result = background(user.initiate_chat, assistant, message="Write the file.")

    # The card says the agent asks to run code, and shows the block (not the message's prose).
    card = _pending_card(driver, "open('ran.txt'")
    assert "user asks to run this code" in card.find_element(By.TAG_NAME, "h3").text
    assert "The code block assistant wrote:" in card.text
    assert "python block:" in card.text
    assert "Here:" not in card.text
    assert not (tmp_path / "ran.txt").exists()
    card.find_element(By.CSS_SELECTOR, "button.approve").click()
    _wait(driver, lambda d: "Answered: You approved the code." in card.text)

    result.result(WAIT)
    assert (tmp_path / "ran.txt").read_text() == "ran"
    transcript = driver.find_element(By.CSS_SELECTOR, "article.chat ol.transcript")
    _wait(driver, lambda d: "The human approved running user's code." in transcript.text)
