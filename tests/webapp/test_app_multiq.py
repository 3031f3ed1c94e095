"""AppTest of the multi-question view ("Context Overloading", seed 004) on Results and Compare: for a sweep
in the user's store (run through the real runner against a scripted provider, below the provider seam)
and for the shipped run; and the report module's tables against counts worked by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = str(ROOT / "webapp" / "results" / "page.py")
COMPARE = str(ROOT / "webapp" / "compare" / "page.py")
SHIPPED = ROOT / "sample_docs" / "runs" / "local-qwen-squad-mq.sqlite"


def scripted_answers(gold: dict[str, str]):
    """Reply to a multi-question prompt: for each `Qn: question` line the gold answer when the prompt's
    context holds it, else "Not specified"; every third question answered wrongly ("Paris")."""

    def reply(messages, settings) -> str:
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        context = prompt.split("\nContext:\n", 1)[1].split("\n\nQuestions:\n", 1)[0]
        lines = []
        for number, question in re.findall(r"^Q(\d+): (.*)$", prompt, re.M):
            g = gold.get(question.strip(), "")
            if g and g in context:
                lines.append(f"A{number}: " + ("Paris" if len(question) % 3 == 0 else g))
            else:
                lines.append(f"A{number}: Not specified")
        return "\n".join(lines)

    return reply


def fill_mq(db: Path, name: str = "mq user sweep") -> None:
    """A multi-question sweep (K = 4 and 8, Q = 5, three strategies, chunks of 300 tokens) in `db`."""
    from components.providers.base import ModelSpec
    from components.providers.fake import FakeProvider
    from components.run.config import SweepConfig
    from components.run.runner import run_sweep
    from components.run.store import RunStore

    config = SweepConfig.from_dict(
        {
            "sweep": {
                "name": name,
                "tasks": "squad-dev",
                "design": "multi-question",
                "contexts": [4, 8],
                "questions_per_context": [5],
                "strategies": ["mq-full", "mq-chunked", "mq-keyword"],
                "params": {"chunk_tokens": 300},
                "concurrency": 1,
                "models": [{"provider": "fake", "model": "fake-mq"}],
            }
        }
    )
    gold = {t.question.strip(): t.answers[0] for t in config.load_tasks()[:200]}
    provider = FakeProvider(ModelSpec("fake", "fake-mq"), responder=scripted_answers(gold))
    with RunStore(db) as store:
        summary = run_sweep(config, store, providers={"fake:fake-mq": provider})
    assert summary.errors == 0


@pytest.fixture
def stores(tmp_path, monkeypatch):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs" / "litm.sqlite"))
    monkeypatch.setenv("LITM_SHIPPED_RUNS", str(tmp_path / "shipped"))
    (tmp_path / "runs").mkdir()
    (tmp_path / "shipped").mkdir()
    return tmp_path


def run(page: str, timeout: int = 120) -> AppTest:
    at = AppTest.from_file(page, default_timeout=timeout)
    at.run()
    assert not at.exception, at.exception
    return at


def texts(at) -> str:
    parts = [e.value for e in (*at.info, *at.warning, *at.error, *at.success, *at.caption, *at.markdown)]
    return "\n".join(str(p) for p in parts)


def charts(at) -> dict[str, dict]:
    """Chart key (chart_<name>) -> its figure."""
    return {
        re.sub(r"^\$\$ID-[0-9a-f]+-", "", c.proto.id): json.loads(c.proto.spec)
        for c in at.get("plotly_chart")
    }


def names(fig: dict) -> list[str]:
    return [t.get("name", "") for t in fig["data"]]


def mq_table(at) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "incorrect as the paper counts it" in d.value.columns)


# --- the report module, by hand ------------------------------------------------------------------------


def test_table_counts_categories_and_per_question_costs():
    from components.report import multiq

    rows = []
    for i, (cat, match) in enumerate(
        [("correct", 1.0), ("correct", 1.0), ("partial", 0.0), ("wrong", 0.0), ("not_specified", 0.0)]
    ):
        rows.append(
            {
                "strategy": "mq-full",
                "params": "{}",
                "model": "fake:m",
                "contexts": 8,
                "questions_per_context": 5,
                "category": cat,
                "mq_match": match,
                "error": None,
                "calls": 1 if i == 0 else 0,
                "input_tokens": 1000 if i == 0 else 0,
                "output_tokens": 50 if i == 0 else 0,
                "cost_usd": None,
            }
        )
    rows.append(
        {
            **rows[0],
            "error": "Transient: boom",
            "category": None,
            "mq_match": None,
            "calls": 0,
            "input_tokens": 0,
            "output_tokens": 0,
        }
    )
    rows.append({**rows[0], "contexts": None})  # not a multi-question trial: left out
    tab = multiq.table(pd.DataFrame(rows))
    assert len(tab) == 1
    r = tab.iloc[0]
    assert (r["questions"], r["n"], r["hits"], r["errors"]) == (6, 5, 2, 1)
    assert (r["correct"], r["partial"], r["not_specified"], r["wrong"]) == (2, 1, 1, 1)
    assert r["accuracy"] == pytest.approx(0.4) and r["lo"] == pytest.approx(0.1176, abs=1e-3)  # Wilson 2/5
    assert r["hi"] == pytest.approx(0.7693, abs=1e-3)
    assert r["calls_per_question"] == pytest.approx(1 / 6) and r[
        "input_tokens_per_question"
    ] == pytest.approx(1000 / 6)
    assert r["arm"] == "Multi-question: whole context · m"  # its display name (report.sweeps)


def test_published_rows_read_as_the_paper_says():
    """§5.3: K = 8 whole context 9 incorrect of 40 (31 left), keyword 4 incorrect + 2 partial (34 correct);
    K = 16: 25 then 9 of 80; K = 32 keyword: 129 of 157 answered, 110 correct or partial, 35 partial."""
    from components.report import multiq
    from components.report.published_004 import load_published_004

    pub = multiq.published(load_published_004()).set_index(["strategy", "contexts"])
    assert pub.loc[("mq-full", 8), ["questions", "incorrect", "correct"]].tolist() == [40, 9, 31]
    assert pub.loc[("mq-keyword", 8), ["incorrect", "partially_correct", "correct"]].tolist() == [4, 2, 34]
    assert pub.loc[("mq-full", 16), ["incorrect", "correct"]].tolist() == [25, 55]
    assert pub.loc[("mq-keyword", 16), ["incorrect", "correct"]].tolist() == [9, 71]
    k32 = pub.loc[("mq-keyword", 32)]
    assert (k32["answered"], k32["incorrect"], k32["partially_correct"], k32["correct"]) == (129, 19, 35, 75)
    assert pub.loc[("mq-full", 8), "what"] == "9 incorrect"


# --- the pages --------------------------------------------------------------------------------------------


def test_results_shows_a_multi_question_sweep_of_the_users_store(stores):
    fill_mq(stores / "runs" / "litm.sqlite")
    at = run(RESULTS)
    assert not at.error, [e.value for e in at.error]
    assert "Many questions at once (Context Overloading)" in [h.value for h in at.subheader]
    shown = charts(at)
    assert {"chart_mq-accuracy", "chart_mq-categories", "chart_mq-cost"} <= set(shown)
    assert any(
        x.startswith("Multi-question: keyword chunks · chunk_tokens=300 · fake-mq · this app (n=")
        for x in names(shown["chart_mq-accuracy"])
    )
    assert any(
        "Context Overloading §5.3" in x for x in names(shown["chart_mq-categories"])
    )  # the paper's bars
    table = mq_table(at)
    ours = table[table["source"].str.endswith("this app")]
    assert len(ours) == 6 and set(ours["K"]) == {4, 8} and set(ours["questions"]) == {20, 40}
    assert set(ours["source"]) == {"fake-mq · this app"}
    assert set(ours["strategy"]) == {
        "Multi-question: whole context",
        "Multi-question: every chunk · chunk_tokens=300",
        "Multi-question: keyword chunks · chunk_tokens=300",
    }
    assert all(re.match(r"\d+/\d+ = \d+% \(\d+%–\d+%\)", x) for x in ours["correct (95% CI)"])
    paper = table[~table["source"].str.endswith("this app")]
    assert list(paper["K"]) == [8, 8] and set(paper["strategy"]) == {
        "Multi-question: whole context",
        "Multi-question: keyword chunks",
    }  # the K we ran
    # the scripted model: every answer of the whole-context prompt is the gold one or "Paris"
    full8 = ours[(ours["K"] == 8) & (ours["strategy"] == "Multi-question: whole context")].iloc[0]
    assert full8["not specified"] == 0 and full8["wrong"] + int(full8["correct (95% CI)"].split("/")[0]) == 40
    assert full8["calls / question"] == pytest.approx(1 / 40, abs=1e-3)


def test_results_view_stays_out_of_other_sweeps(stores):
    from tests.webapp.runs_fixture import fill

    fill(stores / "runs" / "litm.sqlite")
    at = run(RESULTS)
    assert "Many questions at once (Context Overloading)" not in [h.value for h in at.subheader]
    assert not any(k.startswith("chart_mq-") for k in charts(at))


def test_compare_shows_the_multi_question_arms_by_k(stores):
    fill_mq(stores / "runs" / "litm.sqlite")
    at = run(COMPARE)
    assert not at.error, [e.value for e in at.error]
    arms = at.multiselect(key="cmp_arms").value
    assert len(arms) >= 2 and all(a.startswith("Multi-question: ") for a in arms)
    shown = charts(at)
    assert {"chart_compare-mq-accuracy", "chart_compare-mq-categories"} <= set(shown)
    table = mq_table(at)
    assert set(table[table["source"].str.endswith("this app")]["strategy"]) == {
        a.rsplit(" · ", 1)[0] for a in arms
    }
    # arms are paired on the question within each K (20 + 40 questions): nothing left out
    result_pairs = next(d.value for d in at.dataframe if "matched" in d.value.columns)
    assert (result_pairs["matched"] == 60).all() and (result_pairs["left out"] == 0).all()


def test_compare_report_carries_the_multi_question_view(stores):
    """The one-file report of multi-question arms holds what the page draws of them: accuracy and categories
    by K (the paper's hatched bars among them) and the table of ours beside the paper's."""
    from components.report import compare
    from components.run.store import RunStore
    from webapp.compare import parts

    fill_mq(stores / "runs" / "litm.sqlite")
    t = compare.prepare(RunStore(stores / "runs" / "litm.sqlite").trials_frame())
    labels = sorted(t["arm"].unique())
    result = compare.compare(t, labels)
    page = parts.report(result, (labels[0], labels[1]), ["mq user sweep"]).decode()
    assert "<h2>Many questions at once: the chosen arms by K</h2>" in page
    assert page.count("Plotly.newPlot") == 5  # Pareto, U-curves, differences, accuracy by K, categories
    assert "incorrect as the paper counts it" in page and "Context Overloading" in page
    assert "K = 4, Q = 5" in page and "K = 8, Q = 5" in page


@pytest.mark.skipif(not SHIPPED.is_file(), reason="the shipped multi-question run is not there yet")
def test_results_and_compare_show_the_shipped_run(tmp_path, monkeypatch):
    monkeypatch.setenv("LITM_DB", str(tmp_path / "litm.sqlite"))
    monkeypatch.setenv("LITM_SHIPPED_RUNS", str(SHIPPED.parent))
    at = AppTest.from_file(RESULTS, default_timeout=240)
    at.query_params["sweep"] = "shipped local-qwen-squad-mq#1"
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.multiselect(key="res_sweeps").value == ["shipped local-qwen-squad-mq#1"]
    table = mq_table(at)
    ours = table[table["source"].str.endswith("this app")]
    assert set(zip(ours["K"], ours["strategy"], strict=True)) == {
        (k, s)
        for k in (8, 16)
        for s in (
            "Multi-question: whole context",
            "Multi-question: every chunk · chunk_tokens=600",
            "Multi-question: keyword chunks · chunk_tokens=600",
        )
    }
    assert set(ours["source"]) == {"Qwen2.5 Coder 0.5B · this app"}
    assert set(ours["questions"]) == {40, 80}
    assert len(table) == len(ours) + 4  # the paper's four rows at K = 8 and 16
    assert {"chart_mq-accuracy", "chart_mq-categories", "chart_mq-cost"} <= set(charts(at))


# --- the Playground: one pasted document, several questions ------------------------------------------------

APP = str(ROOT / "webapp" / "app.py")
HALLS = (
    "Alpha Hall was built in 1901 by the mason Ada Kerr.\n\n"
    "The river Brell floods every spring near the mill.\n\n"
    "The mill on the Brell grinds rye for the town of Oster."
)
QUESTIONS = "Who built Alpha Hall? | Ada Kerr\nWhen does the river Brell flood?\tevery spring\nWhat does the mill grind for Oster?"


def playground(tmp_path, monkeypatch, provider=None) -> AppTest:
    from components.providers import factory
    from components.providers.base import ModelSpec

    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs.sqlite"))
    at = AppTest.from_file(APP, default_timeout=90)
    if provider is not None:
        provider.spec = ModelSpec("openai-compatible", "fake-model", base_url="http://127.0.0.1:9/v1")
        factory.install(provider)
        at.session_state["provider"] = "openai-compatible"
        at.session_state["model"] = "fake-model"
        at.session_state["base_url"] = "http://127.0.0.1:9/v1"
    at.run()
    at.switch_page("playground/page.py").run()
    at.radio(key="source").set_value("Paste").run()
    at.text_area(key="pasted").set_value(HALLS).run()
    at.text_area(key="pg_mq_questions").set_value(QUESTIONS).run()
    assert not at.exception, at.exception
    return at


def test_parse_questions_tab_or_bar():
    from webapp.services.multiq import parse_questions

    got, problems = parse_questions("Who? | Ada | Ada Kerr\n\n When?\tspring\nWhat?\n | orphan answer\n")
    assert got == [("Who?", ("Ada", "Ada Kerr")), ("When?", ("spring",)), ("What?", ())]
    assert problems == ["line 5: no question before the answers"]


def test_playground_builds_the_keyword_prompts_of_pasted_questions(tmp_path, monkeypatch):
    at = playground(tmp_path, monkeypatch)
    at.number_input(key="pg_mq_chunk").set_value(20).run()  # 3 pages of 11-14 tokens: 1 page a chunk
    assert not at.exception and not at.error, [e.value for e in at.error]
    where = next(d.value for d in at.dataframe if "its chunk (most shared keywords)" in d.value.columns)
    # keywords shared: {built, alpha, hall} 3-0-0; {river, brell, flood} 0-2-1; {mill, grind, oster} 0-1-2
    assert list(where["its chunk (most shared keywords)"]) == [1, 2, 3]
    assert "3 questions, 3 pages in 3 chunks: 3 prompts" in texts(at)
    prompt = [h.proto.body for h in at.get("html") if "Q1:" in h.proto.body][-1]
    assert "Alpha Hall was built in 1901" in prompt and "Who built Alpha Hall?" in prompt
    assert "river Brell floods" not in prompt  # chunk 1 only
    at.radio(key="pg_mq_strategy").set_value("mq-full").run()
    prompt = [h.proto.body for h in at.get("html") if "Q1:" in h.proto.body][-1]
    assert all(f"Q{i}:" in prompt for i in (1, 2, 3)) and "grinds rye" in prompt


def test_playground_asks_them_and_scores_each_answer(tmp_path, monkeypatch):
    from components.providers import factory
    from components.providers.fake import FakeProvider

    fake = FakeProvider(responder=lambda messages, settings: "A1: Ada Kerr\nA2: Not specified\nA3: rye")
    try:
        at = playground(tmp_path, monkeypatch, fake)
        at.radio(key="pg_mq_strategy").set_value("mq-full").run()
        at.button(key="pg_mq_go").click().run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        assert len(fake.history) == 1
        rows = next(d.value for d in at.dataframe if "category" in d.value.columns)
        assert list(rows["answer"]) == ["Ada Kerr", "Not specified", "rye"]
        assert list(rows["category"])[:2] == ["correct", "not_specified"] and pd.isna(
            rows["category"].iloc[2]
        )
        assert "1 call (0 from the cache)" in texts(at) and "1 correct" in texts(at)
        at.button(key="pg_mq_go").click().run()  # again: from the user's store
        assert len(fake.history) == 1 and "1 call (1 from the cache)" in texts(at)
    finally:
        factory.uninstall()


@pytest.mark.skipif(not SHIPPED.is_file(), reason="the shipped multi-question run is not there yet")
def test_the_readme_table_matches_the_shipped_store():
    from components.report import multiq
    from components.report.published_004 import load_published_004
    from components.run.store import RunStore

    store = RunStore(SHIPPED, readonly=True)
    try:
        trials = store.trials_frame()
    finally:
        store.close()
    readme = (SHIPPED.parent / "README.md").read_text()
    lines = multiq.table_lines(trials, multiq.published(load_published_004()))
    assert len(lines) == 2 + 6
    for line in lines:
        assert line in readme, line
