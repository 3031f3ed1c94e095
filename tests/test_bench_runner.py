"""The runner bench end to end at a small size: it measures every line `repeat` times against the real
loopback server and reports medians with their range."""

import re

import pytest

from bench import bench_runner

pytestmark = pytest.mark.slow  # tens of seconds end to end: make test, not make check


def test_spread_is_the_median_and_the_range():
    assert bench_runner.spread([0.9, 0.7, 0.8]) == "0.80 [0.70-0.90]"
    assert bench_runner.spread([270.4, 281.6], 0) == "276 [270-282]"


def test_the_runner_bench_repeats_each_line_and_sends_nothing_again():
    lines = bench_runner.run(trials=200, concurrency=8, delay=0.01, repeat=2)
    text = "\n".join(lines)
    assert "200 calls, 2 runs: runner/bare" in text
    assert "10-token passages, 200 calls, 2 runs: ratio to ideal" in text
    assert "NQ-open passages, 200 calls, 2 runs: ratio to ideal" in text
    assert "errors in all runs: 0" in text
    assert re.search(r"cache rerun: 200 trials in [0-9.]+s, 0 calls sent", text)
    assert re.search(r"new sweep, same prompts: 200 trials .* 200 calls from the cache, 0 sent", text)
    for ratio in re.findall(r"ratio to ideal ([0-9.]+) \[", text):
        assert 0 < float(ratio) <= 1.05
