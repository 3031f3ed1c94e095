"""The local model in its own process: one worker per machine (per install), shared by every app server
and sweep, so a crash, a hang or an out-of-memory in llama.cpp ends one call with one line, never the
caller.

Why a worker of our own rather than llama.cpp's OpenAI-compatible server: the likelihood measure and the
KV-cache prefix reuse in whole 512-token chunks (components/providers/local.py) must give the same numbers
bit for bit, and only our own code over llama-cpp-python does that; the worker runs exactly that code.

Two kinds of process:
- the worker (`python -m components.providers.localworker serve`): pure Python, never loads llama.cpp. It
  listens on a Unix socket in the worker folder (`$LITM_WORKER_DIR`, else `~/.cache/litm-explorer/worker`;
  folder 0700, the socket 0600 and a 32-byte authkey file 0600: multiprocessing.connection's handshake),
  keeps one FIFO queue per model (calls wait their turn; `queue_length` says how many are ahead) and one
  model process per model. It is spawned on first use by whichever client needs it first (an fcntl lock
  makes sure only one is), in its own session (an app's Ctrl-C does not reach it), and exits after
  IDLE_S seconds without a call (`$LITM_WORKER_IDLE`), its model processes with it.
- a model process per model (`... localworker model`): loads the model with local.LocalProvider and answers
  one call at a time over a socket pair. Its faulthandler writes to the worker's log. When it dies (a
  signal), or gives no answer within the call's timeout (then the worker kills it), or runs out of memory,
  the worker answers THAT call with providers.base.LocalCrash ("the local model stopped (segmentation fault
  in llama.cpp): ...; fix: <command>; check: litm doctor") and starts a fresh model process for the next.

Messages are JSON (floats round-trip exactly: the same numbers as in-process, bit for bit).
"""

from __future__ import annotations

import asyncio
import contextvars
import faulthandler
import fcntl
import hashlib
import itertools
import json
import os
import platform
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from multiprocessing.connection import Client, Connection, Listener, wait
from pathlib import Path

from components.core.completion import Completion
from components.providers.attention import Attention
from components.providers.base import (
    CallCancelled,
    Interrupted,
    LocalCrash,
    ModelSpec,
    PromptTooLong,
    ProviderError,
    Settings,
)
from components.providers.likelihood import Scored
from components.providers.localmodel import REBUILD, LocalModelError, canonical, find_model

PROTOCOL = 1
ENV_DIR = "LITM_WORKER_DIR"  # the worker folder (socket, authkey, lock, log)
ENV_IDLE = "LITM_WORKER_IDLE"  # seconds without a call before the worker exits
ENV_TEST_CRASH = "LITM_WORKER_TEST_CRASH"  # tests only: "segv" makes the model process crash before each call
ENV_TEST_SLOW = "LITM_WORKER_TEST_SLOW"  # tests only: seconds the model process waits before each call
IDLE_S = 15 * 60
TESTING_IDLE_S = 60  # under the test suite (LITM_TESTING): a test run leaves no worker behind for long
LOAD_TIMEOUT = 300.0  # seconds to load a model (a first load may also reassemble and hash its weights)
START_TIMEOUT = 60.0  # seconds for a spawned worker to listen
CHECK = "check: litm doctor"
CPU_FAULTS: dict[int, str] = {
    signal.SIGSEGV: "segmentation fault",
    signal.SIGILL: "illegal instruction",
    signal.SIGBUS: "bus error",
    signal.SIGFPE: "floating-point exception",
}


def call_timeout(spec_timeout: float | None, prompt_chars: int, max_tokens: int = 0) -> float:
    """Seconds one call may take in the model once it is its turn: the model's timeout when it has one, else
    two minutes plus the prompt at 5 tokens/s (about 4 characters a token) and 2 s per token to write: far
    past a working model's time even on a 2-core machine busy with other work (SmolLM2 evaluated 23 tokens/s
    with load 9 on 2 cores), so only a hang reaches it."""
    if spec_timeout:
        return float(spec_timeout)
    return 120.0 + prompt_chars / 4 / 5 + 2.0 * max_tokens


# ---- where the worker lives ---------------------------------------------------------------------------


def package_root() -> Path:
    return Path(__file__).resolve().parents[2]


@lru_cache(maxsize=1)
def install_tag() -> str:
    """Ten hex digits naming this install (its folder and version): one worker per install."""
    try:
        from importlib.metadata import version

        release = version("litm-explorer")
    except Exception:  # a checkout without metadata: the path alone
        release = ""
    return hashlib.sha256(f"{package_root()}|{release}|{PROTOCOL}".encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Paths:
    folder: Path
    tag: str  # one worker per install: the code that answers is the code that asks

    @classmethod
    def here(cls) -> Paths:
        env = os.environ.get(ENV_DIR, "").strip()
        if env:
            folder = Path(env).expanduser()
        else:
            base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
            folder = Path(base) / "litm-explorer" / "worker"
        return cls(folder, install_tag())

    @property
    def socket(self) -> Path:
        return self.folder / f"worker-{self.tag}.sock"

    @property
    def lock(self) -> Path:
        return self.folder / f"worker-{self.tag}.lock"

    @property
    def log(self) -> Path:
        return self.folder / f"worker-{self.tag}.log"

    @property
    def authkey_file(self) -> Path:
        return self.folder / "authkey"

    def authkey(self) -> bytes:
        """The folder's key (0600, made once); only this user's processes can talk to the worker.

        Made whole in a private temporary file and linked into place, so two processes starting at
        once never read a half-written key: the first link wins and the other reads its key."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.folder, 0o700)
        for _ in range(3):
            try:
                key = self.authkey_file.read_bytes()
            except FileNotFoundError:
                key = None
            if key is not None and len(key) >= 16:
                return key
            if key is not None:  # a short key (damaged by hand): replace it whole
                self.authkey_file.unlink(missing_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".authkey-")  # 0600
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(secrets.token_bytes(32))
                os.link(tmp, self.authkey_file)  # atomic: fails if another process linked first
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
        return self.authkey_file.read_bytes()


# ---- the wire: JSON messages ---------------------------------------------------------------------------


def send(conn: Connection, obj: dict) -> None:
    conn.send_bytes(json.dumps(obj).encode("utf-8"))


def recv(conn: Connection) -> dict:
    return json.loads(conn.recv_bytes())


ERRORS = {
    "PromptTooLong": PromptTooLong,
    "LocalModelError": LocalModelError,
    "LocalCrash": LocalCrash,
    "CallCancelled": CallCancelled,
    "ProviderError": ProviderError,
}


def error_reply(exc: BaseException) -> dict:
    name = next((n for n, cls in ERRORS.items() if type(exc) is cls), "ProviderError")
    return {"ok": False, "error": name, "message": str(exc) or type(exc).__name__}


def raise_reply(reply: dict):
    if reply.get("ok"):
        return reply.get("result")
    raise ERRORS.get(reply.get("error"), ProviderError)(reply.get("message") or "the local model failed")


# ---- the client ------------------------------------------------------------------------------------------


@contextmanager
def locked(path: Path):
    with open(path, "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _dial(paths: Paths, key: bytes) -> Connection:
    conn = Client(str(paths.socket), family="AF_UNIX", authkey=key)
    send(conn, {"op": "hello", "protocol": PROTOCOL})
    reply = recv(conn)
    if reply.get("protocol") != PROTOCOL:
        conn.close()
        raise ConnectionRefusedError("a worker of another version")
    return conn


def connect(spawn: bool = True, paths: Paths | None = None) -> Connection | None:
    """A connection to the worker, spawning it when none listens (None when `spawn` is False and none
    does)."""
    paths = paths or Paths.here()
    key = paths.authkey()
    try:
        return _dial(paths, key)
    except (OSError, EOFError):
        if not spawn:
            return None
    with locked(paths.lock):  # one spawner at a time; the others find its worker listening
        try:
            return _dial(paths, key)
        except (OSError, EOFError):
            pass
        proc = start_worker(paths)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                return _dial(paths, key)
            except (OSError, EOFError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise LocalCrash(
                        f"the local model's worker did not start ({tail(paths.log, 0)}); {CHECK}"
                    ) from None
                time.sleep(0.05)


def child_env(extra: dict | None = None) -> dict:
    """The environment of a process of ours: this code first on its path (whatever the current folder)."""
    root = str(package_root())
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else ""), **(extra or {})}


def start_worker(paths: Paths) -> subprocess.Popen:
    paths.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(paths.log, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "components.providers.localworker", "serve"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=child_env({ENV_DIR: str(paths.folder)}),
            cwd=str(paths.folder),
            start_new_session=True,
            close_fds=True,
        )


_OPEN: set[Connection] = set()  # this process's connections waiting on the worker (interrupt_calls ends them)
_OPEN_LOCK = threading.Lock()
_STOPPING = threading.Event()
NEW_CALL_HOLD_S = 0.5
INTERRUPTED = (
    "the app stopped during this call to the local model, so it has no answer; it is sent again by "
    "--retry-errors (or when the sweep is resumed)"
)


CANCELLED = "you cancelled this run: the local model stopped it, and nothing of it is stored"


class LocalRun:
    """The calls one run (a Playground run) makes to the worker, from any thread or task started under
    `active()`: where its call waits (`where()`: the calls ahead of it, whether the model is being loaded)
    and `cancel()`, which ends them at once; the worker then stops the call in the model's process (it kills
    that process, whose next call starts a fresh one), so nothing of it is answered or stored."""

    def __init__(self) -> None:
        self.cancelled = threading.Event()
        self.lock = threading.Lock()
        self.open: dict[Connection, str] = {}  # connection -> the tag of its call in the worker's queue

    @contextmanager
    def active(self):
        token = _RUN.set(self)
        try:
            yield self
        finally:
            _RUN.reset(token)

    def cancel(self) -> int:
        """End this run's calls now (each raises CallCancelled); returns how many were waiting."""
        self.cancelled.set()
        with self.lock:
            waiting = list(self.open)
        for conn in waiting:
            hang_up(conn)
        return len(waiting)

    def where(self, paths: Paths | None = None) -> dict | None:
        """{"ahead": calls before this run's call in the model's queue, "loading": the model is being loaded
        (and timed) for it} while one of its calls is in the worker, else None."""
        with self.lock:
            tags = list(self.open.values())
        if not tags:
            return None
        try:
            reply = ask({"op": "where", "tag": tags[0]}, spawn=False, paths=paths)
        except (ProviderError, OSError):
            return None
        return reply if reply and reply.get("ok") and reply.get("ahead", -1) >= 0 else None


_RUN: contextvars.ContextVar[LocalRun | None] = contextvars.ContextVar("litm_local_run", default=None)


def hang_up(conn: Connection) -> None:
    """Shut down a connection's socket from any thread: its blocked recv returns (EOF) in the calling
    thread, and the worker sees the caller go."""
    try:  # a duplicate of its socket, shut down
        with socket.fromfd(conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def interrupt_calls() -> int:
    """End at once every call of this process that waits on the worker (the app stopping: SIGTERM), and
    refuse new ones: each raises Interrupted instead of waiting for the model. The worker, in its own
    session, goes on and serves other clients. Returns how many calls were waiting."""
    _STOPPING.set()
    with _OPEN_LOCK:
        waiting = list(_OPEN)
    for conn in waiting:
        hang_up(conn)
    return len(waiting)


def wait_calls(timeout: float) -> bool:
    """Wait until no call of this process waits on the worker (True), at most `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with _OPEN_LOCK:
            if not _OPEN:
                return True
        time.sleep(0.01)
    return False


def ask(message: dict, spawn: bool = True, paths: Paths | None = None) -> dict | None:
    """One request, its reply (None: no worker and `spawn` False). A worker that went away before it had
    the request is started again once; after it had it, the call ends with LocalCrash; a call this process
    stopped waiting for (interrupt_calls) ends with Interrupted, one its LocalRun cancelled with
    CallCancelled."""
    run = _RUN.get() if message.get("op") == "call" else None
    if run is not None:
        message = {**message, "tag": secrets.token_hex(8)}  # its place in the worker's queue (LocalRun.where)
    for attempt in (0, 1):
        if _STOPPING.is_set():  # a call that starts while the app stops: held a moment, for the sweep that
            time.sleep(NEW_CALL_HOLD_S)  # asks it is being cancelled (its trial is then never written)
            raise Interrupted(INTERRUPTED)
        if run is not None and run.cancelled.is_set():
            raise CallCancelled(CANCELLED)
        conn = connect(spawn, paths)
        if conn is None:
            return None
        with _OPEN_LOCK:
            _OPEN.add(conn)
        if run is not None:
            with run.lock:
                run.open[conn] = message["tag"]
            if run.cancelled.is_set():  # cancelled while this call connected
                hang_up(conn)
        try:
            try:
                send(conn, message)
            except OSError:
                if attempt == 0 and not _STOPPING.is_set():
                    continue
                raise (
                    Interrupted(INTERRUPTED)
                    if _STOPPING.is_set()
                    else CallCancelled(CANCELLED)
                    if run is not None and run.cancelled.is_set()
                    else LocalCrash(f"the local model's worker could not be reached; {CHECK}")
                ) from None
            try:
                return recv(conn)
            except (EOFError, OSError):
                if _STOPPING.is_set():
                    raise Interrupted(INTERRUPTED) from None
                if run is not None and run.cancelled.is_set():
                    raise CallCancelled(CANCELLED) from None
                raise LocalCrash(
                    "the local model stopped (its worker process ended); it restarts for the next "
                    f"call; {CHECK}"
                ) from None
        finally:
            with _OPEN_LOCK:
                _OPEN.discard(conn)
            if run is not None:
                with run.lock:
                    run.open.pop(conn, None)
            conn.close()
    return None


def model_key(spec: ModelSpec) -> dict:
    from components.providers.local import threads_setting

    return {"model": canonical(spec.model), "ctx": spec.context_window or 0, "threads": threads_setting()}


def queue_length(spec: ModelSpec | None = None) -> int:
    """Calls waiting for or running on the local model (`spec`'s, else every model's) right now, in the
    worker every process shares: a new call waits behind them. 0 when no worker runs."""
    message = {"op": "queue", **(model_key(spec) if spec is not None else {})}
    try:
        reply = ask(message, spawn=False)
    except (ProviderError, OSError):
        return 0
    return int(reply.get("ahead", 0)) if reply else 0


def loading(spec: ModelSpec) -> bool:
    """The worker is loading (and timing) `spec`'s model right now, for the call whose turn it is."""
    try:
        name = model_key(spec)["model"]
        models = (status() or {}).get("models", [])
    except (ProviderError, OSError):
        return False
    return any(m.get("model") == name and m.get("loading") for m in models)


def status(paths: Paths | None = None) -> dict | None:
    """The worker's pid and, per model, its queue and model process (None: no worker runs)."""
    return ask({"op": "status"}, spawn=False, paths=paths)


# ---- the calibration: how fast a model reads and writes on this machine, timed by the first warm-up ------

CALIBRATION_MESSAGES = [
    {"role": "user", "content": "Count from one to twenty in words, separated by commas."}
]
CALIBRATION_TOKENS = 8  # answer tokens timed (a few seconds in all with the prompt's evaluation)


def speed_file(paths: Paths | None = None) -> Path:
    return (paths or Paths.here()).folder / "speed.json"


def machine_key(model: str, threads: int) -> str:
    """One calibration per model, llama.cpp threads and machine (the folder may be shared by machines)."""
    return f"{model}|threads {threads}|{platform.node()}|{os.cpu_count()} cpus"


def calibration(spec: ModelSpec, paths: Paths | None = None) -> dict | None:
    """The local model's calibration on this machine ({"prompt_tps", "per_token_s", "load_s", "at"}), timed
    by the worker on the first warm-up of that model here (see calibrate), else None. Read from the worker folder:
    no worker is needed."""
    try:
        key = model_key(spec)
    except (ProviderError, ValueError):
        return None
    return read_calibration(paths or Paths.here(), key["model"], key["threads"])


def read_calibration(paths: Paths, model: str, threads: int) -> dict | None:
    try:
        saved = json.loads(speed_file(paths).read_text())
        entry = saved.get(machine_key(model, threads))
        return entry if isinstance(entry, dict) and float(entry.get("prompt_tps", 0)) > 0 else None
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def save_calibration(paths: Paths, model: str, threads: int, entry: dict) -> None:
    """Add one calibration to the worker folder's file (written whole, then renamed into place)."""
    path = speed_file(paths)
    with locked(paths.folder / "speed.lock"):
        try:
            saved = json.loads(path.read_text())
            saved = saved if isinstance(saved, dict) else {}
        except (OSError, ValueError):
            saved = {}
        saved[machine_key(model, threads)] = entry
        fd, tmp = tempfile.mkstemp(dir=paths.folder, prefix=".speed-")
        with os.fdopen(fd, "w") as f:
            json.dump(saved, f, indent=1, sort_keys=True)
        os.replace(tmp, path)


def calibrate(provider, loaded) -> dict:
    """In the model's process, right after it loaded: the prompt's evaluation speed (local.speed: a fixed
    600-token text, timed) and the seconds per answer token (a short answer, timed, less its prompt at that
    speed): the first guess of how long a call takes here, before any call was measured."""
    from components.providers.local import speed

    rate = speed(loaded)
    start = time.perf_counter()
    out = provider.complete_sync(CALIBRATION_MESSAGES, Settings(max_tokens=CALIBRATION_TOKENS))
    seconds = time.perf_counter() - start
    per_token = max(seconds - out.input_tokens / rate, 0.0) / max(out.output_tokens, 1)
    return {"prompt_tps": rate, "per_token_s": per_token, "answer_tokens": out.output_tokens}


def shutdown(paths: Paths | None = None) -> bool:
    """Stop the worker and its model processes now (tests; `litm doctor --restart`)."""
    try:
        return ask({"op": "shutdown"}, spawn=False, paths=paths) is not None
    except ProviderError:
        return True


class WorkerProvider:
    """The Provider of the `local` provider (make_provider): `complete`, `score`, `attention` and `speed` as
    local.LocalProvider has them, each answered by the model in the worker."""

    def __init__(self, spec: ModelSpec, reuse: bool = True):
        import importlib.util

        from components.providers.local import INSTALL
        from components.providers.runtime import pending

        building = pending()  # make app builds the runtime in the background: one line until it is ready
        if building is not None:
            raise LocalModelError(building)
        found = find_model(spec.model)  # fails now, with the pip command, if the weights are missing
        if importlib.util.find_spec("llama_cpp") is None:  # found, never imported here: it runs in the worker
            raise LocalModelError(f"the local provider needs llama-cpp-python; install it with: {INSTALL}")
        self.spec = replace(spec, model=canonical(spec.model))
        self.name = getattr(found, "name", str(found))
        self.reuse = reuse
        self.key = model_key(self.spec)

    def call(self, what: str, timeout: float | None = None, **fields) -> object:
        message = {"op": "call", "what": what, **self.key, "reuse": self.reuse, "timeout": timeout, **fields}
        return raise_reply(
            ask(message)
            or {
                "ok": False,
                "error": "LocalCrash",
                "message": f"the local model's worker did not answer; {CHECK}",
            }
        )

    def complete_sync(self, messages: list[dict], settings: Settings) -> Completion:
        chars = len(json.dumps(messages))
        out = self.call(
            "complete",
            call_timeout(self.spec.timeout, chars, settings.max_tokens),
            messages=messages,
            settings=asdict(settings),
        )
        return Completion(**out)

    def score_sync(self, messages: list[dict], answer: str) -> Scored:
        chars = len(json.dumps(messages)) + len(answer)
        out = self.call("score", call_timeout(self.spec.timeout, chars), messages=messages, answer=answer)
        return Scored(
            tuple(out["token_logprobs"]),
            out["prompt_tokens"],
            out["evaluated"],
            out["latency_s"],
            out["model"],
        )

    def attention_sync(self, messages: list[dict], regions: list) -> Attention:
        timeout = call_timeout(
            self.spec.timeout, len(json.dumps(messages))
        )  # a crash: LocalCrash, as any call
        out = self.call("attention", timeout, messages=messages, regions=[list(r) for r in regions])
        return Attention.from_dict(out if isinstance(out, dict) else {})

    async def complete(self, messages: list[dict], settings: Settings) -> Completion:
        return await asyncio.to_thread(self.complete_sync, messages, settings)

    async def score(self, messages: list[dict], answer: str) -> Scored:
        return await asyncio.to_thread(self.score_sync, messages, answer)

    async def attention(self, messages: list[dict], regions: list) -> Attention:
        return await asyncio.to_thread(self.attention_sync, messages, regions)

    def speed(self) -> float:
        """Prompt tokens per second of the model in the worker (local.speed)."""
        return float(self.call("speed", call_timeout(self.spec.timeout, 4000)))

    def info(self) -> dict:
        """The model process's n_ctx, pid and counters (tests, `litm doctor`)."""
        return self.call("info", 60.0)

    def warm(self) -> dict:
        """Load the model in the worker (if it is not) and return its calibration on this machine (timed
        by the first warm-up: a few seconds; the saved figures afterwards). Calls behind a warm-up are told
        the model is loading."""
        out = self.call("calibrate", LOAD_TIMEOUT + call_timeout(None, 4000, CALIBRATION_TOKENS))
        return out if isinstance(out, dict) else {}


# ---- faults: one line each ------------------------------------------------------------------------------


def tail(path: Path, offset: int, limit: int = 64_000) -> str:
    """What a log holds past `offset` (the last `limit` characters)."""
    try:
        with open(path, "rb") as f:
            f.seek(max(offset, os.path.getsize(path) - limit))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def fault_line(returncode: int | None, log_text: str = "", timeout: float | None = None) -> str:
    """The one line a call gets when the model's process stopped under it."""
    if timeout is not None:
        return (
            f"the local model stopped (no answer within {timeout:.0f} s: it hung, or the machine is far too "
            "busy); it restarts for the next call; raise the model's timeout if the machine is busy; " + CHECK
        )
    in_llama = " in llama.cpp" if "llama_cpp" in log_text or "libggml" in log_text else ""
    if returncode is not None and returncode < 0:
        sig = -returncode
        if sig in CPU_FAULTS:
            return (
                f"the local model stopped ({CPU_FAULTS[sig]}{in_llama}): this llama-cpp-python build does not "
                f"run on this CPU; fix: {REBUILD}; {CHECK}"
            )
        if sig == signal.SIGKILL:
            return (
                "the local model stopped (killed: out of memory, or stopped by another program); it restarts "
                "for the next call; if memory is short, close other programs or lower the context window; "
                + CHECK
            )
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"the local model stopped ({name}{in_llama}); it restarts for the next call; {CHECK}"
    if "MemoryError" in log_text or "out of memory" in log_text.lower():
        return (
            "the local model stopped (out of memory); it restarts for the next call; close other programs or "
            f"lower the context window; {CHECK}"
        )
    return f"the local model stopped (its process exited with code {returncode}); it restarts for the next call; {CHECK}"


# ---- the worker ------------------------------------------------------------------------------------------


@dataclass
class ModelProcess:
    proc: subprocess.Popen
    conn: Connection
    n_ctx: int = 0
    load_s: float = 0.0

    def stop(self) -> int | None:
        try:
            self.conn.close()
        except OSError:
            pass
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            return self.proc.wait(10)
        except subprocess.TimeoutExpired:
            return None


@dataclass
class Slot:
    """One model: its queue (call ids, the first one running) and its process."""

    key: tuple
    queue: list = field(default_factory=list)
    cond: threading.Condition = field(default_factory=threading.Condition)
    child: ModelProcess | None = None
    running: int | None = None  # the call id the model process has right now
    loading: bool = False  # the model process is being started (loaded, then timed) for the first call
    tags: dict = field(default_factory=dict)  # call id -> the client's tag (LocalRun.where)
    warm: set = field(default_factory=set)  # the ids of warm-ups (load and time the model; not runs)


class Worker:
    def __init__(self, paths: Paths):
        self.paths = paths
        self.slots: dict[tuple, Slot] = {}
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.busy = 0
        self.last = time.monotonic()
        env = os.environ.get(ENV_IDLE, "").strip()
        self.idle = float(env) if env else (TESTING_IDLE_S if os.environ.get("LITM_TESTING") else IDLE_S)

    # the listener -----------------------------------------------------------------------------------
    def serve(self) -> None:
        key = self.paths.authkey()
        sock = self.paths.socket
        guard = open(self.paths.lock.with_suffix(".serve"), "a+b")  # held for the worker's life
        try:
            fcntl.flock(guard, fcntl.LOCK_EX | fcntl.LOCK_NB)  # exactly one worker binds this socket
        except OSError:
            log(f"worker {os.getpid()}: another worker serves this folder: exiting")
            return
        if sock.exists():
            sock.unlink()  # left by a worker that died: no one listens on it
        listener = Listener(str(sock), family="AF_UNIX", authkey=key)
        os.chmod(sock, 0o600)
        log(f"worker {os.getpid()} listening")
        threading.Thread(target=self.accept, args=(listener,), daemon=True, name="accept").start()
        while True:
            time.sleep(min(1.0, self.idle / 4))
            with self.lock:
                idle = self.busy == 0 and time.monotonic() - self.last > self.idle
            if idle:
                log(f"worker {os.getpid()} idle for {self.idle:.0f} s: exiting")
                self.exit(listener)

    def exit(self, listener=None) -> None:
        try:
            self.paths.socket.unlink()
        except OSError:
            pass
        for slot in list(self.slots.values()):
            if slot.child is not None:
                slot.child.stop()
        os._exit(0)

    def accept(self, listener: Listener) -> None:
        while True:
            try:
                conn = listener.accept()
            except Exception:  # a client that failed its handshake or went away
                continue
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn: Connection) -> None:
        try:
            while True:
                try:
                    message = recv(conn)
                except (EOFError, OSError, ValueError):
                    return
                op = message.get("op")
                if op == "hello":
                    send(conn, {"ok": True, "protocol": PROTOCOL, "pid": os.getpid()})
                elif op == "queue":
                    send(conn, {"ok": True, "ahead": self.ahead(message)})
                elif op == "where":
                    send(conn, self.where(str(message.get("tag"))))
                elif op == "status":
                    send(conn, self.status())
                elif op == "shutdown":
                    send(conn, {"ok": True})
                    self.exit()
                elif op == "call":
                    reply = self.call(conn, message)
                    if reply is not None:
                        send(conn, reply)
                else:
                    send(conn, {"ok": False, "error": "ProviderError", "message": f"unknown request {op!r}"})
        except OSError:
            pass
        finally:
            conn.close()

    def slot(self, message: dict) -> Slot:
        key = (str(message.get("model")), int(message.get("ctx") or 0), int(message.get("threads") or 0))
        with self.lock:
            return self.slots.setdefault(key, Slot(key))

    def ahead(self, message: dict) -> int:
        """Calls waiting or running (warm-ups, which only load and time a model, are not runs)."""
        slots = [self.slot(message)] if "model" in message else list(self.slots.values())
        return sum(len([i for i in s.queue if i not in s.warm]) for s in slots)

    def where(self, tag: str) -> dict:
        """The call tagged `tag`: how many calls are before it in its model's queue, and whether the model is
        being loaded for it (ahead -1: no such call)."""
        for slot in list(self.slots.values()):
            with slot.cond:
                ids = [i for i, t in slot.tags.items() if t == tag]
                if ids and ids[0] in slot.queue:
                    before = slot.queue[: slot.queue.index(ids[0])]
                    runs = [i for i in before if i not in slot.warm]  # a warm-up ahead is the model loading
                    loading = not runs and (slot.loading or len(before) > 0)
                    return {"ok": True, "ahead": len(runs), "loading": loading}
        return {"ok": True, "ahead": -1, "loading": False}

    def status(self) -> dict:
        models = []
        for slot in list(self.slots.values()):
            child = slot.child
            alive = child is not None and child.proc.poll() is None
            models.append(
                {
                    "model": slot.key[0],
                    "ctx": slot.key[1],
                    "threads": slot.key[2],
                    "queue": len(slot.queue),
                    "running": slot.running,
                    "loading": slot.loading,
                    "pid": child.proc.pid if alive else None,
                }
            )
        return {
            "ok": True,
            "pid": os.getpid(),
            "models": models,
            "idle_s": self.idle,
            "log": str(self.paths.log),
        }

    # one call ---------------------------------------------------------------------------------------
    def call(self, conn: Connection, message: dict) -> dict | None:
        slot = self.slot(message)
        me = next(self.ids)
        with self.lock:
            self.busy += 1
        try:
            with slot.cond:
                slot.queue.append(me)
                if message.get("what") == "calibrate":
                    slot.warm.add(me)
                if message.get("tag"):
                    slot.tags[me] = str(message["tag"])
                while slot.queue[0] != me:
                    slot.cond.wait(0.5)
                    if slot.queue[0] != me and conn.poll(
                        0
                    ):  # the caller went away (or cancelled) while it waited
                        slot.queue.remove(me)
                        slot.tags.pop(me, None)
                        slot.warm.discard(me)
                        slot.cond.notify_all()
                        return None
            try:
                return self.run(slot, me, message, conn)
            finally:
                with slot.cond:
                    slot.queue.remove(me)
                    slot.tags.pop(me, None)
                    slot.warm.discard(me)
                    slot.running = None
                    slot.cond.notify_all()
        finally:
            with self.lock:
                self.busy -= 1
                self.last = time.monotonic()

    def run(self, slot: Slot, me: int, message: dict, caller: Connection | None = None) -> dict | None:
        offset = os.path.getsize(self.paths.log) if self.paths.log.exists() else 0
        slot.running = me
        if slot.child is None or slot.child.proc.poll() is not None:
            if slot.child is not None:
                log(
                    f"model process {slot.child.proc.pid} had ended (code {slot.child.proc.returncode}): restarting"
                )
            slot.child = None
            slot.loading = True
            try:
                slot.child = self.start_model(slot.key)
            except _Fault as f:
                return {
                    "ok": False,
                    "error": "LocalCrash",
                    "message": fault_line(f.code, tail(self.paths.log, offset), f.timeout),
                }
            except ProviderError as e:
                return error_reply(e)
            finally:
                slot.loading = False
        child = slot.child
        if message.get("what") == "calibrate":  # a warm-up: the model loaded, then timed once on this machine
            slot.loading = True
            try:
                entry = self.calibrate(slot)
            except _Fault as f:
                return {
                    "ok": False,
                    "error": "LocalCrash",
                    "message": fault_line(f.code, tail(self.paths.log, offset), f.timeout),
                }
            finally:
                slot.loading = False
            return {"ok": True, "result": entry} if entry else error_reply(ProviderError("no calibration"))
        if caller is not None and caller.poll(0):  # the caller cancelled (or went) while the model loaded
            return None
        request = {
            k: v for k, v in message.items() if k not in ("op", "model", "ctx", "threads", "timeout", "tag")
        }
        timeout = float(message.get("timeout") or call_timeout(None, 32_000))
        try:
            send(child.conn, request)
            ready = wait([child.conn] + ([caller] if caller is not None else []), timeout)
            if child.conn not in ready and caller is not None and caller in ready:
                # the caller cancelled (LocalRun.cancel) or went away: the call stops now, in the model's
                # process too (killed: llama.cpp cannot be stopped mid-evaluation); the next call starts a fresh one
                slot.child = None
                child.stop()
                log(f"model process {child.proc.pid}: its caller cancelled the call: stopped")
                return None
            if child.conn not in ready:
                slot.child = None
                child.stop()
                log(f"model process {child.proc.pid}: no answer within {timeout:.0f} s: killed")
                return {"ok": False, "error": "LocalCrash", "message": fault_line(None, timeout=timeout)}
            return recv(child.conn)
        except (EOFError, OSError):
            slot.child = None
            code = child.stop()
            text = tail(self.paths.log, offset)
            log(f"model process {child.proc.pid} stopped during a call (code {code})")
            return {"ok": False, "error": "LocalCrash", "message": fault_line(code, text)}

    def calibrate(self, slot: Slot) -> dict | None:
        """The slot's model timed once on this machine (calibrate, in its process) and saved to the worker
        folder, on the first warm-up (WorkerProvider.warm); the saved one afterwards. None if timing it
        failed."""
        model, _, threads = slot.key
        saved = read_calibration(self.paths, model, threads)
        if saved is not None or slot.child is None:
            return saved
        child = slot.child
        try:
            send(child.conn, {"what": "calibrate"})
            limit = call_timeout(None, 4000, CALIBRATION_TOKENS)
            if not child.conn.poll(limit):
                slot.child = None
                child.stop()
                raise _Fault(None, limit)
            reply = recv(child.conn)
        except (EOFError, OSError):
            slot.child = None
            raise _Fault(child.stop()) from None
        if not reply.get("ok"):
            log(f"model process {child.proc.pid}: {model} could not be timed: {reply.get('message')}")
            return None
        entry = {**reply["result"], "load_s": child.load_s, "at": time.strftime("%Y-%m-%d %H:%M:%S")}
        save_calibration(self.paths, model, threads, entry)
        log(
            f"model process {child.proc.pid}: {model} reads {entry['prompt_tps']:.0f} prompt tokens/s and "
            f"writes a token in {entry['per_token_s']:.3f} s"
        )
        return entry

    def start_model(self, key: tuple) -> ModelProcess:
        model, ctx, threads = key
        ours, theirs = socket.socketpair()
        extra = {"LITM_LOCAL_THREADS": str(threads)} if threads else {}
        with open(self.paths.log, "ab") as logf:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "components.providers.localworker",
                    "model",
                    "--fd",
                    str(theirs.fileno()),
                    "--model",
                    model,
                    "--ctx",
                    str(ctx),
                ],
                stdin=subprocess.DEVNULL,
                stdout=logf,
                stderr=logf,
                pass_fds=(theirs.fileno(),),
                env=child_env(extra),
                cwd=str(self.paths.folder),
            )
        theirs.close()
        child = ModelProcess(proc, Connection(ours.detach()))
        try:
            if not child.conn.poll(LOAD_TIMEOUT):
                child.stop()
                raise _Fault(None, LOAD_TIMEOUT)
            ready = recv(child.conn)
        except (EOFError, OSError):
            raise _Fault(child.stop()) from None
        if not ready.get("ok"):
            child.stop()
            raise_reply(ready)
        child.n_ctx = int(ready["result"]["n_ctx"])
        child.load_s = float(ready["result"]["load_s"])
        log(
            f"model process {proc.pid}: {model} loaded (n_ctx {child.n_ctx}) in {ready['result']['load_s']:.1f} s"
        )
        return child


class _Fault(Exception):
    def __init__(self, code: int | None, timeout: float | None = None):
        super().__init__(code)
        self.code, self.timeout = code, timeout


def log(line: str) -> None:
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}", file=sys.stderr, flush=True)


# ---- the model process -------------------------------------------------------------------------------------


def model_main(fd: int, model: str, ctx: int) -> None:
    """Load the model, say "ready", then answer one request at a time until the worker closes the pipe."""
    faulthandler.enable(file=sys.stderr, all_threads=True)  # the worker's log: the client names the signal
    from components.providers.local import LocalProvider, close_all, speed

    conn = Connection(fd)
    start = time.perf_counter()
    try:
        provider = LocalProvider(ModelSpec("local", model, context_window=ctx or None))
        loaded = provider.ensure_loaded()
    except ProviderError as e:
        send(conn, error_reply(e))
        return
    except Exception as e:  # what went wrong, as the call's one line
        send(conn, error_reply(ProviderError(f"the local model could not load: {type(e).__name__}: {e}")))
        return
    send(conn, {"ok": True, "result": {"n_ctx": loaded.n_ctx, "load_s": time.perf_counter() - start}})
    crash = os.environ.get(ENV_TEST_CRASH, "")
    slow = float(os.environ.get(ENV_TEST_SLOW, "") or 0)
    while True:
        try:
            request = recv(conn)
        except (EOFError, OSError):
            break
        if crash == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
        provider.reuse = bool(request.get("reuse", True))
        what = request.get("what")
        if slow and what in ("complete", "score", "attention"):
            time.sleep(slow)
        try:
            if what == "calibrate":
                result = calibrate(provider, loaded)
            elif what == "complete":
                result = asdict(provider.complete_sync(request["messages"], Settings(**request["settings"])))
            elif what == "score":
                s = provider.score_sync(request["messages"], request["answer"])
                result = {
                    "token_logprobs": list(s.token_logprobs),
                    "prompt_tokens": s.prompt_tokens,
                    "evaluated": s.evaluated,
                    "latency_s": s.latency_s,
                    "model": s.model,
                }
            elif what == "attention":
                result = provider.attention_sync(request["messages"], request["regions"]).reply()
            elif what == "speed":
                result = speed(loaded)
            elif what == "info":
                import llama_cpp

                result = {
                    "n_ctx": loaded.n_ctx,
                    "pid": os.getpid(),
                    "prompted": loaded.prompted,
                    "evaluated": loaded.evaluated,
                    "llama_cpp": llama_cpp.__version__,
                }
            else:
                raise ProviderError(f"unknown call {what!r}")
            reply = {"ok": True, "result": result}
        except ProviderError as e:
            reply = error_reply(e)
        except MemoryError:
            reply = error_reply(LocalCrash(fault_line(1, "MemoryError")))
        except Exception as e:  # the call's one line; the model process goes on
            reply = error_reply(ProviderError(f"the local model failed: {type(e).__name__}: {e}"))
        send(conn, reply)
    close_all()


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m components.providers.localworker")
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("serve", help="the worker (spawned by the first client that needs it)")
    m = sub.add_parser("model", help="one model's process (spawned by the worker)")
    m.add_argument("--fd", type=int, required=True)
    m.add_argument("--model", required=True)
    m.add_argument("--ctx", type=int, default=0)
    args = parser.parse_args(argv)
    if args.what == "serve":
        faulthandler.enable(file=sys.stderr, all_threads=True)
        worker = Worker(Paths.here())
        signal.signal(signal.SIGTERM, lambda *_: worker.exit())
        worker.serve()
        return 0
    model_main(args.fd, args.model, args.ctx)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
