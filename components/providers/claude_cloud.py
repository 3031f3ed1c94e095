"""Claude on AWS Bedrock (`provider = "bedrock"`) and on Google Cloud's Vertex AI (`provider = "vertex"`),
through the anthropic SDK's own clients, AsyncAnthropicBedrock and AsyncAnthropicVertex: the messages API in
each cloud's wire format (Bedrock's InvokeModel, signed with AWS Signature Version 4; Vertex's rawPredict,
with a Google OAuth token). Everything else is AnthropicProvider's: the request, the checks of the answer,
the errors (the same SDK exceptions), the transport, and the one retry loop (providers/retry.py).

Credentials come from where each cloud's own tools look, and are never stored or shown:
- Bedrock: boto3's chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, AWS_PROFILE,
  ~/.aws/credentials and config, an instance role); the region from AWS_REGION or AWS_DEFAULT_REGION or the
  profile. The model is a Bedrock model id or inference profile: `anthropic.claude-3-5-haiku-20241022-v1:0`,
  `us.anthropic.claude-haiku-4-5-20251001-v1:0`.
- Vertex: Google's Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, or `gcloud auth
  application-default login`); the region from CLOUD_ML_REGION (`us-east5`, `europe-west1`, `global`), the
  project from ANTHROPIC_VERTEX_PROJECT_ID or the credentials. The model is a Vertex model id:
  `claude-3-5-haiku@20241022`, `claude-haiku-4-5@20251001`.
`check_credentials(spec)` finds them before any call (MissingKey: one line, nothing sent). Where neither
cloud's tools have a place to look without the network (no keys, no files, not an EC2 or Compute Engine
machine), the instance metadata services are not asked: the line says what to set.

The AWS signature covers the request's headers, so this client sends the Accept-Encoding the transport would
set (transport.py) before it signs: the header is the same on the wire as in the signature.
"""

from __future__ import annotations

import os
from pathlib import Path

from components.providers.anthropic_provider import AnthropicProvider
from components.providers.base import MissingKey, ModelSpec, ProviderError, Settings
from components.providers.openai_provider import RequestCounter, http_client, sdk_kwargs, url_secret
from components.providers.pricing import anthropic_name
from components.providers.transport import ENCODINGS

ACCEPT = ", ".join(e for e in ENCODINGS if e != "x-gzip")  # what transport.py sends: signed as it is sent
BEDROCK_INSTALL = "pip install boto3"
VERTEX_INSTALL = "pip install google-auth"


def _machine() -> str:
    """The machine's maker and product as the firmware names them ('' when it cannot be read)."""
    out = []
    for name in ("sys_vendor", "product_name"):
        try:
            out.append(Path("/sys/class/dmi/id", name).read_text(errors="replace").strip())
        except OSError:
            continue
    return " ".join(out)


def aws_sources() -> bool:
    """Whether boto3 has a place to find credentials in without asking the network: keys in the environment,
    a profile or its files, a container's or a web identity's credentials, or an EC2 instance (whose role
    boto3 asks the instance's metadata service for). Elsewhere boto3 would ask that service too, in vain."""
    env = os.environ
    if env.get("AWS_ACCESS_KEY_ID") or env.get("AWS_PROFILE") or env.get("AWS_WEB_IDENTITY_TOKEN_FILE"):
        return True
    if env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") or env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        return True
    files = [
        env.get("AWS_SHARED_CREDENTIALS_FILE") or "~/.aws/credentials",
        env.get("AWS_CONFIG_FILE") or "~/.aws/config",
    ]
    if any(Path(f).expanduser().is_file() for f in files):
        return True
    return "amazon" in _machine().lower() and env.get("AWS_EC2_METADATA_DISABLED", "").lower() != "true"


def google_sources() -> bool:
    """Whether Google's default credentials have a place to be found without asking the network: the
    GOOGLE_APPLICATION_CREDENTIALS file, gcloud's application-default file, or a Google Compute Engine machine
    (whose metadata server google-auth asks)."""
    if os.environ.get("GOOGLE_APPLICATION_CREDENTIALS"):
        return True
    config = os.environ.get("CLOUDSDK_CONFIG") or "~/.config/gcloud"
    if (Path(config).expanduser() / "application_default_credentials.json").is_file():
        return True
    return "google" in _machine().lower() and os.environ.get("NO_GCE_CHECK", "").lower() != "true"


def aws_region() -> str | None:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")


def check_bedrock(spec: ModelSpec) -> None:
    """MissingKey (one line, nothing sent) unless boto3 finds AWS credentials and a region."""
    try:
        import boto3
    except ImportError:
        raise ProviderError(f"{spec.label}: the bedrock provider needs boto3: {BEDROCK_INSTALL}") from None
    if not aws_sources():
        raise MissingKey(
            f"{spec.label}: no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE "
            "(~/.aws/credentials), as the AWS command line reads them; nothing was sent"
        )
    try:
        session = boto3.Session()
        credentials = session.get_credentials()
        region = aws_region() or session.region_name
    except Exception as exc:  # a broken profile or config file: one line
        raise MissingKey(
            f"{spec.label}: the AWS credentials cannot be read ({exc.__class__.__name__}); nothing was sent"
        ) from None
    if credentials is None:
        raise MissingKey(
            f"{spec.label}: no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE "
            "(~/.aws/credentials), as the AWS command line reads them; nothing was sent"
        )
    if not region:
        raise MissingKey(f"{spec.label}: no AWS region: set AWS_REGION (e.g. us-east-1); nothing was sent")


def check_vertex(spec: ModelSpec) -> None:
    """MissingKey (one line, nothing sent) unless a region is set and Google's default credentials are found."""
    try:
        import google.auth
        import google.auth.exceptions
    except ImportError:
        raise ProviderError(
            f"{spec.label}: the vertex provider needs google-auth: {VERTEX_INSTALL}"
        ) from None
    if not os.environ.get("CLOUD_ML_REGION"):
        raise MissingKey(
            f"{spec.label}: no Vertex AI region: set CLOUD_ML_REGION (e.g. us-east5, or global); nothing was sent"
        )
    if not google_sources():
        raise MissingKey(
            f"{spec.label}: no Google Cloud credentials: set GOOGLE_APPLICATION_CREDENTIALS, or run gcloud auth "
            "application-default login; nothing was sent"
        )
    try:
        _, project = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    except google.auth.exceptions.DefaultCredentialsError:
        raise MissingKey(
            f"{spec.label}: no Google Cloud credentials: set GOOGLE_APPLICATION_CREDENTIALS, or run gcloud auth "
            "application-default login; nothing was sent"
        ) from None
    if not (os.environ.get("ANTHROPIC_VERTEX_PROJECT_ID") or project):
        raise MissingKey(
            f"{spec.label}: no Google Cloud project: set ANTHROPIC_VERTEX_PROJECT_ID; nothing was sent"
        )


def check_credentials(spec: ModelSpec) -> None:
    (check_bedrock if spec.provider == "bedrock" else check_vertex)(spec)


class CloudClaude(AnthropicProvider):
    """AnthropicProvider with a cloud's client in place of Anthropic's own (no API key)."""

    takes_cache_cuts = True

    def __init__(self, spec: ModelSpec, api_key: str | None = None):
        import anthropic

        self.spec = spec
        self._key, self._url_secret = "", url_secret(spec)  # no key: the cloud's own credentials
        self._sdk = anthropic
        self.counter = RequestCounter()
        kw = {"base_url": spec.base_url} if spec.base_url else {}
        self.client = self.make_client(anthropic, http_client(anthropic, self.counter, spec), kw)
        self.live = self.client.with_options(max_retries=0)  # one request a call: providers/retry.py retries

    def make_client(self, anthropic, http, kw: dict):
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec.label})"

    def request(self, messages: list[dict], settings: Settings, cuts: tuple[int, ...] = ()) -> dict:
        kw = super().request(messages, settings, cuts)
        if anthropic_name(self.spec.model).startswith("claude-3") and "extra_body" not in kw:
            kw["extra_body"] = {"temperature": settings.temperature}  # as AnthropicProvider does for claude-3
        return kw


class BedrockProvider(CloudClaude):
    def make_client(self, anthropic, http, kw: dict):
        return anthropic.AsyncAnthropicBedrock(
            http_client=http, default_headers={"Accept-Encoding": ACCEPT}, **kw, **sdk_kwargs(self.spec)
        )


class VertexProvider(CloudClaude):
    def make_client(self, anthropic, http, kw: dict):
        return anthropic.AsyncAnthropicVertex(http_client=http, **kw, **sdk_kwargs(self.spec))
