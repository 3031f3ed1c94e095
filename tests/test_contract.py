"""CONTRACT.md is checked, not trusted: every module it lists exists, and every function, class or
constant it names under a module (`name(...)` or `NAME`) is defined there, so the document cannot drift
from the code unnoticed."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENTRY = re.compile(
    r"^- `([a-z_]+(?:\.[A-Za-z_0-9]+)+)"
)  # "- `core.tokens`: ...", "- `run.store.RunStore(..."
CALLED = re.compile(r"`([A-Za-z_][A-Za-z_0-9]*)\(")  # `tokenizer(encoding=...)`; `layer.module.name(` is not
# one of them: a name qualified by another module is that module's, and is not checked here
CONSTANT = re.compile(r"`([A-Z][A-Z_0-9]{2,})`")  # `METRICS`


def entries() -> list[tuple[str, str]]:
    """(module, its bullet's text) for each '- `layer.module`' bullet, continuation lines joined."""
    out: list[tuple[str, str]] = []
    joining = False
    for line in (ROOT / "CONTRACT.md").read_text(encoding="utf-8").splitlines():
        m = ENTRY.match(line)
        if m:
            out.append((m.group(1), line))
            joining = True
        elif joining and line.startswith("  "):
            out[-1] = (out[-1][0], out[-1][1] + " " + line.strip())
        else:
            joining = False  # another kind of bullet, a heading, a blank line: that entry has ended
    return out


def test_every_listed_module_exists_and_defines_what_it_names():
    found = entries()
    assert len(found) >= 40, len(found)  # the document lists the modules of every layer
    missing = []
    for dotted, text in found:
        mod, rest = module_of(dotted)
        if mod is None:
            missing.append(f"{dotted}: no such module")
            continue
        obj = mod
        for part in rest:  # the entry's own name: run.config.SweepConfig.from_toml
            obj = getattr(obj, part, None)
        if obj is None:
            missing.append(f"{dotted}: not defined")
        names = set(CALLED.findall(text)) | set(CONSTANT.findall(text))
        missing += [
            f"{mod.__name__}.{n}"
            for n in sorted(names)
            if not hasattr(mod, n)
            and not any(hasattr(c, n) for c in vars(mod).values() if isinstance(c, type))
        ]
    assert not missing, missing


def module_of(dotted: str):
    """(the longest components.<prefix> module of a dotted name, the attribute path after it)."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            return importlib.import_module("components." + ".".join(parts[:i])), parts[i:]
        except ModuleNotFoundError:
            continue
    return None, parts
