"""`litm app --workers N`: N app servers behind nginx, started and stopped by one command.

A Streamlit server runs every session's script in one Python process, which runs Python code on one
core at a time. For a class on a machine with several cores, this starts N such servers on free
loopback ports and nginx (Debian's `nginx` package) in front of them on the given port:

- **Sticky sessions.** A browser's first request gets a cookie (`litm_worker`, a random id nginx makes)
  and every request carrying it goes to the same server (`hash ... consistent`), so a session's
  websocket, its uploads and its media stay with the server that holds the session. Streamlit's XSRF
  cookie is signed with one secret shared by the servers, so any of them accepts it.
- **One store.** The servers share the run store as they share it with `litm`: one SQLite file (WAL)
  on the same disk; a sweep started in the app runs in the server that the browser is bound to.
- **One command.** The servers and nginx are children of this process; it stops them all when it is
  stopped (Ctrl-C, SIGTERM) or when one of them exits.

Responses carry `X-LITM-Worker` (the loopback port of the server that answered), for the tests.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

COOKIE = "litm_worker"
MAX_WORKERS = 16


class NginxMissing(LookupError):
    """nginx is not installed; the message says how to install it."""


def nginx_binary() -> str:
    found = shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None
    )
    if not found:
        raise NginxMissing(
            "--workers needs nginx in front of the app servers: install it "
            "(Debian: apt-get install nginx) or run `litm app` without --workers"
        )
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nginx_conf(port: int, upstreams: list[int], prefix: Path) -> str:
    """nginx's configuration: listen on 127.0.0.1:`port`, pass every request (websockets too) to one of
    the `upstreams`, chosen by the browser's cookie."""
    servers = "\n".join(f"        server 127.0.0.1:{p};" for p in upstreams)
    temp = "\n".join(
        f"    {kind}_temp_path {prefix / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return f"""# made by `litm app --workers {len(upstreams)}`
worker_processes 1;
daemon off;
pid {prefix / "nginx.pid"};
error_log {prefix / "error.log"} warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
{temp}
    client_max_body_size 30m;
    map $cookie_{COOKIE} $litm_worker {{
        "" $request_id;
        default $cookie_{COOKIE};
    }}
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        "" close;
    }}
    upstream litm_app {{
        hash $litm_worker consistent;
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://litm_app;
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_read_timeout 1d;
            proxy_send_timeout 1d;
            proxy_buffering off;
            proxy_request_buffering off;
            add_header Set-Cookie "{COOKIE}=$litm_worker; Path=/; HttpOnly; SameSite=Lax" always;
            add_header X-LITM-Worker $upstream_addr always;
        }}
    }}
}}
"""


def wait_healthy(url: str, procs: list[subprocess.Popen], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in procs:
            if proc.poll() is not None:
                raise ChildProcessError(f"a server exited with code {proc.returncode} while starting")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise TimeoutError(f"no answer from {url} after {timeout:.0f} s")


def stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    deadline = time.monotonic() + 10
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def serve(port: int, workers: int, server_command) -> int:
    """Start `workers` app servers (`server_command(port)` gives one's argv) and nginx on `port`; wait
    until one of them exits or this process is told to stop; stop them all. Returns the exit code."""
    if not 2 <= workers <= MAX_WORKERS:
        raise ValueError(f"--workers must be 2-{MAX_WORKERS}, got {workers} (1: run `litm app` without it)")
    nginx = nginx_binary()
    secret = secrets.token_hex(32)  # one XSRF cookie secret for every server: any of them accepts the cookie
    procs: list[subprocess.Popen] = []
    stopping = []

    def on_signal(signum, _frame):
        stopping.append(signum)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    with tempfile.TemporaryDirectory(prefix="litm-app-") as folder:
        prefix = Path(folder)
        try:
            ports = [free_port() for _ in range(workers)]
            for p in ports:
                procs.append(
                    subprocess.Popen(  # their own "You can now view..." would name their inner ports
                        server_command(p),
                        env={**os.environ, "STREAMLIT_SERVER_COOKIE_SECRET": secret},
                        stdout=subprocess.DEVNULL,
                    )
                )
            for p in ports:
                wait_healthy(f"http://127.0.0.1:{p}/_stcore/health", procs)
            conf = prefix / "nginx.conf"
            conf.write_text(nginx_conf(port, ports, prefix))
            procs.append(
                subprocess.Popen([nginx, "-c", str(conf), "-p", str(prefix), "-e", str(prefix / "error.log")])
            )
            wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", procs, timeout=30)
            print(
                f"LITM Explorer: http://127.0.0.1:{port} ({workers} app servers behind nginx; Ctrl-C stops them)",
                flush=True,
            )
            while not stopping and all(proc.poll() is None for proc in procs):
                time.sleep(0.5)
            exited = [proc for proc in procs if proc.poll() is not None]
            if exited and not stopping:
                log = (
                    (prefix / "error.log").read_text(errors="replace")[-500:]
                    if (prefix / "error.log").exists()
                    else ""
                )
                print(
                    f"litm: a server exited (code {exited[0].returncode}); stopping the others"
                    + (f"\n{log}" if log and exited[0] is procs[-1] else ""),
                    file=sys.stderr,
                )
                return 1
            return 0
        finally:
            stop(procs)
            for s, handler in previous.items():
                signal.signal(s, handler)
