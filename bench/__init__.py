"""Benchmarks: each bench_*.py module has `run() -> list[str]` and prints ratios against a baseline
measured in the same run. `python -m bench` runs them all."""
