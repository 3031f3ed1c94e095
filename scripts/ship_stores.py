"""Bring the run stores that ship with the app (sample_docs/runs/*.sqlite) to the current store schema.

    python scripts/ship_stores.py            # migrate the ones that need it, in place
    python scripts/ship_stores.py --check    # only say which need it (exit 1 if any)

The app and `litm` open shipped stores read-only and never migrate them (reading never writes), so a
shipped store must already be at the schema this version writes. Each store that is behind (or left in
WAL mode by a sweep run on it) is copied to a temporary file, migrated there by RunStore (a sweep's own
migration), put back in rollback-journal mode (a read-only reader then makes no -wal or -shm file next to
it), vacuumed, and moved over the original. A sweep whose stored config names a task file that ships by
the path of the machine that ran it (.../sample_docs/tasks/nq-open-30docs.jsonl.gz) is given the file's
bare name, which resolves to the bundled file anywhere (run/config.stored_tasks). A store already current is left byte for byte as it is, so
running this twice changes nothing. Run it after adding a migration, and commit the stores it changed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from components.run.config import bundled_task_file  # noqa: E402
from components.run.store import MIGRATIONS, RunStore, shipped_paths  # noqa: E402


def state(path: Path) -> tuple[int, str]:
    """(schema version, journal mode) of a store, read without changing it."""
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        version = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0]
    finally:
        conn.close()
    return int(version), journal_mode(path)


def journal_mode(path: Path) -> str:
    """ "wal" or "delete", from the file header's read/write version bytes (18 and 19: 2 is WAL): an
    immutable connection's PRAGMA journal_mode says "delete" for a store left in WAL mode."""
    with open(path, "rb") as f:
        header = f.read(20)
    return "wal" if header[18:20] == b"\x02\x02" else "delete"


def machine_paths(path: Path) -> dict[int, str]:
    """{sweep id: its config with a task file that ships stored by its bare name} for each sweep whose
    config names such a file by a path of the machine that ran it (sample_docs/tasks/<name>)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        rows = conn.execute("SELECT id, config FROM sweeps").fetchall()
    finally:
        conn.close()
    out = {}
    for sweep_id, blob in rows:
        config = json.loads(blob or "{}")
        tasks = Path(str(config.get("tasks", "")))
        if (
            tasks.is_absolute()
            and tasks.parent.parts[-2:] == ("sample_docs", "tasks")
            and bundled_task_file(tasks.name) is not None
        ):
            out[int(sweep_id)] = json.dumps({**config, "tasks": tasks.name}, sort_keys=True)
    return out


def needs(path: Path) -> str:
    """Why a shipped store must be brought up to date ("" when it is current)."""
    version, mode = state(path)
    why = []
    if machine_paths(path):
        why.append("a task file named by a path of the machine that ran it")
    if version < len(MIGRATIONS):
        why.append(f"schema {version} (current {len(MIGRATIONS)})")
    if mode != "delete" or Path(f"{path}-wal").exists():
        why.append(f"journal mode {mode}")
    return ", ".join(why)


def ship(path: Path) -> None:
    """Migrate a copy of the store, in rollback-journal mode, vacuumed, then put it in place."""
    with tempfile.TemporaryDirectory(dir=path.parent) as folder:
        tmp = Path(folder) / path.name
        shutil.copyfile(path, tmp)
        store = RunStore(tmp)  # a sweep's own migration, on the copy
        for sweep_id, config in machine_paths(tmp).items():
            store.db.execute("UPDATE sweeps SET config = ? WHERE id = ?", (config, sweep_id))
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.db.execute("PRAGMA journal_mode = DELETE")
        store.db.execute("VACUUM")
        store.close()
        tmp.replace(path)
    for extra in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        extra.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only list the stores that need it; exit 1 if any")
    ap.add_argument("paths", nargs="*", type=Path, help="stores (default: sample_docs/runs/*.sqlite)")
    args = ap.parse_args(argv)
    todo = [(p, why) for p in (args.paths or shipped_paths()) if (why := needs(p))]
    for path, why in todo:
        if args.check:
            print(f"{path.name}: {why}")
            continue
        ship(path)
        print(f"{path.name}: was {why}; now schema {state(path)[0]}, journal mode {state(path)[1]}")
    if not todo:
        print(f"every shipped store is at schema {len(MIGRATIONS)}, in rollback-journal mode")
    return 1 if args.check and todo else 0


if __name__ == "__main__":
    raise SystemExit(main())
