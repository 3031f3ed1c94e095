import csv
import hashlib

from components.report.published import (
    CITATIONS,
    CURRENT_PATH,
    NEWER_PATH,
    NEWER_SOURCES,
    PUBLISHED_PATH,
    SHORT_NAMES,
    load_published,
    sources,
)

# sha256 of the checked transcriptions (shared/reference/published_results.csv, published_newer.csv and
# published_current.csv, checked number by number against the papers): the shipped copies are those
# files, byte for byte
SHA256 = {
    PUBLISHED_PATH.name: "0ec7926d6ff975484c90ef92ebec67ad7d0d79bcb780bd9a253bbe448e19d7e1",
    NEWER_PATH.name: "67828d02d73b53cb3ff80931403b77adc625b3aee7be5a97316dc8cc830c6ad6",
    CURRENT_PATH.name: "921d32d8b281b64b8bd8de359660657864cfb204808da34b3240bfad509ffae5",
}


def test_rows_and_columns():
    df = load_published()
    assert len(df) == 672 + 111 + 684
    assert set(df["source"]) == set(CITATIONS)
    assert df["value"].dtype == float and df["citation"].notna().all()
    assert list(df.columns[:12]) == [
        "source",
        "table",
        "model",
        "dataset",
        "method",
        "doc_length_tokens",
        "n_documents",
        "chunk_size_tokens",
        "answer_position_tokens",
        "gold_index",
        "metric",
        "value",
    ]


def _one(df, **kw):
    sel = df
    for k, v in kw.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, kw
    return sel.iloc[0]


def test_known_values():
    df = load_published()
    row = _one(
        df,
        source="rr2024",
        table="Table 1",
        model="GPT-4 Turbo",
        dataset="NQ",
        method="Baseline",
        doc_length_tokens=10000,
    )
    assert row["value"] == 64.0 and "R&R" in row["citation"]
    assert (
        _one(
            df,
            source="rr2024",
            table="Table 1",
            model="Claude-2.1",
            dataset="NQ",
            method="Baseline",
            doc_length_tokens=10000,
        )["value"]
        == 50.0
    )
    liu = df[(df.source == "liu2023") & (df.method == "closed-book")]
    assert len(liu) > 0 and (liu["n_documents"] == 0).all()
    assert "Lost in the Middle" in liu.iloc[0]["citation"]


def test_copy_is_independent():
    a = load_published()
    a.loc[0, "value"] = -1
    assert load_published().loc[0, "value"] == 64.0


def test_the_shipped_files_are_the_checked_transcriptions():
    for path in (PUBLISHED_PATH, NEWER_PATH, CURRENT_PATH):
        assert hashlib.sha256(path.read_bytes()).hexdigest() == SHA256[path.name], path.name


def test_every_newer_row_ships_as_printed():
    """The 111 rows of the later papers, each loaded with its value as printed and its citation."""
    with open(NEWER_PATH, newline="", encoding="utf-8") as f:
        raw = list(csv.DictReader(f))
    assert len(raw) == 111
    df = load_published()
    newer = df[df["source"].isin(NEWER_SOURCES)].reset_index(drop=True)
    assert set(NEWER_SOURCES) == {"hsieh2024", "pos2distill2025"}
    assert len(newer) == 111
    for i, row in enumerate(raw):
        got = newer.iloc[i]
        for col in ("source", "table", "model", "dataset", "method", "metric"):
            assert got[col] == row[col], (i, col)
        assert got["value_printed"] == row["value"] and got["value"] == float(row["value"])
        assert int(got["n_documents"]) == int(row["n_documents"]) and int(got["gold_index"]) == int(
            row["gold_index"]
        )
        assert got["citation"] == CITATIONS[row["source"]] and got["paper"] == SHORT_NAMES[row["source"]]
    # cells re-read from the papers (their README: Table 5 p. 14; Table 1, NQ block)
    one = newer[
        (newer["model"] == "Vicuna-7B-v1.5-16k")
        & (newer["method"] == "Vanilla attention")
        & (newer["n_documents"] == 10)
        & (newer["gold_index"] == 0)
    ]
    assert one["value_printed"].tolist() == ["74.35"]
    last = newer[
        (newer["model"] == "Mistral-7B") & (newer["method"] == "Pos2Distill") & (newer["gold_index"] == 19)
    ]
    assert last["value"].tolist() == [73.3] and set(last["metric"]) == {"subspan_em_pct"}


def test_every_source_is_cited_once():
    table = sources()
    assert table["source"].is_unique and set(table["source"]) == set(load_published()["source"])
    assert all(len(c) > 40 and str(y) in c for c, y in zip(table["citation"], table["year"], strict=True))
    assert "arXiv:2406.16008" in CITATIONS["hsieh2024"] and "arXiv:2508.15709" in CITATIONS["pos2distill2025"]
