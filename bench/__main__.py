"""Run every bench/bench_*.py module (each has `run() -> list[str]`) and print its lines:
`python -m bench` (all), `python -m bench store runner` (some), or one bench with its own options:
`python -m bench classroom --sessions 50` (the options go to that bench's `main(argv)`)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    first_option = next((i for i, a in enumerate(argv) if a.startswith("-")), len(argv))
    wanted, options = argv[:first_option], argv[first_option:]
    names = sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    chosen = [
        n
        for n in names
        if not wanted or n.removeprefix("bench_") in {w.removeprefix("bench_") for w in wanted}
    ]
    unknown = {w.removeprefix("bench_") for w in wanted} - {n.removeprefix("bench_") for n in names}
    if unknown:
        print(
            f"no such bench: {', '.join(sorted(unknown))} (there are: "
            f"{', '.join(n.removeprefix('bench_') for n in names)})",
            file=sys.stderr,
        )
        return 2
    if options:
        if len(chosen) != 1:
            print("options go to one bench: python -m bench NAME --option ...", file=sys.stderr)
            return 2
        module = importlib.import_module(f"bench.{chosen[0]}")
        if not hasattr(module, "main"):
            print(f"bench {chosen[0].removeprefix('bench_')} takes no options", file=sys.stderr)
            return 2
        return module.main(options)
    for name in chosen:
        module = importlib.import_module(f"bench.{name}")
        for line in module.run():
            print(f"{name}: {line}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
