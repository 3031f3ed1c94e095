"""THE estimate of a local call's time here (components/run/speed.py), on fake timings: measured calls first,
then the worker's calibration (a first guess before anything was measured), never another machine's as this
one's; the line a waiting call shows; the Caller's clock that `litm sweep` prints."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from components.core.completion import Completion
from components.providers import localworker
from components.providers.base import ModelSpec, Settings
from components.run import speed as sp

MODEL = "qwen2.5-coder-0.5b-instruct"


@pytest.fixture
def folder(tmp_path, monkeypatch) -> localworker.Paths:
    """A worker folder of the test's own: its calibration file is the only one read."""
    monkeypatch.setenv(localworker.ENV_DIR, str(tmp_path))
    return localworker.Paths(Path(tmp_path), localworker.install_tag())


def timed(paths, prompt_tps: float, per_token_s: float, load_s: float = 2.0, model: str = MODEL) -> None:
    key = localworker.model_key(ModelSpec("local", model))
    localworker.save_calibration(
        paths,
        key["model"],
        key["threads"],
        {"prompt_tps": prompt_tps, "per_token_s": per_token_s, "load_s": load_s},
    )


def test_a_calibration_is_the_first_guess_until_a_call_is_measured(folder):
    assert sp.local_speed(MODEL) is None  # nothing measured, nothing timed: no estimate at all
    timed(folder, prompt_tps=200.0, per_token_s=0.05)
    guess = sp.local_speed(MODEL)
    assert guess is not None and guess.calibrated and guess.here and guess.load_s == 2.0
    # 2,000 prompt tokens at 200/s, and one answer of ANSWER_TOKENS tokens at 0.05 s each
    assert guess.seconds(2000) == pytest.approx(10.0 + sp.ANSWER_TOKENS * 0.05)
    assert guess.seconds(2000, calls=3) == pytest.approx(10.0 + 3 * sp.ANSWER_TOKENS * 0.05)
    assert "200 prompt tokens/s and 0.05 s an answer token" in guess.text() and "first loaded" in guess.text()
    measured = sp.from_calls([(MODEL, 2, 4000, 40.0), ("gpt-4o-mini", 9, 9000, 1.0)], MODEL)
    assert measured is not None and measured.rate == 100.0 and measured.per_token == 0.0
    assert sp.choose(measured, guess) is measured  # a measured call wins over the calibration
    assert sp.choose(None, guess, elsewhere=measured) is guess  # the calibration wins over another machine
    shipped = sp.Speed(300.0, 50, sp.SHIPPED)
    assert sp.choose(None, None, shipped) is shipped and not shipped.here


def test_another_model_s_calibration_is_not_this_one_s(folder):
    timed(folder, prompt_tps=200.0, per_token_s=0.05, model="smollm2-135m-instruct")
    assert sp.local_speed(MODEL) is None and sp.local_speed("smollm2-135m-instruct") is not None
    assert sp.local_speed("/no/such/model.gguf") is None  # a path: nothing known


def test_the_wait_line_says_elapsed_of_about_and_what_it_waits_for():
    assert sp.wait_line(12.4, 40.0) == "Elapsed 12 s of about 40 s"
    assert sp.wait_line(3, None, loading=True) == "Elapsed 3 s; loading the model"
    assert sp.wait_line(75, 200.0, ahead=1) == "Elapsed 1 min 15 s of about 3 min 20 s; 1 run ahead of yours"
    assert sp.wait_line(0, 5.0, ahead=2).endswith("2 runs ahead of yours")


def test_every_answered_call_feeds_the_clock_s_speed(folder):
    clock = sp.LocalClock(MODEL)  # no store, no calibration
    assert clock.speed() is None and clock.line() == ""
    clock.started("a", 1000)
    assert clock.line().startswith("local call: Elapsed 0 s") and "of about" not in clock.line()
    timed(folder, prompt_tps=100.0, per_token_s=0.0)  # the worker timed the model as it loaded it
    assert clock.line() == "local call: Elapsed 0 s of about 10 s"
    clock.ended("a", Completion("x", 1000, 5, 2.0))  # answered in 2 s: 500 tokens/s here
    assert clock.line() == "" and clock.speed().rate == 500.0 and not clock.speed().calibrated
    clock.ended("b", Completion("x", 100, 5, 9.0))  # too short a prompt to measure reading
    clock.ended("c", Completion("x", 4000, 5, 99.0, cached=True))  # a cached answer took no time now
    assert clock.speed().n == 1 and clock.speed().rate == 500.0


class SlowLocal:
    """A stand-in for the local provider: answers after `delay` seconds, 1,000 prompt tokens in 1 s."""

    def __init__(self, delay: float):
        self.spec = ModelSpec("local", MODEL)
        self.delay = delay

    async def complete(self, messages, settings):
        await asyncio.sleep(self.delay)
        return Completion("ok", 1000, 2, self.delay, self.spec.label)


def test_the_caller_says_the_local_call_in_hand_against_the_estimate(folder, monkeypatch):
    """What `litm sweep`'s progress line shows while a local call runs: its elapsed time of about the
    estimate (the calibration here), and the model loading while the worker loads it."""
    from components.run.caller import Caller

    timed(folder, prompt_tps=50.0, per_token_s=0.0)
    caller = Caller(SlowLocal(1.2), None)
    seen: list[str] = []
    monkeypatch.setattr(localworker, "loading", lambda spec: len(seen) < 2)

    async def go():
        task = asyncio.create_task(caller.ask([{"role": "user", "content": "word " * 500}], Settings()))
        while not task.done():
            seen.append(caller.running())
            await asyncio.sleep(0.3)
        return await task

    t0 = time.monotonic()
    completion, _ = asyncio.run(go())
    assert completion.text == "ok" and time.monotonic() - t0 < 5
    lines = [line for line in seen if line]
    assert lines and all(line.startswith("local call: Elapsed ") for line in lines)
    assert all(" of about 10 s" in line for line in lines)  # about 500 tokens at 50 tokens/s
    assert lines[0].endswith("; loading the model") and not lines[-1].endswith("loading the model")
    assert caller.running() == "" and caller.clock.speed().rate == pytest.approx(1000 / 1.2)


def test_litm_sweep_warms_up_a_local_model_only_when_nothing_here_knows_its_speed(folder, monkeypatch):
    """`litm sweep` (live) first has the worker load and time each local model with no speed known here,
    saying so in one line; a model measured or timed before, and any other provider, are left alone."""
    import io
    from types import SimpleNamespace

    from components.cli.sweep import warm_up
    from components.providers import factory

    warmed: list[str] = []

    class Warm:
        def __init__(self, spec):
            self.spec = spec

        def warm(self):
            warmed.append(self.spec.model)
            timed(folder, prompt_tps=80.0, per_token_s=0.02)
            return {}

    monkeypatch.setattr(factory, "make_provider", lambda spec, api_key=None: Warm(spec))
    local = SimpleNamespace(provider="local", spec=ModelSpec("local", MODEL))
    cloud = SimpleNamespace(provider="openai", spec=ModelSpec("openai", "gpt-4o-mini"))
    config = SimpleNamespace(models=(local, cloud))
    out = io.StringIO()
    warm_up(config, None, out)
    assert warmed == [MODEL] and out.getvalue().count("\n") == 1
    assert f"loading the local model {MODEL} and timing it once on this machine" in out.getvalue()
    warm_up(config, None, out)  # timed now: no second warm-up, no second line
    assert warmed == [MODEL] and out.getvalue().count("\n") == 1


def test_the_speed_follows_the_latest_calls_not_a_copied_store_s_old_ones(folder, tmp_path):
    """A store made on a slower machine (old calls at 40 s each) is outweighed by the latest calls here,
    and a sweep's clock goes by its own pace once it has answered OWN_CALLS calls."""
    from components.run.store import RunStore

    with RunStore(tmp_path / "runs.sqlite") as store:
        # 20 old calls at 25 prompt tokens/s, then 10 at 100/s: the latest 20 hold 10 of each
        for i in range(30):
            slow = i < 20
            store.db.execute(
                "INSERT INTO calls (key, provider, model, messages, settings, response, input_tokens, "
                "output_tokens, latency_s, created) VALUES (?, 'local', ?, '[]', '{}', '{}', 1000, 2, ?, ?)",
                (f"k{i}", MODEL, 40.0 if slow else 10.0, float(i)),
            )
        store.db.commit()
        latest = sp.local_speed(MODEL, store)
        assert latest is not None and latest.n == sp.RECENT_CALLS
        assert latest.rate == pytest.approx(1000 * 20 / (10 * 40.0 + 10 * 10.0))  # the latest 20 only
        clock = sp.LocalClock(MODEL, store)
        for i in range(sp.OWN_CALLS):
            clock.ended(f"own{i}", Completion("x", 1000, 5, 4.0))  # this run: 250 tokens/s
        assert clock.speed().rate == pytest.approx(250.0) and clock.speed().n == sp.OWN_CALLS
