"""Stores of 100k trials: time to the first Results chart and the first Compare answer, a trial-table
page, and `litm results` memory.

Builds a run store of N synthetic trials (5 lengths x 5 positions x 4 strategies, answers 70% right),
then measures, in this one run, the code paths the pages run (webapp/runs.py load_store is
reader.browse; the pages' Streamlit calls are not included):
- the first Results chart: read the store, label its sweeps, aggregate the U-curve with Wilson
  intervals, build the plotly figure; with every column decoded (trials_frame, what Results read
  before) and with the columns the pages hold (reader.browse, what they read now); target < 3 s;
- the first Compare answer: read the store, prepare arms, the default arms' table, pairs with McNemar
  and Newcombe, recommendation and planner, the Pareto and U-curve figures; target < 3 s;
- one page of the Results trial table (500 trials with their texts, fetched by id);
- in Debian chromium (playwright), the app serving the store as the user's run store: seconds from
  opening Results, then Compare, to the first chart drawn (Streamlit's own work included);
- `litm results` (CSV) in a subprocess: wall time and peak memory (it streams rows).

    python -m bench.bench_store [--trials 100000]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from components.report import analysis, charts, compare
from components.report.sweeps import combine_stores
from components.run.reader import browse, whole_trials
from components.run.schema import Trial, params_json
from components.run.store import RunStore
from components.run.store_io import put_trials

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 3.0


def build(path: Path, n: int) -> RunStore:
    store = RunStore(path)
    sid = store.open_sweep("bench-100k", {"name": "bench-100k"})
    rng = random.Random(0)
    strategies = ["baseline", "reprompt", "rr", "icr"]
    rows = []
    for i in range(n):
        s, pos = strategies[i % 4], (0.0, 0.25, 0.5, 0.75, 1.0)[(i // 4) % 5]
        length = (2000, 4000, 8000, 16000, 32000)[(i // 20) % 5]
        ok = rng.random() < 0.7
        rows.append(
            Trial(
                trial_key=f"k{i:07d}",
                task=f"task-{i // 100}",
                question=f"What is the code word of item {i}?",
                answers=[f"word{i}"],
                strategy=s,
                params=params_json({"r": 1000, "k": 3} if s != "baseline" else {}),
                model="openai:gpt-4o-mini",
                length=length,
                position=pos,
                actual_length=length,
                actual_position=int(pos * length),
                gold_pages=[3],
                retrieved_pages=[3, 4] if s in ("rr", "icr") else None,
                cited_pages=[3],
                answer=f"word{i}" if ok else "unknown",
                raw_answer=f"Answer: word{i}\nPage: 3",
                metric="fuzzy",
                score=float(ok),
                subspan_em=float(ok),
                exact=float(ok),
                page_recall=1.0,
                page_precision=0.5,
                calls=2 if s in ("rr", "icr") else 1,
                input_tokens=length + 200,
                output_tokens=20,
                cost_usd=(length + 200) * 0.15e-6,
                latency_s=1.2,
            ).row()
        )
    put_trials(store, sid, rows)
    store.finish_sweep(sid, "done")
    return store


def loaded(store: RunStore, path: Path, lean: bool):
    trials, sweeps = browse(path) if lean else (store.trials_frame(), store.sweeps_frame())
    return combine_stores([("your runs", False, str(path), trials, sweeps)])[0]


def first_chart(store: RunStore, path: Path, lean: bool) -> float:
    t0 = time.perf_counter()
    combined = loaded(store, path, lean)
    table = analysis.u_curve(combined, "primary", ("strategy",))
    charts.u_curve(table, title="U-curve")
    return time.perf_counter() - t0


def first_compare(store: RunStore, path: Path) -> float:
    """What the Compare page computes before its first chart (webapp/views/compare.py main)."""
    t0 = time.perf_counter()
    t = compare.prepare(loaded(store, path, lean=True))
    ranked = compare.arms(t).sort_values("accuracy", ascending=False)["label"].tolist()
    labels = compare.default_arms(t, ranked)
    result = compare.compare(t, labels)
    charts.pareto(result.arms)
    for label in labels:  # the U-curves of the chosen arms
        analysis.u_curve(t[t["arm"] == label], "primary", ("strategy",))
    return time.perf_counter() - t0


def table_page(path: Path, rows: int = 500) -> float:
    """Fetching the texts of the last page of the table (the summary columns are already held)."""
    ids = [int(i) for i in browse(path)[0]["trial_id"].iloc[-rows:]]
    t0 = time.perf_counter()
    assert len(whole_trials(path, ids)) == rows
    return time.perf_counter() - t0


DWELL_S = 5.0  # seconds a visitor stays on the Playground first, in the second measurement


def in_browser(path: Path, dwell: float = 0.0) -> dict[str, float]:
    """Seconds from opening each page in chromium to its first plotly chart on screen (first visit of a
    new server), the app's server reading `path` as the user's run store. The Playground is opened
    first; `dwell` seconds later Results, then Compare. The server reads the stores in the background
    from the first visit on (webapp/app.py warm_up), so a visitor who stays a few seconds on the
    Playground finds them read; one who goes straight on waits for the rest of that read."""
    from playwright.sync_api import sync_playwright

    from tests.e2e.appserver import CHROMIUM, CHROMIUM_ARGS, settle, streamlit_app

    out = {}
    with streamlit_app(env={"LITM_DB": str(path)}) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
        page.goto(url)  # the Playground first: it registers the navigation
        settle(page, timeout=120_000)
        time.sleep(dwell)
        for name in ("results", "compare"):
            t0 = time.perf_counter()
            page.goto(f"{url}/{name}")
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
            out[name] = time.perf_counter() - t0
            settle(page, timeout=120_000)
        browser.close()
    return out


# A child forked from this (large) process would report this process's pages as its own peak, so a
# small launcher process starts the command and reports its child's peak (ru_maxrss, KB).
LAUNCHER = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def peak_of(cmd: list[str]) -> tuple[float, float]:
    """(seconds, peak MB) of a command run in a fresh process."""
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *cmd], cwd=ROOT, check=True, capture_output=True, text=True
    )
    return time.perf_counter() - t0, int(out.stdout.strip()) / 1024


def results_cli(path: Path) -> tuple[float, float]:
    """(seconds, peak MB) of `litm results --db path` writing CSV to /dev/null."""
    return peak_of([sys.executable, "-m", "components.cli", "results", "--db", str(path)])


def run(n: int = 100_000) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.sqlite"
        t0 = time.perf_counter()
        store = build(path, n)
        built = time.perf_counter() - t0
        old = first_chart(store, path, lean=False)
        new = first_chart(store, path, lean=True)
        cmp = first_compare(store, path)
        page = table_page(path)
        seconds, peak = results_cli(path)
        store.close()
        try:
            browser = []
            for dwell, how in (
                (0.0, "straight from the Playground"),
                (DWELL_S, f"after {DWELL_S:.0f} s on the Playground"),
            ):
                shown = in_browser(path, dwell)
                browser += [
                    f"in chromium, {name} ({how}): first chart after {t:.2f} s; target {TARGET_S:.0f} s: "
                    f"{'met' if t < TARGET_S else 'NOT met'} ({t / TARGET_S:.2f} of the target)"
                    for name, t in shown.items()
                ]
        except Exception as exc:  # no chromium here: say so, keep the other figures
            browser = [f"in chromium: not measured ({type(exc).__name__}: {str(exc).splitlines()[0][:120]})"]
        return [
            f"built a store of {n:,} trials in {built:.1f} s ({path.stat().st_size / 2**20:.0f} MB)",
            f"first Results chart, every column decoded (before): {old:.2f} s",
            f"first Results chart, the columns the pages hold (now): {new:.2f} s; target {TARGET_S:.0f} s: "
            f"{'met' if new < TARGET_S else 'NOT met'} ({new / TARGET_S:.2f} of the target; {old / new:.1f}x faster)",
            f"first Compare answer (3 arms, pairs, Pareto, U-curves): {cmp:.2f} s; target {TARGET_S:.0f} s: "
            f"{'met' if cmp < TARGET_S else 'NOT met'} ({cmp / TARGET_S:.2f} of the target)",
            f"one trial-table page (500 trials with their texts): {page:.2f} s",
            f"litm results (csv, streamed): {seconds:.2f} s, peak {peak:.0f} MB",
            *browser,
        ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=100_000)
    args = ap.parse_args(argv)
    for line in run(args.trials):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
