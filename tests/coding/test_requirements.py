"""parley.coding._requirements: what an interpreter lacks, and pip's options for another one."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from parley.coding._requirements import (
    PROBE,
    Interpreter,
    cross_platform_options,
    missing,
    parse_probe,
)


def probe_this_interpreter() -> Interpreter:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=False
    )
    return parse_probe(done.returncode, done.stdout + done.stderr)


def test_the_probe_reports_this_interpreter() -> None:
    found = probe_this_interpreter()
    assert found.python_version == f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert found.markers["sys_platform"] == sys.platform
    version, _ = found.dists["packaging"]
    from importlib.metadata import version as installed

    assert version == installed("packaging")
    assert found.libc == platform.libc_ver()


def test_a_failed_probe_is_explained() -> None:
    with pytest.raises(ValueError, match=r"exit code 127.*Python 3\.8 or later") as failure:
        parse_probe(127, "python: not found\n")
    assert "python: not found" in str(failure.value)


GLIBC_311 = Interpreter(
    dists={
        "pandas": ("2.1.0", ["numpy>=1.22", 'openpyxl>=3; extra == "excel"']),
        "numpy": ("1.26.0", []),
        "beta-pkg": ("2.0b1", []),
    },
    markers={
        "implementation_name": "cpython",
        "implementation_version": "3.11.2",
        "os_name": "posix",
        "platform_machine": "x86_64",
        "platform_release": "6.1",
        "platform_system": "Linux",
        "platform_version": "#1",
        "python_full_version": "3.11.2",
        "platform_python_implementation": "CPython",
        "python_version": "3.11",
        "sys_platform": "linux",
    },
    libc=("glibc", "2.36"),
)


@pytest.mark.parametrize(
    ("requirement", "lacking"),
    [
        ("pandas", False),
        ("Pandas>=2", False),  # names are compared normalised
        ("pandas<2", True),
        ("beta_pkg>=2.0b1", False),  # an installed pre-release counts
        ("requests", True),
        ("requests; python_version < '3'", False),  # not meant for this Python
        ("pandas[excel]", True),  # its extra needs openpyxl
        ("./local/folder", True),  # not a requirement packaging reads: left to pip
        ("git+https://example.invalid/x.git", True),
    ],
)
def test_missing_requirements(requirement: str, lacking: bool) -> None:
    assert missing([requirement], GLIBC_311) == ([requirement] if lacking else [])


def test_missing_keeps_the_order_given() -> None:
    assert missing(["zeta", "pandas", "alpha"], GLIBC_311) == ["zeta", "alpha"]


def test_pip_options_for_a_glibc_container() -> None:
    options = cross_platform_options(GLIBC_311)
    assert options[:6] == [
        "--only-binary=:all:",
        "--python-version",
        "3.11",
        "--implementation",
        "cp",
        "--platform",
    ]
    platforms = [options[i + 1] for i, o in enumerate(options) if o == "--platform"]
    assert platforms[0] == "manylinux_2_36_x86_64"
    assert "manylinux_2_17_x86_64" in platforms
    assert "manylinux_2_5_x86_64" in platforms
    assert "manylinux2014_x86_64" in platforms
    assert "manylinux1_x86_64" in platforms
    assert platforms[-1] == "linux_x86_64"


def test_pip_options_for_a_musl_container() -> None:
    alpine = Interpreter(
        GLIBC_311.dists, {**GLIBC_311.markers, "platform_machine": "aarch64"}, ("musl", "")
    )
    options = cross_platform_options(alpine)
    platforms = [options[i + 1] for i, o in enumerate(options) if o == "--platform"]
    assert platforms == [
        "musllinux_1_2_aarch64",
        "musllinux_1_1_aarch64",
        "musllinux_1_0_aarch64",
        "linux_aarch64",
    ]
