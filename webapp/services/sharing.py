"""Who may see and who may control a sweep in the app: a classroom server is shared by many browsers.

- The *browser key* is a secret only the creating browser holds: a hash of the per-browser cookie
  Streamlit sets for its XSRF protection (a browser sends it with every request; it is never part of a
  URL), or, where no such cookie exists, a random key of this session.
- The *workspace* is a token in the page's URL (?run=...). A sweep started in the app is stored with
  owner "<workspace>.<browser>". Results, Compare and Experiments list the shipped runs, the runs
  without an owner (made with `litm` on the server's command line: the teacher's, shared with
  everyone), the runs of this workspace (started or imported here), and every run this browser
  started, whatever tab or link it was started from. A new tab of the same browser takes up the
  browser's latest workspace, so `/compare` opened without the link shows one's own sweeps.
- Whoever is given the link sees the same runs (sending it shares the results, on purpose) and
  watches, never controls: cancel and resume need the sweep's browser key.
"""

from __future__ import annotations

import hashlib
import secrets

import pandas as pd
import streamlit as st

from webapp.services import jobs, stores
from webapp.session import State, url

COOKIE = "_streamlit_xsrf"


def _cookie() -> str:
    try:
        return str(st.context.cookies.get(COOKIE) or "")
    except Exception:  # no browser (bare mode, AppTest)
        return ""


def _unmask(cookie: str) -> bytes:
    """The stable token inside Streamlit's XSRF cookie. The cookie is re-masked on every response
    ("2|mask|masked token|time", the double-submit format Tornado introduced); the token is not."""
    parts = cookie.strip("\"'").split("|")
    try:
        if len(parts) == 4 and parts[0] == "2":
            mask, masked = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
            return bytes(b ^ mask[i % len(mask)] for i, b in enumerate(masked))
    except ValueError:
        pass
    return cookie.encode()


def browser_key() -> str:
    """A key only this browser can present (see the module text)."""
    cookie = _cookie()
    if cookie:
        return hashlib.sha256(b"litm-browser:" + _unmask(cookie)).hexdigest()[:16]
    state = State()
    if not state.browser_key:
        state.browser_key = secrets.token_hex(8)
    return state.browser_key


def latest_workspace(browser: str) -> str:
    """The workspace of this browser's latest sweep (running in this server, or in the user's store),
    or ''."""
    found: list[tuple[float, str]] = [
        (j.started, j.owner) for j in jobs.every_job() if j.controller == browser
    ]
    sweeps = stores.user_sweeps()
    if not sweeps.empty and "owner" in sweeps:
        for owner, created in zip(sweeps["owner"], sweeps["created"], strict=True):
            if isinstance(owner, str) and owner.partition(".")[2] == browser:
                found.append((float(created or 0), owner.partition(".")[0]))
    found = [f for f in found if url.TOKEN_RE.match(f[1] or "")]
    return max(found)[1] if found else ""


def workspace(in_url: bool = True) -> str:
    """This browser's workspace token, kept in the session and (on the pages of sweeps) the URL (?run=)
    so that a refreshed page (a new session) finds its sweeps again; a new tab takes up the browser's
    latest one."""
    state = State()
    if not state.sweep_owner:
        state.sweep_owner = latest_workspace(browser_key()) or jobs.new_owner()
    if in_url:
        url.keep_token(state.sweep_owner)
    return state.sweep_owner


def viewer(in_url: bool = True) -> stores.Viewer:
    return stores.Viewer(workspace(in_url), browser_key())


def owner_tag() -> str:
    """What the store records as a sweep's owner when this browser starts or imports it."""
    return f"{workspace()}.{browser_key()}"


def load_runs(in_url: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Every store's trials and sweeps this browser may see (services.stores.load_all)."""
    return stores.load_all(viewer(in_url))


def my_sweeps(in_url: bool = False) -> pd.DataFrame:
    """The sweeps of the user's store that this browser started or that belong to this workspace (not
    the command line's), newest first: id, name, status, created, owner, totals."""
    raw = stores.user_sweeps()
    if raw.empty or "owner" not in raw:
        return raw
    me = viewer(in_url)
    mine = raw[[isinstance(o, str) and bool(o) and me.sees(o) for o in raw["owner"]]]
    return mine.sort_values("created", ascending=False)
