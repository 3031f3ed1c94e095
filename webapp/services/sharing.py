"""Who may see and who may control a sweep in the app: a classroom server is shared by many browsers.

- The *workspace* is the token in the page's URL (?run=...). A sweep started in the app is stored with
  owner "<workspace>.<browser>". Results and Experiments list the shipped runs, the runs without an
  owner (made with `litm` on the server's command line: the teacher's, shared with everyone) and the
  runs of this workspace (started or imported here). Whoever is given the link sees the same runs:
  sending the link shares the results, on purpose; nobody else sees them.
- The *browser key* is a secret only the creating browser holds: a hash of the per-browser cookie
  Streamlit sets for its XSRF protection (a browser sends it with every request; it is never part of a
  URL), or, where no such cookie exists, a random key of this session. Cancel and resume need the
  sweep's browser key: a link holder in another browser watches, and never controls.
"""

from __future__ import annotations

import hashlib
import re
import secrets

import streamlit as st

from webapp.services import jobs
from webapp.session.state import State

TOKEN_RE = re.compile(r"^[0-9a-f]{16}$")
COOKIE = "_streamlit_xsrf"
_FALLBACK = "_browser_key"  # session key used when the browser sends no cookie


def workspace() -> str:
    """This browser's workspace token, kept in the session and the URL (?run=) so that a refreshed page
    (a new session) finds its sweeps again."""
    state = State()
    given = st.query_params.get("run", "")
    if not state.sweep_owner:
        state.sweep_owner = given if TOKEN_RE.match(given or "") else jobs.new_owner()
    if given != state.sweep_owner:
        st.query_params["run"] = state.sweep_owner
    return state.sweep_owner


def _cookie() -> str:
    try:
        return str(st.context.cookies.get(COOKIE) or "")
    except Exception:  # noqa: BLE001 - no browser (bare mode, AppTest)
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
    ss = st.session_state
    if not ss.get(_FALLBACK):
        ss[_FALLBACK] = secrets.token_hex(8)
    return ss[_FALLBACK]


def owner_tag() -> str:
    """What the store records as a sweep's owner when this browser starts or imports it."""
    return f"{workspace()}.{browser_key()}"


def visible(owner, ws: str) -> bool:
    """Whether a sweep with this stored owner is listed for workspace `ws`."""
    if owner is None or owner != owner or not str(owner):  # None, NaN, "": the command line's runs
        return True
    return str(owner).split(".")[0] == ws


def controls(owner) -> bool:
    """Whether this browser may resume a stored sweep with this owner."""
    return isinstance(owner, str) and owner == owner_tag()
