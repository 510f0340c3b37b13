"""OpenAI's tokenizers without a network: tiktoken encodings built from vocabularies shipped
inside parley.

``tiktoken.get_encoding`` downloads its vocabulary files on first use, which fails on a machine
without internet (and in parley's tests, which may not reach it). parley ships OpenAI's published
files, xz-compressed, in ``parley/_vocab/`` (see the README there for where they come from and
how to refresh them) and checks each against the SHA-256 that tiktoken itself expects, so the
encodings are byte-for-byte tiktoken's; ``tests/test_tokenizer.py`` compares the token ids with
tiktoken's own constructors on a fixed corpus.

Encodings are built once per process (building o200k_base takes a few hundred milliseconds)
and shared; ``tiktoken.Encoding`` is safe to use from several threads.
"""

from __future__ import annotations

import base64
import hashlib
import lzma
import threading
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

__all__ = ["ENCODING_NAMES", "encoding_for_model", "encoding_name_for_model", "get_encoding"]

_ENDOFTEXT = "<|endoftext|>"
_FIM_PREFIX = "<|fim_prefix|>"
_FIM_MIDDLE = "<|fim_middle|>"
_FIM_SUFFIX = "<|fim_suffix|>"
_ENDOFPROMPT = "<|endofprompt|>"

# The split patterns and special tokens are tiktoken's (tiktoken_ext/openai_public.py).
_R50K_PAT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
_CL100K_PAT = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


def _harmony_specials() -> dict[str, int]:
    named = {
        "<|startoftext|>": 199998,
        _ENDOFTEXT: 199999,
        "<|return|>": 200002,
        "<|constrain|>": 200003,
        "<|channel|>": 200005,
        "<|start|>": 200006,
        "<|end|>": 200007,
        "<|message|>": 200008,
        "<|call|>": 200012,
    }
    taken = set(named.values())
    reserved = {f"<|reserved_{i}|>": i for i in range(200000, 201088) if i not in taken}
    # As in tiktoken, 200018 has two names: o200k_base's <|endofprompt|> and a reserved one.
    return {_ENDOFPROMPT: 200018, **named, **reserved}


@dataclass(frozen=True)
class _Spec:
    vocabulary: str  # the file's name in parley/_vocab, without ".tiktoken.xz"
    sha256: str  # of the uncompressed file, as tiktoken expects it
    pat_str: str
    special_tokens: dict[str, int] = field(hash=False)
    explicit_n_vocab: int | None = None


_P50K_SHA = "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"
_O200K_SHA = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
# gpt2 is r50k_base under another name (tiktoken loads it from GPT-2's own files, same ranks).
_R50K = _Spec(
    "r50k_base",
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    _R50K_PAT,
    {_ENDOFTEXT: 50256},
    50257,
)
_SPECS: dict[str, _Spec] = {
    "gpt2": _R50K,
    "r50k_base": _R50K,
    "p50k_base": _Spec("p50k_base", _P50K_SHA, _R50K_PAT, {_ENDOFTEXT: 50256}, 50281),
    "p50k_edit": _Spec(
        "p50k_base",
        _P50K_SHA,
        _R50K_PAT,
        {_ENDOFTEXT: 50256, _FIM_PREFIX: 50281, _FIM_MIDDLE: 50282, _FIM_SUFFIX: 50283},
    ),
    "cl100k_base": _Spec(
        "cl100k_base",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PAT,
        {
            _ENDOFTEXT: 100257,
            _FIM_PREFIX: 100258,
            _FIM_MIDDLE: 100259,
            _FIM_SUFFIX: 100260,
            _ENDOFPROMPT: 100276,
        },
    ),
    "o200k_base": _Spec(
        "o200k_base",
        _O200K_SHA,
        _O200K_PAT,
        {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    ),
    "o200k_harmony": _Spec("o200k_base", _O200K_SHA, _O200K_PAT, _harmony_specials()),
}

ENCODING_NAMES: tuple[str, ...] = tuple(_SPECS)

_lock = threading.Lock()
_encodings: dict[str, tiktoken.Encoding] = {}
_ranks: dict[str, dict[bytes, int]] = {}


def get_encoding(name: str) -> tiktoken.Encoding:
    """tiktoken's encoding ``name`` (``cl100k_base``, ``o200k_base``, ...), built offline.

    Raises ``ValueError`` for a name tiktoken does not define, as ``tiktoken.get_encoding``.
    """
    encoding = _encodings.get(name)
    if encoding is not None:
        return encoding
    spec = _SPECS.get(name)
    if spec is None:
        raise ValueError(f"Unknown encoding {name!r}; parley ships {', '.join(ENCODING_NAMES)}")
    import tiktoken

    with _lock:
        encoding = _encodings.get(name)
        if encoding is None:
            encoding = tiktoken.Encoding(
                name,
                pat_str=spec.pat_str,
                mergeable_ranks=_load_ranks(spec),
                special_tokens=spec.special_tokens,
                explicit_n_vocab=spec.explicit_n_vocab,
            )
            _encodings[name] = encoding
    return encoding


def encoding_name_for_model(model: str) -> str:
    """The encoding tiktoken uses for ``model``; ``KeyError`` when tiktoken does not know it."""
    import tiktoken.model

    try:
        return tiktoken.model.encoding_name_for_model(model)
    except KeyError as e:
        raise KeyError(
            f"Could not automatically map {model} to a tokeniser. "
            "Please use `tiktoken.get_encoding` to explicitly get the tokeniser you expect."
        ) from e


def encoding_for_model(model: str) -> tiktoken.Encoding:
    """What ``tiktoken.encoding_for_model(model)`` returns, built offline; ``KeyError`` for a
    model tiktoken does not know."""
    return get_encoding(encoding_name_for_model(model))


def _load_ranks(spec: _Spec) -> dict[bytes, int]:
    # Called under _lock. Encodings sharing a vocabulary (r50k_base and gpt2, the o200k pair)
    # share one decoded table.
    ranks = _ranks.get(spec.vocabulary)
    if ranks is None:
        data = _vocabulary_bytes(spec.vocabulary)
        digest = hashlib.sha256(data).hexdigest()
        if digest != spec.sha256:
            raise RuntimeError(
                f"parley's shipped {spec.vocabulary} vocabulary is damaged (SHA-256 {digest}, "
                f"expected {spec.sha256}); reinstall parley"
            )
        ranks = {}
        for line in data.splitlines():
            if line:
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
        _ranks[spec.vocabulary] = ranks
    return ranks


def _vocabulary_bytes(vocabulary: str) -> bytes:
    if vocabulary == "p50k_base":
        # p50k_base is r50k_base plus 24 tokens for runs of 2 to 25 spaces (ranks 50257-50280);
        # shipping them as a rule saves a second copy of the file. The SHA-256 check above
        # proves the rebuilt text is the published one.
        extra = b"".join(base64.b64encode(b" " * n) + b" %d\n" % (50255 + n) for n in range(2, 26))
        return _vocabulary_bytes("r50k_base") + extra
    packed = resources.files("parley") / "_vocab" / f"{vocabulary}.tiktoken.xz"
    return lzma.decompress(packed.read_bytes())
