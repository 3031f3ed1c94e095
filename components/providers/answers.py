"""What a provider's answer must be before it becomes a Completion: one set of checks for a live answer
and for each line of a batch's results, so that both treat the same body the same way.

A body that is not a usable completion raises BadResponse (kind `bad_response`): no choices or content,
an answer whose text is empty or only whitespace (whatever its finish reason: "length" with no text is a
max_tokens too small for the model to say anything, and an empty answer is never a wrong one), a mistyped field (`"choices": "zz"`, a `text` that is not a string), a token count that is not a count
(negative, not finite, above MAX_COUNT: 10^30 would not even fit an SQLite integer). Such an answer is
never cached, so `--retry-errors` asks again. A count that is simply missing is 0, as before.

An answer the provider stopped itself (OpenAI's finish_reason "content_filter", Anthropic's stop_reason
"refusal") raises Refused (kind `refused`): not scored, not cached, sent again by `--retry-errors`.
"""

from __future__ import annotations

import json
import math

from components.core.completion import Completion
from components.providers.base import BadResponse, Refused

MAX_COUNT = 10**9  # tokens: far above any context window; a usage beyond it is a broken answer
MAX_ANSWER_BYTES = 32 * 1024 * 1024  # one answer (an HTTP body, or one line of a batch's results), decoded
BAD_BODY_ERRORS = (ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError, RecursionError)


def count(value, what: str) -> int:
    """A token count of a usage block: a whole number from 0 to MAX_COUNT; missing (None) is 0."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadResponse(f"the usage's {what} is not a number ({_short(value)})")
    if (
        not (isinstance(value, int) or math.isfinite(value))
        or not 0 <= value <= MAX_COUNT
        or value != int(value)
    ):
        raise BadResponse(f"the usage's {what} is not a token count ({_short(value)})")
    return int(value)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def no_text(text: str, finish) -> None:
    """BadResponse when an answer's text is empty or only whitespace: never scored (as a wrong answer) nor
    cached, so `--retry-errors` asks again. A finish reason of length (max_tokens, Anthropic's max_tokens)
    says why: max_tokens ended the answer before any text."""
    if text.strip():
        return
    what = "empty" if not text else "only whitespace"
    if finish in ("length", "max_tokens"):
        raise BadResponse(
            f"the answer is {what}: max_tokens ended it before any text (finish_reason "
            f"{finish!r}); raise max_tokens"
        )
    raise BadResponse(f"the answer is {what} (finish_reason {_short(finish)}): no text to score")


def loads(data: bytes | str):
    """JSON text -> object; BadResponse for text that is not JSON or nests too deep to read."""
    try:
        return json.loads(data)
    except RecursionError:
        raise BadResponse("the answer's JSON nests too deep to read") from None
    except ValueError as exc:
        raise BadResponse(f"the answer is not JSON ({str(exc).splitlines()[0][:80]})") from None


def _object(value) -> dict:
    """A JSON object of the answer, or {} where it holds something else (or nothing)."""
    return value if isinstance(value, dict) else {}


def chat_completion(body, default_model: str, latency_s: float = 0.0) -> Completion:
    """An OpenAI chat completion body (a dict) -> Completion. BadResponse when it is not one."""
    if not isinstance(body, dict):  # e.g. an HTML page answered with status 200
        raise BadResponse(
            f"the server's answer is not a chat completion ({type(body).__name__}, not JSON with choices)"
        )
    choices = body.get("choices")
    if not isinstance(choices, list):
        raise BadResponse(f"the answer's choices are not a list ({_short(choices)})")
    if not choices:
        raise BadResponse("the server answered with no choices")
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    finish = choice.get("finish_reason")
    if finish == "content_filter":
        raise Refused(
            "the provider's content filter stopped the answer (finish_reason 'content_filter'): it is not "
            "scored; change the document or question, or rerun with --retry-errors"
        )
    if not isinstance(content, str):
        raise BadResponse(
            f"the answer has no content (finish_reason {finish!r})"
            if content is None
            else f"the answer's content is not text ({_short(content)})"
        )
    no_text(content, finish)
    usage = _object(body.get("usage"))
    details = _object(usage.get("prompt_tokens_details"))
    model = body.get("model")
    return Completion(
        text=content,
        input_tokens=count(usage.get("prompt_tokens"), "prompt_tokens"),
        output_tokens=count(usage.get("completion_tokens"), "completion_tokens"),
        latency_s=latency_s,
        model=model if isinstance(model, str) and model else default_model,
        finish_reason=finish if isinstance(finish, str) else "",
        # OpenAI: prompt-cache hits, part of prompt_tokens
        cached_input_tokens=count(details.get("cached_tokens"), "cached_tokens"),
    )


def message_completion(body, default_model: str, latency_s: float = 0.0) -> Completion:
    """An Anthropic message body (a dict) -> Completion (its text blocks joined). BadResponse when it is
    not one, or has no text."""
    if not isinstance(body, dict):
        raise BadResponse(f"the server's answer is not a message ({type(body).__name__})")
    blocks = body.get("content")
    stop = body.get("stop_reason")
    if stop == "refusal":
        raise Refused(
            "the model refused to answer (stop_reason 'refusal'): it is not scored; change the document "
            "or question, or rerun with --retry-errors"
        )
    if blocks is None:
        raise BadResponse(f"the answer has no content (stop_reason {stop!r})")
    if not isinstance(blocks, list):
        raise BadResponse(f"the answer's content is not a list of blocks ({_short(blocks)})")
    texts = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if text is None:
                continue
            if not isinstance(text, str):
                raise BadResponse(f"a text block's text is not text ({_short(text)})")
            texts.append(text)
    if not texts:
        raise BadResponse(f"the answer has no text content (stop_reason {stop!r})")
    no_text("".join(texts), stop)
    usage = _object(body.get("usage"))
    model = body.get("model")
    # Anthropic's input_tokens counts only the tokens after the last cache hit or write; ours counts every
    # input token, cache reads and writes included and kept apart, so input means the same for every provider
    read = count(usage.get("cache_read_input_tokens"), "cache_read_input_tokens")
    written = count(usage.get("cache_creation_input_tokens"), "cache_creation_input_tokens")
    return Completion(
        text="".join(texts),
        input_tokens=count(usage.get("input_tokens"), "input_tokens") + read + written,
        output_tokens=count(usage.get("output_tokens"), "output_tokens"),
        latency_s=latency_s,
        model=model if isinstance(model, str) and model else default_model,
        finish_reason=stop if isinstance(stop, str) else "",
        cached_input_tokens=read,
        cache_write_tokens=written,
    )
