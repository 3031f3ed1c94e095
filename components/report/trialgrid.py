"""The trials x settings grid of one sweep (as promptfoo shows an evaluation): one row per task (its
question), one column per setting (arm x length x position, or arm x documents x gold index), each cell
the trial's outcome: pass (the metric is 1), fail (below 1), error (the call failed: not scored) or empty
(not run). A column's header carries its pass rate over its scored trials. Pure pandas, no streamlit.

Where a task ran twice in one setting (a sweep resumed with --retry-errors, say), the later trial counts."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from components.core.cells import layout_of
from components.report.analysis import is_error
from components.report.sweeps import model_name, with_setting

PASS, FAIL, ERROR, EMPTY = "pass", "fail", "error", ""


@dataclass(frozen=True)
class Column:
    """One setting: its label (the grid's column header, pass rate included) and its counts."""

    key: tuple  # (arm, model, size, where): what the trials of this column share
    setting: str  # 'baseline · 2,000 tokens · at 0.5'
    passed: int
    scored: int
    errors: int

    @property
    def rate(self) -> float:
        return self.passed / self.scored if self.scored else math.nan

    @property
    def label(self) -> str:
        rate = "–" if not self.scored else f"{self.rate:.0%}"
        tail = f" · {self.errors} failed" if self.errors else ""
        return f"{self.setting} · {rate} ({self.passed}/{self.scored}){tail}"


@dataclass(frozen=True)
class Grid:
    """`outcome`: tasks (index) x column labels, each PASS, FAIL, ERROR or EMPTY; `trial`: the same shape,
    the trial_id of each cell (NaN where empty); `answer`: the same shape, each trial's answer where the
    trials carry one ('' otherwise); `columns`: the Column of each, in order; `questions`: task -> question
    (where the trials carry it)."""

    outcome: pd.DataFrame
    trial: pd.DataFrame
    answer: pd.DataFrame
    columns: list[Column]
    questions: dict

    def page(self, start: int, stop: int) -> Grid:
        """Rows start..stop (a page of tasks)."""
        rows = self.outcome.index[start:stop]
        return Grid(
            self.outcome.loc[rows],
            self.trial.loc[rows],
            self.answer.loc[rows],
            self.columns,
            {k: v for k, v in self.questions.items() if k in set(rows)},
        )


def _where(r, docs: bool) -> tuple[int, float, str]:
    if docs:
        size, where = int(r["documents"]), float(r["gold_index"])
        return size, where, f"{size} documents · gold {int(where)}"
    size, where = int(r["length"]), float(r["position"])
    return size, where, f"{size:,} tokens · at {where:g}"


def placed(trials: pd.DataFrame) -> pd.DataFrame:
    """The trials a grid can place in a column: those with a size and a place (a length and a position,
    or a number of documents and a gold index); none of a sweep's (multi-question trials): no grid."""
    if trials.empty:
        return trials
    layout = layout_of(trials)
    need = [layout.size, layout.x]
    if any(c not in trials for c in need):
        return trials.iloc[0:0]
    return trials.dropna(subset=need)


def build(trials: pd.DataFrame, metric: str) -> Grid:
    """The grid of `trials` (one sweep's, usually) by `metric`: a trial passes when its value is 1 (at
    least 1), fails below, is an error when its call failed. Columns in order of arm, model, size, place;
    rows in the order the tasks first appear."""
    empty = Grid(pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), [], {})
    if trials.empty:
        return empty
    t = placed(with_setting(trials).reset_index(drop=True))
    if t.empty:
        return empty
    layout = layout_of(t)
    values = pd.to_numeric(t[metric], errors="coerce") if metric in t else pd.Series(math.nan, index=t.index)
    failed = is_error(t)
    t = t.assign(
        model_=t["model"].map(model_name),
        outcome_=[
            ERROR if f else (EMPTY if pd.isna(v) else (PASS if v >= 1 else FAIL))
            for f, v in zip(failed, values, strict=True)
        ],
    )
    if "trial_id" in t:
        t = t.sort_values("trial_id", kind="stable")  # the later trial of a task in a setting counts
    several_models = t["model_"].nunique() > 1
    keyed = []
    for _, r in t.iterrows():
        size, where, text = _where(r, layout.by_documents)
        arm = r["setting"] + (f" · {r['model_']}" if several_models else "")
        keyed.append(((arm, r["model_"], size, where), f"{arm} · {text}"))
    t = t.assign(key_=[k for k, _ in keyed], setting_=[s for _, s in keyed])
    tasks = list(dict.fromkeys(t["task"].astype(str)))
    t = t.assign(task_=t["task"].astype(str))
    last = t.drop_duplicates(subset=["task_", "key_"], keep="last")
    columns = []
    for key in sorted(set(last["key_"])):
        part = last[last["key_"] == key]
        columns.append(
            Column(
                key=key,
                setting=str(part["setting_"].iloc[0]),
                passed=int((part["outcome_"] == PASS).sum()),
                scored=int(part["outcome_"].isin([PASS, FAIL]).sum()),
                errors=int((part["outcome_"] == ERROR).sum()),
            )
        )
    labels = {c.key: c.label for c in columns}
    last = last.assign(column_=last["key_"].map(labels))
    order = [c.label for c in columns]

    def pivot(col: str, fill) -> pd.DataFrame:
        out = last.pivot(index="task_", columns="column_", values=col).reindex(index=tasks, columns=order)
        out.index.name, out.columns.name = "task", None
        return out.fillna(fill) if fill is not None else out

    answers = last.assign(answer_=last["answer"].fillna("").astype(str) if "answer" in last else "")
    outcome = pivot("outcome_", EMPTY)
    trial = (
        pivot("trial_id", None) if "trial_id" in last else pd.DataFrame(index=outcome.index, columns=order)
    )
    answer = answers.pivot(index="task_", columns="column_", values="answer_").reindex(
        index=tasks, columns=order
    )
    answer = answer.fillna("")
    answer.index.name, answer.columns.name = "task", None
    questions = {}
    if "question" in last:
        questions = {
            str(k): str(v) for k, v in zip(last["task_"], last["question"], strict=True) if pd.notna(v)
        }
    return Grid(outcome, trial, answer, columns, questions)
