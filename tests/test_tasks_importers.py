import gzip
import json

import pytest

from components.tasks.generators import generate
from components.tasks.importers import parse_tasks_bytes, read_tasks, task_record, write_tasks
from components.tasks.model import TaskFileError
from components.tasks.sweepdocs import build_by_index, build_document, shared_pool


def _litm_qa_rows():
    rows = []
    for q in range(3):
        ctxs = [
            {
                "id": str(100 * q + i),
                "title": f"Title {q}-{i}",
                "text": f"Distractor passage {q}-{i} " * 12,
                "score": "1.0",
                "hasanswer": False,
                "isgold": False,
                "original_retrieval_index": i,
            }
            for i in range(10)
        ]
        ctxs[4] = {
            "id": "g",
            "title": f"Gold {q}",
            "text": f"The capital of Vesk{q} is Orlandia{q}. " * 5,
            "score": "2.0",
            "hasanswer": True,
            "isgold": True,
            "original_retrieval_index": 0,
        }
        rows.append(
            {
                "question": f"what is the capital of vesk{q}",
                "answers": [f"Orlandia{q}"],
                "ctxs": ctxs,
                "nq_annotated_gold": {"title": f"Gold {q}"},
            }
        )
    return rows


def _jsonl(rows):
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


@pytest.mark.parametrize("gz", [False, True])
def test_litm_qa_published_format(tmp_path, gz):
    data = _jsonl(_litm_qa_rows())
    path = tmp_path / ("nq-open-10_total_documents_gold_at_4.jsonl" + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(data) if gz else data)
    ts = read_tasks(path)
    assert ts.format == "litm-qa" and not ts.errors and len(ts.tasks) == 3
    t = ts.tasks[1]
    assert t.gold_indices == (4,) and t.answers == ("Orlandia1",) and t.passages[4].title == "Gold 1"
    b = build_by_index(t, 10, 0)
    assert b.gold_pages == (1,) and b.document.page(1).title == "Gold 1"
    b = build_document(t, 1000, 0.5, pool=shared_pool(ts.tasks))
    assert abs(b.actual_position - 500) <= max(p.tokens for p in b.document.pages)


def test_litm_qa_hasanswer_when_no_isgold():
    row = _litm_qa_rows()[0]
    for c in row["ctxs"]:
        c.pop("isgold")
    ts = parse_tasks_bytes("x.jsonl", _jsonl([row]))
    assert ts.tasks[0].gold_indices == (4,)


@pytest.mark.parametrize("gz", [False, True])
def test_litm_kv_format(tmp_path, gz):
    recs = [[f"k{i:02d}", f"v{i:02d}"] for i in range(20)]
    data = _jsonl([{"ordered_kv_records": recs, "key": "k07", "value": "v07"}])
    path = tmp_path / ("kv-retrieval-20_keys.jsonl" + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(data) if gz else data)
    ts = read_tasks(path)
    t = ts.tasks[0]
    assert ts.format == "litm-kv" and t.kind == "kv" and t.question == "k07" and t.answers == ("v07",)
    assert t.gold_indices == (7,) and t.passages[7].text == '"k07": "v07"'


@pytest.mark.parametrize("kind", ["facts", "facts-multihop", "kv", "niah-multivalue", "passkey-concat"])
def test_round_trip(tmp_path, kind):
    tasks = generate(kind, 4, 9)
    for name in ("t.jsonl", "t.jsonl.gz"):
        write_tasks(tasks, tmp_path / name)
        back = read_tasks(tmp_path / name)
        assert back.format == "jsonl" and not back.errors
        assert back.tasks == tasks
        assert [task_record(t) for t in back.tasks] == [task_record(t) for t in tasks]  # meta too


def test_our_jsonl_gold_is_zero_based_and_pages_alias():
    rows = [
        {"question": "q?", "answers": ["a"], "pages": ["x", {"text": "a here", "title": "T"}], "gold": [1]}
    ]
    t = parse_tasks_bytes("mine.jsonl", _jsonl(rows)).tasks[0]
    assert t.gold_indices == (1,) and t.passages[1].title == "T" and t.id == "mine-1"


def test_malformed_rows_get_line_numbers_and_good_rows_kept():
    good = {"question": "q?", "answers": ["a"], "passages": ["a b"], "gold": [0]}
    lines = [
        json.dumps(good),
        "{not json",
        "",
        json.dumps({"question": "q?", "answers": [], "passages": ["x"]}),
        json.dumps({**good, "gold": [5]}),
        json.dumps(good),
        json.dumps([1, 2]),
        json.dumps({"ordered_kv_records": [["a", "b"]], "key": "zz", "value": "b"}),
    ]
    ts = parse_tasks_bytes("mixed.jsonl", "\n".join(lines).encode())
    assert len(ts.tasks) == 2
    assert [line for line, _ in ts.errors] == [2, 4, 5, 7, 8]
    msgs = dict(ts.errors)
    assert "JSON" in msgs[2] and "answers" in msgs[4] and "0-based" in msgs[5] and "once" in msgs[8]


def test_csv_with_and_without_distractors():
    text = (
        "question,answers,gold_passage,distractors\n"
        'Who?,Ann|Anne,"Ann wrote it, in ink.",one || two\n'
        ",x,y,\n"
        "Where?,Paris,Paris is here.,\n"
    )
    ts = parse_tasks_bytes("qa.csv", text.encode())
    assert ts.format == "csv" and len(ts.tasks) == 2 and ts.errors == [(3, "missing or empty question")]
    t = ts.tasks[0]
    assert t.answers == ("Ann", "Anne") and [p.text for p in t.passages] == [
        "Ann wrote it, in ink.",
        "one",
        "two",
    ]
    assert t.gold_indices == (0,) and not ts.pool
    plain = parse_tasks_bytes(
        "qa.csv", b"question,answers,gold_passage\nA?,a1,first gold\nB?,b1,second gold\n"
    )
    assert [p.text for p in plain.pool] == ["first gold", "second gold"]
    # two pages of 2 tokens, 13 each in their PAGE tags (R&R §4.1 counts the tags): both fit in 26
    b = build_document(plain.tasks[0], 26, 1.0, pool=plain.pool)
    assert [p.text for p in b.document.pages] == ["second gold", "first gold"]


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"   \n",
        b"\x00\x01\x02binary",
        b"hello world\nno format here\n",
        b"\xff\xfe\xfa",
        gzip.compress(b"", mtime=0),  # a fixed header: the same test id in every collection
    ],
)
def test_unreadable_files_raise_one_line(data):
    with pytest.raises(TaskFileError) as exc:
        parse_tasks_bytes("bad.txt", data)
    assert "\n" not in str(exc.value) and "bad.txt" in str(exc.value)


def test_all_rows_bad_raises():
    with pytest.raises(TaskFileError, match="line 1"):
        parse_tasks_bytes("x.jsonl", b'{"question": "q"}\n')


def test_missing_file(tmp_path):
    with pytest.raises(TaskFileError, match="cannot read"):
        read_tasks(tmp_path / "nope.jsonl")
