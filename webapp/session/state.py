"""Every session-state key of the app, in one class, with typed accessors.

    state = State()
    state.api_key                      # read (the default if unset)
    state.api_key = "sk-…"              # write
    st.text_input("API key", key=State.api_key.key)   # a widget bound to the same key
    State.param("r", 10_000).key       # a key named at run time (a family: prefix + parts)

Nothing outside webapp/session touches st.session_state: pages, ui and services read and write
through State (tests/test_session_keys.py walks the code for it).

Session state belongs to one browser session, so nothing here is seen by another session: the API
key, the document and runs in progress live only here (never in st.cache_data, files or logs).

To add a key, add one line to State: `name: T = Key(default)` for plain state (set on first read),
`Key(default, kind=WIDGET)` for a widget's value (its default is set once by `State.init()`, the
widget is created with `key=` only, never `value=`, and its value is kept when the user switches
pages), `Key(kind=CONTROL)` for a button, upload, download, chart or table whose value Streamlit owns
(never set). A Family makes keys named at run time (`prefix_part_part`).
"""

from __future__ import annotations

import secrets
from typing import Any, Generic, TypeVar, overload

import streamlit as st

T = TypeVar("T")
VALUE, WIDGET, CONTROL = "value", "widget", "control"


# A token of this server process: a run button's key carries it, so after a server restart a tab still open
# that reconnects and resends its old "clicked" state names a widget this server never drew, and Streamlit
# drops it: a reconnecting tab never fires a run again (a fired run could be what crashed the old server).
BOOT = secrets.token_hex(4)


class Key(Generic[T]):
    """A session-state key with a default (a value, or a zero-argument factory for mutables). `boot=True`
    (run buttons): the key is `<name>_<BOOT>`, new with every server process."""

    def __init__(self, default: Any = None, *, kind: str = VALUE, name: str = "", boot: bool = False):
        self.default = default
        self.kind = kind
        self.boot = boot
        self.key = f"{name}_{BOOT}" if boot and name else name

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = f"{name}_{BOOT}" if self.boot else name

    def __repr__(self) -> str:
        return f"Key({self.key!r}, {self.kind})"

    def initial(self) -> T:
        return self.default() if callable(self.default) else self.default  # type: ignore[return-value]

    @overload
    def __get__(self, obj: None, owner: type) -> Key[T]: ...
    @overload
    def __get__(self, obj: object, owner: type) -> T: ...

    def __get__(self, obj, owner=None):
        return self if obj is None else self.value

    def __set__(self, obj: object, value: T) -> None:
        self.value = value

    @property
    def value(self) -> T:
        ss = st.session_state
        if self.key not in ss:
            if self.kind != VALUE:
                return self.initial()
            ss[self.key] = self.initial()
        return ss[self.key]

    @value.setter
    def value(self, value: T) -> None:
        if self.kind == CONTROL:
            raise TypeError(f"{self.key} belongs to a Streamlit control: it cannot be set")
        st.session_state[self.key] = value

    def given(self) -> bool:
        """Whether the session holds a value (a widget drawn, a value set)."""
        return self.key in st.session_state

    def clear(self) -> None:
        """Forget the value (its default comes back)."""
        st.session_state.pop(self.key, None)


class Family:
    """Keys named at run time: `State.param("r", 10000)` is the key "param_r_10000"."""

    def __init__(self, default: Any = None, *, kind: str = WIDGET):
        self.default = default
        self.kind = kind
        self.prefix = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.prefix = name

    def __get__(self, obj, owner=None) -> Family:
        return self

    def __call__(self, *parts: object) -> Key:
        return Key(self.default, kind=self.kind, name="_".join([self.prefix, *map(str, parts)]))

    def owns(self, name: str) -> bool:
        return str(name).startswith(self.prefix + "_")


class State:
    # --- sidebar: model and credentials (this session only) ---
    provider: Key[str] = Key("", kind=WIDGET)  # set by State.init: local if bundled, else "none"
    model: Key[str] = Key("", kind=WIDGET)
    api_key: Key[str] = Key("", kind=WIDGET)  # password field; never logged, cached or stored
    base_url: Key[str] = Key("http://127.0.0.1:8000/v1", kind=WIDGET)
    choice: Key[Any] = Key(None)  # services.models.Choice of this run of the script, or None (prompts only)

    # --- presenter mode (also ?present=1 in the URL) and chart export ---
    present: Key[bool] = Key(False, kind=WIDGET)
    export_format: Key[str] = Key("png", kind=WIDGET)  # the chart toolbar's camera button: png | svg
    present_collapsed: Key[str] = Key("")  # the page presenter mode last collapsed the sidebar on

    # --- the URL (session/url.py) and this browser's sweeps (services/sharing.py) ---
    url_seen: Key[dict] = Key(dict)  # scope -> the query parameters already applied in this session
    sweep_owner: Key[str] = Key("")  # this browser's workspace token; also in the URL (?run=) for refreshes
    browser_key: Key[str] = Key("")  # a random key of this session, where the browser sends no cookie
    restored: Key[dict] = Key(
        dict
    )  # page -> the token whose kept settings this session restored (session/keep.py)

    # --- playground: document ---
    source: Key[str] = Key("Sample", kind=WIDGET)  # Sample | Paste | Upload | Task set
    sample: Key[str] = Key("", kind=WIDGET)  # Sample.name
    pasted: Key[str] = Key("", kind=WIDGET)
    upload_text: Key[str] = Key("")  # text read from the last good upload
    upload_name: Key[str] = Key("")
    upload_id: Key[str] = Key("")  # UploadedFile.file_id already read
    upload_error: Key[str] = Key("")
    upload: Key[Any] = Key(kind=CONTROL)  # the Playground's file uploader
    pagination: Key[str] = Key("paragraph", kind=WIDGET)  # paragraph | sentence | tokens
    page_tokens: Key[int] = Key(300, kind=WIDGET)  # N of tokens:N
    doc_seen: Key[str] = Key(
        ""
    )  # the document the strategy was last reset for (a new one starts on Baseline)

    # --- playground: task ---
    question_pick: Key[str] = Key(
        "", kind=WIDGET
    )  # one of the sample's questions, or the page's "own question"
    question: Key[str] = Key("", kind=WIDGET)
    answers: Key[str] = Key("", kind=WIDGET)  # gold answers, separated by "|" or new lines
    gold: Key[list] = Key(list, kind=WIDGET)  # gold page numbers (multiselect)
    gold_for: Key[str] = Key("")  # which (document, answers) the gold default was computed for

    # --- playground: strategy ---
    strategy: Key[str] = Key("baseline", kind=WIDGET)
    # Strategy parameters are widgets keyed param_<name>_<paper default>: strategies whose parameter has
    # the same name and paper default (r = 10k, k = 5) share one value.
    param = Family(kind=WIDGET)
    fitted: Key[dict] = Key(dict)  # param key -> the document its starting value was fitted to
    pending_params: Key[dict] = Key(dict)  # strategy parameters a link asked for (?r=500), applied once
    view_prompt: Key[int] = Key(0, kind=WIDGET)  # which prompt the highlighted view shows

    # --- playground: move the answer, task sets as documents, live runs ---
    move: Key[bool] = Key(False, kind=WIDGET)  # own document: move its gold page(s)
    move_to: Key[float] = Key(0.5, kind=WIDGET)  # where: fraction of the document's tokens (0 start, 1 end)
    pg_set: Key[str] = Key("", kind=WIDGET)  # source "Task set": the bundled task set's name
    pg_task: Key[int] = Key(1, kind=WIDGET)  # which task of it (1-based, as shown)
    pg_layout: Key[str] = Key("documents", kind=WIDGET)  # documents (LITM §3.1) | tokens (R&R §4.1)
    pg_documents: Key[int] = Key(20, kind=WIDGET)  # N documents
    pg_gold_index: Key[int] = Key(0, kind=WIDGET)  # 0-based index of the gold document
    pg_length: Key[int] = Key(2000, kind=WIDGET)  # document length in tokens (layout "tokens")
    mini_curve: Key[Any] = Key(None)  # dict: the "run at 5 positions" rows and the inputs they were made for
    last_run: Key[Any] = Key(None)  # dict: the result and the inputs it was made for
    run_error: Key[str] = Key("")
    run_go: Key[Any] = Key(kind=CONTROL, boot=True)  # the "Run with …" button
    run_cancel: Key[Any] = Key(kind=CONTROL)  # the run box's Cancel (a local run: stopped in the worker)
    run_cancelled: Key[bool] = Key(False)  # a local run that has not ended: a rerun meanwhile cancelled it
    positions_go: Key[Any] = Key(kind=CONTROL, boot=True)  # the "Run at 5 positions" button
    pg_measure: Key[str] = Key("likelihood", kind=WIDGET)  # the 5-position run's measure: likelihood | answer
    positions_more: Key[Any] = Key(kind=CONTROL, boot=True)  # "Add 5 more questions" (task sets, likelihood)
    positions_stop: Key[Any] = Key(kind=CONTROL)  # stops a 5-position run (the positions done are kept)
    looks: Key[Any] = Key(
        None
    )  # dict: where the model looks (attention by page) and the inputs it was read for
    looks_go: Key[Any] = Key(kind=CONTROL, boot=True)  # the "Show where ... looks" button

    # --- playground: many questions at once (Context Overloading; playground/multiq.py) ---
    pg_mq_questions: Key[str] = Key(
        "", kind=WIDGET
    )  # one question a line, its gold answers after a tab or "|"
    pg_mq_strategy: Key[str] = Key("mq-keyword", kind=WIDGET)  # mq-full | mq-chunked | mq-keyword
    pg_mq_chunk: Key[int] = Key(800, kind=WIDGET)  # chunk_tokens (Context Overloading §4.3: about 800)
    pg_mq_view: Key[int] = Key(0, kind=WIDGET)  # which of the prompts is shown
    pg_mq_go: Key[Any] = Key(kind=CONTROL)  # the "Ask them" button
    pg_mq_result: Key[Any] = Key(None)  # dict: the answers and the inputs they were made for

    # --- lesson ---
    lesson_step: Key[int] = Key(1, kind=WIDGET)  # the Lesson's step (also ?step=N)
    lesson_move: Key[int] = Key(0, kind=WIDGET)  # "move the answer": gold index of 20 documents
    lesson_view: Key[str] = Key("prompt", kind=WIDGET)  # "move the answer": prompt | accuracy | likelihood
    lesson_why_view: Key[str] = Key("curves", kind=WIDGET)  # "why the middle is lost": curves | live
    lesson_why_gold: Key[int] = Key(9, kind=WIDGET)  # "why the middle is lost": the live prompt's gold index
    lesson_r: Key[int] = Key(500, kind=WIDGET)  # "reminders": r
    lesson_k: Key[int] = Key(3, kind=WIDGET)  # "retrieval": k
    lesson_prev: Key[Any] = Key(kind=CONTROL)
    lesson_next: Key[Any] = Key(kind=CONTROL)

    # --- experiments: data-dependent selects are made through ui/pickers.py, which replaces a None or
    # stale value by a default that depends on the data, so several defaults here are None ---
    exp_source: Key[Any] = Key(None, kind=WIDGET)  # Bundled | Generated | Upload
    exp_bundled: Key[Any] = Key(None, kind=WIDGET)
    exp_kind: Key[Any] = Key(None, kind=WIDGET)  # generator kind
    exp_gen_n: Key[int] = Key(20, kind=WIDGET)
    exp_gen_seed: Key[int] = Key(0, kind=WIDGET)
    exp_gen_param = Family(
        None, kind=WIDGET
    )  # exp_gen_param_<name>: a generated kind's parameter (hops, ...)
    exp_gen_literal: Key[bool] = Key(False, kind=WIDGET)  # its literal control instead
    exp_upload: Key[Any] = Key(kind=CONTROL)
    exp_lengths: Key[Any] = Key(None, kind=WIDGET)
    exp_positions: Key[Any] = Key(None, kind=WIDGET)
    exp_strategies: Key[Any] = Key(None, kind=WIDGET)
    exp_param = Family(None, kind=WIDGET)  # exp_param_<name>: a list of values (r, k, c), as the TOML takes
    exp_n_tasks: Key[int] = Key(10, kind=WIDGET)
    exp_fitted_for: Key[Any] = Key(
        None
    )  # the shortest length r and c were last fitted to (they refit when it changes)
    exp_models: Key[str] = Key("", kind=WIDGET)  # one model name per line (the sidebar's provider and key)
    exp_models_for: Key[Any] = Key(
        None
    )  # [provider, model] of the sidebar the Models box was last filled from
    exp_mode: Key[str] = Key("live", kind=WIDGET)  # live | batch
    exp_name: Key[str] = Key("", kind=WIDGET)
    exp_samples: Key[int] = Key(1, kind=WIDGET)  # [sweep] samples: repeated samples of each trial
    exp_temperature: Key[float] = Key(0.7, kind=WIDGET)  # each model's temperature when samples > 1
    exp_seed: Key[int] = Key(0, kind=WIDGET)  # each model's seed when samples > 1 (sample i: seed + i)
    exp_judge: Key[bool] = Key(False, kind=WIDGET)  # metric = "judge": an LLM judge scores each answer
    exp_judge_model: Key[str] = Key("", kind=WIDGET)  # [sweep.judge] model, the sidebar's provider and key
    exp_fresh_name: Key[bool] = Key(False)  # the next run of the page gives the sweep a new name
    exp_max_usd: Key[float] = Key(1.0, kind=WIDGET)
    exp_concurrency: Key[int] = Key(4, kind=WIDGET)
    exp_run: Key[Any] = Key(kind=CONTROL)
    exp_resume: Key[Any] = Key(None, kind=WIDGET)  # a past sweep to resume
    exp_retry_errors: Key[bool] = Key(False, kind=WIDGET)
    exp_resume_go: Key[Any] = Key(kind=CONTROL)
    exp_config: Key[Any] = Key(None, kind=WIDGET)  # the sweep whose TOML and command are shown
    exp_cancel = Family(kind=CONTROL)  # exp_cancel_<job id>
    exp_dismiss = Family(kind=CONTROL)  # exp_dismiss_<job id>
    exp_toml = Family(kind=CONTROL)  # exp_toml_<where>: a download button of a sweep's TOML
    sweep_plan: Key[Any] = Key(None)  # a grid Compare's planner hands to Experiments (applied once there)

    # --- results ---
    res_sweeps: Key[list] = Key(list, kind=WIDGET)
    res_models: Key[list] = Key(list, kind=WIDGET)
    res_strategies: Key[list] = Key(list, kind=WIDGET)
    res_task_sets: Key[list] = Key(list, kind=WIDGET)
    res_metric: Key[Any] = Key(None, kind=WIDGET)
    res_u_axis: Key[Any] = Key(None, kind=WIDGET)
    res_u_series: Key[Any] = Key(None, kind=WIDGET)
    res_u_docs: Key[Any] = Key(None, kind=WIDGET)
    res_u_length: Key[Any] = Key(None, kind=WIDGET)
    res_u_overlay: Key[Any] = Key(None, kind=WIDGET)
    res_u_overlay_idx: Key[Any] = Key(None, kind=WIDGET)
    res_cost_measure: Key[Any] = Key(None, kind=WIDGET)
    res_cost_reference: Key[bool] = Key(True, kind=WIDGET)  # free trials priced at a reference model
    res_len_series: Key[Any] = Key(None, kind=WIDGET)
    res_trial: Key[Any] = Key(None, kind=WIDGET)
    res_trial_page: Key[int] = Key(1, kind=WIDGET)  # page of the trial table (results/page.py PAGE rows each)
    res_trial_table: Key[Any] = Key(kind=CONTROL)  # the trial table's row selection
    res_outcome: Key[str] = Key(
        "all", kind=WIDGET
    )  # the trial table shows all, right, wrong or failed trials
    res_sweep_table: Key[Any] = Key(
        kind=CONTROL
    )  # the sweeps list's row selection: that sweep becomes the filter
    res_sweep_keys: Key[list] = Key(list)  # the sweep keys of the sweeps list's rows, in order
    res_trial_keys: Key[list] = Key(list)  # the trial table's rows -> trial keys
    res_opened: Key[bool] = Key(False)  # the page has opened on the shipped LITM run once in this session
    res_note: Key[bool] = Key(False)  # show the note on what a small model shows
    res_import: Key[Any] = Key(kind=CONTROL)
    res_imported: Key[str] = Key("")  # the uploaded file already imported
    res_import_msg: Key[str] = Key("")
    res_download = Family(kind=CONTROL)  # res_download_<format>
    res_point_keys: Key[list] = Key(
        list
    )  # the trials of the curve point clicked on Results (their trial keys)
    res_point_table: Key[Any] = Key(kind=CONTROL)  # the clicked point's trial list: its row selection
    res_point_trial: Key[Any] = Key(None, kind=WIDGET)  # the clicked point's trial shown in detail
    res_grid_sweep: Key[Any] = Key(None, kind=WIDGET)  # the sweep of the trials x settings grid
    res_tab: Key[str] = Key(
        None, kind=WIDGET
    )  # Results' open tab: only its view is computed (st.tabs on_change)
    res_grid_page: Key[int] = Key(
        1, kind=WIDGET
    )  # page of the grid's tasks (results/research.py GRID_PAGE rows)
    res_grid_table: Key[Any] = Key(kind=CONTROL)  # the grid's cell selection
    res_report: Key[Any] = Key(kind=CONTROL)  # the one-file HTML report's download button
    res_seen: Key[Any] = Key(None)  # the run stores' versions the page last read (a change reruns it)
    res_auto_sweep: Key[str] = Key("")  # the sweep the page opened on by itself (followed to a newer one)

    # --- compare (also in its URL) ---
    cmp_sweeps: Key[Any] = Key(None, kind=WIDGET)
    cmp_sweeps_for: Key[Any] = Key(None)  # the sweeps the arm list was last chosen for
    cmp_arms: Key[Any] = Key(None, kind=WIDGET)  # None: the page's default arms
    cmp_length: Key[Any] = Key(None, kind=WIDGET)
    cmp_price_model: Key[Any] = Key(None, kind=WIDGET)
    cmp_batch: Key[bool] = Key(False, kind=WIDGET)
    cmp_pair: Key[Any] = Key(None, kind=WIDGET)
    cmp_u_overlay: Key[Any] = Key(None, kind=WIDGET)  # published curves over the arms' gold-index curves
    cmp_pair_for: Key[Any] = Key(None)  # the arms the pair was last defaulted for
    cmp_difference: Key[float] = Key(5.0, kind=WIDGET)
    cmp_margin: Key[float] = Key(
        5.0, kind=WIDGET
    )  # non-inferiority margin, points (report.verdict.DEFAULT_MARGIN)
    cmp_min_saving: Key[float] = Key(10.0, kind=WIDGET)  # minimum saving, % of cost (DEFAULT_MIN_SAVING)
    cmp_power: Key[float] = Key(0.8, kind=WIDGET)
    cmp_prices: Key[Any] = Key(None)  # the price table edited in this session (None: the shipped one)
    cmp_price_grid: Key[Any] = Key(kind=CONTROL)
    cmp_price_apply: Key[Any] = Key(kind=CONTROL)
    cmp_price_reset: Key[Any] = Key(kind=CONTROL)
    cmp_to_experiments: Key[Any] = Key(kind=CONTROL)
    cmp_report: Key[Any] = Key(kind=CONTROL)
    cmp_use_reference: Key[Any] = Key(kind=CONTROL)  # price every arm as the reference model

    # --- papers: papers_<paper>_view, papers_<paper>_<view>_<filter> ---
    papers = Family(None, kind=WIDGET)
    paper_run = Family(kind=CONTROL)  # paper_run_<experiment>: open its grid in Experiments

    # --- every chart: chart_<name> (ui/charts.py) ---
    chart = Family(kind=CONTROL)

    @classmethod
    def keys(cls) -> list[Key]:
        return [v for v in vars(cls).values() if isinstance(v, Key)]

    @classmethod
    def families(cls) -> list[Family]:
        return [v for v in vars(cls).values() if isinstance(v, Family)]

    @classmethod
    def declared(cls, name: str) -> bool:
        """Whether a session-state key is one of the app's (a Key, or a Family's)."""
        return any(k.key == name for k in cls.keys()) or any(f.owns(name) for f in cls.families())

    @classmethod
    def init(cls, **overrides: Any) -> None:
        """Set widget defaults once per session, and keep widget values across page switches
        (Streamlit drops a widget's value when a page without that widget runs)."""
        ss = st.session_state
        widget_families = [f for f in cls.families() if f.kind == WIDGET]
        for name in [n for n in ss if any(f.owns(str(n)) for f in widget_families)]:
            ss[name] = ss[name]
        for k in cls.keys():
            if k.kind != WIDGET:
                continue
            if k.key in ss:
                ss[k.key] = ss[k.key]
            else:
                ss[k.key] = overrides.get(k.key, k.initial())
