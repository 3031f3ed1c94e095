"""Synthetic tasks, seeded and offline: `generate(kind, n, seed, **params) -> list[Task]`.

Kinds (KINDS):
- kv: "Lost in the Middle" §4 key-value retrieval: random UUID keys and values, one record per
  passage (`"key": "value"`), the queried record gold; question = the key, answers = [value].
- niah, niah-multikey, niah-multivalue, niah-multiquery: ALR2 App. B.1 / RULER needles
  "One of the special magic numbers for {KEY} is: {VALUE}." (English-word keys, 7-digit values) in
  a haystack of prose written for this project. Single needle; four needles with one asked
  (the other three are non-gold decoys); several values for one key; four keys, all asked at once
  (RULER's niah_multiquery). The last two: every needle gold, every value required
  (meta["answer_mode"] = "all"), scored as RULER scores them (the share of values found).
- niah-ruler: the four variants in turn (S, MK, MV, MQ), each task as its own kind makes it: ALR2
  reports NIAH as the mean of the four (App. B.1).
- passkey-multihop: ALR2 §2 Task 2 in chain form: "The pass key of A is the pass key of B." ...
  "The pass key of B is 1234567."; ask A's. Every link is gold.
- passkey-concat: ALR2 §2 Task 3: two (or more) pass keys whose concatenation, in the asked order, is
  the answer (ALR2: 10 letters A-Z split in halves). Each pass key is its own gold page.
- facts, facts-multihop: passages about invented towns, people, companies, rivers and festivals
  (names from syllables, so no model knows the answers). One gold passage per question (facts), or
  two for a two-hop question (facts-multihop). Distractors are other invented entities of the same
  style and never contain the answer string.
- latent, spaced, near-miss: harder tasks from banks of our own text, each with a literal control
  (`literal=1`): components/tasks/harder.py.

Every needle or record is its own passage (page); haystack paragraphs are distractors. NIAH tasks carry
meta["haystack"] = "builtin" so that sweepdocs.build_document can draw more haystack when a longer
document is asked for.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from components.tasks import harder
from components.tasks.haystack import haystack_paragraphs
from components.tasks.importers import kv_text
from components.tasks.model import Passage, Task

KINDS = (
    "kv",
    "niah",
    "niah-multikey",
    "niah-multivalue",
    "niah-multiquery",
    "niah-ruler",
    "passkey-multihop",
    "passkey-concat",
    "facts",
    "facts-multihop",
    *harder.GENERATORS,  # latent, spaced, near-miss (components/tasks/harder.py)
)

DESCRIPTIONS = {
    "kv": "Key-value retrieval with random UUIDs (Lost in the Middle §4)",
    "niah": "Needle in a haystack: one magic number (ALR2 App. B.1, S-NIAH)",
    "niah-multikey": "Four needles with different keys, one asked (ALR2 App. B.1, MK-NIAH)",
    "niah-multivalue": "Several magic numbers for one key, all required (ALR2 App. B.1, MV-NIAH)",
    "niah-multiquery": "Four keys asked at once, every value required (ALR2 App. B.1, MQ-NIAH)",
    "niah-ruler": "RULER's four NIAH variants in turn, as ALR2 averages them (App. B.1)",
    "passkey-multihop": "A chain of pass keys: A's pass key is B's pass key ... (ALR2 §2, Task 2 style)",
    "passkey-concat": "Concatenate two pass keys in order (ALR2 §2, Task 3)",
    "facts": "Questions about invented towns, people, companies, rivers and festivals",
    "facts-multihop": "Two-hop questions over invented entities (both passages gold)",
    **harder.DESCRIPTIONS,
}


def _rng(kind: str, seed: int) -> random.Random:
    return random.Random(f"{kind}:{seed}")  # str seeds hash with sha512: stable across runs


# --- kv (LITM §4) --------------------------------------------------------------------------------


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def gen_kv(n: int, seed: int, pairs: int = 75) -> list[Task]:
    if pairs < 1:
        raise ValueError("pairs must be at least 1")
    rng = _rng("kv", seed)
    tasks = []
    for i in range(n):
        records = [(_uuid(rng), _uuid(rng)) for _ in range(pairs)]
        g = rng.randrange(pairs)
        key, value = records[g]
        passages = tuple(Passage(kv_text(k, v), "", j == g) for j, (k, v) in enumerate(records))
        tasks.append(
            Task(
                f"kv-{seed}-{i:04d}",
                key,
                (value,),
                passages,
                "kv",
                meta={"key": key, "pairs": pairs, "generator": "kv", "seed": seed},
            )
        )
    return tasks


# --- needles (001 App. B.1, §2) -----------------------------------------------------------------

ADJECTIVES = (
    "amber quiet brave crimson dusty eager fallen gentle hollow icy jolly keen lively mellow narrow "
    "olive patient quick rustic silver tender upbeat velvet wandering yellow zealous ancient bright "
    "calm distant early faded golden hidden humble loyal misty noble orange plain rapid scarlet "
    "shy steady sunny tidy violet warm wild wise wooden clever cosy frozen green lonely"
).split()
NOUNS = (
    "lantern harbor meadow pebble orchard kettle ribbon saddle thimble violin walnut anchor beacon "
    "candle drum feather garden hammer island jacket ladder mirror needle oyster pepper quilt river "
    "shovel teapot umbrella valley wagon basket blanket button cabin compass cottage curtain "
    "falcon fountain glove helmet kitten lemon marble notebook pillow pocket rabbit scarf tulip"
).split()
FIRST_NAMES = (
    "Alice Bob Carol David Edith Frank Grace Henry Irene Jack Karen Leo Maria Nathan Olive Peter "
    "Quinn Rosa Samuel Tessa Victor Wendy Xavier Yvonne Zach Agnes Bruno Clara Dennis Elsie Felix "
    "Gloria Hugo Ivy Jonas Leah Martin Nora Oscar Paula Ruth Simon Tilda Walter Hazel Arthur"
).split()

NEEDLE = "One of the special magic numbers for {key} is: {value}."
NIAH_Q = "What is the special magic number for {key} mentioned in the provided text?"
NIAH_MV_Q = "What are all the special magic numbers for {key} mentioned in the provided text?"


def query_text(keys: list[str]) -> str:
    """RULER's query of several keys (scripts/data/synthetic/niah.py): 'a, b, and c'."""
    return ", ".join(keys[:-1]) + ", and " + keys[-1] if len(keys) > 1 else keys[0]


def _keys(rng: random.Random, k: int) -> list[str]:
    out: list[str] = []
    while len(out) < k:
        key = f"{rng.choice(ADJECTIVES)}-{rng.choice(NOUNS)}"
        if key not in out:
            out.append(key)
    return out


def _numbers(rng: random.Random, k: int) -> list[str]:
    out: list[str] = []
    while len(out) < k:
        v = str(rng.randint(1_000_000, 9_999_999))
        if v not in out:
            out.append(v)
    return out


def _haystack(rng: random.Random, paragraphs: int) -> list[Passage]:
    hay = haystack_paragraphs()
    if not hay:
        raise ValueError("the built-in haystack is empty")
    start = rng.randrange(len(hay))
    count = min(paragraphs, len(hay)) if paragraphs > 0 else len(hay)
    return [Passage(hay[(start + i) % len(hay)]) for i in range(count)]


def _with_needles(rng: random.Random, hay: list[Passage], needles: list[Passage]) -> tuple[Passage, ...]:
    """Needles at random places among the haystack paragraphs, in their given order."""
    out = list(hay)
    slots = sorted(rng.randint(0, len(hay)) for _ in needles)
    for offset, (slot, needle) in enumerate(zip(slots, needles, strict=True)):
        out.insert(slot + offset, needle)
    return tuple(out)


def _niah_meta(kind: str, seed: int, **extra) -> dict:
    return {"haystack": "builtin", "generator": kind, "seed": seed, **extra}


def gen_niah(n: int, seed: int, paragraphs: int = 24) -> list[Task]:
    rng = _rng("niah", seed)
    tasks = []
    for i in range(n):
        (key,), (value,) = _keys(rng, 1), _numbers(rng, 1)
        needle = Passage(NEEDLE.format(key=key, value=value), "", True)
        passages = _with_needles(rng, _haystack(rng, paragraphs), [needle])
        tasks.append(
            Task(
                f"niah-{seed}-{i:04d}",
                NIAH_Q.format(key=key),
                (value,),
                passages,
                "niah",
                (needle.text,),
                _niah_meta("niah", seed, key=key),
            )
        )
    return tasks


def gen_niah_multikey(n: int, seed: int, paragraphs: int = 24, needles: int = 4) -> list[Task]:
    if needles < 2:
        raise ValueError("multi-key NIAH needs at least 2 needles")
    rng = _rng("niah-multikey", seed)
    tasks = []
    for i in range(n):
        keys, values = _keys(rng, needles), _numbers(rng, needles)
        asked = rng.randrange(needles)
        ps = [
            Passage(NEEDLE.format(key=k, value=v), "", j == asked)
            for j, (k, v) in enumerate(zip(keys, values, strict=True))
        ]
        passages = _with_needles(rng, _haystack(rng, paragraphs), ps)
        tasks.append(
            Task(
                f"niah-multikey-{seed}-{i:04d}",
                NIAH_Q.format(key=keys[asked]),
                (values[asked],),
                passages,
                "niah-multikey",
                (ps[asked].text,),
                _niah_meta(
                    "niah-multikey", seed, key=keys[asked], decoy_keys=[k for k in keys if k != keys[asked]]
                ),
            )
        )
    return tasks


def gen_niah_multivalue(n: int, seed: int, paragraphs: int = 24, values: int = 4) -> list[Task]:
    if values < 2:
        raise ValueError("multi-value NIAH needs at least 2 values")
    rng = _rng("niah-multivalue", seed)
    tasks = []
    for i in range(n):
        (key,), vals = _keys(rng, 1), _numbers(rng, values)
        ps = [Passage(NEEDLE.format(key=key, value=v), "", True) for v in vals]
        passages = _with_needles(rng, _haystack(rng, paragraphs), ps)
        # every value is required: a scorer should check each answer, not any one of them
        tasks.append(
            Task(
                f"niah-multivalue-{seed}-{i:04d}",
                NIAH_MV_Q.format(key=key),
                tuple(vals),
                passages,
                "niah-multivalue",
                tuple(p.text for p in ps),
                _niah_meta("niah-multivalue", seed, key=key, answer_mode="all"),
            )
        )
    return tasks


def gen_niah_multiquery(n: int, seed: int, paragraphs: int = 24, queries: int = 4) -> list[Task]:
    """RULER's niah_multiquery (ALR2 App. B.1, MQ-NIAH): `queries` keys with one value each, the needles
    in a shuffled order, every key asked in one question ("What are all the special magic numbers for
    a, b, c, and d ..."); the answers are the values in the order the keys are asked, all required."""
    if queries < 2:
        raise ValueError("multi-query NIAH needs at least 2 queries")
    rng = _rng("niah-multiquery", seed)
    tasks = []
    for i in range(n):
        keys, vals = _keys(rng, queries), _numbers(rng, queries)
        ps = [Passage(NEEDLE.format(key=k, value=v), "", True) for k, v in zip(keys, vals, strict=True)]
        rng.shuffle(ps)
        passages = _with_needles(rng, _haystack(rng, paragraphs), ps)
        tasks.append(
            Task(
                f"niah-multiquery-{seed}-{i:04d}",
                NIAH_MV_Q.format(key=query_text(keys)),
                tuple(vals),
                passages,
                "niah-multiquery",
                tuple(p.text for p in ps),
                _niah_meta("niah-multiquery", seed, keys=keys, answer_mode="all"),
            )
        )
    return tasks


RULER_VARIANTS = ("niah", "niah-multikey", "niah-multivalue", "niah-multiquery")


def gen_niah_ruler(n: int, seed: int, paragraphs: int = 24) -> list[Task]:
    """RULER's four NIAH variants in turn (ALR2 App. B.1 reports NIAH as their mean): task i is the
    (i // 4)-th task of variant i % 4, exactly as that variant's own generator makes it (same id), so any
    first 4m tasks hold m of each."""
    per = -(-n // len(RULER_VARIANTS))
    made = [_GENERATORS[kind](per, seed, paragraphs=paragraphs) for kind in RULER_VARIANTS]
    return [made[i % len(made)][i // len(made)] for i in range(n)]


def _names(rng: random.Random, k: int) -> list[str]:
    return rng.sample(FIRST_NAMES, k)


def gen_passkey_multihop(
    n: int, seed: int, paragraphs: int = 24, hops: int = 2, decoys: int = 1
) -> list[Task]:
    if hops < 2:
        raise ValueError("a multi-hop pass key needs at least 2 hops")
    rng = _rng("passkey-multihop", seed)
    tasks = []
    for i in range(n):
        names = _names(rng, hops + decoys)
        chain, others = names[:hops], names[hops:]
        value, *decoy_values = _numbers(rng, 1 + decoys)
        links = [
            f"The pass key of {a} is the pass key of {b}." for a, b in zip(chain, chain[1:], strict=False)
        ]
        links.append(f"The pass key of {chain[-1]} is {value}.")
        gold = [Passage(t, "", True) for t in links]
        rng.shuffle(gold)  # the chain is not in reading order: the model has to follow it
        decoy = [
            Passage(f"The pass key of {o} is {v}.", "", False)
            for o, v in zip(others, decoy_values, strict=True)
        ]
        needles = gold + decoy
        rng.shuffle(needles)
        passages = _with_needles(rng, _haystack(rng, paragraphs), needles)
        tasks.append(
            Task(
                f"passkey-multihop-{seed}-{i:04d}",
                f"What is the pass key of {chain[0]}?",
                (value,),
                passages,
                "passkey-multihop",
                tuple(links),
                _niah_meta("passkey-multihop", seed, chain=chain, hops=hops),
            )
        )
    return tasks


def gen_passkey_concat(
    n: int, seed: int, paragraphs: int = 24, parts: int = 2, letters: int = 5
) -> list[Task]:
    if parts < 2:
        raise ValueError("pass key concatenation needs at least 2 parts")
    rng = _rng("passkey-concat", seed)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    tasks = []
    for i in range(n):
        names = _names(rng, parts)
        keys: list[str] = []
        while len(keys) < parts:
            k = "".join(rng.choice(alphabet) for _ in range(letters))
            if k not in keys:
                keys.append(k)
        ps = [Passage(f"The pass key of {a} is {k}.", "", True) for a, k in zip(names, keys, strict=True)]
        order = ps[:]
        rng.shuffle(order)
        passages = _with_needles(rng, _haystack(rng, paragraphs), order)
        joined = ", then ".join(f"the pass key of {a}" for a in names)
        q = f"Write {joined}, joined together with nothing in between. What is the combined pass key?"
        tasks.append(
            Task(
                f"passkey-concat-{seed}-{i:04d}",
                q,
                ("".join(keys),),
                passages,
                "passkey-concat",
                tuple(p.text for p in ps),
                _niah_meta("passkey-concat", seed, names=names, parts=keys),
            )
        )
    return tasks


# --- invented facts ------------------------------------------------------------------------------

_ONSETS = "b br c d dr f g gl h k l m n p r s st t th v w z sk tr gr fl pr sh j ost ald ev".split()
_VOWELS = "a e i o u a e o ai ea ou ie".split()
_CODAS = ["", "", "n", "r", "l", "m", "s", "th", "nd", "rt", "ld", "sk", "v"]
_TOWN_ENDS = "ford wick mere by holm stead ton vale dun moor brook haven gate field".split()
_RIVER_ENDS = "a en ith or el un ava".split()
_PRODUCTS = (
    "copper kettles, blue wool, pear cider, slate roof tiles, reed baskets, honey cakes, glass beads, "
    "smoked trout, linen sailcloth, clay pipes, walnut furniture, river pearls, felt hats, "
    "iron nails, rope, paper lanterns, goat cheese, wax candles, brass bells, barley beer"
).split(", ")
_PROFESSIONS = (
    "clockmaker, surveyor, ferry captain, botanist, printer, bridge engineer, schoolteacher, "
    "glassblower, mapmaker, physician, weaver, astronomer, stonemason, composer, "
    "shipwright, apothecary, bookbinder, beekeeper"
).split(", ")
_KNOWN_FOR = (
    "a map of the northern marshes, a treatise on the drainage of fields, a set of bells for the "
    "town hall, a cheap lamp that burned fish oil, a series of almanacs for farmers, a lending "
    "library for apprentices, a method of preserving fruit in clay jars, a footbridge made of "
    "rope and oak, a choir that toured the coastal towns, a dictionary of river dialects, a "
    "water clock that still runs, a school for the children of boatmen"
).split(", ")
_COMPANY_KINDS = "Tea, Ropeworks, Instruments, Glassworks, Mills, Ferries, Looms, Lanterns, Foundry, Printing House, Biscuits, Pottery".split(
    ", "
)
_COMPANY_MAKES = {
    "Tea": "blended teas",
    "Ropeworks": "ropes and nets",
    "Instruments": "measuring instruments",
    "Glassworks": "window glass and bottles",
    "Mills": "flour and oatmeal",
    "Ferries": "river crossings",
    "Looms": "woven blankets",
    "Lanterns": "storm lanterns",
    "Foundry": "cast iron stoves",
    "Printing House": "maps and almanacs",
    "Biscuits": "ship biscuits",
    "Pottery": "glazed stoneware",
}
_FESTIVAL_KINDS = "Lantern Fair, Harvest Week, Kite Festival, Boat Race, Cheese Market, Song Night, Apple Feast, Bell Day".split(
    ", "
)
_MONTHS = "January February March April May June July August September October November December".split()
_SEAS = "Sea of {x}, {x} Bay, Lake {x}, {x} Sound".split(", ")

_TOWN_FILLERS = [
    "Its streets are narrow and paved with grey stone, and most houses have steep roofs against the winter snow.",
    "A covered market hall stands in the middle of the old square, and on market days it is hard to find a place to stand.",
    "The parish church has a squat tower that can be seen from every road leading into the town.",
    "Local people say the water from the town well tastes of iron, and they are proud of it.",
    "In summer the meadows around the town are cut for hay, and the smell of it drifts through every open window.",
    "The old town walls were pulled down long ago, but their line can still be traced in the curve of the lanes.",
    "Visitors often remark on the painted shutters, which each family repaints in its own colours every spring.",
    "A small museum near the bridge keeps the town charter, a pair of old scales and a collection of shop signs.",
]
_PERSON_FILLERS = [
    "Those who knew {obj} described a patient, stubborn worker who rarely left a task unfinished.",
    "{Sub} kept careful notebooks, many of which survive in the archive of a local society.",
    "{Sub} travelled widely as a young adult and later said that the journeys taught {obj} more than any school.",
    "In later life {sub} took on apprentices and insisted that each of them learn to write a clear letter.",
    "A modest portrait of {obj} hangs in a reading room, showing {obj} seated at a cluttered desk.",
    "Friends remembered {obj} as generous with time but sharp with anyone who cut corners.",
    "{Sub} married late and spent the last years in a house with a large and untidy garden.",
]
_COMPANY_FILLERS = [
    "The firm began in a single rented workshop with two benches and a borrowed cart.",
    "Its founder insisted that every worker learn each stage of the trade before specialising.",
    "For many years the company paid part of its wages in goods, a custom that lasted until a strike ended it.",
    "The firm's emblem, a simple circle with a line through it, is painted on every crate that leaves the yard.",
    "Its products were carried down the river on flat barges until a road was built along the valley.",
    "The company still keeps its first ledger in a glass case at the entrance of its offices.",
    "Apprentices who finish their training receive a small brass token, which many keep for life.",
]
_RIVER_FILLERS = [
    "Its water is cold and clear in the upper valley but turns brown and slow as it nears the lowlands.",
    "Willows line much of its banks, and in spring the river often floods the low meadows.",
    "Fishermen work the river from small flat boats and sell their catch at the nearest market town.",
    "Several old mills stand along its course, though few of them still grind grain.",
    "A towpath runs beside the lower river, and walkers use it now that the barges have gone.",
    "In hard winters the river freezes in its quiet reaches, and children skate where the current is slow.",
]
_FESTIVAL_FILLERS = [
    "Stalls selling food and small crafts fill the main street for the whole of the festival.",
    "The evening ends with a procession in which each district carries its own painted banner.",
    "Musicians come from the surrounding villages, and the playing often lasts long after midnight.",
    "Children prepare for weeks, making costumes from paper, cloth and whatever else they can find.",
    "The organisers choose a guest of honour each time, usually an elderly resident with a long memory.",
    "Rain rarely stops the festival; people simply bring umbrellas and carry on.",
]


def _word(rng: random.Random, syllables: int) -> str:
    # open syllables, a consonant only at the end: short, pronounceable, invented names
    body = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS[:5]) for _ in range(syllables))
    return (body + rng.choice(_CODAS)).capitalize()


@dataclass
class _Entity:
    kind: str
    name: str
    attrs: dict
    text: str = ""


class _World:
    """Invented entities with consistent attributes, and a passage about each."""

    def __init__(self, seed: int, towns=120, rivers=45, people=150, companies=100, festivals=70):
        self.rng = random.Random(f"facts-world:{seed}")
        self.used: set[str] = set()
        self.rivers = [self._river() for _ in range(rivers)]
        self.towns = [self._town() for _ in range(towns)]
        self.people = [self._person() for _ in range(people)]
        self.companies = [self._company() for _ in range(companies)]
        self.festivals = [self._festival() for _ in range(festivals)]
        self.all = self.rivers + self.towns + self.people + self.companies + self.festivals
        for e in self.all:
            e.text = self._write(e)

    def _unique(self, make: Callable[[], str]) -> str:
        while True:
            name = make()
            low = name.lower()
            if low not in self.used and all(low not in u and u not in low for u in self.used if len(u) > 3):
                self.used.add(low)
                return name

    def _river(self):
        r = self.rng
        name = self._unique(lambda: _word(r, 1) + r.choice(_RIVER_ENDS))
        sea = r.choice(_SEAS).format(x=self._unique(lambda: _word(r, 2)))
        mountain = "Mount " + self._unique(lambda: _word(r, 2))
        return _Entity("river", name, {"length": r.randint(40, 980), "source": mountain, "mouth": sea})

    def _town(self):
        r = self.rng
        name = self._unique(lambda: _word(r, 1) + r.choice(_TOWN_ENDS) if r.random() < 0.6 else _word(r, 2))
        founder = f"{_word(r, r.choice((1, 2)))} {_word(r, 2)}"
        return _Entity(
            "town",
            name,
            {
                "river": r.choice(self.rivers).name,
                "founded": r.randint(1100, 1850),
                "population": r.randint(18, 950) * 100 + r.randint(1, 9) * 10,
                "product": r.choice(_PRODUCTS),
                "founder": founder,
                "side": r.choice(("north", "south", "east", "west")),
            },
        )

    def _person(self):
        r = self.rng
        name = self._unique(lambda: f"{_word(r, r.choice((1, 2)))} {_word(r, 2)}")
        return _Entity(
            "person",
            name,
            {
                "born": r.randint(1720, 1960),
                "birthplace": r.choice(self.towns).name,
                "profession": r.choice(_PROFESSIONS),
                "known_for": r.choice(_KNOWN_FOR),
                "she": r.random() < 0.5,
            },
        )

    def _company(self):
        r = self.rng
        kind = r.choice(_COMPANY_KINDS)
        name = self._unique(lambda: f"{_word(r, 2)} {kind}")
        founder = r.choice(self.people)
        founded = founder.attrs["born"] + r.randint(22, 55)
        return _Entity(
            "company",
            name,
            {
                "founder": founder.name,
                "founded": founded,
                "kind": kind,
                "hq": r.choice(self.towns).name,
                "employees": r.randint(12, 2400),
            },
        )

    def _festival(self):
        r = self.rng
        kind = r.choice(_FESTIVAL_KINDS)
        name = self._unique(lambda: f"{_word(r, 2)} {kind}")
        town = r.choice(self.towns)
        first = max(town.attrs["founded"] + r.randint(5, 300), 1200)
        return _Entity(
            "festival", name, {"town": town.name, "first": min(first, 1990), "month": r.choice(_MONTHS)}
        )

    def _fillers(self, pool: list[str], k: int, **fmt) -> str:
        return " ".join(s.format(**fmt) for s in self.rng.sample(pool, k))

    def _write(self, e: _Entity) -> str:
        a, r = e.attrs, self.rng
        if e.kind == "river":
            return (
                f"The {e.name} is a river about {a['length']} kilometres long. It rises on the slopes of "
                f"{a['source']} and flows into {a['mouth']}. "
                + self._fillers(_RIVER_FILLERS, 4)
                + f" Boatmen on the {e.name} have their own names for its bends and shallows, and few "
                "outsiders learn them."
            )
        if e.kind == "town":
            if r.random() < 0.5:
                head = (
                    f"{e.name} is a market town on the {a['side']} bank of the river {a['river']}. It was "
                    f"founded in {a['founded']} by a settler named {a['founder']}, and today about "
                    f"{a['population']:,} people live there. The town is best known for its {a['product']}, "
                    "which are sold at a weekly market. "
                )
            else:
                head = (
                    f"Travellers who reach {e.name} usually come along the river {a['river']}, whose "
                    f"{a['side']} bank the town follows. Records say that {a['founder']} founded the town in "
                    f"{a['founded']}. About {a['population']:,} people live there now, and it is famous for "
                    f"its {a['product']}. "
                )
            return head + self._fillers(_TOWN_FILLERS, 4)
        if e.kind == "person":
            sub, obj = ("she", "her") if a["she"] else ("he", "him")
            fill = self._fillers(_PERSON_FILLERS, 4, sub=sub, Sub=sub.capitalize(), obj=obj)
            return (
                f"{e.name} was born in {a['born']} in the town of {a['birthplace']}. {sub.capitalize()} "
                f"worked as a {a['profession']} and is best remembered for {a['known_for']}. " + fill
            )
        if e.kind == "company":
            return (
                f"{e.name} was founded in {a['founded']} by {a['founder']}, with its headquarters in "
                f"{a['hq']}. The company makes {_COMPANY_MAKES[a['kind']]} and employs about "
                f"{a['employees']} people. " + self._fillers(_COMPANY_FILLERS, 4)
            )
        return (
            f"The {e.name} is held every {a['month']} in {a['town']}. It was first held in {a['first']}, "
            "and it has been held almost every year since. " + self._fillers(_FESTIVAL_FILLERS, 4)
        )

    def by_name(self, name: str) -> _Entity:
        for e in self.all:
            if e.name == name:
                return e
        raise KeyError(name)


def _mentions(text: str, answer: str) -> bool:
    import re

    return re.search(r"(?<!\w)" + re.escape(answer) + r"(?!\w)", text, re.IGNORECASE) is not None


def _single_questions(w: _World) -> list[tuple[str, str, _Entity]]:
    qs: list[tuple[str, str, _Entity]] = []
    for t in w.towns:
        a = t.attrs
        qs.append((f"In which year was the town of {t.name} founded?", str(a["founded"]), t))
        qs.append((f"On which river does the town of {t.name} stand?", a["river"], t))
        qs.append((f"Who founded the town of {t.name}?", a["founder"], t))
    for p in w.people:
        qs.append((f"In which year was {p.name} born?", str(p.attrs["born"]), p))
        qs.append((f"In which town was {p.name} born?", p.attrs["birthplace"], p))
    for c in w.companies:
        qs.append((f"Who founded {c.name}?", c.attrs["founder"], c))
        qs.append((f"In which town does {c.name} have its headquarters?", c.attrs["hq"], c))
        qs.append((f"How many people does {c.name} employ?", str(c.attrs["employees"]), c))
    for r in w.rivers:
        qs.append((f"How long is the {r.name} river, in kilometres?", str(r.attrs["length"]), r))
        qs.append((f"Into which body of water does the {r.name} river flow?", r.attrs["mouth"], r))
    for f in w.festivals:
        qs.append((f"In which town is the {f.name} held?", f.attrs["town"], f))
        qs.append((f"In which year was the {f.name} first held?", str(f.attrs["first"]), f))
    return qs


def _multihop_questions(w: _World) -> list[tuple[str, str, _Entity, _Entity]]:
    qs = []
    for c in w.companies:
        p = w.by_name(c.attrs["founder"])
        qs.append((f"In which year was the founder of {c.name} born?", str(p.attrs["born"]), c, p))
        hq = w.by_name(c.attrs["hq"])
        qs.append(
            (f"On which river stands the town where {c.name} has its headquarters?", hq.attrs["river"], c, hq)
        )
    for p in w.people:
        t = w.by_name(p.attrs["birthplace"])
        qs.append((f"On which river stands the town where {p.name} was born?", t.attrs["river"], p, t))
    for f in w.festivals:
        t = w.by_name(f.attrs["town"])
        qs.append(
            (f"In which year was the town that holds the {f.name} founded?", str(t.attrs["founded"]), f, t)
        )
    return qs


def _fact_passage(e: _Entity, gold: bool) -> Passage:
    return Passage(e.text, e.name, gold)


def _distractors(rng, w: _World, exclude: set[str], answer: str, k: int) -> list[Passage]:
    cands = [e for e in w.all if e.name not in exclude and not _mentions(e.text, answer)]
    return [_fact_passage(e, False) for e in rng.sample(cands, min(k, len(cands)))]


def gen_facts(n: int, seed: int, distractors: int = 19) -> list[Task]:
    w = _World(seed)
    rng = _rng("facts", seed)
    qs = _single_questions(w)
    rng.shuffle(qs)
    if n > len(qs):
        raise ValueError(f"facts: at most {len(qs)} tasks for one seed")
    tasks = []
    for i, (q, ans, e) in enumerate(qs[:n]):
        ds = _distractors(rng, w, {e.name}, ans, distractors)
        ds.insert(rng.randint(0, len(ds)), _fact_passage(e, True))
        tasks.append(
            Task(
                f"facts-{seed}-{i:04d}",
                q,
                (ans,),
                tuple(ds),
                "facts",
                meta={"generator": "facts", "seed": seed, "entity": e.name, "entity_kind": e.kind},
            )
        )
    return tasks


def gen_facts_multihop(n: int, seed: int, distractors: int = 18) -> list[Task]:
    w = _World(seed)
    rng = _rng("facts-multihop", seed)
    qs = [q for q in _multihop_questions(w) if not _mentions(q[2].text, q[1])]  # hop 1 must not give it away
    rng.shuffle(qs)
    if n > len(qs):
        raise ValueError(f"facts-multihop: at most {len(qs)} tasks for one seed")
    tasks = []
    for i, (q, ans, e1, e2) in enumerate(qs[:n]):
        ds = _distractors(rng, w, {e1.name, e2.name}, ans, distractors)
        for e in (e1, e2):
            ds.insert(rng.randint(0, len(ds)), _fact_passage(e, True))
        tasks.append(
            Task(
                f"facts-multihop-{seed}-{i:04d}",
                q,
                (ans,),
                tuple(ds),
                "facts-multihop",
                meta={"generator": "facts-multihop", "seed": seed, "hops": [e1.name, e2.name]},
            )
        )
    return tasks


_GENERATORS: dict[str, Callable[..., list[Task]]] = {
    "kv": gen_kv,
    "niah": gen_niah,
    "niah-multikey": gen_niah_multikey,
    "niah-multivalue": gen_niah_multivalue,
    "niah-multiquery": gen_niah_multiquery,
    "niah-ruler": gen_niah_ruler,
    "passkey-multihop": gen_passkey_multihop,
    "passkey-concat": gen_passkey_concat,
    "facts": gen_facts,
    "facts-multihop": gen_facts_multihop,
    **harder.GENERATORS,
}


def generate(kind: str, n: int, seed: int = 0, **params) -> list[Task]:
    """n tasks of `kind`, the same for the same seed and parameters. ValueError for a bad kind or n."""
    if kind not in _GENERATORS:
        raise ValueError(f"unknown task kind {kind!r}; choose one of {', '.join(KINDS)}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive whole number, got {n!r}")
    try:
        return _GENERATORS[kind](n, seed, **params)
    except TypeError as exc:
        raise ValueError(f"{kind}: {exc}") from None
