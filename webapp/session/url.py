"""A page's view in its URL (query parameters), so a link opens the same view in another browser.

`seed` puts the URL's values into the page's widget keys before the widgets are drawn (once per URL);
`write` puts the widgets' current values into the URL and returns the link to copy. A spec maps a
query parameter to (session key, is a list); values in `skip` (a page's "all"/"default" choices) are
left out of the URL."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st


def seed(page: str, spec: dict[str, tuple[str, bool]], convert: dict | None = None) -> None:
    qp = st.query_params
    present = {name: (qp.get_all(name) if many else qp.get(name)) for name, (_, many) in spec.items() if name in qp}
    if not present or st.session_state.get(f"_url_{page}") == present:
        return
    for name, value in present.items():
        fn = (convert or {}).get(name)
        if fn is not None:
            try:
                value = fn(value)
            except ValueError:
                continue
        st.session_state[spec[name][0]] = value
    st.session_state[f"_url_{page}"] = present


def write(page: str, spec: dict[str, tuple[str, bool]], skip: tuple = (), url_path: str = "") -> str:
    ss = st.session_state
    params: dict[str, object] = {}
    for name, (key, many) in spec.items():
        value = ss.get(key)
        if value in (None, "", [], False, *skip):
            continue
        params[name] = [str(v) for v in value] if many else ("1" if value is True else str(value))
    if "run" in st.query_params:  # a page's own token stays (Experiments)
        params["run"] = st.query_params["run"]
    st.query_params.from_dict(params)
    ss[f"_url_{page}"] = {n: v for n, v in params.items() if n in spec}
    try:
        base = str(st.context.url or "").split("?")[0]
    except Exception:  # noqa: BLE001 - no browser context (AppTest)
        base = ""
    return (base or f"/{url_path or page}") + ("?" + urlencode(params, doseq=True) if params else "")
