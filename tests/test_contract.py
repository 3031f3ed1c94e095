"""CONTRACT.md is checked, not trusted: every module it lists exists, every function, class or constant it
names under a module (`name(...)` or `NAME`) is defined there, and every signature it writes out
(`name(a, b, c=1)`) matches the code's: each parameter named exists, a record (a class) lists every field,
and a function every parameter without a default (unless it writes `...`). So the document cannot drift
from the code unnoticed."""

from __future__ import annotations

import importlib
import inspect
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


NAME = re.compile(r"`([A-Za-z_][A-Za-z_0-9]*)\(")


def signatures(text: str) -> list[tuple[str, str]]:
    """(name, its parameters as written) of every `name(...)` in a bullet, the parentheses balanced."""
    out = []
    for m in NAME.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        if text[m.end() : i - 1].strip():
            out.append((m.group(1), text[m.end() : i - 1]))
    return out


def written(args: str) -> tuple[list[str], bool]:
    """The parameter names written ("a, *, b=1, **kw" -> [a, b, kw]) and whether `...` stands for more."""
    items, depth, cur = [], 0, ""
    for ch in args:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    names = [x.split("=")[0].strip().lstrip("*").strip() for x in items]
    return [n for n in names if re.fullmatch(r"[A-Za-z_]\w*", n)], "..." in args


def drift(obj, args: str) -> str:
    """What differs between a signature as written and the object's ("" when nothing does)."""
    try:
        real = [p for p in inspect.signature(obj).parameters.values() if p.name not in ("self", "cls")]
    except (TypeError, ValueError):  # a builtin without a signature: nothing to check
        return ""
    names, more = written(args)
    open_kw = any(p.kind is p.VAR_KEYWORD for p in real)
    unknown = [n for n in names if n not in {p.name for p in real} and not open_kw]
    whole = inspect.isclass(obj)  # a record lists every field
    missing = [
        p.name
        for p in real
        if not more
        and p.name not in names
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        and (whole or p.default is p.empty)
    ]
    return (f"no parameter {unknown} " if unknown else "") + (f"lacks {missing}" if missing else "")


def test_every_signature_written_matches_the_code():
    bad = []
    for dotted, text in entries():
        mod, _ = module_of(dotted)
        if mod is None:
            continue
        for name, args in signatures(text):
            obj = getattr(mod, name, None)
            if obj is None:  # a method: of the module's class that has it
                obj = next(
                    (
                        getattr(c, name)
                        for c in vars(mod).values()
                        if isinstance(c, type) and hasattr(c, name)
                    ),
                    None,
                )
            if callable(obj) and (why := drift(obj, args)):
                bad.append(f"{mod.__name__}.{name}({args}): {why}")
    assert not bad, "\n".join(bad)


def test_the_signature_check_finds_a_drift():
    from dataclasses import dataclass

    @dataclass
    class Record:
        a: int
        b: str = ""

    def fn(x, y, z=1):
        return x

    assert drift(Record, "a") == "lacks ['b']"  # a record lists every field
    assert drift(fn, "x") == "lacks ['y']"  # a function its parameters without a default
    assert drift(fn, "x, y, w") == "no parameter ['w'] "
    assert drift(fn, "x, ...") == "" and drift(fn, "x, y") == ""
