"""Browser test of the Experiments page's "pick or type" boxes (Debian chromium via playwright against a
real `streamlit run`): typing a number and Enter adds exactly that number, never "Select N matches" (typing
200 where 200 and 2,000 are offered added both: a silent extra arm, half again as many trials)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def settle(page, timeout=60_000):
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout)
    page.wait_for_timeout(500)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout)


def chosen(box) -> list[str]:
    tags = box.locator("[data-tag]")
    return sorted(tags.nth(i).get_attribute("aria-label") for i in range(tags.count()))


def test_typing_200_and_enter_adds_exactly_200(new_page, app_url):
    page = new_page(1440, 1000)
    page.goto(f"{app_url}/experiments")
    settle(page)
    box = page.locator('[data-testid="stMultiSelect"]').filter(has_text="r (tokens)")
    box.locator("[data-tag]").first.wait_for(timeout=60_000)
    before = chosen(box)
    assert "200" not in before and "2,000" not in before, before  # the default r fits 2,000-token documents
    box.locator("input").first.click()
    box.locator("input").first.type("200")
    page.wait_for_timeout(500)
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    settle(page)
    assert chosen(box) == sorted([*before, "200"])  # exactly one value more, and it is 200
