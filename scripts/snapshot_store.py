"""Copy a run store that a sweep is writing into a consistent snapshot to commit (progress stores).

    python scripts/snapshot_store.py runs/local-qwen-harder.sqlite \
        sample_docs/runs/progress/local-qwen-harder.sqlite

SQLite's online backup API copies the store as of one transaction while the sweep goes on writing (a
file copy of a WAL store can catch it half-written); the copy is put in rollback-journal mode and
vacuumed, so a reader of the committed file makes no -wal or -shm file next to it, and moved into place
whole. A sweep resumes from the snapshot on any machine: `litm sweep CONFIG --db SNAPSHOT`.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
from pathlib import Path


def snapshot(source: Path, target: Path) -> int:
    """Snapshot `source` into `target`; returns the snapshot's trial count."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        dst = sqlite3.connect(tmp)
        with dst:
            src.backup(dst)
        src.close()
        dst.execute("PRAGMA journal_mode=DELETE")
        dst.execute("VACUUM")
        trials = dst.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
        dst.close()
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return int(trials)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python scripts/snapshot_store.py SOURCE.sqlite TARGET.sqlite", file=sys.stderr)
        return 2
    source, target = Path(argv[0]), Path(argv[1])
    if not source.is_file():
        print(f"snapshot_store: no run store at {source}", file=sys.stderr)
        return 1
    print(f"{target}: {snapshot(source, target)} trials")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
