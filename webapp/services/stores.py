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
from components.run.reader import stamp

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


@st.cache_data(show_spinner=False, max_entries=32)
def load_store(path: str, version: tuple, readonly: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The summary columns of a store's trials, and its sweeps (components.run.reader.browse): a store
    of 100k trials loads in about a second; texts are fetched for the rows shown (`whole`). Read through
    `browse_kept`, which the server may already have filled while it started (webapp/serve.py)."""
    from components.run.reader import browse_kept

    return browse_kept(path, version, readonly)


def sources() -> list[tuple[str, bool, Path]]:
    """(label, shipped, path) of every store to read."""
    from components.run.store import store_paths

    return [(f"shipped {p.stem}" if shipped else USER_LABEL, shipped, p) for shipped, p in store_paths()]


def preload() -> None:
    """Read every store into the page cache (the server's warm-up thread); a broken one is left for the
    page to report."""
    for _label, shipped, path in sources():
        try:
            load_store(str(path), stamp(path), shipped)
        except Exception:  # noqa: BLE001, S112 - the Results page says what is wrong with it
            continue


def load_all(viewer: Viewer) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(trials, sweeps, problems): a store that cannot be read is a problem line, the others still load.
    The user's store shows only the sweeps the viewer may see."""
    loaded, problems = [], []
    for label, shipped, path in sources():
        try:
            trials, sweeps = load_store(str(path), stamp(path), shipped)
        except Exception as exc:  # noqa: BLE001 - a broken file must not hide the others
            problems.append(f"{path.name}: {type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}")
            continue
        if not shipped and not sweeps.empty and "owner" in sweeps:
            sweeps = sweeps[[viewer.sees(o) for o in sweeps["owner"]]]
            trials = trials[trials["sweep_id"].isin(set(sweeps["id"]))]
        loaded.append((label, shipped, str(path), trials, sweeps))
    trials, sweeps = combine_stores(loaded)
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
        return _sweeps_of(str(db), stamp(db))
    except Exception:  # noqa: BLE001 - the Results page reports a broken store
        return pd.DataFrame()


def sweep_key(sweep_id) -> str:
    """The key a sweep of the user's store has on Results and Compare (and in their URLs: ?sweep=)."""
    return f"{USER_LABEL}#{sweep_id}"


def with_trials(sweeps: pd.DataFrame, trials: pd.DataFrame) -> list[str]:
    """The sweep keys, in the sweeps' order, that have trials here (the Sweeps filter of Results and
    Compare): the trials' distinct keys looked up once, not a scan per sweep."""
    present = set(trials["sweep_key"].unique())
    return [k for k in sweeps["sweep_key"] if k in present]


def whole(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of `df` (a few: a page, a drill-down, failures) with every stored column: questions,
    answers, page lists, from their stores; the columns `df` has of its own (store, labels) kept."""
    from components.run.reader import whole_trials

    if df.empty:
        return df.copy()
    found: dict[tuple[str, int], dict] = {}
    for (path, shipped), part in df.groupby(["store_path", "shipped"], sort=False):
        for row in whole_trials(path, part["trial_id"], readonly=bool(shipped)):
            found[(path, int(row["trial_id"]))] = row
    rows = []
    for r in df.to_dict("records"):
        full = found.get((r["store_path"], int(r["trial_id"])), {})
        rows.append({**full, **r})
    return pd.DataFrame(rows, index=df.index)


def export(df: pd.DataFrame, fmt: str) -> bytes:
    """The trials of `df` with every stored column (texts read from their stores) as a csv, jsonl or
    parquet file; the app's own bookkeeping columns left out."""
    from components.run.store_io import frame_bytes

    full = whole(df)
    return frame_bytes(full.drop(columns=[c for c in ("store_path", "sweep_key", "shipped") if c in full]), fmt)


def calls_of(path: str, trial_id: int, readonly: bool) -> list[dict]:
    from components.run.store import RunStore

    store = RunStore(path, readonly=True)  # reading never writes (`readonly` kept for the callers)
    try:
        return store.calls_for_trial(int(trial_id))
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
            return sum(len(store.trials_frame(i)) for i in ids), len(ids)
        finally:
            store.close()
