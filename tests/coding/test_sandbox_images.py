"""``parley sandbox build`` / ``status`` (``parley.coding.images``) on the real engine.

No test here leaves the machine: the Dockerfile method is built over the local sandbox image
(no package to fetch), and the base images that must be missing live on a closed loopback
registry. The Debian method runs end to end in scripts/test.sh, which builds both images with it
before pytest starts.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from parley.cli import main
from parley.coding import CodeBlock
from parley.coding.images import JUPYTER, SANDBOX, build_image, image_candidates, image_status
from parley.exceptions import ImageBuildError

from ._docker_support import docker_client, ensure_image, ensure_sandbox_image, executor

pytestmark = pytest.mark.docker

MISSING_BASE = "127.0.0.1:9/parley-no-such-base:0"  # a closed port: the pull fails at once


@pytest.fixture
def scratch_tag() -> Iterator[str]:
    """A tag for an image a test builds; the image is removed afterwards."""
    import docker

    tag = f"parley-test-image:{uuid.uuid4().hex[:12]}"
    yield tag
    with docker_client() as client:
        try:
            client.images.remove(tag, force=True)
        except docker.errors.ImageNotFound:
            pass


def test_the_dockerfile_method_builds_an_image_code_runs_in_as_the_sandbox_user(
    scratch_tag: str, tmp_path: Path
) -> None:
    built = build_image(
        "sandbox", tag=scratch_tag, method="dockerfile", base=ensure_sandbox_image(), log=print
    )
    assert built.method == "dockerfile"
    assert built.tag == scratch_tag
    with executor(tmp_path, image=scratch_tag) as ex:
        result = ex.execute_code_blocks(
            [
                CodeBlock(
                    language="python",
                    code="import getpass, os; print(getpass.getuser(), os.getcwd())",
                )
            ]
        )
    assert result.exit_code == 0, result.output
    assert result.output.split() == ["sandbox", "/workspace"]
    with docker_client() as client:  # what a later build asking for packages checks
        assert client.images.get(scratch_tag).labels["org.parley.packages"] == ""


def test_an_existing_image_is_reused_unless_rebuild_is_asked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    image = ensure_sandbox_image()
    built = build_image("sandbox", tag=image)
    assert built.method == "existing"
    assert "already exists" in capsys.readouterr().err
    with docker_client() as client:
        assert built.image_id == str(client.images.get(image).id).removeprefix("sha256:")


def test_an_existing_image_without_the_packages_asked_for_is_not_reused() -> None:
    image = ensure_sandbox_image()
    with pytest.raises(ImageBuildError, match=r"built without python3-numpy.*rebuild=True"):
        build_image("sandbox", tag=image, packages=["python3-numpy"])


def test_auto_falls_back_to_debian_and_says_what_is_missing(
    scratch_tag: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # No registry for the base, and no mmdebstrap on PATH: the error names the package.
    monkeypatch.setenv("PATH", str(tmp_path))
    lines: list[str] = []
    with pytest.raises(ImageBuildError, match="apt-get install mmdebstrap"):
        build_image("sandbox", tag=scratch_tag, base=MISSING_BASE, log=lines.append)
    assert any("cannot be pulled" in line for line in lines)
    with docker_client() as client:
        assert not client.images.list(name=scratch_tag)


def test_unknown_kinds_and_methods_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown image kind 'nope'"):
        build_image("nope")
    with pytest.raises(ValueError, match="method must be"):
        build_image("sandbox", tag="parley-test-image:never", method="magic", rebuild=True)  # type: ignore[arg-type]


def test_status_lists_the_candidates_in_order_and_the_one_parley_uses(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    image = ensure_sandbox_image()
    monkeypatch.setenv("PARLEY_SANDBOX_IMAGE", "parley-test-image:absent")
    assert image_candidates()[:2] == ["parley-test-image:absent", SANDBOX.default_tag]
    status = image_status("sandbox")
    assert status.candidates[0].name == "parley-test-image:absent"
    assert not status.candidates[0].present
    monkeypatch.setenv("PARLEY_SANDBOX_IMAGE", image)
    assert image_status("sandbox").chosen == image
    monkeypatch.setenv("PARLEY_JUPYTER_IMAGE", "parley-test-image:absent")
    assert main(["sandbox", "status"]) == 0
    out = capsys.readouterr().out
    assert f"parley uses {image}" in out
    assert "parley-test-image:absent" in out
    assert "none present: build one with `parley sandbox build --jupyter`" in out
    assert image_candidates("jupyter") == ["parley-test-image:absent"]
    monkeypatch.delenv("PARLEY_JUPYTER_IMAGE")
    assert image_candidates("jupyter") == [JUPYTER.default_tag]


def test_the_cli_builds_and_reports_errors(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    image = ensure_sandbox_image()
    assert main(["sandbox", "build", "--tag", image]) == 0
    assert capsys.readouterr().out.strip() == image
    monkeypatch.setenv("PATH", str(tmp_path))
    code = main(["sandbox", "build", "--tag", "parley-test-image:never", "--base", MISSING_BASE])
    assert code == 1
    assert "parley sandbox: error: building the image from Debian's packages needs mmdebstrap" in (
        capsys.readouterr().err
    )


def test_an_executor_without_an_image_uses_parley_s_own_when_present(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from parley.coding import DockerCommandLineCodeExecutor

    ensure_image("sandbox", SANDBOX.default_tag)  # whatever this run's image is called
    monkeypatch.delenv("PARLEY_SANDBOX_IMAGE", raising=False)
    with DockerCommandLineCodeExecutor(work_dir=tmp_path, timeout=20) as ex:
        result = ex.execute_code_blocks([CodeBlock(language="sh", code="whoami")])
        assert ex.image == SANDBOX.default_tag
    assert result.output.strip() == "sandbox"


def test_the_build_script_runs_parley_sandbox_build() -> None:
    import os
    import subprocess
    import sys

    image = ensure_sandbox_image()
    script = Path(__file__).resolve().parents[2] / "scripts" / "build-sandbox-image.sh"
    env = {**os.environ, "PARLEY_VENV": str(Path(sys.executable).parents[1])}
    done = subprocess.run(
        ["bash", str(script), image], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == image
    assert "already exists" in done.stderr
