"""The endpoint from a web page in headless Chromium (Debian's ``chromium``, driven by selenium
through ``chromium-driver``, as ``tests/web/test_browser.py``): the page's script POSTs a run
with ``fetch`` and reads the server-sent events from the response's stream, shows the tool call
the chat asks to approve, and its Approve button sends the next run with the resume; the tool
runs and the chat's reply shows on the page."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

pytest.importorskip("selenium")

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

from parley._asgi_thread import ServerThread
from parley.ag_ui import AGUIStream
from parley.testing import FakeLLMServer

from ._support import WAIT, agents, email_call

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>AG-UI client</title></head>
<body>
<button id="send">Send</button>
<ol id="events"></ol>
<div id="ask"></div>
<p id="reply"></p>
<script>
const thread = "browser-thread";
let runs = 0;
async function run(body) {
  body.threadId = thread;
  body.runId = "run-" + (++runs);
  const response = await fetch("/agent", {
    method: "POST",
    headers: {"Content-Type": "application/json", "Accept": "text/event-stream"},
    body: JSON.stringify(body),
  });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, {stream: true});
    let cut;
    while ((cut = buffer.indexOf("\\n\\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = block.split("\\n").filter(l => l.startsWith("data:"))
        .map(l => l.slice(5).trim()).join("\\n");
      if (data) show(JSON.parse(data));
    }
  }
}
function show(event) {
  const item = document.createElement("li");
  item.textContent = event.type;
  document.getElementById("events").appendChild(item);
  if (event.type === "TEXT_MESSAGE_CONTENT") {
    document.getElementById("reply").textContent += event.delta;
  }
  const outcome = event.type === "RUN_FINISHED" ? event.outcome : null;
  if (outcome && outcome.type === "interrupt") {
    const interrupt = outcome.interrupts[0];
    const button = document.createElement("button");
    button.id = "approve";
    button.textContent = "Approve " + interrupt.metadata.parley.tool;
    button.onclick = () => {
      button.remove();
      run({messages: [], resume: [
        {interruptId: interrupt.id, status: "resolved", payload: {approved: true}}]});
    };
    document.getElementById("ask").appendChild(button);
  }
  if (outcome && outcome.type === "success") document.body.dataset.done = "yes";
}
document.getElementById("send").onclick = () => run(
  {messages: [{id: "m1", role: "user", content: "Email my boss."}]});
</script>
</body></html>
"""


@pytest.fixture
def browser() -> Iterator[WebDriver]:
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
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(WAIT)
    yield driver
    driver.quit()


def test_a_page_approves_a_tool_call_over_ag_ui(
    browser: WebDriver, fake_llm: FakeLLMServer
) -> None:
    ran: list[str] = []
    assistant, user = agents(fake_llm, ran)
    fake_llm.add_reply(tool_calls=[email_call()])
    fake_llm.add_reply("The email is sent. TERMINATE")
    stream = AGUIStream(assistant, user=user)

    async def page(request: object) -> HTMLResponse:
        return HTMLResponse(PAGE)

    app = Starlette(
        routes=[Route("/", page), Route("/agent", stream.build_asgi(), methods=["POST"])]
    )
    server = ServerThread(app, "127.0.0.1", 0, name="parley-ag-ui-test", what="the test page")
    try:
        browser.get(f"http://127.0.0.1:{server.port}/")
        browser.find_element(By.ID, "send").click()
        wait = WebDriverWait(browser, WAIT)
        approve = wait.until(lambda d: d.find_element(By.ID, "approve"))
        assert approve.text == "Approve send_email"
        assert ran == []
        approve.click()
        wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-done"))
        assert ran == ["boss@example.com"]
        assert browser.find_element(By.ID, "reply").text == "The email is sent. TERMINATE"
        shown = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#events li")]
        assert shown.count("RUN_STARTED") == 2
        assert shown.index("TOOL_CALL_START") < shown.index("RUN_FINISHED")
        assert "TOOL_CALL_RESULT" in shown[shown.index("RUN_FINISHED") :]
    finally:
        server.stop()
