"""The shape a newcomer relies on: layers that only import the layers above them, no import cycle,
an engine free of the UI, and pages that stay small."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "components"
LAYERS = ["core", "strategies", "tasks", "providers", "run", "report", "cli"]  # each may use those before it


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in ENGINE.rglob("*.py")}


def imports_of(path: Path, known: set[str]) -> set[str]:
    """Every components module this file imports, at any depth of the file (function-level too)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            if name in known:
                out.add(name)
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {m: imports_of(p, known) - {m, "components"} for m, p in mods.items()}


def test_no_module_imports_one_that_imports_it_back():
    g = graph()
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in g:
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def test_a_cycle_would_be_found(tmp_path):
    """The walker sees function-level imports (the kind that hid estimate <-> sweeps)."""
    a = tmp_path / "a.py"
    a.write_text("def f():\n    from components.run.plan import plan\n")
    assert imports_of(a, set(modules())) == {"components.run.plan"}


def test_layers_only_use_the_layers_above_them():
    bad = []
    for mod, deps in graph().items():
        parts = mod.split(".")
        if len(parts) < 2 or parts[1] not in LAYERS:
            continue
        mine = LAYERS.index(parts[1])
        for dep in deps:
            layer = dep.split(".")[1] if dep.count(".") else None
            if layer in LAYERS and LAYERS.index(layer) > mine:
                bad.append(f"{mod} -> {dep}")
    assert not bad, "a layer imports one below it: " + ", ".join(sorted(bad))


def test_the_engine_never_imports_the_ui():
    for path in ENGINE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert not any(n.split(".")[0] in ("streamlit", "webapp") for n in names), path


def test_import_components_works_and_is_cheap():
    code = ("import sys, components; assert 'pandas' not in sys.modules and 'streamlit' not in sys.modules; "
            "print(len(components.__all__))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) >= 30


def test_every_public_name_resolves():
    import components

    for name in components.__all__:
        assert getattr(components, name) is not None, name


def test_pages_stay_small():
    fat = {p.name: n for p in (ROOT / "webapp").glob("*/page.py")
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > 300}
    assert not fat, f"pages over 300 lines (move what computes into components/ or a helper): {fat}"
