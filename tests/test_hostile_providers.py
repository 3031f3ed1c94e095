"""Hostile corpus, the provider half: servers and settings that misbehave, each case with its one-line outcome.

Every case runs against a real HTTP server on 127.0.0.1 (tests/support/llm_server.py) through the real SDK
clients and the Caller (cache, store, retries), and names the error kind it must end as and a substring of
its one-line message. No case may end as an "unexpected error", show a key, or leave a cached call.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import anthropic
import openai
import pytest

from components.providers.base import (
    BadBaseUrl,
    ModelSpec,
    ProviderError,
    Settings,
    check_base_url,
    looks_like_key,
    safe_base_url,
    scrub,
    shown_name,
)
from components.providers.factory import make_provider
from components.run.caller import Caller
from components.run.config import SweepConfig
from components.run.runner import run_sweep
from components.run.store import RunStore
from tests.support import baseline_toml
from tests.support.llm_server import LLMServer

# the SDKs are imported here, not inside the first timed call (importing anthropic takes 3 s on an idle core)
SDKS = (anthropic, openai)

ROOT = Path(__file__).resolve().parent.parent
MESSAGES = [
    {"role": "user", "content": "The capital of Zorbia is Quenton.\n\nWhat is the capital of Zorbia?"}
]
KEY = "sk-test-hostile-0123456789abcdef"  # the key the provider is given: never in a message
PASTED = "sk-proj-" + "a1B2c3D4e5" * 5  # a key pasted where a variable's name goes (58 characters)
PASTED_NAME = "sk_live_" + "Zx9Qw8Er7Ty6" * 3  # a key shaped like a variable name
URL_KEY = "sk-urlsecret-77f1e2d3c4b5a697"  # a key inside a base URL


@pytest.fixture(scope="module")
def other():
    """A second server: another origin a redirect may point to (it must never see a request)."""
    with LLMServer() as srv:
        yield srv


@dataclass(frozen=True)
class Case:
    provider: str  # openai-compatible | openai | anthropic
    mode: dict  # the server's mode (llm_server.set)
    kind: str  # the error kind it must end as
    line: str  # a substring of its one-line message
    api_key_env: str | None = None
    base_url: str | None = None  # None: the server's (for the provider's wire format); "{url}" filled in
    max_retry_after: float | None = None
    max_retries: int | None = None
    within_s: float = 8.0  # the call must end within this many seconds
    no_request: bool = False  # nothing may reach the server
    extra: dict = field(default_factory=dict)


PROVIDERS3 = ("openai-compatible", "openai", "anthropic")
CASES: dict[str, Case] = {}
for p in PROVIDERS3:
    CASES[f"empty-answer-{p}"] = Case(p, {"malformed": "empty_text"}, "bad_response", "the answer is empty")
    CASES[f"whitespace-answer-{p}"] = Case(
        p, {"malformed": "blank_text"}, "bad_response", "the answer is only whitespace"
    )
    CASES[f"refused-by-the-provider-{p}"] = Case(
        p, {"malformed": "refused"}, "refused", "it is not scored", max_retries=0
    )
    CASES[f"max-tokens-before-any-text-{p}"] = Case(
        p, {"malformed": "length_empty"}, "bad_response", "max_tokens ended it before any text"
    )
for p in ("openai-compatible", "anthropic"):
    CASES[f"key-pasted-as-api-key-env-{p}"] = Case(
        p, {}, "missing_key", "'sk-p…'", api_key_env=PASTED, no_request=True
    )
    CASES[f"key-shaped-like-a-variable-name-{p}"] = Case(
        p, {}, "missing_key", "'sk_l…'", api_key_env=PASTED_NAME, no_request=True
    )
    CASES[f"redirect-to-another-origin-{p}"] = Case(
        p, {"misbehave": "redirect_other"}, "bad_response", "redirected the request to another origin"
    )
    CASES[f"redirect-loop-{p}"] = Case(
        p, {"misbehave": "redirect_loop"}, "bad_response", "redirects the request in a loop"
    )
    CASES[f"unparseable-base-url-{p}"] = Case(
        p, {}, "bad_request", "is not a valid address", base_url="http://[::1", no_request=True
    )
    CASES[f"https-to-a-plain-http-server-{p}"] = Case(
        p,
        {},
        "unreachable",
        "does the server speak https?",
        base_url="https://{host}",
        max_retries=0,
        no_request=True,
    )
    CASES[f"key-in-base-url-user-info-{p}"] = Case(
        p,
        {"status": 500},
        "transient",
        "server error (500)",
        base_url="http://user:" + URL_KEY + "@{host}",
        max_retries=0,
    )
    CASES[f"key-in-base-url-path-{p}"] = Case(
        p,
        {"status": 500},
        "transient",
        "server error (500)",
        base_url="{url}/" + URL_KEY + "/",
        max_retries=0,
    )
    CASES[f"key-in-base-url-query-{p}"] = Case(
        p,
        {"status": 500},
        "transient",
        "server error (500)",
        base_url="{url}?api_key=" + URL_KEY,
        max_retries=0,
    )
CASES["retry-after-70-past-the-limit-anthropic"] = Case(
    "anthropic",
    {"status": 429, "retry_after": 70},
    "rate_limited",
    "asks to wait 70 s",
    max_retry_after=10,
    within_s=13,
)
CASES["retry-after-300-past-the-limit-anthropic"] = Case(
    "anthropic",
    {"status": 429, "retry_after": 300},
    "rate_limited",
    "asks to wait 300 s",
    max_retry_after=60,
    within_s=13,
)
CASES["retry-after-100-past-the-limit-openai"] = Case(
    "openai",
    {"status": 429, "retry_after": 100},
    "rate_limited",
    "asks to wait 100 s",
    max_retry_after=10,
    within_s=13,
)
CASES["retry-after-100-past-the-limit-openai-compatible"] = Case(
    "openai-compatible",
    {"status": 429, "retry_after": 100},
    "rate_limited",
    "asks to wait 100 s",
    max_retry_after=10,
    within_s=13,
)
CASES["server-error-retry-after-past-the-limit-openai"] = Case(
    "openai",
    {"status": 503, "retry_after": 100},
    "transient",
    "asks to wait 100 s",
    max_retry_after=10,
    within_s=13,
)
# Retry-After 4 s again and again: waited for while it fits (10 s in all, SDK-style retries and the Caller's
# together), then the call ends: never past max_retry_after plus the requests' own time
for p in ("openai", "anthropic"):
    CASES[f"retry-after-4-until-the-total-is-spent-{p}"] = Case(
        p,
        {"status": 429, "retry_after": 4},
        "rate_limited",
        "s left of the 10 s a call waits in all",
        max_retry_after=10,
        max_retries=10,
        within_s=10 + 3,
    )


def base_url(case: Case, server: LLMServer) -> str:
    url = server.anthropic_url if case.provider == "anthropic" else server.openai_url
    if case.base_url is None:
        return url
    return case.base_url.format(url=url, host=url.removeprefix("http://"))


def call(
    spec: ModelSpec,
    key: str | None,
    store: RunStore | None,
    max_retry_after: float | None = None,
    before=None,
):
    """One call the way a trial makes it: make_provider, then Caller.ask (cache, store, retries).
    `before(provider)`: awaited first, on the same provider (a good call that sets its request pattern)."""

    async def go():
        provider = make_provider(spec, key)
        try:
            if before is not None:
                await before(provider)
            return await Caller(provider, store, concurrency=1, max_retry_after=max_retry_after).ask(
                MESSAGES, Settings(max_tokens=32)
            )
        finally:
            await provider.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("case_id", list(CASES))
def test_hostile_provider_case(case_id, server, other, tmp_path, monkeypatch):
    check_case(CASES[case_id], server, other, tmp_path, monkeypatch)


# an OpenAI provider sends its chat requests after the first on that request's pattern, without the SDK's
# request building (openai_provider._post_chat): each fault must end the same way on such a call
AFTER_A_GOOD_CALL = [
    name
    for name, c in CASES.items()
    if c.provider != "anthropic" and not c.no_request and c.base_url is None and c.api_key_env is None
]


@pytest.mark.parametrize("case_id", AFTER_A_GOOD_CALL)
def test_hostile_provider_case_after_a_good_call(case_id, server, other, tmp_path, monkeypatch):
    check_case(CASES[case_id], server, other, tmp_path, monkeypatch, warm=True)


def check_case(case: Case, server, other, tmp_path, monkeypatch, warm: bool = False) -> None:
    """The case's fault ends its call as it must; warm: on a provider that has answered a call first."""

    def fault() -> None:
        server.set(**case.mode)
        if case.mode.get("misbehave") == "redirect_other":
            server.set(redirect_to=other.url)
        other.reset()

    async def good_call(provider) -> None:
        answer = await provider.complete(
            [{"role": "user", "content": "a first question"}], Settings(max_tokens=8)
        )
        assert answer.text and provider.pattern is not None
        server.reset()  # the fault starts now (fail_times counts from here)
        fault()

    if not warm:
        fault()
    before = good_call if warm else None
    if case.api_key_env:
        monkeypatch.delenv(case.api_key_env, raising=False)
    spec = ModelSpec(
        case.provider,
        "gpt-4o-mini" if case.provider == "openai" else "loop-model",
        base_url(case, server),
        api_key_env=case.api_key_env,
        max_retries=case.max_retries,
    )
    store = RunStore(tmp_path / "s.sqlite")
    t0 = time.perf_counter()
    with pytest.raises(ProviderError) as err:
        call(spec, None if case.api_key_env else KEY, store, case.max_retry_after, before)
    elapsed = time.perf_counter() - t0
    message = str(err.value)
    assert err.value.kind == case.kind, message
    assert case.line in message, message
    assert "\n" not in message and "unexpected error" not in message
    for secret in (KEY, PASTED, PASTED_NAME, URL_KEY):
        assert secret[4:12] not in message, message  # at most the first 4 characters of a key
    assert elapsed < case.within_s, f"{elapsed:.1f} s"
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM calls").fetchone()[0] == 0  # never cached
    store.close_all()
    if case.no_request:
        assert server.counts["total"] == 0
    else:
        assert server.counts["total"] >= 1
    assert other.counts["total"] == 0  # nothing ever reached another origin


# --- empty answers, end to end: never scored, never cached, resent by --retry-errors -------------------------


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_empty_answers_are_errors_in_a_sweep_and_retry_errors_resends_them(
    provider, server, tmp_path, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000")
    url = server.anthropic_url if provider == "anthropic" else server.openai_url
    config = SweepConfig.from_toml(
        baseline_toml(tmp_path, url, positions=(0.0, 1.0), provider=provider, extra_model="max_retries = 0")
    )
    server.set(malformed="blank_text")
    with RunStore(tmp_path / "s.sqlite") as store:
        first = run_sweep(config, store)
        frame = store.trials_frame()
        assert first.errors == 4 and set(frame["error_kind"]) == {"bad_response"}
        # the sweep's last line says why, not only how many (a sweep shorter than fail_fast said nothing more)
        assert (
            first.reason.startswith("4 trial(s) failed (bad_response x4; ")
            and "only whitespace" in first.reason
        )
        assert first.reason.endswith("rerun with --retry-errors") and "\n" not in first.reason
        assert frame["score"].isna().all()  # never scored as a wrong answer
        assert all("only whitespace" in e for e in frame["error"])
        sent = server.counts["total"]
        with sqlite3.connect(tmp_path / "s.sqlite") as db:
            assert db.execute("SELECT COUNT(*) FROM calls").fetchone()[0] == 0  # nothing cached
        again = run_sweep(config, store, retry_errors=True)  # still empty: sent again, still errors
        assert server.counts["total"] == 2 * sent and again.errors == 4
        server.set(malformed=None)
        fixed = run_sweep(config, store, retry_errors=True)
        assert fixed.errors == 0 and server.counts["total"] == 3 * sent
        assert store.trials_frame()["score"].notna().all()


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_refused_answers_are_errors_of_their_own_and_retry_errors_resends_them(
    provider, server, tmp_path, monkeypatch
):
    """finish_reason content_filter (OpenAI) and stop_reason refusal (Anthropic): a `refused` trial, never
    scored, never cached, counted among the errors, sent again by --retry-errors."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000")
    url = server.anthropic_url if provider == "anthropic" else server.openai_url
    db = tmp_path / "s.sqlite"
    toml = baseline_toml(
        tmp_path, url, positions=(0.0, 1.0), provider=provider, extra_model="max_retries = 0"
    )
    config = SweepConfig.from_toml(toml)
    server.set(malformed="refused")
    with RunStore(db) as store:
        first = run_sweep(config, store)
        frame = store.trials_frame()
        assert first.errors == 4 and set(frame["error_kind"]) == {"refused"}, set(frame["error"])
        assert first.reason.startswith("4 trial(s) failed (refused x4; ") and "not scored" in first.reason
        assert frame["score"].isna().all() and frame["answer"].isna().all()  # the cut-off text is no answer
        sent = server.counts["total"]
        assert sent == 4  # tried once each: a refusal is not retried within the call
        with sqlite3.connect(db) as con:
            assert con.execute("SELECT COUNT(*) FROM calls").fetchone()[0] == 0  # nothing cached
    results = subprocess.run(
        [sys.executable, "-m", "components.cli", "results", "--db", str(db)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert results.returncode == 0 and "refused" in results.stdout + results.stderr, results.stdout
    server.set(malformed=None)
    with RunStore(db) as store:
        fixed = run_sweep(config, store, retry_errors=True)
        assert fixed.errors == 0 and server.counts["total"] == 2 * sent
        assert store.trials_frame()["score"].notna().all()


def test_every_provider_answer_passes_the_one_empty_check(tmp_path):
    """The Caller checks every provider's answer (local, fake too): an empty one is bad_response, unstored."""
    from components.providers.fake import FakeProvider

    fake = FakeProvider(ModelSpec("fake", "fake")).enqueue("  ").enqueue("Answer: Quenton")
    store = RunStore(tmp_path / "s.sqlite")

    async def go():
        caller = Caller(fake, store, concurrency=1)
        with pytest.raises(ProviderError) as err:
            await caller.ask(MESSAGES, Settings())
        assert err.value.kind == "bad_response" and "only whitespace" in str(err.value)
        return await caller.ask(MESSAGES, Settings())

    completion, _ = asyncio.run(go())
    assert completion.text == "Answer: Quenton" and len(fake.history) == 2
    store.close_all()


# --- Retry-After: waited for when it fits ---------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_short_retry_after_is_still_waited_for(provider, server):
    server.set(status=429, retry_after=1, fail_times=1)
    url = server.anthropic_url if provider == "anthropic" else server.openai_url
    t0 = time.perf_counter()
    completion, _ = call(ModelSpec(provider, "gpt-4o-mini", url), KEY, None, max_retry_after=10)
    assert time.perf_counter() - t0 >= 1.0
    assert completion.text.strip() and server.counts["total"] == 2


def test_the_wait_shows_on_the_callers_waiting_line(server):
    """A wait inside the provider's own retries is on the progress line (Caller.waiting) while it lasts."""
    server.set(status=429, retry_after=2, fail_times=1)
    seen: list[str] = []

    async def go():
        provider = make_provider(ModelSpec("openai-compatible", "m", server.openai_url), KEY)
        caller = Caller(provider, None, concurrency=1, max_retry_after=10)
        task = asyncio.create_task(caller.ask(MESSAGES, Settings()))
        while not task.done():
            seen.append(caller.waiting)
            await asyncio.sleep(0.2)
        await provider.aclose()
        return caller.waiting

    assert asyncio.run(go()) == ""
    assert any("rate limited: waiting 2 s (the server's Retry-After)" in s for s in seen), seen


# --- keys in base URLs, invalid base URLs -----------------------------------------------------------------


@pytest.mark.parametrize("where", ["user-info", "path"])
def test_a_key_inside_the_base_url_is_never_stored(server, tmp_path, where):
    if where == "path":  # https://host/v1/sk-.../: the request goes there, the store keeps it without the key
        url = server.openai_url + "/" + URL_KEY + "/"
    else:  # (the SDKs misplace a query's path)
        url = server.openai_url.replace("http://", f"http://user:{URL_KEY}@")
    db = tmp_path / "s.sqlite"
    store = RunStore(db)
    completion, key = call(ModelSpec("openai-compatible", "m", url), KEY, store)
    assert completion.text.strip()
    stored = store.get_call(key)["base_url"]
    store.close_all()
    assert stored.rstrip("/") == server.openai_url, stored
    assert URL_KEY.encode() not in b"".join(p.read_bytes() for p in tmp_path.glob("s.sqlite*"))


def test_a_base_urls_query_is_sent_on_every_call_and_stored_without_its_key(server, tmp_path):
    """An Azure-style server needs ?api-version=... on each call: the SDK would put the query before
    `chat/completions` (the call went to `/v1/?api-version=...chat/completions`); it is sent as the query of
    the call, and the store keeps it with the key (?api_key=...) taken out."""
    url = f"{server.openai_url}?api-version=2024-06-01&api_key={URL_KEY}"
    store = RunStore(tmp_path / "s.sqlite")
    completion, key = call(ModelSpec("openai-compatible", "m", url), KEY, store)
    assert completion.text.strip()
    assert server.queries == [f"api-version=2024-06-01&api_key={URL_KEY}"]  # the user's query, as written
    stored = store.get_call(key)["base_url"]
    store.close_all()
    assert stored == server.openai_url + "?api-version=2024-06-01", stored
    assert URL_KEY.encode() not in b"".join(p.read_bytes() for p in tmp_path.glob("s.sqlite*"))


@pytest.mark.parametrize("provider", ["openai", "openai-compatible", "anthropic"])
def test_providers_given_a_spec_directly_refuse_an_invalid_base_url(provider):
    from components.providers.anthropic_provider import AnthropicProvider
    from components.providers.openai_provider import OpenAIProvider

    cls = AnthropicProvider if provider == "anthropic" else OpenAIProvider
    for bad in ("http://[::1", "http://127.0.0.1:99999/v1", "ftp://example.com/v1"):
        with pytest.raises(BadBaseUrl) as err:
            cls(ModelSpec(provider, "m", bad), KEY)
        assert err.value.kind == "bad_request" and "base_url" in str(err.value) and "\n" not in str(err.value)


def test_url_helpers():
    assert safe_base_url("http://u:" + URL_KEY + "@h:8/v1") == ("http://h:8/v1", URL_KEY)
    assert safe_base_url("https://h/v1?api-version=2&token=abc") == ("https://h/v1?api-version=2", "abc")
    assert safe_base_url("https://h/v1?x=" + "q7W" * 8) == (
        "https://h/v1",
        "q7W" * 8,
    )  # a value shaped like a key
    assert safe_base_url("http://127.0.0.1:8000/v1") == ("http://127.0.0.1:8000/v1", None)
    assert safe_base_url(f"https://h/v1/{URL_KEY}/chat") == ("https://h/v1/chat", URL_KEY)
    assert safe_base_url("https://h/v1/" + "0a" * 16) == ("https://h/v1/" + "0a" * 16, None)  # an id stays
    assert safe_base_url(None) == (None, None)
    assert check_base_url(" http://127.0.0.1:8000/v1 ") == "http://127.0.0.1:8000/v1"
    with pytest.raises(
        ValueError, match="not a valid address"
    ):  # a ValueError too: a config check's one line
        check_base_url("http://[::1")
    with pytest.raises(BadBaseUrl) as err:
        check_base_url("http://user:" + URL_KEY + "@[::1")
    assert URL_KEY not in str(err.value)
    assert "***" in scrub(f"GET http://a:{URL_KEY}@h/?key=zz&x=1") and URL_KEY not in scrub(
        f"http://a:{URL_KEY}@h/"
    )
    assert "key=***" in scrub("http://h/v1?key=zz&x=1") and "x=1" in scrub("http://h/v1?key=zz&x=1")


@pytest.mark.parametrize(
    "value, key",
    [
        ("OPENAI_API_KEY", False),
        ("MY_VAR_2", False),
        ("AZURE_OPENAI_KEY_PROD", False),
        ("X", False),
        ("sk-abc123", True),
        (PASTED, True),
        (PASTED_NAME, True),
        ("sk-ant-api03-xyz", True),
        ("gsk_" + "a" * 20, True),
        ("has space", True),
        ("9STARTS_WITH_DIGIT", True),
        ("a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6", True),
        ("PREFIX_9f8e7d6c5b4a39281706", True),
    ],
)
def test_what_looks_like_a_key(value, key):
    assert looks_like_key(value) is key
    shown = shown_name(value)
    assert (shown == value) is (not key)
    if key:
        assert value[:4] in shown and value[:5] not in shown


# --- the command line: one line, never "unexpected error" -------------------------------------------------


def litm(args: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "components.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    "fault, extra, line",
    [
        ("invalid-base-url", None, "is not a valid address"),
        ("key-shaped-like-a-variable-name", f'api_key_env = "{PASTED_NAME}"', "'sk_l…'"),
    ],
)
def test_the_command_line_names_the_fault_in_one_line(fault, extra, line, server, tmp_path):
    toml = baseline_toml(tmp_path, server.openai_url, extra_model=extra or "")
    if fault == "invalid-base-url":
        toml.write_text(toml.read_text().replace(server.openai_url, "http://[::1"))
    r = litm(["sweep", str(toml), "--db", str(tmp_path / "s.sqlite"), "--quiet"], tmp_path)
    err = r.stderr.strip()
    assert r.returncode == 1 and len(err.splitlines()) == 1, r.stderr
    assert line in err and "unexpected error" not in err and "Traceback" not in err, err
    assert PASTED_NAME not in err and server.counts["total"] == 0


# --- empty answers in batch mode: the same check (providers/answers.py) on every result line -----------------


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("fault", ["empty_text", "blank_text"])
def test_empty_answers_in_a_batch_are_bad_responses(fault, provider, server, tmp_path, monkeypatch, capsys):
    from tests.test_batch import sweep, write_toml

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-batch-0000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-batch-0000")
    server.set(batch_max=4, batch_bad=fault)
    toml, db = write_toml(tmp_path, server, provider), tmp_path / "runs.sqlite"
    assert sweep(toml, db) == 3
    capsys.readouterr()
    with RunStore(db) as store:
        trials = store.trials_frame()
    assert set(trials["error_kind"]) == {"bad_response"} and trials["score"].isna().all()
    assert all("the answer is" in e and ("empty" in e or "whitespace" in e) for e in trials["error"])
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*) FROM calls").fetchone()[0] == 0  # never cached
    server.set(batch_bad=None)
    assert sweep(toml, db, "--retry-errors") == 0  # sent again, answered
