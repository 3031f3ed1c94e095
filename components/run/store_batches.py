"""The run store's provider batches and claimed calls (tables of migration 4; mixed into RunStore).

A batch's life in the store: `add_batch` (state 'submitting', written before the provider is asked,
with every request's messages and settings) -> `batch_submitted` (the provider's batch id) -> polled
(`update_batch`: the provider's status word and counts; state 'ended' once it has ended) -> each result
stored as a normal cached call (`store_batch_result`) or as an error (`batch_error`) -> 'collected'.
A request in an open batch (submitting, submitted or ended) is claimed by that batch: `add_batch(...,
skip_held=True)` leaves out, in the same transaction that writes the row, every request another open
batch of the model already holds or whose answer is stored, so two processes never both submit it.
A claim (`claim_call`) marks a call one process is sending live, so another process waits for it instead
of paying for it twice; a claim expires after its lease (a killed process does not hold it forever).
A request's error is kept with its kind (`batch`: the provider's own error; `bad_response`: a result
that could not be used), so a resumed sweep records the same error.

A write the place refuses (a full disk, a read-only file) is a StoreWriteError naming it (`writes`): the
transaction is rolled back, so what the store held stays whole; the store then refuses every later write and
look-up of a call (the caller sends nothing more), and a claim the failed write held is given back if it can.
"""

from __future__ import annotations

import functools
import json
import os
import socket
import sqlite3
import time
import uuid
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

OPEN_STATES = ("submitting", "submitted", "ended")
LEASE_S = (
    900.0  # seconds a claim holds a call for its owner (a killed process's claims free themselves after it)
)
ERROR_KINDS = ("batch", "bad_response")  # kinds of a request's error (batch_calls.error, "[kind] message")


class StoreError(ValueError):
    """A run store that cannot be used as it is; the message is one line for the user."""


class StoreWriteError(StoreError):
    """The store cannot be written now: the sweep stops; every trial and call stored so far stays."""


class StoreFull(StoreWriteError):
    pass


class StoreReadOnly(StoreWriteError):
    pass


SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL = 8, 10, 13  # primary result codes (the low byte of extended ones)
NEARLY_FULL = 1 << 20  # bytes free below which an I/O error is taken for a full disk


def write_error(path: Path, exc: sqlite3.Error) -> StoreWriteError | None:
    """The StoreWriteError an SQLite error means (a full disk, a read-only store), or None."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    text = str(exc).lower()
    full = code == SQLITE_FULL or "disk is full" in text
    if not full and code == SQLITE_IOERR:
        try:
            import shutil

            full = shutil.disk_usage(path.parent).free < NEARLY_FULL
        except OSError:
            full = False
    if full:
        return StoreFull(f"the disk is full at {path.parent}: free space and rerun; nothing was lost")
    if code == SQLITE_READONLY or "readonly database" in text:
        return StoreReadOnly(
            f"the run store {path.name} is read-only (in {path.parent}): make it writable or "
            "choose another with --db or LITM_DB, and rerun; nothing was lost"
        )
    return None


def writes(method):
    """A store method that writes: a full disk or a read-only store is one StoreWriteError line, and the
    store refuses every later write (`broken`)."""

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        self.check_writable()
        try:
            return method(self, *args, **kwargs)
        except sqlite3.OperationalError as exc:
            error = write_error(self.path, exc)
            if error is None:
                raise
            self.broken = error
            raise type(error)(str(error)) from None

    return guarded


def owner_id() -> str:
    """Who claims calls: host, process id and a token (two Callers of one process are two owners)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class BatchStore:
    """Needs `self.db` (a sqlite3 connection, autocommit), `self.transaction`, `self.put_call` and `self.path`."""

    broken: StoreWriteError | None = None  # the write the place refused: no write is tried after it

    if TYPE_CHECKING:  # what RunStore gives (store.py), declared for the type checker
        path: Path

        @property
        def db(self) -> sqlite3.Connection: ...

        def transaction(self, immediate: bool = False) -> AbstractContextManager[sqlite3.Connection]: ...

        def put_call(
            self, key: str, spec, messages: list[dict], settings: dict, completion, release: str | None = None
        ) -> None: ...

    def check_writable(self) -> None:
        """StoreWriteError when an earlier write failed for good (a full disk, a read-only store)."""
        if self.broken is not None:
            raise type(self.broken)(str(self.broken))

    # batches -------------------------------------------------------------------------------------
    @writes
    def add_batch(
        self, sweep_id: int | None, spec, requests: list[tuple[str, list, dict]], skip_held: bool = False
    ) -> tuple[int | None, str]:
        """A new batch row in state 'submitting' with its requests (key, messages, settings dict):
        (row id, token). The token goes into the provider batch's metadata where it has one.
        skip_held: leave out the requests another open batch of this model holds, or whose answer is
        stored (checked in the same transaction: across processes, one batch gets each request); the row
        is None when none is left. `batch_keys(row)` says which went in."""
        token = uuid.uuid4().hex
        now = time.time()
        with self.transaction(immediate=True) as db:
            if skip_held:
                requests = [r for r in requests if not self._held(r[0], spec)]
                if not requests:
                    return None, token
            row = db.execute(
                "INSERT INTO batches (sweep_id, provider, model, base_url, token, state, requests, created, updated) "
                "VALUES (?, ?, ?, ?, ?, 'submitting', ?, ?, ?) RETURNING id",
                (sweep_id, spec.provider, spec.model, spec.base_url, token, len(requests), now, now),
            ).fetchone()
            db.executemany(
                "INSERT OR REPLACE INTO batch_calls (batch, call_key, messages, settings) VALUES (?,?,?,?)",
                [(row[0], k, json.dumps(m, ensure_ascii=False), json.dumps(s)) for k, m, s in requests],
            )
        return int(row[0]), token

    def _held(self, key: str, spec) -> bool:
        """Whether a call is answered in the store or out in an open batch of this model."""
        if self.db.execute("SELECT 1 FROM calls WHERE key = ?", (key,)).fetchone():
            return True
        return (
            self.db.execute(
                "SELECT 1 FROM batch_calls bc JOIN batches b ON b.id = bc.batch WHERE bc.call_key = ? AND "
                f"b.state IN ({', '.join('?' * len(OPEN_STATES))}) AND b.provider = ? AND b.model = ? AND "
                "COALESCE(b.base_url, '') = ? LIMIT 1",
                (key, *OPEN_STATES, spec.provider, spec.model, spec.base_url or ""),
            ).fetchone()
            is not None
        )

    @writes
    def batch_submitted(self, row: int, batch_id: str, input_file_id: str | None = None) -> None:
        self.db.execute(
            "UPDATE batches SET batch_id = ?, input_file_id = ?, state = 'submitted', updated = ? "
            "WHERE id = ?",
            (batch_id, input_file_id, time.time(), row),
        )

    @writes
    def update_batch(
        self,
        row: int,
        *,
        state: str | None = None,
        status: str | None = None,
        succeeded: int | None = None,
        errored: int | None = None,
        reason: str | None = None,
    ) -> None:
        self.db.execute(
            "UPDATE batches SET state = COALESCE(?, state), status = COALESCE(?, status), "
            "succeeded = COALESCE(?, succeeded), errored = COALESCE(?, errored), reason = COALESCE(?, reason), "
            "updated = ? WHERE id = ?",
            (state, status, succeeded, errored, reason, time.time(), row),
        )

    def batch_rows(self, *, spec=None, sweep_id: int | None = None, open_only: bool = True) -> list[dict]:
        """Batches (newest last), of one model (spec) and/or one sweep; only those not yet collected."""
        sql, args = "SELECT * FROM batches WHERE 1", list[object]()
        if open_only:
            sql += f" AND state IN ({', '.join('?' * len(OPEN_STATES))})"
            args += OPEN_STATES
        if spec is not None:
            sql += " AND provider = ? AND model = ? AND COALESCE(base_url, '') = ?"
            args += [spec.provider, spec.model, spec.base_url or ""]
        if sweep_id is not None:
            sql += " AND sweep_id = ?"
            args.append(sweep_id)
        return [dict(r) for r in self.db.execute(sql + " ORDER BY id", args)]

    def batch_keys(self, row: int) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT call_key FROM batch_calls WHERE batch = ?", (row,))}

    @writes
    def store_batch_result(self, row: int, key: str, spec, completion) -> bool:
        """A result as a normal cached call (the request's messages and settings come from batch_calls,
        which then drops them). True if it was stored now; False if the key is not a request of this
        batch or its result was stored already (by another process collecting the same batch)."""
        got = self.db.execute(
            "SELECT messages, settings FROM batch_calls WHERE batch = ? AND call_key = ?", (row, key)
        ).fetchone()
        if got is None or got[0] is None:
            return False
        self.put_call(key, spec, json.loads(got[0]), json.loads(got[1]), completion)
        self.db.execute(
            "UPDATE batch_calls SET messages = NULL, settings = NULL WHERE batch = ? AND call_key = ?",
            (row, key),
        )
        return True

    @writes
    def batch_error(self, row: int, key: str, error: str, kind: str = "batch") -> None:
        """A request's error (kind: one of ERROR_KINDS), unless its answer was stored meanwhile."""
        text = error[:500] if kind == "batch" else f"[{kind}] {error[:480]}"
        self.db.execute(
            "UPDATE batch_calls SET error = ? WHERE batch = ? AND call_key = ? AND messages IS NOT NULL",
            (text, row, key),
        )

    def batch_errors(self, sweep_id: int | None = None) -> dict[str, tuple[str, str]]:
        """(kind, error) of every call (of one sweep's batches) whose batch result was an error and that is
        not cached: a resumed sweep writes those trials as errors instead of submitting them again."""
        sql = (
            "SELECT bc.call_key, bc.error FROM batch_calls bc JOIN batches b ON b.id = bc.batch "
            "WHERE bc.error IS NOT NULL AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.key = bc.call_key)"
        )
        args: tuple = ()
        if sweep_id is not None:
            sql += " AND b.sweep_id = ?"
            args = (sweep_id,)
        return {k: _kind_of(e) for k, e in self.db.execute(sql + " ORDER BY bc.batch", args)}

    def batches_frame(self, sweep_id: int | None = None):
        import pandas as pd

        has = self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'batches'"
        ).fetchone()
        rows = (
            self.batch_rows(sweep_id=sweep_id, open_only=False) if has else []
        )  # an older store, read as it is
        cols = [
            "id",
            "sweep_id",
            "provider",
            "model",
            "batch_id",
            "state",
            "status",
            "requests",
            "succeeded",
            "errored",
            "reason",
            "created",
            "updated",
        ]
        return pd.DataFrame(rows, columns=cols)

    # claims --------------------------------------------------------------------------------------
    @writes
    def claim_call(self, key: str, owner: str, lease_s: float = LEASE_S) -> str | None:
        """Claim a call this owner is about to send: None when the owner holds it now (new, its own, or
        the holder's lease ran out or the holder's process on this host is gone), else the holder."""
        now = time.time()
        got = self.db.execute(
            "INSERT INTO claims (call_key, owner, expires) VALUES (?, ?, ?) ON CONFLICT (call_key) DO UPDATE "
            "SET owner = excluded.owner, expires = excluded.expires WHERE claims.owner = excluded.owner "
            "OR claims.expires < ? RETURNING owner",
            (key, owner, now + lease_s, now),
        ).fetchone()
        if got is not None:
            return None
        row = self.db.execute("SELECT owner FROM claims WHERE call_key = ?", (key,)).fetchone()
        if row is None:  # released in between
            return self.claim_call(key, owner, lease_s)
        if _gone(row[0]):
            cur = self.db.execute(
                "UPDATE claims SET owner = ?, expires = ? WHERE call_key = ? AND owner = ?",
                (owner, now + lease_s, key, row[0]),
            )
            if cur.rowcount:
                return None
        return row[0]

    def held_claims(self, keys: list[str] | None = None) -> list[tuple[str, str, float]]:
        """(key, owner, expires) of the live claims of other processes (of `keys`, else all): those a call
        waits for. A claim past its lease, or whose process on this host is gone, is left out (it is taken
        over when asked for)."""
        now = time.time()
        if keys is None:
            rows = self.db.execute(
                "SELECT call_key, owner, expires FROM claims WHERE expires >= ?", (now,)
            ).fetchall()
        else:
            rows = [
                r
                for k in keys
                for r in self.db.execute(
                    "SELECT call_key, owner, expires FROM claims WHERE call_key = ? AND expires >= ?",
                    (k, now),
                )
            ]
        return [(r[0], r[1], float(r[2])) for r in rows if not _gone(r[1])]

    @writes
    def take_claims(self) -> int:
        """Drop every claim not held by a running process of this host (`litm sweep --steal-claims`): a claim
        of a process killed on another machine otherwise holds its call for the rest of its lease. How many."""
        mine = f"{socket.gethostname()}:"
        rows = self.db.execute("SELECT call_key, owner FROM claims").fetchall()
        drop = [(r[0], r[1]) for r in rows if not r[1].startswith(mine) or _gone(r[1])]
        with self.transaction(immediate=True) as db:
            db.executemany("DELETE FROM claims WHERE call_key = ? AND owner = ?", drop)
        return len(drop)

    def release_call(self, key: str, owner: str) -> None:
        """Give a claim back; tried even after a refused write (a delete may fit where an insert did not), and
        a claim that cannot be given back is left to free itself (its process gone, or its lease run out)."""
        try:
            self.db.execute("DELETE FROM claims WHERE call_key = ? AND owner = ?", (key, owner))
        except sqlite3.OperationalError as exc:
            if write_error(self.path, exc) is None:
                raise


def claims_line(held: list[tuple[str, str, float]], now: float | None = None) -> str:
    """One line on calls claimed by other processes (held_claims): how many, by whom, how long ago, when they
    free themselves, and the option that takes them over; "" for none."""
    if not held:
        return ""
    now = time.time() if now is None else now
    by_owner: dict[str, list[float]] = {}
    for _, owner, expires in held:
        by_owner.setdefault(owner, []).append(expires)
    owner = max(by_owner, key=lambda o: len(by_owner[o]))
    host, _, rest = owner.partition(":")
    pid = rest.split(":")[0]
    age = max(0.0, now - (min(by_owner[owner]) - LEASE_S))
    free = max(0.0, max(e for _, _, e in held) - now)
    where = f"host {host}" if host != socket.gethostname() else "this host"
    others = len(by_owner) - 1
    more = f", and {others} other process{'es' if others > 1 else ''}" if others else ""
    n = len(held)
    return (
        f"{n} call{'s are' if n > 1 else ' is'} claimed by another process ({where}, pid {pid}, "
        f"{_minutes(age)} ago{more}); {'they free themselves' if n > 1 else 'it frees itself'} in "
        f"{_minutes(free)}, or run with --steal-claims to take {'them' if n > 1 else 'it'} over"
    )


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def _kind_of(text: str) -> tuple[str, str]:
    """(kind, message) of a stored request error ("[kind] message"; untagged: the provider's own error)."""
    for kind in ERROR_KINDS:
        if text.startswith(f"[{kind}] "):
            return kind, text[len(kind) + 3 :]
    return "batch", text


def _gone(owner: str) -> bool:
    """Whether a claim's owner (host:pid:...) is a process of this host that no longer runs."""
    host, _, rest = owner.partition(":")
    pid = rest.split(":")[0]
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False
