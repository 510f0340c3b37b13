"""The notebooks in notebooks/ run, cell by cell, in a real Jupyter kernel (ipykernel).

A notebook cell runs inside the kernel's event loop, so this is where the sync API
(``initiate_chat``) must work while a loop is running, and top-level ``await`` must too.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.jupyter

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
# Notebooks that run the embedded model (the `local` extra).
LOCAL_MODEL_NOTEBOOKS = {"tune_inference.ipynb"}
# Notebooks that start a Ray cluster: on the Ray tests' worker (tests/conftest.py XDIST_GROUPS),
# as two clusters starting at once on 127.0.0.2 fail to register their nodes.
RAY_NOTEBOOKS = {"batch_evaluation.ipynb"}
# Notebooks that start a PostgreSQL with pgvector on loopback (parley.testing.postgres).
PGVECTOR_NOTEBOOKS = {"retrieve_chat_pgvector.ipynb"}
# The whole local-model notebook: its tuning sends ~100 requests that the model answers one at a
# time, a few minutes on a loaded 2-core machine; each cell is still bounded by CELL_TIMEOUT.
LOCAL_MODEL_TIMEOUT = 1200  # seconds
# A hang detector, not a speed target: tune_inference's tuning cell runs the local model ~1 min.
CELL_TIMEOUT = 300  # seconds
# A Ray notebook's batch may start its instance again on a loaded machine, for up to its
# RayBackend's init_timeout (600 s there), and then runs its chats.
RAY_CELL_TIMEOUT = 900  # seconds
RAY_TIMEOUT = 1800  # seconds, the whole Ray notebook
# Run in the kernel before a local-model notebook. The model answers one request at a time, and
# a tuning trial sends 8 at once: the last waits for the others, and with other kernels on the
# same cores that went past the legacy Completion's 60 s request timeout (a timed-out request
# fails its trial). Still below CELL_TIMEOUT: a hung request fails as a timeout.
LOCAL_MODEL_SETUP = "import parley\nparley.Completion.request_timeout = 240\n"
# Run in the kernel before a Ray notebook: the Ray instance its batch starts inherits a higher
# CPU priority where the kernel may take one (root, as in CI), as the Ray tests' clusters do
# (tests/batch/_ray_cluster.py raise_priority).
RAY_SETUP = (
    "import contextlib, os\nwith contextlib.suppress(PermissionError):\n"
    "    os.setpriority(os.PRIO_PROCESS, 0, -10)\n"
)


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[Any]:
    from jupyter_client.manager import KernelManager

    # The kernel runs in tmp_path: a relative PYTHONPATH (``PYTHONPATH=.``, how a checkout is
    # tested) must still name this checkout there, not whatever parley is installed.
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in paths if p)}
    # batch_evaluation starts a Ray cluster with token authentication and a token of its own, in
    # the kernel's environment (nothing written to ~/.ray).
    # IPC sockets, not TCP ports: jupyter_client picks free ports by binding and releasing them,
    # and a test on another parallel worker could take one before the kernel binds it (the
    # kernel then died with "Address already in use"). The folder is short: a socket's path may
    # have 107 bytes at most, and a worker's tmp_path is long.
    sockets = tempfile.mkdtemp(prefix="nbk-")
    manager = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(sockets, "k"))
    manager.start_kernel(cwd=str(tmp_path), env=env)
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=120)
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        manager.cleanup_resources()
        shutil.rmtree(sockets, ignore_errors=True)


def _marks(name: str) -> list[Any]:
    if name in LOCAL_MODEL_NOTEBOOKS:
        return [pytest.mark.local_model, pytest.mark.timeout(LOCAL_MODEL_TIMEOUT)]
    if name in RAY_NOTEBOOKS:
        return [pytest.mark.ray, pytest.mark.timeout(RAY_TIMEOUT)]
    if name in PGVECTOR_NOTEBOOKS:
        return [pytest.mark.pgvector]
    return []


def run_cell(client: Any, source: str, timeout: float = CELL_TIMEOUT) -> str:
    """Run one cell; its printed output, or the failure with the kernel's traceback."""
    msg_id = client.execute(source)
    out: list[str] = []
    while True:
        try:
            msg = client.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"a cell ran for more than {timeout} s:\n{source}")
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            out.append(content["text"])
        elif kind == "error":
            pytest.fail(f"cell failed:\n{source}\n\n" + "\n".join(content["traceback"]))
        elif kind == "status" and content["execution_state"] == "idle":
            return "".join(out)


@pytest.mark.parametrize(
    "notebook",
    [pytest.param(n, marks=_marks(n.name)) for n in NOTEBOOKS],
    ids=[n.name for n in NOTEBOOKS],
)
def test_notebook_runs_in_a_kernel(kernel: Any, notebook: Path) -> None:
    text = _run_notebook(kernel, notebook)
    if notebook.name == "quickstart.ipynb":
        assert "exitcode: 0 (execution succeeded)" in text
        assert "45" in text
        assert "summary: The sum is 45." in text
        assert "async turns: 2" in text
    if notebook.name == "jupyter_executors.ipynb":
        assert "exit code: 0\nsum of squares: 285\n" in text
        assert "still there: 81\nfrom the shell in coding\n" in text
        assert "exit code: 1\nERROR: IndexError: list index out of range" in text
        assert re.search(r"Image data saved to /\S+/coding/[0-9a-f]{32}\.png\n", text)
        assert "saved in output_dir: True\nPNG written: True" in text
        assert "with a token: True" in text
        assert (
            "returned within a few seconds: True\nERROR: Timeout: the code block ran longer than 2 s; it was "
            "interrupted; the kernel keeps its variables.\nanswer is still 42" in text
        )
        assert "exitcode: 0 (execution succeeded)\nthe assistant was told of a PNG: True" in text
    if notebook.name == "structured_output.ipynb":
        assert "parsed: Verdict(approved=True, reason='the change is tested')" in text
        assert "parsed: Verdict(approved=True, reason='second try')\nrequests: 2" in text
        assert "does not match the JSON schema Verdict" in text
        assert "schema: Verdict | attempts: 2\nraw: {\"approved\": \"perhaps\"}" in text
        assert "parsed: Verdict(approved=True, reason='12 unit tests pass')" in text
        assert "{'city': 'Lyon', 'population': 522000}" in text
    if notebook.name == "mcp.ipynb":
        assert (
            "temperature: Today's temperature in a city. | repeatable: True\n"
            "pid: The server's process id. | repeatable: False\n" in text
        )
        assert "registered: ['weather_temperature']" in text
        assert "same schema as the server's: True" in text
        assert (
            "tool result: 12 C\ntool result: Error: MCP server 'weather': tool 'temperature' "
            "failed: Error executing tool temperature: no weather station in Rome\n"
            "summary: Oslo: 12 C. Rome has no station." in text
        )
        assert "notes://cities -> Paris, Oslo\nprompt: Which is warmer today, Paris or Oslo?" in text
        assert "server running: True\nserver running after aclose(): False" in text
        assert "tool: haiku_team | Write a haiku on a topic" in text
        assert (
            "[1] user -> chat_manager: A haiku about rivers.\n[2] writer -> chat_manager: Slow "
            in text
        )
        assert "[3] critic -> chat_manager: Good imagery." in text
        assert "summary: Good imagery. Final: " in text
        assert "messages: 3 | ended by: max_round" in text
        assert "tools: [('add', 'Add two integers.')]\nadd(2, 40) = 42" in text
        assert "removed: True" in text
    if notebook.name == "ag_ui.ipynb":
        assert "AG-UI endpoint on loopback: True" in text
        assert (
            "RUN_STARTED\nSTATE_SNAPSHOT\nTOOL_CALL_START\nTOOL_CALL_ARGS\nTOOL_CALL_END\n"
            "STATE_SNAPSHOT\nMESSAGES_SNAPSHOT\nRUN_FINISHED\n" in text
        )
        assert "reason: tool_call | tool call: call-1" in text
        assert "sent so far: []" in text
        assert "TOOL_CALL_RESULT sent to boss@example.com\n" in text
        assert "TEXT_MESSAGE_CONTENT The email is sent. TERMINATE\n" in text
        assert "outcome: success | sent: ['boss@example.com']" in text
    if notebook.name == "runtime_logging.ipynb":
        text = text.replace("\r\n", "\n")  # the output of `!` commands comes from a terminal
        assert "logging: True" in text
        assert "functions: [('multiply', '{\"a\": 6, \"b\": 7}', '\"42\"')]" in text
        assert "chats row: user -> assistant is_termination_msg" in text
        assert "the log's cost is the chat's: True\nno API key in the file: True" in text
        assert re.search(r"\n[0-9a-f]{8}  \S+ \S+\s+user -> assistant\s+6\s+3\s+", text)
        assert '[2] assistant -> user:\n    tool call multiply({"a": 6, "b": 7})' in text
        assert "tool calls          1" in text
        assert "logging: False" in text
    if notebook.name == "transform_messages.ipynb":
        assert "400: Invalid parameter: messages with role 'tool'" in text
        assert "4 ['assistant', 'tool', 'tool', 'user'] accepted" in text
        assert "['system', 'assistant', 'tool']" in text
    if notebook.name == "speaker_transitions.ipynb":
        assert "has values that are not lists of Agents" in text
        assert "PNG written: True" in text
        assert "speakers: ['planner', 'engineer', 'reviewer', 'planner']" in text
        assert "context window of gpt-4o-mini: 128000" in text
    if notebook.name == "group_chat_visibility.ipynb":
        assert (
            "writer request 1: ['Write a one-line market summary.', 'Writer, draft the answer.']"
            in text
        )
        assert (
            "analyst request 1: ['Write a one-line market summary.', '@analyst, privately" in text
        )
        assert "transcript: ['user', 'researcher', 'analyst', 'researcher', 'writer']" in text
        assert "the writer saw the estimate: False" in text
        assert "GroupChatConfigError GroupChat visibility names agents that are not members" in text
    if notebook.name == "durable_chats.ipynb":
        assert "exit status: -9\nstatus: running\n" in text
        assert (
            "model requests made by the resume: 1\ntool runs: 1\ncode runs: 1\nstatus: done" in text
        )
        assert "user asks: Please give feedback to assistant" in text
        assert "termination: human_exit | human said: ['exit']" in text
        assert "approval: True | tool: record {'text': 'started'}" in text
        assert "approval: True | code: open('report.txt', 'a').write('report\\n')" in text
        assert "tool runs: 1 | code runs: 0\n" in text
        assert (
            "exitcode: 1 (execution failed)\nCode output: Error: the human rejected the code: "
            "Not today: the report is due tomorrow.\ntool runs: 1 | code runs: 0\n"
            "human said: ['', 'Not today: the report is due tomorrow.'] | status: done"
        ) in text
    if notebook.name == "batch_evaluation.ipynb":
        assert "BatchResult(200 chats on local: 200 ok, 0 failed;" in text
        assert "score: 0.710\nThe answer is 104.\n" in text
        assert re.search(r"solver\s+200\s+0\s+4600\s+1000\s+5600\s+0\.001290", text)
        assert "BatchResult(200 chats on ray: 200 ok, 0 failed;" in text
        assert (
            "score on ray: 0.710\nsame transcripts as the local run: True\nsame cost: True\n"
            "workers: 2\n" in text
        )
        assert "chats that got a 503 and were retried: 3\n" in text
        assert "error 20: KeyError: 'b' (attempts: 1)\nscore of the others: 0.550\n" in text
        assert "stopped by: budget:llm_calls\n" in text
        assert re.search(r"model calls: 4\d\n", text)  # 40, and the requests then in flight
        assert (
            "chats in the store: 200\nrequests made by the second run: 0\n"
            "score of the replay: 0.710" in text
        )
    if notebook.name == "teachability.ipynb":
        assert "memos: 2" in text
        assert "memories in the prompt: True\nstored history unchanged: True" in text
        assert "- Orca is a 13B-parameter model from Microsoft" in text
        assert "'What is the weather in Oslo?': nearest 'What is Orca?'" in text
        assert "recalled: False" in text
        assert "advice recalled: True" in text
        assert "after reset: 0" in text
    if notebook.name == "society_of_mind_and_autobuild.ipynb":
        assert "inner transcript: ['society_of_mind', 'writer', 'critic']" in text
        assert "the society answered: Meet the cordless kettle" in text
        assert "preparer request roles: ['system', 'user', 'user', 'user', 'system']" in text
        assert "the society answered: Ship it." in text
        assert "query output: 5/6\nquery output: 25/36\nended by: is_termination_msg" in text
        assert "Travel_Planner_Expert: Plans itineraries.\nBudget_Expert: Checks costs." in text
        assert "model calls while loading: 0" in text
        assert "selected: ['Python_Programmer']" in text
    if notebook.name == "tune_inference.ipynb":
        assert "20 to tune on, 20 held out" in text
        assert "best config: {" in text
        assert "tuned is cheaper: True" in text
        # the trace lists every trial (num_samples=8) and the tuned config does no worse
        assert len([line for line in text.splitlines() if line[:5].strip().isdigit()]) == 8
        default, tuned = _held_out_scores(text)
        assert tuned >= default
    if notebook.name == "react_agent.ipynb":
        assert "answer: About 4.2 million people (2 x 2,102,650 = 4,205,300)." in text
        assert "stop_reason: final_answer" in text
        assert "1. population('Paris') -> 2102650" in text
        assert "-> 4205300" in text  # the Python tool ran the model's code
        assert "stop: ['\\nObservation:', '\\n\\tObservation:']" in text
        assert "Observation: 4205300\nThought:" in text
        assert "'search' is not a tool here. The valid tools are: population, python_repl." in text
        assert "- Invalid format: the reply has no 'Action:' line" in text
        assert "answer: About 522,000 people." in text
        assert "chat reply: Paris has about 2.1 million people." in text
    if notebook.name == "tag_agent.ipynb":
        assert "- MULTIPLY: Multiply two whole numbers written as 'a * b'." in text
        assert "calculator: Checked with the tool: 6 * 7 = 42." in text
        assert "reply: 42\nstop reason: end_run" in text
        assert "[user] That reply was not a tool call" in text
        assert "[user] Result of MULTIPLY:\n42" in text
        assert "the model read: 'Result of ASK_USER:\\nmetres, please'" in text
        assert "ValueError: TagPrompts.task must contain the placeholder {task}" in text
        assert "round 0: mean 0.0, accepted True, changed [] (baseline)" in text
        assert "round 1: mean 1.0, accepted True, changed ['manifesto'] (kept: mean 1 > 0)" in text
        assert "manifesto now: You are {name}. Always give the unit with a number." in text
        assert "async reply: 42 metres" in text
        assert "chat reply: 42 metres" in text
    if notebook.name == "executor_functions.ipynb":
        assert "from myfuncs import foo" in text
        assert '    """Mean, median and the longest distance from zero.\n\n    Args:\n' in text
        assert "0 mean=0 median=1 max_abs=3 2 abab" in text
        assert "['myfuncs.py', 'tmp_code_" in text
        assert "Functions failed to load: Traceback" in text
        assert "No module named 'not_installed_anywhere'" in text
        assert "26.22 miles\nTrue" in text
        assert "installed in this kernel's environment: False" in text
        assert "Pip install failed. The package index could not be reached" in text
        assert "Code output: mean=6.75 median=9.5 max_abs=16" in text
        assert "summary: mean=6.75, median=9.5, the largest magnitude is 16." in text
    if notebook.name == "local_sandbox.ipynb":
        assert "user id: " in text
        assert "user id: 0\n" not in text
        assert "processes: [1, 2]" in text
        assert "id_ed25519 exists: False\n.env exists: False" in text
        assert "network: ConnectionRefusedError\n\non the host: written in the work dir" in text
        assert "exit code 1 - MemoryError\nstill fine" in text
        assert "exitcode: 0 (execution succeeded)" in text
        assert "secret: FileNotFoundError\nnetwork: ConnectionRefusedError" in text
        assert "0 hostname: sandbox" in text
        assert "sandboxed" in text
    if notebook.name == "autonomous_agent.ipynb":
        assert "SCRIBE THOUGHTS: I will write the plan." in text
        assert "AUTHORISED: the next 2 commands." in text
        assert "(feedback: List the files first.)" in text
        assert "report: The plan is written to plan.md: boil, brew, wait." in text
        assert "stop reason: task_complete" in text
        assert "memories: 5" in text
        assert "plan.md recalled: True" in text
        assert "budget stop: budget after 3 cycles" in text
        assert "exit code 0\n45" in text
    if notebook.name == "cost_and_budgets.ipynb":
        assert "ended by: is_termination_msg" in text
        assert re.search(r"chat_manager\s+4\s+0\s+1600\s+66\s+1666\s+0\.004660", text)
        assert re.search(r"speaker_selection\s+3 ", text)
        assert re.search(r"tool\s+1 ", text)
        assert re.search(r"total\s+9\s+0\s+2700\s+314\s+3014\s+0\.009744", text)
        assert "\nTrue\n" in text
        assert "ended by: budget:cost" in text
        assert "['Write verses.', 'Verse 1.', 'Go on.', 'Verse 2.', 'Go on.', 'Verse 3.']" in text
        assert "ended by: budget:llm_calls" in text
    if notebook.name == "retrieve_chat.ipynb":
        assert "documents: " in text
        assert "model: fake-model" in text
        assert re.search(r"prompt \d sources: \[.*cost-and-budgets\.md", text)
        assert "answer: From the docs: " in text
        assert "max_cost" in text.split("answer: From the docs: ", 1)[1].split("\n", 1)[0]
        assert re.search(r"chunks stored: [1-9]\d+", text)
        assert re.search(r"prompts sent: [2-9]\n", text)  # the scripted UPDATE CONTEXT, then more
        assert "each prompt had new context: True" in text
        assert "the model saw only the last prompt: ['system', 'user']" in text
        assert re.search(r"answer: From the docs: .*sandbox=True", text)
        assert re.search(r"\n0\.\d{3} ", text)  # Qdrant's hits with their distances
    if notebook.name == "retrieve_chat_pgvector.ipynb":
        assert "PostgreSQL: PostgresServer(host='127.0.0.1'" in text
        assert "answer: From the docs: " in text
        assert "max_cost" in text.split("answer: From the docs: ", 1)[1].split("\n", 1)[0]
        assert re.search(r"table: parley_docs \| chunks stored: [1-9]\d*\n", text)
        assert re.search(r"\n\d\.\d{3} cost-and-budgets\.md \| ", text)  # the nearest hit
        assert "distances ascending: True" in text
        assert re.search(r"chunks from logging\.md: [1-9]\d* \| all from it: True", text)
        assert re.search(r"cosine 0\.\d{3} logging\.md", text)
        assert "server stopped and removed" in text
    if notebook.name == "tracing.ipynb":
        assert "tracing: True" in text
        assert re.search(
            r"chat user -> assistant .*cost_usd=0\.1805, termination_reason=is_termination_msg\n"
            r"  invoke_agent assistant .*\n"
            r"    reply_func generate_oai_reply .*\n"
            r"      chat fake-model .*usage\.input_tokens=120, usage\.output_tokens=18, "
            r"agent\.name=assistant, cost_usd=0\.087\n"
            r"  invoke_agent user .*\n"
            r"    reply_func generate_tool_calls_reply .*\n"
            r"      execute_tool add .*tool\.name=add\n",
            text,
        )
        assert "gen_ai.operation.name            chat" in text
        assert '"content": "Say hello."' in text
        assert re.search(r"handle request .*\n  chat user -> assistant ", text)
        assert "tracing after disable(): False" in text
    if notebook.name == "many_providers.ipynb":
        assert "[planner] Plan: the coder writes add(a, b); the reviewer checks it." in text
        assert "[coder] def add(a, b):\n    return a + b\n[reviewer] add(a, b) is correct." in text
        assert "ended by: is_termination_msg" in text
        protocols = re.findall(r"^(openai|anthropic|gemini|ollama) +/\S+ +(\S+)$", text, re.M)
        assert protocols == [
            ("openai", "gpt-4o-mini"),
            ("anthropic", "claude-3-5-sonnet-20241022"),
            ("openai", "gpt-4o-mini"),
            ("gemini", "gemini-2.0-flash"),
            ("openai", "gpt-4o-mini"),
            ("ollama", "llama3.1:8b"),
        ]
        assert "anthropic body: ['max_tokens', 'messages', 'model', 'system']" in text
        assert "gemini    body: ['contents', 'generationConfig', 'systemInstruction']" in text
        cost_rows = {  # calls, cached, prompt, completion, total, cost (USD)
            "chat_manager": "3 0 900 6 906 0.000139",
            "planner": "1 0 1000 200 1200 0.006000",
            "coder": "1 0 1000 200 1200 0.000180",
            "reviewer": "1 0 1000 200 1200 0.000280",
            "llama3.1:8b": "1 0 1000 200 1200 0.000280",
        }
        for name, cells in cost_rows.items():
            row = r"\s+".join(re.escape(cell) for cell in [name, *cells.split()])
            assert re.search(rf"\n{row}\n", text), name
        assert "total_cost: 0.006599" in text
        assert 'tool call: add {"a": 20, "b": 22} -> 42\nanswer: 20 + 22 = 42. TERMINATE' in text
        assert "anthropic blocks: [['text'], ['tool_use'], ['tool_result']]" in text
        assert "as OpenAI: ['system', 'user', 'assistant', 'tool']" in text
        # the stream is echoed as it arrives, before the message is printed whole
        assert (
            "USING AUTO REPLY...\nStreamed from Gemini, chunk by chunk.\ncoder (to user):" in text
        )
        assert "path: /v1/models/gemini-2.0-flash:streamGenerateContent alt=sse" in text
        assert "reply: Hello from gemini-2.0-flash.\nrequests: ['anthropic', 'gemini']" in text
        assert "answered by: ['gemini-2.0-flash']" in text
        assert "config_id: 1 gemini-2.0-flash" in text
        assert (
            "BadRequestError: provider=anthropic, status=400\nrequests: ['gemini', 'anthropic']"
            in text
        )
    if notebook.name == "run_events.ipynb":
        assert (
            "[tool_call] assistant -> user: ['delete_file']\n"
            "[input_request] user is asked to approve delete_file({'path': 'notes.txt'})\n"
            "[input_response]\n[execute_function]\n"
            "[executed_function] delete_file -> 'deleted notes.txt' (approval: approved)\n"
        ) in text
        assert (
            "[text] assistant -> user: The file said 42 and is now deleted. TERMINATE\n"
            "       (streamed in 46 characters)\n[termination] is_termination_msg\n"
        ) in text
        assert "summary: The file said 42 and is now deleted. \nlast speaker: assistant\n" in text
        assert "cost: $0.002895" in text
        assert "TerminationEvent max_turns\n" in text
        assert '"sender": "user", "recipient": "assistant", "message_id": null, "content": "hi"' in text
        assert "round trip: True" in text
        # process(): the console transcript, the stream on its own line before its message
        assert "Sunny in Oslo. TERMINATE\nassistant (to user):\n\nSunny in Oslo. TERMINATE" in text
        assert "EXECUTED FUNCTION weather...\nCall ID: call_fake_3" in text
        assert "summary: Sunny in Oslo. \n" in text
        assert (
            "['run_start', 'chat_start', 'text', 'usage', 'text', 'termination', 'chat_end', "
            "'run_completion']\nsummary: Hello from the async run." in text
        )
    if notebook.name == "web_human.ipynb":
        assert "token required: True" in text
        assert (
            "review of assistant's message (code: ['print(sum(range(10)))']) -> approve ''" in text
        )
        assert "page shows the code's output: 45" in text
        assert "-> reject 'No plot, thanks.'" in text
        assert "page shows: ended (is_termination_msg), cost $0.0" in text
        assert "human input: ['', 'No plot, thanks.', '']" in text
        assert "the model read the feedback: No plot, thanks." in text
        assert "waiting: review from user about: Step 1 of many.\nended by: stopped" in text
        assert "model requests in this chat: 1" in text
        assert "closed: True" in text
    if notebook.name == "caching.ipynb":
        assert (
            "Answer 1. | cached calls: 0\nAnswer 2. | cached calls: 0\nrequests: 2\n"
            ".cache exists: False" in text
        )
        assert (
            "Answer 3. | cached calls: 0\nAnswer 3. | cached calls: 1\nrequests: 3\n"
            "folders: ['42']\ncost excluding cached: {'total_cost': 0}\n"
            "what the cached call cost when it was made > 0: True" in text
        )
        assert "Answer 4.\nrequests: 4\n" in text
        assert (
            '{"messages": [{"content": "Name a colour.", "role": "user"}], "model": "gpt-4o-mini", '
            '"temperature": 0.9}' in text
        )
        assert "Answer 5.\nAnswer 5.\nrequests: 5\nAnswer 6.\nfolders: ['42', '7']" in text
        assert '{"parley_cache": 1, "kind": "openai.ChatCompletion",\n' in text
        assert "API key in the entry: False" in text
        assert "TypeError: DiskCache stores JSON values: a set is not JSON-serialisable" in text
        assert "it is a pickle, so parley did not write it" in text
        assert "Answer 7. | cached calls: 0" in text
        assert "this code ran while reading the cache!" not in text
    if notebook.name == "testing_agents.ipynb":
        assert (
            "summary: 100 USD is 92 EUR.\nthe model read: {'role': 'tool', 'content': '92.0', "
            "'tool_call_id': 'call_1'}" in text
        )
        assert "summary: That is 7.9 GBP." in text
        assert "InternalServerError - Error code: 500 - FakeLLMServer: no scripted answer" in text
        assert "after a 429: ['Paris.'] | requests: 2" in text
        assert (
            "after a 500: ['Paris, from the backup.'] | models asked: ['gpt-4o', 'gpt-4o-mini']"
            in text
        )
        assert "400: Invalid parameter: messages with role 'tool' must be a response" in text
        assert "human said: ['Shorter, please.', 'exit'] | ended by: human_exit" in text
        assert "prompts: 2 | the console showed the short draft: True" in text
        assert "without transforms: context_length_exceeded at request" in text
        assert "with transforms: max_turns after 6 requests" in text
        assert "pytest exit code: 0\n1 passed" in text
    if notebook.name == "multimodal.ipynb":
        assert "What does this chart show? <image>" in text
        assert (
            "images sent: 1\nsent as: data:image/png;base64,iVBORw0K...\nsame pixels: True" in text
        )
        assert "stored parts: ['text', 'image_url', 'text']\nstored image: Image" in text
        assert "summary: I see a 120x80 image, mostly red." in text
        assert "I see a 60x40 image, mostly red.\nI see a 60x40 image, mostly red." in text
        assert (
            "the text model read: 'Which bar is tallest? <img chart.png> in case you can not "
            "see, the caption of this image is: I see a 120x80 image, mostly red.\\n'" in text
        )
        assert "images sent to the text model: []" in text
        assert "stored: Which bar is tallest? <img chart.png>\n" in text
        assert "caption of this image is: a chart of 120x80 pixels" in text
        assert "refused: image URL 'http://127.0.0.1:" in text
        assert "downloaded: (120, 80)\nI see a 120x80 image, mostly red." in text
        assert "400: Invalid 'messages.[0].content.[0].image_url.url'. Expected a valid URL" in text
        assert "but got unsupported MIME type 'text/plain'." in text
    if notebook.name == "termination.ipynb":
        assert "ended by: max_turns\nmessages: ['Count to six, three at a time.', '1, 2, 3'" in text
        assert (
            "default predicate: ['What is 2 + 2?', 'The answer is 4. TERMINATE', '', 'TERMINATE']"
            in text
        )
        assert "tolerant predicate: ['What is 2 + 2?', 'The answer is 4. TERMINATE']" in text
        assert "ended by: is_termination_msg | summary: The answer is 4." in text
        assert "tool result: 4\nended by: is_termination_msg" in text
        assert "human said: ['And 3 + 3?', ''] | ended by: is_termination_msg" in text
        assert "asked: Please give feedback to assistant. Press enter or type 'exit'" in text
        assert "human said: ['exit'] | ended by: human_exit" in text
        assert "ended by: max_consecutive_auto_reply | messages: 6" in text
        assert "ended by: no_reply" in text
        assert "ended by: budget:llm_calls | model calls: 2" in text
    if notebook.name == "human_in_the_loop.ipynb":
        assert "human said: ['How many people live there?', 'exit']\nended by: human_exit" in text
        assert "first prompt: Provide feedback to assistant. Press enter to skip" in text
        assert (
            "assistant -> runner: Don't delete anything. List the files instead.\n"
            "assistant -> runner: APPROVE\nassistant -> runner: APPROVE\n" in text
        )
        assert "code output: ['exitcode: 0 (execution succeeded)', 'Code output: ', '45']" in text
        assert "recorded: [\"Don't delete anything. List the files instead.\", '', '']" in text
        assert "['assistant -> runner: exit'] | ended by: human_exit" in text
        assert "refused: Only write to addresses at example.com. | ['USER INTERRUPTED']" in text
        assert "emails sent: ['team@example.com']" in text
        assert "paused: note-1 asks reviewer\npending: ['note-1']" in text
        assert "resumed: human_exit ['exit']\nmodel requests during the resume: 0" in text
    if notebook.name == "tools.ipynb":
        assert (
            '"operator": {"enum": ["+", "-", "*", "/"], "type": "string", "description": "the operation to apply"}'
            in text
        )
        assert (
            '"with_country": {"type": "boolean", "default": false, "description": "with_country"}'
            in text
        )
        assert "summary: 6 x 7 = 42." in text
        assert (
            'results: [\'{"city": "Paris", "celsius": 21}\', '
            '\'{"city": "Oslo", "celsius": 12}\', \'Oslo: sunny\']' in text
        )
        assert "three 0.5 s calls ran concurrently: True" in text
        assert (
            "ordered 2 x tea\n"
            "Error: Invalid arguments for place_order: order.quantity: Input should be greater "
            "than or equal to 1 (got 0)\n"
            "Error: integer division or modulo by zero\n"
            "Error: Invalid arguments for calculator: c: unexpected argument\n"
            "Error: Function search not found.\n"
            "Error: Expecting property name enclosed in double quotes" in text
        )
        assert (
            "tool message: 'Sales in 2024:\\n\\n[image 1: sent in the user message after the "
            "results]'\nthen: user ['text', 'image_url']\nimages the model got: 1" in text
        )
        assert "async: Paris: sunny | Sunny in Paris." in text
        assert "Approve the call of send_email (call ID: " in text
        assert "sent: ['me@example.com']" in text
        assert (
            "results: ['Error: the human rejected the call of send_email: Not to my boss.', "
            "'sent to me@example.com']" in text
        )
    if notebook.name == "conversation_patterns.ipynb":
        assert (
            "second chat's message: 'Write a tweet from these facts.\\nContext: \\n"
            "1. It is 330 m tall. 2. It was finished in 1889.'" in text
        )
        assert (
            "chat 3 started with: 'Compare.\\nContext: \\nNotes on Paris\\nNotes on Lyon'" in text
        )
        assert (
            "critic: A post for a bike shop in Lyon.\n"
            "post_writer: Our bikes are the best in the world.\n"
            "critic: Drop 'best in the world'. Name the city.\n"
            "post_writer: Good bikes, serviced in Lyon.\n"
            "chats in this chat's usage: 3" in text
        )
        speakers = (
            "speakers: ['user', 'planner', 'copywriter', 'reviewer', 'copywriter', 'reviewer']"
        )
        assert text.count(speakers) == 3
        assert "ended by: is_termination_msg\nspeaker selections: 5" in text
        assert f"{speakers}\nspeaker selections: 2" in text
        assert "speaker selections by the model: 0" in text


@pytest.mark.local_model
@pytest.mark.slow
def test_retrieve_chat_notebook_on_the_local_model(kernel: Any) -> None:
    """The RAG notebook once more, its questions answered by the embedded model."""
    run_cell(kernel, 'import os; os.environ["PARLEY_NOTEBOOK_MODEL"] = "local"')
    text = _run_notebook(kernel, NOTEBOOKS[0].parent / "retrieve_chat.ipynb")
    assert "model: smollm2" in text
    assert re.search(r"chunks stored: [1-9]\d+", text)
    assert text.count("prompt 1 sources: [") == 2  # both questions reached the model with context
    assert "answer: " in text
    assert "each prompt had new context: True" in text


def _run_notebook(kernel: Any, notebook: Path) -> str:
    if notebook.name in LOCAL_MODEL_NOTEBOOKS:
        run_cell(kernel, LOCAL_MODEL_SETUP)
    if notebook.name in RAY_NOTEBOOKS:
        run_cell(kernel, RAY_SETUP)
    timeout = RAY_CELL_TIMEOUT if notebook.name in RAY_NOTEBOOKS else CELL_TIMEOUT
    cells = json.loads(notebook.read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    return "\n".join(run_cell(kernel, source, timeout) for source in code)


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS, "notebooks/ should hold at least the quickstart notebook"


def test_every_notebook_is_linked_from_a_docs_page() -> None:
    """A reader finds each notebook from the page of its capability (website/docs)."""
    docs = Path(__file__).resolve().parents[2] / "website" / "docs"
    text = "\n".join(page.read_text() for page in docs.rglob("*.md"))
    unlinked = [n.name for n in NOTEBOOKS if f"notebooks/{n.name}" not in text]
    assert not unlinked, f"no page of website/docs names these notebooks: {unlinked}"


def _held_out_scores(text: str) -> tuple[float, float]:
    """The held-out success of the default and the tuned config, from the final comparison."""
    scores = {}
    for line in text.splitlines():
        name, _, rest = line.strip().partition(": success ")
        if name in ("default", "tuned") and rest:
            scores[name] = float(rest.split(",")[0])
    return scores["default"], scores["tuned"]
