"""Consecutive runs on the same document with the local model: what the KV states of recent prompts
(components/providers/localcache.py) save when only part of the prompt changes.

A document of about 2,000 tokens (pages of made-up inventory lines, one page holding a secret code), the
question after it, greedy decoding; the model in this process (local.LocalProvider), loaded before the
clock starts, with an empty KV cache. Four runs in turn, as the Playground makes them:
1. the code on the middle page (every token evaluated);
2. the code moved to the last page (the pages before the middle come from the cache);
3. the same prompt again (nothing evaluated: the model samples from the kept logits);
4. the first prompt again (a toggle and back: its state comes back from memory).
Each line gives the seconds, the prompt tokens evaluated and the ratio to run 1. Goals: run 2 at most
0.6x run 1, run 3 at most 0.2x. Then the same four prompts with every prompt evaluated whole
(reuse=False): the texts must be the same. Last, the memory the kept states take.

The bundled model is the default; without it the bench runs the small test model and says so. The
bundled model is shared with sweeps: take its lock (flock /tmp/litm-model.lock python -m bench prefix).

    python -m bench prefix
    python -m bench prefix --model smollm2-135m-instruct --tokens 2000 --threads 1
"""

from __future__ import annotations

import argparse
import os
import time

GOALS = {2: 0.6, 3: 0.2}
FALLBACK = "smollm2-135m-instruct"


def page(i: int) -> str:
    return f"Page {i + 1}. " + " ".join(
        f"Shelf {i + 1}-{j + 1} holds {(i * 31 + j * 17) % 89 + 3} boxes of item {(i * 7 + j) % 53}."
        for j in range(6)
    )


def messages(pages: int, code_at: int) -> list[dict]:
    body = [page(i) for i in range(pages)]
    body[code_at] += " The secret code is 4712."
    text = "\n\n".join(body) + "\n\nQuestion: what is the secret code? Answer with the number only."
    return [{"role": "user", "content": text}]


def pages_for(llm, tokens: int) -> int:
    """How many pages make a prompt of about `tokens` tokens."""
    from components.providers.local import chat_tokens

    one = len(chat_tokens(llm, messages(2, 0))) - len(chat_tokens(llm, messages(1, 0)))
    return max(3, round(tokens / max(one, 1)))


def timed(provider, loaded, msgs, settings) -> tuple[str, float, int]:
    before = loaded.evaluated
    start = time.perf_counter()
    text = provider.complete_sync(msgs, settings).text
    return text, time.perf_counter() - start, loaded.evaluated - before


def run(argv: list[str] | None = None) -> list[str]:
    ap = argparse.ArgumentParser(prog="bench_prefix")
    ap.add_argument("--model", default="default", help="a local model name or .gguf path (default: bundled)")
    ap.add_argument("--tokens", type=int, default=2000, help="about how long the prompt is")
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=None, help="llama.cpp threads (LITM_LOCAL_THREADS)")
    args = ap.parse_args(argv or [])
    if args.threads:
        os.environ["LITM_LOCAL_THREADS"] = str(args.threads)
    from components.providers.base import ModelSpec, Settings
    from components.providers.local import LocalProvider, chat_tokens
    from components.providers.localmodel import LocalModelError, canonical, find_model

    lines = []
    model = args.model
    try:
        find_model(model)
    except LocalModelError as exc:
        if canonical(model) == FALLBACK:
            return [f"skipped: {exc}"]
        lines.append(
            f"{canonical(model)} is not installed ({exc}); running the test model {FALLBACK} instead"
        )
        model = FALLBACK
        try:
            find_model(model)
        except LocalModelError as exc2:
            return [*lines, f"skipped: {exc2}"]
    spec = ModelSpec("local", model)
    provider = LocalProvider(spec)
    loaded = provider.ensure_loaded()
    llm = loaded.llm
    pages = pages_for(llm, args.tokens)
    prompts = {
        1: messages(pages, pages // 2),
        2: messages(pages, pages - 1),
        3: messages(pages, pages - 1),
        4: messages(pages, pages // 2),
    }
    n = len(chat_tokens(llm, prompts[1]))
    settings = Settings(max_tokens=args.max_tokens, temperature=0, seed=0)
    lines.append(
        f"{canonical(model)}: {n:,}-token prompt ({pages} pages), {args.max_tokens} tokens at most, greedy, "
        f"{os.environ.get('LITM_LOCAL_THREADS', '2')} thread(s), load average {os.getloadavg()[0]:.1f}"
    )
    llm.reset()
    loaded.chunked = 0
    loaded.states.clear()
    labels = {
        1: "first run, code on the middle page",
        2: "code moved to the last page",
        3: "the same prompt again",
        4: "back to the first prompt",
    }
    got = {}
    for i, msgs in prompts.items():
        got[i] = timed(provider, loaded, msgs, settings)
    first = got[1][1]
    for i, (_, secs, evaluated) in got.items():
        ratio = secs / first
        goal = GOALS.get(i)
        verdict = f"  goal <= {goal}x: {'met' if ratio <= goal else 'NOT met'}" if goal else ""
        lines.append(
            f"{i}. {labels[i]}: {secs:.2f} s, {evaluated:,} of {n:,} prompt tokens evaluated, "
            f"{ratio:.2f}x run 1{verdict}"
        )
    states = loaded.states
    lines.append(
        f"kept states: {len(states)}, {states.used / 2**20:.1f} MB of a {states.budget / 2**20:.0f} MB budget "
        f"({states.used / max(sum(len(s.tokens) for s in states.states.values()), 1) / 1024:.1f} KB a token)"
    )
    whole = LocalProvider(spec, reuse=False)
    want = {i: whole.complete_sync(prompts[i], settings).text for i in (1, 2)}
    same = all(got[i][0] == want[1 if prompts[i] == prompts[1] else 2] for i in got)
    lines.append(
        f"texts with every prompt evaluated whole: {'identical' if same else 'DIFFERENT'} "
        f"(run 1: {got[1][0][:40]!r})"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    for line in run(argv):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
