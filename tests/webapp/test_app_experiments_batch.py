"""The Experiments page's choice of mode: a batch sweep priced at batch prices, run in the background
through the loopback server's batch protocol (no live call), its trials in the run store."""

from __future__ import annotations

from pathlib import Path

from components.providers.base import ModelSpec
from components.run.store import RunStore
from tests.webapp.test_app_experiments import all_text, db, page  # noqa: F401  (db is a fixture)
from webapp.services import jobs
from webapp.services.models import Choice


def test_batch_mode_estimate_and_run(db, server):  # noqa: F811
    choice = Choice(ModelSpec("openai", "gpt-4o-mini", base_url=server.openai_url), "sk-test-not-stored")
    at = page(choice)
    live = next(m.value for m in at.metric if m.label == "Estimated cost")
    at.radio(key="exp_mode").set_value("batch").run()
    assert not at.exception, at.exception
    batch = next(m for m in at.metric if "cost" in m.label)
    assert batch.label == "Batch cost (est.)" and batch.value != live
    assert float(batch.value.strip("$<")) < float(live.strip("$<"))
    at.button(key="exp_run").click().run()
    job = jobs.jobs_for(at.session_state["sweep_owner"])[0]
    assert jobs.wait(job, 90) and job.failure is None, job.failure
    assert (
        server.counts["batches"] == 1 and server.counts["batch_requests"] == 12 and server.counts["chat"] == 0
    )
    trials = RunStore(db).trials_frame()
    assert len(trials) == 12 and trials["error"].isna().all()
    at.run()
    assert "12/12 trials" in all_text(at)
    assert "sk-test-not-stored" not in Path(db).read_bytes().decode("latin-1")
