"""The cell (components.core.cells): its two placements and their layouts, the trial columns that name
it, a cell read back from a stored trial row, the plan's cells, the document built for a cell, and the
trial keys the plan makes from cells (pinned: a store made before the cell had a class keeps its trials)."""

import hashlib
import math
from dataclasses import FrozenInstanceError, fields

import pandas as pd
import pytest

from components.core.cells import BY_DOCUMENTS, BY_TOKENS, LAYOUTS, Cell
from components.core.positions import FIVE_POSITIONS
from components.run.config import SweepConfig
from components.run.plan import cells, plan
from components.run.schema import Trial
from components.run.store import RunStore
from components.tasks.importers import read_tasks
from components.tasks.sweepdocs import TooFewPassages, build_by_index, build_document, cell_document
from tests.support import facts_file

NQ = "sample_docs/tasks/nq-open-30docs.jsonl.gz"
FAKE = [{"provider": "fake", "model": "fake"}]


def token_config(tmp_path, **over):
    s = {
        "name": "t",
        "tasks": str(facts_file(tmp_path, 3)),
        "lengths": [300, 600],
        "positions": [0.0, 0.5, 1.0, 250],
        "strategies": ["baseline", "icr"],
        "params": {"k": 2},
        "models": FAKE,
    }
    s.update(over)
    return SweepConfig.from_dict({"sweep": s}, base_dir=str(tmp_path))


def documents_config(tmp_path):
    return SweepConfig.from_dict(
        {
            "sweep": {
                "name": "d",
                "tasks": "nq-open-30docs.jsonl.gz",
                "n_tasks": 3,
                "documents": [5, 10],
                "gold_index": [0, -1, 4],
                "strategies": ["litm", "baseline"],
                "models": FAKE,
            }
        },
        base_dir=str(tmp_path),
    )


# ---- the two placements and their layouts -------------------------------------------------------------


def test_a_token_cell_is_laid_out_by_position_and_length():
    c = Cell(length=4000, position=0.5)
    assert not c.by_documents and c.placed and c.layout is BY_TOKENS
    assert (c.layout.x, c.layout.size) == ("position", "length") and (c.x, c.size) == (0.5, 4000)
    assert c.fields() == {"length": 4000, "position": 0.5}
    assert c.spread() == list(FIVE_POSITIONS) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert [c.place(x) for x in c.spread()] == [
        "start",
        "25%",
        "middle",
        "75%",
        "end",
    ] and c.place() == "middle"
    assert c.x_title == "gold page position (fraction of the document)"
    assert c.at(0.25) == Cell(length=4000, position=0.25) and c.where() == "a length of 4,000 tokens"


def test_a_documents_cell_is_laid_out_by_gold_index_and_documents():
    c = Cell(documents=20, gold_index=9)
    assert c.by_documents and c.placed and c.layout is BY_DOCUMENTS
    assert (c.layout.x, c.layout.size) == ("gold_index", "documents") and (c.x, c.size) == (9, 20)
    assert c.fields() == {"documents": 20, "gold_index": 9}
    assert c.spread() == [0, 4, 9, 14, 19]  # LITM's five indices for 20 documents
    assert c.place() == "9" and [c.place(x) for x in c.spread()] == ["0", "4", "9", "14", "19"]
    assert c.x_title == "gold document index (of 20)"
    assert c.at(14.0) == Cell(documents=20, gold_index=14) and isinstance(c.at(14.0).gold_index, int)
    assert c.where() == "20 documents"


def test_layout_titles_and_the_layouts_by_axis():
    assert list(LAYOUTS) == ["position", "gold_index"] and LAYOUTS["gold_index"] is BY_DOCUMENTS
    assert BY_DOCUMENTS.x_title() == BY_DOCUMENTS.x_title("fraction") == "gold document index (0 = first)"
    assert BY_TOKENS.x_title("fraction") == "answer position (fraction of the document)"
    assert BY_TOKENS.x_title("tokens") == "answer position (tokens)"
    assert (BY_TOKENS.size_title, BY_DOCUMENTS.size_title) == ("Document length (tokens)", "Documents (N)")


def test_an_empty_cell_places_nothing_and_a_cell_is_frozen_and_hashable():
    assert not Cell().placed and not Cell().by_documents
    with pytest.raises(FrozenInstanceError):
        Cell(length=1).length = 2
    assert (
        len({Cell(length=300, position=0.5), Cell(length=300, position=0.5), Cell(documents=5, gold_index=0)})
        == 2
    )


# ---- the columns that name a cell, and a cell read back from a trial row -------------------------------


def test_columns_are_the_trials_cell_columns_and_compare_matches_on_them():
    from components.report.compare import MATCH_COLUMNS

    assert Cell.columns == ("length", "position", "documents", "gold_index")
    assert Cell.columns == tuple(f.name for f in fields(Cell))
    trial_columns = [f.name for f in fields(Trial)]
    assert set(Cell.columns) <= set(trial_columns)
    assert MATCH_COLUMNS[:5] == ("task", *Cell.columns)
    assert Cell(documents=5, gold_index=2).to_dict() == {
        "length": None,
        "position": None,
        "documents": 5,
        "gold_index": 2,
    }


@pytest.mark.parametrize(
    "cell",
    [
        Cell(length=600, position=0.25),
        Cell(length=8000, position=2500.0),
        Cell(documents=20, gold_index=0),
        Cell(documents=10, gold_index=9),
    ],
)
def test_a_cell_round_trips_through_a_stored_trial_row(tmp_path, cell):
    store = RunStore(tmp_path / "runs.sqlite")
    sid = store.open_sweep("s", {})
    store.put_trial(
        sid, {"trial_key": "k", "task": "t", "strategy": "litm", "model": "fake:fake", **cell.to_dict()}
    )
    frame = store.trials_frame(sid)
    row = frame.iloc[0]
    assert Cell.of(row) == cell  # a pandas row, NaN where the placement does not use a column
    assert Cell.of(next(frame.itertuples(index=False))) == cell
    assert Cell.of(row.to_dict()) == cell and Cell.of(Trial(**cell.to_dict())) == cell
    back = Cell.of(row)
    assert all(v is None or type(v) is (float if c == "position" else int) for c, v in back.to_dict().items())


def test_a_cell_of_a_row_with_missing_or_empty_values():
    assert Cell.of({}) == Cell()
    assert Cell.of({"length": math.nan, "position": pd.NA, "documents": 20.0, "gold_index": 3.0}) == Cell(
        documents=20, gold_index=3
    )


# ---- the plan yields the config's cells ------------------------------------------------------------------


def test_the_plan_yields_the_token_grid_as_cells(tmp_path):
    c = token_config(tmp_path)
    grid = [Cell(length=n, position=p) for n in (300, 600) for p in (0.0, 0.5, 1.0, 250)]
    assert cells(c) == grid
    specs = plan(c)
    assert list(dict.fromkeys(s.cell for s in specs)) == grid
    assert all(Cell.of(s) == s.cell and s.length == s.cell.length for s in specs)
    assert len(specs) == 2 * len(grid) * 3


def test_the_plan_yields_the_documents_grid_as_cells(tmp_path):
    c = documents_config(tmp_path)
    grid = [
        Cell(documents=5, gold_index=0),
        Cell(documents=5, gold_index=4),
        Cell(documents=10, gold_index=0),
        Cell(documents=10, gold_index=9),
        Cell(documents=10, gold_index=4),
    ]
    assert cells(c) == grid  # -1 is the last document; 4 twice for 5 documents is one cell
    specs = plan(c)
    assert list(dict.fromkeys(s.cell for s in specs)) == grid
    assert {s.document_key for s in specs} == {(t.id, cell) for t in c.load_tasks() for cell in grid}


def test_trial_keys_made_from_cells_are_the_keys_stores_already_hold(tmp_path):
    """The digest of every key of two plans, as the plan made them before cells had a class."""
    for config, n, digest in (
        (token_config(tmp_path), 48, "958cfac0f19a1fe2"),
        (documents_config(tmp_path), 30, "8a173e5dde614af5"),
    ):
        keys = [s.key for s in plan(config)]
        assert len(keys) == n and hashlib.sha256(" ".join(keys).encode()).hexdigest()[:16] == digest


# ---- the document of a cell --------------------------------------------------------------------------------


def test_cell_document_builds_what_each_placement_builds():
    tasks = read_tasks(NQ).tasks[:3]
    by_index = cell_document(tasks[1], Cell(documents=10, gold_index=4), encoding="cl100k_base", tasks=tasks)
    direct = build_by_index(tasks[1], 10, 4, file_index=1)
    assert by_index.document.gold == (5,) and by_index.document.meta["file_index"] == 1
    assert [p.text for p in by_index.document.pages] == [p.text for p in direct.document.pages]
    by_tokens = cell_document(tasks[0], Cell(length=1500, position=0.5), encoding="cl100k_base")
    alone = build_document(tasks[0], 1500, 0.5)
    assert by_tokens.document.tokens <= 1500 and by_tokens.unit == "tokens"
    assert [p.text for p in by_tokens.document.pages] == [p.text for p in alone.document.pages]


def test_cell_document_takes_other_tasks_passages_only_when_given_the_task_set(tmp_path):
    tasks = read_tasks(facts_file(tmp_path, 4)).tasks
    with pytest.raises(TooFewPassages):
        cell_document(tasks[0], Cell(length=4000, position=0.5), encoding="cl100k_base")
    built = cell_document(tasks[0], Cell(length=4000, position=0.5), encoding="cl100k_base", tasks=tasks)
    own = {p.text for p in tasks[0].passages}
    assert built.document.tokens > 3000 and any(p.text not in own for p in built.document.pages)
