"""Merging run stores: the parts of a sweep run on several machines (`litm sweep CONFIG --shard I/N`, each
into a store of its own) into one store, with nothing lost and nothing doubled (`litm import PART.sqlite`).

A part's store holds the sweep under its config's name, with the trial keys the whole sweep has (a key
names the task, cell, strategy, parameters and model, never the part). Merging a store copies, in one
transaction per store:

- every call (the cache): a call already in the target is kept, so a sweep run later against the merged
  store sends nothing for them;
- every sweep: into the target's sweep of the same name when its config is the same (the other parts of
  the sweep), else into a new sweep named '<name> (imported <time>)' (another sweep that happens to share
  the name);
- every trial: a key the target's sweep lacks is added with its calls; a key it has is kept as it is,
  unless the target's trial failed and the part's did not (then the answer replaces the error). Merging
  the same part twice changes nothing.

The sweep's totals are counted again afterwards; its status is done when every store merged into it says
done. Provider batches still pending in a part are not copied: collect them in the part first.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from components.run.schema import STORED, decode, encode

if TYPE_CHECKING:
    from components.run.store import RunStore

SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite(path: str | Path) -> bool:
    """Whether the file is an SQLite database (a run store, when it opens as one)."""
    try:
        with open(path, "rb") as f:
            return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


@dataclass
class Merged:
    """What merging one store did."""

    source: str
    sweeps: list[str] = field(default_factory=list)  # the target's sweeps that received trials
    added: int = 0  # trials the target lacked
    kept: int = 0  # trials the target had already (not doubled)
    replaced: int = 0  # failed trials of the target replaced by the part's answer
    calls: int = 0  # calls (cache entries) the target lacked

    def line(self) -> str:
        into = ", ".join(repr(s) for s in self.sweeps) or "no sweep"
        return (
            f"merged {self.source}: {self.added:,} trial(s) added, {self.kept:,} already there, "
            f"{self.replaced:,} failed one(s) replaced by an answer, {self.calls:,} call(s) added to the cache; "
            f"into {into}"
        )


def same_config(a: str, b: str) -> bool:
    try:
        return json.loads(a) == json.loads(b)
    except ValueError:
        return a == b


def copy_calls(db, src) -> int:
    """INSERT OR IGNORE every call of the source (the columns both stores have); the number added."""
    have = {r[1] for r in db.execute("PRAGMA table_info(calls)")}
    cols = [r[1] for r in src.db.execute("PRAGMA table_info(calls)") if r[1] in have]
    before = db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    insert = f"INSERT OR IGNORE INTO calls ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
    rows = src.db.execute(f"SELECT {', '.join(cols)} FROM calls")
    while batch := rows.fetchmany(1000):
        db.executemany(insert, [tuple(r) for r in batch])
    return int(db.execute("SELECT COUNT(*) FROM calls").fetchone()[0] - before)


def target_sweep(db, name: str, config: str, status: str, stamp: str) -> int:
    """The target sweep for a source sweep: the one of that name and config, else a new one."""
    row = db.execute("SELECT id, config FROM sweeps WHERE name = ?", (name,)).fetchone()
    if row is not None and same_config(row[1], config):
        return int(row[0])
    if row is not None:
        base = label = f"{name} (imported {stamp})"
        n = 1
        while db.execute("SELECT 1 FROM sweeps WHERE name = ?", (label,)).fetchone():
            n += 1
            label = f"{base} #{n}"
        name = label
    now = time.time()
    cur = db.execute(
        "INSERT INTO sweeps (name, config, status, imported, created, updated) VALUES (?, ?, ?, 0, ?, ?)",
        (name, config, status, now, now),
    )
    return int(cur.lastrowid)


def trial_calls(src, trial_id: int) -> list[str]:
    rows = src.db.execute("SELECT call_key FROM trial_calls WHERE trial_id = ? ORDER BY ord", (trial_id,))
    return [r[0] for r in rows]


def put(db, sweep_id: int, row: dict, calls: list[str], replace_id: int | None) -> None:
    """Insert one trial of the source (its stored values, its creation time, its calls) into the sweep,
    or replace the target's trial `replace_id`."""
    values = [encode(f, decode(f, row.get(f))) for f in STORED]
    if replace_id is not None:
        db.execute("DELETE FROM trials WHERE id = ?", (replace_id,))
    cur = db.execute(
        f"INSERT INTO trials (sweep_id, {', '.join(STORED)}, created) "
        f"VALUES (?, {', '.join('?' * len(values))}, ?)",
        (sweep_id, *values, row.get("created") or time.time()),
    )
    db.executemany(
        "INSERT INTO trial_calls VALUES (?, ?, ?)", [(cur.lastrowid, i, k) for i, k in enumerate(calls)]
    )


def merge_store(target: RunStore, source: str | Path) -> Merged:
    """Merge the run store at `source` into the RunStore `target` (see the module's docstring); the
    source is opened read-only and never changed. Raises StoreError (one line) for a file that is not a
    run store, and refuses to merge a store into itself."""
    from components.run.store import RunStore

    source = Path(source)
    if source.resolve() == Path(target.path).resolve():
        raise ValueError(f"{source} is the store being merged into (--db): give another store")
    out = Merged(source.name)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    statuses: dict[int, list[str]] = {}
    with RunStore.for_reading(source) as src, target.transaction(immediate=True) as db:
        out.calls = copy_calls(db, src)
        for sweep in src.db.execute("SELECT * FROM sweeps ORDER BY id").fetchall():
            sid = target_sweep(db, sweep["name"], sweep["config"], sweep["status"], stamp)
            statuses.setdefault(sid, []).append(sweep["status"])
            have = {
                r[0]: (int(r[1]), r[2] is not None)
                for r in db.execute("SELECT trial_key, id, error FROM trials WHERE sweep_id = ?", (sid,))
            }
            for trial in src.db.execute(
                "SELECT * FROM trials WHERE sweep_id = ? ORDER BY id", (sweep["id"],)
            ):
                row = dict(trial)
                key = row["trial_key"]
                present = have.get(key)
                if present is None:
                    put(db, sid, row, trial_calls(src, row["id"]), None)
                    out.added += 1
                elif present[1] and row.get("error") is None:
                    put(db, sid, row, trial_calls(src, row["id"]), present[0])
                    out.replaced += 1
                else:
                    out.kept += 1
            name = db.execute("SELECT name FROM sweeps WHERE id = ?", (sid,)).fetchone()[0]
            if name not in out.sweeps:
                out.sweeps.append(name)
    for sid, seen in statuses.items():
        now = target.db.execute("SELECT status, reason FROM sweeps WHERE id = ?", (sid,)).fetchone()
        states = [*seen, now[0]]
        status = next((s for s in states if s != "done"), "done")
        target.finish_sweep(sid, status, (now[1] or "") if status != "done" else "")
    return out
