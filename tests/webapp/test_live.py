"""The Playground's live run goes through the user's run store: a repeat is answered from the cache."""

from components.core.documents import make_document
from components.providers.base import ModelSpec
from components.run.store import RunStore
from components.strategies import get_strategy
from webapp.services import live
from webapp.services.models import Choice


def test_live_runs_are_cached_in_the_user_store(tmp_path, monkeypatch):
    db = tmp_path / "user.sqlite"
    monkeypatch.setenv("LITM_DB", str(db))
    doc = make_document(["Alpha text.", "The mill was built by Ada Brennock.", "Gamma text."], gold=[2])
    choice = Choice(ModelSpec("fake", "fake-model"), None)
    first = live.execute(doc, "Who built the mill?", ("Ada Brennock",), "baseline", {}, choice)
    second = live.execute(doc, "Who built the mill?", ("Ada Brennock",), "baseline", {}, choice)
    assert not any("cache" in n for n in first.notes)
    assert any("from the cache" in n for n in second.notes)
    assert second.answer == first.answer
    store = RunStore(db)
    try:
        assert store.db.execute("SELECT COUNT(*) FROM calls").fetchone()[0] == 1
    finally:
        store.close()


def test_live_run_reports_each_call(tmp_path, monkeypatch):
    assert "has 2 runs ahead of yours" in live.call_line(
        type("P", (), {"label": "answer", "stage": 1, "tokens": 9})(), None, 2
    )
    monkeypatch.setenv("LITM_DB", str(tmp_path / "user.sqlite"))
    doc = make_document(["Alpha text.", "The mill was built by Ada Brennock.", "Gamma text."], gold=[2])
    lines = []
    live.execute(
        doc,
        "Who built the mill?",
        ("Ada Brennock",),
        "icr",
        {"k": 2},
        Choice(ModelSpec("fake", "fake-model"), None),
        on_call=lambda p, c: lines.append(live.call_line(p, c)),
    )
    # ICR: retrieval then answer, each reported before and after
    assert len(lines) == 4
    assert lines[0].startswith("retrieve") and "sending" in lines[0]
    assert "answered" in lines[1] and "answered" in lines[3]


def test_the_verdict_is_the_stored_trials_primary_metric(tmp_path, monkeypatch):
    """A sweep stores a trial; the Playground runs the same document, question and strategy: its verdict
    and the stored trial's primary metric (which Results reads) are the same value."""
    from components.report.sweeps import primary_values
    from components.run.config import SweepConfig
    from components.run.plan import plan, trial_document
    from components.run.runner import run_sweep
    from tests.support import facts_file

    monkeypatch.setenv("LITM_DB", str(tmp_path / "user.sqlite"))
    tasks = facts_file(tmp_path, 3)
    for strategy in ("litm", "baseline", "icr"):  # subspan EM, fuzzy, fuzzy after retrieval
        cfg = SweepConfig.from_dict(
            {
                "sweep": {
                    "name": f"v-{strategy}",
                    "tasks": str(tasks),
                    "lengths": [600],
                    "positions": [0.0, 1.0],
                    "strategies": [strategy],
                    "params": {"k": 2} if strategy == "icr" else {},
                    "models": [{"provider": "fake", "model": "fake-model"}],
                }
            }
        )
        store = RunStore(tmp_path / "sweeps.sqlite")
        run_sweep(cfg, store)
        stored = store.trials_frame(f"v-{strategy}")
        store.close()
        stored["primary"] = primary_values(stored)
        assert set(stored["metric"]) == {get_strategy(strategy).metric}
        for spec in plan(cfg):
            row = stored[stored["trial_key"] == spec.key].iloc[0]
            doc = trial_document(spec, cfg.encoding, cfg.all_tasks().tasks).document
            view = live.execute(
                doc,
                spec.task.question,
                spec.task.answers,
                strategy,
                dict(spec.params),
                Choice(ModelSpec("fake", "fake-model"), None),
            )
            assert view.metric == row["metric"]
            assert view.correct == bool(row["primary"]), (strategy, spec.task.id, view.answer, row["answer"])


def test_run_buttons_are_keyed_per_server_process_so_a_reconnecting_tab_never_refires_a_run():
    """A tab still open when the server restarts reconnects and resends its widgets' state, a clicked Run
    included. Streamlit's widget id carries the key, and a run button's key carries a token of the server
    process (State BOOT): the new server never draws a widget of the old id, so the old click is dropped."""
    import subprocess
    import sys
    from pathlib import Path

    from webapp.session.state import BOOT, State

    code = "from webapp.session.state import State; print(State.run_go.key, State.positions_go.key)"
    root = Path(__file__).resolve().parents[2]
    keys = [
        subprocess.run(
            [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120, check=True
        ).stdout.split()
        for _ in range(2)
    ]
    assert keys[0] != keys[1] and all(k[0].startswith("run_go_") for k in keys)  # a new token per process
    assert State.run_go.key == f"run_go_{BOOT}" and State.positions_more.key == f"positions_more_{BOOT}"
    assert State.declared(State.run_go.key) and not State.declared("run_go_00000000")
