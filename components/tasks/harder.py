"""Harder synthetic tasks, where current models still lose what they read, each with a literal control
built from the same facts (`literal=1`: the same seed gives the same names, haystack and places, and only
what the control changes). Generated from banks of our own text (components/data/bank_*.json and
bank_names.txt) among paragraphs of the built-in haystack, seeded and offline.

- latent (NoLiMa's idea, our items): the needle names a clue ("Every morning Dalia jogs past the
  Atomium."), the question a place it belongs to ("Which character has been to Brussels?"); they share
  no content word (core.scoring.keywords: NLTK's English stopwords aside). `hops=1` asks for the clue's
  place (Brussels), `hops=2` for the larger place holding it (Belgium). Control: the needle says the
  place in the question's words ("Dalia has been to Brussels.").
- spaced: the answer needs two facts ("Dalia works at Moorcroft Glassworks." ... "Moorcroft Glassworks
  has its only office in Oakmere."), with `distance` tokens of haystack sentences between them, all in one
  gold page so a sweep moves them together and keeps the distance. Control: both facts in one sentence,
  the same filler after it (the page as long).
- near-miss: the needle among `near_misses` distractors of the same wording with one detail changed
  (another place, or another person's) and another value. Control: as many distractors, each a sentence
  of another frame of the bank, so only their likeness to the needle differs.
"""

from __future__ import annotations

import inspect
import json
import random
import re
from dataclasses import dataclass
from functools import lru_cache

from components.core.documents import split_sentences
from components.core.resources import package_path
from components.core.scoring import keywords
from components.core.tokens import DEFAULT_ENCODING, tokenizer
from components.tasks.haystack import haystack_paragraphs
from components.tasks.model import Passage, Task

DESCRIPTIONS = {
    "latent": "Question and needle share no word: one or two hops of common knowledge (NoLiMa's idea)",
    "spaced": "Two facts needed, a chosen number of tokens apart",
    "near-miss": "The needle among distractors of its own wording with one detail changed",
}


@lru_cache(maxsize=4)
def bank(name: str) -> dict:
    """components/data/bank_<name>.json."""
    return json.loads(package_path("data", f"bank_{name}.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def names() -> tuple[str, ...]:
    text = package_path("data", "bank_names.txt").read_text(encoding="utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def content_words(text: str) -> set[str]:
    """The words of text that carry content: lower-cased, NLTK's English stopwords and punctuation
    dropped, a possessive's "'s" too ("Dalia's" -> "dalia")."""
    return {w.removesuffix("'s") for w in keywords(text)}


def _rng(kind: str, seed: int) -> random.Random:
    return random.Random(f"{kind}:{seed}")  # str seeds hash with sha512: stable across runs


def _mentions(text: str, words: list[str]) -> bool:
    return any(re.search(r"(?<!\w)" + re.escape(w) + r"(?!\w)", text, re.IGNORECASE) for w in words if w)


def _haystack(rng: random.Random, paragraphs: int, avoid: list[str]) -> list[Passage]:
    """`paragraphs` haystack paragraphs from a random start, none mentioning a word of `avoid`."""
    hay = [p for p in haystack_paragraphs() if not _mentions(p, avoid)]
    start = rng.randrange(len(hay))
    return [Passage(hay[(start + i) % len(hay)]) for i in range(min(paragraphs, len(hay)))]


def _insert(rng: random.Random, hay: list[Passage], pages: list[Passage]) -> tuple[Passage, ...]:
    """Pages at random places among the haystack paragraphs, in their given order."""
    out = list(hay)
    slots = sorted(rng.randint(0, len(hay)) for _ in pages)
    for offset, (slot, page) in enumerate(zip(slots, pages, strict=True)):
        out.insert(slot + offset, page)
    return tuple(out)


def _check(literal: int, paragraphs: int) -> None:
    if literal not in (0, 1):
        raise ValueError(f"literal must be 0 or 1, got {literal!r}")
    if paragraphs < 0:
        raise ValueError(f"paragraphs must be 0 or more, got {paragraphs!r}")


def _meta(kind: str, seed: int, literal: int, **extra) -> dict:
    return {
        "haystack": "builtin",
        "generator": kind,
        "seed": seed,
        "control": "literal" if literal else "",
        **extra,
    }


def _id(kind: str, seed: int, i: int, literal: int, axis: str) -> str:
    return f"{kind}{'-literal' if literal else ''}-{axis}-{seed}-{i:04d}"


# --- latent ----------------------------------------------------------------------------------------


def latent_items(hops: int) -> list[tuple[dict, str]]:
    """(item, place asked for) of every bank item, checked: no needle of the item shares a content word
    with its question (ValueError names an item that does: the bank is wrong)."""
    b = bank("latent")
    out = []
    for item in b["items"]:
        t = b["templates"][item["kind"]]
        place = item["hop1"] if hops == 1 else item["hop2"]
        q = content_words(t["question"].format(place=place))
        for needle in t["needles"]:
            shared = q & content_words(needle.format(name="", clue=item["clue"]))
            if shared:
                raise ValueError(
                    f"bank_latent.json: {item['clue']!r} shares {sorted(shared)} with its question"
                )
        out.append((item, place))
    return out


def gen_latent(n: int, seed: int, hops: int = 1, literal: int = 0, paragraphs: int = 12) -> list[Task]:
    if hops not in (1, 2):
        raise ValueError(f"hops must be 1 or 2, got {hops!r}")
    _check(literal, paragraphs)
    rng = _rng("latent", seed)
    items = latent_items(hops)
    picks = rng.sample(items, n) if n <= len(items) else [rng.choice(items) for _ in range(n)]
    b = bank("latent")
    tasks = []
    for i, (item, place) in enumerate(picks):
        name = rng.choice(names())
        t = b["templates"][item["kind"]]
        needle = rng.choice(t["needles"])
        text = (t["literal"] if literal else needle).format(name=name, clue=item["clue"], place=place)
        hay = _haystack(rng, paragraphs, [name, item["hop1"], item["hop2"], item["clue"]])
        gold = Passage(text, "", True)
        tasks.append(
            Task(
                _id("latent", seed, i, literal, f"h{hops}"),
                t["question"].format(place=place),
                (name,),
                _insert(rng, hay, [gold]),
                "latent",
                (text,),
                _meta(
                    "latent",
                    seed,
                    literal,
                    hops=hops,
                    link=[item["clue"], item["hop1"], item["hop2"]][: hops + 1],
                ),
            )
        )
    return tasks


# --- spaced ----------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def haystack_sentences() -> tuple[str, ...]:
    return tuple(s for p in haystack_paragraphs() for s in split_sentences(p))


def filler(rng: random.Random, distance: int, avoid: list[str]) -> tuple[str, int]:
    """Haystack sentences, from a random start, until they hold at least `distance` tokens (the
    project's default encoding): the text and its token count."""
    if distance <= 0:
        return "", 0
    count = tokenizer(DEFAULT_ENCODING).count
    sents = [s for s in haystack_sentences() if not _mentions(s, avoid)]
    start = rng.randrange(len(sents))
    text = ""
    for k in range(len(sents) * 4):
        text = (text + " " if text else "") + sents[(start + k) % len(sents)]
        if count(text) >= distance:
            break
    return text, count(text)


def gen_spaced(n: int, seed: int, distance: int = 500, literal: int = 0, paragraphs: int = 12) -> list[Task]:
    if distance < 0:
        raise ValueError(f"distance must be 0 or more tokens, got {distance!r}")
    _check(literal, paragraphs)
    rng = _rng("spaced", seed)
    b = bank("spaced")
    tasks = []
    for i in range(n):
        chain = rng.choice(b["chains"])
        slots = {k: rng.choice(v) for k, v in b["slots"].items()}
        slots["name"] = rng.choice(names())
        answer = slots[chain["answer"]]
        avoid = [answer, slots["name"]]
        gap, tokens = filler(rng, distance, avoid)
        first, second = chain["first"].format(**slots), chain["second"].format(**slots)
        parts = [chain["joined"].format(**slots), gap] if literal else [first, gap, second]
        text = " ".join(p for p in parts if p)
        hay = _haystack(rng, paragraphs, avoid)
        tasks.append(
            Task(
                _id("spaced", seed, i, literal, f"d{distance}"),
                chain["question"].format(**slots),
                (answer,),
                _insert(rng, hay, [Passage(text, "", True)]),
                "spaced",
                (chain["joined"].format(**slots),) if literal else (first, second),
                _meta("spaced", seed, literal, distance=distance, distance_tokens=0 if literal else tokens),
            )
        )
    return tasks


# --- near-miss -------------------------------------------------------------------------------------


def _value(rng: random.Random, digits: int, taken: set[str]) -> str:
    while True:
        v = str(rng.randrange(10 ** (digits - 1), 10**digits))
        if v not in taken:
            taken.add(v)
            return v


def near_miss_sentences(
    rng: random.Random, frame: dict, name: str, detail: str, k: int, taken: set[str]
) -> list[str]:
    """k sentences of the frame, each with one detail changed: first the other details (whose it is
    kept), then other people's (the detail kept); each with its own value."""
    others = [d for d in frame["details"] if d != detail]
    people = [p for p in names() if p != name]
    rng.shuffle(others)
    rng.shuffle(people)
    swaps = [(name, d) for d in others] + [(p, detail) for p in people]
    if k > len(swaps):
        raise ValueError(f"near-miss: at most {len(swaps)} near-miss distractors, got {k}")
    return [
        frame["fact"].format(name=p, detail=d, value=_value(rng, frame["digits"], taken))
        for p, d in swaps[:k]
    ]


def far_misses(rng: random.Random, frame: dict, name: str, k: int, taken: set[str]) -> list[str]:
    """k sentences of the bank's other frames (their own people, details and values): the control."""
    others = [f for f in bank("near_miss")["frames"] if f is not frame]
    people = [p for p in names() if p != name]
    out = []
    for _ in range(k):
        f = rng.choice(others)
        out.append(
            f["fact"].format(
                name=rng.choice(people),
                detail=rng.choice(f["details"]),
                value=_value(rng, frame["digits"], taken),
            )
        )
    return out


def gen_near_miss(
    n: int, seed: int, near_misses: int = 4, literal: int = 0, paragraphs: int = 12
) -> list[Task]:
    k = near_misses
    if k < 0:
        raise ValueError(f"near_misses must be 0 or more, got {k!r}")
    _check(literal, paragraphs)
    rng = _rng("near-miss", seed)
    tasks = []
    for i in range(n):
        frame = rng.choice(bank("near_miss")["frames"])
        name, detail = rng.choice(names()), rng.choice(frame["details"])
        taken: set[str] = set()
        value = _value(rng, frame["digits"], taken)
        needle = frame["fact"].format(name=name, detail=detail, value=value)
        near = near_miss_sentences(rng, frame, name, detail, k, taken)
        far = far_misses(rng, frame, name, k, taken)
        pages = [Passage(t) for t in (far if literal else near)]
        pages.insert(rng.randint(0, len(pages)), Passage(needle, "", True))
        hay = _haystack(rng, paragraphs, sorted(taken))
        tasks.append(
            Task(
                _id("near-miss", seed, i, literal, f"k{k}"),
                frame["question"].format(name=name, detail=detail),
                (value,),
                _insert(rng, hay, pages),
                "near-miss",
                (needle,),
                _meta("near-miss", seed, literal, near_misses=k),
            )
        )
    return tasks


GENERATORS = {"latent": gen_latent, "spaced": gen_spaced, "near-miss": gen_near_miss}


@dataclass(frozen=True)
class Parameter:
    """The parameter a kind is swept over (one file per value): its name, default (the generator's own),
    bounds and what it is."""

    name: str
    default: int
    low: int
    high: int
    help: str


_AXES = {  # kind -> (parameter, lowest, highest, what it is)
    "latent": ("hops", 1, 2, "hops of common knowledge between the question and the needle"),
    "spaced": ("distance", 0, 32000, "tokens between the two facts"),
    "near-miss": ("near_misses", 0, 40, "near-miss distractors beside the needle"),
}


def parameter(kind: str) -> Parameter | None:
    """The swept parameter of a harder kind, None for another kind."""
    if kind not in _AXES:
        return None
    name, low, high, text = _AXES[kind]
    return Parameter(name, inspect.signature(GENERATORS[kind]).parameters[name].default, low, high, text)
