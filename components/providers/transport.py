"""The HTTP transport under both SDKs' clients: a deadline for a whole request, and a cap on one answer.

- **Deadline.** httpx's timeout is per read: a server that sends one byte every 2 s never trips a 5 s
  timeout, and a sweep waited forever. Here the whole exchange (connecting, the headers, every byte of
  the body) must end within `deadline_s` (the model's `timeout`, else DEFAULT_DEADLINE); past it the
  request fails as a timeout (httpx ReadTimeout: the SDK retries it as it retries any timeout).
- **Answer size.** The body is unpacked here (gzip or deflate, the encodings this transport asks for),
  and more than `max_bytes` of it (answers.MAX_ANSWER_BYTES) ends the request as a bad answer, without
  holding more: a 50 MB answer, or 1 MB of gzip that unpacks to 1 GB, never reaches the JSON parser.
  A body whose encoding is broken, or one not asked for, is a bad answer too.
- **All answers at once.** Bodies being read hold at most HELD_BUDGET bytes in all, across every request
  and event loop of the process: past it, a body waits for others to finish before reading on (the body
  holding the most always goes on, so they never all wait). 32 requests of 50 MB answers peaked at 1.4 GB
  without it.
- **Redirects stay on the base URL's origin.** The SDKs' clients follow redirects; a 3xx whose Location
  leads to another origin (scheme, host or port differ: the prompt would go to a server nobody chose, and
  its answer be cached) is refused as a bad answer naming where it pointed, before it is followed. A
  redirect loop ends after MAX_REDIRECTS (providers name it a loop, not a lost connection).
- A batch upload or results download (a request carrying BULK_HEADER, which is not sent) has no size
  cap (results are read line by line, each line capped: providers/batches.py) and a deadline of at
  least an hour.

A bad answer raises the SDK's own error class (a subclass made per SDK, with `litm_kind =
"bad_response"`): the SDKs re-raise their own errors as they are, without retrying or wrapping them,
and providers' map_error turns it into BadResponse.
"""

from __future__ import annotations

import asyncio
import threading
import zlib

DEFAULT_DEADLINE = 600.0  # seconds for a whole request when the model sets no timeout (the SDKs' default)
BULK_DEADLINE = 3600.0  # at least this for a batch upload or results download
BULK_HEADER = "x-litm-bulk"  # marks a batch upload or download; removed before the request is sent
ENCODINGS = {"gzip": 47, "x-gzip": 47, "deflate": 47}  # zlib wbits: 32 + 15 reads a gzip or zlib header
PIECE = 1024 * 1024  # bytes unpacked at a time
MAX_REDIRECTS = 20  # redirects one request may follow (httpx's default, set explicitly): more is a loop
REDIRECTS = (301, 302, 303, 307, 308)
HELD_BUDGET = 256 * 1024 * 1024  # bytes all the bodies being read may hold at once (this process)
_HELD: dict[int, int] = {}  # id of a body being read -> bytes it holds
_HELD_LOCK = threading.Lock()


def bad_answer_error(sdk_base: type[Exception]) -> type[Exception]:
    """The exception class a bad answer raises under an SDK whose errors derive from sdk_base."""
    return type("BadAnswer", (sdk_base,), {"litm_kind": "bad_response"})


def _origin(url) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, (url.host or "").lower(), url.port or default


def _other_origin(httpx, url, location: str) -> str:
    """'' when `location` (a redirect's, relative or absolute) stays on url's origin, else why it is refused."""
    try:
        target = url.join(location)
    except (httpx.InvalidURL, ValueError, TypeError):
        return f"the server redirected the request to an address that cannot be read ({location[:80]!r}): refused"
    if _origin(target) == _origin(url):
        return ""
    where = f"{target.scheme}://{target.host}" + (f":{target.port}" if target.port else "")
    if target.scheme not in ("http", "https"):
        return (
            f"the server redirected the request to an address that is not http or https ({target.scheme}://): "
            "refused"
        )
    return (
        f"the server redirected the request to another origin ({where}, not {url.scheme}://{url.host}"
        + (f":{url.port}" if url.port else "")
        + "): refused; if the model lives there, make it the base_url"
    )


def make_transport(httpx, limits, *, deadline_s: float | None, max_bytes: int, error: type[Exception]):
    """httpx's own async transport (with these pool limits) wrapped by the deadline and the size cap."""
    Body = body_type(httpx, error)

    class BoundedTransport(httpx.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = httpx.AsyncHTTPTransport(limits=limits)

        async def handle_async_request(self, request):
            bulk = request.headers.get(BULK_HEADER) is not None
            if bulk:
                del request.headers[BULK_HEADER]
            deadline = float(deadline_s or DEFAULT_DEADLINE)
            if bulk:
                deadline = max(deadline, BULK_DEADLINE)
            request.headers["Accept-Encoding"] = ", ".join(e for e in ENCODINGS if e != "x-gzip")
            end = asyncio.get_running_loop().time() + deadline
            try:
                async with asyncio.timeout_at(end):
                    response = await self.inner.handle_async_request(request)
            except TimeoutError:
                raise httpx.ReadTimeout(
                    f"no complete answer within {deadline:g} s", request=request
                ) from None
            if response.status_code in REDIRECTS and "location" in response.headers:
                elsewhere = _other_origin(httpx, request.url, response.headers["location"])
                if elsewhere:
                    await response.aclose()
                    raise error(elsewhere)
            coding = response.headers.get("content-encoding", "").strip().lower()
            if coding not in ("", "identity") and coding not in ENCODINGS:
                await response.aclose()
                raise error(f"the answer is encoded as {coding[:40]!r}, which was not asked for")
            headers = response.headers
            if coding not in ("", "identity"):
                headers = [
                    (k, v)
                    for k, v in headers.multi_items()
                    if k.lower() not in ("content-encoding", "content-length")
                ]
            body = Body(response.stream, end, deadline, None if bulk else max_bytes, coding)
            return httpx.Response(
                response.status_code,
                headers=headers,
                stream=body,
                extensions=response.extensions,
                request=request,
            )

        async def aclose(self) -> None:
            await self.inner.aclose()

    return BoundedTransport()


def body_type(httpx, error: type[Exception]):
    """The class of a response body read within the deadline and the size cap, unpacked (httpx is the
    SDK's module: the class derives from its AsyncByteStream)."""

    class Body(httpx.AsyncByteStream):
        """The response body, unpacked, within the deadline and the size cap."""

        def __init__(self, inner, end: float, deadline: float, cap: int | None, coding: str):
            self.inner, self.end, self.deadline, self.cap = inner, end, deadline, cap
            self.unpack = zlib.decompressobj(ENCODINGS[coding]) if coding in ENCODINGS else None

        async def _next(self, it):
            try:
                async with asyncio.timeout_at(self.end):
                    return await it.__anext__()
            except TimeoutError:
                raise httpx.ReadTimeout(f"no complete answer within {self.deadline:g} s") from None

        def _too_large(self) -> Exception:
            return error(
                f"the answer is larger than {(self.cap or 0) // 2**20} MB, the most one answer may be"
            )

        async def __aiter__(self):
            n = 0
            it = self.inner.__aiter__()
            try:
                while True:
                    try:
                        chunk = await self._next(it)
                    except StopAsyncIteration:
                        break
                    pieces = [chunk] if self.unpack is None else self._unpacked(chunk, n)
                    for piece in pieces:
                        n += len(piece)
                        if self.cap is not None and n > self.cap:
                            raise self._too_large()
                        if piece:
                            if self.cap is not None:  # an answer (not a bulk download, read line by line)
                                await self._hold(len(piece))
                            yield piece
                if self.unpack is not None and not self.unpack.eof:
                    raise error("the answer's gzip or deflate encoding ends before its end")
            finally:
                with _HELD_LOCK:
                    _HELD.pop(id(self), None)

        async def _hold(self, n: int) -> None:
            """Count n more bytes held by this body; wait while all bodies hold HELD_BUDGET, unless this
            one holds the most (it goes on, so that bodies never all wait for each other)."""
            loop = asyncio.get_running_loop()
            while True:
                with _HELD_LOCK:
                    mine = _HELD.get(id(self), 0)
                    if sum(_HELD.values()) + n <= HELD_BUDGET or mine >= max(_HELD.values(), default=0):
                        _HELD[id(self)] = mine + n
                        return
                if loop.time() > self.end:
                    raise httpx.ReadTimeout(f"no complete answer within {self.deadline:g} s")
                await asyncio.sleep(0.01)

        def _unpacked(self, chunk: bytes, n: int):
            """Pieces of unpacked bytes, never more than one past the cap in all."""
            data, unpack = chunk, self.unpack
            assert unpack is not None  # called only for an encoded answer
            while data and not unpack.eof:
                room = PIECE if self.cap is None else max(1, min(PIECE, self.cap + 1 - n))
                try:
                    piece = unpack.decompress(data, room)
                except zlib.error as exc:
                    raise error(f"the answer's gzip or deflate encoding is broken ({exc})") from None
                data = unpack.unconsumed_tail
                n += len(piece)
                yield piece
                if self.cap is not None and n > self.cap:
                    return

        async def aclose(self) -> None:
            with _HELD_LOCK:
                _HELD.pop(id(self), None)
            await self.inner.aclose()

    return Body
