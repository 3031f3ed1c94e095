"""Scores: pure functions of (prediction, gold answers) or of retrieved vs gold items."""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable

import regex

_PUNCTUATION = frozenset(string.punctuation)


def _fuzzy_words(text: str) -> set[str]:
    """R&R §4.3: "after removing non-alphanumeric non-space characters and capitalization", the unique
    words. Alphanumeric in any script: letters and digits (Unicode categories L and N) are kept with the
    marks that belong to them (category M: a Devanagari vowel sign, a combining accent), the text in
    NFC first so a composed and a decomposed accent read alike; capitals are removed by casefold
    (lower() for ASCII). Everything else (punctuation, symbols, "_") goes; white space splits words."""
    text = unicodedata.normalize("NFC", text).casefold()
    return set("".join(ch for ch in text if ch.isspace() or unicodedata.category(ch)[0] in "LNM").split())


def fuzzy_match(prediction: str, answers: Iterable[str]) -> float:
    """R&R §4.3: 1 if all unique words of the gold answer appear in the prediction or vice versa."""
    pred = _fuzzy_words(prediction or "")
    for gold in answers:
        g = _fuzzy_words(gold or "")
        if not g and not pred:
            continue
        if (g and g <= pred) or (pred and pred <= g):
            return 1.0
    return 0.0


def normalize_answer(text: str) -> str:
    """SQuAD normalisation, as the "Lost in the Middle" repository writes it (metrics.py): lower-case,
    drop punctuation, drop the articles a/an/the, collapse white space (the `regex` module, as there)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = regex.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def litm_prediction(text: str) -> str:
    """What the LITM evaluation scores (evaluate_qa_responses.py): everything up to the first newline,
    then stripped: `split("\\n")[0].strip()`. So an answer that starts with a newline scores 0."""
    return (text or "").split("\n")[0].strip()


def best_subspan_em(prediction: str, answers: Iterable[str]) -> float:
    """LITM (§2, its repository's metric, exactly): 1 if a normalised gold answer is a substring of
    the normalised first line of the prediction. As in the reference, a gold answer that normalises
    to "" (the NQ answer `*`) is a substring of anything, so it always scores 1."""
    pred = normalize_answer(litm_prediction(prediction)).lower()
    for gold in answers:
        if normalize_answer(gold or "").lower() in pred:
            return 1.0
    return 0.0


def exact_match(prediction: str, answers: Iterable[str]) -> float:
    """ALR2's EM: the normalised prediction equals a normalised gold answer."""
    pred = normalize_answer(prediction or "")
    return 1.0 if any(pred == normalize_answer(g or "") for g in answers) else 0.0


def kv_match(prediction: str, answers: Iterable[str]) -> float:
    """LITM §4.1 key-value retrieval, as its evaluate_kv_responses.py scores it (nelson-liu/lost-in-the-middle,
    scripts/evaluate_kv_responses.py: `1.0 if example["value"].lower() in model_answer.lower() else 0.0`):
    the value anywhere in the WHOLE response, case-insensitive, nothing normalised or cut. So
    "\n<value>", "The value is:\n<value>" and "<VALUE>" score 1 (best subspan EM, which reads only the
    first line and drops punctuation, scores the first two 0), and a uuid written without its hyphens
    scores 0. Several gold answers: any one found counts."""
    response = (prediction or "").lower()
    return 1.0 if any((gold or "").lower() in response for gold in answers) else 0.0


# the answer metrics of components.core.metrics, by name
SCORERS = {"fuzzy": fuzzy_match, "subspan-em": best_subspan_em, "exact": exact_match, "kv-match": kv_match}


def score(metric: str, prediction: str, answers: Iterable[str]) -> float:
    try:
        fn = SCORERS[metric]
    except KeyError:
        raise ValueError(f"unknown answer metric {metric!r}; choose one of {', '.join(SCORERS)}") from None
    return fn(prediction, list(answers))


def retrieval_recall(retrieved: Iterable[int], gold: Iterable[int]) -> float | None:
    g = set(gold)
    if not g:
        return None
    return len(g & set(retrieved)) / len(g)


def retrieval_precision(retrieved: Iterable[int], gold: Iterable[int]) -> float | None:
    r = set(retrieved)
    if not r:
        return None
    return len(r & set(gold)) / len(r)


def _norm_sentence(s: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z\s]", " ", s.lower()).split())


def hallucination_rate(sentences: Iterable[str], context: str) -> float | None:
    """ALR2 §5.1: share of retrieved sentences that do not appear in the context."""
    items = [_norm_sentence(s) for s in sentences if s and s.strip()]
    if not items:
        return None
    ctx = _norm_sentence(context)
    return sum(1 for s in items if s not in ctx) / len(items)


def gold_sentence_recall(sentences: Iterable[str], gold_sentences: Iterable[str]) -> float | None:
    """ALR2 §5.1: share of gold supporting sentences that appear among the retrieved ones."""
    gold = [_norm_sentence(g) for g in gold_sentences if g and g.strip()]
    if not gold:
        return None
    got = [_norm_sentence(s) for s in sentences]
    return sum(1 for g in gold if any(g in s or (s and s in g and len(s) > len(g) / 2) for s in got)) / len(gold)


def require_all(scorer, prediction: str, answers: Iterable[str]) -> float:
    """For tasks whose every answer is required (multi-value NIAH, ALR2 App. B.1 / RULER): 1 only if
    each gold answer on its own scores 1 against the prediction."""
    golds = [a for a in answers if a]
    return float(bool(golds) and all(scorer(prediction, [g]) == 1.0 for g in golds))


def scorer_for(fn, answer_mode: str = "any"):
    """The scorer as a task needs it: any gold answer counts (default), or all are required."""
    if answer_mode == "all":
        return lambda prediction, answers: require_all(fn, prediction, answers)
    return fn
