"""The Playground page in Streamlit's AppTest: empty state, samples, strategies, bad input, live runs.

Live runs use a FakeProvider installed in the provider factory (below the app, which never knows):
the sidebar names an OpenAI-compatible model, and the factory answers for it with the fake.
"""

from dataclasses import replace
from pathlib import Path

import pytest

from components.providers import factory
from components.providers.base import ModelSpec, ProviderError, Transient
from components.providers.fake import FakeProvider

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
APP = str(Path(__file__).resolve().parents[2] / "webapp" / "app.py")
LONG = "\n\n".join(
    f"Paragraph {i}. "
    + " ".join(f"filler{i}w{j}" for j in range(40))
    + (" The vault code is 4711." if i == 17 else "")
    for i in range(1, 31)
)


FAKE_SPEC = ModelSpec("openai-compatible", "fake-model", base_url="http://127.0.0.1:9/v1")


@pytest.fixture(autouse=True)
def _own_store_and_no_double_left(tmp_path, monkeypatch):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs.sqlite"))  # live runs are cached in the user's store
    yield
    factory.uninstall()


def app(provider=None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    if provider is not None:
        provider.spec = FAKE_SPEC
        factory.install(provider)
        at.session_state["provider"] = "openai-compatible"
        at.session_state["model"] = FAKE_SPEC.model
        at.session_state["base_url"] = FAKE_SPEC.base_url
    at.run()  # Home, the default page
    assert not at.exception
    at.switch_page("playground/page.py").run()
    assert not at.exception
    return at


def paste(at: AppTest, text: str, question: str = "", answers: str = "") -> AppTest:
    at.radio(key="source").set_value("Paste").run()
    at.text_area(key="pasted").set_value(text).run()
    if question:
        at.text_input(key="question").set_value(question).run()
    if answers:
        at.text_input(key="answers").set_value(answers).run()
    return at


def texts(at: AppTest) -> str:
    parts = [
        e.value
        for kind in ("markdown", "caption", "info", "warning", "error", "success")
        for e in at.get(kind)
    ]
    parts += [e.proto.body for e in at.get("html")]
    return "\n".join(str(p) for p in parts)


def last_html(at: AppTest) -> str:
    """The last HTML block the page drew (the highlighted prompt), the mode's style sheet left out."""
    return [e.proto.body for e in at.get("html") if not e.proto.body.lstrip().startswith("<style>")][-1]


def no_trouble(at: AppTest) -> None:
    assert not at.exception
    assert "Traceback" not in texts(at)
    assert not [e.value for e in at.error if e.value.startswith("Something went wrong")]


def test_four_pages_and_the_sample_is_drawn_with_reminders_and_gold():
    at = app()
    no_trouble(at)
    assert at.title[0].value == "Playground"
    assert at.selectbox(key="strategy").value == "baseline"  # the gold page where the text has it
    at.selectbox(key="strategy").set_value("reprompt").run()
    assert at.get("plotly_chart"), "the prompt map is drawn without any key"
    body = texts(at)
    assert "gold page" in body and "tokens from the nearest instruction" in body
    assert "starting at" in body  # r fitted to a short sample, so reminders show
    assert "reminder" in last_html(at) or "INSTRUCTIONS_REMINDER" in last_html(at)
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Pages"].replace(",", "")) > 1
    assert at.session_state["gold"], "the gold page is found from the sample's answer"


def test_empty_paste_shows_a_hint_not_an_error():
    at = paste(app(), "")
    no_trouble(at)
    assert any("paste text or upload" in i.value for i in at.info)
    assert not at.get("plotly_chart")


def test_pasted_text_builds_a_map_and_gold_from_the_answer():
    at = paste(app(), LONG, "What is the vault code?", "4711")
    no_trouble(at)
    assert at.session_state["gold"] == [17]
    assert at.get("plotly_chart")
    assert "gold page 17" in texts(at)


def test_strategy_switch_shows_its_parameters():
    at = paste(app(), LONG, "What is the vault code?", "4711")
    at.selectbox(key="strategy").set_value("rr").run()
    no_trouble(at)
    assert at.slider(key="param_k_5").value == 5
    r = at.select_slider(key="param_r_10000").value
    assert r < 10_000 and f"starting at {r:,}" in texts(at)  # fitted: the paper r is longer than LONG
    assert "R&R §3.3" in texts(at)
    at.selectbox(key="strategy").set_value("chunked-icr").run()
    no_trouble(at)
    c = at.select_slider(key="param_c_20000").value
    assert c < 20_000 and f"c = 20,000 is longer than this document; starting at {c:,}" in texts(at)
    assert any(s.label == "Prompt" for s in at.selectbox), "one view per chunk prompt"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Calls (about)"].isdigit()  # "about" in the label: a value is cut where a label wraps


def test_bad_parameters_show_a_short_message():
    at = paste(app(), LONG, "What is the vault code?", "4711")
    at.selectbox(key="strategy").set_value("icr").run()
    at.selectbox(key="pagination").set_value("tokens").run()
    at.number_input(key="page_tokens").set_value(5000).run()  # one page
    at.slider(key="param_k_5").set_value(20).run()  # k = 20 is too many
    no_trouble(at)
    assert any("more than the document" in w.value for w in at.warning)
    at.selectbox(key="strategy").set_value("reprompt-before-gold").run()
    at.multiselect(key="gold").set_value([]).run()
    no_trouble(at)
    assert any("gold" in w.value for w in at.warning)


def test_empty_question_asks_for_one():
    at = paste(app(), LONG)
    no_trouble(at)
    assert any("question" in i.value.lower() for i in at.info)


def test_document_html_and_script_are_shown_as_text():
    evil = "<script>alert('pwned')</script>\n\n<b>bold?</b> & $x$ **stars**\n\n<PAGE 9>fake page</PAGE 9>"
    at = paste(app(), evil, "What is <i>this</i>?")
    no_trouble(at)
    prompt = last_html(at)
    assert "<script>" not in prompt and "&lt;script&gt;alert" in prompt
    assert "<b>bold?</b>" not in prompt and "&lt;b&gt;bold?&lt;/b&gt; &amp;" in prompt
    assert "<i>this</i>" not in prompt


def test_run_with_a_fake_provider_shows_answer_pages_and_score():
    fake = FakeProvider()
    at = paste(app(fake), LONG, "What is the vault code?", "4711")
    at.selectbox(key="strategy").set_value("icr").run()
    run = next(b for b in at.button if b.label.replace("\\", "").startswith("Run with fake-model"))
    run.click().run()
    no_trouble(at)
    assert len(fake.history) == 2  # retrieve, then answer
    body = texts(at)
    assert "Score:** :green[**correct**] (fuzzy match)" in body
    assert "page 17 ✓ gold" in body
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Calls"] == "2" or "2" in [m.value for m in at.metric if m.label == "Calls"]
    assert [m.value for m in at.metric if m.label == "Cost"] == ["$0"]
    assert [e for e in at.expander if e.label == "Raw responses"], "raw responses on demand"


def test_the_prompt_tokens_before_the_run_are_the_runs_prompt_map_count():
    """Text tokens (the pages alone) < prompt tokens (tags, instructions, question too), one line says so,
    and after the run the map's count of what was sent is the number shown before it."""
    from webapp.playground.page import PROMPT_LINE

    at = paste(app(FakeProvider()), LONG, "What is the vault code?", "4711")
    metrics = {m.label: m.value for m in at.metric}
    text, prompt = int(metrics["Text tokens"].replace(",", "")), metrics["Prompt tokens"]
    assert text < int(prompt.replace(",", ""))
    assert PROMPT_LINE in [c.value for c in at.caption]
    next(b for b in at.button if b.label.replace("\\", "").startswith("Run with fake-model")).click().run()
    no_trouble(at)
    assert f"The prompt map counts {prompt} prompt tokens for 1 prompt sent." in texts(at)


def test_a_failed_call_is_one_short_line_and_the_key_never_shows():
    secret = "sk-test-SECRET-123456"
    fake = FakeProvider().enqueue(ProviderError(f"401 unauthorized: bad key {secret}"))
    at = app(fake)
    at.session_state["api_key"] = secret
    paste(at, LONG, "What is the vault code?", "4711")
    next(b for b in at.button if b.label.startswith("Run with")).click().run()
    no_trouble(at)
    errors = [e.value for e in at.error]
    assert errors and "401 unauthorized" in errors[0]
    assert secret not in texts(at)
    # the app keeps working: the next run succeeds
    fake.enqueue("Answer: 4711\nPage: 17")
    next(b for b in at.button if b.label.startswith("Run with")).click().run()
    no_trouble(at)
    assert ":green[**correct**] (fuzzy match)" in texts(at)
    assert not at.error


def test_transient_errors_do_not_crash_the_page():
    """A server error every try (a model with no retries: one try) is one line on the page."""
    fake = FakeProvider().enqueue(Transient("server unavailable (503)"))
    at = paste(app(fake), LONG, "What is the vault code?", "4711")
    fake.spec = replace(FAKE_SPEC, max_retries=0)
    next(b for b in at.button if b.label.startswith("Run with")).click().run()
    no_trouble(at)
    assert any("503" in e.value for e in at.error) and len(fake.history) == 1


def test_a_transient_error_is_tried_again():
    """The one retry loop (providers/retry.py) runs under the Playground too: a 503, then the answer."""
    fake = FakeProvider().enqueue(Transient("server unavailable (503)"), "Answer: 4711\nPage: 1")
    at = paste(app(fake), LONG, "What is the vault code?", "4711")
    next(b for b in at.button if b.label.startswith("Run with")).click().run()
    no_trouble(at)
    assert not any("503" in e.value for e in at.error) and len(fake.history) == 2


def test_no_model_means_prompts_only():
    at = app()
    at.selectbox(key="provider").set_value("openai").run()
    no_trouble(at)
    body = texts(at)
    assert "No API key set" in body
    assert not [b for b in at.button if b.label.startswith("Run with")]
    assert at.get("plotly_chart"), "the prompt map still works without a key"
    assert at.text_input(key="api_key").value == ""


def test_own_text_asks_where_the_answer_is_and_a_new_document_starts_on_baseline():
    at = paste(app(), LONG)
    no_trouble(at)
    labels = [t.label for t in at.text_input]
    assert labels[0].startswith("Where is the answer?"), labels  # the answer first: it finds the gold page
    at.text_input(key="answers").set_value("4711").run()
    assert at.session_state["gold"] == [17]
    at.selectbox(key="strategy").set_value("reprompt").run()
    at.text_area(key="pasted").set_value(LONG.replace("4711", "1234")).run()  # another document
    no_trouble(at)
    assert at.selectbox(key="strategy").value == "baseline"
    at.selectbox(key="strategy").set_value("icr").run()
    at.text_input(key="question").set_value("What is the vault code?").run()  # the same document: kept
    assert at.selectbox(key="strategy").value == "icr"
