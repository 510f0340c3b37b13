"""parley's offline tokenizers are tiktoken's, byte for byte, and never touch the network."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from parley._tokenizer import (
    ENCODING_NAMES,
    _vocabulary_bytes,
    encoding_for_model,
    get_encoding,
)

URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"

# A fixed corpus: prose, contractions, code, numbers, whitespace runs (p50k's extra tokens),
# several scripts, emoji, and the special-token strings.
CORPUS = [
    "hello world",
    "The quick brown fox jumps over the lazy dog. It's what they'd've done, isn't it?",
    "def f(x):\n    return x ** 2  # square\n\n\tprint(f(12345678901234))\n",
    "          ten spaces, then      six, then\n\n\n\nnewlines\r\n",
    "Größe, naïve café, Ελληνικά, русский текст, 日本語のテキスト, 中文文本, العربية, हिन्दी",
    "emoji 😀👍🏽🇫🇷 and symbols ∑∫√ ≤≥ → ← «quotes» “curly” — dash",
    "<|endoftext|> <|fim_prefix|> <|fim_middle|> <|fim_suffix|> <|endofprompt|> <|start|>",
    "URLs https://example.com/a?b=c&d=e#f and paths C:\\Users\\x\\file.txt, e-mail a@b.co",
    'JSON {"a": [1, 2.5, -3e10], "b": null, "c": "\\u00e9"}',
    "",
]


@pytest.fixture(scope="module")
def tiktoken_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiktoken cache directory holding parley's shipped files under the names tiktoken would
    have downloaded them to, so tiktoken's own constructors run here without a network."""
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    for vocabulary in ("cl100k_base", "o200k_base", "r50k_base", "p50k_base"):
        key = hashlib.sha1(URL.format(vocabulary).encode()).hexdigest()
        (cache / key).write_bytes(_vocabulary_bytes(vocabulary))
    return cache


@pytest.mark.parametrize(
    "name", ["r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]
)
def test_token_ids_are_tiktokens_own(
    name: str, tiktoken_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tiktoken
    from tiktoken_ext import openai_public

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tiktoken_cache))
    # tiktoken's constructor checks each file against its own expected SHA-256.
    reference = tiktoken.Encoding(**getattr(openai_public, name)())
    ours = get_encoding(name)
    assert ours.n_vocab == reference.n_vocab
    assert ours.special_tokens_set == reference.special_tokens_set
    for text in CORPUS:
        assert ours.encode(text, allowed_special="all") == reference.encode(
            text, allowed_special="all"
        ), text
        assert ours.encode_ordinary(text) == reference.encode_ordinary(text), text
        assert ours.decode(ours.encode_ordinary(text)) == text


def test_gpt2_encodes_as_r50k_base() -> None:
    for text in CORPUS:
        assert get_encoding("gpt2").encode_ordinary(text) == get_encoding(
            "r50k_base"
        ).encode_ordinary(text)


def test_known_ids() -> None:
    assert get_encoding("cl100k_base").encode("hello world") == [15339, 1917]
    assert get_encoding("o200k_base").encode("hello world") == [24912, 2375]
    assert get_encoding("r50k_base").encode("hello world") == [31373, 995]


def test_model_to_encoding_follows_tiktoken() -> None:
    assert encoding_for_model("gpt-3.5-turbo-0613").name == "cl100k_base"
    assert encoding_for_model("gpt-4").name == "cl100k_base"
    assert encoding_for_model("gpt-4o-2024-08-06").name == "o200k_base"
    assert encoding_for_model("text-davinci-003").name == "p50k_base"
    with pytest.raises(KeyError, match="llama-3"):
        encoding_for_model("llama-3")
    with pytest.raises(ValueError, match="no_such_encoding"):
        get_encoding("no_such_encoding")


def test_encodings_are_built_once() -> None:
    assert get_encoding("cl100k_base") is get_encoding("cl100k_base")
    assert encoding_for_model("gpt-4") is get_encoding("cl100k_base")


def test_no_network_is_touched(tmp_path: Path) -> None:
    """Every encoding builds and counts in a process whose sockets cannot connect and whose
    tiktoken cache is empty."""
    script = textwrap.dedent(
        f"""
        import socket
        def refuse(*args, **kwargs):
            raise OSError("network use in an offline test")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        from parley._tokenizer import get_encoding
        from parley.token_count_utils import count_token
        for name in {list(ENCODING_NAMES)!r}:
            assert get_encoding(name).encode("hello world")
        assert count_token("hello world", model="gpt-4o") == 2
        assert count_token([{{"role": "user", "content": "hi"}}]) > 0
        print("ok")
        """
    )
    env = {"TIKTOKEN_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    assert not any(tmp_path.iterdir())
