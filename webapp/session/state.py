"""Every session-state key of the app, in one class, with typed accessors.

    state = State()
    state.api_key            # read (the default if unset)
    state.api_key = "sk-…"    # write
    st.text_input("API key", key=State.api_key.key)   # a widget bound to the same key

Session state belongs to one browser session, so nothing here is seen by another session: the API
key, the document and runs in progress live only here (never in st.cache_data, files or logs).

To add a key, add one line `name: T = Key(default)` to State (`widget=True` if a widget owns it:
its default is then set once by `State.init()` and the widget is created with `key=` only, never
with `value=`; its value is kept when the user switches pages).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

import streamlit as st

T = TypeVar("T")


class Key(Generic[T]):
    """A session-state key with a default (a value, or a zero-argument factory for mutables)."""

    def __init__(self, default: T | Callable[[], T], widget: bool = False):
        self.default = default
        self.widget = widget
        self.key = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = name

    def initial(self) -> T:
        return self.default() if callable(self.default) else self.default  # type: ignore[return-value]

    @overload
    def __get__(self, obj: None, owner: type) -> Key[T]: ...
    @overload
    def __get__(self, obj: object, owner: type) -> T: ...

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        ss = st.session_state
        if self.key not in ss:
            if self.widget:
                return self.initial()
            ss[self.key] = self.initial()
        return ss[self.key]

    def __set__(self, obj: object, value: T) -> None:
        st.session_state[self.key] = value


class State:
    # --- sidebar: model and credentials (this session only) ---
    provider: str = Key("", widget=True)  # set by sidebar.init(): local if bundled, else "none"
    model: str = Key("", widget=True)
    api_key: str = Key("", widget=True)  # password field; never logged, cached or stored
    base_url: str = Key("http://127.0.0.1:8000/v1", widget=True)

    # --- playground: document ---
    source: str = Key("Sample", widget=True)  # Sample | Paste | Upload
    sample: str = Key("", widget=True)  # Sample.name
    pasted: str = Key("", widget=True)
    upload_text: str = Key("")  # text read from the last good upload
    upload_name: str = Key("")
    upload_id: str = Key("")  # UploadedFile.file_id already read
    upload_error: str = Key("")
    pagination: str = Key("paragraph", widget=True)  # paragraph | sentence | tokens
    page_tokens: int = Key(300, widget=True)  # N of tokens:N

    # --- playground: task ---
    question_pick: str = Key("", widget=True)  # one of the sample's questions, or OWN_QUESTION
    question: str = Key("", widget=True)
    answers: str = Key("", widget=True)  # gold answers, one per line
    gold: list = Key(list, widget=True)  # gold page numbers (multiselect)
    gold_for: str = Key("")  # which (document, answers) the gold default was computed for

    # --- playground: strategy ---
    strategy: str = Key("reprompt", widget=True)
    # Strategy parameters are widgets keyed by State.param_key(name, default): strategies whose
    # parameter has the same name and paper default (r = 10k, k = 5) share one value.
    fitted: dict = Key(dict)  # param key -> the document its starting value was fitted to
    view_prompt: int = Key(0, widget=True)  # which prompt the highlighted view shows

    # --- playground: move the answer (webapp/moving.py) and task sets as documents ---
    move: bool = Key(False, widget=True)  # own document: move its gold page(s)
    move_to: float = Key(0.5, widget=True)  # where: fraction of the document's tokens (0 start, 1 end)
    pg_set: str = Key("", widget=True)  # source "Task set": the bundled task set's name
    pg_task: int = Key(1, widget=True)  # which task of it (1-based, as shown)
    pg_layout: str = Key("documents", widget=True)  # documents (LITM §3.1) | tokens (R&R §4.1)
    pg_documents: int = Key(20, widget=True)  # N documents
    pg_gold_index: int = Key(0, widget=True)  # 0-based index of the gold document
    pg_length: int = Key(2000, widget=True)  # document length in tokens (layout "tokens")
    mini_curve: Any = Key(None)  # dict: the "run at 5 positions" rows and the inputs they were made for
    query_seen: str = Key("")  # the query parameters already applied to this session (webapp/links.py)

    # --- presenter mode (webapp/presenter.py; also ?present=1 in the URL) ---
    present: bool = Key(False, widget=True)
    export_format: str = Key("png", widget=True)  # the chart toolbar's camera button: png | svg
    lesson_step: int = Key(1, widget=True)  # the Lesson's step (also ?step=N)
    lesson_move: int = Key(0, widget=True)  # Lesson "move the answer": gold index of 20 documents
    lesson_r: int = Key(500, widget=True)  # Lesson "reminders": r
    lesson_k: int = Key(3, widget=True)  # Lesson "retrieval": k

    # --- playground: last live run (this session only) ---
    last_run: Any = Key(None)  # dict: the result and the inputs it was made for
    run_error: str = Key("")

    choice: Any = Key(None)  # sidebar.Choice of this run of the script, or None (prompts only)

    # --- experiments, results, papers (webapp/pages/experiments.py, results.py, papers.py) ---
    # Their selects are made through webapp/pickers.py, which replaces a None or stale value by a
    # default that depends on the data, so the defaults here are None (or an empty list).
    sweep_owner: str = Key("")  # this browser's token in webapp.jobs; also in the URL (?run=) for refreshes
    exp_source: Any = Key(None, widget=True)  # Bundled | Generated | Upload
    exp_bundled: Any = Key(None, widget=True)
    exp_kind: Any = Key(None, widget=True)  # generator kind
    exp_gen_n: int = Key(20, widget=True)
    exp_gen_seed: int = Key(0, widget=True)
    exp_lengths: Any = Key(None, widget=True)
    exp_positions: Any = Key(None, widget=True)
    exp_strategies: Any = Key(None, widget=True)
    exp_n_tasks: int = Key(10, widget=True)
    exp_models: str = Key("", widget=True)  # one model name per line (the sidebar's provider and key)
    exp_models_for: Any = Key(None)  # [provider, model] of the sidebar the Models box was last filled from
    exp_name: str = Key("", widget=True)
    exp_max_usd: float = Key(1.0, widget=True)
    exp_concurrency: int = Key(4, widget=True)
    exp_resume: Any = Key(None, widget=True)  # a past sweep to resume
    exp_retry_errors: bool = Key(False, widget=True)
    res_sweeps: list = Key(list, widget=True)
    res_models: list = Key(list, widget=True)
    res_strategies: list = Key(list, widget=True)
    res_task_sets: list = Key(list, widget=True)
    res_metric: Any = Key(None, widget=True)
    res_u_series: Any = Key(None, widget=True)
    res_u_length: Any = Key(None, widget=True)
    res_u_overlay: list = Key(list, widget=True)
    res_heat_series: Any = Key(None, widget=True)
    res_cost_measure: Any = Key(None, widget=True)
    res_len_series: Any = Key(None, widget=True)
    res_trial: Any = Key(None, widget=True)
    res_trial_page: int = Key(1, widget=True)  # page of the trial table (results/page.py PAGE rows each)
    cmp_sweeps: Any = Key(None, widget=True)  # Compare page (webapp/compare/page.py); also in its URL
    cmp_arms: Any = Key(None, widget=True)  # None: the page's default arms
    cmp_length: Any = Key(None, widget=True)
    cmp_price_model: Any = Key(None, widget=True)
    cmp_batch: bool = Key(False, widget=True)
    cmp_pair: Any = Key(None, widget=True)
    cmp_difference: float = Key(5.0, widget=True)
    cmp_power: float = Key(0.8, widget=True)
    cmp_prices: Any = Key(None)  # the price table edited in this session (None: the shipped one)
    # Not set through State: cmp_seeded, cmp_price_grid (the Compare page's URL and price grid),
    # res_trial_table (dataframe selection), res__trial_keys (row -> trial),
    # papers_<paper>_* (the Papers page's per-table selects), download buttons.

    @staticmethod
    def param_key(name: str, default: int) -> str:
        return f"param_{name}_{default}"

    @classmethod
    def keys(cls) -> list[Key]:
        return [v for v in vars(cls).values() if isinstance(v, Key)]

    @classmethod
    def init(cls, **overrides: Any) -> None:
        """Set widget defaults once per session, and keep widget values across page switches
        (Streamlit drops a widget's value when a page without that widget runs)."""
        ss = st.session_state
        for name in [n for n in ss if str(n).startswith("param_")]:
            ss[name] = ss[name]
        for k in cls.keys():
            if not k.widget:
                continue
            if k.key in ss:
                ss[k.key] = ss[k.key]
            else:
                ss[k.key] = overrides.get(k.key, k.initial())

    def reset(self, *names: str) -> None:
        """Forget the given keys (their defaults come back)."""
        for name in names:
            st.session_state.pop(name, None)
