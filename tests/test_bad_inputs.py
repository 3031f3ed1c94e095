"""A corpus of bad inputs (issue 10), each run the way a user meets it: the real CLI (`litm ...`,
`components.cli.main`) or the app's upload path. Every case asserts one clear line (no traceback) and,
for sweeps, that no trial is lost.

Most cases run the CLI inside this test process (its stdout, stderr, working folder and environment
swapped in for the call): a process per case cost minutes. A case marked `own_process` runs the CLI in its
own process (`python -m components.cli ...`) and also asserts a bounded peak RSS of that process: the
cases whose point is memory (bombs, huge files, endless inputs, answers past the size cap), and those
that read the environment as a process starts (LITM_PRICES).

Inputs are generated at test time (a 300 MB text run compresses to a few hundred KB), never committed.
"""

from __future__ import annotations

import contextlib
import gzip
import io
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

from tests.support import baseline_toml, facts_file, sweep_toml

ROOT = Path(__file__).resolve().parent.parent
PEAK_MB = 1024  # the bound for every case run in its own process


@dataclass
class Ran:
    code: int
    out: str
    err: str
    peak_mb: float | None  # None: run inside the test process (no peak of its own)
    seconds: float

    @property
    def lines(self) -> list[str]:
        return [x for x in self.err.splitlines() if x.strip()]


TIME = "/usr/bin/time"  # GNU time: its -v report gives a command's own peak RSS
# on for this module's tests not marked `own_process` (the autouse fixture below); other test modules
# calling `run` (test_hostile_*, test_read_only) keep a process per command, their peak RSS measured
IN_PROCESS = {"on": False}


@pytest.fixture(autouse=True)
def _in_process_unless_marked(request):
    """This module's cases run inside the test process, but those marked `own_process`."""
    IN_PROCESS["on"] = request.node.get_closest_marker("own_process") is None
    yield
    IN_PROCESS["on"] = False


def run(
    args: list[str],
    tmp: Path,
    *,
    timeout: float = 240,
    python: bool = False,
    env: dict | None = None,
    max_data_mb: int | None = None,
    timed: bool | None = None,
) -> Ran:
    """`litm *args` with `tmp` as the working folder and LITM_DB in it: inside this process (this module's
    cases), or in its own (`python -m components.cli *args`, or `python *args`): in a test marked
    `own_process`, in other modules, and whenever the call needs a process (python, max_data_mb, timed,
    LITM_PRICES read as it starts)."""
    own = python or max_data_mb is not None or bool(timed) or "LITM_PRICES" in (env or {})
    if IN_PROCESS["on"] and not own:
        return _in_process(args, tmp, env)
    return _own_process(
        args, tmp, timeout=timeout, python=python, env=env, max_data_mb=max_data_mb, timed=timed
    )


def _in_process(args: list[str], tmp: Path, env: dict | None) -> Ran:
    """components.cli.main(args) with its own stdout and stderr (text over bytes, as a process has),
    the working folder `tmp` and the environment of `run`, all put back afterwards. SystemExit (a usage
    error) is an exit code, as it is for a process."""
    from components.cli import main

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(err_bytes, encoding="utf-8", write_through=True)
    os.environ.update({"LITM_DB": str(tmp / "default.sqlite"), **(env or {})})
    os.environ.pop("LITM_DEBUG", None)
    os.chdir(tmp)
    t0 = time.monotonic()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(args)
            except SystemExit as exc:
                if isinstance(exc.code, str):
                    print(exc.code, file=sys.stderr)
                code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
            sys.stdout.flush()
            sys.stderr.flush()
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    seconds = time.monotonic() - t0
    return Ran(
        code,
        out_bytes.getvalue().decode("utf-8", "replace"),
        err_bytes.getvalue().decode("utf-8", "replace"),
        None,
        seconds,
    )


def _own_process(
    args: list[str],
    tmp: Path,
    *,
    timeout: float,
    python: bool,
    env: dict | None,
    max_data_mb: int | None,
    timed: bool | None,
) -> Ran:
    """`python -m components.cli *args` (or `python *args`), with its own peak RSS. max_data_mb: the
    process's data segment limit (RLIMIT_DATA), so that a read without bound fails in the child instead of
    filling the shared machine's memory. The peak is /usr/bin/time -v's figure (timed, the default where
    it exists): wait4's includes this test process's own highest RSS (Linux counts the memory a child
    shared before its exec), so a test that made this process large would inflate every later figure.
    The child runs in its own process group, killed whole at the timeout."""
    cmd = [sys.executable, *args] if python else [sys.executable, "-m", "components.cli", *args]
    timed = os.path.exists(TIME) if timed is None else timed
    if timed:
        cmd = [TIME, "-v", *cmd]
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), "LITM_DB": str(tmp / "default.sqlite"), **(env or {})}
    full_env.pop("LITM_DEBUG", None)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=err,
            cwd=str(tmp),
            env=full_env,
            start_new_session=True,
            preexec_fn=None if max_data_mb is None else _limit_data(max_data_mb),
        )
        timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, 9))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
        peak = usage.ru_maxrss / 1024
        if timed and "Maximum resident set size (kbytes):" in text:  # /usr/bin/time's report ends stderr
            head, _, report = text.partition("\tCommand being timed:")
            peak = int(report.split("Maximum resident set size (kbytes):")[1].split()[0]) / 1024
            text = head.removesuffix("Command exited with non-zero status " + str(proc.returncode) + "\n")
            text = "\n".join(x for x in text.split("\n") if not x.startswith("Command terminated by signal"))
        return Ran(proc.returncode, out.read().decode("utf-8", "replace"), text, peak, time.monotonic() - t0)


def _limit_data(mb: int):
    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_DATA, (mb * 2**20, mb * 2**20))

    return limit


def one_line(r: Ran, *needles: str, code: int | None = 1) -> None:
    """Exactly one non-empty stderr line, starting 'litm: ', holding every needle; no traceback."""
    assert "Traceback" not in r.out + r.err, r.err[-2000:]
    assert len(r.lines) == 1, r.err[-2000:]
    assert r.lines[0].startswith("litm: "), r.lines
    for n in needles:
        assert n.lower() in r.lines[0].lower(), (n, r.lines[0])
    if code is not None:
        assert r.code == code, (r.code, r.err)
    assert r.peak_mb is None or r.peak_mb < PEAK_MB, f"peak RSS {r.peak_mb:.0f} MB"


# --- files a user gives as a document ----------------------------------------------------------------

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
TYPES = (
    '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="xml" ContentType="application/xml"/></Types>'
)


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


@pytest.mark.own_process
def test_docx_with_a_300_mb_text_run(tmp_path, run_docx):
    r = prompt_doc(run_docx, tmp_path)
    one_line(r, "run.docx unpacks to", "the limit is 200 MB")


@pytest.mark.own_process
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
    line = b'{"question": "q", "answers": ["a"], "passages": ["' + b"z" * 10_000 + b'"]}\n'
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


@pytest.mark.own_process
def test_gzip_bomb_task_file_in_the_cli(bomb, tmp_path):
    one_line(run(["tasks", "info", str(bomb)], tmp_path), "unpacks to more than 256 MB")


@pytest.mark.own_process
def test_gzip_bomb_task_upload(bomb, tmp_path):
    """The app's task upload (webapp/services/sweeps.uploaded) with its own, lower limit."""
    code = (
        "import sys; from pathlib import Path\n"
        "from components.tasks.importers import MAX_UPLOAD_TASK_BYTES, parse_tasks_bytes\n"
        "from components.tasks.model import TaskFileError\n"
        "try:\n"
        f"    parse_tasks_bytes('bomb.jsonl.gz', Path({str(bomb)!r}).read_bytes(), MAX_UPLOAD_TASK_BYTES)\n"
        "except TaskFileError as exc:\n"
        "    print('litm: ' + str(exc), file=sys.stderr); sys.exit(1)\n"
    )
    one_line(run(["-c", code], tmp_path, python=True), "unpacks to more than 64 MB")


@pytest.mark.own_process
def test_document_upload_of_a_zip_bomb_docx(tmp_path, run_docx):
    """The Playground's upload path (core.loaders.read_upload) with a 300 MB text run."""
    path = run_docx
    code = (
        "import sys; from pathlib import Path\n"
        "from components.core.loaders import DocumentError, read_upload\n"
        "try:\n"
        f"    read_upload('run.docx', Path({str(path)!r}).read_bytes())\n"
        "except DocumentError as exc:\n"
        "    print('litm: ' + str(exc), file=sys.stderr); sys.exit(1)\n"
    )
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


@pytest.mark.parametrize(
    "bad, why",
    [
        (
            b'{"question": "deep", "answers": ["a"], "passages": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
            "nests too deep",
        ),
        (
            b'{"question": "caf\xe9 au lait?", "answers": ["yes"], "passages": ["caf\xe9"], "gold": [0]}',
            "not UTF-8 text",
        ),
    ],
)
def test_one_bad_row_is_skipped_and_counted_never_the_whole_file(tmp_path, server, bad, why):
    """A deeply nested row or a Latin-1 row in a UTF-8 file refused the whole file; now it is one bad row."""
    toml = sweep_toml(tmp_path, base_url=server.openai_url, strategies=("baseline",))
    tasks = tmp_path / "facts.jsonl"
    good = tasks.read_bytes().splitlines()
    tasks.write_bytes(b"\n".join(good[:2] + [bad] + good[2:]) + b"\n")
    info = run(["tasks", "info", str(tasks)], tmp_path)
    assert info.code == 0 and f"{len(good)} tasks" in info.out and "1 bad rows" in info.out, (
        info.out,
        info.err,
    )
    assert "line 3: " in info.out and why in info.out, info.out
    r = run(["sweep", str(toml), "--dry-run"], tmp_path)
    assert r.code == 0 and "Traceback" not in r.err, r.err
    assert (
        r.lines == [r.lines[0]] and "1 task row(s) could not be read" in r.lines[0] and "line 3" in r.lines[0]
    )


def test_prompt_says_how_many_task_rows_it_skips(tmp_path):
    tasks = facts_file(tmp_path, 2)
    tasks.write_text(tasks.read_text() + "[1, 2\n")
    r = run(["prompt", "--task", str(tasks), "--json"], tmp_path)
    assert r.code == 0 and "Traceback" not in r.err
    assert len(r.lines) == 1 and "1 row(s) could not be read" in r.lines[0]


def same_ids(tasks: Path, task_id: str = "same") -> None:
    """Every task of the file gets one id (the issue's four tasks sharing one id)."""
    rows = [json.loads(x) for x in tasks.read_text().splitlines() if x.strip()]
    tasks.write_text("".join(json.dumps({**r, "id": task_id}) + "\n" for r in rows))


@pytest.mark.parametrize("shared", [False, True])
def test_every_trial_a_sweep_says_it_ran_is_in_the_store(tmp_path, server, shared):
    """Tasks that share an id would be one trial in the store while the sweep counts four: such a task set
    is refused with one line naming the id, before anything is sent or written."""
    toml = baseline_toml(tmp_path, server.openai_url, n_tasks=4, positions=(0.0, 1.0), concurrency=2)
    if shared:
        same_ids(tmp_path / "facts.jsonl")
    db = tmp_path / "s.sqlite"
    r = run(["sweep", str(toml), "--db", str(db), "--quiet"], tmp_path)
    if shared:
        one_line(r, "share ids", "'same' (4 tasks)")
        assert server.counts["total"] == 0
        with sqlite3.connect(db) as c:  # nothing was written: no sweep, no trial
            assert c.execute("SELECT COUNT(*) FROM sweeps").fetchone()[0] == 0
        one_line(run(["sweep", str(toml), "--dry-run"], tmp_path), "share ids")
        info = run(["tasks", "info", str(tmp_path / "facts.jsonl")], tmp_path)
        assert info.code == 0 and "duplicate task ids: 'same' (4 tasks)" in info.out, info.out
        return
    assert r.code == 0, r.err
    ran = int(r.out.split("(ran ")[1].split(",")[0])
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == ran == 8


# --- inputs that are not regular files, or too large: one bounded reader -----------------------------


@pytest.fixture
def fifo(tmp_path) -> Path:
    """A named pipe nobody writes to: reading it would wait forever."""
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)
    return path


def endless(r: Ran, *needles: str) -> None:
    one_line(r, *needles)
    assert r.seconds < 30, f"{r.seconds:.0f} s"


@pytest.mark.own_process
@pytest.mark.parametrize("source", ["/dev/zero", "fifo"])
def test_a_device_or_fifo_as_any_input_is_refused_at_once(tmp_path, server, fifo, source):
    """tasks in a sweep, the sweep config, LITM_PRICES, tasks info, score --input, prompt --task and --doc."""
    what = "a character device" if source == "/dev/zero" else "a FIFO"
    path = "/dev/zero" if source == "/dev/zero" else str(fifo)
    limits = {"timeout": 60, "max_data_mb": 3000}
    toml = config(tmp_path, server, tasks=f'"{path}"')
    endless(
        run(["sweep", str(toml), "--db", str(tmp_path / "s.sqlite"), "--quiet"], tmp_path, **limits), what
    )
    endless(run(["sweep", str(toml), "--dry-run"], tmp_path, **limits), what)
    endless(run(["sweep", path, "--dry-run"], tmp_path, **limits), what, "sweep config")
    good = config(tmp_path, server)
    endless(
        run(["sweep", str(good), "--dry-run"], tmp_path, env={"LITM_PRICES": path}, **limits),
        what,
        "price file",
    )
    endless(run(["tasks", "info", path], tmp_path, **limits), what, "task file")
    endless(run(["score", "--metric", "exact", "--input", path], tmp_path, **limits), what)
    endless(run(["prompt", "--task", path], tmp_path, **limits), what)
    doc = path
    if source == "fifo":
        doc = str(tmp_path / "doc.txt")
        os.mkfifo(doc)
    endless(run(["prompt", "--doc", doc, "--question", "q"], tmp_path, **limits), what, "a document")


@pytest.mark.own_process
def test_inputs_over_their_size_limit_are_refused_before_parsing(tmp_path, server):
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * (2 * 2**20))
    one_line(run(["sweep", str(big), "--dry-run"], tmp_path), "the limit is 1 MB for a sweep config")
    prices = tmp_path / "prices.json"
    prices.write_bytes(b" " * (2 * 2**20))
    one_line(
        run(
            ["sweep", str(config(tmp_path, server)), "--dry-run"], tmp_path, env={"LITM_PRICES": str(prices)}
        ),
        "the limit is 1 MB for a price file",
    )
    preds = tmp_path / "preds.jsonl"
    with preds.open("wb") as f:
        f.truncate(65 * 2**20)  # sparse: 65 MB of NUL bytes without writing them
    one_line(run(["score", "--metric", "exact", "--input", str(preds)], tmp_path), "the limit is 64 MB")


@pytest.mark.own_process
@pytest.mark.parametrize(
    "shape, needle",
    [
        ('{"models": [1, 2]}', "'models' must be an object"),
        ('{"models": {"openai": {"gpt-4o": {"input": "x", "output": 1}}}}', "must be numbers"),
        ('{"batch_discount": {"openai": {"factor": 7}}}', "needs a factor from 0 to 1"),
        ("[" * 200_000, "nests too deep"),
    ],
)
def test_a_price_file_of_the_wrong_shape_is_one_line(tmp_path, server, shape, needle):
    prices = tmp_path / "prices.json"
    prices.write_text(shape)
    r = run(["sweep", str(config(tmp_path, server)), "--dry-run"], tmp_path, env={"LITM_PRICES": str(prices)})
    one_line(r, "price file", needle)


# --- sweep configs and parameters ------------------------------------------------------------------


def config(tmp: Path, server, **sweep_keys) -> Path:
    """A small sweep config; sweep_keys replace (or add) keys of the [sweep] table (TOML values)."""
    toml = baseline_toml(
        tmp, server.openai_url, n_tasks=3, positions=(0.0, 1.0), concurrency=1, extra_model="max_retries = 0"
    )
    lines = toml.read_text().splitlines()
    for key, value in sweep_keys.items():
        lines = [x for x in lines if not x.startswith(f"{key} =")]
        lines.insert(1, f"{key} = {value}")
    toml.write_text("\n".join(lines) + "\n")
    return toml


@pytest.mark.parametrize(
    "keys, needle",
    [
        ({"positions": "[5000]"}, "position 5000 counts tokens"),
        ({"positions": "[nan]"}, "position must be 0 or more"),
        ({"positions": "[inf]"}, "position must be 0 or more"),
        ({"positions": "[-1]"}, "position must be 0 or more"),
        ({"positions": "[2.5]"}, "must be a whole number"),
        ({"colour": '"red"'}, "unknown key(s) colour"),
        ({"max_retry_after": "-5"}, "max_retry_after must be"),
        ({"fail_fast": "true"}, "fail_fast must be"),
        ({"tasks": '"missing.jsonl"'}, "missing.jsonl"),
    ],
)
def test_bad_config_values(tmp_path, server, keys, needle):
    one_line(run(["sweep", str(config(tmp_path, server, **keys)), "--dry-run"], tmp_path), needle)


@pytest.mark.parametrize(
    "setting, needle",
    [
        ('timeout = "abc"', "timeout must be a number from 0.001 to 86,400"),
        ("timeout = -1", "timeout must be a number"),
        ("base_url = 5", "base_url must be an http:// or https:// address"),
        ("api_key_env = 5", "api_key_env must be the name of an environment variable"),
        ('max_retries = "x"', "max_retries must be a whole number from 0 to 10"),
        ("requests_per_minute = 1e-300", "requests_per_minute must be a number from 0.01"),
    ],
)
def test_every_model_setting_is_checked_when_the_config_is_read(tmp_path, server, setting, needle):
    """Before: a TypeError on every trial ('abc'), 612 requests (-1), an unexpected error, a sweep that hung."""
    text = config(tmp_path, server).read_text()
    key = setting.split(" = ")[0]
    lines = [
        x for x in text.splitlines() if not x.startswith(f"{key} =") and not x.startswith("max_retries =")
    ]
    toml = tmp_path / "bad.toml"
    toml.write_text("\n".join(lines) + f"\n{setting}\n")
    one_line(run(["sweep", str(toml), "--dry-run"], tmp_path), f"models[0].{key}", needle)
    one_line(
        run(["sweep", str(toml), "--db", str(tmp_path / "s.sqlite"), "--quiet"], tmp_path, timeout=60), needle
    )
    assert server.counts["total"] == 0


def test_config_that_is_not_toml(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("[sweep\nname = ")
    one_line(run(["sweep", str(path)], tmp_path), "not valid TOML")


def test_api_key_in_a_config_is_refused(tmp_path, server):
    toml = sweep_toml(tmp_path, base_url=server.openai_url, extra_model='api_key = "sk-secret-123456789"')
    r = run(["sweep", str(toml)], tmp_path)
    one_line(r, "never put an API key")
    assert "sk-secret" not in r.err


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--length", "1000", "--position", "nan"], "--position is needed"),
        (["--length", "1000", "--position", "5000"], "past the end"),
        (["--param", "r=abc"], "not a whole number"),
        (["--index", "99"], "--index 99 is outside"),
        (["--documents", "5", "--position", "7"], "not an index of 5 documents"),
    ],
)
def test_bad_prompt_parameters(tmp_path, args, needle):
    tasks = facts_file(tmp_path, 2)
    one_line(run(["prompt", "--task", str(tasks), *args], tmp_path), needle)


@pytest.mark.parametrize(
    "position, needle",
    [("nan", "position must be 0 or more"), ("5000", "past the end of a 1,000-token document")],
)
def test_bad_build_positions(tmp_path, position, needle):
    tasks = facts_file(tmp_path, 2)
    r = run(
        [
            "tasks",
            "build",
            "--task",
            str(tasks),
            "--length",
            "1000",
            "--position",
            position,
            "--out",
            str(tmp_path / "o.jsonl"),
        ],
        tmp_path,
    )
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
    toml = config(tmp_path, server, lengths="[700, 1200]", positions="[0.0, 0.5, 1.0]")  # 18 trials
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
    toml = config(tmp_path, server, lengths="[700, 1200]", positions="[0.0, 0.5, 1.0]")
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
    toml = baseline_toml(tmp_path, server.openai_url, concurrency=1, extra_model="max_retries = 2")
    server.set(status=429, retry_after=0, fail_times=2)  # the call is tried twice more, then it answers
    r = run(["sweep", str(toml), "--db", str(tmp_path / "s.sqlite"), "--quiet"], tmp_path)
    assert r.code == 0, r.err
    assert server.counts["total"] == 4
    assert "calls sent 2 (4 HTTP requests, retries included)" in r.out, r.out


def test_rate_limit_wait_is_on_the_progress_line(tmp_path, server):
    toml = baseline_toml(tmp_path, server.openai_url, concurrency=1, extra_model="max_retries = 1")
    server.set(status=429, retry_after=2, fail_times=1)
    r = run(["sweep", str(toml), "--db", str(tmp_path / "s.sqlite")], tmp_path)
    assert r.code == 0, r.err
    assert "rate limited: waiting 2 s (the server's Retry-After)" in r.err


KEYS = {"ANTHROPIC_API_KEY": "sk-ant-test-0000", "OPENAI_API_KEY": "sk-test-0000"}
PROVIDERS = ["openai-compatible", "anthropic"]


def model_config(
    tmp: Path, server, provider: str, extra: str = "max_retries = 0", concurrency: int = 1
) -> Path:
    """3 tasks x 2 positions of baseline (6 trials) against the loopback server, as `provider`."""
    return baseline_toml(
        tmp,
        server.openai_url if provider != "anthropic" else server.anthropic_url,
        n_tasks=3,
        positions=(0.0, 1.0),
        concurrency=concurrency,
        extra_model=extra,
        provider=provider,
    )


def kinds(db: Path, tmp: Path) -> list[str]:
    return [x["error_kind"] for x in results(db, tmp)]


@pytest.mark.parametrize(
    "provider, kind",
    [(p, k) for k in ("deep", "inf_usage", "huge_usage") for p in PROVIDERS] + [("anthropic", "text_int")],
)
def test_absurd_or_mistyped_answers_are_bad_responses_not_bugs(tmp_path, server, provider, kind):
    """A 200,000-deep JSON (RecursionError), an infinite or 10^30 usage (OverflowError), Anthropic text: 5
    (TypeError): each trial an error of kind bad_response (it was `bug`), then retried."""
    toml, db = model_config(tmp_path, server, provider), tmp_path / "s.sqlite"
    server.set(malformed=kind)
    r = run(["sweep", str(toml), "--db", str(db), "--quiet"], tmp_path, env=KEYS)
    assert r.code == 3 and "Traceback" not in r.out + r.err and "errors 6" in r.out, (r.out, r.err)
    assert kinds(db, tmp_path) == ["bad_response"] * 6
    server.set(malformed=None)
    r = run(["sweep", str(toml), "--db", str(db), "--quiet", "--retry-errors"], tmp_path, env=KEYS)
    assert r.code == 0 and "errors 0" in r.out, (r.out, r.err)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    "how, kind, said",
    [
        ("gzip_garbage", "bad_response", "gzip"),
        ("reset", "transient", "the connection was dropped before the answer was complete"),
        ("redirect_file", "bad_response", "not http or https"),
    ],
)
def test_a_broken_answer_names_its_cause_and_does_not_stop_the_sweep(
    tmp_path, server, provider, how, kind, said
):
    """Not 'unreachable: could not connect' (the wrong advice), and not counted toward fail-fast as such."""
    toml, db = model_config(tmp_path, server, provider), tmp_path / "s.sqlite"
    server.set(misbehave=how)
    r = run(["sweep", str(toml), "--db", str(db), "--quiet"], tmp_path, env=KEYS)
    assert r.code == 3 and "Traceback" not in r.out + r.err and "errors 6" in r.out, (r.out, r.err)
    rows = results(db, tmp_path)
    assert [x["error_kind"] for x in rows] == [kind] * 6 and said in rows[0]["error"], rows[0]["error"]
    assert "could not connect" not in rows[0]["error"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_server_that_trickles_its_answer_does_not_hang_the_sweep(tmp_path, server, provider):
    """One byte every 2 s never trips a per-read timeout of 5 s; the whole answer must come within 5 s."""
    toml = model_config(tmp_path, server, provider, extra="max_retries = 0\ntimeout = 5", concurrency=6)
    db = tmp_path / "s.sqlite"
    server.set(misbehave="trickle", trickle_every=2.0)
    r = run(["sweep", str(toml), "--db", str(db), "--quiet"], tmp_path, env=KEYS, timeout=120)
    assert r.code == 3 and r.seconds < 60 and "errors 6" in r.out, (r.code, r.seconds, r.out, r.err)
    rows = results(db, tmp_path)
    assert {x["error_kind"] for x in rows} == {"transient"} and "timed out" in rows[0]["error"]


@pytest.mark.own_process
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("how", ["huge", "bomb"])
def test_an_answer_over_the_size_cap_is_an_error_in_bounded_memory(tmp_path, server, provider, how):
    """A 50 MB answer, or 1 MB of gzip unpacking to 1 GB: refused past 32 MB, never stored, memory bounded."""
    toml, db = model_config(tmp_path, server, provider, concurrency=2), tmp_path / "s.sqlite"
    server.set(misbehave=how)
    r = run(["sweep", str(toml), "--db", str(db), "--quiet"], tmp_path, env=KEYS, max_data_mb=3000)
    assert r.code == 3 and "errors 6" in r.out, (r.out, r.err)
    rows = results(db, tmp_path)
    assert {x["error_kind"] for x in rows} == {"bad_response"} and "larger than 32 MB" in rows[0]["error"]
    assert r.peak_mb < PEAK_MB and db.stat().st_size < 5 * 2**20, (r.peak_mb, db.stat().st_size)
    r2 = run(["results", "--db", str(db)], tmp_path)
    assert r2.code == 0 and r2.peak_mb < PEAK_MB
    print(
        f"{provider} {how}: sweep peak {r.peak_mb:.0f} MB, {r.seconds:.1f} s; store {db.stat().st_size / 1e6:.1f} MB; "
        f"results peak {r2.peak_mb:.0f} MB"
    )


@pytest.mark.own_process
def test_many_large_answers_at_once_stay_under_1_gb(tmp_path, server):
    """32 requests in flight, each answered with 50 MB: each is refused past 32 MB, and all the answers being
    read hold at most 256 MB at once (transport.HELD_BUDGET); peak RSS measured by /usr/bin/time -v (the
    process's own, without the test runner's memory that wait4 counts from before exec)."""
    toml = baseline_toml(
        tmp_path,
        server.openai_url,
        n_tasks=16,
        positions=(0.0, 1.0),
        concurrency=32,
        extra_model="max_retries = 0\ntimeout = 120",
    )
    server.set(misbehave="huge")
    r = run(["sweep", str(toml), "--db", str(tmp_path / "s.sqlite"), "--quiet"], tmp_path, timed=True)
    assert r.code == 3 and "errors 32" in r.out, (r.out, r.err[-2000:])
    print(f"32 x 50 MB answers at once: peak {r.peak_mb:.0f} MB, {r.seconds:.1f} s")
    assert r.peak_mb < PEAK_MB, f"peak RSS {r.peak_mb:.0f} MB"


def http_date(seconds_ahead: float) -> str:
    import email.utils

    return email.utils.formatdate(time.time() + seconds_ahead, usegmt=True)


@pytest.mark.slow  # waits 12 s, as the server asks
def test_an_http_date_retry_after_is_honoured_and_capped(tmp_path, server):
    toml, db = config(tmp_path, server, max_retry_after="5"), tmp_path / "s.sqlite"
    server.set(status=429, retry_after=http_date(600))
    r = run(["sweep", str(toml), "--db", str(db), "--quiet"], tmp_path)
    assert r.code == 3 and r.seconds < 60, (r.code, r.seconds, r.err)
    rows = results(db, tmp_path)
    assert {x["error_kind"] for x in rows} == {"rate_limited"}
    assert all(
        "the server asks to wait 59" in x["error"] or "the server asks to wait 600" in x["error"]
        for x in rows
    ), rows[0]["error"]
    server.reset()  # a date a few seconds ahead: waited for, as the server asks, by the one retry allowed
    server.set(status=429, retry_after=http_date(12), fail_times=1)
    toml = config(tmp_path, server, max_retry_after="30")
    text = toml.read_text()
    assert "max_retries = 0" in text  # the config above allows no retry at all (docs/providers.md)
    toml.write_text(text.replace("max_retries = 0", "max_retries = 1"))
    r = run(["sweep", str(toml), "--db", str(tmp_path / "t.sqlite")], tmp_path)
    assert r.code == 0 and "(the server's Retry-After)" in r.err, r.err


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


@pytest.mark.own_process  # two real processes at once
def test_two_processes_start_the_same_new_sweep_at_once(tmp_path, server):
    toml, db = config(tmp_path, server, concurrency="2"), tmp_path / "both.sqlite"
    server.set(delay=0.05)
    cmds = [[sys.executable, "-m", "components.cli", "sweep", str(toml), "--db", str(db), "--quiet"]] * 2
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(c, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for c in cmds
    ]
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
    from components.run.store import RunStore
    from components.run.store_io import put_trials

    db = tmp_path / "big.sqlite"
    rs = RunStore(db)
    sid = rs.open_sweep("big", {})
    put_trials(
        rs,
        sid,
        [
            {"trial_key": f"k{i}", "task": f"t{i}", "answer": "x" * 200, "strategy": "baseline"}
            for i in range(3000)
        ],
    )  # ~700 KB of CSV: far more than a pipe holds
    rs.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for fmt in ("csv", "json"):
        cmd = f"{sys.executable} -m components.cli results --db {db} --format {fmt} | head -1; exit ${{PIPESTATUS[0]}}"
        done = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, timeout=120)
        assert b"Broken pipe" not in done.stderr and b"Traceback" not in done.stderr, done.stderr
        assert done.stderr.strip() == b"" and done.stdout.strip() in (
            b"[",
            b"sweep,task" + done.stdout[10:].strip(),
        )
        assert done.returncode == 141  # documented: the reader went away


# --- exports given to litm import -------------------------------------------------------------------------

EXPORT = "task,strategy,model,score"
BAD_EXPORTS = {
    "a folder": (None, "folder.csv", "is a folder, not a file: give an export"),
    "a missing file": ("", "nope.csv", "cannot read nope.csv: no such file"),
    "an unclosed quote": (f'{EXPORT}\n"t,b,m,1\n', "quote.csv", "quote.csv is not a readable csv export ("),
    "broken JSON lines": (
        '{"task": "t", "strategy"\n',
        "bad.jsonl",
        "bad.jsonl is not a readable jsonl export (",
    ),
    "an empty CSV": ("\n", "empty.csv", "empty.csv is not a readable csv export (it is empty)"),
    "binary bytes": ("\x00\x01\udcff", "bin.csv", "bin.csv is not a readable csv export (not UTF-8 text)"),
    "other columns": (
        "a,b\n1,2\n",
        "cols.csv",
        "cols.csv is not a trials export (it lacks the column(s) model",
    ),
    "a length that is a word": (
        f"{EXPORT},length\nt,b,m,1,abc\n",
        "word.csv",
        "word.csv: row 1: length must be a whole number, got 'abc'",
    ),
    "a length past SQLite's integers": (
        f"{EXPORT},length\nt,b,m,1,1e30\n",
        "huge.csv",
        "huge.csv: row 1: length must be a whole number",
    ),
    "a score that is a word": (
        '{"task": "t", "strategy": "b", "model": "m", "score": "x"}\n',
        "score.jsonl",
        "score.jsonl: row 1: score must be a number, got 'x'",
    ),
}


@pytest.mark.parametrize("case", list(BAD_EXPORTS))
def test_a_bad_export_is_one_line_naming_it(tmp_path, case):
    content, name, needle = BAD_EXPORTS[case]
    path = tmp_path / name
    if content is None:
        path.mkdir()
    elif content:
        path.write_bytes(content.encode("utf-8", "surrogateescape"))
    r = run(["import", name, "--db", str(tmp_path / "i.sqlite")], tmp_path)
    one_line(r, needle)
    assert "unexpected error" not in r.err
    if content and (tmp_path / "i.sqlite").exists():
        with sqlite3.connect(tmp_path / "i.sqlite") as con:
            assert con.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == 0
