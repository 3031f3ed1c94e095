"""A task: a question, its gold answers, and its passages (which are gold, which are distractors)."""

from __future__ import annotations

from dataclasses import dataclass, field


class TaskFileError(ValueError):
    """A task file that cannot be read at all (a bad row is reported in TaskSet.errors instead)."""


@dataclass(frozen=True)
class Passage:
    text: str
    title: str = ""
    gold: bool = False


@dataclass(frozen=True)
class Task:
    id: str
    question: str
    answers: tuple[str, ...]
    passages: tuple[Passage, ...] = ()  # gold and distractors, in their given order
    kind: str = "qa"  # "qa", "kv", "niah", "niah-multikey", "facts", "facts-multihop", ...
    gold_sentences: tuple[str, ...] = ()  # ALR2 §5.1 supporting facts, where known
    meta: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def metric(self) -> str | None:
        """The metric the task's benchmark scores it with: its meta "metric", else its kind's
        (core.metrics.KIND_METRICS: RULER's for a NIAH task), else None."""
        from components.core.metrics import KIND_METRICS, get_metric

        named = self.meta.get("metric")
        return get_metric(named).name if isinstance(named, str) and named else KIND_METRICS.get(self.kind)

    @property
    def gold_indices(self) -> tuple[int, ...]:
        """0-based indices of gold passages among `passages`."""
        return tuple(i for i, p in enumerate(self.passages) if p.gold)

    @property
    def gold_pages(self) -> tuple[int, ...]:
        """1-based page numbers of gold passages when the passages are taken as given pages."""
        return tuple(i + 1 for i in self.gold_indices)


@dataclass
class TaskSet:
    """Tasks read from a file, with the rows that could not be read (line number, message)."""

    tasks: list[Task]
    errors: list[tuple[int, str]] = field(default_factory=list)
    source: str = ""
    format: str = ""
    # A shared distractor pool (e.g. a CSV without a distractors column: every row's gold passage,
    # marked non-gold). Pass it to sweepdocs.build_document(..., pool=...); the builder leaves out
    # the task's own gold passages and passages that mention its answers.
    pool: list[Passage] = field(default_factory=list)

    @property
    def duplicates(self) -> dict[str, int]:
        """Task ids used by more than one task -> how many tasks use each (duplicate_ids)."""
        return duplicate_ids(self.tasks)


def duplicate_ids(tasks) -> dict[str, int]:
    """Task ids used by more than one task -> how many use each, in the order they first appear. A sweep
    keys every trial by its task id, so it refuses tasks that share one (run.plan)."""
    seen: dict[str, int] = {}
    for t in tasks:
        seen[t.id] = seen.get(t.id, 0) + 1
    return {k: n for k, n in seen.items() if n > 1}


def duplicates_text(dups: dict[str, int], shown: int = 3) -> str:
    """'"a" (4 tasks), "b" (2 tasks) and 3 more ids' for a message."""
    parts = [f"{k[:80]!r} ({n} tasks)" for k, n in list(dups.items())[:shown]]
    more = f" and {len(dups) - shown} more id(s)" if len(dups) > shown else ""
    return ", ".join(parts) + more
