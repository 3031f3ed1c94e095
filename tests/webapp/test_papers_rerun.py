"""AppTest of the Papers page as the place to rerun the papers: four paper sections, each experiment with its
published table beside our shipped run (n and intervals), what differs, and a command naming a config
that ships; Context Overloading's §5.3 numbers; the Experiments page's grid handed over."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.report import papers
from components.tasks.samples import config_path

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "webapp" / "papers" / "page.py")
EXPERIMENTS_PAGE = str(ROOT / "webapp" / "experiments" / "page.py")
FOUR = [
    "Lost in the Middle (Liu et al., 2023)",
    "R&R (Agrawal et al., 2024)",
    "ALR2 (Li et al., 2024)",
    "Context Overloading in RAG Based Systems (Naved et al., 2025)",
]
CELL = re.compile(r"^\d+/\d+ = \d+% \(\d+%–\d+%\)$")  # right/n = share (Wilson 95% interval)


@pytest.fixture(scope="module")
def at() -> AppTest:
    app = AppTest.from_file(PAGE, default_timeout=120)
    app.run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    return app


def frames(tab) -> list:
    return [d.value for d in tab.dataframe]


def test_four_paper_sections_each_with_its_experiments(at):
    labels = [t.label for t in at.tabs]
    assert labels[:4] == FOUR
    for tab, source in zip(at.tabs[:4], papers.PAPERS, strict=True):
        assert "Rerun its experiments" in [h.value for h in tab.subheader]
        titles = [m.value for m in tab.markdown if m.value.startswith("**")]
        assert len(titles) == len(papers.experiments(source)) >= 1
        assert any(c.value.startswith("**Source:**") for c in tab.caption)
        assert sum(c.value.startswith("**What differs.**") for c in tab.caption) == len(titles)


def test_each_experiment_shows_published_and_ours_with_n(at):
    for tab, source in zip(at.tabs[:4], papers.PAPERS, strict=True):
        shown = iter(frames(tab))
        said = " ".join(m.value for m in tab.markdown).replace("\\", "")  # as shown: markdown escapes dropped
        infos = " ".join(i.value for i in tab.info)
        for exp in papers.experiments(source):
            pub = next(shown)
            assert len(pub) >= 2, exp.key  # the paper's rows, as printed
            if exp.run is None:
                assert "No shipped run of this experiment yet" in infos
                continue
            ours = next(shown)
            n = papers.ours_n(exp)
            assert n >= 20 and f"the shipped run {exp.run}, {n:,} questions" in said, exp.key
            cells = [v for col in ours.columns for v in ours[col] if isinstance(v, str) and "/" in v]
            assert cells and all(CELL.match(v) for v in cells), (exp.key, cells[:3])


def test_litm_20_documents_beside_ours():
    exp = next(e for e in papers.EXPERIMENTS if e.key == "litm-20")
    pub = papers.published_table(exp).set_index("gold index")
    assert pub.loc["0", "GPT-3.5-Turbo"] == "75.8" and pub.loc["9", "GPT-3.5-Turbo"] == "53.8"
    ours = papers.ours_table(exp).set_index("gold index")
    assert list(ours.index) == ["0", "4", "9", "14", "19"]
    assert ours.loc["0", "LITM QA"].startswith(f"{int(ours.loc['0', 'LITM QA'].split('/')[0])}/")
    assert all(int(v.split("/")[1].split(" ")[0]) == papers.ours_n(exp) for v in ours["LITM QA"])


def test_context_overloading_table_is_section_5_3(at):
    tab = at.tabs[3]
    pub = frames(tab)[0].set_index(["K", "strategy"])  # shown as text, "–" where the paper printed nothing
    assert pub.loc[("8", "mq-full"), ["incorrect", "partially correct"]].tolist() == ["9", "–"]
    assert pub.loc[("8", "mq-keyword"), ["incorrect", "partially correct"]].tolist() == ["4", "2"]
    assert (
        pub.loc[("16", "mq-full"), "incorrect"] == "25" and pub.loc[("16", "mq-keyword"), "incorrect"] == "9"
    )
    ours = frames(tab)[1]
    assert set(ours["K"]) == {"8", "16"} and set(ours["questions"]) == {"40", "80"}
    assert all(CELL.match(v) for v in ours["correct (95% CI)"])


def test_every_command_names_a_config_that_ships(at):
    commands = [c.value for c in at.code]
    assert len(commands) == len(papers.EXPERIMENTS)
    for text, exp in zip(commands, papers.EXPERIMENTS, strict=True):
        m = re.fullmatch(r"litm sweep (\S+) --db papers\.sqlite  # (runs|configs)/(\S+\.toml)", text)
        assert m, text
        assert m.group(1) == exp.config and config_path(exp.config).is_file()
        assert (ROOT / "sample_docs" / m.group(2) / m.group(3)) == config_path(exp.config)


def test_every_bundled_config_of_the_page_parses():
    from components.run.config import SweepConfig

    for exp in papers.EXPERIMENTS:
        config = SweepConfig.from_toml(config_path(exp.config))
        assert config.strategies, exp.key
        if exp.preset:  # the Experiments grid is the config's own
            assert (
                list(config.strategies) == exp.preset["strategies"]
                and list(config.lengths) == exp.preset["lengths"]
            )


def test_the_grid_opens_in_experiments(at):
    at.button(key="paper_run_rr-nq").click().run()
    assert not at.exception, at.exception
    plan = at.session_state["sweep_plan"]
    assert plan["tasks"] == "nq-open-30docs" and plan["strategies"] == ["baseline", "reprompt", "rr"]
    experiments = AppTest.from_file(EXPERIMENTS_PAGE, default_timeout=120)
    experiments.session_state["sweep_plan"] = plan
    experiments.run()
    assert not experiments.exception, experiments.exception
    ss = experiments.session_state
    assert ss["exp_source"] == "Bundled" and ss["exp_bundled"] == "nq-open-30docs"
    assert ss["exp_strategies"] == ["baseline", "reprompt", "rr"] and ss["exp_param_r"] == [10000]
    assert ss["exp_lengths"] == [10000, 20000, 40000, 80000]


def test_context_overloading_shows_our_categories_beside_the_papers(at):
    """The multi-question experiment draws its answers by category: our shipped run's stacked bars and the
    paper's hatched §5.3 counts, for every K the run holds."""
    import json

    tab = at.tabs[3]
    specs = [json.loads(c.proto.spec) for c in tab.get("plotly_chart")]
    stacked = [s for s in specs if s["layout"].get("barmode") == "stack"]
    assert len(stacked) == 1
    names = {t.get("name") for t in stacked[0]["data"]}
    assert {"correct", "wrong"} <= {str(n).split(" ")[0] for n in names if n}, names
    hatched = [t for t in stacked[0]["data"] if (t.get("marker") or {}).get("pattern", {}).get("shape")]
    ours = [t for t in stacked[0]["data"] if t not in hatched and t.get("x")]
    assert hatched and ours  # the paper's bars beside ours
    ks = {str(k) for t in ours for k in t["x"][0]}  # a two-level axis: (K and Q, arm)
    assert ks == {"K = 8, Q = 5", "K = 16, Q = 5"}, ks


def test_each_paper_says_what_cannot_be_rerun_here_and_why(at):
    for tab, source in zip(at.tabs[:4], papers.PAPERS, strict=True):
        assert "What cannot be rerun here" in [h.value for h in tab.subheader], source
        said = " ".join(m.value for m in tab.markdown).replace("\\", "")  # markdown escapes dropped
        for what, why in papers.not_rerun(source):
            assert f"- **{what}**: {why}." in said, (source, what)


def test_found_in_the_middle_table_5_beside_ours_with_the_fixes_not_run_yet(at):
    from components.core.resources import sample_path

    tab = next(t for t in at.tabs if t.label == "Found in the Middle (Hsieh et al., 2024)")
    assert "Rerun its experiments" in [h.value for h in tab.subheader]
    titles = [m.value for m in tab.markdown if m.value.startswith("**")]
    assert len(titles) == len(papers.experiments("hsieh2024")) == 3
    exp = next(e for e in papers.EXPERIMENTS if e.key == "hsieh-20")
    pub = papers.published_table(exp).set_index(["model", "gold index"])
    assert pub.loc[("Vicuna-7B-v1.5-16k", "9"), "Vanilla attention"] == "47.34"
    assert pub.loc[("Tulu-2-7B", "19"), "Calibrated attention"] == "61.5"  # as printed
    ours = papers.ours_table(exp).set_index("gold index")
    assert all(CELL.match(v) for v in ours["LITM QA"])
    for arm in ("Attention sorting", "Calibrated-attention reorder"):  # no shipped run holds them yet
        assert set(ours[arm]) == {"not run yet"}
    ten = papers.ours_table(next(e for e in papers.EXPERIMENTS if e.key == "hsieh-10"))
    assert set(ten["Attention sorting"]) == {"not run yet"} and list(ten["gold index"])[0] == "0"
    infos = " ".join(i.value for i in tab.info)
    assert "prints no table of it" in infos  # §2 draws attention by position and tabulates none
    said = " ".join(m.value for m in tab.markdown).replace("\\", "")
    att = next(e for e in papers.EXPERIMENTS if e.key == "hsieh-attention")
    if not sample_path("runs", f"{att.run}.sqlite").is_file():
        assert "No shipped run of this experiment yet" in infos
        return
    n, planned = papers.ours_n(att), papers.planned_questions(att)
    growing = f"{n:,} questions so far (of {planned:,} planned" in said
    assert growing == (n < planned)
    cells = [v for v in papers.ours_table(att)["LITM QA"]]
    assert len(cells) == 5 and all(re.fullmatch(r"\d+\.\d% \(\d+\.\d–\d+\.\d%\), n=\d+", v) for v in cells)
