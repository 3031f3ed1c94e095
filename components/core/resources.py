"""Where the files that ship with LITM Explorer are, found through importlib.resources: the same code
works in a checkout and in an installed wheel (nothing is found relative to the checkout).

- `sample_path(*parts)`: sample_docs/ (documents, task sets, shipped runs and their configs). It sits
  at the top of the repository and is installed as the data package `sample_docs`.
- `package_path(*parts)`: files inside the `components` package (prompt templates, published tables,
  prices, the haystack text).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def sample_path(*parts: str) -> Path:
    """A path inside sample_docs/, e.g. sample_path("tasks", "facts.jsonl")."""
    try:
        root = files("sample_docs")
    except ModuleNotFoundError as exc:
        raise LookupError(
            "the bundled samples (the sample_docs package) are not installed: reinstall "
            "litm-explorer (in a checkout: make install)"
        ) from exc
    return Path(str(root)).joinpath(*parts)


def package_path(*parts: str) -> Path:
    """A path inside the components package, e.g. package_path("data", "prices.json")."""
    return Path(str(files("components"))).joinpath(*parts)
