"""The run store: one SQLite file (WAL) holding calls (the cache), sweeps, trials and their calls.

Schema grows by numbered migrations (MIGRATIONS[i] is version i + 1; `schema_version` records what
ran). No API key is ever written: calls keep provider, model, base URL, messages and settings only.
Each thread gets its own connection (WAL + busy_timeout), so the app can read while a sweep writes.

Reading never writes: `RunStore(path, readonly=True)` (what `litm results`, `litm compare`, the app's
Results and Compare pages and exports use) opens the file read-only (SQLite mode=ro; a shipped store, which
nothing writes, immutable as well), never migrates it, and reads an older schema as it is (the columns it
lacks read as empty). Only a sweep, opening its own store to write, migrates it.

A file is checked when it is opened: one that is not an SQLite database, an SQLite database that is
not a run store, a store written by a newer version (schema_version above the migrations known here),
or one whose trials table lacks a column of the schema is refused with a StoreError (one line); so is a
location that cannot be written. Creating a sweep is one transaction (INSERT OR IGNORE, then read
back), so two processes starting the same new sweep name at once share it.
Provider batches and claimed calls (migration 4) are in store_batches.BatchStore.

`with RunStore(path) as store:` closes every connection the store opened when the block ends; every
multi-statement write goes through `with store.transaction(immediate=True):` (COMMIT, or ROLLBACK on
any error).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from components.core.resources import sample_path
from components.run.schema import EXPORT_COLUMNS, JSON_COLUMNS, STORED, added_in, decode, encode
from components.run.store_batches import (
    BatchStore,
    StoreError,
    StoreFull,
    StoreWriteError,
    write_error,
    writes,
)
from components.run.store_io import export_frame, read_frame, trial_rows_from_frame

MIGRATIONS: list[str] = [
    """
    CREATE TABLE calls (
        key TEXT PRIMARY KEY, provider TEXT NOT NULL, model TEXT NOT NULL, base_url TEXT,
        messages TEXT NOT NULL, settings TEXT NOT NULL, response TEXT NOT NULL,
        input_tokens INTEGER, output_tokens INTEGER, latency_s REAL, finish_reason TEXT, created REAL);
    CREATE TABLE sweeps (
        id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, config TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'done', 'cancelled', 'failed')),
        reason TEXT, imported INTEGER NOT NULL DEFAULT 0, created REAL, updated REAL,
        trials INTEGER DEFAULT 0, errors INTEGER DEFAULT 0, calls INTEGER DEFAULT 0,
        input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, cost_usd REAL DEFAULT 0);
    CREATE TABLE trials (
        id INTEGER PRIMARY KEY, sweep_id INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
        trial_key TEXT NOT NULL, task TEXT, question TEXT, answers TEXT, strategy TEXT, params TEXT,
        model TEXT, length INTEGER, position REAL, actual_length INTEGER, actual_position INTEGER,
        gold_pages TEXT, retrieved_pages TEXT, cited_pages TEXT, answer TEXT, raw_answer TEXT,
        parse_error TEXT, score REAL, subspan_em REAL, exact REAL, page_recall REAL, page_precision REAL,
        error TEXT, calls INTEGER, cached_calls INTEGER, input_tokens INTEGER, output_tokens INTEGER,
        cost_usd REAL, latency_s REAL, created REAL, UNIQUE (sweep_id, trial_key));
    CREATE TABLE trial_calls (
        trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE, ord INTEGER NOT NULL,
        call_key TEXT NOT NULL, PRIMARY KEY (trial_id, ord));
    CREATE INDEX trials_sweep ON trials(sweep_id);
    """,
    # 2: "Lost in the Middle" sweeps (§3.1): N documents with the gold one at a 0-based index
    ";\n".join(added_in(2)),
    # 3: every metric stored per trial, the strategy's primary metric, the kind of error; who made a sweep
    ";\n".join([*added_in(3), "ALTER TABLE sweeps ADD COLUMN owner TEXT"]),
    # 4: provider batches (components/run/batch.py) and calls claimed across processes (run/caller.py).
    # A batch row is written BEFORE the provider is asked (state 'submitting', with a token the OpenAI
    # batch carries in its metadata), so a killed process finds its batches again and never submits twice;
    # batch_calls keeps each request's messages and settings until its result is stored as a call.
    """
    CREATE TABLE batches (
        id INTEGER PRIMARY KEY, sweep_id INTEGER REFERENCES sweeps(id) ON DELETE SET NULL,
        provider TEXT NOT NULL, model TEXT NOT NULL, base_url TEXT, token TEXT NOT NULL,
        batch_id TEXT, input_file_id TEXT,
        state TEXT NOT NULL CHECK (state IN ('submitting', 'submitted', 'ended', 'collected', 'failed')),
        status TEXT, requests INTEGER NOT NULL, succeeded INTEGER DEFAULT 0, errored INTEGER DEFAULT 0,
        reason TEXT, created REAL, updated REAL);
    CREATE TABLE batch_calls (
        batch INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE, call_key TEXT NOT NULL,
        messages TEXT, settings TEXT, error TEXT, PRIMARY KEY (batch, call_key));
    CREATE INDEX batch_calls_key ON batch_calls(call_key);
    CREATE INDEX batches_state ON batches(state);
    CREATE TABLE claims (call_key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL)
    """,
    # 5: prompt caching (input tokens read from and written to a provider's cache, per call and per
    # trial) and the likelihood measure (the gold answer's log-probability per trial)
    ";\n".join(
        [
            *added_in(5),
            "ALTER TABLE calls ADD COLUMN cached_input_tokens INTEGER",
            "ALTER TABLE calls ADD COLUMN cache_write_tokens INTEGER",
        ]
    ),
    # 6: the key-value metric of Lost in the Middle (§4.1: the value anywhere in the response)
    ";\n".join(added_in(6)),
    # 7: the multi-question design (components/run/multiq.py): K, Q, the question's place, its match and category
    ";\n".join(added_in(7)),
    # 8: the counts behind ALR2's retrieval measures (§5.1), pooled per cell by the report
    ";\n".join(added_in(8)),
    # 9: RULER's two scorers (string_match_all, string_match_part), ALR2's NIAH metric
    ";\n".join(added_in(9)),
    # 10: the attention measure (components/run/measure.py): the gold page's share and every page's
    ";\n".join(added_in(10)),
    # 11: an LLM judge's verdict and reply, and a repeated sample's index (run/judging.py, run/plan.py)
    ";\n".join(added_in(11)),
]


def column_exists(db: sqlite3.Connection, statement: str) -> bool:
    """True when `statement` adds a column (ALTER TABLE t ADD COLUMN c ...) that table t already has: a
    migration that stopped half-way, or a column added by hand, is then completed rather than refused."""
    words = statement.split()
    if [w.upper() for w in words[:2]] != ["ALTER", "TABLE"] or len(words) < 6:
        return False
    if [w.upper() for w in words[3:5]] != ["ADD", "COLUMN"]:
        return False
    table, column = words[2], words[5]
    return any(row[1] == column for row in db.execute(f"PRAGMA table_info({table})"))


ENV_DB = "LITM_DB"  # the one run store of the app and the command line
ENV_SHIPPED = "LITM_SHIPPED_RUNS"  # a folder of shipped run stores (default: sample_docs/runs)


def default_path() -> Path:
    """The run store the app and `litm` share: $LITM_DB, else $XDG_DATA_HOME/litm-explorer/litm.sqlite
    (~/.local/share/litm-explorer/litm.sqlite), whatever the working folder."""
    if os.environ.get(ENV_DB):
        return Path(os.environ[ENV_DB]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "litm-explorer" / "litm.sqlite"


def shipped_paths() -> list[Path]:
    """Run stores that ship with the app, made with a real model: sample_docs/runs/*.sqlite."""
    folder = Path(os.environ.get(ENV_SHIPPED) or sample_path("runs"))
    return sorted(folder.glob("*.sqlite")) if folder.is_dir() else []


def store_paths() -> list[tuple[bool, Path]]:
    """(shipped, path) of every run store the app reads: the user's (when it exists), then the shipped
    ones."""
    user = default_path()
    out = [(False, user)] if user.exists() else []
    out += [(True, p) for p in shipped_paths() if p.resolve() != user.resolve()]
    return out


CALL_COLUMNS = (
    "key",
    "provider",
    "model",
    "base_url",
    "messages",
    "settings",
    "response",
    "input_tokens",
    "output_tokens",
    "latency_s",
    "finish_reason",
    "created",
    "cached_input_tokens",
    "cache_write_tokens",
)
INSERT_CALL = (
    f"INSERT OR IGNORE INTO calls ({', '.join(CALL_COLUMNS)}) VALUES ({', '.join('?' * len(CALL_COLUMNS))})"
)

TOTALS = ("trials", "errors", "calls", "input_tokens", "output_tokens", "cost_usd")


def _switch_to_wal(conn: sqlite3.Connection, attempts: int = 100) -> None:
    """PRAGMA journal_mode = WAL. When several connections open a new file at once, the switch can
    fail at once with 'database is locked' (SQLite does not wait on this lock upgrade), so retry."""
    for attempt in range(attempts):
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.01 + 0.005 * attempt)


class RunStore(BatchStore):
    """A run store. `readonly=True` opens it to read only: nothing is migrated or written (a shipped store
    is opened immutable), and an older schema reads with its missing columns empty."""

    def __init__(self, path: str | Path, *, readonly: bool = False):
        self.path = Path(path)
        self.readonly = readonly
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []  # every thread's connection, for close_all()
        self._conns_lock = threading.Lock()
        if readonly:
            if not self.path.is_file():
                raise FileNotFoundError(f"no run store at {self.path}")
            self._guard(self.inspect)
            return
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a folder, not a run store file")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the folder of the run store {self.path} ({exc.strerror or exc}); "
                "choose another place with --db or LITM_DB"
            ) from None
        self._guard(self.inspect)
        self._guard(self.migrate)
        self._guard(self.check_columns)

    def _guard(self, step):
        """Run a step of opening; SQLite's own errors become one StoreError line."""
        try:
            return step()
        except StoreError:
            self.close()
            raise
        except sqlite3.Error as exc:
            self.close()
            text = str(exc)
            full = write_error(self.path, exc)
            if isinstance(full, StoreFull):
                raise full from None
            if not self.readonly and (
                "readonly" in text
                or "unable to open" in text
                or not os.access(self.path.parent, os.W_OK)
                or (self.path.exists() and not os.access(self.path, os.W_OK))
            ):
                raise StoreError(
                    f"cannot write the run store {self.path} ({text}): the place is read-only; "
                    "choose another with --db or LITM_DB"
                ) from None
            raise StoreError(f"{self.path} is not a usable LITM run store ({text})") from None

    def inspect(self) -> int:
        """The store's schema version (0: a new, empty file). Refuses a file that is not a run store
        and a store from a newer version of this program."""
        with (
            self.transaction() as db
        ):  # one read snapshot: another process may be creating the store right now
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            version = (
                db.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0]
                if "schema_version" in tables
                else 0
            )
        if not tables:
            return 0
        if "schema_version" not in tables:
            raise StoreError(
                f"{self.path} is an SQLite database but not a LITM run store (it has no schema_version table)"
            )
        if version > len(MIGRATIONS):
            raise StoreError(
                f"{self.path} was written by a newer LITM Explorer (store schema {version}; this "
                f"one knows up to {len(MIGRATIONS)}): upgrade to use it"
            )
        if version and not {"sweeps", "trials", "calls"} <= tables:
            raise StoreError(
                f"{self.path} is damaged: tables are missing "
                f"({', '.join(sorted({'sweeps', 'trials', 'calls'} - tables))})"
            )
        return int(version)

    def check_columns(self) -> None:
        """Every trial column of the schema is present (a renamed or dropped column is refused)."""
        have = {r[1] for r in self.db.execute("PRAGMA table_info(trials)")}
        missing = [c for c in STORED if c not in have]
        if missing:
            raise StoreError(
                f"{self.path} is damaged or was changed by hand: the trials table lacks "
                f"column(s) {', '.join(missing[:5])}"
            )

    @classmethod
    def for_reading(cls, path: str | Path) -> RunStore:
        """A store to read, opened read-only: never migrated, never changed (reading never writes)."""
        return cls(path, readonly=True)

    @property
    def db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self.readonly:
                conn = self._read_only()
            else:
                conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
                conn.row_factory = sqlite3.Row
                conn.execute("PRAGMA busy_timeout = 30000")
                _switch_to_wal(conn)
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute("PRAGMA foreign_keys = ON")
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    def _read_only(self) -> sqlite3.Connection:
        """A read-only connection. mode=ro sees a store another process is writing (WAL); a shipped store,
        which nothing writes, is immutable too (no lock, no -wal or -shm file next to it); so is a WAL
        store in a place this user cannot write (its -shm cannot be made)."""
        path = self.path.resolve()
        immutable = path in {p.resolve() for p in shipped_paths()}
        for attempt in (immutable, True):
            uri = f"file:{quote(str(path))}?mode=ro" + ("&immutable=1" if attempt else "")
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            try:
                conn.execute("PRAGMA busy_timeout = 30000")
                conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
                return conn
            except sqlite3.OperationalError as exc:
                conn.close()
                if attempt or "unable to open" not in str(exc):
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Close this thread's connection (the next use opens another)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
            with self._conns_lock:
                self._conns = [c for c in self._conns if c is not conn]

    def close_all(self) -> None:
        """Close the connection of every thread that used this store (when no thread uses it any more)."""
        with self._conns_lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            conn.close()
        self._local = threading.local()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close_all()

    @contextmanager
    def transaction(self, immediate: bool = False) -> Iterator[sqlite3.Connection]:
        """One transaction on this thread's connection: BEGIN (IMMEDIATE: take the write lock at once, so
        two writers queue instead of failing at COMMIT), then COMMIT when the block ends, or ROLLBACK on
        any error (which is raised again). The block gets the connection."""
        db = self.db
        db.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def migrate(self) -> int:
        db = self.db
        db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied REAL)")
        done = db.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0]
        for version in range(done + 1, len(MIGRATIONS) + 1):
            with self.transaction(immediate=True):
                if (
                    db.execute("SELECT 1 FROM schema_version WHERE version = ?", (version,)).fetchone()
                    is None
                ):
                    for statement in MIGRATIONS[version - 1].split(";"):
                        if statement.strip() and not column_exists(db, statement):
                            db.execute(statement)
                    db.execute("INSERT INTO schema_version VALUES (?, ?)", (version, time.time()))
        return len(MIGRATIONS)

    @property
    def schema_version(self) -> int:
        return self.db.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]

    # calls (the cache) -----------------------------------------------------------------------
    def get_call(self, key: str) -> sqlite3.Row | None:
        """The stored call, or None. After a write the place refused, StoreWriteError: a call looked up is
        about to be sent, and its answer could not be kept."""
        self.check_writable()
        return self.db.execute("SELECT * FROM calls WHERE key = ?", (key,)).fetchone()

    def put_call(
        self, key: str, spec, messages: list[dict], settings: dict, completion, release: str | None = None
    ) -> None:
        """Store an answered call; `release`: the owner whose claim on it (store_batches.claim_call) is
        dropped in the same transaction (one commit instead of two per call sent). When the place refuses the
        write (StoreWriteError), the claim is given back if a delete still fits."""
        try:
            self._put_call(key, spec, messages, settings, completion, release)
        except StoreWriteError:
            if release is not None:
                try:
                    self.db.execute("DELETE FROM claims WHERE call_key = ? AND owner = ?", (key, release))
                except sqlite3.Error:
                    pass  # it frees itself: its process is gone (same host) or its lease runs out
            raise

    @writes
    def _put_call(
        self, key: str, spec, messages: list[dict], settings: dict, completion, release: str | None
    ) -> None:
        db = self.db
        row = (
            key,
            spec.provider,
            spec.model,
            spec.base_url,
            json.dumps(messages, ensure_ascii=False),
            json.dumps(settings),
            completion.text,
            completion.input_tokens,
            completion.output_tokens,
            completion.latency_s,
            completion.finish_reason,
            time.time(),
            getattr(completion, "cached_input_tokens", 0),
            getattr(completion, "cache_write_tokens", 0),
        )
        if release is None:
            db.execute(INSERT_CALL, row)
            return
        with self.transaction(immediate=True):
            db.execute(INSERT_CALL, row)
            db.execute("DELETE FROM claims WHERE call_key = ? AND owner = ?", (key, release))

    def calls_for_trial(self, trial_id: int) -> list[dict]:
        rows = self.db.execute(
            "SELECT tc.ord, c.* FROM trial_calls tc JOIN calls c ON c.key = tc.call_key "
            "WHERE tc.trial_id = ? ORDER BY tc.ord",
            (int(trial_id),),
        ).fetchall()
        out = []
        for r in rows:
            d = dict(r)
            d["messages"] = json.loads(d["messages"])
            d["settings"] = json.loads(d["settings"])
            out.append(d)
        return out

    # sweeps ----------------------------------------------------------------------------------
    @writes
    def open_sweep(self, name: str, config: dict, imported: bool = False, owner: str | None = None) -> int:
        """The id of the sweep called `name` (created if new, with this owner), marked running with this
        config. One transaction: two processes opening the same new name at once get the same sweep."""
        now = time.time()
        blob = json.dumps(config, sort_keys=True, default=str)
        with self.transaction(immediate=True) as db:
            db.execute(
                "INSERT OR IGNORE INTO sweeps (name, config, status, imported, created, updated, owner) "
                "VALUES (?, ?, 'running', ?, ?, ?, ?)",
                (name, blob, int(imported), now, now, owner),
            )
            sweep_id = int(db.execute("SELECT id FROM sweeps WHERE name = ?", (name,)).fetchone()[0])
            db.execute(
                "UPDATE sweeps SET config = ?, status = 'running', reason = NULL, updated = ? WHERE id = ?",
                (blob, now, sweep_id),
            )
        return sweep_id

    def sweep_owner(self, sweep_id: int) -> str | None:
        row = self.db.execute("SELECT owner FROM sweeps WHERE id = ?", (int(sweep_id),)).fetchone()
        return row[0] if row else None

    def find_sweep(self, name: str) -> dict | None:
        """The sweep called exactly `name`: {"id", "owner"} (owner None: made on the command line), or None."""
        row = self.db.execute("SELECT id, owner FROM sweeps WHERE name = ?", (name,)).fetchone()
        return None if row is None else {"id": int(row[0]), "owner": row[1]}

    def sweep_id(self, ref: str | int) -> int:
        """A sweep by id or name; LookupError if there is none."""
        row = self.db.execute(
            "SELECT id FROM sweeps WHERE name = ? OR CAST(id AS TEXT) = ? ORDER BY name = ? DESC",
            (str(ref), str(ref), str(ref)),
        ).fetchone()
        if row is None:
            raise LookupError(f"no sweep {ref!r} in {self.path}")
        return int(row[0])

    @writes
    def finish_sweep(self, sweep_id: int, status: str, reason: str = "") -> dict:
        totals = self.sweep_totals(sweep_id)
        sets = ", ".join(f"{k} = ?" for k in TOTALS)
        self.db.execute(
            f"UPDATE sweeps SET status = ?, reason = ?, updated = ?, {sets} WHERE id = ?",
            (status, reason or None, time.time(), *(totals[k] for k in TOTALS), sweep_id),
        )
        return totals

    def sweep_totals(self, sweep_id: int) -> dict:
        r = self.db.execute(
            "SELECT COUNT(*), SUM(error IS NOT NULL), SUM(calls), SUM(input_tokens), SUM(output_tokens), "
            "SUM(cost_usd) FROM trials WHERE sweep_id = ?",
            (sweep_id,),
        ).fetchone()
        return {k: (v or 0) for k, v in zip(TOTALS, r, strict=True)}

    def calls_span(self) -> tuple[float, float] | None:
        """When the store's calls were sent: (first, last) creation time in Unix seconds; None without
        any (a store made before calls kept their time has NULLs)."""
        first, last = self.db.execute("SELECT MIN(created), MAX(created) FROM calls").fetchone()
        return None if first is None or last is None else (float(first), float(last))

    def call_timings(self, provider: str, min_tokens: int, recent: int) -> list[tuple[str, int, int, float]]:
        """Per model of `provider`: (model as stored, calls, input tokens, seconds) over its `recent` latest
        answered calls of at least `min_tokens` input tokens that took time, a sweep's or the Playground's:
        the latest, so a store copied from another machine, or a machine that got busier, is followed."""
        rows = self.db.execute(
            "SELECT model, COUNT(*), SUM(input_tokens), SUM(latency_s) FROM (SELECT model, input_tokens, "
            "latency_s, ROW_NUMBER() OVER (PARTITION BY model ORDER BY created DESC, key) AS n FROM calls "
            "WHERE provider = ? AND input_tokens >= ? AND latency_s > 0) WHERE n <= ? GROUP BY model",
            (provider, min_tokens, recent),
        ).fetchall()
        return [(str(r[0]), int(r[1]), int(r[2] or 0), float(r[3] or 0.0)) for r in rows]

    def sweeps_frame(self):
        import pandas as pd

        rows = [dict(r) for r in self.db.execute("SELECT * FROM sweeps ORDER BY id")]
        for r in rows:
            if r["status"] == "running":  # live totals while a sweep writes
                r.update(self.sweep_totals(r["id"]))
        cols = [
            "id",
            "name",
            "config",
            "status",
            "reason",
            "imported",
            "created",
            "updated",
            *TOTALS,
            "owner",
        ]
        return pd.DataFrame(rows, columns=cols)

    # trials ----------------------------------------------------------------------------------
    def trial_keys(self, sweep_id: int, *, with_errors: bool = True) -> set[str]:
        sql = "SELECT trial_key FROM trials WHERE sweep_id = ?" + (
            "" if with_errors else " AND error IS NULL"
        )
        return {r[0] for r in self.db.execute(sql, (sweep_id,))}

    def error_kinds(self, sweep_id: int) -> list[tuple[str, int, str]]:
        """(error kind, trials, first message) of a sweep's failed trials, the most common kind first."""
        rows = self.db.execute(
            "SELECT COALESCE(error_kind, 'error'), COUNT(*), MIN(error) FROM trials "
            "WHERE sweep_id = ? AND error IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1",
            (int(sweep_id),),
        )
        return [(str(k), int(n), str(e)) for k, n, e in rows]

    def trial_totals(self, sweep_id: int) -> dict[str, tuple]:
        """trial key -> (failed, calls, input tokens, output tokens, dollars) of every trial of a sweep."""
        rows = self.db.execute(
            "SELECT trial_key, error IS NOT NULL, calls, input_tokens, output_tokens, cost_usd "
            "FROM trials WHERE sweep_id = ?",
            (sweep_id,),
        )
        return {r[0]: (bool(r[1]), *(r[2:])) for r in rows}

    @writes
    def put_trial(self, sweep_id: int, trial: dict, call_keys: Sequence[str] = ()) -> int:
        """Insert or replace (same sweep and trial key) one trial and its calls, in one transaction."""
        unknown = set(trial) - set(STORED)
        if unknown:
            raise ValueError(f"not trial columns: {', '.join(sorted(unknown))}")
        values = [encode(f, trial.get(f)) for f in STORED]
        cols = ", ".join(STORED)
        update = ", ".join(f"{f} = excluded.{f}" for f in STORED[1:])
        with self.transaction(immediate=True) as db:
            row = db.execute(
                f"INSERT INTO trials (sweep_id, {cols}, created) VALUES (?, {', '.join('?' * len(values))}, ?) "
                f"ON CONFLICT (sweep_id, trial_key) DO UPDATE SET {update}, created = excluded.created "
                "RETURNING id",
                (sweep_id, *values, time.time()),
            ).fetchone()
            trial_id = int(row[0])
            db.execute("DELETE FROM trial_calls WHERE trial_id = ?", (trial_id,))
            db.executemany(
                "INSERT INTO trial_calls VALUES (?, ?, ?)",
                [(trial_id, i, k) for i, k in enumerate(call_keys)],
            )
        return trial_id

    def trials_frame(self, sweep_id: int | str | None = None):
        import pandas as pd

        sql = "SELECT t.*, t.id AS trial_id, s.name AS sweep FROM trials t JOIN sweeps s ON s.id = t.sweep_id"
        args: tuple = ()
        if sweep_id is not None:
            sql += " WHERE t.sweep_id = ?"
            args = (self.sweep_id(sweep_id),)
        rows = [dict(r) for r in self.db.execute(sql + " ORDER BY t.id", args)]
        for r in rows:
            for f in JSON_COLUMNS:
                r[f] = decode(f, r.get(f))  # an older (read-only) store may lack newer columns
        return pd.DataFrame(rows, columns=EXPORT_COLUMNS)

    def export_trials(
        self, path: str | Path, fmt: str | None = None, sweep_id: int | str | None = None
    ) -> Path:
        return export_frame(self.trials_frame(sweep_id), path, fmt)

    def import_trials(self, path: str | Path, fmt: str | None = None, owner: str | None = None) -> list[int]:
        """Trials from an export, each source sweep into a new sweep named '<name> (imported ...)'
        (owned by `owner`: whoever imported it on purpose)."""
        frame = read_frame(path, fmt)
        ids = []
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        for name, rows in trial_rows_from_frame(frame, Path(path).name):
            base = f"{name} (imported {stamp})"
            label, n = base, 1
            while self.db.execute("SELECT 1 FROM sweeps WHERE name = ?", (label,)).fetchone():
                n += 1
                label = f"{base} #{n}"
            sid = self.open_sweep(
                label, {"imported_from": Path(path).name, "sweep": name}, imported=True, owner=owner
            )
            for trial in rows:
                self.put_trial(sid, trial)
            self.finish_sweep(sid, "done", "imported")
            ids.append(sid)
        return ids
