"""Sample documents and task sets that ship with the app (sample_docs/).

A sample document is `sample_docs/<name>.txt` (paragraphs separated by blank lines) with a sidecar
`sample_docs/<name>.json`: {"title", "description", "source", "questions": [{"question", "answers"}]}.
Task sets are `sample_docs/tasks/*.jsonl` (our task format, see components.tasks.importers), described
in `sample_docs/tasks/index.json` ({file name: description}). Cached runs live elsewhere
(sample_docs/runs/) and are not listed here; sweep configs that ship are sample_docs/configs/*.toml
and the shipped runs' own (bundled_configs, config_path).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path

from components.core.resources import sample_path

NQ_SET = "nq-open-30docs"  # real NQ-open questions with 29 distractors each (sample_docs/tasks/NQ-OPEN.md)


@dataclass(frozen=True)
class Sample:
    name: str
    title: str
    description: str
    source: str
    text: str
    questions: list[tuple[str, list[str]]] = field(default_factory=list, compare=False, hash=False)
    path: str = ""


@dataclass(frozen=True)
class TaskSetInfo:
    name: str
    path: str
    description: str
    n: int


def _sample(txt: Path) -> Sample:
    side = txt.with_suffix(".json")
    meta = json.loads(side.read_text(encoding="utf-8")) if side.is_file() else {}
    questions = [(q["question"], list(q["answers"])) for q in meta.get("questions", [])]
    return Sample(
        txt.stem,
        meta.get("title") or txt.stem.replace("_", " ").title(),
        meta.get("description", ""),
        meta.get("source", ""),
        txt.read_text(encoding="utf-8"),
        questions,
        str(txt),
    )


def list_samples(directory: Path | None = None) -> list[Sample]:
    """The sample documents, sorted by name."""
    directory = directory or sample_path()
    return [_sample(p) for p in sorted(directory.glob("*.txt"))]


def list_task_sets(directory: Path | None = None) -> list[TaskSetInfo]:
    """The shipped task files with their descriptions and number of tasks (one per non-empty line)."""
    directory = directory or sample_path("tasks")
    index_path = directory / "index.json"
    index = json.loads(index_path.read_text(encoding="utf-8")) if index_path.is_file() else {}
    out = []
    for p in sorted([*directory.glob("*.jsonl"), *directory.glob("*.jsonl.gz")]):
        opener = gzip.open if p.suffix == ".gz" else open
        with opener(p, "rt", encoding="utf-8") as fh:
            n = sum(1 for line in fh if line.strip())
        name = p.name.removesuffix(".gz").removesuffix(".jsonl")
        out.append(TaskSetInfo(name, str(p), index.get(p.name, ""), n))
    return sorted(out, key=lambda s: s.name)


def bundled_configs() -> dict[str, Path]:
    """The sweep configs that ship, by name: sample_docs/configs/*.toml (quick-local: a one-minute
    check with the local model) and the shipped runs' own configs (sample_docs/runs/*.toml)."""
    paths = [*sorted(sample_path("configs").glob("*.toml")), *sorted(sample_path("runs").glob("*.toml"))]
    return {p.stem: p for p in paths}


def config_path(name_or_path: str) -> Path:
    """A sweep config given on the command line: a TOML file, or the name of a bundled config
    (`litm sweep local-qwen-facts`), so an installed app can run one from any folder."""
    path = Path(name_or_path)
    if path.exists():  # a file, or something that is not one (a device, a FIFO): the reader says which
        return path
    bundled = bundled_configs()
    name = path.name.removesuffix(".toml")
    if path.parent == Path(".") and name in bundled:
        return bundled[name]
    raise FileNotFoundError(
        f"no sweep config {name_or_path!r}: give a TOML file or a bundled config "
        f"({', '.join(bundled) or 'none installed'})"
    )
