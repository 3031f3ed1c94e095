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
    code = (
        "import sys, components; assert 'pandas' not in sys.modules and 'streamlit' not in sys.modules; "
        "print(len(components.__all__))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) >= 30


def test_every_public_name_resolves():
    import components

    for name in components.__all__:
        assert getattr(components, name) is not None, name


# --- the app: one package per page, and the layers inside webapp/ ----------------------------------------

APP = ROOT / "webapp"
PAGE_PACKAGES = {"home", "playground", "lesson", "experiments", "results", "compare", "papers"}
ENTRY_POINTS = {"app.py", "serve.py", "__init__.py"}  # webapp/app.py (st.navigation) and webapp/serve.py
# what each part of webapp/ may import of the app (a page package also imports itself)
MAY_USE = {"session": {"session"}, "services": {"services", "session"}, "ui": {"ui", "session", "services"}}
PAGE_USES = {"ui", "session", "services"}


def app_part(path: Path, app: Path = APP) -> str:
    """'results' for webapp/results/ucurve.py, 'entry' for webapp/app.py, '?' for anything else."""
    rel = path.relative_to(app)
    if len(rel.parts) == 1:
        return "entry" if rel.name in ENTRY_POINTS else "?"
    return rel.parts[0] if rel.parts[0] in PAGE_PACKAGES | set(MAY_USE) else "?"


def imported_modules(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every import in a file, at any depth; `from webapp import session` gives
    ("webapp.session", []), so a package imported by name counts as that package."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "webapp":
                out += [(f"webapp.{a.name}", []) for a in node.names]
            else:
                out.append((node.module, [a.name for a in node.names]))
    return out


def import_rule_breaches(app: Path = APP) -> list[str]:
    """Where webapp/ breaks its layout: a module outside a page package, ui, session, services and the
    entry points; a page package importing another page's modules; ui, session or services importing
    what they may not; anything but services (and the entry points) importing components/."""
    bad = []
    for path in sorted(app.rglob("*.py")):
        rel = path.relative_to(app.parent)
        if "pages" in path.relative_to(app).parts[:-1]:
            bad.append(f"{rel}: a folder named pages/ switches Streamlit to its old pages mode")
        part = app_part(path, app)
        if part == "?":
            bad.append(f"{rel}: outside a page package, ui, session, services and the entry points")
            continue
        allowed = PAGE_USES | {part} if part in PAGE_PACKAGES else MAY_USE.get(part)
        for module, _ in imported_modules(path):
            top, _, rest = module.partition(".")
            if top == "components" and part not in ("services", "entry"):
                bad.append(f"{rel} imports {module}: only webapp/services reaches components/")
            if top == "webapp" and allowed is not None:
                used = rest.split(".")[0]
                if used and used not in allowed:
                    bad.append(f"{rel} ({part}) imports {module}")
    return bad


def private_name_breaches(app: Path = APP) -> list[str]:
    """A module reaching another module's private name: `from x import _name` or `alias._name` (in webapp/,
    or in components/ with app=ENGINE)."""
    bad = []
    for path in sorted(app.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        bad.append(f"{path.relative_to(app.parent)}: from {node.module} import {a.name}")
                    if node.module.split(".")[0] in ("webapp", "components"):
                        aliases.add(a.asname or a.name)
            elif isinstance(node, ast.Import):
                aliases |= {
                    (a.asname or a.name).split(".")[0]
                    for a in node.names
                    if a.name.split(".")[0] in ("webapp", "components")
                }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
            ):
                bad.append(f"{path.relative_to(app.parent)}:{node.lineno}: {node.value.id}.{node.attr}")
    return bad


SQL = __import__("re").compile(
    r"\b(SELECT\b.*\bFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|"
    r"CREATE\s+TABLE)\b"
)


def sql_breaches(roots=(APP, ENGINE)) -> list[str]:
    """SQL text anywhere but components/run (the store's own modules)."""
    bad = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if path.is_relative_to(ENGINE / "run"):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
                    bad.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return bad


def test_webapp_keeps_its_layout_and_import_rule():
    assert not import_rule_breaches(), "\n".join(import_rule_breaches())


def test_no_module_reaches_another_modules_private_name():
    assert not private_name_breaches(), "\n".join(private_name_breaches())


def test_no_engine_module_reaches_another_modules_private_name():
    """components/ too: a helper another module needs is public, named for what it does."""
    assert not private_name_breaches(ENGINE), "\n".join(private_name_breaches(ENGINE))


def test_the_private_name_rule_finds_a_breach_in_the_engine(tmp_path):
    engine = tmp_path / "components"
    (engine / "run").mkdir(parents=True)
    (engine / "run" / "batch.py").write_text("from components.run.runner import _key_for\n")
    (engine / "report").mkdir()
    (engine / "report" / "likelihood.py").write_text(
        "from components.report import shape as shapes\nx = shapes._num(4.0)\nok = shapes.plain_number(4.0)\n"
    )
    found = private_name_breaches(engine)
    assert found == [
        "components/report/likelihood.py:2: shapes._num",
        "components/run/batch.py: from components.run.runner import _key_for",
    ]


def test_no_sql_outside_the_run_store():
    assert not sql_breaches(), sql_breaches()


def test_every_page_package_has_its_page_and_the_app_lists_them():
    text = (APP / "app.py").read_text(encoding="utf-8")
    for package in PAGE_PACKAGES:
        assert (APP / package / "page.py").is_file(), package
        assert f'("{package}", ' in text, f"webapp/app.py does not list {package}"


def test_the_rule_finds_a_breach(tmp_path):
    """The walkers see a page importing another page, a flat module, a private name and raw SQL."""
    app = tmp_path / "webapp"
    (app / "results").mkdir(parents=True)
    (app / "compare").mkdir()
    (app / "results" / "page.py").write_text(
        "from webapp.compare import parts\nfrom components.report import charts\nx = charts._safe('a')\n"
    )
    (app / "compare" / "parts.py").write_text("from webapp.services.stores import _private\n")
    (app / "runs.py").write_text("Q = 'SELECT owner FROM sweeps WHERE name = ?'\n")
    found = "\n".join(import_rule_breaches(app))
    assert "results/page.py (results) imports webapp.compare" in found
    assert "only webapp/services reaches components/" in found
    assert "webapp/runs.py: outside a page package" in found
    assert len(private_name_breaches(app)) == 2
    assert sql_breaches((app,)) == ["webapp/runs.py:1"]


# --- one home per list: the cell's columns and the metrics' columns are written out once -----------------

# where each list is written out: its home (the one definition everything else derives from)
LIST_HOMES = {"cell": "components/core/cells.py", "metric": "components/core/metrics.py"}
# `litm results`' columns: an output order scripts read by position (append only), not a list of cells or
# metrics: it names them where each joined the output
FROZEN_ORDERS = {("components/run/schema.py", "RESULT_COLUMNS")}


def literal_lists(roots=(ENGINE, APP)) -> list[str]:
    """Where a list, tuple, set or dict's keys written out as literals holds every cell column
    (core.cells.Cell.columns) or three or more metric columns (core.metrics), outside their homes."""
    from components.core.cells import Cell
    from components.core.metrics import BY_COLUMN

    cell, metrics = set(Cell.columns), set(BY_COLUMN)
    bad = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root.parent).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"))
            named = {
                id(node.value): t.id
                for node in ast.walk(tree)
                if isinstance(node, ast.Assign)
                for t in node.targets
                if isinstance(t, ast.Name)
            }
            for node in ast.walk(tree):
                if isinstance(node, ast.List | ast.Tuple | ast.Set):
                    items = node.elts
                elif isinstance(node, ast.Dict):
                    items = [k for k in node.keys if k is not None]
                else:
                    continue
                words = {e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)}
                if (rel, named.get(id(node))) in FROZEN_ORDERS:
                    continue
                if cell <= words and rel != LIST_HOMES["cell"]:
                    bad.append(f"{rel}:{node.lineno}: the cell columns (use Cell.columns)")
                if len(words & metrics) >= 3 and rel != LIST_HOMES["metric"]:
                    bad.append(
                        f"{rel}:{node.lineno}: metric columns {sorted(words & metrics)} (derive from METRICS)"
                    )
    return bad


def test_no_column_or_metric_list_is_written_out_outside_its_home():
    assert not literal_lists(), "\n".join(literal_lists())


def test_the_literal_list_rule_finds_a_retyped_list(tmp_path):
    app = tmp_path / "webapp"
    (app / "results").mkdir(parents=True)
    (app / "results" / "page.py").write_text(
        'VIEW = ["trial_id", "length", "position", "documents", "gold_index"]\n'
        'METRICS = ("score", "subspan_em", "exact")\n'
        'OK = ["length", "position"]\n'
    )
    assert literal_lists((app,)) == [
        "webapp/results/page.py:1: the cell columns (use Cell.columns)",
        "webapp/results/page.py:2: metric columns ['exact', 'score', 'subspan_em'] (derive from METRICS)",
    ]
