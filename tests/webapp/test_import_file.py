"""Results' import (services.stores.import_file): the trials of an export land in the user's store and
are counted from the store, not read back whole."""

from components.run.store import RunStore
from tests.test_store import trial


def test_import_file_counts_the_trials_it_added(tmp_path, monkeypatch):
    from webapp.services import stores

    src = RunStore(tmp_path / "src.sqlite")
    sid = src.open_sweep("class run", {})
    for key in ("a", "b", "c"):
        src.put_trial(sid, trial(key))
    path = src.export_trials(tmp_path / "out.csv", "csv")
    src.close()
    monkeypatch.setenv("LITM_DB", str(tmp_path / "user.sqlite"))
    assert stores.import_file("out.csv", path.read_bytes(), "me") == (3, 1)
    with RunStore(tmp_path / "user.sqlite", readonly=True) as store:
        frame = store.trials_frame()
    assert sorted(frame["trial_key"]) == ["a", "b", "c"]
