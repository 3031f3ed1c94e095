"""The Playground's likelihood mini-curve in a real browser, against the loopback OpenAI-compatible
server (its /v1/completions takes echo with logprobs, as vLLM and the llama.cpp server do): one
question at five gold indices, "Add 5 more questions" with a band over questions, every call cached;
a slow model shows the elapsed time while it runs, and Stop keeps the positions already scored."""

from __future__ import annotations

import json
import re
import urllib.request

import pytest

from tests.e2e.appserver import calm, choose, fill, llm_server, select, settle

pytestmark = pytest.mark.browser

TRACES = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(
    el => (el.data || []).map(t => ({name: t.name || '', y: t.y ? Array.from(t.y) : [], fill: t.fill || ''})))"""


def admin(v1: str, what: str, body: dict | None = None) -> dict:
    url = v1.removesuffix("/v1") + f"/admin/{what}"
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        url,
        data=data,
        method="POST" if body is not None else "GET",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


def calls(v1: str) -> int:
    return int(admin(v1, "counts")["counts"].get("completions", 0))


def aliases(n: int) -> list[int]:
    """Gold aliases of the NQ-open set's first n questions: each is one scoring call per position."""
    from components.tasks.importers import read_tasks
    from components.tasks.samples import NQ_SET, list_task_sets

    path = next(s.path for s in list_task_sets() if s.name == NQ_SET)
    return [len([a for a in dict.fromkeys(t.answers) if a.strip()]) for t in read_tasks(path).tasks[:n]]


def open_task_set(page, url: str, v1: str, model: str) -> None:
    page.goto(f"{url}/playground")
    settle(page)
    select(page, "Provider", "OpenAI-compatible server")
    fill(page, "Model", model)
    fill(page, "Base URL", v1)
    choose(page, "Task set")
    select(page, "Strategy", "LITM QA")


def trace(page, prefix: str) -> dict | None:
    return next((t for t in page.evaluate(TRACES) if t["name"].startswith(prefix)), None)


def test_the_likelihood_mini_curve_with_more_questions_and_a_band(page, app_url):
    with llm_server() as v1:
        open_task_set(page, app_url, v1, "loopback-scorer")
        assert page.get_by_text("How likely the right answer is (ours)").is_visible()  # the default measure
        page.get_by_role("button", name="Run at 5 positions").click()
        page.get_by_text("One question, 5 positions").first.wait_for()
        settle(page)
        calm(page)
        one = trace(page, "this question")
        assert one and len(one["y"]) == 5 and all(y <= 0 for y in one["y"]), one
        per_question = aliases(6)
        assert calls(v1) == 5 * per_question[0]  # one call per position and alias: scored, nothing generated
        assert "not the papers'" in page.inner_text("body") or page.locator("text=not the papers'").count()

        page.get_by_role("button", name="Add 5 more questions").click()
        page.get_by_text("6 questions, 5 positions").first.wait_for(timeout=120_000)
        settle(page)
        calm(page)
        mean = trace(page, "mean over 6 questions")
        assert mean and len(mean["y"]) == 5
        band = next(t for t in page.evaluate(TRACES) if t["fill"] == "toself")
        assert len(band["y"]) == 10
        assert calls(v1) == 5 * sum(per_question)
        assert re.search(r"over 6 questions", page.inner_text("body"))  # the shape sentence

        page.get_by_role("button", name="Run at 5 positions").click()  # again: from the user's store
        page.get_by_text("One question, 5 positions").first.wait_for()
        settle(page)
        assert calls(v1) == 5 * sum(per_question)
        assert trace(page, "this question")["y"] == one["y"]


def test_a_slow_run_shows_the_time_and_stop_keeps_what_was_scored(page, app_url):
    with llm_server() as v1:
        admin(v1, "mode", {"delay": 3.0})
        open_task_set(page, app_url, v1, "loopback-slow")
        page.get_by_role("button", name="Run at 5 positions").click()
        page.get_by_text(re.compile(r"Elapsed \d+ s; 1 of 5 scored")).first.wait_for(timeout=60_000)
        page.get_by_role("button", name="Stop scoring").click()
        page.get_by_text("Stopped: the positions scored so far are kept").first.wait_for(timeout=60_000)
        settle(page)
        calm(page)
        kept = trace(page, "this question")
        assert kept and 1 <= len(kept["y"]) < 5, kept
        per_position = aliases(1)[0]
        assert calls(v1) < 5 * per_position
        admin(v1, "mode", {"delay": 0.0})
        page.get_by_role("button", name="Run at 5 positions").click()  # the rest; the scored ones are cached
        page.get_by_text("One question, 5 positions").first.wait_for()
        settle(page)
        assert len(trace(page, "this question")["y"]) == 5
        assert calls(v1) == 5 * per_position
