"""Browser test of the Experiments page's "pick or type" boxes (Debian chromium via playwright against a
real `streamlit run`): typing a number and Enter adds exactly that number, never "Select N matches" (typing
200 where 200 and 2,000 are offered added both: a silent extra arm, half again as many trials)."""

from __future__ import annotations

import pytest

from tests.e2e.appserver import settle

pytestmark = pytest.mark.browser


def chosen(box) -> list[str]:
    tags = box.locator("[data-tag]")
    return sorted(tags.nth(i).get_attribute("aria-label") for i in range(tags.count()))


def test_typing_1000_and_enter_adds_exactly_1000(new_page, app_url):
    """1000 matches 1,000 and 10,000 among r's presets (as 200 matches 200 and 2,000)."""
    page = new_page(1440, 1000)
    page.goto(f"{app_url}/experiments")
    settle(page)
    box = page.locator('[data-testid="stMultiSelect"]').filter(has_text="r (tokens)")
    box.locator("[data-tag]").first.wait_for(timeout=60_000)
    before = chosen(box)
    assert "1,000" not in before and "10,000" not in before, before  # the first grid's r fits its lengths
    box.locator("input").first.click()
    box.locator("input").first.type("1000")
    page.wait_for_timeout(500)
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    settle(page)
    assert chosen(box) == sorted([*before, "1,000"])  # exactly one value more, and it is 1,000
