import json

from components.cli import main
from components.core.documents import Page
from components.core.tagged import tagged_offsets
from components.tasks.importers import read_tasks


def test_generate_and_build(tmp_path, capsys):
    out = tmp_path / "facts.jsonl"
    assert main(["tasks", "generate", "facts", "--n", "4", "--seed", "2", "--out", str(out)]) == 0
    assert len(read_tasks(out).tasks) == 4
    built = tmp_path / "built.jsonl"
    assert (
        main(
            [
                "tasks",
                "build",
                "--task",
                str(out),
                "--length",
                "1500",
                "3000",
                "--position",
                "0",
                "0.5",
                "1",
                "--strategy",
                "baseline",
                "--out",
                str(built),
            ]
        )
        == 0
    )
    recs = [json.loads(line) for line in built.read_text().splitlines()]
    assert len(recs) == 4 * 2 * 3
    for r in recs:
        assert {
            "requested_length",
            "requested_position",
            "actual_length",
            "actual_position",
            "gold_pages",
            "pages",
            "prompts",
        } <= set(r)
        gold = r["pages"][r["gold_pages"][0] - 1]
        pages = [Page(p["number"], p["text"], p["tokens"], p["title"]) for p in r["pages"]]
        offsets = tagged_offsets(pages, r["encoding"])  # R&R §4.1: the pages in their PAGE tags
        assert r["actual_position"] == offsets[r["gold_pages"][0] - 1] and r["actual_length"] == offsets[-1]
        assert any(a in gold["text"] for a in r["answers"])
        assert r["prompts"][0]["text"] and gold["text"][:40] in r["prompts"][0]["text"]


def test_build_by_index_and_errors(tmp_path, capsys):
    out = tmp_path / "kv.jsonl"
    main(["tasks", "generate", "kv", "--n", "2", "--param", "pairs=10", "--out", str(out)])
    built = tmp_path / "b.jsonl"
    assert (
        main(
            [
                "tasks",
                "build",
                "--task",
                str(out),
                "--by-index",
                "--length",
                "10",
                "--position",
                "3",
                "--no-texts",
                "--out",
                str(built),
            ]
        )
        == 0
    )
    rec = json.loads(built.read_text().splitlines()[0])
    assert rec["unit"] == "documents" and rec["gold_pages"] == [4] and "pages" not in rec
    assert main(["tasks", "info", str(out)]) == 0
    assert "2 tasks" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\x00\x00")
    assert main(["tasks", "info", str(bad)]) == 1
    assert "binary" in capsys.readouterr().err
