"""Two strategies that reorder the documents of the LITM QA prompt by where the model looks, then answer.

Both read the attention of the last prompt token by document (components/providers/attention.py: mean over
heads, summed over a document's tokens); only the bundled local model gives it, so both are refused in one
line for every other provider (a sweep's config check, before any call: run/measure.check_measure).

- `attention-sort`: Peysakhovich and Lerer 2023 ("Attention Sorting Combats Recency Bias In Long Context
  Language Models", arXiv 2310.01427) §3: "perform one step of decoding, sort documents by the attention
  they receive (highest attention going last), repeat the process, generate the answer with the newly sorted
  context". The last prompt token's attention is the attention of that first decoding step; a document's
  attention is its tokens' summed over, averaged over every layer and head, as theirs. `rounds` is the
  number of sorts (their §4 sorts up to several times; 1 here by default).
- `calibrated-attention`: Hsieh et al. 2024 ("Found in the Middle", arXiv 2406.16008) §3-4: the attention a
  document gets is relevance plus a positional bias; the bias at position k is the attention that a fixed
  irrelevant ("dummy") document gets at k in the same prompt, and calibrated attention = Attn(doc, k) -
  Attn(dummy, k). Here: one call with the documents as given, one per position with the dummy in that
  position's place (the O(K) forward passes the paper counts), a document's attention per token (its mass
  over its tokens, so a long document is not favoured: our reading of §2's average over the document's
  tokens), over the last half of the layers (§4 calibrates the last 16 of their 7B models' 32 layers);
  then the documents are ranked by calibrated attention and reordered, most relevant last, nearest the
  question (the placement attention sorting uses; the paper intervenes in the attention itself during
  generation, which llama.cpp gives no hook for: docs/sweeps.md says what differs). The probe (probe_orders,
  CalibratedAttention.probe_prompts, dummy_reading) is the one `litm prompt --attention --dummy-probe` runs.
"""

from __future__ import annotations

from components.core.completion import NoAttention
from components.core.documents import Document, Page
from components.core.prompts import Prompt, PromptBuilder, load_template
from components.core.tokens import tokenizer
from components.strategies.base import Outcome, Param, answer_outcome, fill
from components.strategies.litm import LitmQA, pages_block

ROUNDS = Param(
    "rounds", 1, "times the documents are sorted by attention before the answer", unit="rounds", maximum=5
)
DUMMY = Page(
    0,
    "This passage is a placeholder. It says nothing about any person, place, event or thing, and it holds "
    "no answer to any question.",
    0,
    "Placeholder",
)  # Hsieh et al. §3's dummy document: fixed, irrelevant; page number 0 marks it in the prompt's spans


def attention_sorted(pages: list[Page], mass: dict[int, float]) -> list[Page]:
    """Peysakhovich and Lerer §3: the pages by the attention they received, highest last (a stable sort:
    equal attention keeps the order shown)."""
    return sorted(pages, key=lambda p: mass[p.number])


def calibrated(order: list[Page], per_token: dict[int, float], bias: list[float]) -> dict[int, float]:
    """Hsieh et al. §3-4: each page's attention per token at its position minus the dummy's at the same
    position (bias[k]: the dummy document's attention per token at position k of `order`)."""
    return {p.number: per_token[p.number] - bias[k] for k, p in enumerate(order)}


def calibrated_order(order: list[Page], score: dict[int, float]) -> list[Page]:
    """The pages ranked by calibrated attention, most relevant last (ties keep the order shown)."""
    return sorted(order, key=lambda p: score[p.number])


def probe_orders(order: list[Page], dummy: Page) -> list[list[Page]]:
    """Hsieh et al. §3's probe of the positional bias: for each position k of `order`, the same documents with
    the fixed dummy in position k's place (one order per position, K in all)."""
    return [[dummy if i == k else page for i, page in enumerate(order)] for k in range(len(order))]


def dummy_reading(found) -> dict:
    """What a probe prompt's attention (providers.attention.Attention) says of the dummy (page number 0): its
    mass over all layers, over the last half of the layers (`late`, Hsieh et al. §4), its tokens, and its
    late mass per token (§2's average over a document's tokens: what calibrated-attention subtracts)."""
    at = found.pages.index(DUMMY.number)
    tokens = found.page_tokens[at]
    late = found.late[at]
    return {"mass": found.masses[at], "late": late, "tokens": tokens, "late_per_token": late / max(tokens, 1)}


def attend_of(ask):
    """The attention call the runner hands a strategy with its ask (run/trial.execute); NoAttention without."""
    attend = getattr(ask, "attend", None)
    if attend is None:
        raise NoAttention(
            "attention is not available here: providers do not return it; use the bundled local model"
        )
    return attend


class AttentionSort(LitmQA):
    name = "attention-sort"
    label = "Attention sorting"
    summary = "Sorts the documents by the model's attention, most-attended last, then answers (local model)."
    paper = "Peysakhovich and Lerer 2023 §3 (attention sorting) + LITM QA prompt"
    params: tuple[Param, ...] = (ROUNDS,)
    stages = 2  # the answer's prompt depends on the attention of the first
    needs_attention = True

    def prompt_of(
        self, doc: Document, pages: list[Page], question: str, stage: int = 1, label: str = ""
    ) -> Prompt:
        b = PromptBuilder(doc.encoding)
        fill(b, load_template(self.template), question, documents=pages_block(doc, pages))
        return b.build(stage, label or "answer", max_tokens=100)

    def first_prompts(self, doc, question, params=None) -> list[Prompt]:
        self.check(doc, question, params)
        return [self.prompt_of(doc, list(doc.pages), question, 1, "attention")]

    async def run(self, doc, question, params, ask) -> Outcome:
        p = self.check(doc, question, params)
        attend = attend_of(ask)
        order, prompts = list(doc.pages), []
        for i in range(p["rounds"]):
            prompt = self.prompt_of(doc, order, question, 1, f"attention (round {i + 1})")
            found = await attend(prompt)
            order = attention_sorted(order, dict(zip(found.pages, found.masses, strict=True)))
            prompts.append(prompt)
        final = self.prompt_of(doc, order, question, 2)
        done = await ask(final)
        return answer_outcome(self.parse(done.text, doc), [*prompts, final], [done])


class CalibratedAttention(AttentionSort):
    name = "calibrated-attention"
    label = "Calibrated-attention reorder"
    summary = "Ranks documents by attention minus the positional bias (a dummy's), most relevant last (local model)."
    paper = "Hsieh et al. 2024 §3-4 (found in the middle) + LITM QA prompt"
    params = ()

    def dummy(self, doc: Document) -> Page:
        return DUMMY._replace(tokens=tokenizer(doc.encoding).count(DUMMY.text))

    def probe_prompts(self, doc: Document, order: list[Page], question: str) -> list[Prompt]:
        """The K prompts of Hsieh et al. §3's probe: the dummy in each position's place (probe_orders), the
        LITM QA prompt as the strategy's first call; `litm prompt --dummy-probe` measures the same ones."""
        dummy = self.dummy(doc)
        return [
            self.prompt_of(doc, probe, question, 1, f"positional bias at document {k + 1}")
            for k, probe in enumerate(probe_orders(order, dummy))
        ]

    async def run(self, doc, question, params, ask) -> Outcome:
        self.check(doc, question, params)
        attend = attend_of(ask)
        order = list(doc.pages)
        first = self.prompt_of(doc, order, question, 1, "attention")
        found = await attend(first)
        per_token = {
            n: m / max(t, 1) for n, m, t in zip(found.pages, found.late, found.page_tokens, strict=True)
        }
        prompts, bias = [first], []
        for prompt in self.probe_prompts(doc, order, question):
            bias.append(dummy_reading(await attend(prompt))["late_per_token"])
            prompts.append(prompt)
        final = self.prompt_of(doc, calibrated_order(order, calibrated(order, per_token, bias)), question, 2)
        done = await ask(final)
        return answer_outcome(self.parse(done.text, doc), [*prompts, final], [done])
