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
import itertools
import json
import re
import sys
import threading
import zlib
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
MAX_TASK_ROWS = 100_000  # rows of a task file (good or bad), counted as they are read
MAX_TASK_PASSAGES = 1_000_000  # passages of all a task file's rows
MAX_TASK_TEXT = 384 * 1024 * 1024  # bytes of text the tasks of one file hold in memory
MAX_ROW_CHARS = 8 * 1024 * 1024  # characters of one row (a line of JSON lines, a CSV line or cell)
MAX_JSON_BYTES = 16 * 1024 * 1024  # a task file that is one JSON text (an array, SQuAD), read whole
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


def read_tasks(path: str | Path) -> TaskSet:
    """Tasks from a file (a regular file of at most MAX_TASK_BYTES, unpacked too: core.loaders.open_bounded),
    read as a stream (parse_tasks_stream), or a bundled set by its name (bundled_name: `litm prompt --task
    rr-squad`)."""
    from components.core.loaders import open_bounded

    path = bundled_name(path)
    with open_bounded(path, MAX_TASK_BYTES, "a task file", TaskFileError) as f:
        return parse_tasks_stream(path.name, f)


def parse_tasks_bytes(name: str, data: bytes, max_bytes: int = MAX_TASK_BYTES) -> TaskSet:
    """Tasks from an uploaded file's bytes (at most max_bytes once unpacked). Raises TaskFileError if
    nothing can be read."""
    if len(data) > max_bytes:
        raise TaskFileError(
            f"{name}: too large ({len(data) // 2**20} MB; the limit is {max_bytes // 2**20} MB)"
        )
    return parse_tasks_stream(name, io.BytesIO(data), max_bytes)


class _Counted(io.RawIOBase):
    """A binary stream (a file, or a gzip stream over one) read through with its bytes counted: past `limit`
    it raises TaskFileError, so a gzip bomb or a growing file stops there; a broken gzip stream (zlib's own
    errors included) is one line too."""

    def __init__(self, name: str, raw, limit: int, gz: bool) -> None:
        super().__init__()
        self.name, self.raw, self.limit, self.gz, self.n = name, raw, limit, gz, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        try:
            n = self.raw.readinto(b)
        except (OSError, EOFError, zlib.error) as exc:
            why = f"broken gzip file ({exc})" if self.gz else f"cannot be read ({exc})"
            raise TaskFileError(
                f"{self.name}: {why}; is the file complete? copy or download it again"
            ) from None
        self.n += n
        if self.n > self.limit:
            if self.gz:
                raise TaskFileError(
                    f"{self.name}: unpacks to more than {self.limit // 2**20} MB, the limit for a task file"
                )
            raise TaskFileError(
                f"{self.name}: larger than {self.limit // 2**20} MB, the limit for a task file"
            )
        return n


_HEAD = 1 << 20  # bytes looked at to tell a file's format


def _unpacked(name: str, raw, limit: int) -> io.BufferedReader:
    """The file's bytes as a buffered stream, a gzip file unpacked as it is read, at most `limit` of them."""
    buffered = raw if hasattr(raw, "peek") else io.BufferedReader(raw)
    gz = buffered.peek(2)[:2] == b"\x1f\x8b"
    source = gzip.GzipFile(fileobj=buffered) if gz else buffered
    return io.BufferedReader(_Counted(name, source, limit, gz), buffer_size=_HEAD)


def _head(name: str, stream: io.BufferedReader) -> tuple[str, int]:
    """The first characters of the file (its first chunk, decoded) and the lines of blank space skipped to
    reach them; refuses an empty or binary file with one line."""
    skipped = 0
    while not (head := stream.peek(_HEAD)).strip():
        if not head:
            raise TaskFileError(f"{name}: the file is empty")
        skipped += head.count(b"\n")
        stream.read(len(head))
    if b"\x00" in head[:65536]:
        raise TaskFileError(f"{name}: a binary file, not JSON lines or CSV")
    text = head[:_HEAD].decode("utf-8-sig", errors="replace")
    if not text.strip():
        raise TaskFileError(f"{name}: the file is empty")
    return text, skipped


def _whole_json(head: str) -> bool:
    """Whether a file is one JSON text (an array, a SQuAD file, a derived set, a pretty-printed object)
    rather than JSON lines: its first line is not a JSON text of its own."""
    stripped = head.lstrip()
    if stripped[:1] == "[" or looks_like_squad(stripped) or looks_like_derived(stripped):
        return True
    first, newline, _ = stripped.partition("\n")
    if not newline:
        return False  # a first line longer than the head: a row of JSON lines
    try:
        json.loads(first)
    except (ValueError, RecursionError):
        return True
    return False


def _text(stream: io.BufferedReader, newline: str) -> io.TextIOWrapper:
    """The stream as text: UTF-8 (a byte-order mark dropped); bytes that are not UTF-8 kept by
    surrogateescape, so the rows holding some are row errors (_not_utf8) and the rest is read."""
    return io.TextIOWrapper(stream, encoding="utf-8-sig", errors="surrogateescape", newline=newline)


def parse_tasks_stream(name: str, raw, max_bytes: int = MAX_TASK_BYTES) -> TaskSet:
    """Tasks from a binary stream of a task file (a .gz unpacked as it is read), its rows read, checked and
    counted one at a time, so memory stays bounded: at most MAX_TASK_ROWS rows, MAX_TASK_PASSAGES passages
    in all and MAX_ROW_CHARS characters a row; a file that is one JSON text (an array, SQuAD, a derived
    set) is read whole, at most MAX_JSON_BYTES. Raises TaskFileError (one line) if nothing can be read or a
    limit is passed."""
    stream = _unpacked(name, raw, max_bytes)
    head, skipped = _head(name, stream)
    stem = Path(name).name
    for suffix in (".gz", ".jsonl", ".json", ".csv", ".tsv", ".txt"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    base = name.lower().removesuffix(".gz")
    first = head.lstrip()[:1]
    if first in "{[" and not base.endswith(".csv"):
        if _whole_json(head):
            ts = _parse_whole(name, stem, stream)
        else:
            ts = _parse_json(name, stem, _json_lines(_text(stream, "\n"), skipped))
    elif base.endswith((".jsonl", ".json")):
        raise TaskFileError(f"{name}: not JSON (the first character is {first!r})")
    else:
        ts = _parse_csv(stem, _text(stream, ""), name)
    ts.source = name
    if not ts.tasks:
        line, msg = ts.errors[0] if ts.errors else (0, "no rows")
        raise TaskFileError(f"{name}: no task could be read (line {line}: {msg})")
    return ts


def _parse_whole(name: str, stem: str, stream: io.BufferedReader) -> TaskSet:
    """A file that is one JSON text, read whole (at most MAX_JSON_BYTES: parsed, it takes many times that)."""
    data = stream.read(MAX_JSON_BYTES + 1)
    if len(data) > MAX_JSON_BYTES:
        raise TaskFileError(
            f"{name}: a task file that is one JSON text (an array or one object) is read whole, and its "
            f"limit is {MAX_JSON_BYTES // 2**20} MB; give the tasks as JSON lines (one object a line)"
        )
    text = data.decode("utf-8-sig", errors="surrogateescape").lstrip()
    del data
    if looks_like_squad(text):  # SQuAD v1.1 (components/tasks/squad.py)
        return parse_squad(stem, text)
    if looks_like_derived(text):  # R&R's SQuAD set, built from SQuAD (squad.parse_derived)
        return parse_derived(stem, text)
    lossy = _NOT_UTF8.search(text) is not None
    return _parse_json(name, stem, _rows_json(text, lossy), lossy)


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
        yield n, _json_row(line, lossy)


def _json_lines(stream: io.TextIOWrapper, skipped: int = 0):
    """(line number, parsed object or exception) for each row of JSON lines, read one line at a time (on
    "\\n" only: U+2028 inside a string is valid JSON). A line longer than MAX_ROW_CHARS is a row error,
    read past without being held."""
    n = skipped
    while line := stream.readline(MAX_ROW_CHARS + 1):
        n += 1
        if len(line) > MAX_ROW_CHARS and not line.endswith("\n"):
            while (rest := stream.readline(MAX_ROW_CHARS)) and not rest.endswith("\n"):
                pass
            yield n, _RowError(f"longer than {MAX_ROW_CHARS:,} characters, the limit for one row")
            continue
        if not line.strip():
            continue
        yield n, _json_row(line)


def _json_row(line: str, lossy: bool = True):
    """One line of JSON lines: the parsed object, or a _RowError saying why not (not UTF-8 where the text
    was decoded lossily, not valid JSON, nested too deep)."""
    if lossy and (why := _not_utf8(line)):
        return _RowError(why)
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        return _RowError(f"not valid JSON ({exc.msg} at column {exc.colno})")
    except RecursionError:
        return _RowError("not valid JSON (it nests too deep to read)")


class _Budget:
    """The rows, passages and text of one task file, counted as they are read: past MAX_TASK_ROWS rows (good
    or bad), MAX_TASK_PASSAGES passages in all or MAX_TASK_TEXT bytes of text held (as Python holds it: a
    passage with one emoji takes 4 bytes a character), the file is refused with one line, so memory stays
    bounded."""

    def __init__(self, name: str) -> None:
        self.name, self.rows, self.passages, self.held = name, 0, 0, 0

    def row(self) -> None:
        self.rows += 1
        if self.rows > MAX_TASK_ROWS:
            raise self._refuse(f"more than {MAX_TASK_ROWS:,} rows")

    def passages_of(self, obj: dict) -> None:
        """Counts a row's passages before any is built."""
        for key in ("ordered_kv_records", "ctxs", "passages", "pages"):
            if isinstance(obj.get(key), list):
                self.add(len(obj[key]))
                return

    def add(self, passages: int) -> None:
        self.passages += passages
        if self.passages > MAX_TASK_PASSAGES:
            raise self._refuse(f"more than {MAX_TASK_PASSAGES:,} passages in all")

    def hold(self, task: Task) -> None:
        self.held += sys.getsizeof(task.question) + sum(sys.getsizeof(p.text) for p in task.passages)
        if self.held > MAX_TASK_TEXT:
            raise self._refuse(f"more than {MAX_TASK_TEXT // 2**20} MB of text once read")

    def _refuse(self, what: str) -> TaskFileError:
        return TaskFileError(f"{self.name}: {what}, the limit for a task file; split it into smaller files")


def _task_of(obj, n: int, stem: str, lossy: bool) -> tuple[Task, str]:
    """One row's task and its format; a row that is not one raises _RowError."""
    if not isinstance(obj, dict):
        raise _RowError(f"expected a JSON object, got {type(obj).__name__}")
    if lossy and _has_not_utf8(obj):  # a row of a JSON array read from text that was not all UTF-8
        raise _RowError("not UTF-8 text")
    if "ordered_kv_records" in obj:
        return _from_litm_kv(obj, f"{stem}-{n}"), "litm-kv"
    if "ctxs" in obj:
        return _from_litm_qa(obj, f"{stem}-{n}"), "litm-qa"
    if "passages" in obj or "pages" in obj or "question" in obj:
        return _from_ours(obj, f"{stem}-{n}"), "jsonl"
    raise _RowError(
        "unknown record: expected ctxs (LITM QA), ordered_kv_records (LITM KV) or question/answers/passages"
    )


def _parse_json(name: str, stem: str, rows, lossy: bool = False) -> TaskSet:
    tasks: list[Task] = []
    errors: list[tuple[int, str]] = []
    formats: set[str] = set()
    budget = _Budget(name)
    for n, obj in rows:
        budget.row()
        if isinstance(obj, Exception):
            errors.append((n, str(obj)))
            continue
        if isinstance(obj, dict):
            budget.passages_of(obj)
        try:
            task, fmt = _task_of(obj, n, stem, lossy)
        except _RowError as exc:
            errors.append((n, str(exc)))
            continue
        budget.hold(task)
        tasks.append(task)
        formats.add(fmt)
    if not tasks and errors and all("not valid JSON" in m for _, m in errors[:3]):
        raise TaskFileError(f"{stem}: not JSON lines (line {errors[0][0]}: {errors[0][1]})")
    kinds = sorted(formats)
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
    """csv's field size limit set to n while a file is read (it is one setting for the process: a lock
    keeps two readers from resetting it under each other). It is above MAX_CSV_CELL, so a cell over
    MAX_CSV_CELL is a row error naming its length; only a cell past n is a csv.Error, for its row alone."""
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


def _csv_lines(stream: io.TextIOWrapper, name: str):
    """The file's lines for csv (their endings kept), one at a time, from its first that is not blank (its
    leading blank space dropped); a line longer than MAX_ROW_CHARS refuses the file with one line."""
    first = True
    while line := stream.readline(MAX_ROW_CHARS + 1):
        if len(line) > MAX_ROW_CHARS:
            raise TaskFileError(
                f"{name}: a line longer than {MAX_ROW_CHARS:,} characters, the limit for one row; "
                "is it a CSV file?"
            )
        if first:
            line = line.lstrip()
            if not line:
                continue
            first = False
        yield line


def _parse_csv(stem: str, stream: io.TextIOWrapper, name: str) -> TaskSet:
    with _field_limit(MAX_ROW_CHARS):
        return _read_csv(stem, _csv_lines(stream, name), name)


def _csv_checked(row: dict) -> None:
    """A row's shape and cells: a row that is not one raises _RowError."""
    if None in row:
        raise _RowError("more cells than columns")
    if why := _long_cell(row):
        raise _RowError(why)
    for value in row.values():
        if isinstance(value, str) and (why := _not_utf8(value)):
            raise _RowError(why)


def _csv_task(row: dict, start: int, stem: str, has_distractors: bool) -> Task:
    """One CSV row's task; a row that is not one raises _RowError."""
    _csv_checked(row)
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
    kind = (row.get("kind") or "qa").strip() or "qa"
    return Task(task_id, q, tuple(answers), passages, kind, meta={"source_format": "csv"})


def _read_csv(stem: str, lines, name: str) -> TaskSet:
    first = next(lines, "")
    head = _FIRST_LINE.match(first).group()  # type: ignore[union-attr]  # matches any text
    delimiter = "\t" if "\t" in head else ";" if ";" in head and "," not in head else ","
    reader = csv.DictReader(itertools.chain([first], lines), delimiter=delimiter)
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
    tasks: list[Task] = []
    errors: list[tuple[int, str]] = []
    budget = _Budget(name)
    for start, row in _csv_rows(reader, errors):
        budget.row()
        try:
            task = _csv_task(row, start, stem, has_distractors)
        except _RowError as exc:
            errors.append((start, str(exc)))
            continue
        budget.add(len(task.passages))
        budget.hold(task)
        tasks.append(task)
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
