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

from tests.e2e.appserver import CHROMIUM, CHROMIUM_ARGS, streamlit_app  # noqa: E402

VIEWS = ("playground", "experiments", "results", "papers")


def settle(page, timeout: int = 30_000) -> None:
    """Wait until Streamlit stops running the script and plotly charts are drawn."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout)
    page.wait_for_timeout(800)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout)
    page.wait_for_timeout(1200)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "screenshots"))
    ap.add_argument("--width", type=int, default=1400)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    with streamlit_app() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": args.width, "height": 900})
        for view in VIEWS:
            page.goto(f"{url}/{view}")
            settle(page, 90_000)
            path = out / f"{view}.png"
            page.screenshot(path=str(path), full_page=True)
            print(path)
        # The Playground with a sample and the R&R strategy, a smaller r so reminders show.
        page.goto(f"{url}/playground")
        settle(page, 90_000)
        page.screenshot(path=str(out / "playground-top.png"))
        print(out / "playground-top.png")
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
