"""``JupyterCodeExecutor`` (over a real ``LocalJupyterServer``) and
``EmbeddedIPythonCodeExecutor`` (a real local kernel): the same tests for both."""

from __future__ import annotations

import asyncio
import json
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pydantic
import pytest

from parley import AssistantAgent, UserProxyAgent
from parley._core.runtime import run_in_thread
from parley.coding import CodeBlock, CodeExecutor
from parley.coding.base import IPythonCodeResult
from parley.coding.jupyter import (
    EmbeddedIPythonCodeExecutor,
    JupyterCodeExecutor,
    JupyterConnectionInfo,
    LocalJupyterServer,
)
from parley.exceptions import UnsafeWorkDirError
from parley.testing import FakeLLMServer
from tests.coding._jupyter_support import PLOT, alive, python, saved_png, wait_until_gone

pytestmark = [pytest.mark.jupyter, pytest.mark.timeout(120)]

Executor = JupyterCodeExecutor | EmbeddedIPythonCodeExecutor
SECRET = "sk-parley-test-secret-0123456789"


@pytest.fixture(scope="module")
def gateway() -> Iterator[LocalJupyterServer]:
    with LocalJupyterServer(log_file=None) as server:
        yield server


@pytest.fixture(scope="module", params=["gateway", "embedded"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def build(kind: str, request: pytest.FixtureRequest) -> Callable[..., Executor]:
    """Makes an executor of this module's kind."""
    if kind == "embedded":
        return lambda **kwargs: EmbeddedIPythonCodeExecutor(**kwargs)
    server = request.getfixturevalue("gateway")
    return lambda **kwargs: JupyterCodeExecutor(server, **kwargs)


@pytest.fixture(scope="module")
def output_dir(kind: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp(f"output-{kind}")


@pytest.fixture(scope="module")
def executor(build: Callable[..., Executor], output_dir: Path) -> Iterator[Executor]:
    """One executor (one kernel) for the module's tests that its state does not disturb."""
    with build(output_dir=output_dir) as executor:
        yield executor


@pytest.fixture
def new_executor(build: Callable[..., Executor], tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Makes executors of the test's own (output_dir: tmp_path), stopped after the test."""
    made: list[Executor] = []

    def make(**kwargs: Any) -> Executor:
        made.append(build(**{"output_dir": tmp_path, **kwargs}))
        return made[-1]

    yield make
    for executor in made:
        executor.stop()


def run(executor: Executor, *codes: str) -> IPythonCodeResult:
    return executor.execute_code_blocks(python(*codes))


def test_an_executor(executor: Executor) -> None:
    assert isinstance(executor, CodeExecutor)
    assert executor.code_extractor.extract_code_blocks("```python\nx = 1\n```") == python("x = 1")


def test_variables_survive_between_blocks_and_calls(executor: Executor) -> None:
    assert run(executor, "x = 40", "x += 1") == IPythonCodeResult(exit_code=0, output="")
    assert run(executor, "print(x + 1)").output == "42\n"


def test_printed_output_and_results(executor: Executor) -> None:
    result = run(
        executor,
        "import sys\nprint('a')\nprint('b')\nprint('to stderr', file=sys.stderr)",
        "'a result'",
    )
    assert (result.exit_code, result.output) == (0, "a\nb\nto stderr\n'a result'\n")


def test_an_error_ends_the_call_with_one_error_prefix(executor: Executor) -> None:
    result = run(
        executor, "print('first')", "print('second')\nraise ValueError('bad value')", "print(3)"
    )
    assert result.exit_code == 1
    assert result.output.startswith("first\nsecond\nERROR: ValueError: bad value\n")
    assert "Traceback" in result.output
    assert "ERROR: ERROR" not in result.output
    assert "\x1b[" not in result.output
    assert "3\n" not in result.output


def test_a_plot_is_saved_as_a_png_file(executor: Executor, output_dir: Path) -> None:
    result = run(executor, PLOT)
    assert result.exit_code == 0, result.output
    [path] = result.output_files
    saved_png(path, output_dir)
    assert f"Image data saved to {path}\n" in result.output


def test_html_and_svg_are_saved(executor: Executor, output_dir: Path) -> None:
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'
    result = run(
        executor,
        "from IPython.display import HTML, SVG, display\n"
        "display(HTML('<h1>hello</h1>'))\n"
        f"display(SVG({svg!r}))",
    )
    assert result.exit_code == 0, result.output
    html, image = (Path(path) for path in result.output_files)
    assert (html.parent, html.suffix, image.suffix) == (output_dir.resolve(), ".html", ".svg")
    assert html.read_text() == "<h1>hello</h1>"
    assert image.read_text() == svg
    assert f"HTML data saved to {html}\n" in result.output
    assert f"Image data saved to {image}\n" in result.output


def test_shell_blocks_run_as_scripts_in_the_output_dir(
    executor: Executor, output_dir: Path
) -> None:
    script = CodeBlock(code="echo from the shell\npwd", language="sh")
    result = executor.execute_code_blocks([script])
    assert (result.exit_code, result.output) == (0, f"from the shell\n{output_dir}\n")
    failing = CodeBlock(code="echo out\nexit 3", language="bash")
    result = executor.execute_code_blocks([failing])
    assert (result.exit_code, result.output) == (
        1,
        "out\nERROR: the shell script exited with status 3\n",
    )


def test_ipython_shell_escapes_and_magics_run_as_in_a_notebook(
    executor: Executor, output_dir: Path
) -> None:
    # A bash block written for IPython, as AutoGen's examples write them: one notebook cell.
    bang = CodeBlock(code='!echo "hello world!"', language="bash")
    result = executor.execute_code_blocks([bang])
    assert (result.exit_code, result.output.strip()) == (0, "hello world!")
    cell = "\n".join(
        [
            "import os",
            "%mkdir -p sub",
            "%cd sub",
            "!pwd",
            "listing = !ls ..",
            "print('sub' in listing)",
            "%cd ..",
        ]
    )
    result = executor.execute_code_blocks([CodeBlock(code=cell, language="python")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert str(output_dir / "sub") in lines
    assert lines[-1].endswith(str(output_dir))  # %cd prints where it went
    assert "True" in lines
    # A plain script is still a script: a leading "!" inside a line is not a shell escape.
    plain = CodeBlock(code='x=1\nif [ "$x" != 2 ]; then echo not two; fi', language="sh")
    result = executor.execute_code_blocks([plain])
    assert (result.exit_code, result.output) == (0, "not two\n")


def test_files_the_code_writes_land_in_the_output_dir(executor: Executor, output_dir: Path) -> None:
    assert run(executor, "open('written.txt', 'w').write('by the kernel')").exit_code == 0
    assert (output_dir / "written.txt").read_text() == "by the kernel"


def test_an_unknown_language_is_refused(executor: Executor) -> None:
    blocks = [*python("print('ran')"), CodeBlock(code="puts 1", language="ruby")]
    result = executor.execute_code_blocks(blocks)
    assert result.exit_code == 1
    assert result.output == (
        "ran\nERROR: unknown language ruby: this python kernel runs python blocks and shell "
        "blocks (sh, bash)\n"
    )


def test_restart_loses_the_variables(executor: Executor) -> None:
    assert run(executor, "forgotten = 1").exit_code == 0
    executor.restart()
    result = run(executor, "forgotten")
    assert result.exit_code == 1
    assert result.output.startswith("ERROR: NameError: name 'forgotten' is not defined")


def test_a_timeout_interrupts_the_block_and_the_kernel_survives(
    new_executor: Callable[..., Executor],
) -> None:
    executor = new_executor(timeout=2)
    assert run(executor, "x = 'kept'").exit_code == 0
    start = time.monotonic()
    result = run(executor, "print('started', flush=True)\nimport time\ntime.sleep(100)")
    assert time.monotonic() - start < 50  # interrupted at its 2 s deadline, not after 100 s
    assert (result.exit_code, result.output) == (
        1,
        "started\nERROR: Timeout: the code block ran longer than 2 s; it was interrupted; the "
        "kernel keeps its variables.\n",
    )
    assert run(executor, "print(x)").output == "kept\n"


async def test_a_cancelled_chat_interrupts_the_block(executor: Executor, tmp_path: Path) -> None:
    assert run(executor, "y = 'still here'").exit_code == 0
    started = tmp_path / "started"  # the block says it runs (both kernels are on this machine)
    code = f"import pathlib, time\npathlib.Path({str(started)!r}).touch()\ntime.sleep(100)"
    task = asyncio.ensure_future(run_in_thread(executor.execute_code_blocks, python(code)))
    deadline = time.monotonic() + 120
    while not started.exists():
        assert time.monotonic() < deadline, "the block did not start"
        assert not task.done(), task
        await asyncio.sleep(0.05)
    start = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - start < 50  # interrupted, not left to sleep its 100 s
    assert run(executor, "print(y)").output == "still here\n"


def test_a_dead_kernel_is_restarted(new_executor: Callable[..., Executor]) -> None:
    executor = new_executor()
    result = run(executor, "import os\nprint('bye', flush=True)\nos._exit(1)")
    assert result.exit_code == 1
    assert result.output.startswith("bye\n") or result.output.startswith("ERROR")
    assert "ERROR: the kernel died while running the code block" in result.output
    assert result.output.endswith(
        "The kernel was restarted: variables and imports must be set up again.\n"
    )
    assert run(executor, "print('alive again')").output == "alive again\n"


def test_stop_leaves_no_kernel_process(
    new_executor: Callable[..., Executor], kind: str, request: pytest.FixtureRequest
) -> None:
    executor = new_executor()
    gateway = request.getfixturevalue("gateway").get_client() if kind == "gateway" else None
    kernels = [kernel["id"] for kernel in gateway.list_kernels()] if gateway else []
    # A child in the kernel's process group. (One in a session of its own lives on until the
    # gateway stops, or, for the embedded kernel, which is not supervised, for ever: see the
    # modules' docs. test_jupyter_server checks the gateway's stop.)
    result = run(
        executor,
        "import os, subprocess\nchild = subprocess.Popen(['sleep', '1000'])\n"
        "print(os.getpid(), child.pid)",
    )
    kernel, sleeper = map(int, result.output.split())
    assert alive(kernel)
    assert alive(sleeper)
    executor.stop()
    wait_until_gone(kernel, sleeper)
    if gateway is not None:  # the gateway no longer lists the kernel
        assert len([k for k in gateway.list_kernels() if k["id"] in kernels]) == len(kernels) - 1
    executor.stop()  # twice: nothing happens
    with pytest.raises(ValueError, match="was stopped"):
        run(executor, "1")


def assert_unix_sockets_beside(connection: Path) -> None:
    """The kernel of connection file ``connection`` listens on Unix sockets in its folder."""
    info = json.loads(connection.read_text())
    assert info["transport"] == "ipc", info["transport"]
    for channel in ("shell", "iopub", "stdin", "control", "hb"):
        socket = Path(f"{info['ip']}-{info[f'{channel}_port']}")
        assert socket.parent == connection.parent
        assert stat.S_ISSOCK(socket.stat().st_mode), socket


def test_kernels_started_at_once_each_run_their_code(
    build: Callable[..., Executor], kind: str, tmp_path: Path
) -> None:
    """Kernels started together (as parallel tests or a batch's chats do) each run their own
    code. Each listens on Unix sockets beside its connection file (the embedded kernel's in a
    folder of its own, removed at stop): no TCP ports two starting kernels could both pick (and
    one then fail with "Address already in use")."""
    count = 4
    folders = [tmp_path / f"out{i}" for i in range(count)]
    for folder in folders:
        folder.mkdir()
    connections: list[Path] = []
    with ThreadPoolExecutor(count) as pool:
        starting = [pool.submit(build, output_dir=f) for f in folders]
        executors = [f.result() for f in starting if f.exception() is None]
        try:
            assert len(executors) == count, [f.exception() for f in starting]
            code = "import os, sys\nprint(os.getcwd(), os.getpid(), sys.argv[-1])"
            results = list(pool.map(lambda e: run(e, code), executors))
            outputs = [r.output.split() for r in results]
            assert [r.exit_code for r in results] == [0] * count, [r.output for r in results]
            assert [Path(o[0]) for o in outputs] == [f.resolve() for f in folders]
            assert len({int(o[1]) for o in outputs}) == count  # a kernel process each
            connections = [Path(o[2]) for o in outputs]  # each kernel's connection file
            assert len(set(connections)) == count
            for connection in connections:
                assert_unix_sockets_beside(connection)
        finally:
            for executor in executors:
                executor.stop()
    deadline = time.monotonic() + 30  # the gateway may clean up after answering
    while [c for c in connections if c.exists()] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [c for c in connections if c.exists()]
    if kind == "embedded":
        assert not [c.parent for c in connections if c.parent.exists()]


def test_an_embedded_kernel_starts_under_a_long_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Unix socket's path has at most ~100 bytes: with a TMPDIR too long for the kernel's
    sockets, its private folder is made in /tmp."""
    long = tmp_path / ("t" * 60) / ("m" * 60)
    long.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(long))
    with EmbeddedIPythonCodeExecutor(output_dir=tmp_path) as executor:
        result = run(executor, "import sys\nprint(sys.argv[-1])")
        assert result.exit_code == 0, result.output
        connection = Path(result.output.strip())
        assert_unix_sockets_beside(connection)
        assert not connection.is_relative_to(long)
    assert not connection.parent.exists()


def test_the_code_cannot_see_parley_s_api_keys(
    new_executor: Callable[..., Executor], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    executor = new_executor()
    code = "import os\nprint(os.environ.get('OPENAI_API_KEY'), len(os.environ) < 30)"
    assert run(executor, code).output == "None True\n"


def test_the_default_output_dir_is_a_dedicated_folder(
    new_executor: Callable[..., Executor], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    executor = new_executor(output_dir="coding")
    assert run(executor, "import os\nprint(os.getcwd())").output == f"{tmp_path / 'coding'}\n"


def test_a_chat_draws_a_plot(fake_llm: FakeLLMServer, executor: Executor, output_dir: Path) -> None:
    fake_llm.add_reply(f"Here is the plot.\n```python\n{PLOT}```").add_reply("TERMINATE")
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    proxy = UserProxyAgent(
        "user", human_input_mode="NEVER", code_execution_config={"executor": executor}
    )
    proxy.initiate_chat(assistant, message="Plot the squares of 1, 2, 3.", silent=True)
    reply = fake_llm.requests[1]["messages"][-1]["content"]
    assert reply.startswith("exitcode: 0 (execution succeeded)\nCode output: ")
    match = re.search(r"Image data saved to (\S+)\n", reply)
    assert match is not None, reply
    saved_png(match.group(1), output_dir)


# -- bad input ----------------------------------------------------------------------------------


def test_the_timeout_must_be_at_least_one_second(
    build: Callable[..., Executor], kind: str, tmp_path: Path
) -> None:
    error = pydantic.ValidationError if kind == "embedded" else ValueError
    with pytest.raises(error, match="greater than or equal to 1"):
        build(timeout=0, output_dir=tmp_path)


def test_the_output_dir_must_exist(build: Callable[..., Executor], tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(ValueError, match=f"Output directory {missing} does not exist."):
        build(output_dir=missing)
    assert not missing.exists()


def test_an_output_dir_holding_a_repository_is_refused(
    build: Callable[..., Executor], tmp_path: Path
) -> None:
    (tmp_path / ".git").mkdir()
    with pytest.raises((UnsafeWorkDirError, pydantic.ValidationError), match="git repository"):
        build(output_dir=tmp_path)


def test_an_unknown_kernel_name(build: Callable[..., Executor], kind: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"Kernel no-such-kernel is not installed\.") as caught:
        build(kernel_name="no-such-kernel", output_dir=tmp_path)
    if kind == "embedded":
        assert "python -m ipykernel install --user --name no-such-kernel" in str(caught.value)


def test_the_server_must_be_a_jupyter_server(tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match=r"jupyter_server must be a JupyterConnectable or JupyterConnectionInfo\."
    ):
        JupyterCodeExecutor("http://127.0.0.1:8888", output_dir=tmp_path)  # type: ignore[arg-type]


def test_a_connection_info_reaches_the_gateway(gateway: LocalJupyterServer, tmp_path: Path) -> None:
    info = gateway.connection_info
    assert isinstance(info, JupyterConnectionInfo)
    with JupyterCodeExecutor(info, output_dir=tmp_path, timeout=30) as executor:
        # Without the server's kernel_root the kernel starts where the gateway runs (/).
        assert run(executor, "import os\nprint(os.getcwd())").output == "/\n"
