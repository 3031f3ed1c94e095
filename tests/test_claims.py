"""Claimed calls (store migration 4, run/caller.py): two processes (here: two Callers on two threads,
each with its own connection to one store file) asking the same calls at once pay for each once."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
import time

from components.providers.base import ModelSpec, Settings
from components.providers.factory import make_provider
from components.run.caller import Caller
from components.run.store import RunStore

PROMPTS = [
    [{"role": "user", "content": f"Question {i}: what is the capital of country {i}?"}] for i in range(6)
]


def _ask_all(server, db, out: list, claims: bool = True) -> None:
    async def go():
        spec = ModelSpec("openai-compatible", "loop-model", server.openai_url)
        prov = make_provider(spec)
        caller = Caller(prov, RunStore(db), concurrency=8, claims=claims)
        try:
            got = await asyncio.gather(*(caller.ask(m, Settings(max_tokens=16)) for m in PROMPTS))
        finally:
            await prov.aclose()
        out.append([c for c, _ in got])

    asyncio.run(go())


def _two_at_once(server, db, claims: bool = True) -> list:
    out: list = []
    threads = [threading.Thread(target=_ask_all, args=(server, db, out, claims)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out


def test_two_callers_on_one_store_send_each_call_once(tmp_path, server):
    server.set(delay=0.4)
    out = _two_at_once(server, tmp_path / "s.sqlite")
    assert len(out) == 2 and server.counts["chat"] == len(PROMPTS)
    a, b = out
    assert [x.text for x in a] == [x.text for x in b]  # the waiting one got the other's answers
    assert sum(c.cached for c in a + b) == len(PROMPTS)
    with RunStore(tmp_path / "s.sqlite").db as db:
        assert db.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0  # all released


def test_without_claims_both_pay(tmp_path, server):
    server.set(delay=0.4)
    _two_at_once(server, tmp_path / "s.sqlite", claims=False)
    assert server.counts["chat"] == 2 * len(PROMPTS)  # what claims prevent


def test_a_claim_left_by_a_dead_process_or_past_its_lease_is_taken_over(tmp_path, server):
    store = RunStore(tmp_path / "s.sqlite")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = socket.gethostname()
    assert store.claim_call("k1", f"{host}:{dead.pid}:x") is None
    assert store.claim_call("k1", "me") is None  # its process is gone
    assert store.claim_call("k2", "other-host:1:x", lease_s=-1) is None
    assert store.claim_call("k2", "me") is None  # its lease ran out
    assert store.claim_call("k3", "other-host:1:x") is None
    assert store.claim_call("k3", "me") == "other-host:1:x"  # alive elsewhere: wait for it
    store.release_call("k3", "other-host:1:x")
    assert store.claim_call("k3", "me") is None


def test_a_caller_waits_for_a_claimed_call_and_returns_its_answer(tmp_path, server):
    db = tmp_path / "s.sqlite"
    store = RunStore(db)
    spec = ModelSpec("openai-compatible", "loop-model", server.openai_url)
    from components.providers.base import cache_key

    key = cache_key(spec, PROMPTS[0], Settings(max_tokens=16))
    store.claim_call(key, "other-host:1:x")
    out: list = []
    t = threading.Thread(target=lambda: _ask_all(server, db, out))
    t.start()
    deadline = time.monotonic() + 30  # every unclaimed prompt is sent, however busy the machine
    while server.counts["chat"] < len(PROMPTS) - 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert out == [] and server.counts["chat"] == len(PROMPTS) - 1  # the claimed one waits

    class Done:
        text, input_tokens, output_tokens, latency_s, finish_reason = "Paris", 3, 1, 0.1, "stop"

    store.put_call(key, spec, PROMPTS[0], {"max_tokens": 16, "temperature": 0.0, "seed": 0}, Done)
    t.join(10)
    assert (
        out and out[0][0].text == "Paris" and out[0][0].cached and server.counts["chat"] == len(PROMPTS) - 1
    )
