"""Screenshots of every page and every Lesson step, at a projector's 1024x576 in presenter mode and a
laptop's 1440x900, into a folder (default: screenshots/ in the repository, which git ignores).

    python scripts/screenshot.py [--out FOLDER] [--only home,lesson] [--full]

Starts the app on a free loopback port with a temporary HOME (the shipped runs only), drives Debian's
chromium with playwright (never `playwright install`), and writes one PNG per view and size, named
<view>-<width>x<height>.png; --full adds a whole-page PNG of each view at 1440 wide.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from components.report.lesson import STEPS  # noqa: E402
from tests.e2e.appserver import CHROMIUM, CHROMIUM_ARGS, settle, streamlit_app  # noqa: E402

PAGES = ("home", "playground", "experiments", "results", "compare", "papers")
SIZES = ((1024, 576, True), (1440, 900, False))  # (width, height, presenter mode)


def views(only: set[str]) -> list[tuple[str, str]]:
    """(name, path with query) of every view: each page, and each Lesson step."""
    out = [(p, "" if p == "home" else p) for p in PAGES]
    out += [(f"lesson-{n}", f"lesson?step={n}") for n in range(1, len(STEPS) + 1)]
    return [(name, path) for name, path in out if not only or name.split("-")[0] in only]


def shoot(page, url: str, path: str, present: bool, out: Path, name: str) -> None:
    sep = "&" if "?" in path else "?"
    page.goto(f"{url}/{path}" + (f"{sep}present=1" if present else ""))
    settle(page, 120_000)
    if page.locator(".js-plotly-plot").count():
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
    page.wait_for_timeout(800)
    page.screenshot(path=str(out / name))
    print(out / name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "screenshots"), help="folder for the PNGs (created)")
    ap.add_argument("--only", default="", help="comma-separated view names (home, lesson, results, ...)")
    ap.add_argument("--full", action="store_true", help="also a whole-page PNG of each view at 1440 wide")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    only = {x.strip() for x in args.only.split(",") if x.strip()}
    from playwright.sync_api import sync_playwright

    with streamlit_app() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for width, height, present in SIZES:
            page = browser.new_context(viewport={"width": width, "height": height}).new_page()
            page.goto(url)  # the root first: it runs app.py, which sets up st.navigation
            settle(page, 120_000)
            for name, path in views(only):
                shoot(page, url, path, present, out, f"{name}-{width}x{height}.png")
            if args.full and not present:
                page.set_viewport_size({"width": width, "height": 3600})  # Streamlit scrolls inside itself
                for name, path in views(only):
                    shoot(page, url, path, present, out, f"{name}-{width}-full.png")
            page.context.close()
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
