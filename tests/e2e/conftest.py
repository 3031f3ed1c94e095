"""Browser tests: the app as a subprocess on a free loopback port (temporary HOME), Debian chromium
driven by playwright (never `playwright install`). Every test gets its own browser context, so its
own Streamlit session."""

from __future__ import annotations

import os

import pytest

from tests.e2e.appserver import CHROMIUM, CHROMIUM_ARGS, llm_server, streamlit_app


@pytest.fixture(scope="session")
def app_url():
    with streamlit_app() as url:
        yield url


@pytest.fixture(scope="session")
def llm_url():
    with llm_server() as url:
        yield url


@pytest.fixture(scope="module")  # module: other test modules may start their own playwright
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no chromium at {CHROMIUM}")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def new_page(browser):
    """A factory of pages, each in its own browser context (its own Streamlit session)."""
    contexts = []

    def make(width: int = 1400, height: int = 1000):
        ctx = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(ctx)
        page = ctx.new_page()
        page.set_default_timeout(60_000)
        return page

    yield make
    for ctx in contexts:
        ctx.close()


@pytest.fixture
def page(new_page):
    return new_page()
