"""`litm doctor`: does the local model run here? One line per check (ok, or what is wrong and the one
command that fixes it); exit 0 when every check passes, 1 otherwise, never a signal: llama-cpp-python is
imported in a child process and the model runs in the local-model worker (a crash there is one line).
`litm doctor --provider P [--model M]` checks a remote provider instead: its SDK, its credentials (found
where its own tools look, before anything is sent) and one short answer."""

from __future__ import annotations

import subprocess
import sys
import time

from components.cli.common import EXIT_ERROR, EXIT_OK

PROBE = "import llama_cpp; print(llama_cpp.__version__)"
QUESTION = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]


def add_parser(sub, name):
    p = sub.add_parser(name, help="check that the local model runs on this machine (and say how to fix it)")
    p.add_argument(
        "--model",
        default="default",
        help="the local model to run: a name (e.g. smollm2-135m-instruct, the small test model) or a "
        ".gguf path; default: the app's default local model",
    )
    p.add_argument(
        "--provider",
        default="local",
        help="check another provider instead: its SDK, its credentials (found where its own tools look) and "
        "one short answer, e.g. --provider gemini --model gemini-2.5-flash (default: local)",
    )
    p.add_argument(
        "--base-url", default=None, help="with --provider: the address to ask instead of the API's"
    )
    p.set_defaults(func=run)


SDKS = {
    "openai": "openai",
    "openai-compatible": "openai",
    "anthropic": "anthropic",
    "gemini": "google.genai",
    "bedrock": "boto3",
    "vertex": "google.auth",
}


def check_provider(provider: str, model: str, base_url: str | None) -> list[tuple[bool, str]]:
    """A remote provider: its SDK imports, its credentials are found (nothing sent), one short answer."""
    import asyncio
    import importlib

    from components.providers.base import PROVIDERS, ModelSpec, ProviderError, Settings
    from components.providers.factory import DEFAULT_MODELS, make_provider

    if provider not in SDKS:
        known = ", ".join(p for p in PROVIDERS if p in SDKS)
        return [(False, f"--provider {provider!r}: choose local or one of {known}")]
    try:
        importlib.import_module(SDKS[provider])
    except ImportError:
        return [(False, f"{provider}: its SDK ({SDKS[provider]}) is not installed; fix: pip install -e .")]
    out = [(True, f"{provider}: its SDK ({SDKS[provider]}) imports")]
    model = DEFAULT_MODELS[provider] if model == "default" and provider != "openai-compatible" else model
    spec = ModelSpec(provider, model, base_url=base_url, max_retries=0, timeout=60)
    try:
        client = make_provider(spec)
    except ProviderError as e:
        return out + [(False, f"{provider}: {e}")]
    out.append((True, f"{provider}: credentials found (where its own tools look; never stored)"))

    async def ask():
        try:
            return await client.complete(QUESTION, Settings(max_tokens=8))
        finally:
            await client.aclose()

    start = time.perf_counter()
    try:
        done = asyncio.run(ask())
    except ProviderError as e:
        return out + [(False, f"{spec.label}: one short answer: {e} ({e.kind})")]
    return out + [
        (
            True,
            f"{spec.label}: one short answer in {time.perf_counter() - start:.1f} s ({done.input_tokens} input, "
            f"{done.output_tokens} output tokens)",
        )
    ]


def check_llama() -> tuple[bool, str]:
    from components.providers.local import INSTALL
    from components.providers.localmodel import LLAMA_VERSION, REBUILD
    from components.providers.localworker import CPU_FAULTS, child_env
    from components.providers.runtime import pending

    building = pending()  # make app's background build of the runtime, not finished (or failed)
    if building is not None:
        return False, building[0].upper() + building[1:] + "; then litm doctor again"
    try:
        out = subprocess.run(
            [sys.executable, "-c", PROBE],
            capture_output=True,
            text=True,
            timeout=300,
            env=child_env(),
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return False, f"llama-cpp-python: importing it did not finish in 300 s; fix: {REBUILD}"
    if out.returncode < 0:
        sig = -out.returncode
        what = CPU_FAULTS.get(sig, f"signal {sig}")
        return False, f"llama-cpp-python: importing it crashed ({what}); fix: {REBUILD}"
    if out.returncode != 0:
        if "No module named" in out.stderr:
            return False, f"llama-cpp-python is not installed; fix: {INSTALL}"
        last = (out.stderr.strip().splitlines() or ["no message"])[-1][:200]
        return False, f"llama-cpp-python does not import ({last}); fix: {REBUILD}"
    version = out.stdout.strip()
    if version != LLAMA_VERSION:
        return (
            False,
            f"llama-cpp-python {version} is installed, the project needs {LLAMA_VERSION}; fix: {REBUILD}",
        )
    return True, f"llama-cpp-python {version} imports"


def check_files(model: str) -> tuple[bool, str]:
    from components.providers.localmodel import LocalModelError, canonical, model_path

    name = canonical(model)
    try:
        path = model_path(name)
    except LocalModelError as e:
        return False, f"model {name}: {e}"
    return True, f"model {name}: files present, sha256 right ({path.stat().st_size / 1e6:,.0f} MB)"


def said(error) -> str:
    return str(error).removesuffix("; check: litm doctor")  # this is litm doctor


def check_runs(model: str) -> list[tuple[bool, str]]:
    from components.providers.base import ModelSpec, ProviderError, Settings
    from components.providers.localworker import WorkerProvider

    try:
        provider = WorkerProvider(ModelSpec("local", model, context_window=2048))
        start = time.perf_counter()
        done = provider.complete_sync(QUESTION, Settings(max_tokens=8))
    except ProviderError as e:
        return [(False, f"generate in the worker: {said(e)}")]
    out = [
        (
            True,
            f"generate in the worker: {done.output_tokens} token(s) in {time.perf_counter() - start:.1f} s "
            f"(the first call loads the model)",
        )
    ]
    try:
        scored = provider.score_sync(QUESTION, "Paris")
    except ProviderError as e:
        return out + [(False, f"score in the worker: {said(e)}")]
    return out + [
        (
            True,
            f"score in the worker: log-probability {scored.logprob:.2f} for a {scored.tokens}-token "
            f"answer in {scored.latency_s:.1f} s",
        )
    ]


def run(args) -> int:
    if args.provider != "local":
        checks = check_provider(args.provider, args.model, args.base_url)
    else:
        checks = [check_llama()]
        if checks[0][0]:
            checks.append(check_files(args.model))
        if all(ok for ok, _ in checks):
            checks += check_runs(args.model)
    for ok, line in checks:
        print(f"{'ok  ' if ok else 'FAIL'}  {line}", flush=True)
    failed = sum(not ok for ok, _ in checks)
    print(
        ("the local model runs here" if args.provider == "local" else f"{args.provider} answers from here")
        if not failed
        else f"{failed} check(s) failed: run the command after 'fix:', then litm doctor again"
        if args.provider == "local"
        else f"{failed} check(s) failed: set what the line above names, then litm doctor again"
    )
    return EXIT_OK if not failed else EXIT_ERROR
