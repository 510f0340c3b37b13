"""Issue 34, item 6: code in a ``LocalJupyterServer``'s kernel cannot get the gateway's token.

The report: the gateway's config file, ``gateway_config.json`` with the token in it, lay in the
gateway's ``JUPYTER_RUNTIME_DIR``, which every kernel inherits, so code in a kernel read the
token (and with it could drive the gateway: start kernels, run code in other executors'
kernels). Now the config file and the cookie secret live in a private folder removed as soon
as the gateway answers, and the gateway makes itself non-dumpable, so a kernel can read neither
its memory nor its environment. Checked with a real gateway and kernel: the code looks where it
could (the runtime dir and its neighbours, its ancestors' ``/proc`` files and memory) and
reports every token-shaped string it finds.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from parley.coding import CodeBlock
from parley.coding.jupyter import JupyterCodeExecutor, LocalJupyterServer

pytestmark = [pytest.mark.jupyter, pytest.mark.timeout(180)]

# Every 64-hex-digit string (the token's shape) in the files and memory the code can read.
HUNT = r"""
import os, re
SHAPE = re.compile(rb"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")
found, read = set(), []

def scan(data, where):
    read.append(where)
    found.update(m.group(0).decode() for m in SHAPE.finditer(data))

def scan_file(path):
    try:
        with open(path, "rb") as f:
            scan(f.read(1 << 20), path)
    except OSError:
        pass

runtime = os.environ.get("JUPYTER_RUNTIME_DIR", "")
tmp = os.path.dirname(runtime) if runtime else TMP
for folder in [runtime] + [os.path.join(tmp, d) for d in os.listdir(tmp) if "jupyter" in d]:
    for root, _, files in os.walk(folder):
        for name in files:
            scan_file(os.path.join(root, name))

pid = os.getpid()
while pid > 1:
    with open(f"/proc/{pid}/stat") as f:
        pid = int(f.read().rsplit(")", 1)[1].split()[1])
    for name in ("cmdline", "environ"):
        scan_file(f"/proc/{pid}/{name}")
    try:
        with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
            for line in maps:
                span, perms = line.split()[:2]
                if not perms.startswith("rw"):
                    continue
                start, end = (int(x, 16) for x in span.split("-"))
                if end - start > 256 << 20:
                    continue
                try:
                    mem.seek(start)
                    scan(mem.read(end - start), f"mem {pid}")
                except (OSError, ValueError, OverflowError):
                    pass
    except OSError:
        pass
print("READ", len(read), "FOUND", " ".join(sorted(found)))
"""


@pytest.fixture
def gateway() -> Iterator[LocalJupyterServer]:
    with LocalJupyterServer(log_file=None) as server:
        yield server


def test_kernel_code_cannot_find_the_gateway_token(
    gateway: LocalJupyterServer, tmp_path: Path
) -> None:
    token = gateway.token
    assert token is not None
    code = HUNT.replace("TMP", repr(tempfile.gettempdir()))
    with JupyterCodeExecutor(gateway, output_dir=tmp_path, timeout=120) as executor:
        result = executor.execute_code_blocks([CodeBlock(language="python", code=code)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("READ "), result.output
    assert token not in result.output
    # The gateway still works with its token (it was read before the file went away).
    assert any(spec for spec in gateway.get_client().list_kernel_specs()["kernelspecs"])


def test_the_gateway_config_file_is_gone_once_it_serves(gateway: LocalJupyterServer) -> None:
    token = gateway.token
    assert token is not None
    for folder in Path(tempfile.gettempdir()).glob("parley-jupyter*"):
        for path in folder.rglob("*"):
            try:
                text = path.read_text(errors="replace") if path.is_file() else ""
            except OSError:
                continue  # another gateway's file, gone since
            assert token not in text, path
