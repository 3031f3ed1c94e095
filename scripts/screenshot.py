"""Screenshots of every page (and the Playground with a sample loaded) into screenshots/.

    python scripts/screenshot.py [--out screenshots] [--width 1400]

Starts the app on a free loopback port with a temporary HOME, drives Debian's chromium with
playwright (never `playwright install`), and writes one PNG per view.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.appserver import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    choose,
    fill,
    llm_server,
    select,
    settle,
    streamlit_app,
)  # noqa: E402

VIEWS = ("playground", "lesson", "experiments", "results", "papers")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "screenshots"))
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--paste", help="a text file to paste into the Playground (instead of the first sample)")
    ap.add_argument("--question", default="What is the default value of r?")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    with streamlit_app() as url, llm_server() as llm_url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": args.width, "height": 900})
        page.goto(url)  # the root first: it runs app.py, which sets up st.navigation
        settle(page, 90_000)
        for view in VIEWS:
            page.goto(f"{url}/{view}" if view != VIEWS[0] else url)
            settle(page, 90_000)
            path = out / f"{view}.png"
            page.screenshot(path=str(path), full_page=True)
            print(path)
        page.goto(url)  # the Playground is the default page, at the root
        settle(page, 90_000)
        if args.paste:
            choose(page, "Paste")
            fill(page, "Paste a document", Path(args.paste).read_text(encoding="utf-8"), "Control+Enter")
            fill(page, "Question", args.question)
        if page.get_by_text("The prompt map").count():
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
            page.wait_for_timeout(1000)
        page.screenshot(path=str(out / "playground-top.png"))
        # Streamlit scrolls inside its own container, so a tall window shows the whole page.
        page.set_viewport_size({"width": args.width, "height": 3600})
        settle(page)
        page.screenshot(path=str(out / "playground-full.png"))
        print(out / "playground-top.png", out / "playground-full.png")
        # Chunked R&R: one row per chunk prompt.
        select(page, "Strategy", "Chunked R&R")
        page.wait_for_selector(".js-plotly-plot .main-svg")
        page.wait_for_timeout(800)
        page.screenshot(path=str(out / "playground-chunked.png"))
        print(out / "playground-chunked.png")
        # A live run of R&R against the loopback OpenAI-compatible server.
        # Selected in the tall window: at 900 px the dropdown's virtual list may not draw "R&R".
        select(page, "Strategy", "R&R")
        select(page, "Provider", "OpenAI-compatible server")
        fill(page, "Model", "loopback-model")
        fill(page, "Base URL", llm_url)
        page.get_by_role("button", name="Run with openai-compatible:loopback-model").click()
        page.get_by_text("Raw responses").wait_for(timeout=120_000)
        page.set_viewport_size({"width": args.width, "height": 900})
        settle(page)
        page.get_by_text("Run it", exact=True).scroll_into_view_if_needed()
        page.screenshot(path=str(out / "playground-run.png"))
        print(out / "playground-run.png")
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
