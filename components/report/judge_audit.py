"""The audit of an LLM judge against the string metrics, on every sweep that has both: for each sweep and
each string metric (best subspan EM, fuzzy match), n, raw agreement, Cohen's kappa (core.judge.agreement)
and the trials where they disagree, for a person to check (`litm results --audit`, and `--json`)."""

from __future__ import annotations

import pandas as pd

from components.core.judge import agreement
from components.core.metrics import METRICS

AGAINST = ("subspan-em", "fuzzy")  # the string metrics a judge is checked against
SHOWN = ("trial_id", "task", "question", "answers", "answer", "judge_reply")  # what a disagreement lists


def _verdict(x) -> bool | None:
    return None if x is None or x != x else bool(float(x) >= 0.5)


def audits(trials: pd.DataFrame) -> list[dict]:
    """One audit per sweep with judged trials and per string metric: {sweep, against, label, n, raw,
    kappa, disagreements: [{trial_id, task, question, answers, answer, judge_reply, judge, metric}]}."""
    if "judge" not in trials.columns:
        return []
    out = []
    judged = trials[pd.to_numeric(trials["judge"], errors="coerce").notna()]
    for sweep, t in judged.groupby("sweep", sort=True):
        t = t[t["error"].isna()] if "error" in t.columns else t
        for name in AGAINST:
            m = METRICS[name]
            if m.column not in t.columns:
                continue
            judge = [_verdict(v) for v in t["judge"]]
            metric = [_verdict(v) for v in t[m.column]]
            a = agreement(judge, metric)
            if a.n == 0:
                continue
            rows = t.iloc[list(a.disagreements)]
            out.append(
                {
                    "sweep": sweep,
                    "against": name,
                    "label": m.label,
                    "n": a.n,
                    "raw": a.raw,
                    "kappa": a.kappa,
                    "disagreements": [
                        {
                            **{c: r.get(c) for c in SHOWN if c in rows.columns},
                            "judge": judge[i],
                            "metric": metric[i],
                        }
                        for i, (_, r) in zip(a.disagreements, rows.iterrows(), strict=True)
                    ],
                }
            )
    return out


def lines(found: list[dict]) -> list[str]:
    """The audits as text: a line per audit, then a line per disagreement (the answer cut to 80 characters)."""
    if not found:
        return ["no sweep here has both a judge's verdicts and string metrics"]
    out = []
    for a in found:
        kappa = "n/a (one verdict throughout)" if a["kappa"] is None else f"{a['kappa']:.2f}"
        out.append(
            f"{a['sweep']}: judge vs {a['label']}: n = {a['n']}, raw agreement {a['raw']:.0%}, "
            f"Cohen's kappa {kappa}, {len(a['disagreements'])} disagreement(s)"
        )
        for d in a["disagreements"]:
            answer = str(d.get("answer") or "")
            answer = answer if len(answer) <= 80 else answer[:77] + "..."
            out.append(
                f"  trial {d.get('trial_id')} ({d.get('task')}): judge says "
                f"{'correct' if d['judge'] else 'incorrect'}, {a['against']} says "
                f"{'correct' if d['metric'] else 'incorrect'}; answer {answer!r}"
            )
    return out


SUMMARY = ("sweep", "label", "n", "raw", "kappa", "disagreements")  # a row of `summary`
VERDICTS = ("judge", *(METRICS[name].column for name in AGAINST))  # a disagreement's verdicts


def summary(found: list[dict]) -> pd.DataFrame:
    """The audits as a table, a row per sweep and string metric: sweep, label (the metric's), n, raw
    agreement, Cohen's kappa (None: one verdict throughout) and the number of disagreements."""
    rows = [{**{c: a[c] for c in SUMMARY[:-1]}, "disagreements": len(a["disagreements"])} for a in found]
    return pd.DataFrame(rows, columns=list(SUMMARY))


def disagreeing(trials: pd.DataFrame, found: list[dict]) -> pd.DataFrame:
    """The trials where the judge disagrees with any string metric of `found` (the audits of `trials`),
    once each, in trial order: their rows of `trials` with every verdict as True / False / None (judge,
    subspan_em, fuzzy) beside the columns they had. A person checks these; `trials` needs trial_id."""
    ids = {(a["sweep"], d["trial_id"]) for a in found for d in a["disagreements"]}
    if not ids or "trial_id" not in trials.columns:
        return trials.iloc[0:0].assign(**{c: pd.Series(dtype=object) for c in VERDICTS})
    keys = zip(trials["sweep"], trials["trial_id"], strict=True)
    out = trials[[k in ids for k in keys]].copy()
    for c in VERDICTS:
        out[c] = [_verdict(v) for v in out[c]] if c in out.columns else None
    return out
