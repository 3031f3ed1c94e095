"""A hostile corpus for sweeps: configs, plans and run stores a user (or a full disk) can throw at `litm sweep`.
Each case runs the real CLI in a subprocess (tests/test_bad_inputs.py's `run`: its own peak RSS from
/usr/bin/time -v) and expects one line on stderr, no traceback, no "unexpected error", a peak under 1 GB and,
where a store is written, no trial lost, duplicated or recorded as a `bug`.

Store faults are real: a small tmpfs that fills up, a store file bind-mounted read-only (root bypasses file
modes, so a chmod would prove nothing). They need root and mount(8); elsewhere they are skipped.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.support import baseline_toml, sweep_toml
from tests.test_bad_inputs import PEAK_MB, Ran, config, one_line, run

# a process per case (tests/test_bad_inputs.run): make test, not make check
pytestmark = pytest.mark.own_process


def refused(r: Ran, *needles: str) -> None:
    """One line naming the fault (test_bad_inputs.one_line), exit 1, and no 'unexpected error'."""
    assert "unexpected error" not in r.err, r.err
    one_line(r, *needles)


def with_keys(toml: Path, **keys: str) -> Path:
    """The config with [sweep] keys replaced or added (TOML values as text)."""
    lines = toml.read_text().splitlines()
    for key, value in keys.items():
        lines = [x for x in lines if not x.startswith(f"{key} =")]
        lines.insert(1, f"{key} = {value}")
    toml.write_text("\n".join(lines) + "\n")
    return toml


def with_model_setting(toml: Path, key: str, value: str) -> Path:
    """The config with its model's `key` set (TOML value as text)."""
    lines = [x for x in toml.read_text().splitlines() if not x.startswith(f"{key} =")]
    toml.write_text("\n".join(lines) + f"\n{key} = {value}\n")
    return toml


# --- grids: sizes bounded with one line, plans in linear time ----------------------------------------------

GRIDS = {
    "lengths-list-of-100000": (
        {"lengths": str(list(range(600, 100_600)))},
        ("lengths has 100,000 values", "the limit is 1,000 a list"),
    ),
    "gold-index-list-of-20000": (
        {
            "documents": str(list(range(10, 70))),
            "gold_index": str(list(range(20_000))),
            "lengths": None,
            "positions": None,
        },
        ("gold_index has 20,000 values", "the limit is 1,000"),
    ),
    "documents-list-of-1001": (
        {"documents": str(list(range(1, 1002))), "gold_index": "[0]", "lengths": None, "positions": None},
        ("documents has 1,001 values",),
    ),
    "param-list-of-1001": (
        {"strategies": '["icr"]', "params": "{ k = " + str(list(range(1, 1002))) + " }"},
        ("params: k has 1,001 values", "the limit is 1,000"),
    ),
    "trials-over-the-limit-at-parse": (
        {
            "n_tasks": None,
            "lengths": str(list(range(600, 1600))),
            "positions": str([round(i / 999, 6) for i in range(1000)]),
        },
        ("at least 1,000,000 trials", "the limit is 200,000 trials"),
    ),
    "trials-over-the-limit-with-tasks": (
        {
            "n_tasks": None,
            "lengths": str(list(range(600, 1100))),
            "positions": str([round(i / 199, 6) for i in range(200)]),
        },
        ("has 300,000 trials", "x 3 tasks", "the limit is 200,000 trials"),
    ),
}


@pytest.mark.parametrize("fault", list(GRIDS))
def test_grid_sizes_are_bounded(tmp_path, server, fault):
    keys, needles = GRIDS[fault]
    toml = config(tmp_path, server)
    lines = [x for x in toml.read_text().splitlines() if not any(x.startswith(f"{k} =") for k in keys)]
    lines[1:1] = [f"{k} = {v}" for k, v in keys.items() if v is not None]
    toml.write_text("\n".join(lines) + "\n")
    r = run(["sweep", str(toml), "--dry-run"], tmp_path, timeout=120)
    refused(r, *needles)
    assert r.seconds < 60, r.seconds


PLAN = """
import sys, time
from components.cli.sweep import describe
from components.run.config import SweepConfig
from components.run.plan import plan
config = SweepConfig.from_toml(sys.argv[1])
t0 = time.perf_counter()
describe(config)
print(len(plan(config)), f"{time.perf_counter() - t0:.3f}")
"""


def test_a_plan_of_40000_cells_is_made_in_linear_time(tmp_path, server):
    """40 document counts x 1,000 gold indices: a list membership test per cell took 57 s (0.7 s for 5,000)."""
    toml = with_keys(
        config(tmp_path, server),
        n_tasks="1",
        documents=str(list(range(1000, 1040))),
        gold_index=str(list(range(1000))),
    )
    toml.write_text(
        "\n".join(x for x in toml.read_text().splitlines() if not x.startswith(("lengths =", "positions =")))
        + "\n"
    )
    r = run([*("-c", PLAN), str(toml)], tmp_path, python=True, timeout=120)
    assert r.code == 0 and "Traceback" not in r.err, r.err
    trials, seconds = r.out.split()
    assert int(trials) == 40_000
    assert float(seconds) < 10, seconds
    assert r.peak_mb < PEAK_MB


def test_a_dry_run_of_20000_trials_streams(tmp_path):
    """334 NQ-open questions x 60 LITM cells: the dry run held every prompt (874 MB); it drops a cell's
    prompts when the next begins."""
    toml = tmp_path / "big.toml"
    toml.write_text(f"""[sweep]
name = "big"
tasks = "nq-open-30docs.jsonl.gz"
n_tasks = 334
documents = [10, 20, 30]
gold_index = {list(range(30))}
strategies = ["baseline"]
[[sweep.models]]
provider = "openai"
model = "gpt-4o-mini"
""")
    r = run(["sweep", str(toml), "--dry-run", "--db", str(tmp_path / "none.sqlite")], tmp_path, timeout=300)
    assert r.code == 0 and "Traceback" not in r.err, r.err
    assert "trials:        20,040" in r.out, r.out
    assert r.peak_mb < 512, f"peak RSS {r.peak_mb:.0f} MB"  # 810 MB before; about 205 MB now
    assert not (tmp_path / "none.sqlite").exists()


# --- parameters that no document of the grid can take -------------------------------------------------------


@pytest.mark.parametrize(
    "fault, keys, needles",
    [
        (
            "icr-k-above-every-document",
            {"strategies": '["icr"]', "params": "{ k = [2, 40] }"},
            ("icr's k = 40 is more than the", "pages of the largest document"),
        ),
        (
            "icr-default-k-above-3-documents",
            {
                "strategies": '["icr"]',
                "params": "{}",
                "documents": "[3]",
                "gold_index": "[0]",
                "lengths": None,
                "positions": None,
            },
            ("icr's k = 5 (its default) is more than the 3 pages", "3 documents"),
        ),
        (
            "chunked-icr-c-above-every-document",
            {"strategies": '["chunked-icr"]', "params": "{ k = 2, c = 50000 }"},
            ("chunked-icr's c = 50,000 is more than the", "tokens of the largest document"),
        ),
    ],
)
def test_a_parameter_no_document_can_take_is_refused(tmp_path, server, fault, keys, needles):
    toml = config(tmp_path, server)
    lines = [x for x in toml.read_text().splitlines() if not any(x.startswith(f"{k} =") for k in keys)]
    lines[1:1] = [f"{k} = {v}" for k, v in keys.items() if v is not None]
    toml.write_text("\n".join(lines) + "\n")
    refused(run(["sweep", str(toml), "--dry-run"], tmp_path), *needles)
    db = tmp_path / "s.sqlite"
    refused(run(["sweep", str(toml), "--db", str(db), "--quiet"], tmp_path), *needles)
    assert server.counts["total"] == 0


def test_reprompt_with_r_past_every_document_is_a_setting_not_an_error(tmp_path, server):
    """r at or past the end places no reminder: a no-reminder control a sweep may want (R&R runs r = d)."""
    toml = with_keys(config(tmp_path, server), strategies='["reprompt"]', params="{ r = [100, 100000] }")
    r = run(["sweep", str(toml), "--dry-run"], tmp_path)
    assert r.code == 0 and not r.lines, r.err
    assert "trials:        12" in r.out


# --- prices --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fault, price, needle",
    [
        ("price-1e308", "1e308", "input must be a number from 0 to 10,000"),
        ("price-above-10000", "20000", "input must be a number from 0 to 10,000"),
        ("price-infinite-as-json", "Infinity", "input must be a number from 0 to 10,000"),
    ],
)
def test_absurd_prices_are_refused(tmp_path, server, fault, price, needle):
    """A price of 1e308 estimated "$inf"."""
    prices = tmp_path / "prices.json"
    prices.write_text('{"models": {"openai": {"gpt-4o-mini": {"input": ' + price + ', "output": 1}}}}')
    toml = config(tmp_path, server)
    text = (
        toml.read_text()
        .replace('provider = "openai-compatible"', 'provider = "openai"')
        .replace('model = "loop-model"', 'model = "gpt-4o-mini"')
    )
    toml.write_text(text)
    r = run(["sweep", str(toml), "--dry-run"], tmp_path, env={"LITM_PRICES": str(prices)})
    refused(r, "price file", needle)
    assert "$inf" not in r.out + r.err


def test_cost_is_never_infinite():
    from components.providers.pricing import cost_usd

    with pytest.raises(ValueError, match="from 0 to 10,000"):
        cost_usd("openai", "x", 1000, 10, {"openai": {"x": {"input": 1e308, "output": 1.0}}})
    assert (
        cost_usd("openai", "x", 1_000_000, 0, {"openai": {"x": {"input": 10_000, "output": 1.0}}}) == 10_000
    )


# --- addresses and keys in a config --------------------------------------------------------------------------

SECRET = "sk-proj-Zq81mXv0Lr55TTbWc2e9YhQk"


@pytest.mark.parametrize(
    "fault, key, value, needles",
    [
        (
            "base-url-broken-ipv6",
            "base_url",
            '"http://[::1"',
            ("base_url is not a valid address", "[::1]:8000"),
        ),
        ("base-url-port-out-of-range", "base_url", '"http://127.0.0.1:99999/v1"', ("not a valid address",)),
        ("base-url-no-host", "base_url", '"http:///v1"', ("base_url names no host",)),
        ("base-url-with-a-space", "base_url", '"http://exa mple.com/v1"', ("without spaces",)),
        (
            "base-url-user-info-key",
            "base_url",
            f'"http://user:{SECRET}@127.0.0.1:9/v1"',
            ("holds a user name or key", "api_key_env"),
        ),
        (
            "base-url-query-key",
            "base_url",
            f'"http://127.0.0.1:9/v1?api_key={SECRET}"',
            ("holds a key in its query", "api_key_env"),
        ),
        (
            "base-url-path-key",
            "base_url",
            f'"https://127.0.0.1:9/v1/{SECRET}/"',
            ("holds what looks like a key in its path", "'sk-p…'", "api_key_env"),
        ),
        (
            "base-url-query-key-unnamed",
            "base_url",
            f'"http://127.0.0.1:9/v1?x={SECRET}"',
            ("holds a key in its query",),
        ),
        ("base-url-bad-scheme-with-key", "base_url", f'"ftp://u:{SECRET}@h/"', ("http:// or https://",)),
        ("api-key-env-holds-a-key", "api_key_env", f'"{SECRET}"', ("looks like an API key", "'sk-p…'")),
        (
            "api-key-env-holds-a-name-shaped-key",
            "api_key_env",
            '"sk_live_4eC39HqLyjWDarjtT1zdp7dc"',
            ("looks like an API key", "'sk_l…'"),
        ),
        (
            "api-key-env-holds-a-random-key",
            "api_key_env",
            '"a81f3c09e6b24d7f9a0c55e1b2d3f4a6"',
            ("looks like an API key", "'a81f…'"),
        ),
        (
            "api-key-env-not-a-name",
            "api_key_env",
            '"MY OPENAI KEY"',
            ("must be the name of an environment variable",),
        ),
    ],
)
def test_addresses_and_keys_are_checked_when_the_config_is_read(tmp_path, server, fault, key, value, needles):
    """Before: http://[::1 passed and failed later as `unexpected error (InvalidURL)`; a key in base_url was
    stored with the sweep's config (and shown in the app's TOML panel); a key pasted into api_key_env was
    echoed back (up to 57 characters)."""
    toml = with_model_setting(config(tmp_path, server), key, value)
    db = tmp_path / "s.sqlite"
    runs = [["sweep", str(toml), "--dry-run"]]
    if SECRET in value or key == "api_key_env":  # a real sweep too: nothing of the key may reach the store
        runs.append(["sweep", str(toml), "--db", str(db), "--quiet"])
    for r in (run(args, tmp_path) for args in runs):
        refused(r, f"models[0].{key}", *needles)
        secret = value.strip('"')
        for part in (SECRET, secret[4:] if key == "api_key_env" else SECRET):
            assert part not in r.out + r.err
    assert server.counts["total"] == 0
    assert not db.exists() or SECRET.encode() not in db.read_bytes()


@pytest.mark.parametrize(
    "url",
    [
        "http://[::1]:8000/v1",
        "https://example.org/openai/v1?api-version=2024-02-15-preview",
        "http://127.0.0.1:8000/v1",
        "https://gateway.example/v1/0123456789abcdef0123456789abcdef/gw/openai",  # an account id stays
    ],
)
def test_good_addresses_pass(tmp_path, server, url):
    toml = with_model_setting(config(tmp_path, server), "base_url", f'"{url}"')
    r = run(["sweep", str(toml), "--dry-run"], tmp_path)
    assert r.code == 0 and not r.lines, r.err


# --- run stores on a full disk, read-only ---------------------------------------------------------------------


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True, timeout=30)


@contextlib.contextmanager
def tmpfs(where: Path, size: str):
    """A real small filesystem at `where` (root only), unmounted afterwards whatever happens."""
    if os.geteuid() != 0:
        pytest.skip("a tmpfs needs root")
    where.mkdir()
    try:
        _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where))
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"cannot mount a tmpfs here: {exc}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=30)


def fill(disk: Path, leave_kb: int) -> Path:
    """A file taking all but `leave_kb` of the disk's free space."""
    st = os.statvfs(disk)
    free_kb = st.f_bavail * st.f_frsize // 1024
    path = disk / "fill"
    with path.open("wb") as f:
        f.write(b"\0" * max(0, (free_kb - leave_kb) * 1024))
    return path


def trials_of(db: Path) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(db)) as c:
        return c.execute(
            "SELECT s.name, t.trial_key, t.error_kind FROM trials t JOIN sweeps s ON s.id = t.sweep_id "
            "ORDER BY t.id"
        ).fetchall()


def claims_of(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as c:
        return c.execute("SELECT COUNT(*) FROM claims").fetchone()[0]


def small_and_big(tmp: Path, server) -> tuple[Path, Path]:
    small = sweep_toml(
        tmp / "small",
        name="small",
        base_url=server.openai_url,
        strategies=("baseline",),
        n_tasks=2,
        lengths=(600,),
        positions=(0.0, 1.0),
        concurrency=2,
    )
    big = sweep_toml(
        tmp / "big",
        name="big",
        base_url=server.openai_url,
        strategies=("baseline",),
        n_tasks=20,
        lengths=(1200,),
        positions=(0.0, 0.5, 1.0),
        concurrency=4,
    )
    return small, big


def test_a_full_disk_is_named_loses_nothing_and_the_sweep_resumes(tmp_path, server):
    """It said "is it a LITM run store?", stored a trial as a `bug` error and left a claim behind."""
    (tmp_path / "small").mkdir()
    (tmp_path / "big").mkdir()
    small, big = small_and_big(tmp_path, server)
    with tmpfs(tmp_path / "disk", "8m") as disk:
        db = disk / "s.sqlite"
        assert run(["sweep", str(small), "--db", str(db), "--quiet"], tmp_path).code == 0
        before = trials_of(db)
        filler = fill(disk, 150)
        r = run(["sweep", str(big), "--db", str(db), "--quiet"], tmp_path)
        refused(r, f"the disk is full at {disk}", "free space and rerun; nothing was lost")
        during = trials_of(db)
        assert during[: len(before)] == before  # what was stored stays
        assert not [t for t in during if t[2] == "bug"], during
        filler.unlink()
        r = run(["sweep", str(big), "--db", str(db), "--quiet"], tmp_path)
        assert r.code == 0 and "Traceback" not in r.err, r.err
        after = trials_of(db)
        assert len(after) == len(before) + 60 and len({(t[0], t[1]) for t in after}) == len(after)
        assert not [t for t in after if t[2] is not None]
        assert claims_of(db) == 0  # a claim the failed write held was taken over and released


def test_a_store_made_on_a_full_disk_is_named(tmp_path, server):
    (tmp_path / "small").mkdir()
    (tmp_path / "big").mkdir()
    small, _ = small_and_big(tmp_path, server)
    with tmpfs(tmp_path / "disk", "1m") as disk:
        fill(disk, 0)
        refused(
            run(["sweep", str(small), "--db", str(disk / "s.sqlite"), "--quiet"], tmp_path),
            f"the disk is full at {disk}",
        )


def test_a_read_only_store_is_named_and_untouched(tmp_path, server):
    """A store file this process cannot write (bind-mounted read-only): it said "is it a LITM run store?"."""
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    (tmp_path / "small").mkdir()
    (tmp_path / "big").mkdir()
    small, big = small_and_big(tmp_path, server)
    db = tmp_path / "s.sqlite"
    assert run(["sweep", str(small), "--db", str(db), "--quiet"], tmp_path).code == 0
    with contextlib.closing(sqlite3.connect(db)) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = trials_of(db)
    try:
        _mount("--bind", str(db), str(db))
        _mount("-o", "remount,ro,bind", str(db))
    except (OSError, subprocess.SubprocessError) as exc:
        subprocess.run(["umount", str(db)], capture_output=True, timeout=30)
        pytest.skip(f"cannot bind-mount here: {exc}")
    try:
        r = run(["sweep", str(big), "--db", str(db), "--quiet"], tmp_path)
    finally:
        subprocess.run(["umount", str(db)], capture_output=True, timeout=30)
    refused(r, "the run store s.sqlite is read-only", "nothing was lost")
    assert trials_of(db) == before


def test_a_read_only_place_is_named(tmp_path, server):
    (tmp_path / "small").mkdir()
    (tmp_path / "big").mkdir()
    small, big = small_and_big(tmp_path, server)
    with tmpfs(tmp_path / "disk", "4m") as disk:
        db = disk / "s.sqlite"
        assert run(["sweep", str(small), "--db", str(db), "--quiet"], tmp_path).code == 0
        _mount("-o", "remount,ro", str(disk))
        refused(run(["sweep", str(big), "--db", str(db), "--quiet"], tmp_path), "the place is read-only")


# --- calls claimed by a process killed on another host --------------------------------------------------------


def test_claims_of_another_host_are_named_and_can_be_taken_over(tmp_path, server):
    """A resume held at 0/8 for the claims' 900 s lease without a word."""
    toml = baseline_toml(tmp_path, server.openai_url, n_tasks=4, positions=(0.0, 1.0), concurrency=2)
    db = tmp_path / "s.sqlite"
    assert run(["sweep", str(toml), "--db", str(db), "--quiet"], tmp_path).code == 0
    with contextlib.closing(sqlite3.connect(db)) as c, c:
        c.execute("DELETE FROM trial_calls")
        c.execute("DELETE FROM trials")
        c.execute(
            "INSERT INTO claims SELECT key, 'elsewhere:4242:deadbeef', ? FROM calls", (time.time() + 720,)
        )
        c.execute("DELETE FROM calls")
    r = run(["sweep", str(toml), "--db", str(db), "--quiet"], tmp_path, timeout=20)  # it waits: stopped here
    assert "Traceback" not in r.err and len(r.lines) == 1, r.err
    line = r.lines[0]  # named when the sweep waits: the calls it asked for so far (of 8)
    assert re.match(
        r"litm: [1-8] calls? (are|is) claimed by another process \(host elsewhere, pid 4242, 3 min ago\)",
        line,
    )
    assert re.search(r"(they free themselves|it frees itself) in 12 min", line) and "--steal-claims" in line
    sent = server.counts["total"]
    r = run(["sweep", str(toml), "--db", str(db), "--quiet", "--steal-claims"], tmp_path)
    assert r.code == 0 and r.lines == ["litm: took over 8 calls claimed by other processes"], r.err
    assert server.counts["total"] == sent + 8
    assert len(trials_of(db)) == 8 and claims_of(db) == 0


def test_a_claim_on_another_sweeps_call_is_not_this_sweeps_business(tmp_path, server):
    """A live claim in the store on a call this sweep never asks for: no warning, nothing to steal."""
    toml = baseline_toml(tmp_path, server.openai_url)
    db = tmp_path / "s.sqlite"
    assert run(["sweep", str(toml), "--db", str(db), "--quiet", "--dry-run"], tmp_path).code == 0
    from components.run.store import RunStore

    RunStore(db).close()  # the store and its tables
    with contextlib.closing(sqlite3.connect(db)) as c, c:
        c.execute(
            "INSERT INTO claims VALUES ('not-a-call-of-this-sweep', 'elsewhere:4242:deadbeef', ?)",
            (time.time() + 720,),
        )
    r = run(["sweep", str(toml), "--db", str(db), "--quiet"], tmp_path)
    assert r.code == 0 and "claimed" not in r.err and "--steal-claims" not in r.err, r.err
    assert len(trials_of(db)) == 2


def test_claims_line_in_the_progress_note():
    from components.run.store_batches import LEASE_S, claims_line

    now = 10_000.0
    held = [
        ("k1", "far:17:x", now + LEASE_S - 60),
        ("k2", "far:17:x", now + LEASE_S - 30),
        ("k3", "other:9:y", now + 5),
    ]
    line = claims_line(held, now)
    assert line.startswith(
        "3 calls are claimed by another process (host far, pid 17, 60 s ago, and 1 other process)"
    )
    assert "free themselves in 14 min" in line
    assert claims_line([], now) == ""
