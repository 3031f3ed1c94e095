"""Read and write task files. The format is detected from the content (and the name's suffix).

Formats read:
- "Lost in the Middle" multi-document QA, JSON lines, optionally gzipped (LITM §3.1; the files of
  nelson-liu/lost-in-the-middle): `{"question", "answers": [...], "ctxs": [{"title", "text",
  "isgold", "hasanswer", ...}, ...]}`. Gold = the ctxs with `isgold: true`; when no ctx carries an
  `isgold` key, the ctxs with `hasanswer: true`.
- "Lost in the Middle" key-value retrieval, JSON lines, optionally gzipped (LITM §4):
  `{"ordered_kv_records": [[key, value], ...], "key", "value"}`. Each record becomes a passage with
  text `"key": "value"`; the queried one is gold; question = the key, answers = [value].
- Our JSON lines (what `write_tasks` writes):
  `{"id", "question", "answers": [...], "passages": [...], "gold": [...], "kind", "gold_sentences",
  "meta"}`. `passages` (or `pages`) is a list of strings or of `{"text", "title"}` objects.
  **`gold` holds 0-based indices into `passages`** (a passage object may also say `"gold": true`).
  Only `question`, `answers` (or a single `answer` string) and `passages` are required.
- CSV with a header: `question`, `answers` (several answers separated by `|`), `gold_passage`,
  optional `id`, `title`, and `distractors` (passages separated by `||`, a line of its own or inline).
  Without a `distractors` column, every row's gold passage goes into `TaskSet.pool`, a shared
  distractor pool (R&R §4.1: other questions' passages as distractors).

A malformed row is reported in `TaskSet.errors` as (line number, message) and the good rows are
kept: a row that is not JSON, nests too deep to read, or is not UTF-8 text (a Latin-1 row in a UTF-8
file) is one such row, never the whole file. A file that cannot be read at all (empty, binary, neither JSON nor CSV, no good row) raises
`TaskFileError` with a one-line message.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import threading
from contextlib import contextmanager
from pathlib import Path

from components.core.jsonlines import numbered_lines
from components.tasks.model import Passage, Task, TaskFileError, TaskSet
from components.tasks.squad import (
    DERIVED,
    NAMES,
    SQUAD_DEV,
    looks_like_derived,
    looks_like_squad,
    parse_squad,
)

MAX_TASK_BYTES = 256 * 1024 * 1024  # a task file, unpacked (a .gz is unpacked as a stream, up to this)
MAX_UPLOAD_TASK_BYTES = 64 * 1024 * 1024  # a task file uploaded to the app, unpacked
MAX_CSV_CELL = (
    131_072  # characters in one CSV cell (Python's csv default); a row with a longer one is skipped
)
CSV_ANSWER_SEP = "|"
CSV_DISTRACTOR_SEP = "||"


class _RowError(ValueError):
    pass


# --- reading ----------------------------------------------------------------------------------


def bundled_name(path: str | Path) -> Path:
    """A task set's name as a sweep config gives it (`squad-dev`, `rr-squad`: squad.NAMES) or the bare name
    of a task file that ships (`nq-open-30docs.jsonl.gz`) as that file; any other path as it is (a file of
    that name in the current folder comes first)."""
    path = Path(path)
    if path.exists() or path.parent != Path(".") or not path.name:
        return path
    from components.core.resources import sample_path

    try:
        shipped = sample_path("tasks", NAMES.get(str(path), str(path)))
    except LookupError:
        return path
    return shipped if shipped.is_file() else path


def read_tasks(path: str | Path) -> TaskSet:
    """Tasks from a file (a regular file of at most MAX_TASK_BYTES, unpacked too: core.loaders.read_bounded),
    or a bundled set by its name (bundled_name: `litm prompt --task rr-squad`)."""
    from components.core.loaders import read_bounded

    path = bundled_name(path)
    return parse_tasks_bytes(path.name, read_bounded(path, MAX_TASK_BYTES, "a task file", TaskFileError))


def _gunzip(name: str, data: bytes, limit: int) -> bytes:
    """Unpack as a stream, never more than limit + 1 bytes: a gzip bomb stops at the limit."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
            out = gz.read(limit + 1)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise TaskFileError(f"{name}: broken gzip file ({exc})") from None
    if len(out) > limit:
        raise TaskFileError(f"{name}: unpacks to more than {limit // 2**20} MB, the limit for a task file")
    return out


_NOT_UTF8 = re.compile("[\udc80-\udcff]")  # bytes that were not UTF-8, kept by surrogateescape


def _not_utf8(text: str) -> str:
    """'' for text that came from UTF-8; else why not (the first byte that was not), for a row's error."""
    m = _NOT_UTF8.search(text)
    return (
        ""
        if m is None
        else f"not UTF-8 text (byte 0x{ord(m.group()) - 0xDC00:02x} at column {m.start() + 1})"
    )


def _has_not_utf8(value) -> bool:
    if isinstance(value, str):
        return _NOT_UTF8.search(value) is not None
    if isinstance(value, dict):
        return any(_has_not_utf8(k) or _has_not_utf8(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_not_utf8(v) for v in value)
    return False


def _decode(name: str, data: bytes, limit: int = MAX_TASK_BYTES) -> str:
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(name, data, limit)
    if len(data) > limit:
        raise TaskFileError(f"{name}: too large ({len(data) // 2**20} MB; the limit is {limit // 2**20} MB)")
    if not data.strip():
        raise TaskFileError(f"{name}: the file is empty")
    if b"\x00" in data[:65536]:
        raise TaskFileError(f"{name}: a binary file, not JSON lines or CSV")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:  # the rows that are not UTF-8 become row errors (_not_utf8), the rest is read
        return data.decode("utf-8-sig", errors="surrogateescape")


def parse_tasks_bytes(name: str, data: bytes, max_bytes: int = MAX_TASK_BYTES) -> TaskSet:
    """Tasks from an uploaded file's bytes (at most max_bytes once unpacked). Raises TaskFileError if
    nothing can be read."""
    text = _decode(name, data, max_bytes)
    del data
    stem = Path(name).name
    for suffix in (".gz", ".jsonl", ".json", ".csv", ".tsv", ".txt"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    base = name.lower().removesuffix(".gz")
    first = text.lstrip()[:1]
    if first == "{" and looks_like_squad(text):  # SQuAD v1.1 (components/tasks/squad.py)
        ts = parse_squad(stem, text)
    elif first == "{" and looks_like_derived(text):  # R&R's SQuAD set, built from SQuAD (squad.parse_derived)
        ts = parse_derived(stem, text)
    elif first in "{[" and not base.endswith(".csv"):
        ts = _parse_json(stem, text)
    elif base.endswith((".jsonl", ".json")):
        raise TaskFileError(f"{name}: not JSON (the first character is {first!r})")
    else:
        ts = _parse_csv(stem, text, name)
    ts.source = name
    if not ts.tasks:
        line, msg = ts.errors[0] if ts.errors else (0, "no rows")
        raise TaskFileError(f"{name}: no task could be read (line {line}: {msg})")
    return ts


def parse_derived(stem: str, text: str) -> TaskSet:
    """The task set a `{"derived": "rr-squad", "from": "squad-dev-v1.1.json.gz", "questions": 50,
    "distractors": 600}` file names: R&R's SQuAD set (components.tasks.distractors.rr_squad_tasks) built
    from a SQuAD file that ships (a bare name; nothing else is read)."""
    from components.core.resources import sample_path
    from components.tasks.distractors import rr_squad_tasks

    try:
        spec = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise TaskFileError(f"{stem}: not a derived task set ({exc.__class__.__name__})") from None
    kind = spec.get("derived") if isinstance(spec, dict) else None
    if kind not in DERIVED:
        raise TaskFileError(
            f"{stem}: unknown derived task set {str(kind)[:40]!r}; known: {', '.join(DERIVED)}"
        )
    source = spec.get("from", SQUAD_DEV)
    if source != SQUAD_DEV:
        raise TaskFileError(f"{stem}: a derived task set is built from {SQUAD_DEV}, not {str(source)[:60]!r}")
    sizes = {}
    for key, default in (("questions", 50), ("distractors", 600)):
        value = spec.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10_000:
            raise TaskFileError(
                f"{stem}: {key} must be a whole number from 1 to 10,000, got {str(value)[:20]}"
            )
        sizes[key] = value
    base = read_tasks(sample_path("tasks", source))
    tasks = rr_squad_tasks(base.tasks, n=sizes["questions"], n_distractors=sizes["distractors"])
    return TaskSet(tasks, [], format=kind)


def _rows_json(text: str, lossy: bool = False):
    """(line number, parsed object or exception) for JSON lines or a JSON array. lossy: the text holds
    bytes that were not UTF-8 (surrogateescape): the lines holding some are row errors."""
    stripped = text.lstrip()
    try:  # a JSON array, or one (pretty-printed) object; JSON lines fail here with "Extra data"
        whole = json.loads(stripped)
    except json.JSONDecodeError as exc:
        if stripped.startswith("["):
            yield exc.lineno, _RowError(f"not valid JSON ({exc.msg})")
            return
    except RecursionError:  # one row nested too deep (read line by line below), or the whole array
        if stripped.startswith("["):
            yield 1, _RowError("not valid JSON (it nests too deep to read)")
            return
    else:
        yield from enumerate(whole if isinstance(whole, list) else [whole], 1)
        return
    for n, line in numbered_lines(text):  # on "\n" only: U+2028 inside a string is valid JSON
        if not line.strip():
            continue
        if lossy and (why := _not_utf8(line)):
            yield n, _RowError(why)
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as exc:
            yield n, _RowError(f"not valid JSON ({exc.msg} at column {exc.colno})")
        except RecursionError:
            yield n, _RowError("not valid JSON (it nests too deep to read)")


def _parse_json(stem: str, text: str) -> TaskSet:
    tasks: list[Task] = []
    errors: list[tuple[int, str]] = []
    formats: list[str] = []
    lossy = _NOT_UTF8.search(text) is not None
    for n, obj in _rows_json(text, lossy):
        if isinstance(obj, Exception):
            errors.append((n, str(obj)))
            continue
        try:
            if not isinstance(obj, dict):
                raise _RowError(f"expected a JSON object, got {type(obj).__name__}")
            if lossy and _has_not_utf8(obj):  # a row of a JSON array read from text that was not all UTF-8
                raise _RowError("not UTF-8 text")
            if "ordered_kv_records" in obj:
                task, fmt = _from_litm_kv(obj, f"{stem}-{n}"), "litm-kv"
            elif "ctxs" in obj:
                task, fmt = _from_litm_qa(obj, f"{stem}-{n}"), "litm-qa"
            elif "passages" in obj or "pages" in obj or "question" in obj:
                task, fmt = _from_ours(obj, f"{stem}-{n}"), "jsonl"
            else:
                raise _RowError(
                    "unknown record: expected ctxs (LITM QA), ordered_kv_records (LITM KV) "
                    "or question/answers/passages"
                )
        except _RowError as exc:
            errors.append((n, str(exc)))
            continue
        tasks.append(task)
        formats.append(fmt)
    if not tasks and errors and all("not valid JSON" in m for _, m in errors[:3]):
        raise TaskFileError(f"{stem}: not JSON lines (line {errors[0][0]}: {errors[0][1]})")
    kinds = sorted(set(formats))
    return TaskSet(tasks, errors, format=kinds[0] if len(kinds) == 1 else "+".join(kinds))


def _str_list(value, what: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise _RowError(f"{what} must be a non-empty list of strings")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, str | int | float):
            raise _RowError(f"{what} must be a non-empty list of strings")
        s = str(v).strip()
        if s:
            out.append(s)
    if not out:
        raise _RowError(f"{what} are all empty")
    return out


def _question(obj: dict) -> str:
    q = obj.get("question")
    if not isinstance(q, str) or not q.strip():
        raise _RowError("missing or empty question")
    return q  # as given: the LITM reference puts the question into the prompt unchanged


def _from_litm_qa(obj: dict, default_id: str) -> Task:
    question = _question(obj)
    answers = _str_list(obj.get("answers"), "answers")
    ctxs = obj.get("ctxs")
    if not isinstance(ctxs, list) or not ctxs:
        raise _RowError("ctxs must be a non-empty list")
    if not all(isinstance(c, dict) and isinstance(c.get("text"), str) for c in ctxs):
        raise _RowError("every ctx needs a text")
    key = "isgold" if any("isgold" in c for c in ctxs) else "hasanswer"
    passages = tuple(Passage(c["text"], str(c.get("title") or ""), bool(c.get(key))) for c in ctxs)
    if not any(p.gold for p in passages):
        raise _RowError(f"no gold document (no ctx has {key}: true)")
    return Task(
        str(obj.get("id") or default_id),
        question,
        tuple(answers),
        passages,
        "qa",
        meta={"source_format": "litm-qa"},
    )


def kv_text(key: str, value: str) -> str:
    """One LITM key-value record as a passage: `"key": "value"` (LITM §4, JSON serialised)."""
    return f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}"


def _from_litm_kv(obj: dict, default_id: str) -> Task:
    records = obj.get("ordered_kv_records")
    key, value = obj.get("key"), obj.get("value")
    if not isinstance(records, list) or not records:
        raise _RowError("ordered_kv_records must be a non-empty list of [key, value] pairs")
    if not all(
        isinstance(r, list | tuple) and len(r) == 2 and all(isinstance(x, str) for x in r) for r in records
    ):
        raise _RowError("every ordered_kv_records entry must be a [key, value] pair of strings")
    if not isinstance(key, str) or not isinstance(value, str):
        raise _RowError("key and value must be strings")
    hits = [i for i, (k, _) in enumerate(records) if k == key]
    if len(hits) != 1:
        raise _RowError(f"the key occurs {len(hits)} times in ordered_kv_records (expected once)")
    if records[hits[0]][1] != value:
        raise _RowError("the record for the key holds a different value")
    passages = tuple(Passage(kv_text(k, v), "", i == hits[0]) for i, (k, v) in enumerate(records))
    return Task(
        str(obj.get("id") or default_id),
        key,
        (value,),
        passages,
        "kv",
        meta={"source_format": "litm-kv", "key": key},
    )


def _from_ours(obj: dict, default_id: str) -> Task:
    question = _question(obj)
    answers = _str_list(obj.get("answers", obj.get("answer")), "answers")
    raw = obj.get("passages", obj.get("pages"))
    if not isinstance(raw, list) or not raw:
        raise _RowError("passages must be a non-empty list")
    texts, titles, marked = [], [], []
    for i, p in enumerate(raw):
        if isinstance(p, str):
            texts.append(p)
            titles.append("")
            marked.append(False)
        elif isinstance(p, dict) and isinstance(p.get("text"), str):
            texts.append(p["text"])
            titles.append(str(p.get("title") or ""))
            marked.append(bool(p.get("gold")))
        else:
            raise _RowError(f"passage {i} must be a string or an object with a text")
    gold = obj.get("gold", [])
    if isinstance(gold, int) and not isinstance(gold, bool):
        gold = [gold]
    if not isinstance(gold, list) or not all(isinstance(g, int) and not isinstance(g, bool) for g in gold):
        raise _RowError("gold must be a list of 0-based passage indices")
    bad = [g for g in gold if not 0 <= g < len(texts)]
    if bad:
        raise _RowError(f"gold index {bad[0]} outside 0..{len(texts) - 1} (gold indices are 0-based)")
    gold_set = set(gold) | {i for i, m in enumerate(marked) if m}
    if not gold_set:
        raise _RowError("no gold passage (give gold: [0-based indices])")
    passages = tuple(
        Passage(t, ti, i in gold_set) for i, (t, ti) in enumerate(zip(texts, titles, strict=True))
    )
    meta = obj.get("meta") or {}
    if not isinstance(meta, dict):
        raise _RowError("meta must be an object")
    sents = obj.get("gold_sentences") or []
    if not isinstance(sents, list) or not all(isinstance(s, str) for s in sents):
        raise _RowError("gold_sentences must be a list of strings")
    return Task(
        str(obj.get("id") or default_id),
        question,
        tuple(answers),
        passages,
        str(obj.get("kind") or "qa"),
        tuple(sents),
        dict(meta),
    )


_FIELD_LIMIT = threading.Lock()
_FIRST_LINE = re.compile("[^\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]*")


@contextmanager
def _field_limit(n: int):
    """csv's field size limit raised to n while a file is read (it is one setting for the process: a lock
    keeps two readers from resetting it under each other). The file is in memory already, so no cell
    costs more than it; a cell over MAX_CSV_CELL is then a row error, never a csv.Error for the file."""
    with _FIELD_LIMIT:
        old = csv.field_size_limit(max(n, MAX_CSV_CELL))
        try:
            yield
        finally:
            csv.field_size_limit(old)


def _csv_rows(reader, errors: list[tuple[int, str]]):
    """(first line, row) of each row a csv reader can read; one it cannot is a row error, and reading goes on."""
    line = reader.line_num
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            errors.append((line + 1, f"not a readable CSV row ({exc})"))
            line = reader.line_num
            continue
        yield line + 1, row
        line = reader.line_num


def _long_cell(row: dict) -> str:
    """'' when every cell is at most MAX_CSV_CELL characters; else which one is longer, for a row's error."""
    for column, value in row.items():
        if isinstance(value, str) and len(value) > MAX_CSV_CELL:
            return (
                f"the {column} cell has {len(value):,} characters; the limit is {MAX_CSV_CELL:,} characters "
                "a cell"
            )
    return ""


def _parse_csv(stem: str, text: str, name: str) -> TaskSet:
    with _field_limit(len(text) + 1):
        return _read_csv(stem, text, name)


def _read_csv(stem: str, text: str, name: str) -> TaskSet:
    stripped = text.lstrip()
    head = _FIRST_LINE.match(stripped).group()  # type: ignore[union-attr]  # matches any text  # splitlines()[0], without splitting the whole file
    delimiter = "\t" if "\t" in head else ";" if ";" in head and "," not in head else ","
    reader = csv.DictReader(io.StringIO(stripped, newline=""), delimiter=delimiter)
    try:
        fieldnames = reader.fieldnames or []
    except csv.Error as exc:
        raise TaskFileError(f"{name}: its header is not a readable CSV row ({exc})") from None
    header = [h.strip().lower() for h in fieldnames]
    if "question" not in header or "gold_passage" not in header or not ({"answers", "answer"} & set(header)):
        raise TaskFileError(
            f"{name}: neither JSON lines nor a CSV with columns question, answers, gold_passage"
        )
    reader.fieldnames = header
    has_distractors = "distractors" in header
    lossy = _NOT_UTF8.search(text) is not None
    tasks: list[Task] = []
    errors: list[tuple[int, str]] = []
    for start, row in _csv_rows(reader, errors):
        try:
            if None in row:
                raise _RowError("more cells than columns")
            if why := _long_cell(row):
                raise _RowError(why)
            if lossy and any(why := _not_utf8(v) for v in row.values() if isinstance(v, str)):
                raise _RowError(why or "not UTF-8 text")
            q = (row.get("question") or "").strip()
            if not q:
                raise _RowError("missing or empty question")
            raw_answers = row.get("answers") if "answers" in row else row.get("answer")
            answers = [a.strip() for a in (raw_answers or "").split(CSV_ANSWER_SEP) if a.strip()]
            if not answers:
                raise _RowError("missing answers (separate several with |)")
            gold = (row.get("gold_passage") or "").strip()
            if not gold:
                raise _RowError("missing gold_passage")
            title = (row.get("title") or "").strip()
            distractors = []
            if has_distractors:
                distractors = [
                    d.strip() for d in (row.get("distractors") or "").split(CSV_DISTRACTOR_SEP) if d.strip()
                ]
            passages = (Passage(gold, title, True), *(Passage(d) for d in distractors))
            task_id = (row.get("id") or "").strip() or f"{stem}-{start}"
            tasks.append(
                Task(
                    task_id,
                    q,
                    tuple(answers),
                    passages,
                    (row.get("kind") or "qa").strip() or "qa",
                    meta={"source_format": "csv"},
                )
            )
        except _RowError as exc:
            errors.append((start, str(exc)))
    pool = [] if has_distractors else [Passage(t.passages[0].text, t.passages[0].title) for t in tasks]
    return TaskSet(tasks, errors, format="csv", pool=pool)


# --- writing ----------------------------------------------------------------------------------


def task_record(task: Task) -> dict:
    """Our JSON-lines record for one task (gold = 0-based passage indices)."""
    rec: dict = {
        "id": task.id,
        "kind": task.kind,
        "question": task.question,
        "answers": list(task.answers),
        "passages": [{"title": p.title, "text": p.text} if p.title else p.text for p in task.passages],
        "gold": list(task.gold_indices),
    }
    if task.gold_sentences:
        rec["gold_sentences"] = list(task.gold_sentences)
    if task.meta:
        rec["meta"] = task.meta
    return rec


def dumps_tasks(tasks) -> str:
    return "".join(json.dumps(task_record(t), ensure_ascii=False) + "\n" for t in tasks)


def write_tasks(tasks, path: str | Path) -> Path:
    """Write tasks as our JSON lines (gzipped when the name ends in .gz). Returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = dumps_tasks(tasks).encode("utf-8")
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return path
