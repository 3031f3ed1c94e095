"""Browser tests of issue 10 (Debian chromium via playwright against a real `streamlit run`):

- a second browser context that opens the first one's `?run=` link watches its sweep and cannot
  cancel it (control is bound to the browser that started it: webapp/services/sharing.py);
- task ids, sweep names and model names holding a markdown image link or an <img> tag to a loopback
  URL make no request to it (a tiny HTTP server counts the requests it gets).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.e2e.appserver import llm_server, settle, streamlit_app
from tests.webapp.runs_fixture import fill
from webapp.ui.render import WORD_JOINER

pytestmark = pytest.mark.browser


@pytest.fixture
def contexts(new_page):
    """Pages in browser contexts of their own (own cookies, own Streamlit session): conftest's new_page."""
    return lambda: new_page(1400, 1400)


def start_sweep(tab, url: str, v1: str, name: str) -> None:
    tab.goto(url)
    settle(tab)
    sidebar = tab.locator('[data-testid="stSidebar"]')
    sidebar.locator('[data-testid="stSelectbox"]').filter(has_text="Provider").click()
    tab.get_by_role("option", name=re.compile("OpenAI-compatible")).click()
    settle(tab)
    for label, value in (("Model", "loop"), ("Base URL", v1)):
        box = sidebar.get_by_role("textbox", name=label, exact=True)
        box.fill(value)
        box.press("Enter")
        settle(tab)
    tab.get_by_role("link", name="Experiments").first.click()
    settle(tab)
    tasks = tab.get_by_role("spinbutton", name="Tasks (the first n of the set)")
    tasks.fill("1")
    tasks.press("Enter")
    settle(tab)
    box = tab.get_by_role("textbox", name="Sweep name")
    box.fill(name)
    box.press("Enter")
    settle(tab)
    tab.get_by_role("button", name=re.compile("Run the sweep")).click()
    tab.get_by_text(re.compile(r"\d+/30 trials")).first.wait_for(timeout=30_000)


def test_a_shared_run_link_watches_but_cannot_cancel(tmp_path, contexts, counter):
    with (
        llm_server() as v1,
        streamlit_app(
            env={"LITM_DB": str(tmp_path / "runs.sqlite"), "LITM_SHIPPED_RUNS": str(tmp_path / "none")}
        ) as url,
    ):
        admin = v1.removesuffix("/v1") + "/admin/mode"
        req = urllib.request.Request(
            admin,
            data=json.dumps({"delay": 5.0}).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(req, timeout=5).read()
        owner = contexts()
        start_sweep(owner, url, v1, f"![sweep]({counter}/sweep.png)")
        link = owner.url
        assert "run=" in link
        cancel = owner.get_by_role("button", name=re.compile("Cancel"))
        cancel.first.wait_for(timeout=30_000)

        other = contexts()  # another browser: its own cookies, its own session
        other.goto(link)
        settle(other)
        other.get_by_text("Your sweeps in this session").wait_for(timeout=30_000)
        other.get_by_text("watching (started in another browser)").first.wait_for(timeout=30_000)
        assert other.get_by_role("button", name=re.compile("Cancel")).count() == 0
        other.get_by_text(re.compile(r"\d+/30 trials")).first.wait_for(
            timeout=30_000
        )  # it watches the progress
        if os.environ.get("LITM_SHOTS"):  # a picture of what the link holder sees
            settle(other)
            other.screenshot(path=str(Path(os.environ["LITM_SHOTS"]) / "harden-watch.png"))
        assert "Traceback" not in other.content()

        owner.reload()  # the same browser after a refresh still holds the control
        settle(owner)
        owner.get_by_role("button", name=re.compile("Cancel")).first.click()
        owner.get_by_text(re.compile("cancelled")).first.wait_for(timeout=60_000)
    with sqlite3.connect(tmp_path / "runs.sqlite") as db:
        status, owner_tag = db.execute("SELECT status, owner FROM sweeps").fetchone()
    assert status == "cancelled" and re.fullmatch(r"[0-9a-f]{16}\.[0-9a-f]{16}", owner_tag)
    assert _Counter.hits == []  # the sweep name was shown as text, never fetched as an image


class _Counter(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self):  # the http.server name
        _Counter.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def counter():
    """A tiny HTTP server on loopback that records every request it gets; yields its URL."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Counter)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    _Counter.hits.clear()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def test_image_links_in_ids_and_names_fetch_nothing(tmp_path, contexts, counter):
    base = counter
    db = fill(
        tmp_path / "runs.sqlite",
        lengths=(2000,),
        positions=(0.0, 1.0),
        n_tasks=2,
        name=f"![sweep]({base}/sweep.png)",
        model=f"<img src={base}/model.png>",
    )
    with sqlite3.connect(db) as c:
        c.execute("UPDATE trials SET task = ?", (f"![task]({base}/task.png) {base}/bare",))
        c.execute("UPDATE trials SET error = ? WHERE error IS NOT NULL", (f"![err]({base}/error.png)",))
    with streamlit_app(env={"LITM_DB": str(db), "LITM_SHIPPED_RUNS": str(tmp_path / "none")}) as url:
        tab = contexts()
        tab.goto(url)
        settle(tab)
        tab.get_by_role("link", name="Results").first.click()
        settle(tab)
        tab.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
        tab.get_by_role("tab", name="Trials", exact=True).click()
        settle(tab)
        tab.wait_for_timeout(2000)
        text = tab.inner_text("body").replace(WORD_JOINER, "")  # md() keeps bare URLs from linking
        assert f"![task]({base}/task.png) {base}/bare" in text  # shown as the characters it is
        assert f"<img src={base}/model.png>" in text  # the legend too
        assert "Traceback" not in tab.content()
        assert tab.locator(f'img[src^="{base}"]').count() == 0
        assert tab.locator(f'a[href^="{base}"]').count() == 0  # nor a link to click
    assert _Counter.hits == []
