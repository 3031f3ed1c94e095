"""A Streamlit client without a browser: one session over the server's websocket (`/_stcore/stream`),
speaking the protobuf messages the browser speaks (streamlit/proto: BackMsg up, ForwardMsg down).

What the browser does, and so what this does:
- it opens the websocket with the subprotocol "streamlit" (the browser's second and third entries,
  an XSRF token and a session id to resume, are left out: a new session without a login needs
  neither, and a client that sends no Origin header passes the server's origin check);
- it asks for a page with a `rerun_script` BackMsg: a ClientState carrying the page's url path in
  `page_name` when a URL is opened (the first page of a session), or the page's `page_script_hash`
  (from the app's `navigation` ForwardMsg) when a link in the sidebar is clicked, with the query
  string and the browser's context (time zone, locale, URL);
- it renders the ForwardMsgs until `script_finished` says the run is over. FINISHED_EARLY_FOR_RERUN
  is not the end: the script asked for another run (st.rerun) and the next one follows.

A visit counts as an error: an exception element (a traceback the app let through), an error alert
(`st.error`, the app's "Something went wrong in ..." line among them), a script that did not compile,
a page the app does not have (`page_not_found`), a closed connection or no end within the timeout.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

DONE = {ForwardMsg.FINISHED_SUCCESSFULLY: "ok", ForwardMsg.FINISHED_WITH_COMPILE_ERROR: "compile error"}
ERROR_ALERT = 1  # Alert.Format.ERROR


@dataclass
class Visit:
    """One page asked for and rendered: seconds from asking to script_finished, what came back."""

    page: str
    seconds: float = float("nan")
    status: str = "not finished"
    messages: int = 0
    elements: int = 0
    bytes: int = 0
    errors: list[str] = field(default_factory=list)
    ran: str = ""  # the page script hash the app ran (its navigation message says)

    @property
    def ok(self) -> bool:
        return self.status == "ok" and not self.errors


def stream_url(base: str) -> str:
    """http://host:port[/base] -> ws://host:port[/base]/_stcore/stream"""
    return base.rstrip("/").replace("https://", "wss://").replace("http://", "ws://") + "/_stcore/stream"


def read(msg: ForwardMsg, visit: Visit) -> tuple[bool, list]:
    """Take one ForwardMsg into the visit. Returns (the run is over, the app's pages when the message
    is its navigation)."""
    kind = msg.WhichOneof("type")
    visit.messages += 1
    if kind == "delta":
        delta = msg.delta
        if delta.WhichOneof("type") == "new_element":
            visit.elements += 1
            element = delta.new_element
            which = element.WhichOneof("type")
            if which == "exception":
                visit.errors.append(f"exception {element.exception.type}: {element.exception.message[:160]}")
            elif which == "alert" and element.alert.format == ERROR_ALERT:
                visit.errors.append(f"error alert: {element.alert.body[:160]}")
        return False, []
    if kind == "navigation":
        visit.ran = msg.navigation.page_script_hash
        return False, list(msg.navigation.app_pages)
    if kind == "page_not_found":
        visit.errors.append(f"page not found: {msg.page_not_found.page_name or visit.page!r}")
        return False, []
    if kind == "session_event" and msg.session_event.WhichOneof("type") == "script_compilation_exception":
        exc = msg.session_event.script_compilation_exception
        visit.errors.append(f"script did not compile: {exc.type}: {exc.message[:160]}")
        return False, []
    if kind == "script_finished" and msg.script_finished in DONE:
        visit.status = DONE[msg.script_finished]
        if visit.status != "ok":
            visit.errors.append(f"script finished with {visit.status}")
        return True, []
    return False, []


class Session:
    """One simulated browser tab: `async with Session(url) as s: await s.visit("lesson")`.

    A page is named by its url path; "" is the default page (the app's root URL), which can also be
    named by its title in lower case ("home" for a default page titled Home). The first visit of a
    session opens a URL; later ones click the page's link, as a student does."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 300.0,
        query: str = "",
        app: tuple[dict[str, str], dict[str, str]] | None = None,
    ):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.query = query
        pages, paths = app or ({}, {})
        self.pages: dict[str, str] = dict(pages)  # page name -> page script hash (the app's navigation)
        self.paths: dict[str, str] = dict(paths)  # page script hash -> url path
        self.ws = None
        self.visits = 0

    async def __aenter__(self) -> Session:
        # No keep-alive pings: a browser sends none, and a busy server would be dropped for a late pong.
        self.ws = await websockets.connect(
            stream_url(self.base_url),
            subprotocols=["streamlit"],
            max_size=None,
            ping_interval=None,
            open_timeout=self.timeout,
        )
        return self

    async def __aexit__(self, *exc) -> None:
        if self.ws is not None:
            await self.ws.close()

    def learn(self, app_pages: list) -> None:
        for p in app_pages:
            self.pages[p.url_pathname] = p.page_script_hash
            self.paths[p.page_script_hash] = p.url_pathname
            if p.is_default:
                self.pages[""] = p.page_script_hash
                self.paths[p.page_script_hash] = ""
                self.pages.setdefault(p.page_name.lower(), p.page_script_hash)

    @property
    def app(self) -> tuple[dict[str, str], dict[str, str]]:
        """The app's pages as this session learnt them, for another session: Session(url, app=s.app)."""
        return self.pages, self.paths

    def url_path(self, page: str) -> str:
        return self.paths.get(self.pages.get(page, ""), page) if page in self.pages else page

    def rerun_message(self, page: str) -> BackMsg:
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query
        path = self.url_path(page)
        if self.visits and page in self.pages:  # a click on the page's link
            state.page_script_hash = self.pages[page]
        else:  # a URL opened
            state.page_name = path
        info = state.context_info
        info.timezone, info.timezone_offset, info.locale = "UTC", 0, "en-US"
        info.url = f"{self.base_url}/{path}" + (f"?{self.query}" if self.query else "")
        info.is_embedded = False
        return msg

    async def visit(self, page: str) -> Visit:
        """Ask for a page and read the messages until its script has finished."""
        out = Visit(page)
        t0 = time.perf_counter()
        try:
            await self.ws.send(self.rerun_message(page).SerializeToString())
            self.visits += 1
            async with asyncio.timeout(self.timeout):
                while True:
                    data = await self.ws.recv()
                    out.bytes += len(data)
                    msg = ForwardMsg()
                    msg.ParseFromString(data)
                    done, app_pages = read(msg, out)
                    self.learn(app_pages)
                    if done:
                        out.seconds = time.perf_counter() - t0
                        break
        except TimeoutError:
            out.errors.append(f"no script_finished within {self.timeout:.0f} s")
        except websockets.ConnectionClosed as exc:
            out.errors.append(f"connection closed: {exc}")
        want = self.pages.get(page)
        if out.status == "ok" and want and out.ran != want:
            out.errors.append(f"asked for page {page!r}, the app ran another ({out.ran})")
        return out
