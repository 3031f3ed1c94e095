"""The Playground's live run goes through the user's run store: a repeat is answered from the cache."""

from components.core.documents import make_document
from components.providers.base import ModelSpec
from components.run.store import RunStore
from webapp import live
from webapp.sidebar import Choice


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
    monkeypatch.setenv("LITM_DB", str(tmp_path / "user.sqlite"))
    doc = make_document(["Alpha text.", "The mill was built by Ada Brennock.", "Gamma text."], gold=[2])
    lines = []
    live.execute(doc, "Who built the mill?", ("Ada Brennock",), "icr", {"k": 2},
                 Choice(ModelSpec("fake", "fake-model"), None), on_call=lambda p, c: lines.append(live.call_line(p, c)))
    # ICR: retrieval then answer, each reported before and after
    assert len(lines) == 4
    assert lines[0].startswith("retrieve") and "sending" in lines[0]
    assert "answered" in lines[1] and "answered" in lines[3]
