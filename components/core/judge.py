"""An LLM judge's parts that need no model: its prompt (strategies/templates/judge.txt, our own), the
verdict read from its reply, and the audit of a judge against a string metric (raw agreement and Cohen's
kappa, with n, and the disagreements for a person to check). Sending the prompt, caching the verdict and
storing it with a trial belong to the runner.

The prompt is filled by plain replacement, never str.format: question, references and answer are put
in byte for byte (braces and all), each once."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from components.core.prompts import load_template

TEMPLATE = "judge"
FIELDS = ("question", "references", "prediction")
_VERDICT = re.compile(r"[A-Za-z]+")


def judge_prompt(question: str, answers: Sequence[str], prediction: str) -> str:
    """The judge's prompt for one trial: the template with the question, the reference answers (each in
    double quotes, separated by "; ") and the model's answer as it was given."""
    values = {
        "question": question,
        "references": "; ".join(f'"{a}"' for a in answers),
        "prediction": prediction,
    }
    text = load_template(TEMPLATE)
    out, at = [], 0
    for m in re.finditer(r"\{(" + "|".join(FIELDS) + r")\}", text):  # one pass: a value is never re-read
        out += [text[at : m.start()], values[m.group(1)]]
        at = m.end()
    return "".join(out + [text[at:]])


def parse_verdict(reply: str) -> bool | None:
    """True for CORRECT, False for INCORRECT (the first word of the reply's first non-empty line, any
    case, markdown around it allowed), None for anything else (a reply the judge did not answer)."""
    for line in (reply or "").splitlines():
        if line.strip():
            word = _VERDICT.search(line)
            verdict = word.group(0).upper() if word else ""
            return {"CORRECT": True, "INCORRECT": False}.get(verdict)
    return None


@dataclass(frozen=True)
class Agreement:
    """A judge against a string metric over the trials both scored: n, raw agreement (the share of
    trials where they agree), Cohen's kappa (None when chance agreement is 1: both said one thing
    throughout) and the indices of the trials where they disagree."""

    n: int
    raw: float
    kappa: float | None
    disagreements: tuple[int, ...]


def agreement(judge: Sequence[bool | None], metric: Sequence[bool | None]) -> Agreement:
    """Agreement of two verdicts per trial, over the trials where both gave one (None: not scored)."""
    from statsmodels.stats.inter_rater import cohens_kappa

    if len(judge) != len(metric):
        raise ValueError(f"{len(judge)} judge verdicts against {len(metric)} metric verdicts")
    both = [
        (i, bool(j), bool(m))
        for i, (j, m) in enumerate(zip(judge, metric, strict=True))
        if None not in (j, m)
    ]
    n = len(both)
    if n == 0:
        return Agreement(0, float("nan"), None, ())
    table = [[sum(1 for _, j, m in both if j is a and m is b) for b in (True, False)] for a in (True, False)]
    raw = (table[0][0] + table[1][1]) / n
    chance = sum(sum(table[k]) * (table[0][k] + table[1][k]) for k in (0, 1)) / n**2
    kappa = None if chance >= 1 else float(cohens_kappa(table).kappa)
    return Agreement(n, raw, kappa, tuple(i for i, j, m in both if j != m))
