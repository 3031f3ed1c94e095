"""`litm app --workers N`: N app servers behind Debian's nginx, started and stopped by one command. A
browser stays with one server (its cookie), different browsers spread over the servers, the pages run
to the end through nginx (websockets passed through) in the load generator and in chromium, and
stopping the command stops every process it started."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from components.cli import workers
from tests.e2e.appserver import CHROMIUM, CHROMIUM_ARGS, free_port, settle, streamlit_app, wait_healthy

pytestmark = pytest.mark.slow  # tens of seconds end to end: make test, not make check

HAVE_NGINX = bool(shutil.which("nginx") or os.access("/usr/sbin/nginx", os.X_OK))
needs_nginx = pytest.mark.skipif(not HAVE_NGINX, reason="nginx is not installed (make test installs it)")


def worker_of(url: str, cookie: str | None = None) -> tuple[str, str]:
    """(the server that answered, the cookie nginx set)."""
    req = urllib.request.Request(
        f"{url}/_stcore/health", headers={"Cookie": f"{workers.COOKIE}={cookie}"} if cookie else {}
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.read() == b"ok"
        mine = [
            c.split(";")[0].partition("=")[2]
            for c in r.headers.get_all("Set-Cookie") or []
            if c.startswith(f"{workers.COOKIE}=")
        ]  # the server may set its own cookies too (XSRF)
        return r.headers["X-LITM-Worker"], mine[0] if mine else ""


def test_without_nginx_the_command_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(workers.shutil, "which", lambda name: None)
    monkeypatch.setattr(workers.os, "access", lambda path, mode: False)
    with pytest.raises(LookupError, match=r"apt-get install nginx"):
        workers.serve(8501, 2, lambda port: ["true"])
    with pytest.raises(ValueError, match="--workers must be 2-16"):
        workers.serve(8501, 1, lambda port: ["true"])


def test_the_nginx_config_is_sticky_and_passes_websockets(tmp_path):
    conf = workers.nginx_conf(8600, [9001, 9002], tmp_path)
    assert "hash $litm_worker consistent;" in conf and "server 127.0.0.1:9001;" in conf
    assert "server 127.0.0.1:9002;" in conf and "listen 127.0.0.1:8600;" in conf  # loopback only
    assert "proxy_set_header Upgrade $http_upgrade;" in conf and "proxy_http_version 1.1;" in conf
    assert "proxy_request_buffering off;" in conf  # uploads go straight to the session's server


@needs_nginx
def test_two_servers_behind_nginx_serve_a_class_and_keep_each_browser_on_one():
    from bench import bench_classroom

    with streamlit_app(workers=2) as url:
        first, cookie = worker_of(url)
        assert cookie and len(cookie) >= 16
        assert {worker_of(url, cookie)[0] for _ in range(5)} == {first}  # sticky: the same server each time
        seen = {worker_of(url)[0] for _ in range(16)}  # new browsers: both servers (all on one: 2 in 65,536)
        assert len(seen) == 2 and all(w.startswith("127.0.0.1:") for w in seen)
        c = bench_classroom.measure(sessions=4, window=1.0, pages=["home", "lesson"], url=url, timeout=180)
        assert c.errors == [] and len(c.visits) == 8
        assert all(v.ok and v.elements >= 5 for v in c.visits)

        if not os.path.exists(CHROMIUM):
            return
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:  # a real browser through nginx: cookie, page, websocket, chart
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.goto(url)
            settle(page, 120_000)
            page.wait_for_selector(".js-plotly-plot .scatterlayer .trace", timeout=60_000)
            text = page.inner_text("body")
            cookies = {c["name"]: c["value"] for c in page.context.cookies()}
            browser.close()
        assert "Lost in the middle" in text and "Traceback" not in text
        assert workers.COOKIE in cookies


@needs_nginx
def test_stopping_the_command_stops_every_process_it_started(tmp_path):
    port = free_port()
    env = {**os.environ, "HOME": str(tmp_path), "LITM_DB": str(tmp_path / "runs.sqlite")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "components.cli", "app", "--port", str(port), "--workers", "2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", proc, timeout=180)
        children = [
            int(p)
            for p in subprocess.run(
                ["pgrep", "-P", str(proc.pid)], capture_output=True, text=True
            ).stdout.split()
        ]
        assert len(children) == 3  # two app servers and nginx
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    assert f"http://127.0.0.1:{port} (2 app servers behind nginx" in out
    assert "You can now view" not in out  # the inner servers' own ports are not offered to the user
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{c}") for c in children):
        time.sleep(0.2)
    assert not any(os.path.exists(f"/proc/{c}") for c in children)
