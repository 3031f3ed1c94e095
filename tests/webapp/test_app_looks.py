"""The Playground's strip "where the model looks" (AppTest): with a local model, the button reads the
attention by page (one cached call) and draws each page's share along the prompt map's token axis, the gold
page in the gold colour; with any other provider, one line saying why not, and no call."""

from __future__ import annotations

import json

import pytest

from components.core.completion import Completion
from components.providers import factory
from components.providers.attention import Attention
from components.providers.base import ModelSpec
from components.providers.fake import FakeProvider
from components.report.promptmap import COLORS
from tests.webapp.test_app_playground import LONG, app, no_trouble, paste, texts

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest


@pytest.fixture(autouse=True)
def _own_store(tmp_path, monkeypatch):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs.sqlite"))
    yield
    factory.uninstall()


class LocalDouble:
    """Below the app: a `local` provider whose attention gives page k the share 0.01 * k."""

    def __init__(self):
        self.spec = ModelSpec("local", "smollm2-135m-instruct")
        self.calls = 0

    async def complete(self, messages, settings):
        return Completion("x", 1, 1, 0.0, self.spec.model)

    async def attention(self, messages, regions):
        self.calls += 1
        pages = tuple(r[0] for r in regions)
        masses = tuple(0.01 * p for p in pages)
        return Attention(pages, (masses,), (1 - sum(masses),), (5,) * len(pages), 100, 1.0, self.spec.model)


def chart(at, name: str) -> dict:
    for c in at.get("plotly_chart"):
        if json.loads(c.proto.config).get("toImageButtonOptions", {}).get("filename", "") == f"litm-{name}":
            return json.loads(c.proto.spec)
    raise AssertionError(f"no chart {name}")


def test_with_the_local_model_the_strip_shows_each_pages_share_and_marks_the_gold_page():
    double = LocalDouble()
    factory.install(double)
    at = AppTest.from_file(app.__globals__["APP"], default_timeout=60)
    at.session_state["provider"] = "local"
    at.session_state["model"] = double.spec.model
    at.run()
    at.switch_page("playground/page.py").run()
    at = paste(at, LONG, "What is the vault code?", "4711")
    no_trouble(at)
    button = next(b for b in at.button if b.label.startswith("Show where"))
    button.click().run()
    no_trouble(at)
    assert double.calls == 1
    bars = chart(at, "where-the-model-looks")["data"][0]
    pages = [d[0] for d in bars["customdata"]]
    assert bars["y"] == pytest.approx([p for p in pages])  # 0.01 * page, in percent
    gold = [d[1] == "gold page" for d in bars["customdata"]]
    assert sum(gold) >= 1
    assert [c == COLORS["gold"] for c in bars["marker"]["color"]] == gold
    assert "positional attention bias" in texts(at)
    next(b for b in at.button if b.label.startswith("Show where")).click().run()  # again: from the cache
    assert double.calls == 1 and "from the cache" in texts(at)


def test_with_an_api_model_one_line_says_why_not():
    fake = FakeProvider()
    at = paste(app(fake), LONG, "What is the vault code?", "4711")
    no_trouble(at)
    assert "attention is not available with openai-compatible: providers do not return it" in texts(at)
    assert not [b for b in at.button if b.label.startswith("Show where")]
