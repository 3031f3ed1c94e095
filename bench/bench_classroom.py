"""A classroom on one server: ten browsers at once, each loading the Playground and running one call
that the run store has cached, in one headless Chromium (ten contexts, ten Streamlit sessions).

The app runs as `litm app` runs it (`python -m webapp.serve run webapp/app.py`) with a fresh run store; the model is the loopback
OpenAI-compatible server (tests/support/llm_server.py). One session runs the call first, so every
student's call is answered from the cache (what a class sees after the teacher has run it once).
Reports each context's first paint (page open -> prompt map drawn) and its run (click -> answer),
the errors seen, and how many calls reached the model server (goal: 0 for the ten).

    python -m bench.bench_classroom [--students 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
import urllib.request

from tests.e2e.appserver import CHROMIUM, CHROMIUM_ARGS, llm_server, streamlit_app

QUESTION = "Who built the mill?"
SETTLED = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const state = app && app.getAttribute('data-test-script-state');
    return state && state !== 'running' && state !== 'initial'
        && !document.querySelector('[data-testid="stStatusWidget"]');
}"""


async def settle(page) -> None:
    await page.wait_for_timeout(400)
    await page.wait_for_function(SETTLED, timeout=180_000)
    await page.wait_for_timeout(200)


async def student(browser, url: str, v1: str) -> dict:
    ctx = await browser.new_context(viewport={"width": 1440, "height": 900})
    page = await ctx.new_page()
    page.set_default_timeout(180_000)
    out = {"errors": []}
    try:
        t0 = time.perf_counter()
        await page.goto(url)
        await page.wait_for_selector(".js-plotly-plot .main-svg")
        out["first_paint"] = time.perf_counter() - t0
        await settle(page)
        box = page.locator('[data-testid="stSelectbox"]').filter(has=page.get_by_text("Provider", exact=True))
        await box.click()
        await page.get_by_role("option", name="OpenAI-compatible server", exact=True).click()
        await settle(page)
        for label, value in (("Model", "class-model"), ("Base URL", v1)):
            field = page.get_by_label(label, exact=True)
            await field.fill(value)
            await field.press("Enter")
            await settle(page)
        t1 = time.perf_counter()
        await page.get_by_role("button", name="Run with openai-compatible:class-model").click()
        await page.wait_for_selector("text=Score:", timeout=180_000)
        out["run"] = time.perf_counter() - t1
        text = await page.inner_text("body")
        out["cached"] = "from the cache" in text
        for bad in ("Traceback", "Something went wrong", "The run failed"):
            if bad in text:
                out["errors"].append(bad)
    except Exception as exc:  # noqa: BLE001 - a bench reports failures, it does not stop on them
        out["errors"].append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
    finally:
        await ctx.close()
    return out


def model_calls(v1: str) -> int:
    with urllib.request.urlopen(v1.removesuffix("/v1") + "/admin/counts", timeout=5) as r:
        return int(json.load(r).get("chat", 0))


async def classroom(url: str, v1: str, students: int) -> tuple[dict, list[dict], int, int]:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        teacher = await student(browser, url, v1)  # fills the cache
        before = model_calls(v1)
        results = await asyncio.gather(*(student(browser, url, v1) for _ in range(students)))
        after = model_calls(v1)
        await browser.close()
    return teacher, list(results), before, after


def run(students: int = 10) -> list[str]:
    with llm_server() as v1, streamlit_app() as url:
        t0 = time.perf_counter()
        teacher, results, before, after = asyncio.run(classroom(url, v1, students))
        wall = time.perf_counter() - t0
    paints = [r["first_paint"] for r in results if "first_paint" in r]
    runs = [r["run"] for r in results if "run" in r]
    errors = [e for r in results for e in r["errors"]]
    lines = [f"teacher (fills the cache): first paint {teacher.get('first_paint', float('nan')):.1f} s, "
             f"run {teacher.get('run', float('nan')):.1f} s, errors {teacher['errors'] or 'none'}",
             f"{students} students at once ({wall:.0f} s in all): first paint median {statistics.median(paints):.1f} s, "
             f"max {max(paints):.1f} s; run median {statistics.median(runs):.1f} s, max {max(runs):.1f} s"
             if paints and runs else f"{students} students: no complete run",
             f"errors: {len(errors)} ({'; '.join(sorted(set(errors))) or 'none'}); answered from the cache: "
             f"{sum(bool(r.get('cached')) for r in results)}/{students}; calls that reached the model server "
             f"during the class: {after - before} (goal 0)"]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=10)
    args = ap.parse_args(argv)
    for line in run(args.students):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
