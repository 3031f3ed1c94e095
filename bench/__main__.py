"""Run every bench/bench_*.py module (each has `run() -> list[str]`) and print its lines:
`python -m bench` (all) or `python -m bench store runner` (some)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main() -> int:
    names = sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    wanted = {f"bench_{a.removeprefix('bench_')}" for a in sys.argv[1:]}
    for name in [n for n in names if not wanted or n in wanted]:
        module = importlib.import_module(f"bench.{name}")
        for line in module.run():
            print(f"{name}: {line}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
