"""Score the trials of run stores again from their stored answers, with the current metrics (no model call).

    python scripts/rescore_stores.py            # every shipped store (sample_docs/runs/*.sqlite), in place
    python scripts/rescore_stores.py --check    # only say which stores' scores differ (exit 1 if any)
    python scripts/rescore_stores.py PATH ...   # these stores

A metric that changes (a new one, or a rule that reads an answer otherwise) changes what a trial's stored
scores should be, while its answer stays what the model wrote. For every scored trial (no error) this
computes again, from the trial's parsed answer, its last response and its gold answers:
- every answer metric (components.core.metrics.answer_scores; every gold answer required where its task
  says so, `answer_mode`), as a sweep scores a trial (components.run.trial.score_outcome);
- for a trial of the multi-question design, every answer metric from its answer alone and its category
  (components.run.multiq.score_answer: one response answers many questions);
- its primary metric's name (the strategy's, or its task's where the strategy follows it: ALR2 on NIAH).
Sentence counts (ALR2 §5.1) read the trial's document, which this does not rebuild: trials holding
retrieved sentences are counted and left as they are. The tasks come from each sweep's own config.
A store that changes is then put back in the shipped shape (scripts/ship_stores.py: current schema,
rollback-journal mode, vacuumed).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from ship_stores import ship  # noqa: E402

from components.core.metrics import ANSWER_RECORDS, answer_scores  # noqa: E402
from components.run.config import SweepConfig  # noqa: E402
from components.run.multiq import score_answer  # noqa: E402
from components.run.schema import Trial  # noqa: E402
from components.run.store import RunStore, shipped_paths  # noqa: E402
from components.strategies import STRATEGIES  # noqa: E402

SCORED = [m.column for m in ANSWER_RECORDS]
COLUMNS = [*SCORED, "category", "metric"]


def tasks_of(db: sqlite3.Connection) -> dict[int, dict]:
    """{sweep id: {task id: Task}} from each sweep's stored config ({} where it cannot be read)."""
    out: dict[int, dict] = {}
    for sweep_id, blob in db.execute("SELECT id, config FROM sweeps"):
        try:
            out[int(sweep_id)] = {t.id: t for t in SweepConfig.from_stored(blob).all_tasks().tasks}
        except (ValueError, OSError):
            out[int(sweep_id)] = {}
    return out


def rescored(row: sqlite3.Row, task) -> dict:
    """The trial's answer metrics, category and primary metric name, as the current code scores them."""
    answers = json.loads(row["answers"] or "[]")
    if row["contexts"] is not None:  # the multi-question design: the answer of one question of many
        trial = Trial()
        score_answer(trial, row["answer"] or "", answers)
        return {**{c: getattr(trial, c) for c in SCORED}, "category": trial.category, "metric": row["metric"]}
    mode = task.meta.get("answer_mode", "any") if task is not None else "any"
    scores = answer_scores(row["answer"] or "", answers, mode, raw=row["raw_answer"] or "")
    strategy = STRATEGIES.get(row["strategy"])
    metric = strategy.metric_for(task.metric if task is not None else None) if strategy else row["metric"]
    return {**scores, "category": row["category"], "metric": metric}


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def differences(db: sqlite3.Connection) -> tuple[dict[int, dict], dict[str, int], int]:
    """({trial id: the values that change}, {column: trials whose value changes}, trials holding sentences)."""
    tasks = tasks_of(db)
    have = {r[1] for r in db.execute("PRAGMA table_info(trials)")}
    stored = [c for c in COLUMNS if c in have]
    rows = db.execute(
        "SELECT id, sweep_id, task, strategy, answer, raw_answer, answers, contexts, sentences, "
        + ", ".join(c for c in stored if c not in ("metric", "category"))
        + ", metric, category FROM trials WHERE error IS NULL AND (answer IS NOT NULL OR raw_answer IS NOT NULL)"
    ).fetchall()
    changes: dict[int, dict] = {}
    counts: dict[str, int] = {}
    with_sentences = 0
    for row in rows:
        with_sentences += bool(row["sentences"] and json.loads(row["sentences"]))
        new = rescored(row, tasks.get(int(row["sweep_id"]), {}).get(row["task"]))
        diff = {c: v for c, v in new.items() if c not in stored or not _same(row[c], v)}
        if diff:
            changes[int(row["id"])] = diff
            for c in diff:
                key = f"{c} changed" if c in stored and row[c] is not None else f"{c} filled"
                counts[key] = counts.get(key, 0) + 1
    return changes, counts, with_sentences


def read(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    db.row_factory = sqlite3.Row
    return db


def rescore(path: Path) -> tuple[dict[str, int], int]:
    """Write the changed scores into the store (migrated first, on a copy), then ship it."""
    with tempfile.TemporaryDirectory(dir=path.parent) as folder:
        tmp = Path(folder) / path.name
        shutil.copyfile(path, tmp)
        RunStore(tmp).close_all()  # the current schema: the new metric columns exist
        db = sqlite3.connect(tmp)
        db.row_factory = sqlite3.Row
        changes, counts, with_sentences = differences(db)
        with db:
            for trial_id, values in changes.items():
                sets = ", ".join(f"{c} = ?" for c in values)
                db.execute(f"UPDATE trials SET {sets} WHERE id = ?", (*values.values(), trial_id))
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        tmp.replace(path)
    for extra in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        extra.unlink(missing_ok=True)
    ship(path)
    return counts, with_sentences


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--check", action="store_true", help="only say which stores' scores differ; exit 1 if any"
    )
    ap.add_argument("paths", nargs="*", type=Path, help="stores (default: sample_docs/runs/*.sqlite)")
    args = ap.parse_args(argv)
    behind = 0
    for path in args.paths or shipped_paths():
        db = read(path)
        try:
            _, counts, with_sentences = differences(db)
        finally:
            db.close()
        if counts and not args.check:
            counts, with_sentences = rescore(path)
        behind += bool(counts)
        what = ", ".join(f"{c} in {n:,} trials" for c, n in sorted(counts.items())) or "no score changes"
        verb = "would change" if args.check and counts else "changed" if counts else "current"
        note = (
            f"; {with_sentences:,} trials with retrieved sentences keep their counts"
            if with_sentences
            else ""
        )
        print(f"{path.name}: {verb}: {what}{note}")
    return 1 if args.check and behind else 0


if __name__ == "__main__":
    raise SystemExit(main())
