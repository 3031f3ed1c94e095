"""A store's browse read, kept for its current version: what the app's server reads while it starts
(webapp/serve.py) and the first page then finds read."""

import threading
from pathlib import Path

from components.run import reader
from components.run.store import RunStore, store_paths
from tests.test_store import trial


def new_store(path: Path, n: int) -> RunStore:
    store = RunStore(path)
    sid = store.open_sweep("s", {"name": "s"})
    for i in range(n):
        store.put_trial(sid, trial(f"k{i}"))
    return store


def test_a_kept_read_is_given_again_until_the_store_changes(tmp_path, monkeypatch):
    path = tmp_path / "runs.sqlite"
    store = new_store(path, 3)
    reads = []
    real = reader.browse
    monkeypatch.setattr(reader, "browse", lambda p, ro=True: reads.append(p) or real(p, ro))
    first = reader.browse_kept(str(path), reader.store_version(path), False)
    again = reader.browse_kept(str(path), reader.store_version(path), False)
    assert again is first and len(reads) == 1 and len(first[0]) == 3
    store.put_trial(store.sweep_id("s"), trial("k9"))  # a new trial: a new version, read again
    changed = reader.browse_kept(str(path), reader.store_version(path), False)
    assert len(reads) == 2 and len(changed[0]) == 4


def test_callers_arriving_during_a_read_wait_for_it_and_do_not_read_again(tmp_path, monkeypatch):
    path = tmp_path / "runs.sqlite"
    new_store(path, 2)
    started, release, reads = threading.Event(), threading.Event(), []
    real = reader.browse

    def slow(p, ro=True):
        reads.append(p)
        started.set()
        release.wait(10)
        return real(p, ro)

    monkeypatch.setattr(reader, "browse", slow)
    got = []
    version = reader.store_version(path)
    first = threading.Thread(target=lambda: got.append(reader.browse_kept(str(path), version, False)))
    first.start()
    started.wait(10)
    second = threading.Thread(target=lambda: got.append(reader.browse_kept(str(path), version, False)))
    second.start()
    release.set()
    first.join(10)
    second.join(10)
    assert len(reads) == 1 and len(got) == 2 and got[0] is got[1]


def test_store_paths_are_the_users_then_the_shipped_ones(tmp_path, monkeypatch):
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    for name in ("b.sqlite", "a.sqlite"):
        new_store(shipped / name, 1).close()
    monkeypatch.setenv("LITM_SHIPPED_RUNS", str(shipped))
    monkeypatch.setenv("LITM_DB", str(tmp_path / "mine.sqlite"))
    assert store_paths() == [(True, shipped / "a.sqlite"), (True, shipped / "b.sqlite")]  # no user store yet
    new_store(tmp_path / "mine.sqlite", 1).close()
    assert store_paths()[0] == (False, tmp_path / "mine.sqlite")
    monkeypatch.setenv("LITM_DB", str(shipped / "a.sqlite"))  # the user's store is a shipped one: listed once
    assert store_paths() == [(False, shipped / "a.sqlite"), (True, shipped / "b.sqlite")]
