"""Run every bench/bench_*.py module and print its lines."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main() -> int:
    names = sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    for name in names:
        module = importlib.import_module(f"bench.{name}")
        for line in module.run():
            print(f"{name}: {line}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
