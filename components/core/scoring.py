"""Scores: pure functions of (prediction, gold answers) or of retrieved vs gold items."""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

import regex

from components.core.resources import package_path

_PUNCTUATION = frozenset(string.punctuation)


def _fuzzy_words(text: str) -> set[str]:
    """R&R §4.3: "after removing non-alphanumeric non-space characters and capitalization", the unique
    words. Alphanumeric in any script: letters and digits (Unicode categories L and N) are kept with the
    marks that belong to them (category M: a Devanagari vowel sign, a combining accent), the text in
    NFC first so a composed and a decomposed accent read alike; capitals are removed by casefold
    (lower() for ASCII). Everything else (punctuation, symbols, "_") goes; white space splits words."""
    text = unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold().replace(_DOTTED_I, "i"))
    return set("".join(ch for ch in text if ch.isspace() or unicodedata.category(ch)[0] in "LNM").split())


# what casefold() makes of the capital I with a dot above (U+0130, "İstanbul"): "i" and a combining dot
# above (U+0307). The dot is the capital's, as the capital is the word's: removing capitalization (R&R
# §4.3) leaves "istanbul", as the word is written in lower case.
_DOTTED_I = "i\u0307"


def fuzzy_match(prediction: str, answers: Iterable[str]) -> float:
    """R&R §4.3: 1 if all unique words of the gold answer appear in the prediction or vice versa.

    An empty prediction, or one with no letter or digit (nothing left after removing the other
    characters), scores 0 against every gold answer: the paper's "or vice versa" would find its empty
    set of words inside any answer and score it 1, which would make a blank reply right. A gold answer
    with no words is skipped (it can match nothing)."""
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


# --- RULER (Hsieh et al. 2024), whose NIAH tasks and scorers ALR2 takes (ALR2 §4, App. B.1) -------------
# NVIDIA/RULER, scripts/eval/synthetic/constants.py: string_match_all (the NIAH tasks, variable tracking,
# word extraction) and string_match_part (QA); scripts/eval/evaluate.py, postprocess_pred: the prediction
# is stripped, its control characters (\x00-\x1f) turned into newlines, stripped again. Both compare
# lower-cased text; a reference counts when it is contained anywhere in the prediction.

_CONTROL = re.compile(r"[\x00-\x1f]")


def ruler_prediction(text: str) -> str:
    """RULER's postprocess_pred: strip, every character \x00-\x1f as a newline, strip."""
    return _CONTROL.sub("\n", (text or "").strip()).strip()


def ruler_match_all(prediction: str, answers: Iterable[str]) -> float:
    """RULER's string_match_all for one prediction: the share of the references (every gold answer) that the
    prediction contains, case-insensitive. A complete multi-value answer scores 1, two of four values 0.5.
    Not a 0/1 score: a cell's mean is the mean of these shares, as RULER averages them. No references: 0."""
    refs = list(answers)
    if not refs:
        return 0.0
    pred = ruler_prediction(prediction).lower()
    return sum(1.0 for r in refs if (r or "").lower() in pred) / len(refs)


def ruler_match_part(prediction: str, answers: Iterable[str]) -> float:
    """RULER's string_match_part for one prediction: 1 if the prediction contains any reference,
    case-insensitive, else 0 (RULER scores its QA tasks so)."""
    pred = ruler_prediction(prediction).lower()
    return 1.0 if any((r or "").lower() in pred for r in answers) else 0.0


# --- "Context Overloading in RAG Based Systems" (a student project, seed 004): its evaluation, §4.2 ---


def _stopwords() -> frozenset[str]:
    """NLTK's English stopword list (179 words; NLTK data, Apache-2.0), shipped as components/data/stopwords_en.txt
    so nothing is downloaded (lines starting with # are its note)."""
    text = package_path("data", "stopwords_en.txt").read_text(encoding="utf-8")
    return frozenset(w.strip() for w in text.splitlines() if w.strip() and not w.startswith("#"))


STOPWORDS = _stopwords()
# a word: letters and digits of any script ("zürich", "東京", "1899"), with an apostrophe's ending ("zahm's")
_KEYWORD_RE = re.compile(r"[^\W_]+(?:'[^\W\d_]+)?")


def keywords(text: str) -> list[str]:
    """Context Overloading §4.4: the words of text lower-cased, without NLTK's stopwords or punctuation, in
    order (repeats kept). Lower-casing comes first (as its §3.1 preprocessing does), so "What" is a stopword.
    A word is a run of letters and digits in any script (the text in NFC first, so an accent written as a
    combining mark stays in its word): "Zürich" is one keyword, "zürich"."""
    text = unicodedata.normalize("NFC", text or "").lower()
    return [
        w for w in _KEYWORD_RE.findall(text) if w not in STOPWORDS and w.replace("'", "") not in STOPWORDS
    ]


def mq_normal(text: str) -> str:
    """Context Overloading's normalised form of an answer (§4.2 compares answers "in their normalized form"
    with the normalisation of its §3.1: "converting all text to lowercase and trimming whitespace" and
    "punctuation was stripped"): lower-cased, punctuation dropped, white space collapsed. The words stay,
    articles and stopwords included: Fig. 17 counts "an early wind tunnel" against "John Zahm's brother
    constructed the early wind tunnel at Notre Dame." as a mismatch (partially correct), which dropping
    "an" and "the" (SQuAD's normalize_answer, or §3.1's stopword removal) would make a match."""
    text = "".join(ch for ch in (text or "").lower() if ch not in _PUNCTUATION)
    return " ".join(text.split())


def mq_match(prediction: str, answers: Iterable[str]) -> float:
    """Context Overloading §4.2: correct when the gold answer and the model's answer contain one another
    ("we checked if one was a substring of the other, both in their raw form and in their normalized
    form"): raw (as written) or normalised (mq_normal), either way round, any gold answer.
    An empty answer (or one that normalises to nothing) never matches: it is a substring of everything.
    As in the paper, a very short answer inside the gold one counts ("1" against "1899")."""
    pred = (prediction or "").strip()
    if not pred:
        return 0.0
    npred = mq_normal(pred)
    for gold in answers:
        g = (gold or "").strip()
        if g and (g in pred or pred in g):
            return 1.0
        ng = mq_normal(g)
        if ng and npred and (ng in npred or npred in ng):
            return 1.0
    return 0.0


NOT_SPECIFIED = "Not specified"  # Figure 19: what the model answers when the context lacks the answer
CATEGORIES = ("correct", "partial", "not_specified", "wrong")  # §4.2 and §5.3's classes of answers


def is_not_specified(prediction: str) -> bool:
    """The answer says "not specified" (Figure 18: "Not specified (The context does not provide ...)",
    "... was not specified."), any case; an empty answer (no answer line) counts too."""
    text = " ".join((prediction or "").lower().split())
    return not text or "not specified" in text


def mostly_present(prediction: str, answers: Iterable[str]) -> bool:
    """The "partially correct" rule (§4.2: answers "that contained the key information or main keywords
    required, but did not exactly match the gold label"): at least half of some gold answer's keywords
    (keywords(): lower-cased, NLTK stopwords out) are among the answer's. Figure 17's "Around 1899" against
    "Jerome Green sent his first wireless message in 1899." has 1 of 2 (1899): partial."""
    pred = set(keywords(prediction))
    for gold in answers:
        g = set(keywords(gold))
        if g and 2 * len(g & pred) >= len(g):
            return True
    return False


def mq_category(prediction: str, answers: Iterable[str]) -> str:
    """One of CATEGORIES: correct (mq_match), else not_specified (is_not_specified), else partial
    (mostly_present), else wrong. The paper sorted its mismatches by hand (§5.3); these rules are ours, and
    they put its four worked examples where it put them: Fig. 17's S7 ("Around 1899") and S9 ("an early
    wind tunnel") partial, Fig. 18's two not specified."""
    answers = list(answers)
    if mq_match(prediction, answers):
        return "correct"
    if is_not_specified(prediction):
        return "not_specified"
    return "partial" if mostly_present(prediction, answers) else "wrong"


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
    """A sentence as ALR2 §5.1's measures compare it: Unicode-normalised (NFKC), lower-cased, every
    character that is not a letter or a digit (in any script) turned into a space, white space
    collapsed."""
    return " ".join(_NOT_WORD.sub(" ", unicodedata.normalize("NFKC", s).lower()).split())


_NOT_WORD = re.compile(r"[\W_]+")


@lru_cache(maxsize=65536)
def _page_sentences(text: str) -> frozenset[str]:
    # one page (passage) at a time, so no sentence spans two pages; remembered, since a sweep puts
    # the same passages into many documents
    from components.core.documents import split_sentences

    out: set[str] = set()
    for piece in _pieces(text):
        out.update(n for n in (_norm_sentence(s) for s in split_sentences(piece)) if n)
    return frozenset(out)


_CUT = re.compile(r"(?<=[.!?])\s+")
_PIECE = 2000  # characters: pysbd slows down steeply on long paragraphs (a minute for 70,000 words)


def _pieces(text: str) -> list[str]:
    """A page as pieces of about _PIECE characters, cut only after a sentence end (".", "!", "?" then
    white space), where pysbd would end a sentence as well; a short page is one piece."""
    if len(text) <= _PIECE:
        return [text]
    out, start, last = [], 0, 0
    for m in _CUT.finditer(text):
        if m.start() - start > _PIECE and last > start:
            out.append(text[start:last])
            start = last
        last = m.end()
    out.append(text[start:])
    return out


def context_sentences(context: str | Iterable[str]) -> frozenset[str]:
    """The normalised sentences of a context: one text, or its pages' texts (each split on its own)."""
    texts = [context] if isinstance(context, str) else list(context)
    out: set[str] = set()
    for text in texts:
        out |= _page_sentences(text or "")
    return frozenset(out)


def sentence_counts(sentences: Iterable[str], context: str | Iterable[str]) -> tuple[int, int]:
    """ALR2 §5.1, per trial: (retrieved sentences, those that match no sentence of the context).

    ALR2 counts sentences, not bullets: a retrieved item (a "-" bullet, a quote) is split into its
    sentences as the context is (pysbd), and each is one retrieved sentence, so a bullet that copies two
    sentences of the context counts two, both in it. "In the context" is the paper's "match any
    sentences in the context": the retrieved sentence, normalised, equals one of the context's sentences,
    normalised (sentences split page by page). A fragment of a sentence does not match. A piece with no
    letter or digit is not a sentence and is not counted."""
    from components.core.documents import split_sentences

    items = [n for s in sentences if s for n in (_norm_sentence(x) for x in split_sentences(s)) if n]
    if not items:
        return 0, 0
    known = context_sentences(context)
    return len(items), sum(1 for s in items if s not in known)


def hallucination_rate(sentences: Iterable[str], context: str | Iterable[str]) -> float | None:
    """ALR2 §5.1: share of retrieved sentences that match no sentence of the context (one trial's;
    a cell's rate pools the counts of its trials: components.report.analysis)."""
    retrieved, hallucinated = sentence_counts(sentences, context)
    return hallucinated / retrieved if retrieved else None


def gold_fact_counts(sentences: Iterable[str], gold_sentences: Iterable[str]) -> tuple[int, int]:
    """ALR2 §5.1, per trial: (gold supporting facts, those recalled). A gold fact is recalled when
    a retrieved sentence contains it (normalised, as whole words)."""
    gold = [n for n in (_norm_sentence(g) for g in gold_sentences if g) if n]
    if not gold:
        return 0, 0
    got = [f" {n} " for n in (_norm_sentence(s) for s in sentences if s) if n]
    return len(gold), sum(1 for g in gold if any(f" {g} " in s for s in got))


def gold_sentence_recall(sentences: Iterable[str], gold_sentences: Iterable[str]) -> float | None:
    """ALR2 §5.1: share of gold supporting facts that a retrieved sentence contains (one trial's;
    a cell's recall pools the counts of its trials)."""
    gold, recalled = gold_fact_counts(sentences, gold_sentences)
    return recalled / gold if gold else None


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
