"""AutoGen's ``autogen.coding.utils`` at its path: the file-name rule and pip silencing."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.coding.utils import _get_file_name_from_content, silence_pip


@pytest.mark.parametrize(
    ("first_line", "expected"),
    [
        ("# filename: test.py", "test.py"),
        ("# test.py", "test.py"),
        ("// filename: src/app.js", "src/app.js"),
        ("// app.js", "app.js"),
        ("/* filename: style.css */", "style.css"),
        ("/* style.css */", "style.css"),
        ("<!-- filename: index.html -->", "index.html"),
        ("<!-- index.html -->", "index.html"),
        ("  # filename: padded.py  ", "padded.py"),
    ],
)
def test_a_first_line_comment_names_the_file_relative_to_the_workspace(
    tmp_path: Path, first_line: str, expected: str
) -> None:
    assert _get_file_name_from_content(first_line + "\nprint('x')\n", tmp_path) == expected


def test_an_absolute_name_inside_the_workspace_comes_back_relative(tmp_path: Path) -> None:
    code = f"# filename: {tmp_path / 'sub' / 'main.py'}\nprint(1)"
    assert _get_file_name_from_content(code, tmp_path) == str(Path("sub") / "main.py")


@pytest.mark.parametrize("code", ["print('no comment')", "#!/bin/bash\necho hi", ""])
def test_no_file_name_without_such_a_comment(tmp_path: Path, code: str) -> None:
    assert _get_file_name_from_content(code, tmp_path) is None


@pytest.mark.parametrize("name", ["../outside.py", "/etc/passwd"])
def test_a_name_outside_the_workspace_is_a_value_error(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="outside the work dir"):
        _get_file_name_from_content(f"# filename: {name}\nprint(1)", tmp_path)


@pytest.mark.parametrize(
    ("code", "lang", "expected"),
    [
        ("!pip install requests", "python", "!pip install -qqq requests"),
        ("! pip install requests", "python", "! pip install -qqq requests"),
        ("pip install requests", "python", "pip install requests"),
        ("pip install requests", "bash", "pip install -qqq requests"),
        ("pip install requests", "sh", "pip install -qqq requests"),
        ("pip install requests", "powershell", "pip install -qqq requests"),
        ("pip install -qqq requests", "bash", "pip install -qqq requests"),
        ("pip install requests", "javascript", "pip install requests"),
        (
            "echo a\npip install x\n  pip install y",
            "shell",
            "echo a\npip install -qqq x\n  pip install y",
        ),
    ],
)
def test_silence_pip_quiets_install_lines_as_autogen(code: str, lang: str, expected: str) -> None:
    assert silence_pip(code, lang) == expected
