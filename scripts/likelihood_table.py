"""Rewrite the likelihood table of sample_docs/runs/README.md from its store (between the markers
`<!-- likelihood table: begin -->` and `<!-- likelihood table: end -->`), so the table always matches
the store it describes (tests/test_shipped_runs.py checks it does).

    python scripts/likelihood_table.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from components.report.likelihood import table_lines  # noqa: E402
from components.run.store import RunStore  # noqa: E402

RUNS = ROOT / "sample_docs" / "runs"
BEGIN, END = "<!-- likelihood table: begin -->", "<!-- likelihood table: end -->"


def main() -> int:
    with RunStore(RUNS / "local-qwen-nq-likelihood20.sqlite", readonly=True) as store:
        lines = table_lines(store.trials_frame())
    readme = RUNS / "README.md"
    text = readme.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    if not rest or not tail and END not in rest:
        print(f"{readme}: markers not found", file=sys.stderr)
        return 1
    readme.write_text(head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + tail, encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
