"""bench/bench_peer.py and its driver bench/peer_haystackbench.py, without network and without installing."""

from __future__ import annotations

import subprocess

import pytest

from bench import bench_peer, peer_haystackbench


def test_driver_arguments():
    args = peer_haystackbench.parse_args(
        [
            "--base-url",
            "http://127.0.0.1:8123/v1",
            "--calls",
            "300",
            "--concurrency",
            "16",
            "--db",
            "/tmp/x.sqlite",
        ]
    )
    assert (args.base_url, args.calls, args.concurrency, args.db) == (
        "http://127.0.0.1:8123/v1",
        300,
        16,
        "/tmp/x.sqlite",
    )
    assert (
        peer_haystackbench.parse_args(
            ["--base-url", "http://localhost:1/v1", "--calls", "1", "--db", "d"]
        ).concurrency
        == 32
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["--base-url", "https://api.openai.com/v1", "--calls", "10", "--db", "d"],  # never a real provider
        ["--base-url", "http://127.0.0.1:1/v1", "--calls", "0", "--db", "d"],
        ["--base-url", "http://127.0.0.1:1/v1", "--calls", "10"],
    ],
)
def test_driver_refuses(argv, capsys):
    with pytest.raises(SystemExit):
        peer_haystackbench.parse_args(argv)


@pytest.mark.parametrize("calls", [1, 2, 7, 10, 300, 500, 2001])
def test_grid_has_exactly_the_calls(calls):
    depths, trials = peer_haystackbench.grid(calls)
    assert len(depths) * trials == calls
    assert 1 <= trials <= 10
    assert len(set(depths)) == len(depths) and all(0.0 <= d <= 1.0 for d in depths)


def test_result_line_is_found_among_other_output():
    out = 'Resuming: 0/3 cells\nRESULT {"cells": 3, "errors": 0, "correct": 2, "seconds": 1.5}\n'
    assert bench_peer.parse_result(out) == {"cells": 3, "errors": 0, "correct": 2, "seconds": 1.5}
    with pytest.raises(ValueError):
        bench_peer.parse_result("Traceback (most recent call last):\n  ...\n")


def test_peer_env_keeps_the_peer_on_loopback(tmp_path):
    env = bench_peer.peer_env(str(tmp_path), tmp_path / "venv")
    assert env["OPENAI_API_KEY"] == "dummy-not-a-key"
    assert env["HTTPS_PROXY"].startswith("http://127.0.0.1:") and env["NO_PROXY"] == "127.0.0.1,localhost"
    assert env["HOME"] == str(tmp_path) and env["TIKTOKEN_CACHE_DIR"] == str(
        tmp_path / "venv" / "tiktoken-cache"
    )


def test_peer_dir_follows_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert bench_peer.peer_dir() == tmp_path / "litm-explorer" / "peer-haystackbench"


def test_a_complete_venv_is_reused(tmp_path, monkeypatch):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").write_text("")
    (tmp_path / "installed.txt").write_text(" ".join(bench_peer.PACKAGES))

    def no_subprocess(*a, **k):
        raise AssertionError("nothing should be created or installed")

    monkeypatch.setattr(bench_peer.subprocess, "run", no_subprocess)
    assert bench_peer.make_peer_venv(tmp_path) == tmp_path / "bin" / "python"


def no_server(*a, **k):
    raise AssertionError("no server when the peer cannot be measured")


def test_run_says_not_measured_when_the_venv_cannot_be_made(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setattr(bench_peer, "peer_dir", lambda: tmp_path / "a-file" / "venv")  # venv creation fails
    monkeypatch.setattr(bench_peer, "start_server", no_server)
    lines = bench_peer.run(trials=10)
    assert len(lines) == 1 and lines[0].startswith("peer: not measured (") and lines[0].endswith(")")


def test_run_says_not_measured_when_pip_is_offline(monkeypatch):
    def offline(root):
        raise subprocess.CalledProcessError(
            1,
            ["python", "-m", "pip", "install"],
            stderr="ERROR: No matching distribution found for haystackbench==0.1.0\n",
        )

    monkeypatch.setattr(bench_peer, "make_peer_venv", offline)
    monkeypatch.setattr(bench_peer, "start_server", no_server)
    assert bench_peer.run(trials=10) == [
        "peer: not measured (python -m pip install... failed: "
        "ERROR: No matching distribution found for haystackbench==0.1.0)"
    ]
