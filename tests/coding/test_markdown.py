"""``MarkdownCodeExtractor``: AutoGen's rules for finding the blocks of a message."""

from __future__ import annotations

from parley.coding import CodeBlock, CodeExtractor, MarkdownCodeExtractor


def extract(message: object) -> list[tuple[str, str]]:
    return [(b.language, b.code) for b in MarkdownCodeExtractor().extract_code_blocks(message)]  # type: ignore[arg-type]


def test_tagged_blocks_keep_their_language() -> None:
    text = "Try:\n```python\nprint(1)\n```\nand\n```sh\necho hi\n```"
    assert extract(text) == [("python", "print(1)"), ("sh", "echo hi")]


def test_untagged_blocks_get_the_inferred_language() -> None:
    assert extract("```\nprint(1)\n```") == [("python", "print(1)")]
    assert extract("```\npip install numpy\n```") == [("sh", "pip install numpy")]
    assert extract("```\nfoo bar baz\n```") == [("", "foo bar baz")]


def test_a_block_tagged_unknown_has_no_language() -> None:
    assert extract("```unknown\nx\n```") == [("", "x")]


def test_no_block_gives_an_empty_list() -> None:
    assert extract("just words") == []
    assert extract("") == []
    assert extract(None) == []
    assert extract("```python\nprint(1)```") == []  # closing fence not on its own line


def test_tolerant_fences() -> None:
    assert extract("``` python \r\nprint(1)\r\n   ```") == [("python", "print(1)")]


def test_multimodal_content() -> None:
    content = [
        {"type": "text", "text": "see "},
        {"type": "image_url", "image_url": {"url": "http://x/y.png"}},
        {"type": "text", "text": "\n```bash\nls\n```"},
    ]
    assert extract(content) == [("bash", "ls")]


def test_returns_code_blocks_and_satisfies_the_protocol() -> None:
    extractor: CodeExtractor = MarkdownCodeExtractor()
    blocks = extractor.extract_code_blocks("```python\nx = 1\n```")
    assert blocks == [CodeBlock(code="x = 1", language="python")]
