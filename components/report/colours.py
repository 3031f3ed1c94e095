"""Every colour a chart draws, by name: the one palette, the colour of each strategy and of each model
(keyed by its name, never by its place in a registry: adding a strategy or a model changes no other
colour), the word the app's text uses for each colour, the style (colour, dash, marker) of a chart's
series, and the one colour scale of every heatmap.

The palette is Okabe & Ito's eight colour-blind-safe colours (Okabe and Ito, "Color Universal Design"),
then colours of Paul Tol's muted, medium-contrast and light sets (Tol, "Colour Schemes", SRON technical
note EPS/TN/09-002), then greys. A series takes its strategy's colour when its name starts with one, else its model's,
else a colour of its own; the same in normal and presenter mode.
"""

from __future__ import annotations

import zlib

from components.providers.localmodel import MODELS
from components.providers.pricing import PRICES
from components.report.sweeps import model_title
from components.strategies import STRATEGIES

# The one palette: name -> colour. The name is also the word the app's text says for the colour
# (SPOKEN below where a name says more than the text needs).
PALETTE: dict[str, str] = {
    # Okabe & Ito
    "blue": "#0072B2",
    "red-orange": "#D55E00",  # their "vermillion"
    "green": "#009E73",  # their "bluish green"
    "pink": "#CC79A7",  # their "reddish purple"
    "amber": "#E69F00",  # their "orange"
    "sky-blue": "#56B4E9",
    "black": "#000000",
    "yellow": "#F0E442",
    # Paul Tol's muted set
    "indigo": "#332288",
    "cyan": "#88CCEE",
    "teal": "#44AA99",
    "dark green": "#117733",
    "olive": "#999933",
    "sand": "#DDCC77",
    "rose": "#CC6677",
    "wine": "#882255",
    "purple": "#AA4499",
    # Paul Tol's medium-contrast and light sets, and two of their neighbours
    "steel blue": "#6699CC",
    "dark yellow": "#997700",
    "raspberry": "#AA4466",
    "brown": "#661100",
    "mint": "#44BB99",
    "orange": "#EE8866",
    "lavender": "#7B68C8",
    # the rest of Paul Tol's medium-contrast set: the attention strategies
    "dark blue": "#004488",
    "dark red": "#994455",
    # greys
    "dark grey": "#4D4D4D",
    "mid grey": "#999999",
    "page grey": "#A6A6A6",
    "grey": "#B0B0B0",
    "light grey": "#CFCFCF",
}
SPOKEN = {"mid grey": "grey", "page grey": "grey", "light grey": "grey"}
# colour -> the word the app's text uses for it ('#E69F00' -> 'amber'): words that name a colour are read
# from here, so the words and the charts cannot disagree
COLOUR_WORDS: dict[str, str] = {hex_: SPOKEN.get(name, name) for name, hex_ in PALETTE.items()}

# The colours a chart gives series that are neither a strategy nor a model, in this order.
SERIES = [
    PALETTE[name]
    for name in (
        "blue",
        "red-orange",
        "green",
        "pink",
        "amber",
        "sky-blue",
        "wine",
        "teal",
        "indigo",
        "olive",
        "purple",
        "dark green",
        "brown",
        "dark grey",
    )
]
DOMINATED = PALETTE["grey"]  # an arm another arm beats on accuracy and cost (the Pareto chart)

# Every heatmap's scale, 0 to 1 (0% to 100%): cividis (Nuñez, Anderton and Renslow 2018), made to read the
# same to a colour-blind eye, from dark blue to yellow; the words the text says for its two ends.
HEATMAP_SCALE = "Cividis"
HEATMAP_WORDS = ("dark blue", "yellow")  # the colour at 0%, at 100%


def heatmap_words() -> str:
    """'dark blue at 0%, yellow at 100%': how a caption names the heatmap's scale."""
    low, high = HEATMAP_WORDS
    return f"{low} at 0%, {high} at 100%"


# One colour per strategy, by its name. A strategy not listed takes a colour of its name's own (stable,
# from SERIES); tests/test_charts.py asks every registered strategy to have its own here.
STRATEGY_COLOURS: dict[str, str] = {
    name: PALETTE[colour]
    for name, colour in {
        "baseline": "dark grey",
        "litm": "indigo",
        "litm-qac": "lavender",
        "litm-random": "sand",
        "closed-book": "black",
        "oracle": "dark yellow",
        "kv": "raspberry",
        "reprompt": "blue",
        "reprompt-tags-only": "green",
        "reprompt-at-beginning": "wine",
        "reprompt-before-gold": "teal",
        "icr": "amber",
        "rr": "red-orange",
        "chunked-icr": "sky-blue",
        "chunked-rr": "pink",
        "retrieve-then-reason": "dark green",
        "quotes-first": "purple",
        "s2a": "olive",
        "reorder": "steel blue",
        "keyword": "brown",
        "direct-answer": "cyan",
        "mq-full": "rose",
        "mq-chunked": "mint",
        "mq-keyword": "orange",
        "attention-sort": "dark blue",
        "calibrated-attention": "dark red",
    }.items()
}

# One colour per model, by its key (model_key): the bundled models first, then the priced ones. A model
# of the registries not listed (a newly priced one) takes a colour of its name's own, from SERIES.
MODEL_COLOURS: dict[str, str] = {
    key: PALETTE[colour]
    for key, colour in {
        "qwen2.5 coder 0.5b": "blue",
        "qwen2.5 coder 1.5b": "red-orange",
        "smollm2 135m": "green",
        "gpt 3.5 turbo": "pink",
        "gpt 4": "amber",
        "gpt 4 turbo": "sky-blue",
        "gpt 4o": "indigo",
        "gpt 4o mini": "dark green",
        "gpt 4.1": "wine",
        "gpt 4.1 mini": "olive",
        "gpt 4.1 nano": "purple",
        "gpt 5": "teal",
        "gpt 5 mini": "brown",
        "gpt 5 nano": "steel blue",
        "o1": "blue",
        "o1 mini": "red-orange",
        "o3": "green",
        "o3 mini": "pink",
        "o4 mini": "amber",
        "claude 3 haiku": "sky-blue",
        "claude 3 opus": "indigo",
        "claude 3 5 haiku": "dark green",
        "claude 3 5 sonnet": "wine",
        "claude 3 7 sonnet": "olive",
        "claude sonnet 4": "purple",
        "claude opus 4": "teal",
        "claude opus 4 1": "brown",
        "claude opus 4 5": "steel blue",
        "claude opus 4 6": "blue",
        "claude sonnet 4 5": "red-orange",
        "claude sonnet 4 6": "green",
        "claude haiku 4 5": "pink",
    }.items()
}

# the names the papers print for their methods (components/data/published tables) -> registered
# strategies, so a published curve takes its strategy's colour; "Reprompt (r=5k)" is read as "Reprompt"
PAPER_NAMES = {
    "Baseline": "baseline",
    "direct answer": "baseline",
    "Reprompt": "reprompt",
    "R&R": "rr",
    "page retrieval": "icr",
    "Chunkwise ICR": "chunked-icr",
    "Chunkwise R&R": "chunked-rr",
    "Tags only": "reprompt-tags-only",
    "At beginning only": "reprompt-at-beginning",
    "Before answer only": "reprompt-before-gold",
    "multi-document QA": "litm",
    "closed-book": "closed-book",
    "oracle": "oracle",
    "DA": "direct-answer",
    "RR": "retrieve-then-reason",
    "QF": "quotes-first",
    "S2A": "s2a",
}
STRATEGY_LABELS = {s.label: name for name, s in STRATEGIES.items()}  # display name -> strategy


def model_key(name) -> str:
    """A model's key from any of its names: 'Qwen2.5 Coder 0.5B', 'local:qwen2.5-coder-0.5b-instruct'
    and 'qwen2.5-coder-0.5b-instruct' give one key; 'GPT-3.5-Turbo' (as a paper prints it) and
    'openai:gpt-3.5-turbo' another."""
    text = model_title(name)
    return " ".join(text.lower().replace("-", " ").split())


# every model the registries know (the bundled ones, then the priced ones), by key
KNOWN_MODELS = frozenset(
    model_key(m)
    for m in [*(f"local:{k}" for k in MODELS), *(m for models in PRICES.values() for m in models)]
)


def own_colour(name) -> str:
    """A colour of the name's own, the same on every run and every machine: crc32 onto SERIES."""
    return SERIES[zlib.crc32(str(name).encode()) % len(SERIES)]


def strategy_colour(name: str) -> str:
    """A strategy's colour, by its registered name."""
    return STRATEGY_COLOURS.get(name) or own_colour(name)


def strategy_of(name) -> str | None:
    """The registered strategy a series name stands for: the strategy's own name or display name, a
    method name a paper prints (PAPER_NAMES, with a parameter in brackets dropped: "Reprompt (r=10k)"),
    else None."""
    text = str(name)
    for key in (text, text.split(" (", 1)[0]):
        key = STRATEGY_LABELS.get(key, PAPER_NAMES.get(key, key))
        if key in STRATEGIES:
            return key
    return None


def model_colour(name) -> str | None:
    """A known model's colour (by any of its names), else None."""
    key = model_key(name)
    if key in MODEL_COLOURS:
        return MODEL_COLOURS[key]
    return own_colour(key) if key in KNOWN_MODELS else None


def registered_colour(name) -> str | None:
    """The colour of a strategy (or a paper's name for it), else of a known model, else None."""
    key = strategy_of(name)
    return strategy_colour(key) if key is not None else model_colour(name)


def colour_for(name: str) -> str:
    """The colour of a strategy (or a paper's name for it), else of a known model, else of any other
    series name (own_colour)."""
    return registered_colour(name) or own_colour(name)


def is_strategy(name: str) -> bool:
    return strategy_of(name) is not None


def colour_word(hex_colour: str) -> str:
    """The word the app's text uses for a colour it draws ('#E69F00' -> 'amber')."""
    return COLOUR_WORDS[hex_colour.upper()]


def rgba(hex_colour: str, alpha: float) -> str:
    h = hex_colour.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


# --- a chart's series: colour, dash and marker -----------------------------------------------------------

DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]
SYMBOLS = ["circle", "square", "diamond", "triangle-up", "x", "star", "cross", "triangle-down"]
PUBLISHED_SYMBOLS = ["circle-open", "square-open", "diamond-open", "triangle-up-open", "star-open"]


def head_colours(heads: list[str]) -> dict[str, str]:
    """Strategies and known models keep their colour; other names take distinct colours of SERIES in
    order."""
    out = {h: c for h in heads if (c := registered_colour(h)) is not None}
    free = [c for c in SERIES if c not in out.values()] or SERIES
    i = 0
    for h in heads:
        if h not in out:
            out[h] = free[i % len(free)]
            i += 1
    return out


def differing_parts(labels: list[str]) -> list[str] | None:
    """Where every label has one first part (one strategy: its colour tells the lines nothing), the
    labels' parts (split at ' · ') at the first place they differ ('10 documents', '20 documents'), one
    per label; None where the first parts differ, the labels are one, or what differs is a strategy's
    parameter ('r=500', 'r=1,000': variants of a strategy keep its colour and differ by dash)."""
    labels = [str(label) for label in labels]
    split = [label.split(" · ") for label in labels]
    if len(set(labels)) < 2 or len({p[0] for p in split}) > 1:
        return None
    for i in range(1, max(len(p) for p in split)):
        values = [p[i] if i < len(p) else "" for p in split]
        if len(set(values)) > 1:
            return None if any("=" in v for v in values) else values
    return None


def family(label) -> str:
    """A series' family: its first part without a bracket ('Claude-1.3 (100K)' -> 'Claude-1.3')."""
    return str(label).split(" · ")[0].split(" (")[0]


def series_style(labels: list[str]) -> dict[str, dict]:
    """label -> colour, dash and symbol (and `part`, the part of the label its colour stands for).

    The colour is the first part's (a strategy's own colour, else a distinct one); where every line
    has one strategy, the part that tells the lines apart picks distinct colours of SERIES instead
    (Results' '· 10 documents' and '· 20 documents' lines: blue and red-orange, not four indigo
    lines). The dash counts the labels before it of the same colour or the same family
    ("Reprompt (r=5k)" and "Reprompt (r=10k)" share the reprompt colour and differ by dash;
    "Claude-1.3 (100K)" is dashed with hollow markers, so it never hides "Claude-1.3")."""
    labels = [str(label) for label in labels]
    parts = differing_parts(labels)
    if parts is not None:
        free = {p: SERIES[i % len(SERIES)] for i, p in enumerate(dict.fromkeys(parts))}
        colour_of = dict(zip(labels, (free[p] for p in parts), strict=True))
        part_of = dict(zip(labels, parts, strict=True))
    else:
        heads = [label.split(" · ")[0] for label in labels]
        colours = head_colours(list(dict.fromkeys(heads)))
        colour_of = {label: colours[head] for label, head in zip(labels, heads, strict=True)}
        part_of = {label: head for label, head in zip(labels, heads, strict=True)}
    styles: dict[str, dict] = {}
    by_colour: dict[str, int] = {}
    by_family: dict[str, int] = {}
    for label in labels:
        colour, head = colour_of[label], label.split(" · ")[0]
        fam = family(label) if family(label) != head else label  # 'Claude-1.3 (100K)': of 'Claude-1.3'
        kin = by_family.get(fam, 0)  # labels of its family before it
        k = max(by_colour.get(colour, 0), kin)
        by_colour[colour] = by_colour.get(colour, 0) + 1
        by_family[fam] = kin + 1
        symbol = SYMBOLS[len(styles) % len(SYMBOLS)]
        styles[label] = {
            "colour": colour,
            "dash": DASHES[k % len(DASHES)],
            "symbol": f"{symbol}-open" if kin and symbol not in ("x", "cross") else symbol,
            "part": part_of[label],
        }
    return styles


def part_colour(label, styles: dict[str, dict]) -> str | None:
    """The colour of the drawn series whose telling part (series_style's `part`) the label holds too: a
    published 'GPT-3.5-Turbo · 10 documents' curve takes the colour of this app's '10 documents' line."""
    parts = set(str(label).split(" · "))
    found = {st["colour"] for st in styles.values() if st.get("part") in parts}
    return found.pop() if len(found) == 1 else None
