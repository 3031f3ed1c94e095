"""How long a local run takes, said before and while it runs: the model's speed measured from the runs
it made (services.models.speed), and the Playground's clock (elapsed time against that estimate)."""

from __future__ import annotations

import time

import pandas as pd
import pytest

from webapp.playground.running import Clock
from webapp.services.models import duration, speed


@pytest.fixture(autouse=True)
def _own_store(tmp_path, monkeypatch):
    """A run store of the test's own (the calls in it measure the speed here first), and a worker folder
    of its own: no timing saved by an earlier test's warm-up counts here."""
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs.sqlite"))
    monkeypatch.setenv("LITM_WORKER_DIR", str(tmp_path / "own-worker"))


def trials(model: str, shipped: bool, pairs: list[tuple[int, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": model,
            "shipped": shipped,
            "input_tokens": [p[0] for p in pairs],
            "output_tokens": 5,
            "latency_s": [p[1] for p in pairs],
        }
    )


def test_speed_is_measured_from_this_users_runs_first_then_the_shipped_ones():
    model = "local:qwen2.5-coder-0.5b-instruct"
    shipped = trials(model, True, [(2000, 20.0), (2400, 24.0), (1000, 10.0), (100, 5.0)])
    measured = speed("qwen2.5-coder-0.5b-instruct", shipped)
    assert measured is not None and round(measured.rate) == 100 and "shipped" in measured.where
    assert measured.n == 4 and round(measured.seconds(3000)) == 30  # prompts under 500 tokens left out
    assert not measured.here  # made on another machine: callers say so, and the Playground's clock gives none
    mine = trials(model, False, [(2000, 10.0), (2000, 10.0), (4000, 20.0)])
    measured = speed("qwen", pd.concat([shipped, mine]))  # an alias of the same model
    assert round(measured.rate) == 200 and measured.where == "your run store" and measured.here
    assert speed("qwen", trials("openai:gpt-4o-mini", False, [(2000, 1.0)] * 3)) is None  # not measured


def test_duration_reads_like_a_clock():
    assert [duration(s) for s in (4.4, 75, 1200, 7800)] == ["4 s", "1 min 15 s", "20 min", "2 h 10 min"]


class Status:
    """A stand-in for st.status: what the page would show."""

    def __init__(self):
        self.lines, self.shown = [], []

    def write(self, text):
        self.lines.append(text)

    def empty(self):
        status = self

        class Slot:
            def markdown(self, text):
                status.shown.append(text)

        return Slot()


def test_the_clock_shows_elapsed_time_against_the_estimate_while_the_call_runs():
    status = Status()
    clock = Clock(status, expected=20.0)
    prompt = type("P", (), {"label": "answer", "stage": 1, "tokens": 2000})()

    def call():
        clock.on_call(prompt, None)  # the worker reports a call; the page writes it
        time.sleep(1.2)
        return "done"

    assert clock.run(call) == "done"
    assert len(status.shown) >= 2  # redrawn while the call ran, not once at the end
    assert status.shown[-1].startswith("**Elapsed 1 s of about 20 s")
    assert any("sending 2,000 tokens" in line for line in status.lines)


def test_the_playgrounds_estimate_comes_from_this_machine_only(monkeypatch):
    """An estimate from the shipped runs (another machine: "about 13 s" took 34 s here) is not shown as
    this machine's: the Playground's clock then shows elapsed time only."""
    from components.providers.base import ModelSpec
    from webapp.services.models import Choice
    from webapp.ui import clock as run  # the clock every page's wait shows (the Playground's, the Lesson's)

    model = "local:qwen2.5-coder-0.5b-instruct"
    choice = Choice(ModelSpec("local", "qwen2.5-coder-0.5b-instruct"), None)
    shipped = trials(model, True, [(2000, 20.0)] * 3)
    monkeypatch.setattr(run.sharing, "load_runs", lambda in_url=False: (shipped, None, None))
    assert run.expected_seconds(choice, 2000) is None
    mine = trials(model, False, [(2000, 10.0)] * 3)
    monkeypatch.setattr(
        run.sharing, "load_runs", lambda in_url=False: (pd.concat([shipped, mine]), None, None)
    )
    assert round(run.expected_seconds(choice, 2000)) == 10


def test_one_playground_run_is_enough_for_the_next_to_say_of_about(tmp_path):
    """The Playground stores calls, not sweep trials: every local call of the run store measures the speed
    here, so after one run the run box shows "of about N s" (and the sidebar the speed)."""
    from components.core.completion import Completion
    from components.providers.base import ModelSpec
    from components.run.store import RunStore
    from webapp.playground import running as run
    from webapp.services.models import Choice

    spec = ModelSpec("local", "qwen2.5-coder-0.5b-instruct")
    choice = Choice(spec, None)
    assert run.expected_seconds(choice, 2000) is None  # nothing measured yet
    with RunStore(tmp_path / "runs.sqlite") as store:
        store.put_call("k1", spec, [{"role": "user", "content": "x"}], {}, Completion("a", 4000, 5, 40.0))
        store.put_call("k2", spec, [{"role": "user", "content": "y"}], {}, Completion("b", 100, 5, 9.0))
        store.put_call("k3", ModelSpec("openai", "gpt-4o-mini"), [], {}, Completion("c", 4000, 5, 1.0))
    measured = speed("qwen2.5-coder-0.5b-instruct", pd.DataFrame())
    assert measured is not None and measured.here and round(measured.rate) == 100  # 4,000 tokens in 40 s
    assert measured.n == 1 and "measured over 1 call in your run store" in measured.text()
    assert round(run.expected_seconds(choice, 2000)) == 20


def test_once_the_worker_timed_the_model_the_sidebar_and_experiments_stop_saying_not_measured(
    tmp_path, monkeypatch
):
    """Before any call here: the shipped runs' speed, said to be another machine's ("not measured yet").
    Once the worker has timed the model it loaded (its calibration), the sidebar, Experiments and the
    Playground's clock all give that figure as this machine's."""
    from components.providers import localworker
    from components.providers.base import ModelSpec
    from webapp.experiments import estimate
    from webapp.services.models import Choice
    from webapp.ui import clock as run  # the clock every page's wait shows
    from webapp.ui import sidebar

    monkeypatch.setenv(localworker.ENV_DIR, str(tmp_path / "worker"))
    model = "qwen2.5-coder-0.5b-instruct"
    shipped = trials(f"local:{model}", True, [(2000, 20.0)] * 3)
    for module in (sidebar, estimate, run):
        monkeypatch.setattr(module.sharing, "load_runs", lambda in_url=False: (shipped, None, None))
    choice = Choice(ModelSpec("local", model), None)
    sweep = {"input_tokens": 20_000, "calls": 10}
    assert "not measured yet" in sidebar.local_caption(model)
    assert "not measured yet" in estimate.local_time(sweep, [{"provider": "local", "model": model}])
    assert run.expected_seconds(choice, 2000) is None
    paths = localworker.Paths(tmp_path / "worker", localworker.install_tag())
    paths.folder.mkdir()
    key = localworker.model_key(choice.spec)
    localworker.save_calibration(
        paths, key["model"], key["threads"], {"prompt_tps": 50.0, "per_token_s": 0.1}
    )
    caption = sidebar.local_caption(model)
    assert (
        "not measured yet" not in caption and "about 50 prompt tokens/s and 0.10 s an answer token" in caption
    )
    note = estimate.local_time(sweep, [{"provider": "local", "model": model}])
    assert "not measured yet" not in note and "about 50 prompt tokens/s" in note
    assert run.expected_seconds(choice, 2000) == pytest.approx(40 + 32 * 0.1)  # one answer of ~32 tokens
