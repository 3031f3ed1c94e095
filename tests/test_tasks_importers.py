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


# --- task files read as a stream, their rows counted --------------------------------------------------------


def _rows(n: int, start: int = 0) -> bytes:
    return b"".join(
        b'{"question": "q%d", "answers": ["a"], "passages": ["p a %d", "x"], "gold": [0]}\n' % (i, i)
        for i in range(start, start + n)
    )


@pytest.mark.parametrize("gz", [False, True], ids=["jsonl", "jsonl.gz"])
def test_rows_past_the_row_limit_refuse_the_file(monkeypatch, gz):
    from components.tasks import importers

    monkeypatch.setattr(importers, "MAX_TASK_ROWS", 50)
    data = _rows(50)
    ts = parse_tasks_bytes("ok.jsonl.gz" if gz else "ok.jsonl", gzip.compress(data) if gz else data)
    assert len(ts.tasks) == 50
    data += b"{not json\n"  # a bad row counts too
    with pytest.raises(
        TaskFileError, match=r"^many.jsonl: more than 50 rows, the limit for a task file; split"
    ):
        parse_tasks_bytes("many.jsonl", gzip.compress(data) if gz else data)


def test_rows_are_read_one_at_a_time(monkeypatch):
    """The limit stops the read at its row: what comes after it is never parsed."""
    from components.tasks import importers

    monkeypatch.setattr(importers, "MAX_TASK_ROWS", 10)
    parsed: list[str] = []
    real = json.loads
    monkeypatch.setattr(importers.json, "loads", lambda s, *a, **k: parsed.append(s) or real(s, *a, **k))
    with pytest.raises(TaskFileError, match="more than 10 rows"):
        parse_tasks_bytes("many.jsonl", _rows(10_000))
    assert len(parsed) <= 12, len(parsed)


def test_passages_and_text_past_their_limits_refuse_the_file(monkeypatch):
    from components.tasks import importers

    monkeypatch.setattr(importers, "MAX_TASK_PASSAGES", 30)
    with pytest.raises(TaskFileError, match="more than 30 passages in all, the limit for a task file"):
        parse_tasks_bytes("p.jsonl", _rows(16))
    assert len(parse_tasks_bytes("p.jsonl", _rows(15)).tasks) == 15
    monkeypatch.setattr(importers, "MAX_TASK_TEXT", 100_000)
    wide = json.dumps(
        {"question": "q", "answers": ["a"], "passages": ["a" * 5_000 + "\U0001f600"], "gold": [0]}
    )
    with pytest.raises(TaskFileError, match="more than 0 MB of text once read"):  # 4 bytes a character
        parse_tasks_bytes("wide.jsonl", (wide + "\n").encode() * 6)


def test_a_row_too_long_is_a_row_error_and_reading_goes_on(monkeypatch):
    from components.tasks import importers

    monkeypatch.setattr(importers, "MAX_ROW_CHARS", 1_000)
    long_row = b'{"question": "q", "answers": ["a"], "passages": ["' + b"z" * 5_000 + b'"]}\n'
    ts = parse_tasks_bytes("long.jsonl", _rows(1) + long_row + _rows(1, 1))
    assert [t.question for t in ts.tasks] == ["q0", "q1"]
    assert ts.errors == [(2, "longer than 1,000 characters, the limit for one row")]


def test_one_json_text_over_its_limit_is_one_line(monkeypatch):
    from components.tasks import importers

    monkeypatch.setattr(importers, "MAX_JSON_BYTES", 1_000)
    rows = [{"question": f"q{i}", "answers": ["a"], "passages": ["p a"], "gold": [0]} for i in range(50)]
    with pytest.raises(
        TaskFileError, match="is read whole, and its limit is 0 MB; give the tasks as JSON lines"
    ):
        parse_tasks_bytes("arr.json", json.dumps(rows).encode())
    assert len(parse_tasks_bytes("arr.json", json.dumps(rows[:5]).encode()).tasks) == 5


def test_a_pretty_printed_object_and_leading_blank_lines_still_read():
    one = json.dumps({"question": "q", "answers": ["a"], "passages": ["p a"], "gold": [0]}, indent=2).encode()
    assert [t.question for t in parse_tasks_bytes("one.json", b"\n\n" + one).tasks] == ["q"]
    ts = parse_tasks_bytes("lines.jsonl", b"\n\n" + _rows(1) + b"{bad\n")
    assert ts.errors == [
        (4, "not valid JSON (Expecting property name enclosed in double quotes at column 2)")
    ]


def test_a_corrupt_gzip_task_file_is_one_line():
    """zlib's own error (not a truncated stream): bytes changed in the middle of the deflate data."""
    data = bytearray(gzip.compress(_rows(2_000)))
    for i in range(30, len(data) - 20, 7):
        data[i] ^= 0x55
    with pytest.raises(TaskFileError, match=r"^bad.jsonl.gz: broken gzip file \(Error -3 .*copy or download"):
        parse_tasks_bytes("bad.jsonl.gz", bytes(data))


def test_a_csv_is_read_as_a_stream_too(monkeypatch):
    from components.tasks import importers

    monkeypatch.setattr(importers, "MAX_TASK_ROWS", 3)
    text = "\n\n  question,answers,gold_passage\n" + "".join(f"q{i},a{i},p a{i}\n" for i in range(3))
    ts = parse_tasks_bytes("t.csv", text.encode())
    assert [t.id for t in ts.tasks] == ["t-2", "t-3", "t-4"] and len(ts.pool) == 3
    with pytest.raises(TaskFileError, match="more than 3 rows"):
        parse_tasks_bytes("t.csv", (text + "q,a,p a\n").encode())
