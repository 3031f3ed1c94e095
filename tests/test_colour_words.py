"""Words that name a colour are read from the palette the charts draw with (components/report/colours.py
COLOUR_WORDS): the prompt map's key, the retrieval marks, the Lesson's cost bars and Compare's dominated
arms; no text of the app names a colour by hand ("red star" was drawn red-orange, "orange reminders"
amber)."""

from __future__ import annotations

import re
from pathlib import Path

from components.report import colours, promptmap
from components.report.lesson import STEPS

ROOT = Path(__file__).resolve().parents[1]
COLOUR = r"\b(red|orange|amber|blue|green|grey|gray|black|pink|yellow|purple|violet|vermillion)\b"
THING = r"[ -]+(star|stars|reminders?|bars?|dots?|cross|crosses|instructions?|pages?|lines?|points?|arms?|markers?)\b"


def test_the_maps_key_names_the_colours_it_draws():
    assert promptmap.colour_key() == (
        "blue instructions, amber reminders, grey pages, the red-orange star the gold page"
    )
    assert [
        colours.colour_word(promptmap.COLORS[k]) for k in ("instruction", "reminder", "page", "gold")
    ] == [
        "blue",
        "amber",
        "grey",
        "red-orange",
    ]
    assert (promptmap.word("hit"), promptmap.word("miss")) == ("green", "black")
    assert colours.colour_word(colours.DOMINATED) == "grey"
    drawn = {*colours.SERIES, *colours.STRATEGY_COLOURS.values(), *colours.MODEL_COLOURS.values()}
    assert drawn <= set(colours.COLOUR_WORDS)  # every colour a series takes has its word


def test_the_lessons_words_follow_the_palette():
    text = " ".join(str(v) for s in STEPS for v in vars(s).values() if isinstance(v, str))
    assert f"the {promptmap.word('gold')} star travel" in text and "red star" not in text
    assert f"count the {promptmap.word('reminder')} reminders" in text and "orange reminders" not in text


def test_no_text_names_a_colour_by_hand():
    """Every '<colour> <thing>' in the app's source is built from the palette, not typed."""
    found = []
    for path in [*ROOT.glob("webapp/**/*.py"), *ROOT.glob("components/**/*.py")]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(COLOUR + THING, line, re.I) and '"""' not in line and "'" not in line.strip()[:1]:
                if not line.lstrip().startswith("#") and "red-orange star the gold page'" not in line:
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, found
