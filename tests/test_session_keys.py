"""Every session-state key the app uses is declared in webapp/session/state.py (State), and only
webapp/session touches st.session_state and st.query_params: a walk over the code, and a walk over
every page in AppTest that finds no undeclared key in the session."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "webapp"
NOT_WIDGETS = {
    "sorted",
    "min",
    "max",
    "sort",
    "groupby",
    "sort_values",
    "sort_index",
}  # key= is a function there


def _state():
    from webapp.session.state import Family, State

    keys = {k for k, v in vars(State).items() if hasattr(v, "kind") and not isinstance(v, Family)}
    families = {k for k, v in vars(State).items() if isinstance(v, Family)}
    return keys, families


def _annotated_keys(func: ast.AST) -> set[str]:
    """Names a function declares as `Key` (a parameter `k: Key` or `k: Key = State.x(...)`)."""
    out = set()
    args = getattr(func, "args", None)
    if args is not None:
        for a in [*args.args, *args.kwonlyargs]:
            if isinstance(a.annotation, ast.Name) and a.annotation.id == "Key":
                out.add(a.arg)
    for node in ast.walk(func):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(node.annotation, ast.Name)
            and node.annotation.id == "Key"
        ):
            out.add(node.target.id)
    return out


def _call_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def key_breaches(app: Path = APP) -> list[str]:
    """Every place outside webapp/session that uses st.session_state or st.query_params, and every
    widget `key=` that is not a declared State key: `State.name.key`, `State.family(...).key`, or
    `k.key` for a `k: Key` of the function."""
    keys, families = _state()
    bad = []
    for path in sorted(app.rglob("*.py")):
        if path.is_relative_to(app / "session"):
            continue
        rel = path.relative_to(app.parent)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("session_state", "query_params"):
                bad.append(f"{rel}:{node.lineno}: st.{node.attr} outside webapp/session")
            if isinstance(node, ast.Name) and node.id == "session_state":
                bad.append(f"{rel}:{node.lineno}: session_state outside webapp/session")
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or _call_name(node) in NOT_WIDGETS:
                continue
            func = parents.get(node)
            while func is not None and not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                func = parents.get(func)
            typed = _annotated_keys(func) if func is not None else set()
            for kw in node.keywords:
                if kw.arg != "key" or isinstance(kw.value, ast.Lambda):
                    continue
                v = kw.value
                ok = (
                    isinstance(v, ast.Attribute)
                    and v.attr == "key"
                    and (
                        (
                            isinstance(v.value, ast.Attribute)
                            and isinstance(v.value.value, ast.Name)
                            and v.value.value.id == "State"
                            and v.value.attr in keys
                        )
                        or (
                            isinstance(v.value, ast.Call)
                            and isinstance(v.value.func, ast.Attribute)
                            and isinstance(v.value.func.value, ast.Name)
                            and v.value.func.value.id == "State"
                            and v.value.func.attr in families
                        )
                        or (isinstance(v.value, ast.Name) and v.value.id in typed)
                    )
                )
                if not ok:
                    bad.append(f"{rel}:{node.lineno}: key={ast.unparse(v)} is not a declared State key")
    return sorted(set(bad))


def test_only_session_touches_the_session_and_every_key_is_declared():
    assert not key_breaches(), "\n".join(key_breaches())


def test_the_walk_finds_an_undeclared_key(tmp_path):
    app = tmp_path / "webapp"
    (app / "results").mkdir(parents=True)
    (app / "results" / "page.py").write_text(
        "import streamlit as st\nfrom webapp.session import State\n"
        "st.session_state['res_x'] = 1\n"
        "st.button('a', key='res_go')\n"
        "st.button('b', key=State.res_not_declared.key)\n"
        "st.button('c', key=State.res_trial_table.key)\n"
        "sorted([1], key=lambda v: v)\n"
    )
    found = key_breaches(app)
    assert len(found) == 3, found
    assert any("st.session_state outside" in f for f in found)
    assert any("key='res_go'" in f for f in found) and any("res_not_declared" in f for f in found)


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs.sqlite"))
    from tests.webapp.runs_fixture import fill

    fill(tmp_path / "runs.sqlite")


def test_every_page_leaves_only_declared_keys_in_the_session(store):
    """The same rule at run time: the whole app, page after page, in one session."""
    from streamlit.testing.v1 import AppTest

    from webapp.session.state import State

    at = AppTest.from_file(str(APP / "app.py"), default_timeout=120)
    at.run()
    for page in ("playground", "lesson", "experiments", "results", "compare", "papers"):
        at.switch_page(f"{page}/page.py").run()
        assert not at.exception, (page, at.exception)
    keys = list(at.session_state._state.filtered_state)  # AppTest's view of the session
    assert len(keys) > 50
    assert not [k for k in keys if not State.declared(k)]
