"""The one URL sync of the app: which query parameter fills which session key, on which page.

    /playground?source=task&set=nq-open-30docs&documents=20&gold=9&strategy=litm
    /lesson?step=3&present=1
    /results?sweep=your+runs%233&metric=subspan_em&axis=gold_index
    /compare?arm=baseline+·+gpt-4o-mini&arm=rr+k%3D3+·+gpt-4o-mini&price=openai%3Agpt-4o-mini&margin=3&saving=20

`read(page)` puts the URL's values into the session once per distinct query (so the user's later
changes stay): a link is a suggestion, not a command, and a value that does not parse is ignored
with no error. `link(page)` writes the page's current values back into the URL and returns the link
to copy (Results, Compare, the Lesson's step); `keep_shared()` keeps presenter mode in the URL on
every page (a page switch drops query parameters). Nothing else reads or writes st.query_params.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from webapp.session.state import Key, State

TOKEN_RE = re.compile(r"^[0-9a-f]{16}$")  # a workspace token (services/sharing.py)
OWN_PRICES = "each arm's own model"  # Compare's "price every arm as": the default, left out of the URL
ALL_LENGTHS = "all lengths"  # Compare's length: the default, left out of the URL


def bounded_int(lo: int, hi: int) -> Callable[[str], int]:
    def parse(value: str) -> int:
        v = int(float(str(value)))
        if not lo <= v <= hi:
            raise ValueError(value)
        return v

    return parse


def bounded_float(lo: float, hi: float) -> Callable[[str], float]:
    def parse(value: str) -> float:
        v = float(str(value))
        if not lo <= v <= hi:
            raise ValueError(value)
        return v

    return parse


def flag(value: str) -> bool:
    return str(value).lower() in ("1", "true", "yes")


def token(value: str) -> str:
    if not TOKEN_RE.match(str(value)):
        raise ValueError(value)
    return str(value)


def one_of(mapping: dict[str, str]) -> Callable[[str], str]:
    def parse(value: str) -> str:
        return mapping[str(value).lower()]

    return parse


def tenth(value: str) -> float:
    return round(bounded_float(0.0, 1.0)(value), 1)


@dataclass(frozen=True)
class UrlParam:
    """Query parameter `name` fills session key `key` (parsed by `parse`: a ValueError, TypeError or
    KeyError ignores the value); `item` puts it into the key's dict under that name instead; `also`
    sets other keys with it; `write` puts the page's value back into its URL (link), left out when it
    is empty or one of `skip`."""

    name: str
    key: Key
    parse: Callable[[Any], Any] = str
    many: bool = False
    item: str = ""
    also: tuple[tuple[Key, Any], ...] = ()
    write: bool = False
    skip: tuple = ()


SHARED = (
    UrlParam("present", State.present, flag),
    UrlParam("run", State.sweep_owner, token),  # written by services.sharing.workspace (sweep pages only)
)
PAGES: dict[str, tuple[UrlParam, ...]] = {
    "playground": (
        UrlParam("sample", State.sample, also=((State.source, "Sample"), (State.question_pick, ""))),
        UrlParam("source", State.source, one_of({"task": "Task set", "sample": "Sample", "paste": "Paste"})),
        UrlParam("set", State.pg_set),
        UrlParam("task", State.pg_task, bounded_int(1, 10**6)),
        UrlParam(
            "documents", State.pg_documents, bounded_int(1, 200), also=((State.pg_layout, "documents"),)
        ),
        UrlParam("length", State.pg_length, bounded_int(100, 200_000), also=((State.pg_layout, "tokens"),)),
        UrlParam("gold", State.pg_gold_index, bounded_int(0, 199)),
        UrlParam("move", State.move_to, tenth, also=((State.move, True),)),
        UrlParam("strategy", State.strategy),
        *(UrlParam(p, State.pending_params, bounded_int(1, 10**7), item=p) for p in ("r", "k", "c")),
    ),
    "lesson": (UrlParam("step", State.lesson_step, bounded_int(1, 99), write=True),),
    "results": (
        UrlParam("sweep", State.res_sweeps, many=True, write=True),
        UrlParam("model", State.res_models, many=True, write=True),
        UrlParam("strategy", State.res_strategies, many=True, write=True),
        UrlParam("task_set", State.res_task_sets, many=True, write=True),
        UrlParam("metric", State.res_metric, write=True, skip=("primary",)),
        UrlParam("axis", State.res_u_axis, one_of({"gold_index": "gold_index", "position": "position"})),
    ),
    "compare": (
        UrlParam("sweep", State.cmp_sweeps, many=True, write=True),
        UrlParam("arm", State.cmp_arms, many=True, write=True),
        UrlParam("length", State.cmp_length, write=True, skip=(ALL_LENGTHS,)),
        UrlParam("price", State.cmp_price_model, write=True, skip=(OWN_PRICES,)),
        UrlParam("batch", State.cmp_batch, flag, write=True),
        UrlParam("pair", State.cmp_pair, write=True),
        UrlParam("d", State.cmp_difference, bounded_float(1.0, 50.0), write=True),
        UrlParam("margin", State.cmp_margin, bounded_float(0.5, 50.0), write=True, skip=(5.0,)),
        UrlParam("saving", State.cmp_min_saving, bounded_float(0.0, 90.0), write=True, skip=(10.0,)),
    ),
}


def _given(params: tuple[UrlParam, ...]) -> dict[str, Any]:
    qp = st.query_params
    return {p.name: (qp.get_all(p.name) if p.many else qp.get(p.name)) for p in params if p.name in qp}


def _apply(p: UrlParam, raw: Any) -> None:
    try:
        value = [p.parse(v) for v in raw] if p.many else p.parse(raw)
    except (ValueError, TypeError, KeyError):
        return
    if p.item:
        p.key.value = {**(p.key.value or {}), p.item: value}
    else:
        p.key.value = value
    for key, extra in p.also:
        key.value = extra


def _read(scope: str, params: tuple[UrlParam, ...]) -> None:
    given = _given(params)
    seen = State().url_seen
    signature = repr(sorted(given.items()))
    if not given or seen.get(scope) == signature:
        return
    State().url_seen = {**seen, scope: signature}
    for p in params:
        if p.name in given:
            _apply(p, given[p.name])


def read(page: str = "") -> None:
    """The URL's values for every page (presenter mode, the workspace token) and for `page`, each
    applied once per distinct query. Call before the widgets they fill are drawn."""
    _read("", SHARED)
    if page in PAGES:
        _read(page, PAGES[page])


def given(page: str) -> set[str]:
    """The query parameters of `page` that the URL holds right now."""
    return set(_given(PAGES.get(page, ())))


def present_requested() -> bool:
    """?present=1: known before anything is drawn (the sidebar starts collapsed)."""
    return st.query_params.get("present") == "1"


def _mark(scope: str, params: tuple[UrlParam, ...]) -> None:
    State().url_seen = {**State().url_seen, scope: repr(sorted(_given(params).items()))}


def keep_shared() -> None:
    """Presenter mode into the URL on every run (page switches drop query parameters)."""
    if State().present:
        if st.query_params.get("present") != "1":
            st.query_params["present"] = "1"
    elif "present" in st.query_params:
        del st.query_params["present"]
    _mark("", SHARED)


def keep_token(value: str) -> None:
    """The workspace token into the URL (?run=), so a refreshed page finds its sweeps again."""
    if st.query_params.get("run") != value:
        st.query_params["run"] = value
    _mark("", SHARED)


def _value(p: UrlParam) -> Any:
    value = p.key.value
    if value in (None, "", [], False) or (not isinstance(value, list) and value in p.skip):
        return None
    if p.many:
        return [str(v) for v in value]
    return "1" if value is True else f"{value:g}" if isinstance(value, float) else str(value)


def link(page: str) -> str:
    """Write `page`'s values into its URL (with presenter mode and the workspace token if the URL has
    them) and return the link to copy."""
    params: dict[str, Any] = {}
    for p in PAGES.get(page, ()):
        if p.write and (value := _value(p)) is not None:
            params[p.name] = value
    for name in ("present", "run"):
        if name in st.query_params:
            params[name] = st.query_params[name]
    if {k: st.query_params.get_all(k) for k in st.query_params} != {
        k: v if isinstance(v, list) else [v] for k, v in params.items()
    }:
        st.query_params.from_dict(params)
    _mark(page, PAGES.get(page, ()))
    _mark("", SHARED)
    try:
        base = str(st.context.url or "").split("?")[0]
    except Exception:  # no browser context (AppTest)
        base = ""
    return (base or f"/{page}") + ("?" + urlencode(params, doseq=True) if params else "")
