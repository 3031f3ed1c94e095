"""The cell: where a sweep puts the answer, and how large the document around it is.

A sweep places the answer one of two ways, and every cell is one or the other:

- by tokens (Levy, Jacoby and Goldberg / "R&R" §4.1): a document of about `length` tokens with the gold
  page at `position` (<= 1 a fraction of the length, > 1 tokens into the document);
- by documents ("Lost in the Middle" §2.1, §3.1): `documents` documents, the gold one at the 0-based
  `gold_index`.

The fields of the other placement are None. `Cell.columns` are the trial columns (components.run.schema)
that name a cell; `Cell.of(row)` reads a cell back from a trial row or dict. `layout` says how the cell
is drawn: which column is the x axis (the answer's place), which one sizes the document, their titles;
`layout_of(trials)` says it of a table of trials.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from components.core.positions import FIVE_POSITIONS, spread_indices


def fraction_label(x: float) -> str:
    """'start', 'middle', 'end' or '30%': a gold page's place as a fraction of the document."""
    return "start" if x == 0 else "end" if x == 1 else "middle" if x == 0.5 else f"{x:.0%}"


@dataclass(frozen=True)
class Layout:
    """How one placement is drawn: the column of the answer's place (`x`), the column of the document's
    size (`size`), and their titles."""

    by_documents: bool
    x: str  # "gold_index" | "position"
    size: str  # "documents" | "length"
    axis_title: str  # the axis as a choice ("gold document index (of N documents)")
    size_title: str  # the size as a choice ("Documents (N)")

    def x_title(self, kind: str = "tokens") -> str:
        """The x axis of a curve over many cells; `kind` ("tokens" or "fraction") for token positions."""
        if self.by_documents:
            return "gold document index (0 = first)"
        return (
            "answer position (fraction of the document)" if kind == "fraction" else "answer position (tokens)"
        )


BY_TOKENS = Layout(
    False, "position", "length", "answer position (tokens or fraction)", "Document length (tokens)"
)
BY_DOCUMENTS = Layout(
    True, "gold_index", "documents", "gold document index (of N documents)", "Documents (N)"
)
LAYOUTS = {lay.x: lay for lay in (BY_TOKENS, BY_DOCUMENTS)}  # by axis column


def layout_of(trials: Any) -> Layout:
    """How a table of trials (a pandas DataFrame) is placed: BY_DOCUMENTS when its trials have a gold
    index and none a length (a LITM sweep), else BY_TOKENS. The one reading of a table's layout."""
    import pandas as pd  # only here: components.core stays free of pandas at import

    def known(column: str) -> Any:
        values = trials[column] if column in trials else pd.Series(dtype=float)
        return pd.to_numeric(values, errors="coerce").notna()

    return BY_DOCUMENTS if bool(known("gold_index").any()) and not bool(known("length").any()) else BY_TOKENS


def _value(row: Any, name: str):
    """A cell column of a row (a Mapping, a pandas Series or namedtuple, a Trial); None when missing,
    None or NaN."""
    value = row.get(name) if hasattr(row, "get") else getattr(row, name, None)  # a dict or Series, or not
    if value is None:
        return None
    try:
        missing = value != value  # NaN
        return None if missing else value
    except TypeError:  # pandas' NA: its truth value raises
        return None


@dataclass(frozen=True)
class Cell:
    """One place of a sweep's grid: `length` tokens with the answer at `position` (R&R §4.1), or
    `documents` documents with the gold one at 0-based `gold_index` (LITM §2.1); the other placement's
    fields are None. All four None: no placement (the task's own pages as given)."""

    length: int | None = None
    position: float | None = None
    documents: int | None = None
    gold_index: int | None = None

    columns: ClassVar[tuple[str, ...]] = ("length", "position", "documents", "gold_index")

    @classmethod
    def of(cls, row: Any) -> Cell:
        """The cell of a trial row (a dict, a pandas Series or itertuples row, a Trial): missing or NaN
        columns are None; counts and indices come back as int, the position as float."""
        length, position, documents, gold_index = (_value(row, c) for c in cls.columns)
        return cls(
            None if length is None else int(length),
            None if position is None else float(position),
            None if documents is None else int(documents),
            None if gold_index is None else int(gold_index),
        )

    @property
    def by_documents(self) -> bool:
        """The answer is placed by documents (LITM §2.1), not by tokens (R&R §4.1)."""
        return self.documents is not None

    @property
    def placed(self) -> bool:
        """The cell says where the answer goes (False: the task's own pages as given)."""
        return self.documents is not None or self.length is not None

    @property
    def layout(self) -> Layout:
        return BY_DOCUMENTS if self.by_documents else BY_TOKENS

    @property
    def x(self):
        """The answer's place: the gold index, or the position."""
        return self.gold_index if self.by_documents else self.position

    @property
    def size(self):
        """The document's size: the number of documents, or the length in tokens."""
        return self.documents if self.by_documents else self.length

    def fields(self) -> dict:
        """The two columns of this placement, by name (what a trial's key holds)."""
        if self.by_documents:
            return {"documents": self.documents, "gold_index": self.gold_index}
        return {"length": self.length, "position": self.position}

    def to_dict(self) -> dict:
        """Every cell column, None where not used (the trial row's shape)."""
        return {c: getattr(self, c) for c in self.columns}

    def at(self, x) -> Cell:
        """The same cell with the answer at x (a gold index, or a position)."""
        return replace(self, gold_index=int(x)) if self.by_documents else replace(self, position=float(x))

    def spread(self) -> list:
        """The five places a mini U-curve visits, start to end: indices of the N documents, or fractions."""
        return spread_indices(int(self.documents or 0)) if self.by_documents else list(FIVE_POSITIONS)

    def place(self, x=None) -> str:
        """The answer's place as a label: the index ('9'), or 'start', 'middle', 'end', '30%'."""
        x = self.x if x is None else x
        return str(x) if self.by_documents else fraction_label(float(x))

    @property
    def x_title(self) -> str:
        """The x axis of one cell's spread (the Playground's mini curve)."""
        if self.by_documents:
            return f"gold document index (of {self.documents})"
        return "gold page position (fraction of the document)"

    def where(self) -> str:
        """The document's size in words: '20 documents' or 'a length of 4,000 tokens'."""
        return f"{self.documents:,} documents" if self.by_documents else f"a length of {self.length:,} tokens"
