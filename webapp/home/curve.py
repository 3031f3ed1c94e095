"""Home's chart: the published LITM curve (GPT-3.5-Turbo, 20 documents, Table 6) and this app's own
curve on the same protocol (the bundled model's shipped run), each named by model and source."""

from __future__ import annotations

import pandas as pd

from webapp.services import analysis, figures, published, sharing
from webapp.services.names import THIS_APP, model_title

SHIPPED = "local-qwen-nq-litm20"  # the shipped run: NQ-open, 20 documents, gold at 0/4/9/14/19, n=50 each
N_DOCS = 20
PUBLISHED_MODEL = "GPT-3.5-Turbo"


def ours() -> pd.DataFrame:
    """The shipped run's best-subspan EM by gold index, with n and Wilson intervals."""
    trials, _, _ = sharing.load_runs(in_url=False)
    if trials.empty or "store" not in trials:
        return pd.DataFrame()
    part = trials[trials["store"].astype(str).str.endswith(SHIPPED) & (trials["strategy"] == "litm")]
    part = part[pd.to_numeric(part["documents"], errors="coerce") == N_DOCS]
    if part.empty:
        return pd.DataFrame()
    part = part.assign(model_name=part["model"].map(model_title), source=THIS_APP)
    table = analysis.u_curve(part, "subspan_em", ("model_name", "source"), x="gold_index")
    return table.rename(columns={"gold_index": "position"})


@figures.once
def figure():
    """(figure, note, legend names): both curves, and the note that says whose each one is; built once per
    server process (the shipped run and the published table are the same for every visitor)."""
    table = ours()
    curves = published.index_curves({N_DOCS})
    curves = curves[curves["model"] == PUBLISHED_MODEL] if not curves.empty else curves
    fig = figures.u_curve(table if not table.empty else pd.DataFrame(columns=["series", "position", "n", "mean",
                                                                               "lo", "hi", "errors"]),
                          x_title="gold document index (0 = first of 20)", metric_label="accuracy",
                          overlays=curves if not curves.empty else None,
                          title="Accuracy by where the answer sits among 20 documents")
    fig.update_xaxes(tickvals=[0, 4, 9, 14, 19])
    names = {}
    for label, part in table.groupby("series", sort=False) if not table.empty else ():
        names[label] = f"{figures.esc(label)} · n={int(part['n'].min())} per point"
    for label, title in zip(curves.get("label", []), curves.get("title", []), strict=True):
        names[figures.esc(label)] = figures.esc(title)
    fig.update_layout(legend=dict(orientation="h", yref="container", y=0, yanchor="bottom"))
    note = (f"Solid: measured by {THIS_APP} with {model_title('local:qwen2.5-coder-0.5b-instruct')} (0.5B, on "
            "this machine's CPU) on 50 NQ-open questions, best-subspan EM, 95% intervals. Dotted: "
            f"{PUBLISHED_MODEL} as published in Lost in the Middle (Liu et al., 2023), Table 6.")
    return fig, note, names
