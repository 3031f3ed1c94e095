"""A corpus of bad inputs (issue 10), each run the way a user meets it: the real CLI in a subprocess
(`python -m components.cli ...`) or the app's upload path. Every case asserts one clear line (no
traceback), a bounded peak RSS of the process (os.wait4), and, for sweeps, that no trial is lost.

Inputs are generated at test time (a 300 MB text run compresses to a few hundred KB), never committed.
"""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import facts_file, sweep_toml

ROOT = Path(__file__).resolve().parent.parent
PEAK_MB = 1024  # the bound for every case


@dataclass
class Ran:
    code: int
    out: str
    err: str
    peak_mb: float
    seconds: float

    @property
    def lines(self) -> list[str]:
        return [x for x in self.err.splitlines() if x.strip()]


def run(args: list[str], tmp: Path, *, timeout: float = 240, python: bool = False, env: dict | None = None) -> Ran:
    """`python -m components.cli *args` (or `python *args`), with its own peak RSS from wait4."""
    cmd = [sys.executable, *args] if python else [sys.executable, "-m", "components.cli", *args]
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), "LITM_DB": str(tmp / "default.sqlite"), **(env or {})}
    full_env.pop("LITM_DEBUG", None)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=str(tmp), env=full_env)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Ran(proc.returncode, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"),
                   usage.ru_maxrss / 1024, time.monotonic() - t0)


def one_line(r: Ran, *needles: str, code: int | None = 1) -> None:
    """Exactly one non-empty stderr line, starting 'litm: ', holding every needle; no traceback."""
    assert "Traceback" not in r.out + r.err, r.err[-2000:]
    assert len(r.lines) == 1, r.err[-2000:]
    assert r.lines[0].startswith("litm: "), r.lines
    for n in needles:
        assert n.lower() in r.lines[0].lower(), (n, r.lines[0])
    if code is not None:
        assert r.code == code, (r.code, r.err)
    assert r.peak_mb < PEAK_MB, f"peak RSS {r.peak_mb:.0f} MB"


# --- files a user gives as a document ----------------------------------------------------------------

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
TYPES = ('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
         '<Default Extension="xml" ContentType="application/xml"/></Types>')


def docx(path: Path, chunks, *, with_document: bool = True) -> Path:
    """A .docx-shaped zip whose word/document.xml is written from `chunks` (streamed, never held)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", TYPES)
        if with_document:
            with zf.open("word/document.xml", "w", force_zip64=True) as part:
                for c in chunks:
                    part.write(c)
    return path


def huge_run(mb: int):
    yield f'<?xml version="1.0"?><w:document {W}><w:body><w:p><w:r><w:t>'.encode()
    block = b"a" * (1 << 20)
    for _ in range(mb):
        yield block
    yield b"</w:t></w:r></w:p></w:body></w:document>"


def many_paragraphs(n: int):
    yield f'<?xml version="1.0"?><w:document {W}><w:body>'.encode()
    para = b"<w:p><w:r><w:t>x</w:t></w:r></w:p>"
    for _ in range(n // 10_000):
        yield para * 10_000
    yield b"</w:body></w:document>"


def prompt_doc(path: Path, tmp: Path) -> Ran:
    return run(["prompt", "--doc", str(path), "--question", "what?"], tmp)


@pytest.fixture(scope="module")
def run_docx(tmp_path_factory) -> Path:
    """A .docx whose one text run is 300 MB (a few hundred KB on disk)."""
    path = docx(tmp_path_factory.mktemp("docx") / "run.docx", huge_run(300))
    assert path.stat().st_size < 2_000_000
    return path


def test_docx_with_a_300_mb_text_run(tmp_path, run_docx):
    r = prompt_doc(run_docx, tmp_path)
    one_line(r, "run.docx unpacks to", "the limit is 200 MB")


def test_docx_with_2_000_000_paragraphs(tmp_path):
    path = docx(tmp_path / "paras.docx", many_paragraphs(2_000_000))
    r = prompt_doc(path, tmp_path)
    one_line(r, "more than 100,000 paragraphs")
    assert r.seconds < 60


def test_docx_not_a_zip(tmp_path):
    path = tmp_path / "fake.docx"
    path.write_bytes(os.urandom(4000))
    one_line(prompt_doc(path, tmp_path), "not a readable .docx")


def test_docx_without_its_text_part(tmp_path):
    path = docx(tmp_path / "empty.docx", [], with_document=False)
    one_line(prompt_doc(path, tmp_path), "no word/document.xml")


def test_docx_with_broken_xml(tmp_path):
    path = docx(tmp_path / "broken.docx", [f"<w:document {W}><w:body><w:p>".encode(), b"<<<"])
    one_line(prompt_doc(path, tmp_path), "broken XML")


def test_pdf_that_is_not_a_pdf(tmp_path):
    path = tmp_path / "x.pdf"
    path.write_bytes(b"%PDF-1.4\n" + os.urandom(3000))
    one_line(prompt_doc(path, tmp_path), "x.pdf")


def test_binary_text_file(tmp_path):
    path = tmp_path / "bin.txt"
    path.write_bytes(b"\x00\x01\x02" * 1000)
    one_line(prompt_doc(path, tmp_path), "binary")


def test_empty_text_file(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    one_line(prompt_doc(path, tmp_path), "empty")


def test_unsupported_extension(tmp_path):
    path = tmp_path / "tool.exe"
    path.write_bytes(b"MZ" + b"\x00" * 100)
    one_line(prompt_doc(path, tmp_path), "unsupported file type")


def test_missing_document(tmp_path):
    one_line(prompt_doc(tmp_path / "nope.txt", tmp_path), "no such file")


def test_html_with_too_many_tags(tmp_path):
    path = tmp_path / "tags.html"
    path.write_bytes(b"<p>a</p>" * 300_000)
    one_line(prompt_doc(path, tmp_path), "more than 200,000 HTML tags")


def test_text_over_the_upload_limit(tmp_path):
    path = tmp_path / "big.txt"
    path.write_bytes(b"word " * (21 * 1024 * 1024 // 5))
    one_line(prompt_doc(path, tmp_path), "the limit is 20 MB")


# --- task files ----------------------------------------------------------------------------------------

def gzip_bomb(path: Path, mb: int) -> Path:
    line = b'{"question": "q", "answers": ["a"], "passages": ["' + b"z" * 1000 + b'"]}\n'
    with gzip.open(path, "wb", compresslevel=9) as gz:
        block = line * 1024
        for _ in range(mb * 1024 * 1024 // len(block)):
            gz.write(block)
    return path


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> Path:
    path = gzip_bomb(tmp_path_factory.mktemp("bomb") / "bomb.jsonl.gz", 400)
    assert path.stat().st_size < 3_000_000
    return path


def test_gzip_bomb_task_file_in_the_cli(bomb, tmp_path):
    one_line(run(["tasks", "info", str(bomb)], tmp_path), "unpacks to more than 256 MB")


def test_gzip_bomb_task_upload(bomb, tmp_path):
    """The app's task upload (webapp/services/sweeps.uploaded) with its own, lower limit."""
    code = ("import sys; from pathlib import Path\n"
            "from components.tasks.importers import MAX_UPLOAD_TASK_BYTES, parse_tasks_bytes\n"
            "from components.tasks.model import TaskFileError\n"
            "try:\n"
            f"    parse_tasks_bytes('bomb.jsonl.gz', Path({str(bomb)!r}).read_bytes(), MAX_UPLOAD_TASK_BYTES)\n"
            "except TaskFileError as exc:\n"
            "    print('litm: ' + str(exc), file=sys.stderr); sys.exit(1)\n")
    one_line(run(["-c", code], tmp_path, python=True), "unpacks to more than 64 MB")


def test_document_upload_of_a_zip_bomb_docx(tmp_path, run_docx):
    """The Playground's upload path (core.loaders.read_upload) with a 300 MB text run."""
    path = run_docx
    code = ("import sys; from pathlib import Path\n"
            "from components.core.loaders import DocumentError, read_upload\n"
            "try:\n"
            f"    read_upload('run.docx', Path({str(path)!r}).read_bytes())\n"
            "except DocumentError as exc:\n"
            "    print('litm: ' + str(exc), file=sys.stderr); sys.exit(1)\n")
    one_line(run(["-c", code], tmp_path, python=True), "unpacks to")


def test_broken_gzip_task_file(tmp_path):
    path = tmp_path / "cut.jsonl.gz"
    data = gzip.compress(os.urandom(5000).hex().encode())
    path.write_bytes(data[: len(data) // 2])
    one_line(run(["tasks", "info", str(path)], tmp_path), "broken gzip")


def test_empty_task_file(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    one_line(run(["tasks", "info", str(path)], tmp_path), "empty")


def test_binary_task_file(tmp_path):
    path = tmp_path / "bin.jsonl"
    path.write_bytes(b"{\x00\x00\x00" * 100)
    one_line(run(["tasks", "info", str(path)], tmp_path), "binary")


def test_sweep_says_how_many_task_rows_it_skips(tmp_path, server):
    toml = sweep_toml(tmp_path, base_url=server.openai_url, strategies=("baseline",))
    tasks = tmp_path / "facts.jsonl"
    tasks.write_text(tasks.read_text() + "{not json\n" + '{"question": "no answers"}\n')
    r = run(["sweep", str(toml), "--dry-run"], tmp_path)
    assert r.code == 0 and "Traceback" not in r.err
    assert r.lines == [r.lines[0]] and "2 task row(s) could not be read" in r.lines[0], r.err


def test_prompt_says_how_many_task_rows_it_skips(tmp_path):
    tasks = facts_file(tmp_path, 2)
    tasks.write_text(tasks.read_text() + "[1, 2\n")
    r = run(["prompt", "--task", str(tasks), "--json"], tmp_path)
    assert r.code == 0 and "Traceback" not in r.err
    assert len(r.lines) == 1 and "1 row(s) could not be read" in r.lines[0]


# --- sweep configs and parameters ------------------------------------------------------------------

def config(tmp: Path, server, **sweep_keys) -> Path:
    """A small sweep config; sweep_keys replace (or add) keys of the [sweep] table (TOML values)."""
    toml = sweep_toml(tmp, base_url=server.openai_url, strategies=("baseline",), n_tasks=3, lengths=(600,),
                      positions=(0.0, 1.0), concurrency=1, extra_model="max_retries = 0")
    lines = toml.read_text().splitlines()
    for key, value in sweep_keys.items():
        lines = [x for x in lines if not x.startswith(f"{key} =")]
        lines.insert(1, f"{key} = {value}")
    toml.write_text("\n".join(lines) + "\n")
    return toml


@pytest.mark.parametrize("keys, needle", [
    ({"positions": "[5000]"}, "position 5000 counts tokens"),
    ({"positions": "[nan]"}, "position must be 0 or more"),
    ({"positions": "[inf]"}, "position must be 0 or more"),
    ({"positions": "[-1]"}, "position must be 0 or more"),
    ({"positions": "[2.5]"}, "must be a whole number"),
    ({"colour": '"red"'}, "unknown key(s) colour"),
    ({"max_retry_after": "-5"}, "max_retry_after must be"),
    ({"fail_fast": "true"}, "fail_fast must be"),
    ({"tasks": '"missing.jsonl"'}, "missing.jsonl"),
])
def test_bad_config_values(tmp_path, server, keys, needle):
    one_line(run(["sweep", str(config(tmp_path, server, **keys)), "--dry-run"], tmp_path), needle)


def test_config_that_is_not_toml(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("[sweep\nname = ")
    one_line(run(["sweep", str(path)], tmp_path), "not valid TOML")


def test_api_key_in_a_config_is_refused(tmp_path, server):
    toml = sweep_toml(tmp_path, base_url=server.openai_url, extra_model='api_key = "sk-secret-123456789"')
    r = run(["sweep", str(toml)], tmp_path)
    one_line(r, "never put an API key")
    assert "sk-secret" not in r.err


@pytest.mark.parametrize("args, needle", [
    (["--length", "1000", "--position", "nan"], "--position is needed"),
    (["--length", "1000", "--position", "5000"], "past the end"),
    (["--param", "r=abc"], "not a whole number"),
    (["--index", "99"], "--index 99 is outside"),
    (["--documents", "5", "--position", "7"], "not an index of 5 documents"),
])
def test_bad_prompt_parameters(tmp_path, args, needle):
    tasks = facts_file(tmp_path, 2)
    one_line(run(["prompt", "--task", str(tasks), *args], tmp_path), needle)


@pytest.mark.parametrize("position, needle", [("nan", "position must be 0 or more"),
                                             ("5000", "past the end of a 1,000-token document")])
def test_bad_build_positions(tmp_path, position, needle):
    tasks = facts_file(tmp_path, 2)
    r = run(["tasks", "build", "--task", str(tasks), "--length", "1000", "--position", position,
             "--out", str(tmp_path / "o.jsonl")], tmp_path)
    one_line(r, needle)


def test_usage_error_is_one_line_exit_2(tmp_path):
    one_line(run(["sweep"], tmp_path), "required", code=2)


# --- server answers ------------------------------------------------------------------------------------

def results(db: Path, tmp: Path) -> list[dict]:
    r = run(["results", "--db", str(db), "--format", "json"], tmp)
    assert r.code == 0, r.err
    return json.loads(r.out)


@pytest.mark.parametrize("kind", ["truncated", "html", "empty_choices", "null_content"])
def test_malformed_answers_are_errors_and_retried(tmp_path, server, kind):
    toml, db = config(tmp_path, server), tmp_path / "s.sqlite"
    server.set(malformed=kind)
    r = run(["sweep", str(toml), "--db", str(db), "--quiet"], tmp_path)
    assert r.code == 3 and "Traceback" not in r.out + r.err and "errors 6" in r.out, (r.out, r.err)
    rows = results(db, tmp_path)
    assert len(rows) == 6 and {x["error_kind"] for x in rows} == {"bad_response"}
    assert all(x["score"] is None for x in rows)  # an error, never a (wrong) score
    server.set(malformed=None)
    r = run(["sweep", str(toml), "--db", str(db), "--quiet", "--retry-errors"], tmp_path)
    assert r.code == 0 and "errors 0" in r.out, (r.out, r.err)
    rows = results(db, tmp_path)
    assert len(rows) == 6 and all(x["error"] is None for x in rows)  # nothing was cached as an answer


@pytest.mark.parametrize("status, kind", [(401, "auth"), (404, "not_found"), (400, "bad_request")])
def test_fatal_errors_stop_the_sweep_early(tmp_path, server, status, kind):
    toml = config(tmp_path, server, lengths="[600, 1200]", positions="[0.0, 0.5, 1.0]")  # 18 trials
    db = tmp_path / "s.sqlite"
    server.set(status=status)
    r = run(["sweep", str(toml), "--db", str(db), "--quiet"], tmp_path)
    assert r.code == 4 and "Traceback" not in r.out + r.err
    assert len(r.lines) == 1 and f"the first 5 trials all failed ({kind})" in r.lines[0], r.err
    assert server.counts["total"] == 5  # concurrency 1, no SDK retries: it stopped after 5
    rows = results(db, tmp_path)
    assert len(rows) == 5 and {x["error_kind"] for x in rows} == {kind}


def test_a_server_that_refuses_connections_stops_the_sweep_early(tmp_path, server):
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    toml = config(tmp_path, server, lengths="[600, 1200]", positions="[0.0, 0.5, 1.0]")
    toml.write_text(toml.read_text().replace(server.openai_url, f"http://127.0.0.1:{port}/v1"))
    r = run(["sweep", str(toml), "--db", str(tmp_path / "s.sqlite"), "--quiet"], tmp_path)
    assert r.code == 4 and len(r.lines) == 1 and "all failed (unreachable)" in r.lines[0], r.err
    assert "Traceback" not in r.out + r.err and r.seconds < 60


def test_retry_after_beyond_the_cap_is_not_waited_for(tmp_path, server):
    toml, db = config(tmp_path, server, max_retry_after="5"), tmp_path / "s.sqlite"
    server.set(status=429, retry_after=600)
    r = run(["sweep", str(toml), "--db", str(db), "--quiet"], tmp_path)
    assert r.code == 3 and r.seconds < 60, (r.code, r.seconds, r.err)
    rows = results(db, tmp_path)
    assert len(rows) == 6 and {x["error_kind"] for x in rows} == {"rate_limited"}
    assert all("asks to wait 600 s" in x["error"] for x in rows)


def test_every_http_request_is_counted_with_sdk_retries(tmp_path, server):
    toml = sweep_toml(tmp_path, base_url=server.openai_url, strategies=("baseline",), n_tasks=2, lengths=(600,),
                      positions=(0.0,), concurrency=1, extra_model="max_retries = 2")
    server.set(status=429, retry_after=0, fail_times=2)  # the SDK retries twice, then it answers
    r = run(["sweep", str(toml), "--db", str(tmp_path / "s.sqlite"), "--quiet"], tmp_path)
    assert r.code == 0, r.err
    assert server.counts["total"] == 4
    assert "calls sent 2 (4 HTTP requests, retries included)" in r.out, r.out


def test_rate_limit_wait_is_on_the_progress_line(tmp_path, server):
    toml = sweep_toml(tmp_path, base_url=server.openai_url, strategies=("baseline",), n_tasks=2, lengths=(600,),
                      positions=(0.0,), concurrency=1, extra_model="max_retries = 0")
    server.set(status=429, retry_after=2, fail_times=1)
    r = run(["sweep", str(toml), "--db", str(tmp_path / "s.sqlite")], tmp_path)
    assert r.code == 0, r.err
    assert "rate limited: waiting 2 s (the server's Retry-After)" in r.err


# --- run stores ---------------------------------------------------------------------------------------

@pytest.fixture
def store(tmp_path, server) -> Path:
    """A real store with one finished sweep."""
    db = tmp_path / "real.sqlite"
    r = run(["sweep", str(config(tmp_path, server)), "--db", str(db), "--quiet"], tmp_path)
    assert r.code == 0, r.err
    sqlite3.connect(db).execute("PRAGMA wal_checkpoint(TRUNCATE)").close()
    return db


def test_results_of_a_file_that_is_not_a_store(tmp_path):
    path = tmp_path / "notes.sqlite"
    path.write_text("just some text, not a database\n" * 100)
    one_line(run(["results", "--db", str(path)], tmp_path), "not a usable LITM run store")


def test_results_of_an_sqlite_file_that_is_not_a_store(tmp_path):
    path = tmp_path / "other.sqlite"
    sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.commit()
    one_line(run(["results", "--db", str(path)], tmp_path), "not a LITM run store")


def test_results_of_a_truncated_store(tmp_path, store):
    data = store.read_bytes()
    store.write_bytes(data[: len(data) // 3])
    r = run(["results", "--db", str(store)], tmp_path)
    one_line(r, "run store")


def test_store_of_a_newer_version(tmp_path, store):
    with sqlite3.connect(store) as c:
        c.execute("INSERT INTO schema_version VALUES (99, 0)")
    one_line(run(["results", "--db", str(store)], tmp_path), "newer LITM Explorer", "schema 99")


def test_store_with_a_renamed_column(tmp_path, store, server):
    with sqlite3.connect(store) as c:
        c.execute("ALTER TABLE trials RENAME COLUMN answer TO answer_text")
    r = run(["sweep", str(config(tmp_path, server)), "--db", str(store), "--quiet"], tmp_path)
    one_line(r, "lacks column(s) answer")


def test_store_in_a_place_that_cannot_be_written(tmp_path, server):
    r = run(["sweep", str(config(tmp_path, server)), "--db", "/proc/litm-test/x.sqlite", "--quiet"], tmp_path)
    one_line(r, "cannot create the folder")
    r = run(["sweep", str(config(tmp_path, server)), "--db", "/proc/x.sqlite", "--quiet"], tmp_path)
    one_line(r, "cannot write the run store")


def test_store_path_that_is_a_folder(tmp_path):
    one_line(run(["results", "--db", str(tmp_path)], tmp_path), "no run store")


def test_two_processes_start_the_same_new_sweep_at_once(tmp_path, server):
    toml, db = config(tmp_path, server, concurrency="2"), tmp_path / "both.sqlite"
    server.set(delay=0.05)
    cmds = [[sys.executable, "-m", "components.cli", "sweep", str(toml), "--db", str(db), "--quiet"]] * 2
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen(c, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for c in cmds]
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0 and b"Traceback" not in err and b"IntegrityError" not in err, err
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*) FROM sweeps").fetchone()[0] == 1
        assert c.execute("SELECT COUNT(*), COUNT(DISTINCT trial_key) FROM trials").fetchone() == (6, 6)
    # no cross-process claim on calls (yet): each call is sent at most once per process
    assert 6 <= server.counts["total"] <= 12
    print(f"two processes, 6 calls: the server saw {server.counts['total']} requests")


def test_results_into_a_closed_pipe_is_quiet(tmp_path):
    from components.run.reader import put_trials
    from components.run.store import RunStore

    db = tmp_path / "big.sqlite"
    rs = RunStore(db)
    sid = rs.open_sweep("big", {})
    put_trials(rs, sid, [{"trial_key": f"k{i}", "task": f"t{i}", "answer": "x" * 200, "strategy": "baseline"}
                         for i in range(3000)])  # ~700 KB of CSV: far more than a pipe holds
    rs.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for fmt in ("csv", "json"):
        cmd = f"{sys.executable} -m components.cli results --db {db} --format {fmt} | head -1; exit ${{PIPESTATUS[0]}}"
        done = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, timeout=120)
        assert b"Broken pipe" not in done.stderr and b"Traceback" not in done.stderr, done.stderr
        assert done.stderr.strip() == b"" and done.stdout.strip() in (b"[", b"sweep,task" + done.stdout[10:].strip())
        assert done.returncode == 141  # documented: the reader went away
