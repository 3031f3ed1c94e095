from components.report.published import CITATIONS, load_published


def test_rows_and_columns():
    df = load_published()
    assert len(df) == 672
    assert set(df["source"]) == set(CITATIONS)
    assert df["value"].dtype == float and df["citation"].notna().all()
    assert list(df.columns[:12]) == ["source", "table", "model", "dataset", "method", "doc_length_tokens",
                                     "n_documents", "chunk_size_tokens", "answer_position_tokens", "gold_index",
                                     "metric", "value"]


def _one(df, **kw):
    sel = df
    for k, v in kw.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, kw
    return sel.iloc[0]


def test_known_values():
    df = load_published()
    row = _one(df, source="rr2024", table="Table 1", model="GPT-4 Turbo", dataset="NQ", method="Baseline",
               doc_length_tokens=10000)
    assert row["value"] == 64.0 and "R&R" in row["citation"]
    assert _one(df, source="rr2024", table="Table 1", model="Claude-2.1", dataset="NQ", method="Baseline",
                doc_length_tokens=10000)["value"] == 50.0
    liu = df[(df.source == "liu2023") & (df.method == "closed-book")]
    assert len(liu) > 0 and (liu["n_documents"] == 0).all()
    assert "Lost in the Middle" in liu.iloc[0]["citation"]


def test_copy_is_independent():
    a = load_published()
    a.loc[0, "value"] = -1
    assert load_published().loc[0, "value"] == 64.0
