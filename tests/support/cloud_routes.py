"""The loopback server's cloud wire formats (a mixin of tests/support/llm_server.LLMServer), each checked
as its cloud checks it, so a provider that signs or authorises wrongly fails here as it would there:

- Gemini (Google's generateContent REST format): POST /v1beta/models/{model}:generateContent (or /v1/) with the key in
  `x-goog-api-key` (LOOP_GEMINI_KEY); errors as Google sends them ({"error": {"code", "message", "status",
  "details": [RetryInfo]}}) with a Retry-After header when the mode has one.
- Bedrock (InvokeModel): POST /model/{model id}/invoke, signed with AWS Signature Version 4. The signature is
  computed again here with botocore from LOOP_AWS's credentials over the headers the request says it signed:
  a header changed after signing (or a wrong key) is a 403, as on AWS. The body is Anthropic's messages
  format with `anthropic_version` and the model in the path.
- Vertex (Claude's rawPredict): POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/
  {model}:rawPredict with a Bearer token this server issued at POST /token (what Google's OAuth token
  endpoint does for a service account's key file whose token_uri names it).

The server's modes apply to every format: status, retry_after, fail_times, hang, delay and malformed
(Bedrock and Vertex answer as the messages route does); `filtered` (Gemini: a candidate stopped by SAFETY with
no text; Bedrock and Vertex: stop_reason "refusal" with no text) and `blocked` (Gemini: the prompt blocked,
promptFeedback.blockReason, no candidates) are theirs.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

LOOP_GEMINI_KEY = "loop-gemini-key-0123456789"
LOOP_AWS = {"key": "AKIDLOOPBACK0000", "secret": "loop/secret/key/0123456789", "region": "us-east-1"}
LOOP_TOKEN = "ya29.loopback-access-token"
GEMINI = re.compile(r"^/v1(?:beta|alpha)?/models/([^/:]+):generateContent$")
BEDROCK = re.compile(r"^/model/([^/]+)/invoke$")
VERTEX = re.compile(
    r"^/v1/projects/([^/]+)/locations/([^/]+)/publishers/anthropic/models/([^/:]+):rawPredict$"
)
STATUS = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED"}


def cloud_route(path: str) -> str | None:
    path = path.split("?")[0]
    if path == "/token":
        return "token"
    for name, pattern in (("gemini", GEMINI), ("bedrock", BEDROCK), ("vertex", VERTEX)):
        if pattern.match(path):
            return name
    return None


def sigv4_problem(method: str, path: str, headers: dict, raw: bytes, host_port: str) -> str:
    """'' when the request carries a valid AWS SigV4 signature of LOOP_AWS's credentials, else why not."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    auth = headers.get("authorization", "")
    found = re.match(
        r"AWS4-HMAC-SHA256 Credential=([^/]+)/\d+/([^/]+)/([^/]+)/aws4_request, "
        r"SignedHeaders=([^,]+), Signature=([0-9a-f]+)",
        auth,
    )
    if not found:
        return "no AWS Signature Version 4 Authorization header"
    key, region, service, signed, signature = found.groups()
    if key != LOOP_AWS["key"]:
        return "the security token included in the request is invalid (unknown access key)"
    names = signed.split(";")
    missing = [n for n in names if n not in headers]
    if missing:
        return f"signed headers missing from the request: {missing}"
    request = AWSRequest(
        method=method,
        url=f"http://{host_port}{path}",
        headers={n: headers[n] for n in names},
        data=raw,
    )
    request.context["timestamp"] = headers.get("x-amz-date", "")
    signer = SigV4Auth(Credentials(LOOP_AWS["key"], LOOP_AWS["secret"]), service, region)
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if expected != signature:
        return "the request signature we calculated does not match the signature you provided"
    return ""


class CloudRoutes:
    """Gemini, Bedrock and Vertex, answered by LLMServer (see the module docstring)."""

    def _cloud_route(self, route: str, method: str, path: str, raw: bytes, headers: dict):
        """None when the request passes its cloud's checks (then it is answered as a completion), else the
        answer (the token endpoint's, or an auth error)."""
        from tests.support.llm_server import _response

        if method != "POST":
            return _response(404, {"error": {"message": f"no route {method} {path}"}})
        if route == "token":
            with self.lock:
                self.counts["token"] += 1
            return _response(200, {"access_token": LOOP_TOKEN, "expires_in": 3600, "token_type": "Bearer"})
        if route == "gemini" and headers.get("x-goog-api-key") != LOOP_GEMINI_KEY:
            return gemini_error(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT")
        if route == "bedrock":
            problem = sigv4_problem(method, path, headers, raw, headers.get("host", ""))
            if problem:
                return _response(
                    403, {"message": problem}, {"x-amzn-ErrorType": "UnrecognizedClientException"}
                )
        if route == "vertex" and headers.get("authorization") != f"Bearer {LOOP_TOKEN}":
            return _response(401, {"error": {"code": 401, "message": "invalid credentials"}})
        return None

    def _cloud_body(self, route: str, path: str, body: dict) -> dict:
        """The request as the messages route reads it (Bedrock, Vertex), or as it came (Gemini); every model
        named by the path is recorded in self.cloud_requests, for the tests."""
        path = path.split("?")[0]
        pattern = {"gemini": GEMINI, "bedrock": BEDROCK, "vertex": VERTEX}[route]
        model = unquote(pattern.match(path).groups()[-1])
        with self.lock:
            self.cloud_requests.append({"route": route, "model": model, "body": body, "path": path})
        return {**body, "model": model}

    async def _gemini(self, body: dict, mode: dict, n: int) -> bytes | None:
        import asyncio

        from components.providers.fake import approx_tokens, plausible_answer
        from tests.support.llm_server import _response

        prompt = "\n".join(
            str(p.get("text", ""))
            for c in body.get("contents", [])
            for p in c.get("parts", [])
            if isinstance(p, dict)
        )
        if mode["hang"]:
            return None
        if mode["delay"]:
            await asyncio.sleep(mode["delay"])
        status = mode["status"]
        if status and mode["fail_times"] is not None and n > mode["fail_times"]:
            status = None
        if status:
            extra = {"Retry-After": str(mode["retry_after"])} if mode["retry_after"] is not None else {}
            return gemini_error(status, f"simulated {status}", STATUS.get(status, "INTERNAL"), extra, mode)
        bad = mode["malformed"] if mode["fail_times"] is None or n <= mode["fail_times"] else None
        if bad == "blocked":
            return _response(
                200, {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 5}}
            )
        config = body.get("generationConfig") or {}
        text = plausible_answer(prompt, mode["middle_loss"])
        finish = "STOP"
        if bad == "filtered":
            text, finish = "", "SAFETY"
        elif bad in ("empty_text", "blank_text", "length_empty"):
            text = "" if bad != "blank_text" else "  \n"
            finish = "MAX_TOKENS" if bad == "length_empty" else "STOP"
        elif bad in ("html", "truncated"):
            from tests.support.llm_server import _malformed

            return _malformed(bad, "chat", body.get("model", "gemini-loopback"))
        elif bad == "inf_usage":
            return _response(
                200,
                {
                    "candidates": [
                        {"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP"}
                    ],
                    "usageMetadata": {"promptTokenCount": -3},
                },
            )
        tokens = config.get("maxOutputTokens")
        if isinstance(tokens, int) and tokens < approx_tokens(text) and bad is None:
            text, finish = text[: max(1, tokens * 4)], "MAX_TOKENS"
        content = {"parts": [{"text": text}] if text else [], "role": "model"}
        candidate = {"content": content, "finishReason": finish, "index": 0}
        if bad == "filtered":
            candidate = {
                "finishReason": "SAFETY",
                "index": 0,
                "safetyRatings": [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH"}],
            }
        tin, tout = approx_tokens(prompt), approx_tokens(text)
        return _response(
            200,
            {
                "candidates": [candidate],
                "usageMetadata": {
                    "promptTokenCount": tin,
                    "candidatesTokenCount": tout,
                    "totalTokenCount": tin + tout,
                },
                "modelVersion": body.get("model", "gemini-loopback"),
                "responseId": f"loop-{n}",
            },
        )


def gemini_error(
    status: int, message: str, kind: str, headers: dict | None = None, mode: dict | None = None
) -> bytes:
    """An error as Google's APIs send it; a 429 names its retry delay in RetryInfo too."""
    from tests.support.llm_server import _response

    error: dict = {"code": status, "message": message, "status": kind}
    if status == 429 and mode is not None and mode.get("retry_after") is not None:
        error["details"] = [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{mode['retry_after']}s"}
        ]
    return _response(status, {"error": error}, headers or {})


def refusal(model: str, n: int) -> bytes:
    """A Claude message stopped by its safety system: stop_reason "refusal", no text (Bedrock, Vertex)."""
    from tests.support.llm_server import _response

    return _response(
        200,
        {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": "refusal",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 0},
        },
    )
