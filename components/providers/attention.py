"""The attention measure: the share of the last prompt token's attention that each page of a prompt gets.

Why: Hsieh et al. 2024 ("Found in the Middle", arXiv 2406.16008) §2-3 tie the lost middle to a U-shaped
positional attention bias: the first and last documents of a prompt get more attention whatever their
relevance. Peysakhovich and Lerer 2023 ("Attention Sorting", arXiv 2310.01427) §3 show that a relevant
document still gets more attention than an irrelevant one at the same place, and sort by it.

What is measured (only the bundled local model can: components/providers/localattention.py reads llama.cpp's
attention weights): for each layer, the last prompt token's attention row (a softmax over the prompt's
tokens, summing to 1) averaged over heads; a page's mass is that row summed over the page's tokens (its
region of the prompt, PAGE tags included, as the prompt map draws it), and `other` is the rest (the
instructions, the question, the chat template). `masses` averages the layers; `late` averages the last
half of the layers, as Hsieh et al. §4 calibrate the last 16 of their 7B models' 32 layers. Per-layer
values are kept.

A call is cached in the run store's `calls` table like any call, under `attention_key` (its own shape:
it never collides with a completion's or a score's key); its response is `Attention.to_json`, settings
`{"measure": "attention", "regions": ...}`, finish_reason "attention".
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass

from components.core.completion import Completion, NoAttention, no_attention

__all__ = ["NoAttention"]  # defined with Ask (core/completion.py): strategies raise it too
ATTENTION_PROVIDERS = ("local",)
FINISH = "attention"  # finish_reason of a stored attention call
PAGE_KINDS = ("page", "gold")  # the prompt spans that are pages (core.prompts.SPAN_KINDS)


def refusal(provider: str) -> str:
    return no_attention(provider)


def check_provider(provider: str) -> None:
    if provider not in ATTENTION_PROVIDERS:
        raise NoAttention(refusal(provider) + '; use the bundled local model (provider = "local")')


def can_attend(provider) -> bool:
    return callable(getattr(provider, "attention", None))


def regions_of(prompt) -> list[tuple[int, int, int]]:
    """(page number, start char, end char) of each page of a prompt (core.prompts.Prompt), in prompt order."""
    return [(int(s.page), s.start_char, s.end_char) for s in prompt.spans if s.kind in PAGE_KINDS]


@dataclass(frozen=True)
class Attention:
    """One prompt's attention by page."""

    pages: tuple[int, ...]  # page numbers, in prompt order
    layers: tuple[tuple[float, ...], ...]  # per layer: each page's mass (mean over heads)
    other: tuple[float, ...]  # per layer: the mass outside every page
    page_tokens: tuple[int, ...]  # the model's tokens in each page
    prompt_tokens: int
    latency_s: float = 0.0
    model: str = ""
    cached: bool = False

    @property
    def masses(self) -> tuple[float, ...]:
        """Each page's mass, averaged over all layers."""
        return mean_rows(self.layers)

    @property
    def late(self) -> tuple[float, ...]:
        """Each page's mass, averaged over the last half of the layers (Hsieh et al. §4's choice)."""
        return mean_rows(self.layers[len(self.layers) // 2 :])

    @property
    def other_mass(self) -> float:
        return math.fsum(self.other) / len(self.other) if self.other else 0.0

    def mass_of(self, page: int) -> float | None:
        return self.masses[self.pages.index(page)] if page in self.pages else None

    def summary(self) -> dict:
        """What `litm prompt --attention --json` prints."""
        return {
            "model": self.model,
            "pages": [{"page": p, "mass": m} for p, m in zip(self.pages, self.masses, strict=True)],
            "other": self.other_mass,
            "layers": len(self.layers),
            "prompt_tokens": self.prompt_tokens,
        }

    def to_json(self) -> str:
        return json.dumps(
            {
                "pages": list(self.pages),
                "layers": [list(r) for r in self.layers],
                "other": list(self.other),
                "page_tokens": list(self.page_tokens),
                "prompt_tokens": self.prompt_tokens,
            }
        )

    def reply(self) -> dict:
        """The worker's message (from_dict reads it back, latency and model included)."""
        return {**json.loads(self.to_json()), "latency_s": self.latency_s, "model": self.model}

    def completion(self) -> Completion:
        return Completion(
            self.to_json(), self.prompt_tokens, 0, self.latency_s, self.model, self.cached, FINISH
        )

    @classmethod
    def from_dict(
        cls, d: dict, latency_s: float | None = None, model: str = "", cached: bool = False
    ) -> Attention:
        return cls(
            tuple(int(p) for p in d["pages"]),
            tuple(tuple(float(x) for x in row) for row in d["layers"]),
            tuple(float(x) for x in d["other"]),
            tuple(int(n) for n in d["page_tokens"]),
            int(d["prompt_tokens"]),
            float(d.get("latency_s", 0.0)) if latency_s is None else latency_s,
            model or str(d.get("model", "")),
            cached,
        )

    @classmethod
    def from_completion(cls, c: Completion) -> Attention:
        return cls.from_dict(json.loads(c.text), c.latency_s, c.model, c.cached)


def mean_rows(rows) -> tuple[float, ...]:
    if not rows:
        return ()
    return tuple(math.fsum(col) / len(rows) for col in zip(*rows, strict=True))


def token_spans(offsets: list[int], regions: list[tuple[int, int, int]], base: int) -> list[tuple[int, int]]:
    """[first, end) token of each region: `offsets[i]` is token i's first byte in the prompt, a region's
    bytes are [base + start, base + end); a token belongs to the region its first byte is in."""
    import bisect

    return [
        (bisect.bisect_left(offsets, base + start), bisect.bisect_left(offsets, base + end))
        for _, start, end in regions
    ]


def span_masses(rows, spans: list[tuple[int, int]]) -> tuple[list[list[float]], list[float]]:
    """(per layer, each span's mass; per layer, the mass outside every span) from the last token's
    attention rows [layers, heads, n_tokens]: mean over heads, then summed over each span (float64)."""
    import numpy as np

    per_layer = np.asarray(rows, dtype=np.float64).mean(axis=1)  # [layers, n_tokens]
    inside = np.zeros(per_layer.shape[1], dtype=bool)
    masses = []
    for a, b in spans:
        masses.append(per_layer[:, a:b].sum(axis=1))
        inside[a:b] = True
    other = per_layer[:, ~inside].sum(axis=1)
    by_layer = [[float(m[i]) for m in masses] for i in range(per_layer.shape[0])]
    return by_layer, [float(x) for x in other]


def attention_key(spec, messages: list[dict], regions: list[tuple[int, int, int]]) -> str:
    payload = {
        "provider": spec.provider,
        "model": spec.model,
        "base_url": spec.base_url or "",
        "messages": messages,
        "attention": [list(r) for r in regions],
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def attention_settings(regions: list[tuple[int, int, int]]) -> dict:
    return {"measure": "attention", "regions": [list(r) for r in regions]}
