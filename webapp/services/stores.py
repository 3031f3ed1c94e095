"""The run stores the pages read: the user's (shared with `litm`) and the shipped ones (read-only), loaded
once per change of their files and combined with readable sweep labels; a few rows' texts fetched on
demand; exports and imports.

Who sees which sweep of the user's store is decided by a Viewer (services/sharing.py makes it): the
command line's sweeps (no owner), the sweeps of this workspace (the URL's ?run= token) and the sweeps
this browser started, never another browser's."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from components.report.sweeps import combine_stores
from components.run.reader import store_version
from webapp.services import views

USER_LABEL = "your runs"  # the user's store, as sweep keys name it ("your runs#3")


@dataclass(frozen=True)
class Viewer:
    """Who is looking: the workspace token (?run=) and this browser's secret key."""

    workspace: str
    browser: str = ""

    def sees(self, owner) -> bool:
        """A sweep with this stored owner ("<workspace>.<browser>", or none for the command line's)."""
        if owner is None or owner != owner or not str(owner):  # None, NaN, "": the command line's runs
            return True
        ws, _, browser = str(owner).partition(".")
        return ws == self.workspace or bool(self.browser and browser == self.browser)

    def controls(self, owner) -> bool:
        """Whether this browser started the sweep (and so may cancel or resume it)."""
        return isinstance(owner, str) and bool(self.browser) and owner.partition(".")[2] == self.browser


def user_db() -> Path:
    """The run store the app and `litm` share (components.run.store.default_path)."""
    from components.run.store import default_path

    return default_path()


def sources() -> list[tuple[str, bool, Path]]:
    """(label, shipped, path) of every store to read."""
    from components.run.store import store_paths

    return [(f"shipped {p.stem}" if shipped else USER_LABEL, shipped, p) for shipped, p in store_paths()]


@st.cache_resource(show_spinner=False, max_entries=16)
def _labelled(
    label: str, shipped: bool, path: str, version: tuple
) -> tuple[pd.DataFrame, pd.DataFrame, tuple]:
    """One store's trials and sweeps, labelled (components.report.sweeps.combine_stores), once per server
    process and version of its file: every visitor of a classroom reads the same shipped runs, so no
    session reads, copies or labels them again. Callers get shallow copies (`load_all`): with pandas'
    copy-on-write a caller's change never reaches the kept frames. Third: each sweep's stored owner, in
    the labelled sweeps' order (the labels leave it out)."""
    from components.run.reader import browse_kept

    trials, sweeps = browse_kept(path, version, shipped)
    owner = (
        dict(zip(sweeps["id"], sweeps["owner"], strict=True)) if "owner" in sweeps and "id" in sweeps else {}
    )
    trials, labelled = combine_stores([(label, shipped, path, trials, sweeps)])
    return trials, labelled, tuple(owner.get(i) for i in labelled["sweep_id"])


@st.cache_resource(show_spinner=False, max_entries=4)
def _shipped(key: tuple) -> tuple[pd.DataFrame, pd.DataFrame, tuple[str, ...]]:
    """Every shipped store combined, once per server process and version of their files: `key` is
    ((label, path, version), ...) in the order of `sources()`."""
    parts, problems = [], []
    for label, path, version in key:
        try:
            parts.append(_labelled(label, True, path, version)[:2])
        except Exception as exc:  # a broken file must not hide the others
            problems.append(_problem(Path(path), exc))
    return _concat(parts) + (tuple(problems),)


def _problem(path: Path, exc: Exception) -> str:
    return f"{path.name}: {type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"


def _concat(parts: list[tuple[pd.DataFrame, pd.DataFrame]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    if not parts:
        return combine_stores([])
    if len(parts) == 1:
        return parts[0]
    return (
        pd.concat([t for t, _ in parts], ignore_index=True),
        pd.concat([s for _, s in parts], ignore_index=True),
    )


SETTLE_S = 60  # a user's store unchanged this long is not being written by a sweep


def _settled(version: tuple) -> bool:
    """Whether a store of this version (store_version: mtime and size of the file and its WAL) has not
    changed for SETTLE_S seconds."""
    import time

    newest = max((v[0] for v in version if v), default=0)
    return time.time_ns() - newest > SETTLE_S * 1_000_000_000


def _shipped_key(found: list[tuple[str, bool, Path]]) -> tuple:
    return tuple((label, str(path), store_version(path)) for label, shipped, path in found if shipped)


def preload() -> None:
    """Read and label every store once (the server's warm-up thread); a broken one is left for the page
    to report."""
    found = sources()
    _shipped(_shipped_key(found))
    for label, shipped, path in found:
        if not shipped:
            try:
                _labelled(label, shipped, str(path), store_version(path))
            except Exception:  # the Results page says what is wrong with it
                continue


def load_all(viewer: Viewer) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(trials, sweeps, problems): a store that cannot be read is a problem line, the others still load.
    The user's store shows only the sweeps the viewer may see. The shipped stores are combined once per
    server process (`_shipped`); a session adds only what it sees of the user's store."""
    found = sources()
    key = _shipped_key(found)
    shipped_trials, shipped_sweeps, shipped_problems = _shipped(key)
    problems = list(shipped_problems)
    mine: tuple[pd.DataFrame, pd.DataFrame] | None = None
    for label, shipped, path in found:
        if shipped:
            continue
        version = store_version(path)
        try:
            trials, sweeps, owners = _labelled(label, False, str(path), version)
        except Exception as exc:  # a broken file must not hide the others
            problems.insert(0, _problem(path, exc))
            continue
        if not sweeps.empty:
            sweeps = sweeps[[viewer.sees(o) for o in owners]]
            trials = trials[trials["sweep_id"].isin(set(sweeps["sweep_id"]))]
            if not sweeps.empty:
                mine = (trials, sweeps)
                mine_key = (str(path), version, tuple(int(i) for i in sweeps["sweep_id"]))
    if mine is None:  # the usual visitor: the shipped runs only, shared, never copied
        trials, sweeps = shipped_trials.copy(deep=False), shipped_sweeps.copy(deep=False)
    else:
        trials, sweeps = _concat([mine, (shipped_trials, shipped_sweeps)])  # the user's store first
        key = (key, mine_key)
    settled = mine is None or _settled(mine_key[1])
    views.stamp(trials, ("runs", key), settled)  # services/views.py: what is computed from them is kept by it
    views.stamp(sweeps, ("sweeps", key), settled)
    return trials, sweeps, problems


@st.cache_data(show_spinner=False, max_entries=8)
def _sweeps_of(path: str, version: tuple) -> pd.DataFrame:
    from components.run.store import RunStore

    store = RunStore(path, readonly=True)
    try:
        return store.sweeps_frame()
    finally:
        store.close()


def user_sweeps() -> pd.DataFrame:
    """Every sweep of the user's store (id, name, config, status, totals, owner, created), unfiltered, read
    from its sweeps table alone (cheap on every page): for the pages that decide themselves what to list
    (Experiments' past sweeps, the sidebar's "your sweeps")."""
    db = user_db()
    if not db.exists():
        return pd.DataFrame()
    try:
        return _sweeps_of(str(db), store_version(db))
    except Exception:  # the Results page reports a broken store
        return pd.DataFrame()


def sweep_key(sweep_id) -> str:
    """The key a sweep of the user's store has on Results and Compare (and in their URLs: ?sweep=)."""
    return f"{USER_LABEL}#{sweep_id}"


def with_trials(sweeps: pd.DataFrame, trials: pd.DataFrame) -> list[str]:
    """The sweep keys, in the sweeps' order, that have trials here (the Sweeps filter of Results and
    Compare): the trials' distinct keys looked up once, not a scan per sweep."""
    present = set(trials["sweep_key"].unique())
    return [k for k in sweeps["sweep_key"] if k in present]


@views.kept
def whole(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of `df` (a few: a page, a drill-down, failures) with every stored column: questions,
    answers, page lists, from their stores; the columns `df` has of its own (store, labels) kept."""
    if df.empty:
        return df.copy()
    found: dict[tuple[str, int], dict] = {}
    for (path, shipped), part in df.groupby(["store_path", "shipped"], sort=False):
        for row in _texts(
            path, store_version(Path(path)), bool(shipped), tuple(int(i) for i in part["trial_id"])
        ):
            found[(path, int(row["trial_id"]))] = row
    rows = []
    for r in df.to_dict("records"):
        full = found.get((r["store_path"], int(r["trial_id"])), {})
        rows.append({**full, **r})
    return pd.DataFrame(rows, index=df.index)


@st.cache_resource(show_spinner=False, max_entries=64)
def _texts(path: str, version: tuple, readonly: bool, ids: tuple[int, ...]) -> list[dict]:
    """Whole trials (components.run.reader.whole_trials) once per server process, store version and set of
    trials: every student opening Results sees the same first page of the trial table. The rows are only
    read (`whole` makes new ones)."""
    from components.run.reader import whole_trials

    return whole_trials(path, list(ids), readonly=readonly)


def export(df: pd.DataFrame, fmt: str) -> bytes:
    """The trials of `df` with every stored column (texts read from their stores) as a csv, jsonl or
    parquet file; the app's own bookkeeping columns left out."""
    from components.run.store_io import frame_bytes

    full = whole.uncached(df)  # made on click, for one user: not kept
    return frame_bytes(
        full.drop(columns=[c for c in ("store_path", "sweep_key", "shipped") if c in full]), fmt
    )


def calls_of(path: str, trial_id: int, readonly: bool) -> list[dict]:
    """A trial's stored calls, read once per store version (every student opening Results sees the same
    first trial's details)."""
    return _calls(str(path), store_version(Path(path)), int(trial_id))


@views.kept
def _calls(path: str, version: tuple, trial_id: int) -> list[dict]:
    from components.run.store import RunStore

    store = RunStore(path, readonly=True)  # reading never writes (`readonly` kept for the callers)
    try:
        return store.calls_for_trial(trial_id)
    finally:
        store.close()


def import_file(name: str, data: bytes, owner: str) -> tuple[int, int]:
    """Trials someone exported (csv, jsonl, parquet) into the user's store, owned by `owner`:
    (trials, sweeps) added."""
    import tempfile

    from components.run.store import RunStore

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"import{Path(name).suffix.lower()}"
        path.write_bytes(data)
        store = RunStore(user_db())
        try:
            ids = store.import_trials(path, owner=owner)
            return sum(len(store.trial_totals(i)) for i in ids), len(ids)  # counted, not read back
        finally:
            store.close()
