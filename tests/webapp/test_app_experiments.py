"""AppTest of the Experiments page: task set, grid, estimate, a background run with the fake provider
and the loopback server, progress that a refreshed page (a new session, same URL) finds again,
cancel, resume, and another session that never sees this one's run in progress."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.providers import factory
from components.providers.base import ModelSpec
from components.providers.fake import FakeProvider, plausible_answer
from components.run.store import RunStore
from webapp.services import jobs
from webapp.services.models import Choice

PAGE = str(Path(__file__).resolve().parents[2] / "webapp" / "experiments" / "page.py")


BROWSER = {
    "cookie": "browser-A"
}  # the per-browser cookie webapp/services/sharing.py reads (AppTest sends none)


@pytest.fixture
def db(tmp_path, monkeypatch):
    from webapp.services import sharing

    path = tmp_path / "runs" / "litm.sqlite"
    monkeypatch.setenv("LITM_DB", str(path))
    BROWSER["cookie"] = "browser-A"
    monkeypatch.setattr(sharing, "_cookie", lambda: BROWSER["cookie"])
    yield path
    jobs.stop_all(10)  # stop whatever a test left running
    factory.uninstall()


def page(choice=None, token: str | None = None, provider=None, small=True) -> AppTest:
    """The page alone, with `choice` as the sidebar's; `provider` is installed in the provider factory
    (a test double below the app) for the choice's model."""
    at = AppTest.from_file(PAGE, default_timeout=120)
    if choice is not None:
        at.session_state["choice"] = choice
    if provider is not None:
        factory.install(provider)
    if token:
        at.query_params["run"] = token
    if small:
        at.session_state["exp_source"] = "Generated"
        at.session_state["exp_kind"] = "kv"
        at.session_state["exp_gen_n"] = 3
        at.session_state["exp_lengths"] = [500]
        at.session_state["exp_positions"] = [0.0, 1.0]
        at.session_state["exp_strategies"] = ["litm", "baseline"]
        at.session_state["exp_n_tasks"] = 3
    at.run()
    assert not at.exception, at.exception
    return at


def fake_choice() -> Choice:
    return Choice(ModelSpec("fake", "fake-model"), None)


def wait_for(predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def all_text(at) -> str:
    parts = [e.value for e in (*at.info, *at.warning, *at.error, *at.success, *at.caption, *at.markdown)]
    parts += [str(p.proto.text) for p in at.get("progress")]
    return "\n".join(str(p) for p in parts)


def test_empty_state_without_model(db):
    at = page(small=False)
    assert not at.error, [e.value for e in at.error]
    assert any("Choose a provider and model in the sidebar" in i.value for i in at.info)
    assert at.button(key="exp_run").disabled
    assert "No sweeps yet" in all_text(at)
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Trials"].replace(",", "")) > 0 and "Estimated cost" in metrics


def test_estimate_follows_the_grid(db):
    at = page(fake_choice())
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Trials"] == "12"  # 3 tasks x 1 length x 2 positions x 2 strategies
    at.multiselect(key="exp_positions").set_value([0.0, 0.5, 1.0]).run()
    assert {m.label: m.value for m in at.metric}["Trials"] == "18"


def test_run_with_fake_provider_lands_in_store(db):
    at = page(fake_choice())
    token = at.query_params["run"][0] if isinstance(at.query_params["run"], list) else at.query_params["run"]
    assert len(token) == 16
    at.button(key="exp_run").click().run()
    assert not at.exception, at.exception
    mine = jobs.jobs_for(token)
    assert len(mine) == 1
    assert jobs.wait(mine[0], 60)
    assert mine[0].failure is None, mine[0].failure
    at.run()
    text = all_text(at)
    assert "12/12 trials" in text and "finished" in text
    # the finished sweep's links: at the top of the page and again where the Run button is (the user is there)
    assert text.count("See the results on the Results page") == 2, text
    trials = RunStore(db).trials_frame()
    assert len(trials) == 12 and trials["error"].isna().all()
    assert set(trials["strategy"]) == {"litm", "baseline"}
    assert not any(Path(db).parent.glob("*key*"))  # nothing but the store and the task file
    past = next(d.value for d in at.dataframe if "state" in d.value.columns)
    assert list(past["state"]) == ["finished"]
    assert list(past["trials"]) == ["12"] and "None" not in past.to_string()  # formatted for reading


def gated_provider(gate: threading.Event, free: int = 1) -> FakeProvider:
    """Answers its first `free` calls at once and holds every later one until `gate` is set (at most
    120 s): a sweep that stays running until the test lets it go, however busy the machine."""
    calls = itertools.count()

    def responder(messages, settings):
        if next(calls) >= free:
            gate.wait(120)
        return plausible_answer(messages[-1]["content"])

    return FakeProvider(ModelSpec("fake", "fake-model"), responder=responder)


def test_refresh_reattaches_cancel_and_resume(db):
    gate = threading.Event()
    slow = gated_provider(gate)
    at = page(fake_choice(), provider=slow)
    at.session_state["exp_concurrency"] = 1
    at.run()
    token = at.session_state["sweep_owner"]
    at.button(key="exp_run").click().run()
    job = jobs.jobs_for(token)[0]
    assert wait_for(lambda: job.done >= 1, 30)

    # a refreshed tab is a new session with the same URL: it finds the running sweep
    again = page(fake_choice(), token=token, provider=slow)
    assert again.session_state["sweep_owner"] == token
    assert "· running ·" in all_text(again) and "/12 trials" in all_text(again)

    # another browser given the link watches, and cannot cancel
    BROWSER["cookie"] = "browser-B"
    holder = page(fake_choice(), token=token, provider=slow)
    assert "· running ·" in all_text(holder)
    assert not [b for b in holder.button if b.key == f"exp_cancel_{job.id}"]
    assert "watching (started in another browser)" in all_text(holder)
    assert not jobs.cancel(token, job.id, "not-the-browser-key") and not job.cancel.is_set()
    assert not [s for s in holder.selectbox if s.key == "exp_resume"]  # nothing to resume while it runs

    # another browser session never sees it, not even in the past sweeps
    other = page(fake_choice(), provider=slow)
    assert other.session_state["sweep_owner"] != token
    assert "· running ·" not in all_text(other) and not other.get("progress")
    assert "No sweeps yet" in all_text(other) or not any(
        "state" in d.value.columns and len(d.value) for d in other.dataframe
    )

    BROWSER["cookie"] = "browser-A"  # back in the browser that started it
    again.button(key=f"exp_cancel_{job.id}").click().run()
    assert job.cancel.is_set()
    gate.set()  # the held call returns; the sweep stops at the cancel
    assert jobs.wait(job, 30)
    assert job.state == "cancelled"
    sweeps = RunStore(db).sweeps_frame()
    assert sweeps["status"].iloc[0] == "cancelled"
    done_before = len(RunStore(db).trials_frame())
    assert 1 <= done_before < 12

    # resume with a fast provider: only the missing trials run
    fast = page(fake_choice(), token=token, provider=FakeProvider(ModelSpec("fake", "fake-model")))
    assert fast.selectbox(key="exp_resume").value == sweeps["name"].iloc[0]
    fast.button(key="exp_resume_go").click().run()
    assert not fast.exception, fast.exception
    resumed = jobs.jobs_for(token)[0]
    assert resumed is not job and jobs.wait(resumed, 60)
    assert resumed.summary.skipped == done_before and resumed.summary.status == "done"
    assert len(RunStore(db).trials_frame()) == 12


def test_missing_key_is_one_line_not_a_traceback(db, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    at = page(Choice(ModelSpec("openai", "gpt-4o-mini"), None))
    at.button(key="exp_run").click().run()
    token = at.session_state["sweep_owner"]
    for job in jobs.jobs_for(token):
        jobs.wait(job, 30)
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert errors and all("Traceback" not in e for e in errors)


def test_run_against_loopback_server(db, server):
    choice = Choice(ModelSpec("openai-compatible", "loop", base_url=server.openai_url), "sk-test-not-stored")
    at = page(choice)
    at.button(key="exp_run").click().run()
    job = jobs.jobs_for(at.session_state["sweep_owner"])[0]
    assert jobs.wait(job, 60) and job.failure is None, job.failure
    assert server.counts["chat"] == 12
    trials = RunStore(db).trials_frame()
    assert len(trials) == 12 and trials["model"].iloc[0] == "openai-compatible:loop"
    assert "sk-test-not-stored" not in Path(db).read_bytes().decode("latin-1")


def test_a_local_sweeps_calls_waiting_in_the_worker_read_queued_not_sent(monkeypatch):
    """Experiments' line: calls a local sweep sent that wait in the local model's queue say so."""
    import threading

    from webapp.experiments import panels
    from webapp.services import jobs as jobs_service

    hold = threading.Event()
    thread = threading.Thread(target=hold.wait, daemon=True)
    thread.start()
    try:
        job = jobs_service.Job(
            id="j", owner="o", label="s", store_path="x", sent=2, local=True, thread=thread
        )
        monkeypatch.setattr(jobs_service, "local_waiting", lambda: 2)
        assert panels.sent_text(job).startswith("2 calls queued for the local model (2 waiting or running")
        monkeypatch.setattr(jobs_service, "local_waiting", lambda: 0)
        assert panels.sent_text(job) == "2 calls sent"
        job.local = False
        monkeypatch.setattr(jobs_service, "local_waiting", lambda: 2)
        assert panels.sent_text(job) == "2 calls sent"  # a remote model's calls are sent
        job.sent, job.local = 1, True
        assert panels.sent_text(job).startswith("1 call queued")
    finally:
        hold.set()
