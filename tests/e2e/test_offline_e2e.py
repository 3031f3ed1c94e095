"""Nothing leaves the machine: a tour of every page in chromium (Home, Playground, every Lesson step,
Experiments, Results, Compare, Papers; then the same in presenter mode, moving between pages by the
sidebar's links too) records every request the browser makes, favicons and fonts included, and none
goes to a host but 127.0.0.1 or localhost. Requests to any other host are refused (never sent) and
named in the failure."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from components.report.lesson import STEPS
from tests.e2e.appserver import calm, settle

pytestmark = pytest.mark.browser

LOCAL = {"127.0.0.1", "localhost", "::1", "[::1]"}
PAGES = ("", "playground", "lesson", "experiments", "results", "compare", "papers")


def outside(url: str) -> bool:
    """True for a request that would leave the machine (data:, blob: and about: never do)."""
    parts = urlsplit(url)
    return parts.scheme not in ("data", "blob", "about") and (parts.hostname or "") not in LOCAL


def test_a_tour_of_every_page_makes_no_request_off_the_machine(new_page, app_url):
    page = new_page(1440, 900)
    seen: list[str] = []
    refused: list[str] = []
    page.context.on("request", lambda r: seen.append(r.url))
    page.context.on("websocket", lambda ws: seen.append(ws.url))
    page.context.route(
        lambda url: outside(url), lambda route: (refused.append(route.request.url), route.abort())
    )

    def visit(path: str) -> None:
        page.goto(f"{app_url}/{path}")
        settle(page, 120_000)
        page.wait_for_timeout(1000)  # the favicon and late fonts
        calm(page)

    for present in ("", "present=1"):
        for name in PAGES:
            query = "&".join(q for q in (present, "step=1" if name == "lesson" else "") if q)
            visit(name + (f"?{query}" if query else ""))
        for step in range(2, len(STEPS) + 1):
            visit(f"lesson?step={step}" + (f"&{present}" if present else ""))
    # then through the app's own navigation (st.navigation's links in the sidebar), page to page
    visit("")
    for title in ("Playground", "Lesson", "Experiments", "Results", "Compare", "Papers", "Home"):
        page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
        settle(page, 120_000)
        page.wait_for_timeout(500)
        calm(page)

    assert len(seen) > 50, seen  # the tour was seen: the app's scripts, styles, fonts, websocket, icons
    # the page's icon is the app's own image, served by the app and fetched from it
    icons = page.evaluate("() => [...document.querySelectorAll('link[rel*=icon]')].map(l => l.href)")
    assert icons and all(not outside(u) and urlsplit(u).path.endswith(".png") for u in icons), icons
    assert set(icons) <= set(seen), icons
    left = sorted({u for u in seen + refused if outside(u)})
    assert not left, f"{len(left)} request(s) leave 127.0.0.1: {left[:10]}"
