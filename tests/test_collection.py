"""The suite's test ids do not depend on the clock or on chance: pytest-xdist's workers each collect the
tests and stop ("Different tests were collected between gw1 and gw0") when their lists differ, so a
parameter whose repr holds a timestamp (gzip's header, a random name) breaks `make check`. Two
collections more than a second apart must give the same ids."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def collected() -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return [line for line in out.stdout.splitlines() if "::" in line]


@pytest.mark.slow
def test_two_collections_a_second_apart_give_the_same_ids():
    first = collected()
    time.sleep(1.1)  # a header holding the current second would now differ
    second = collected()
    assert len(first) > 1000
    assert first == second, sorted(set(first) ^ set(second))[:10]
