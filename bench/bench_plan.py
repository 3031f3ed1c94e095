"""A sweep's plan and dry run at 5,000 and 40,000 cells, each in its own process: its time (after the
imports) and peak memory.

- plan: `documents` x `gold_index` cells (LITM §3.1 grids), the plan made (describe + plan, as `litm sweep`
  does). Linear: about 8 times as long for 8 times the cells (goal: ratio < 10; it was quadratic: a
  membership test per cell in a list of cells, 0.8 s against 47.8 s).
- dry run (`litm sweep --dry-run`: the config read, the plan made, every first prompt built and counted):
  `lengths` x `positions` cells. It streams its prompts (a cell's are dropped when the next begins), so its
  memory grows only with the plan (goal: peak < 1 GB; a 20,000-trial dry run held 874 MB).

Synthetic and deterministic: one generated fact question (~1,500 tokens of passages), the baseline
strategy, one priced model.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

PLAN_SIZES = ((5, 1000), (40, 1000))  # numbers of documents x gold indices: 5,000 and 40,000 cells
DRY_SIZES = ((50, 100), (200, 200))  # lengths x positions: 5,000 and 40,000 cells

CHILD = """
import sys, time
from components.cli.sweep import describe, dry_run
from components.run.config import SweepConfig
from components.run.estimate import estimate
from components.run.plan import plan
from pathlib import Path
t0 = time.perf_counter()
config = SweepConfig.from_toml(sys.argv[1])
describe(config)
if sys.argv[3] == "plan":
    n = len(plan(config))
    print(n, 0, f"{time.perf_counter() - t0:.3f}")
else:
    est = dry_run(config, Path(sys.argv[2]))
    print(est.trials, est.input_tokens, f"{time.perf_counter() - t0:.3f}")
"""


def config(folder: Path, kind: str, a: int, b: int) -> Path:
    """A config of a x b cells: documents x gold_index ("plan") or lengths x positions ("dry")."""
    from components.tasks.generators import generate
    from components.tasks.importers import write_tasks

    write_tasks(generate("facts", 1, 7), folder / "facts.jsonl")
    if kind == "plan":
        grid = f"documents = {list(range(1000, 1000 + a))}\ngold_index = {list(range(b))}"
    else:
        step = 1200 / a
        grid = (
            f"lengths = {[300 + int(i * step) for i in range(a)]}\n"
            f"positions = {[round(i / (b - 1), 6) for i in range(b)]}"
        )
    path = folder / f"{kind}-{a}x{b}.toml"
    path.write_text(f"""[sweep]
name = "plan-bench"
tasks = "facts.jsonl"
{grid}
strategies = ["baseline"]
[[sweep.models]]
provider = "openai"
model = "gpt-4o-mini"
""")
    return path


def measure(path: Path, folder: Path, kind: str) -> tuple[int, int, float, float]:
    """(trials, input tokens, seconds after the imports, peak MB) of one dry run in a child process."""
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(path), str(folder / "none.sqlite"), kind],
            stdout=out,
            env=env,
            cwd=str(folder),
        )
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        text = out.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"dry run of {path.name} failed")
    trials, tokens, seconds = text.split()
    return int(trials), int(tokens), float(seconds), usage.ru_maxrss / 1024


def run() -> list[str]:
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for kind, sizes, what in (("plan", PLAN_SIZES, "plan"), ("dry", DRY_SIZES, "dry run")):
            times = []
            for a, b in sizes:
                trials, tokens, seconds, peak = measure(config(folder, kind, a, b), folder, kind)
                times.append(seconds)
                counted = f", {tokens:,} input tokens" if tokens else ""
                lines.append(
                    f"{what} of {a * b:,} cells ({trials:,} trials{counted}): {seconds:.2f} s after the "
                    f"imports, peak {peak:,.0f} MB (goal < 1,024 MB)"
                )
            lines.append(f"{what}: time ratio 40k/5k cells {times[1] / times[0]:.1f} (linear ~8; goal < 10)")
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
