"""The Papers page's "what differs" lines say what is true of the configs and data that ship, and every
experiment a user cannot rerun is named with its reason (components.report.papers)."""

from __future__ import annotations

import gzip
from pathlib import Path

from components.report import papers
from components.run.config import SweepConfig
from components.tasks.samples import config_path

ROOT = Path(__file__).resolve().parent.parent


def exp(key: str) -> papers.Experiment:
    return next(e for e in papers.EXPERIMENTS if e.key == key)


def test_litm_bounds_say_the_papers_2655_questions_which_the_oracle_file_holds():
    with gzip.open(ROOT / "sample_docs" / "tasks" / "nq-open-oracle.jsonl.gz", "rt") as fh:
        assert sum(1 for line in fh if line.strip()) == 2655
    assert "all 2,655 questions" in exp("litm-bounds").differs
    assert "whole NQ-open" not in exp("litm-bounds").differs


def test_the_rr_rows_say_their_length_and_grid_and_the_configs_run_it():
    for key in ("rr-nq", "rr-squad", "rr-chunked"):
        e = exp(key)
        assert "counted with the PAGE tags" in e.differs and "steps of 10k" in e.differs, key
        config = SweepConfig.from_toml(config_path(e.config))
        assert config.positions_tokens == "every 10000" and config.positions == (), key
        assert [len(config.positions_for(d)) for d in config.lengths] == (
            [2, 3, 5, 9] if key != "rr-chunked" else [9]
        )
    assert "0-100% of each length instead" in exp("rr-nq").differs  # the Experiments grid, fractions
    assert (
        "2,000 tokens of page text" in exp("rr-nq").differs
    )  # the shipped run, made before the tags counted
    assert "SQuAD v2 (this app ships v1.1)" in exp("rr-squad").differs


def test_alr2_niah_is_the_mean_of_rulers_four_variants_and_its_config_runs_them():
    e = exp("alr2-niah")
    assert "four NIAH variants" in e.differs and "averaged over the four" in e.differs
    assert "string_match_all" in e.differs and "averaged over RULER's four NIAH variants" in e.measured
    config = SweepConfig.from_toml(config_path(e.config))
    tasks = config.load_tasks()
    assert config.n_tasks == 20 and e.preset["tasks"] == "niah-ruler"
    kinds = [t.kind for t in tasks]
    assert {k: kinds.count(k) for k in kinds} == {
        "niah": 5,
        "niah-multikey": 5,
        "niah-multivalue": 5,
        "niah-multiquery": 5,
    }
    assert {t.metric for t in tasks} == {"ruler-all"}


def test_every_paper_names_what_cannot_be_rerun_and_why():
    said = {p: " ".join(f"{what}: {why}" for what, why in papers.not_rerun(p)) for p in papers.PAPERS}
    assert all(papers.not_rerun(p) for p in papers.PAPERS)
    assert all(why.strip() for p in papers.PAPERS for _, why in papers.not_rerun(p))
    assert (
        "Contriever" in said["liu2023"]
        and "Appendix A" in said["liu2023"]
        and "Appendix B" in said["liu2023"]
    )
    assert "HotPotQA" in said["rr2024"] and "PubMed" in said["rr2024"] and "Table 4" in said["rr2024"]
    assert "fine-tuned" in said["alr2_2024"] and "multi-query" not in said["alr2_2024"]  # now bundled
    assert "training-set" in said["context_overloading_2025"]
    assert papers.not_rerun("nope") == ()
