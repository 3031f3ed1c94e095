"""The verdict over arms compared: the decision's record, then its wording, apart.

`Verdict` holds what report.compare.verdict decided (which arm against which, by which route, how sure,
the saving) and the numbers it decided on (the most accurate arm, the arm recommended or the closest one
against it, the pairs a tie or a cheaper arm would need); it holds no sentence. `headline` and `reasons`
word it: the one wording the Compare page, the HTML report and `litm compare` show.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

ALPHA = 0.05
DEFAULT_MARGIN = 0.05  # non-inferiority margin: a cheaper arm may be at most 5 points worse (95% interval)
DEFAULT_MIN_SAVING = 0.10  # and must save at least 10% of the most accurate arm's cost
REFERENCE_MODEL = "openai:gpt-4o-mini"  # what free (local) arms are priced as for reference

# the routes of a decision (Verdict.kind), and what is missing when there is none (Verdict.missing)
KINDS = ("cheaper", "winner", "tie", "none")
MISSING = {
    "arms": (
        "choose at least two arms with scored trials",
        "Choose at least two arms with scored trials to compare.",
    ),
    "matches": ("no trials of {best} match another arm's", ""),
}
# why the tie's recommended arm was chosen among the arms the data cannot tell apart (Verdict.tie_reason)
TIE_REASONS = {
    "also cheapest": "it is also the cheapest of them",
    "none cheaper": "no other is cheaper",
    "cheaper": "it is the cheaper",
    "cheapest": "it is the cheapest of them",
}


@dataclass(frozen=True)
class Figures:
    """An arm as the verdict read it: its accuracy over n scored trials and its cost per 1,000 questions
    (NaN: unknown)."""

    label: str
    accuracy: float
    n: int
    cost: float


@dataclass(frozen=True)
class Against:
    """An arm against the most accurate one over their matched trials: acc(arm) - acc(most accurate)
    (`diff`) with its 95% interval (lo, hi), the pair's p-values, and the share of the most accurate arm's
    cost it saves (`share`)."""

    arm: Figures
    diff: float
    lo: float
    hi: float
    n_matched: int
    p_value: float
    p_holm: float
    share: float = math.nan


@dataclass(frozen=True)
class Verdict:
    """The decision `verdict` made: which arm (`recommend`) against which (`versus`), by which route
    (`kind`: "cheaper" non-inferior and cheaper, "winner" beats every other arm, "tie" no significant
    difference so the cheaper arm, "none"), how sure (`confidence`), the saving per 1,000 questions
    against `versus` (dollars; tokens per question and dollars at a reference price where every arm is
    free), the matched trials that would tell, and the rule's settings. Then the numbers it decided on:
    the most accurate arm (`best`); the cheaper arm recommended (`chosen`); the closest arm of a tie
    (`closest`), the arms tied (`tied`, the recommended first) and why that one (`tie_reason`); a cheaper
    arm not yet shown within the margin (`not_shown`). `line` and `reasons` word it (`headline`,
    `reasons`): the one wording of every surface."""

    recommend: str | None = None
    versus: str | None = None
    kind: str = "none"
    confidence: str = "not yet"  # "confident" or "not yet"
    saving_per_1000_usd: float | None = None  # against `versus`; negative: the recommended arm costs more
    tokens_saved_per_question: float | None = None  # input + output tokens, against `versus`
    free: bool = False  # every arm compared runs free (a local model)
    reference: str | None = None  # the model a free comparison is priced as for reference
    reference_saving_per_1000_usd: float | None = None
    margin: float = DEFAULT_MARGIN
    min_saving: float = DEFAULT_MIN_SAVING
    alpha: float = ALPHA
    correction: str = "Holm"
    pairs_needed: int | None = None
    missing: str = ""  # kind "none": a key of MISSING
    best: Figures | None = None
    chosen: Against | None = None  # kind "cheaper"
    family: int = 0  # pairs in the Holm family
    largest_p: float = math.nan  # the largest Holm-adjusted p against the most accurate arm
    closest: Against | None = None  # kind "tie": the arm nearest the most accurate one
    tied: tuple[str, ...] = ()  # kind "tie": the arms the data cannot tell apart, the recommended first
    tie_reason: str = ""  # a key of TIE_REASONS
    equal: bool = False  # kind "tie": two arms exactly as accurate over their matched trials
    gap: float = math.nan  # the difference the tie's pairs_needed are for
    tie_pairs: int | None = None  # the matched trials that would tell the tie apart
    unpaired: tuple[str, ...] = ()  # arms without trials matching the most accurate arm's
    not_shown: Against | None = None  # the cheapest arm not yet shown within the margin
    not_shown_pairs: int | None = None  # the matched trials that would show it

    @property
    def line(self) -> str:
        """ "Recommend X · saves Y per 1,000 questions against Z · confident" (or "· not yet")."""
        return headline(self)

    @property
    def why_none(self) -> str:
        """Without a recommendation, what is missing, in a few words."""
        if not self.missing:
            return ""
        return MISSING[self.missing][0].format(best=self.best.label if self.best else "")

    @property
    def reasons(self) -> str:
        """The reasoning with its numbers."""
        return reasons(self)

    @property
    def text(self) -> str:
        """The verdict as the pages show it: its one line, then the reasoning."""
        return f"{self.line}. {self.reasons}"

    def to_dict(self) -> dict:
        """The JSON form (`litm compare --json`): every field by name, its line, reasons and why_none."""
        return {**asdict(self), "line": self.line, "reasons": self.reasons, "why_none": self.why_none}


# --- the wording -----------------------------------------------------------------------------------------


def money(x) -> str:
    """Dollars as people write them: "$3.73", "$3,729.66"; under a dollar, two significant digits
    ("$0.0042"), so a small saving never reads as $0.00."""
    if x is None or x != x:
        return "an unknown amount"
    if x == 0:
        return "$0"
    if abs(x) >= 1:
        return f"${x:,.2f}"
    digits = max(2, 1 - math.floor(math.log10(abs(x))))
    return f"${x:,.{digits}f}"


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _points(x: float) -> str:
    return f"{100 * x:.0f} points"


def _saving_phrase(v: Verdict) -> str:
    """The verdict's second clause: what the recommended arm saves (or costs more) against `versus`."""
    against = f" against {v.versus}" if v.versus else ""
    if v.free:  # every arm runs free: the saving at a reference model's list price, said to be one
        ref = v.reference_saving_per_1000_usd
        if v.reference is None or ref is None or ref != ref:
            return f"saves $0 per 1,000 questions{against} (every arm runs free here)"
        at = f" at {v.reference.partition(':')[2] or v.reference} prices"
        if ref >= 0:
            return f"saves {money(ref)} per 1,000 questions{at}{against} (free here)"
        return (
            f"costs {money(-ref)} more per 1,000 questions{at}"
            + (f" than {v.versus}" if v.versus else "")
            + " (free here)"
        )
    s = v.saving_per_1000_usd
    if s is None or s != s:
        return f"saving per 1,000 questions unknown{against} (no price)"
    if s >= 0:
        return f"saves {money(s)} per 1,000 questions{against}"
    return f"costs {money(-s)} more per 1,000 questions" + (f" than {v.versus}" if v.versus else "")


def headline(v: Verdict) -> str:
    """THE wording of a decision (the Compare page, the HTML report and `litm compare` show it):
    "Recommend X · saves Y per 1,000 questions against Z · confident" or "· not yet"; without a
    recommendation, "No recommendation · <why>"."""
    if not v.recommend:
        return f"No recommendation · {v.why_none or 'too little data'}"
    return f"Recommend {v.recommend} · {_saving_phrase(v)} · {v.confidence}"


def _accurate(best: Figures) -> str:
    return f"{best.label} is the most accurate ({_pct(best.accuracy)}, n = {int(best.n)})"


def _cheaper_reasons(v: Verdict, best: Figures, c: Against) -> str:
    pts = _points(v.margin)
    return (
        f"{_accurate(best)}, but {c.arm.label} is at most {pts} worse (non-inferior within the {pts} margin): "
        f"accuracy {100 * c.diff:+.1f} points against it, 95% interval {100 * c.lo:+.1f} to {100 * c.hi:+.1f} "
        f"over {c.n_matched} matched trials (Holm-adjusted p = {c.p_holm:.2g}), and it costs "
        f"{100 * c.share:.0f}% less ({money(c.arm.cost)} against {money(best.cost)} per 1,000 questions; "
        f"the minimum saving asked is {100 * v.min_saving:.0f}%)."
    )


def _not_shown_note(v: Verdict, best: Figures) -> str:
    """The sentence on the cheapest arm not yet shown within the margin ("" when there is none)."""
    c = v.not_shown
    if c is None:
        return ""
    return (
        f" {c.arm.label} would save {100 * c.share:.0f}% ({money(best.cost - c.arm.cost)} per 1,000 questions) "
        f"but is not yet shown within {_points(v.margin)}: its 95% interval reaches {100 * c.lo:+.1f} "
        f"points; about {v.not_shown_pairs} matched trials would show it if the two are really equal."
    )


def _winner_reasons(v: Verdict, best: Figures) -> str:
    return (
        f"{_accurate(best)}, significantly better than every other arm after Holm's correction for "
        f"{v.family} pair{'' if v.family == 1 else 's'} (largest adjusted p = {v.largest_p:.2g})."
    )


def _tie_reasons(v: Verdict, best: Figures, c: Against) -> str:
    why = TIE_REASONS[v.tie_reason]
    names = " and ".join(v.tied)
    if v.equal:
        head = (
            f"{names} are equally accurate over {c.n_matched} matched trials: a tie, so the cheaper is "
            f"recommended ({why}); "
        )
    else:
        head = (
            f"{_accurate(best)}, but the data cannot tell {'it' if len(v.tied) == 2 else 'the arms'} apart "
            f"({names}; closest: {c.arm.label} at {_pct(c.arm.accuracy)}, Holm-adjusted p = {c.p_holm:.2g}, "
            f"raw {c.p_value:.2g}, over {c.n_matched} matched trials): a tie, so {v.recommend} is recommended "
            f"because {why}; "
        )
    text = (
        head + f"about {v.tie_pairs} matched trials would tell a {100 * v.gap:.0f}-point difference apart "
        "(power 0.8, alpha 0.05)."
    )
    if v.unpaired:
        text += f" No trials match {', '.join(v.unpaired)}, so they are not compared."
    return text


def reasons(v: Verdict) -> str:
    """THE reasoning of a decision, with its numbers."""
    best = v.best
    if v.missing == "arms" or best is None:
        return MISSING["arms"][1]
    if v.missing == "matches":
        return (
            _accurate(best) + ", but no trials match between the arms (same task and cell), so no paired "
            "comparison can be made."
        )
    if v.kind == "cheaper" and v.chosen is not None:
        return _cheaper_reasons(v, best, v.chosen)
    if v.kind == "winner":
        return _winner_reasons(v, best) + _not_shown_note(v, best)
    if v.kind == "tie" and v.closest is not None:
        return _tie_reasons(v, best, v.closest) + _not_shown_note(v, best)
    return ""
