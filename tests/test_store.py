"""The run store: migrations, the call cache, trials exactly once, frames, export and import."""

import sqlite3
import threading

import pytest

from components.core.completion import Completion
from components.providers.base import ModelSpec
from components.run.store import MIGRATIONS, RunStore

CONTRACT_COLUMNS = [
    "sweep",
    "task",
    "strategy",
    "model",
    "length",
    "position",
    "actual_length",
    "actual_position",
    "answer",
    "score",
    "error",
    "calls",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "params",
    "gold_pages",
    "retrieved_pages",
    "subspan_em",
    "exact",
    "page_recall",
    "page_precision",
    "latency_s",
    "parse_error",
]


def trial(key="k1", **kw):
    row = {
        "trial_key": key,
        "task": "t1",
        "question": "Q?",
        "answers": ["a"],
        "strategy": "icr",
        "params": '{"k": 2}',
        "model": "fake:fake",
        "length": 300,
        "position": 0.5,
        "actual_length": 310,
        "actual_position": 150,
        "gold_pages": [2],
        "retrieved_pages": [2, 3],
        "cited_pages": [2],
        "answer": "a",
        "raw_answer": "Answer: a\nPage: 2",
        "parse_error": None,
        "score": 1.0,
        "subspan_em": 1.0,
        "exact": 1.0,
        "page_recall": 1.0,
        "page_precision": 0.5,
        "error": None,
        "calls": 2,
        "cached_calls": 0,
        "input_tokens": 500,
        "output_tokens": 20,
        "cost_usd": 0.0,
        "latency_s": 0.2,
    }
    row.update(kw)
    return row


@pytest.fixture
def store(tmp_path):
    return RunStore(tmp_path / "runs" / "litm.sqlite")


def test_migrations_numbered_and_idempotent(store, tmp_path):
    assert store.schema_version == len(MIGRATIONS)
    again = RunStore(store.path)
    assert again.schema_version == len(MIGRATIONS)
    db = sqlite3.connect(store.path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert [r[0] for r in db.execute("SELECT version FROM schema_version")] == list(
        range(1, len(MIGRATIONS) + 1)
    )


def test_call_cache_round_trip(store):
    spec = ModelSpec("fake", "m")
    store.put_call(
        "key1",
        spec,
        [{"role": "user", "content": "hi"}],
        {"max_tokens": 5},
        Completion("hello", 3, 1, 0.25, "m", finish_reason="stop"),
    )
    row = store.get_call("key1")
    assert row["response"] == "hello" and row["input_tokens"] == 3 and row["provider"] == "fake"
    assert store.get_call("nope") is None


def test_trial_exists_once_and_upserts(store):
    sid = store.open_sweep("s", {"a": 1})
    t1 = store.put_trial(sid, trial(error="boom", score=None), ["c1"])
    t2 = store.put_trial(sid, trial(), ["c1", "c2"])
    assert t1 == t2
    frame = store.trials_frame(sid)
    assert len(frame) == 1 and frame.iloc[0]["error"] is None and frame.iloc[0]["score"] == 1.0
    n = store.db.execute("SELECT COUNT(*) FROM trial_calls WHERE trial_id = ?", (t1,)).fetchone()[0]
    assert n == 2
    assert store.trial_keys(sid) == {"k1"}


def test_frames_have_contract_columns(store):
    sid = store.open_sweep("s", {})
    store.put_trial(sid, trial())
    store.finish_sweep(sid, "done")
    frame = store.trials_frame("s")
    assert set(CONTRACT_COLUMNS) <= set(frame.columns)
    row = frame.iloc[0]
    assert row["sweep"] == "s" and row["gold_pages"] == [2] and row["retrieved_pages"] == [2, 3]
    sweeps = store.sweeps_frame()
    assert sweeps.iloc[0]["status"] == "done" and sweeps.iloc[0]["trials"] == 1
    with pytest.raises(LookupError):
        store.trials_frame("no such sweep")


def test_calls_for_trial(store):
    spec = ModelSpec("fake", "m")
    for k in ("c1", "c2"):
        store.put_call(k, spec, [{"role": "user", "content": k}], {}, Completion(f"r-{k}", 1, 1, 0.0))
    tid = store.put_trial(store.open_sweep("s", {}), trial(), ["c2", "c1"])
    calls = store.calls_for_trial(tid)
    assert [c["response"] for c in calls] == ["r-c2", "r-c1"]
    assert calls[0]["messages"] == [{"role": "user", "content": "c2"}]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_export_import_round_trip(store, tmp_path, fmt):
    sid = store.open_sweep("class run", {})
    store.put_trial(sid, trial("a"))
    store.put_trial(sid, trial("b", error="timeout", score=None, answer="", retrieved_pages=None))
    path = store.export_trials(tmp_path / f"out.{fmt}", fmt)
    other = RunStore(tmp_path / "other.sqlite")
    ids = other.import_trials(path)
    assert len(ids) == 1
    sweeps = other.sweeps_frame()
    assert sweeps.iloc[0]["imported"] == 1 and "class run" in sweeps.iloc[0]["name"]
    got = other.trials_frame(ids[0]).sort_values("trial_key").reset_index(drop=True)
    assert list(got["trial_key"]) == ["a", "b"]
    assert got.loc[0, "gold_pages"] == [2] and got.loc[0, "score"] == 1.0
    assert got.loc[1, "error"] == "timeout" and got.loc[1, "score"] != got.loc[1, "score"]  # NaN: not scored
    assert other.import_trials(path) != ids  # a second import is a second sweep


def test_reader_while_writer(store):
    sid = store.open_sweep("s", {})
    errors = []

    def read():
        reader = RunStore(store.path)
        try:
            for _ in range(50):
                reader.trials_frame()
        except Exception as exc:  # pragma: no cover
            errors.append(exc)

    t = threading.Thread(target=read)
    t.start()
    for i in range(200):
        store.put_trial(sid, trial(f"k{i}"))
    t.join()
    assert not errors and len(store.trials_frame()) == 200


def test_many_first_opens_of_a_new_store_at_once(tmp_path):
    """The app's page and a sweep thread may open a new store at the same moment; switching it to WAL
    must not fail with 'database is locked' (it did, about one time in eight, before the retry)."""
    import threading

    from components.run.store import RunStore

    failures = []
    for rep in range(60):
        path = tmp_path / f"s{rep}.sqlite"
        barrier = threading.Barrier(6)

        def open_it(path=path, barrier=barrier):
            barrier.wait()
            try:
                store = RunStore(path)
                store.sweeps_frame()
                store.close()
            except Exception as exc:  # collected and asserted below
                failures.append(repr(exc))

        threads = [threading.Thread(target=open_it) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert failures == []


def test_schema_5_adds_prompt_cache_and_likelihood_columns(store):
    calls = {r[1] for r in store.db.execute("PRAGMA table_info(calls)")}
    trials = {r[1] for r in store.db.execute("PRAGMA table_info(trials)")}
    assert {"cached_input_tokens", "cache_write_tokens"} <= calls
    assert {
        "cached_input_tokens",
        "cache_write_tokens",
        "answer_logprob",
        "answer_logprob_mean",
        "answer_logprob_tokens",
    } <= trials


def test_a_store_as_a_context_manager_closes_every_connection(tmp_path):
    """`with RunStore(p) as store:` closes the connections it opened, in every thread that used it."""
    with RunStore(tmp_path / "cm.sqlite") as store:
        mine = store.db
        theirs = []
        t = threading.Thread(target=lambda: theirs.append(store.db))
        t.start()
        t.join()
        assert theirs[0] is not mine
        sid = store.open_sweep("s", {})
    for conn in (mine, theirs[0]):
        with pytest.raises(sqlite3.ProgrammingError):  # "Cannot operate on a closed database"
            conn.execute("SELECT 1")
    with RunStore(tmp_path / "cm.sqlite") as again:  # what was written is there
        assert again.sweep_id("s") == sid


def test_a_transaction_commits_or_rolls_back_as_a_whole(store):
    with store.transaction(immediate=True) as db:
        db.execute("INSERT INTO sweeps (name, config, status) VALUES ('kept', '{}', 'done')")
        db.execute("INSERT INTO sweeps (name, config, status) VALUES ('kept too', '{}', 'done')")
    with pytest.raises(RuntimeError, match="half way"):
        with store.transaction(immediate=True) as db:
            db.execute("INSERT INTO sweeps (name, config, status) VALUES ('lost', '{}', 'done')")
            raise RuntimeError("half way")
    with pytest.raises(sqlite3.IntegrityError):  # a failing statement undoes the block's earlier ones
        with store.transaction() as db:
            db.execute("INSERT INTO sweeps (name, config, status) VALUES ('lost too', '{}', 'done')")
            db.execute("INSERT INTO sweeps (name, config, status) VALUES ('kept', '{}', 'done')")
    names = {r[0] for r in store.db.execute("SELECT name FROM sweeps")}
    assert names == {"kept", "kept too"}
    assert not store.db.in_transaction  # nothing left open
    sid = store.open_sweep("after", {})  # the store writes on as before
    assert store.sweep_id("after") == sid


def test_a_trial_that_fails_to_write_leaves_nothing_behind(store):
    """put_trial is one transaction: a trial whose call keys cannot be written is not stored either."""
    sid = store.open_sweep("s", {})
    with pytest.raises(sqlite3.Error):
        store.put_trial(sid, trial("bad"), call_keys=[object()])  # not a value SQLite can store
    assert store.trial_keys(sid) == set()
    store.put_trial(sid, trial("good"), call_keys=["c1"])
    assert store.trial_keys(sid) == {"good"}
