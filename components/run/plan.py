"""The trial plan of a sweep: every trial in a fixed order, each with a stable key, in a cell of the
grid (components.core.cells), and the document each trial reads (tasks.sweepdocs.cell_document: built
from prefix sums, R&R §4.1 / LITM §3.1)."""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from dataclasses import dataclass

from components.core.cells import Cell
from components.run.config import ModelConfig, SweepConfig, check_size, gold_indices
from components.run.schema import key_of, model_fields, params_json
from components.strategies import STRATEGIES


@dataclass(frozen=True)
class TrialSpec:
    index: int
    key: str
    task: object  # components.tasks.model.Task
    cell: Cell  # length and position (R&R §4.1), or documents and gold index (LITM §3.1)
    strategy: str
    params: dict
    model: ModelConfig
    sample: int | None = None  # the sample's index (from 0) when the sweep takes samples > 1

    @property
    def length(self) -> int | None:
        return self.cell.length

    @property
    def position(self) -> float | None:
        return self.cell.position

    @property
    def documents(self) -> int | None:
        return self.cell.documents

    @property
    def gold_index(self) -> int | None:
        return self.cell.gold_index

    @property
    def document_key(self) -> tuple:
        """What the trial's document depends on (trials of one task and cell share a document)."""
        return (self.task.id, self.cell)


def trial_key(
    config: SweepConfig,
    task_id: str,
    cell: Cell,
    strategy: str,
    params: dict,
    model: ModelConfig,
    sample: int | None = None,
) -> str:
    """A sweep trial's key; the sample's index and the judge join it only in a sweep that has them, so
    every other key stays as it was."""
    from components.run.judging import judge_key

    fields = {"task": task_id, **cell.fields(), "strategy": strategy, "params": params}
    extra = {"sample": sample} if sample is not None else {}
    return key_of(
        {**fields, **model_fields(config, model), **measure_key(config), **judge_key(config), **extra}
    )


def samples_of(config: SweepConfig) -> list[int | None]:
    """The sample indices of each trial: [None] for one sample (the default), else 0 .. samples - 1."""
    n = getattr(config, "samples", 1) or 1
    return [None] if n == 1 else list(range(n))


def measure_key(config: SweepConfig) -> dict:
    """The measure in a trial's key; "answer" (the default) adds nothing, so older keys stay valid."""
    measure = getattr(config, "measure", "answer")
    return {} if measure == "answer" else {"measure": measure}


def cells(config: SweepConfig) -> list[Cell]:
    """Every cell of the grid, in order. A gold_index counts from 0 (-1 is the last document); one that
    does not exist for N documents is left out. Linear in the number of cells (a list membership test
    per cell made 40,000 cells take 48 s)."""
    if not config.documents:
        return [
            Cell(length=length, position=position)
            for length in config.lengths
            for position in config.positions_for(length)
        ]
    return [
        Cell(documents=n, gold_index=j)
        for n in dict.fromkeys(config.documents)
        for j in gold_indices(n, config.gold_index)
    ]


def left_out(config: SweepConfig) -> list[tuple[int, int]]:
    """(documents, gold_index) pairs of the config that do not exist (index past the last document)."""
    return [(n, i) for n in config.documents for i in config.gold_index if not -n <= i < n]


# a parameter that sizes something in the document, checked against the largest document the grid builds
# (what it counts): k > pages or c > tokens makes every trial of that setting a `params` error. r is not
# checked: r at or past the end of every document places no reminder, which is a setting a sweep may want
# (a no-reminder control beside smaller r; R&R's own grid runs 10k documents with r = 10k). A document's
# tokens are as its cell counts them (tasks.sweepdocs.Built.length_tokens: R&R's d, PAGE tags included), and
# a c up to the cell's length d fits (R&R Table 3 runs c = d = 80k: one chunk)
FITS = {"k": "pages", "c": "tokens"}


def _fit_needs(config: SweepConfig) -> list[tuple[str, str, int, bool]]:
    """(strategy, param, largest value, given) for every sizing parameter of the sweep's strategies."""
    out = []
    for strategy in config.strategies:
        for name in FITS:
            param = STRATEGIES[strategy].param(name)
            if param is None:
                continue
            value = config.params.get(name, param.default)
            values = value if isinstance(value, list | tuple) else [value]
            out.append((strategy, name, max(int(v) for v in values), name in config.params))
    return out


def check_fit(config: SweepConfig, tasks: list, grid: list[Cell]) -> None:
    """ValueError (one line) when a sizing parameter (FITS: k pages, c tokens) does not fit even the
    largest document of the grid: every trial of that setting would fail. The
    largest cell's document is built for one task after another until one is large enough (usually the
    first); a document that cannot be built is the trial's own error, left to the sweep."""
    needs = _fit_needs(config)
    if not needs or not grid or not tasks:
        return
    cell = max(
        grid, key=lambda c: (c.documents or 0, c.length or 0)
    )  # the most documents, or the longest length
    most = {"pages": 0, "tokens": 0}
    built = False
    from components.tasks.sweepdocs import cell_document

    for task in tasks:
        try:
            made = cell_document(task, cell, encoding=config.encoding, tasks=tasks)
        except ValueError:
            continue
        built = True
        tokens = max(made.length_tokens, cell.length or 0)
        most["pages"], most["tokens"] = (
            max(most["pages"], len(made.document.pages)),
            max(most["tokens"], tokens),
        )
        if all(_fits(name, value, most) for _, name, value, _ in needs):
            return
    if not built:
        return
    strategy, name, value, given = next(n for n in needs if not _fits(n[1], n[2], most))
    what = FITS[name]
    default = "" if given else " (its default)"
    where = cell.where()
    raise ValueError(
        f"sweep {config.name!r}: {strategy}'s {name} = {value:,}{default} is more than the "
        f"{most[what]:,} {what} of the largest document of the grid ({where}): every trial would be "
        f"an error; give {name} a smaller value in params"
    )


def _fits(name: str, value: int, most: dict) -> bool:
    return value <= most[FITS[name]]


def plan(config: SweepConfig, tasks: list | None = None) -> list[TrialSpec]:
    """Every trial, in a fixed order: model, strategy, parameter setting, cell, task (innermost). Tasks
    that share an id are refused (ValueError naming them): a trial is keyed by its task's id, so they would
    be one trial in the store while the sweep counted several (and pairs would match the wrong trials).
    A plan of more than MAX_TRIALS trials is refused before it is made (check_size), and so is a parameter
    no document of the grid can take (check_fit)."""
    from components.tasks.model import duplicate_ids, duplicates_text

    tasks = config.load_tasks() if tasks is None else tasks
    if getattr(config, "design", None):  # the multi-question design plans its own trials (run/multiq.py)
        from components.run.multiq import plan_multi

        return plan_multi(config, tasks)
    dups = duplicate_ids(tasks)
    if dups:
        raise ValueError(
            f"the tasks of sweep {config.name!r} share ids: {duplicates_text(dups)}; every trial is "
            f"stored under its task's id, so give each task its own id in {config.tasks}"
        )
    check_size(config, len(tasks))
    grid = cells(config)
    check_fit(config, tasks, grid)
    out: list[TrialSpec] = []
    for model in config.models:
        for strategy in config.strategies:
            for params in config.params_for(strategy):
                for cell in grid:
                    for task in tasks:
                        for i in samples_of(config):
                            key = trial_key(config, task.id, cell, strategy, params, model, i)
                            out.append(TrialSpec(len(out), key, task, cell, strategy, params, model, i))
    if len({s.key for s in out}) != len(out):  # every trial the sweep counts has its own row in the store
        raise ValueError(f"sweep {config.name!r}: two trials of the plan have the same key")
    return out


def parse_shard(text: str) -> tuple[int, int]:
    """ "I/N" (0 <= I < N) -> (I, N); ValueError with one line for anything else."""
    parts = str(text).strip().split("/")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"--shard takes I/N, the part I of N parts counted from 0 (e.g. 0/4), got {text!r}")
    index, count = int(parts[0]), int(parts[1])
    if count < 1 or index >= count:
        raise ValueError(
            f"--shard {text}: I must be 0 to N - 1 (N = {count} parts: 0/{count} to {count - 1}/{count})"
        )
    return index, count


def shard_unit(spec) -> tuple:
    """What a shard takes whole: a question of a model (all its positions, strategies and settings, so a
    model server's prefix cache serves them, and a shard stopped early holds whole questions), or, in the
    multi-question design, a prompt's group of questions (they share their calls)."""
    if hasattr(spec, "doc_index"):  # run/multiq.py MQSpec: the questions asked in one prompt
        return (
            spec.model.label,
            spec.strategy,
            params_json(spec.params),
            spec.contexts,
            spec.per_context,
            spec.doc_index,
        )
    return (spec.model.label, spec.task.id)


def shard(specs: list, index: int, count: int) -> list:
    """Part `index` of `count` of a plan, the same on every machine (it depends on the plan alone): its
    units (shard_unit) in order of first appearance, dealt round-robin; with fewer units than parts, its
    trials are dealt one by one instead. The parts are disjoint, and together they are the plan; each
    trial keeps its key, so the parts' stores merge into the whole sweep (`litm import`)."""
    if count == 1:
        return list(specs)
    units = list(dict.fromkeys(shard_unit(s) for s in specs))
    if len(units) < count and not any(hasattr(s, "doc_index") for s in specs):
        return [s for i, s in enumerate(specs) if i % count == index]
    rank = {u: i for i, u in enumerate(units)}
    return [s for s in specs if rank[shard_unit(s)] % count == index]


def precount(tasks: list, encoding: str) -> None:
    """Count every passage of every task in one batch (sweepdocs caches counts per text), so building
    the grid's documents tokenises nothing more."""
    from components.core.documents import neutralise_tags
    from components.tasks.sweepdocs import count_passages

    count_passages([neutralise_tags(p.text) for t in tasks for p in t.passages], encoding)


def trial_document(spec: TrialSpec, encoding: str, tasks: list | None = None):
    """The trial's document: its task's document in its cell (tasks.sweepdocs.cell_document), `tasks`
    the whole task set (the distractor pool when a task has too few passages)."""
    from components.tasks.sweepdocs import cell_document

    return cell_document(spec.task, spec.cell, encoding=encoding, tasks=tasks)


ORDER_BLOCK = 256  # characters per block of a prompt's order key
ORDER_MAX_BLOCKS = 2048  # blocks in a key (the first 512k characters); 8 bytes each


def prefix_key(text: str) -> bytes:
    """A prompt's order key: an 8-byte digest of each ORDER_BLOCK characters, in order. Sorting by it
    sorts prompts as a trie of their blocks is walked (depth first): prompts sharing their first k
    blocks are adjacent, and the sum of the prefixes consecutive prompts share is the most any order
    gives (in blocks). A key is 8 bytes per 256 characters, not the text itself, so a large sweep's
    keys stay small (about 10 kB for an 80k-token prompt)."""

    n = min(len(text), ORDER_BLOCK * ORDER_MAX_BLOCKS)
    return b"".join(
        hashlib.blake2b(text[i : i + ORDER_BLOCK].encode("utf-8"), digest_size=8).digest()
        for i in range(0, n, ORDER_BLOCK)
    )


def ordered(specs: list[TrialSpec], order: str, first_prompt) -> list[TrialSpec]:
    """The trials in the order they run. "plan": as planned. "prefix": each model's trials (models in
    plan order), question by question (tasks in plan order), each question's trials sorted by their
    first prompt's prefix_key (plan order among equal keys), so that consecutive prompts share the
    longest prefix: for a LITM gold-index sweep, a question's positions from the last index down.
    Questions stay whole because prompts of different questions share little (the template's head)
    and a sweep stopped early then holds whole questions, which paired statistics need; the price is a
    sweep whose questions share one document (a haystack), whose prompts would share more across them.
    A resumed sweep finishes the questions it began first (those with fewer trials left than the
    others); ranked by first appearance alone, in a plan that goes cell by cell, they came last.
    `first_prompt(spec)` gives the text of the trial's first prompt ("" when it cannot be built)."""
    if order == "plan":
        return list(specs)
    models = list(dict.fromkeys(s.model.label for s in specs))
    tasks = list(dict.fromkeys(s.task.id for s in specs))
    rank_m, rank_t = {m: i for i, m in enumerate(models)}, {t: i for i, t in enumerate(tasks)}
    group = Counter((s.model.label, s.task.id) for s in specs)  # a question's only trial needs no prompt
    most = Counter()
    for (m, _), n in group.items():
        most[m] = max(most[m], n)
    keyed = [
        (
            rank_m[s.model.label],
            group[s.model.label, s.task.id] == most[s.model.label],
            rank_t[s.task.id],
            prefix_key(first_prompt(s)) if group[s.model.label, s.task.id] > 1 else b"",
            s.index,
            s,
        )
        for s in specs
    ]
    keyed.sort(key=lambda k: k[:5])
    return [k[5] for k in keyed]


class Documents:
    """The documents of a running sweep, one per cell (task, length, position or documents and gold
    index), shared by the strategies, parameter settings and models of that cell. The `keep` most
    recently used are kept; one evicted is built again when asked for, and comes out the same
    (trial_document is deterministic). Kept documents share their page texts with the task file:
    about 0.12 MB each at 80k tokens of NQ-open, so the bound is about 60 MB there."""

    def __init__(self, encoding: str, tasks: list | None, keep: int = 512):
        self.encoding, self.tasks, self.keep = encoding, tasks, keep
        self.kept: OrderedDict = OrderedDict()

    def get(self, spec: TrialSpec):
        """The trial's sweepdocs.Built; ValueError (the trial's error) when it cannot be built."""
        key = spec.document_key
        built = self.kept.get(key)
        if built is None:
            built = trial_document(spec, self.encoding, self.tasks)
            self.kept[key] = built
            if len(self.kept) > self.keep:
                self.kept.popitem(last=False)
        else:
            self.kept.move_to_end(key)
        return built
