"""Gemini (google-genai), Claude on Bedrock and on Vertex AI (the anthropic SDK's AsyncAnthropicBedrock and
AsyncAnthropicVertex), each against the loopback server speaking its cloud's wire format and checking its
credentials as the cloud does (tests/support/cloud_routes.py: the Gemini key, an AWS SigV4 signature
computed again with botocore, a Google OAuth token from the server's own token endpoint).

Every fault of the hostile corpus the server plays (status codes, Retry-After, empty and filtered answers,
an HTML page, a body cut short, a hang past the timeout, no server at all) ends in the same error kind as it
does for the Anthropic provider (Bedrock, Vertex: the same SDK) and the OpenAI one (Gemini)."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest

from components.providers.base import ModelSpec, ProviderError, Settings
from components.providers.factory import make_provider
from tests.support.cloud_routes import LOOP_AWS, LOOP_GEMINI_KEY, LOOP_TOKEN

MESSAGES = [
    {"role": "system", "content": "Answer briefly."},
    {
        "role": "user",
        "content": "Document [1](Title: Paris) Paris is the capital of France.\n\nQuestion: What is the capital of France?\nAnswer:",
    },
]
SETTINGS = Settings(max_tokens=32, temperature=0.0, seed=0)
BEDROCK_MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
VERTEX_MODEL = "claude-3-5-haiku@20241022"


@pytest.fixture
def clouds(server, tmp_path, monkeypatch):
    """The environment each cloud's own tools read: a Gemini key, AWS keys and region, Google default
    credentials (a service account's key file whose token endpoint is the loopback server), a Vertex region and
    project; no instance metadata is ever asked for (no address but the loopback one is reached)."""
    monkeypatch.setenv("GEMINI_API_KEY", LOOP_GEMINI_KEY)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", LOOP_AWS["key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", LOOP_AWS["secret"])
    monkeypatch.setenv("AWS_REGION", LOOP_AWS["region"])
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    adc = tmp_path / "service-account.json"
    adc.write_text(json.dumps(service_account(f"{server.url}/token")))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
    monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "loop-project")
    return server


def service_account(token_uri: str) -> dict:
    """A service account's key file as Google Cloud issues one, with a fresh RSA key; google-auth signs a JWT
    with it and trades it at `token_uri` for an access token, as it does at Google's OAuth endpoint."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return {
        "type": "service_account",
        "project_id": "loop-project",
        "private_key_id": "loop-key-id",
        "private_key": pem,
        "client_email": "litm@loop-project.iam.gserviceaccount.com",
        "client_id": "1234567890",
        "token_uri": token_uri,
    }


def spec(provider: str, server, **kw) -> ModelSpec:
    model, url = {
        "gemini": ("gemini-2.5-flash", server.url),
        "bedrock": (BEDROCK_MODEL, server.url),
        "vertex": (VERTEX_MODEL, server.url + "/v1"),
        "anthropic": ("claude-3-5-haiku-latest", server.anthropic_url),
        "openai": ("gpt-4o-mini", server.openai_url),
    }[provider]
    return ModelSpec(provider, model, base_url=url, **kw)


def ask(s: ModelSpec, key: str | None = None):
    async def go():
        provider = make_provider(s, key or ("loop-key" if s.provider in ("anthropic", "openai") else None))
        try:
            return await provider.complete(MESSAGES, SETTINGS)
        finally:
            await provider.aclose()

    return asyncio.run(go())


def kind_of(s: ModelSpec) -> str:
    try:
        ask(s)
    except ProviderError as exc:
        return exc.kind
    return "answered"


def test_gemini_sends_generate_content_and_reads_its_usage(clouds):
    done = ask(spec("gemini", clouds))
    assert done.text.strip() and done.input_tokens > 0 and done.output_tokens > 0
    assert done.finish_reason == "stop"
    (request,) = clouds.cloud_requests
    assert request["path"] in (
        "/v1/models/gemini-2.5-flash:generateContent",
        "/v1beta/models/gemini-2.5-flash:generateContent",
    )
    body = request["body"]
    assert body["systemInstruction"]["parts"][0]["text"] == "Answer briefly."
    assert body["contents"] == [{"role": "user", "parts": [{"text": MESSAGES[1]["content"]}]}]  # byte-exact
    config = body["generationConfig"]
    assert (config["maxOutputTokens"], config["temperature"], config["seed"]) == (32, 0.0, 0)
    # 2.5 Flash: no thinking eats max_tokens (the SDK writes this one in snake case, which the API reads too)
    thinking = config.get("thinkingConfig") or config.get("thinking_config")
    assert thinking in ({"thinkingBudget": 0}, {"thinking_budget": 0}), config


def test_bedrock_signs_invoke_model_and_vertex_authorises_raw_predict(clouds):
    done = ask(spec("bedrock", clouds))
    assert done.text.strip() and done.input_tokens > 0
    bedrock = clouds.cloud_requests[-1]
    assert bedrock["route"] == "bedrock" and bedrock["model"] == BEDROCK_MODEL  # the signature checked out
    body = bedrock["body"]  # InvokeModel: the version in the body (the SDK's), the model in the path
    assert body["anthropic_version"] and body["temperature"] == 0.0 and body["messages"]
    done = ask(spec("vertex", clouds))
    assert done.text.strip()
    vertex = clouds.cloud_requests[-1]
    assert vertex["path"] == (
        f"/v1/projects/loop-project/locations/us-east5/publishers/anthropic/models/{VERTEX_MODEL}:rawPredict"
    )
    assert vertex["body"]["anthropic_version"]
    assert clouds.counts["token"] >= 1  # the token came from the credentials file's token endpoint


def test_wrong_credentials_are_auth_errors(clouds, monkeypatch):
    assert kind_of(spec("gemini", clouds)) == "answered"
    monkeypatch.setenv("GEMINI_API_KEY", "not-the-key-0000")
    assert kind_of(spec("gemini", clouds)) == "auth"
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "another/secret")
    monkeypatch.setenv("AWS_REGION", "us-west-2")  # the SDK keeps a boto3 session per region: a new one
    assert kind_of(spec("bedrock", clouds)) == "auth"  # the signature does not match


def test_missing_credentials_stop_before_anything_is_sent(clouds, monkeypatch, tmp_path):
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    monkeypatch.setenv("HOME", str(tmp_path))  # no gcloud default credentials either
    for provider, words in (
        ("gemini", "GEMINI_API_KEY"),
        ("bedrock", "no AWS credentials"),
        ("vertex", "Google Cloud credentials"),
    ):
        with pytest.raises(ProviderError) as info:
            make_provider(spec(provider, clouds))
        assert info.value.kind == "missing_key" and words in str(info.value), str(info.value)
        assert "nothing was sent" in str(info.value) or provider == "gemini"
    assert clouds.counts["total"] == 0


def test_a_429_with_retry_after_is_rate_limited_with_the_wait(clouds):
    clouds.set(status=429, retry_after=7)
    for provider in ("gemini", "bedrock", "vertex"):
        with pytest.raises(ProviderError) as info:
            ask(spec(provider, clouds, max_retries=0))
        assert info.value.kind == "rate_limited", (provider, info.value)
        assert info.value.retry_after == 7.0, provider


@pytest.mark.parametrize("provider", ["gemini", "bedrock", "vertex"])
def test_the_one_retry_loop_retries_them_as_every_provider(clouds, provider):
    """Through the Caller (providers/retry.py): a 429 answered with Retry-After 0 is tried again, at most
    retry.attempts(spec) requests in all; one request when the server answers the second time."""
    from components.providers import retry
    from components.providers.base import RateLimited
    from components.run.caller import Caller

    def through_caller(s: ModelSpec):
        async def go():
            client = make_provider(s)
            try:
                return await Caller(client, None, concurrency=1).ask(MESSAGES, SETTINGS)
            finally:
                await client.aclose()

        return asyncio.run(go())

    clouds.set(status=429, retry_after=0)
    with pytest.raises(RateLimited):
        through_caller(spec(provider, clouds))
    assert clouds.counts[provider] == retry.attempts(spec(provider, clouds)) == 1 + retry.RETRIES
    clouds.reset()
    clouds.set(status=429, retry_after=0, fail_times=1)  # refused once, then answered
    completion, _ = through_caller(spec(provider, clouds))
    assert completion.text.strip() and clouds.counts[provider] == 2


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


FAULTS = [
    ("status 500", {"status": 500}),
    ("status 503", {"status": 503}),
    ("status 400", {"status": 400}),
    ("status 401", {"status": 401}),
    ("status 403", {"status": 403}),
    ("status 404", {"status": 404}),
    ("status 429", {"status": 429}),
    ("html", {"malformed": "html"}),
    ("truncated", {"malformed": "truncated"}),
    ("empty text", {"malformed": "empty_text"}),
    ("blank text", {"malformed": "blank_text"}),
    ("length empty", {"malformed": "length_empty"}),
    ("hang", {"hang": True}),
]


@pytest.mark.parametrize("fault", [f for f, _ in FAULTS])
def test_every_fault_ends_in_the_same_kind_as_for_the_first_party_apis(clouds, fault):
    mode = dict(FAULTS)[fault]
    kinds = {}
    for provider in ("anthropic", "bedrock", "vertex", "openai", "gemini"):
        clouds.reset()
        clouds.set(**mode)
        kinds[provider] = kind_of(spec(provider, clouds, max_retries=0, timeout=1.5))
    assert kinds["bedrock"] == kinds["vertex"] == kinds["anthropic"], kinds
    assert kinds["gemini"] == kinds["openai"], kinds
    assert kinds["gemini"] != "answered", kinds


def test_no_server_is_unreachable_for_every_provider(clouds):
    port = closed_port()
    for provider in ("gemini", "bedrock", "vertex"):
        url = f"http://127.0.0.1:{port}" + ("/v1" if provider == "vertex" else "")
        s = ModelSpec(provider, spec(provider, clouds).model, base_url=url, max_retries=0)
        assert kind_of(s) == "unreachable", provider


def test_filtered_and_blocked_answers_are_refusals_never_answers(clouds):
    clouds.set(malformed="filtered")
    assert kind_of(spec("gemini", clouds)) == "refused"
    clouds.set(malformed="blocked")
    assert kind_of(spec("gemini", clouds)) == "refused"
    clouds.set(malformed="filtered")  # Claude's stop_reason "refusal" with no text: as Anthropic's own
    for provider in ("bedrock", "vertex"):
        assert kind_of(spec(provider, clouds)) not in ("answered", "transient"), provider


def test_the_key_and_tokens_never_show_in_an_error(clouds):
    clouds.set(status=400)
    for provider in ("gemini", "bedrock", "vertex"):
        with pytest.raises(ProviderError) as info:
            ask(spec(provider, clouds, max_retries=0))
        text = str(info.value)
        for secret in (LOOP_GEMINI_KEY, LOOP_AWS["secret"], LOOP_TOKEN):
            assert secret not in text, provider


@pytest.mark.parametrize("provider", ["gemini", "bedrock", "vertex"])
def test_a_sweep_runs_scores_caches_and_names_a_429(clouds, tmp_path, provider, capsys):
    """`litm sweep` with the provider against its loopback format: every trial answered and scored, a rerun
    sends nothing (the cache), and a 429 whose Retry-After is past the sweep's limit is rate_limited."""
    from components.cli import main
    from components.run.store import RunStore
    from tests.support import sweep_toml

    url = clouds.url + ("/v1" if provider == "vertex" else "")
    toml = sweep_toml(tmp_path, base_url=url, provider=provider, n_tasks=2, strategies=("baseline",))
    db = tmp_path / "runs.sqlite"
    assert main(["sweep", str(toml), "--db", str(db), "--quiet"]) == 0, capsys.readouterr()
    sent = clouds.counts["total"]
    assert sent == 12 and clouds.counts[provider] == 12  # 2 questions x 6 cells, each call once
    with RunStore.for_reading(db) as store:
        frame = store.trials_frame()
    assert len(frame) == 12 and frame["error"].isna().all() and frame["score"].notna().all()
    assert (frame["input_tokens"] > 0).all() and frame["model"].str.startswith(f"{provider}:").all()
    assert main(["sweep", str(toml), "--db", str(db), "--quiet"]) == 0
    assert clouds.counts["total"] == sent  # the rerun sent nothing

    clouds.set(status=429, retry_after=3600)
    other = tmp_path / "limited.sqlite"
    assert main(["sweep", str(toml), "--db", str(other), "--quiet"]) != 0
    with RunStore.for_reading(other) as store:
        kinds = store.error_kinds(store.sweep_id("demo"))
    assert kinds and kinds[0][0] == "rate_limited" and "asks to wait 3600 s" in kinds[0][2], kinds


def test_prices_dry_run_and_cache_key(clouds, tmp_path, capsys):
    """Gemini's own prices; Claude on Bedrock and Vertex at Anthropic's, found by the id's Anthropic name;
    a dry run prices a Gemini sweep; the cache key names the provider and leaves out timeouts and retries."""
    from components.cli import main
    from components.providers.base import cache_key
    from components.providers.pricing import cost_usd
    from tests.support import sweep_toml

    million = 1_000_000
    assert cost_usd("gemini", "gemini-2.5-flash", million, million) == pytest.approx(0.30 + 2.50)
    assert cost_usd("gemini", "gemini-2.5-flash-lite-preview", million, million) == pytest.approx(0.10 + 0.40)
    assert cost_usd(
        "bedrock", "us.anthropic.claude-haiku-4-5-20251001-v1:0", million, million
    ) == pytest.approx(6.0)
    assert cost_usd("bedrock", BEDROCK_MODEL, million, million) == cost_usd(
        "anthropic", "claude-3-5-haiku", million, million
    )
    assert cost_usd("vertex", VERTEX_MODEL, million, million) == pytest.approx(0.80 + 4.00)
    assert cost_usd("gemini", "gemini-9-unknown", million, million) is None  # never a guess
    toml = sweep_toml(tmp_path, base_url=clouds.url, provider="gemini", n_tasks=2, strategies=("baseline",))
    toml.write_text(toml.read_text().replace('model = "loop-model"', 'model = "gemini-2.5-flash"'))
    assert main(["sweep", str(toml), "--dry-run", "--db", str(tmp_path / "none.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "calls:         12 to send" in out and "$0.00" in out and "no price" not in out, out
    a = ModelSpec("bedrock", BEDROCK_MODEL)
    assert cache_key(a, MESSAGES, SETTINGS) == cache_key(
        ModelSpec("bedrock", BEDROCK_MODEL, timeout=9, max_retries=5), MESSAGES, SETTINGS
    )
    assert cache_key(a, MESSAGES, SETTINGS) != cache_key(
        ModelSpec("vertex", BEDROCK_MODEL), MESSAGES, SETTINGS
    )


def test_doctor_checks_a_provider_from_end_to_end(clouds, capsys, monkeypatch):
    from components.cli import main

    assert main(["doctor", "--provider", "gemini", "--base-url", clouds.url]) == 0
    out = capsys.readouterr().out
    assert "ok    gemini: its SDK (google.genai) imports" in out
    assert (
        "ok    gemini: credentials found" in out
        and "ok    gemini:gemini-2.5-flash: one short answer in" in out
    )
    assert out.rstrip().endswith("gemini answers from here")
    assert main(["doctor", "--provider", "bedrock", "--model", BEDROCK_MODEL, "--base-url", clouds.url]) == 0
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    capsys.readouterr()
    assert main(["doctor", "--provider", "bedrock", "--base-url", clouds.url]) == 1
    out = capsys.readouterr().out
    assert "FAIL  bedrock: bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0: no AWS credentials" in out
    assert clouds.counts["bedrock"] == 1  # the failed check sent nothing


def test_the_sidebar_offers_the_three_providers(clouds, monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("LITM_DB", str(tmp_path / "runs.sqlite"))
    app = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "webapp" / "app.py")
    at = AppTest.from_file(app, default_timeout=120)
    at.run()
    options = at.sidebar.selectbox(key="provider").options
    assert {"Google Gemini", "Claude on AWS Bedrock", "Claude on Google Vertex AI"} <= set(options), options
    at.sidebar.selectbox(key="provider").set_value("gemini").run()
    assert not at.exception
    assert at.sidebar.text_input(key="model").value == "gemini-2.5-flash"
    assert any("GEMINI_API_KEY from the server environment" in s.value for s in at.sidebar.success)
    at.sidebar.selectbox(key="provider").set_value("bedrock").run()
    assert any("AWS credentials from the server" in s.value.replace("\\", "") for s in at.sidebar.success)
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    at.sidebar.selectbox(key="provider").set_value("vertex").run()
    at.sidebar.selectbox(key="provider").set_value("bedrock").run()
    said = " ".join(i.value for i in at.sidebar.info).replace("\\", "")
    assert "No AWS credentials: set AWS_ACCESS_KEY_ID" in said, said
