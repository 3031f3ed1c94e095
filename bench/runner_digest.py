"""What the runner bench's sweeps send and store, as digests: a change that makes the runner faster must
leave every one of them as it was.

The three sweeps of bench/bench_runner.py (tiny documents; 1,000-token documents of 10-token passages and
of NQ-open passages), each at the seeds of its three runs, are run against the loopback server (in this
process, on a fixed port: a trial's key holds the base URL) into one store. One line per digest, sorted:

- `body <sha256>`: each request body as the server received it (the bytes on the wire);
- `call <key> <sha256 of messages> <sha256 of settings> <sha256 of response>`: each call stored;
- `trial <sweep> <trial key> <sha256 of the row>`: each trial stored (without its id, time and latency).

    python -m bench.runner_digest --out before.txt          the digests, and their count and total sha256
    python -m bench.runner_digest --compare before.txt      exit 1 (with the first lines that differ) unless
                                                            the same digests come out
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import tempfile
from pathlib import Path

from bench.bench_runner import long_sweeps, sweep_config, tiny_tasks
from components.run.runner import run_sweep
from components.run.store import RunStore
from components.tasks.importers import write_tasks

PORT = 47913  # fixed: the base URL is part of every trial and call key
UNTIMED = ("id", "sweep_id", "created", "latency_s")  # a trial's fields that differ from run to run


def sha(text) -> str:
    data = text if isinstance(text, bytes) else str(text).encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def digests(trials: int = 2000, seeds: int = 3, port: int = PORT) -> list[str]:
    from tests.support.llm_server import LLMServer

    server = LLMServer(port=port).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            write_tasks(tiny_tasks(trials), Path(tmp) / "tasks.jsonl")
            config = sweep_config(Path(tmp) / "tasks.jsonl", port, 32)
            store = RunStore(Path(tmp) / "digest.sqlite")
            sweeps = [("tiny", config), *long_sweeps(config, trials)]
            for seed in range(seeds):
                for label, sweep in sweeps:
                    done = run_sweep(
                        dataclasses.replace(sweep, seed=seed, name=f"{sweep.name}-{seed}"), store
                    )
                    if done.errors or done.status != "done":
                        raise RuntimeError(f"{label}, seed {seed}: {done.status} {done.reason}")
            lines = [f"body {b}" for b in server.bodies]
            for r in store.db.execute("SELECT key, messages, settings, response FROM calls"):
                lines.append(f"call {r[0]} {sha(r[1])} {sha(r[2])} {sha(r[3])}")
            rows = store.db.execute(
                "SELECT s.name AS sweep, t.* FROM trials t JOIN sweeps s ON s.id = t.sweep_id"
            )
            for r in rows:
                row = {k: r[k] for k in r.keys() if k not in UNTIMED and k != "sweep"}
                lines.append(f"trial {r['sweep']} {r['trial_key']} {sha(json.dumps(row, sort_keys=True))}")
            store.close()
    finally:
        server.stop()
    return sorted(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--compare", type=Path)
    ap.add_argument("--trials", type=int, default=2000)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args(argv)
    lines = digests(args.trials, args.seeds)
    total = sha("\n".join(lines))
    print(f"{len(lines)} digests, sha256 {total}")
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    if args.compare:
        before = args.compare.read_text().splitlines()
        if before != lines:
            gone, new = sorted(set(before) - set(lines)), sorted(set(lines) - set(before))
            print(f"DIFFERENT: {len(gone)} digests gone, {len(new)} new", file=sys.stderr)
            for line in gone[:5]:
                print(f"- {line}", file=sys.stderr)
            for line in new[:5]:
                print(f"+ {line}", file=sys.stderr)
            return 1
        print("identical to", args.compare)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
