"""The Playground in a real browser: the newcomer flow, uploads good and bad, HTML shown as text,
a live run against the loopback OpenAI-compatible server, and two sessions kept apart."""

from __future__ import annotations

import time

import pytest

from tests.e2e.appserver import ANSWER, choose, fill, paste, select, settle, upload

pytestmark = pytest.mark.browser

LONG = "\n\n".join(
    f"Paragraph {i}. "
    + " ".join(f"filler{i}w{j}" for j in range(40))
    + (" The vault code is 4711." if i == 17 else "")
    for i in range(1, 31)
)


def body(page) -> str:
    return page.inner_text("body")


def assert_calm(page) -> None:
    text = body(page)
    assert "Traceback" not in text
    assert "Something went wrong" not in text


def open_app(page, url):
    page.goto(f"{url}/playground")
    settle(page)


def test_newcomer_sees_a_sample_with_reminders_and_gold_page_within_a_minute(page, app_url):
    start = time.monotonic()
    page.goto(app_url)  # Home: the effect in a sentence and a chart, and three doors
    settle(page)
    assert "lost in the middle" in body(page).lower()
    page.get_by_role("link", name="Try it on your text").click()
    settle(page)
    page.wait_for_selector(".js-plotly-plot .main-svg")
    select(page, "Strategy", "Reprompt")
    page.wait_for_selector(".js-plotly-plot .main-svg")
    elapsed = time.monotonic() - start
    assert elapsed < 60
    text = body(page)
    assert "The prompt map" in text
    assert "<INSTRUCTIONS_REMINDER>" in text  # the highlighted prompt, shown as text
    assert "gold page" in text
    assert page.locator(".js-plotly-plot .legendtext", has_text="reminder").count() >= 1
    assert page.locator(".js-plotly-plot .legendtext", has_text="gold page").count() >= 1
    assert "Run with Qwen2.5 Coder" in text or "No model available" in text
    assert_calm(page)


def test_upload_a_text_file(page, app_url, tmp_path):
    doc = tmp_path / "notes.txt"
    doc.write_text(LONG, encoding="utf-8")
    open_app(page, app_url)
    choose(page, "Upload")
    upload(page, doc)
    fill(page, "Question", "What is the vault code?")
    fill(page, ANSWER, "4711")
    page.wait_for_selector(".js-plotly-plot .main-svg")
    text = body(page)
    assert "page 17" in text
    assert "Paragraph 17." in text
    assert_calm(page)


@pytest.mark.parametrize(
    "name,data,message",
    [
        ("empty.txt", b"", "empty"),
        ("blob.txt", bytes(range(256)) * 64, "binary"),
        ("broken.pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog >>\nthis is not really a pdf", "PDF"),
    ],
)
def test_bad_uploads_give_a_short_message(page, app_url, tmp_path, name, data, message):
    path = tmp_path / name
    path.write_bytes(data)
    open_app(page, app_url)
    choose(page, "Upload")
    upload(page, path)
    alert = page.locator('[data-testid="stAlertContentError"]').first
    alert.wait_for()
    assert message.lower() in alert.inner_text().lower()
    assert len(alert.inner_text()) < 300
    assert_calm(page)
    choose(page, "Sample")  # the app keeps working
    page.wait_for_selector(".js-plotly-plot .main-svg")


def test_too_large_upload_is_refused_with_a_short_message(page, app_url, tmp_path):
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:
        f.write(b"All work and no play. " * (21 * 1024 * 1024 // 22 + 1))  # over the 20 MB limit
    open_app(page, app_url)
    choose(page, "Upload")
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(big))
    page.get_by_text("20", exact=False).first.wait_for()
    page.wait_for_function("() => /(too large|must be|exceeds|MB)/i.test(document.body.innerText)")
    text = body(page)
    assert "big.txt" in text or "MB" in text
    assert_calm(page)


def test_html_and_script_in_a_document_are_shown_as_text(page, app_url):
    evil = (
        "<script>window.__pwned = 1</script>\n\n"
        '<img src=x onerror="window.__pwned = 2"> <b>not bold</b>\n\n'
        "The secret word is swordfish."
    )
    open_app(page, app_url)
    choose(page, "Paste")
    paste(page, evil)
    fill(page, "Question", "What is the <i>secret</i> word?")
    page.wait_for_selector(".js-plotly-plot .main-svg")
    assert page.evaluate("() => window.__pwned") is None
    text = body(page)
    assert "<script>window.__pwned = 1</script>" in text
    assert "<b>not bold</b>" in text
    assert_calm(page)


def test_run_against_the_loopback_openai_compatible_server(page, app_url, llm_url):
    open_app(page, app_url)
    choose(page, "Paste")
    paste(page, LONG)
    fill(page, "Question", "What is the vault code?")
    fill(page, ANSWER, "4711")
    select(page, "Provider", "OpenAI-compatible server")
    fill(page, "Model", "loopback-model")
    fill(page, "Base URL", llm_url)
    page.get_by_role("button", name="Run with loopback-model").click()
    page.get_by_text("correct (fuzzy match)").first.wait_for()
    text = body(page)
    assert "Answer" in text and "4711" in text
    assert "chat template's tokens" in text  # why the run's input tokens are not the map's prompt tokens
    assert_calm(page)
    cut = page.eval_on_selector_all(  # every metric's value whole: none ends in "..."
        '[data-testid="stMetricValue"]',
        "els => els.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)",
    )
    assert not cut, cut


def test_a_provider_error_is_one_short_line(page, app_url):
    open_app(page, app_url)
    select(page, "Provider", "OpenAI-compatible server")
    fill(page, "Model", "nobody-home")
    fill(page, "Base URL", "http://127.0.0.1:9/v1")  # nothing listens on the discard port
    page.get_by_role("button", name="Run with nobody-home").click()
    alert = page.locator('[data-testid="stAlertContentError"]').first
    alert.wait_for(timeout=120_000)
    assert len(alert.inner_text()) < 300
    assert_calm(page)


def test_two_sessions_do_not_share_key_or_document(new_page, app_url):
    a, b = new_page(), new_page()
    open_app(a, app_url)
    open_app(b, app_url)
    select(a, "Provider", "OpenAI")
    fill(a, "API key", "sk-session-A-secret")
    choose(a, "Paste")
    paste(a, "Only session A has this document about zebras.")
    b.reload()
    settle(b)
    assert "zebras" not in body(b)
    select(b, "Provider", "OpenAI")
    assert b.get_by_label("API key", exact=True).input_value() == ""
    assert "No API key set" in body(b)
    assert a.get_by_label("API key", exact=True).input_value() == "sk-session-A-secret"


def test_slider_redraw_on_an_80k_token_document(page, app_url):
    """Move r on an ~80k-token document: the prompt map and prompt redraw each time (how fast is a
    benchmark's question, not a test's: bench/bench_slider.py)."""
    words = (
        "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
        "sigma tau upsilon phi chi psi omega"
    ).split()
    paragraphs = [
        f"Section {i}: " + " ".join(words[(i * 7 + j) % len(words)] + str(j % 10) for j in range(45))
        for i in range(1, 801)
    ]
    open_app(page, app_url)
    choose(page, "Paste")
    paste(page, "\n\n".join(paragraphs))
    fill(page, "Question", "What does section 500 say?")
    select(page, "Strategy", "Reprompt")  # a new document starts on Baseline, which has no r
    page.wait_for_selector(".js-plotly-plot .main-svg")
    tokens = int(
        page.locator('[data-testid="stMetric"]', has_text="Text tokens")
        .locator('[data-testid="stMetricValue"]')
        .inner_text()
        .replace(",", "")
    )
    assert 70_000 <= tokens <= 95_000
    slider = page.get_by_role("slider").first
    timings = []
    for _ in range(3):
        page.evaluate("""() => {
            window.__last = 0;
            const obs = new MutationObserver(() => { window.__last = performance.now(); });
            obs.observe(document.querySelector('[data-testid="stMain"]'),
                        {subtree: true, childList: true, characterData: true, attributes: true});
            window.__obs = obs;
        }""")
        slider.focus()
        t0 = page.evaluate("() => performance.now()")
        slider.press("ArrowLeft")
        page.wait_for_timeout(3000)
        settle(page)
        last = page.evaluate("() => { window.__obs.disconnect(); return window.__last; }")
        timings.append((last - t0) / 1000)
    print(f"\nslider redraw on {tokens:,} tokens: " + ", ".join(f"{t:.2f} s" for t in timings))
    assert all(t > 0 for t in timings), "the page did not redraw after the slider moved"
    assert_calm(page)
