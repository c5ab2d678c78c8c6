"""One HTTP client for every network call rageval makes (built on ``httpx``).

The OpenAI-compatible reader and the LLM judge use it (through :class:`LazyClient`);
a service served by several endpoints (replicas) goes through :class:`EndpointPool`,
one client per endpoint.  The API is small::

    client = HttpClient("http://127.0.0.1:8000/v1", api_key=None, timeout=60.0, max_retries=3)
    data = client.post_json("chat/completions", {"model": "m", "messages": [...]})  # decoded JSON
    client.close()                                                                 # or: with HttpClient(...) as c

It is thread-safe: a reader may call :meth:`HttpClient.post_json` from
``max_connections`` threads at once (the connection pool holds at most that many).
See docs/readers.md (the ``openai`` reader) for how its failures become records.

Guarantees
----------
* **A total deadline per attempt.**  ``timeout`` bounds one attempt as a whole —
  connecting, sending, the status line, the headers and the body — not each read:
  a server that drips one byte every 0.8 s cannot hold an attempt with
  ``timeout=1`` past about one second (the attempt is cancelled at its deadline and
  its connection closed).  A whole :meth:`~HttpClient.post_json` call therefore
  ends within ``(max_retries + 1) * timeout`` plus the waits between attempts, each
  at most ``max_backoff`` seconds.
* **Transient failures are retried** up to ``max_retries`` times, waiting
  ``backoff * 2**attempt`` seconds (at most ``max_backoff``): refused or reset
  connections, timeouts, protocol errors (a broken status line, a body shorter than
  its ``Content-Length``), a 2xx body that is not UTF-8 or not JSON, and HTTP
  408/409/429/500/502/503/504.  A ``Retry-After`` header (seconds or an HTTP date)
  is honoured up to ``max_backoff``.  After the last attempt :class:`HttpError`
  names the last failure and the number of attempts.
* **Not retried** (an :class:`HttpError` at once): any other 4xx (``status`` and the
  server's message are kept, so a caller can tell "prompt too long" from "bad
  key"), a redirect, and a body over ``max_response_bytes``.
* **Credentials stay on the configured origin.**  Requests go only to
  ``base_url``'s origin (scheme, host, port); ``path`` cannot name another one.
  Redirects are not followed by the library: a 307/308 to the *same* origin is
  followed (at most 5 hops, method and body kept), any redirect to another origin
  (or a 301/302/303, which would turn the POST into a GET) is an
  :class:`HttpError` of kind ``"redirect"`` — the ``Authorization`` header and the
  key are never sent anywhere else.  Proxy and ``.netrc`` settings from the
  environment are ignored unless ``trust_env=True``.

Every failure is an :class:`HttpError` (never an ``httpx``, ``socket``,
``UnicodeDecodeError`` or ``json`` exception): ``kind`` is one of
:data:`ERROR_KINDS`, ``status`` the HTTP status when there was one, ``detail``
the last failure in words, ``attempts`` how many attempts were made and
``retryable`` whether the failure was of a transient kind.  Closing the client
while other threads wait on it ends their requests with kind ``"closed"``.

How the deadline is kept: each client runs its own event loop on one daemon
thread (``httpx.AsyncClient``); an attempt is an ``asyncio`` task cancelled at its
deadline, which closes the connection.  Calls block the calling thread only.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import email.utils
import json
import math
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, urlsplit

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "HttpClient",
    "HttpError",
    "LazyClient",
    "EndpointPool",
    "ERROR_KINDS",
    "RETRY_STATUS",
    "endpoint_list",
    "origin_of",
]

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
ERROR_KINDS = ("timeout", "connect", "protocol", "decode", "json", "status", "redirect", "too_large", "closed")
_TRANSIENT_KINDS = frozenset({"timeout", "connect", "protocol", "decode", "json"})
_MAX_REDIRECTS = 5
_LANE_CONNECTIONS = 8  # connections per httpx pool (see HttpClient.__init__)


class HttpError(RuntimeError):
    """A request that did not produce a JSON answer: what failed, where, and after how many attempts."""

    def __init__(
        self,
        kind: str,
        detail: str,
        *,
        url: str = "",
        status: int | None = None,
        attempts: int = 1,
        retry_after: float | None = None,
        endpoints: tuple[str, ...] = (),
    ):
        self.kind, self.detail, self.url, self.status = kind, detail, url, status
        self.attempts, self.retry_after = attempts, retry_after
        self.endpoints = tuple(endpoints)  # EndpointPool: the base URLs tried for this request, in order
        self.retryable = kind in _TRANSIENT_KINDS or (kind == "status" and status in RETRY_STATUS)
        tries = f" (after {attempts} attempts)" if attempts > 1 else ""
        super().__init__(f"POST {url}: {detail}{tries}" if url else f"{detail}{tries}")


def origin_of(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of ``url``, the port filled in from the scheme.

    >>> origin_of("http://127.0.0.1:8000/v1"), origin_of("https://Example.org/x")
    (('http', '127.0.0.1', 8000), ('https', 'example.org', 443))
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme, 0)
    return scheme, (parts.hostname or "").lower(), port


def _show_origin(o: tuple[str, str, int]) -> str:
    return f"{o[0]}://{o[1]}:{o[2]}"


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (a number of seconds or an HTTP date); None if unusable.

    >>> parse_retry_after("7"), parse_retry_after("-1"), parse_retry_after("soon"), parse_retry_after(None)
    (7.0, None, None, None)
    >>> parse_retry_after("Thu, 01 Jan 1970 00:00:10 GMT", now=4.0)
    6.0
    """
    if value is None:
        return None
    value = value.strip()
    try:
        secs = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        secs = when.timestamp() - (time.time() if now is None else now)
        secs = max(secs, 0.0)
    if not math.isfinite(secs) or secs < 0:
        return None
    return secs


def _server_message(raw: bytes) -> str:
    """The error message of an error body: ``error.message`` of a JSON body, else its first 300 characters."""
    text = raw.decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        return text[:300].strip()
    err = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(err, dict):
        return str(err.get("message") or err.get("code") or err)[:300]
    return str(err)[:300]


def _check_positive(name: str, value: Any, *, integer: bool = False, allow_zero: bool = False) -> None:
    ok_type = isinstance(value, int) if integer else isinstance(value, (int, float))
    if (
        isinstance(value, bool)
        or not ok_type
        or not math.isfinite(value)
        or value < 0
        or (value == 0 and not allow_zero)
    ):
        what = "integer" if integer else "number"
        sign = "non-negative" if allow_zero else "positive"
        raise ValueError(f"http client: {name} must be a {sign} {what}, got {value!r}")


async def _cancel_and_close(clients: list[Any]) -> None:
    """Cancel the attempts in flight (their callers get HttpError kind "closed"), then close the connections."""
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for client in clients:
        await client.aclose()


def _split_base_url(url: Any, what: str) -> SplitResult:
    """``url``'s parts, after checking it is an ``http(s)://`` URL with a host and a numeric port (if any)."""
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError(
            f"{what}: base_url must start with http:// or https://, got {url!r} (e.g. http://127.0.0.1:8000/v1)"
        )
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ValueError(f"{what}: base_url {url!r} has a port that is not a number") from None
    if not parts.hostname:
        raise ValueError(f"{what}: base_url {url!r} names no host (e.g. http://127.0.0.1:8000/v1)")
    return parts


def _shutdown(loop: asyncio.AbstractEventLoop, thread: threading.Thread, clients: list[Any]) -> None:
    if loop.is_closed():
        return
    if threading.current_thread() is thread:  # collected on the loop's own thread: just stop it
        loop.call_soon(loop.stop)
        return
    if thread.is_alive():
        try:
            asyncio.run_coroutine_threadsafe(_cancel_and_close(clients), loop).result(timeout=5)
        except Exception:  # noqa: BLE001, S110 - closing is best effort: the loop is stopped below either way
            pass
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
    if not thread.is_alive():
        loop.close()


class HttpClient:
    """JSON over HTTP to one origin, with a total deadline per attempt, bounded retries and no cross-origin hops.

    ``base_url``: ``http://`` or ``https://`` URL every path is relative to.
    ``api_key``: sent as ``Authorization: Bearer <key>`` to ``base_url``'s origin only (None: no header).
    ``timeout``: seconds for one attempt as a whole.  ``max_retries``, ``backoff``, ``max_backoff``: see the
    module docstring.  ``max_connections``: the connection pool's size (callers' concurrency).
    ``max_response_bytes``: larger bodies are refused (kind ``"too_large"``).  ``headers``: sent with every
    request.  ``sleep``: how to wait between attempts (tests pass a recorder).
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        max_connections: int = 4,
        max_response_bytes: int = 32 * 2**20,
        headers: Mapping[str, str] | None = None,
        trust_env: bool = False,
        sleep: Callable[[float], None] = time.sleep,
    ):
        parts = _split_base_url(base_url, "http client")
        if parts.username or parts.password:
            raise ValueError(
                f"http client: base_url for host {parts.hostname!r} carries credentials; "
                "pass the key as api_key (it is sent as a Bearer token) instead"
            )
        _check_positive("timeout", timeout)
        _check_positive("max_retries", max_retries, integer=True, allow_zero=True)
        _check_positive("backoff", backoff, allow_zero=True)
        _check_positive("max_backoff", max_backoff, allow_zero=True)
        _check_positive("max_connections", max_connections, integer=True)
        _check_positive("max_response_bytes", max_response_bytes, integer=True)
        if api_key is not None and (
            not isinstance(api_key, str) or not api_key or not api_key.isascii() or not api_key.isprintable()
        ):
            raise ValueError("http client: api_key must be a non-empty string of printable ASCII characters, or None")
        import httpx  # imported here: only network users pay for it

        self.base_url = base_url.rstrip("/")
        self.origin = origin_of(self.base_url)
        self.timeout, self.max_retries = float(timeout), max_retries
        self.backoff, self.max_backoff = float(backoff), float(max_backoff)
        self.max_response_bytes = max_response_bytes
        self._api_key = api_key
        self._headers = {"Accept": "application/json", **dict(headers or {})}
        self._sleep = sleep
        self._lock = threading.Lock()
        self._counts = {"requests": 0, "attempts": 0, "retries": 0, "ok": 0, "failed": 0}
        self._httpx = httpx
        # The per-operation timeouts are a second fence; the deadline of an attempt is enforced by cancelling it.
        # The connections are split into lanes of at most _LANE_CONNECTIONS, one httpx pool each: httpx's pool
        # (httpcore 1.0) does work per request that grows with its number of connections, so one pool of 64
        # served a local server at a third of the rate of 16 (bench/bench_readers.py); each attempt takes the
        # lane with the fewest attempts in flight.
        lanes = -(-max_connections // _LANE_CONNECTIONS)
        sizes = [max_connections // lanes + (i < max_connections % lanes) for i in range(lanes)]
        self._clients = [
            httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout),
                limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
                follow_redirects=False,
                trust_env=trust_env,
            )
            for size in sizes
        ]
        self._lane_load = [0] * lanes  # attempts in flight per lane (read and written on the loop's thread only)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="rageval-http", daemon=True)
        self._thread.start()
        self._closed = False
        self._finalizer = weakref.finalize(self, _shutdown, self._loop, self._thread, self._clients)

    # -- public ------------------------------------------------------------------------
    def post_json(self, path: str, payload: Any, *, headers: Mapping[str, str] | None = None) -> Any:
        """POST ``payload`` as JSON to ``base_url/path``; the decoded JSON answer, or :class:`HttpError`."""
        if self._closed:
            raise RuntimeError("http client is closed")
        url = self._url(path)
        try:
            body = json.dumps(payload, ensure_ascii=False, allow_nan=False).encode("utf-8")
        except (TypeError, ValueError) as err:
            raise ValueError(f"http client: payload for {url} is not JSON-serialisable: {err}") from None
        hdrs = {**self._headers, **dict(headers or {}), "Content-Type": "application/json"}
        if self._api_key:
            hdrs["Authorization"] = f"Bearer {self._api_key}"
        self._count("requests")
        attempt = 0
        while True:
            self._count("attempts")
            try:
                data = self._run_attempt(url, body, hdrs)
            except HttpError as err:
                if not err.retryable or attempt >= self.max_retries:
                    self._count("failed")
                    raise HttpError(
                        err.kind,
                        err.detail,
                        url=url,
                        status=err.status,
                        attempts=attempt + 1,
                        retry_after=err.retry_after,
                    ) from None
                wait = min(self.max_backoff, self.backoff * (2**attempt))
                if err.retry_after is not None:
                    wait = min(self.max_backoff, max(wait, err.retry_after))
                self._count("retries")
                self._sleep(wait)
                attempt += 1
                continue
            self._count("ok")
            return data

    def stats(self) -> dict[str, int]:
        """Counters since creation: ``requests``, ``attempts``, ``retries``, ``ok``, ``failed``."""
        with self._lock:
            return dict(self._counts)

    def close(self) -> None:
        """Close the connections and stop the client's thread (idempotent)."""
        self._closed = True
        self._finalizer()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"HttpClient({self.base_url!r}, timeout={self.timeout}, max_retries={self.max_retries})"

    # -- internals ---------------------------------------------------------------------
    def _count(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    def _url(self, path: str) -> str:
        if not isinstance(path, str):
            raise TypeError(f"http client: path must be a string, got {type(path).__name__}")
        if "://" in path or path.startswith("//") or any(c in path for c in "\r\n"):
            raise ValueError(f"http client: path {path!r} must be relative to base_url {self.base_url!r}")
        url = f"{self.base_url}/{path.lstrip('/')}" if path else self.base_url
        if origin_of(url) != self.origin:  # pragma: no cover - guarded above; kept as the last fence
            raise ValueError(f"http client: {url!r} is not on {_show_origin(self.origin)}")
        return url

    def _run_attempt(self, url: str, body: bytes, headers: dict[str, str]) -> Any:
        """One attempt on the client's loop; the wait is fenced too, so a stopped loop cannot hold the caller."""
        closed = HttpError("closed", "the client was closed while this request was in flight")
        if self._closed or self._loop.is_closed():
            raise closed
        future = asyncio.run_coroutine_threadsafe(self._attempt(url, body, headers), self._loop)
        try:
            return future.result(timeout=self.timeout + 10.0)
        except (concurrent.futures.CancelledError, concurrent.futures.TimeoutError):
            future.cancel()
            raise closed from None

    async def _attempt(self, url: str, body: bytes, headers: dict[str, str]) -> Any:
        try:
            return await asyncio.wait_for(self._exchange(url, body, headers), self.timeout)
        except asyncio.TimeoutError:
            raise HttpError(
                "timeout", f"timed out: no complete response within {self.timeout:g} s (total deadline)"
            ) from None

    async def _exchange(self, url: str, body: bytes, headers: dict[str, str]) -> Any:
        httpx = self._httpx
        lane = min(range(len(self._clients)), key=self._lane_load.__getitem__)
        self._lane_load[lane] += 1
        try:
            for _hop in range(_MAX_REDIRECTS + 1):
                async with self._clients[lane].stream("POST", url, content=body, headers=headers) as resp:
                    status = resp.status_code
                    if 300 <= status < 400:
                        url = self._redirect_target(resp, url)
                        continue
                    raw = await self._read_body(resp)
                    retry_after = parse_retry_after(resp.headers.get("Retry-After"))
                break
            else:
                raise HttpError("redirect", f"more than {_MAX_REDIRECTS} redirects")
        except HttpError:
            raise
        except httpx.TimeoutException as err:
            raise HttpError("timeout", f"timed out ({type(err).__name__})") from None
        except httpx.ConnectError as err:
            raise HttpError("connect", f"cannot connect: {err or type(err).__name__}") from None
        except httpx.DecodingError as err:
            raise HttpError("decode", f"cannot decode the response body: {err}") from None
        except (httpx.TransportError, OSError) as err:  # broken status line, short body, reset, ...
            raise HttpError("protocol", f"{type(err).__name__}: {err or 'connection broken'}") from None
        except httpx.HTTPError as err:  # anything else httpx reports about the exchange
            raise HttpError("protocol", f"{type(err).__name__}: {err}") from None
        finally:
            self._lane_load[lane] -= 1
        if status >= 400 or status < 200:
            raise HttpError(
                "status",
                f"HTTP {status}: {_server_message(raw) or 'no message'}",
                status=status,
                retry_after=retry_after if status in RETRY_STATUS else None,
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise HttpError("decode", f"HTTP {status} body is not UTF-8 ({err.reason} at byte {err.start})") from None
        try:
            return json.loads(text)
        except (ValueError, RecursionError) as err:  # RecursionError: nested deeper than Python parses
            what = "nested too deeply" if isinstance(err, RecursionError) else "not JSON"
            raise HttpError("json", f"HTTP {status} body is {what}: {text[:120]!r}") from None

    def _redirect_target(self, resp: Any, url: str) -> str:
        status = resp.status_code
        location = resp.headers.get("Location")
        if not location:
            raise HttpError("redirect", f"HTTP {status} redirect without a Location header", status=status)
        try:
            target = str(resp.url.join(location))
            there = origin_of(target)
        except (ValueError, self._httpx.InvalidURL):
            raise HttpError("redirect", f"HTTP {status} redirect to an unusable Location {location!r:.120}") from None
        if there != self.origin:
            raise HttpError(
                "redirect",
                f"HTTP {status} redirect to another origin ({_show_origin(there)}) refused: requests and "
                f"credentials stay on {_show_origin(self.origin)}; set base_url to the server that answers",
                status=status,
            )
        if status not in (307, 308):
            raise HttpError(
                "redirect",
                f"HTTP {status} redirect to {target} not followed (it would turn the POST into a GET); "
                "set base_url to the address that answers",
                status=status,
            )
        return target

    async def _read_body(self, resp: Any) -> bytes:
        chunks, size = [], 0
        async for chunk in resp.aiter_bytes():
            size += len(chunk)
            if size > self.max_response_bytes:
                raise HttpError(
                    "too_large",
                    f"HTTP {resp.status_code} body is over {self.max_response_bytes} bytes (max_response_bytes)",
                    status=resp.status_code,
                )
            chunks.append(chunk)
        return b"".join(chunks)


class LazyClient:
    """The :class:`HttpClient` of one service (a reader's or a judge's), created on first use and closed on demand.

    The API key is ``api_key`` when given, else the environment variable named by
    ``api_key_env``, read when the client is created (the first request).  ``options``
    are :class:`HttpClient`'s keyword arguments.  Thread-safe; after :meth:`close`, the
    next :meth:`get` opens a new client.
    """

    def __init__(self, base_url: str, *, api_key: str | None = None, api_key_env: str | None = None, **options: Any):
        self._base_url, self._api_key, self._api_key_env, self._options = base_url, api_key, api_key_env, options
        self._client: HttpClient | None = None
        self._lock = threading.Lock()

    def get(self) -> HttpClient:
        import os

        with self._lock:
            if self._client is None:
                key = self._api_key
                if key is None and self._api_key_env:
                    key = os.environ.get(self._api_key_env) or None
                self._client = HttpClient(self._base_url, api_key=key, **self._options)
            return self._client

    @property
    def current(self) -> HttpClient | None:
        """The open client, or None before the first request and after :meth:`close`."""
        with self._lock:
            return self._client

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


def endpoint_list(base_url: Any, *, what: str = "http client") -> tuple[str, ...]:
    """``base_url`` (one URL or a list of them) as a tuple of distinct ``http(s)://`` URLs without a trailing ``/``.

    >>> endpoint_list("http://127.0.0.1:8000/v1/")
    ('http://127.0.0.1:8000/v1',)
    >>> endpoint_list(["http://a:8000/v1", "http://A:8000/v1/"])
    Traceback (most recent call last):
    ...
    ValueError: http client: base_url lists http://A:8000/v1/ twice (as http://a:8000/v1); give each endpoint once
    """
    urls = [base_url] if isinstance(base_url, str) else base_url
    if not isinstance(urls, (list, tuple)) or not urls:
        raise ValueError(
            f"{what}: base_url must be a URL or a non-empty list of URLs (one per endpoint), got {base_url!r} "
            "(e.g. http://127.0.0.1:8000/v1 or [http://10.0.0.1:8000/v1, http://10.0.0.2:8000/v1])"
        )
    out: list[str] = []
    seen: dict[tuple[tuple[str, str, int], str], str] = {}
    for url in urls:
        parts = _split_base_url(url, what)
        same = (origin_of(url), parts.path.rstrip("/"))
        if same in seen:
            raise ValueError(
                f"{what}: base_url lists {url} twice (as {seen[same]}); give each endpoint once"
                if url != seen[same]
                else f"{what}: base_url lists {url} twice; give each endpoint once"
            )
        seen[same] = url.rstrip("/")
        out.append(url.rstrip("/"))
    return tuple(out)


class EndpointPool:
    """One service served by several endpoints (replicas of one model), each with its own :class:`HttpClient`.

    ``base_urls``: one URL or a list (distinct; see :func:`endpoint_list`).  ``per_endpoint``: at most this
    many requests in flight to one endpoint (a caller beyond it waits for a slot); it is also each client's
    connection-pool size.  ``api_key`` / ``api_key_env``: as :class:`LazyClient` — the same key goes to every
    endpoint, each client sending it to its own origin only.  ``options``: :class:`HttpClient`'s keyword
    arguments (``timeout``, ``max_retries``, ...), the same for every endpoint.

    :meth:`post_json` is thread-safe.  It picks the endpoint with the fewest requests in flight (ties: round
    robin), skipping endpoints that are *down*.  When that endpoint gives up on a request with a transient
    failure (after its own ``max_retries``), the endpoint is down for ``cooldown`` seconds and the request
    is sent to another endpoint it has not tried; when every endpoint has failed it, the :class:`HttpError`
    names each endpoint's last failure (``endpoints`` lists them).  A failure that is not transient (a 4xx,
    a refused redirect, a body too large, a closed client) is raised at once: another replica of the same
    model would answer the same request the same way.  A down endpoint is used only when every endpoint
    the request has not tried is down; a success brings it back.
    """

    def __init__(
        self,
        base_urls: str | list[str] | tuple[str, ...],
        *,
        per_endpoint: int = 4,
        api_key: str | None = None,
        api_key_env: str | None = None,
        cooldown: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        **options: Any,
    ):
        self.base_urls = endpoint_list(base_urls)
        _check_positive("per_endpoint", per_endpoint, integer=True)
        _check_positive("cooldown", cooldown, allow_zero=True)
        self.per_endpoint, self.cooldown, self._clock = per_endpoint, float(cooldown), clock
        self._clients = [
            LazyClient(u, api_key=api_key, api_key_env=api_key_env, max_connections=per_endpoint, **options)
            for u in self.base_urls
        ]
        n = len(self.base_urls)
        self._cond = threading.Condition()
        self._in_flight = [0] * n
        self._down_until = [-math.inf] * n
        self._next = 0
        self._counts = [{"sent": 0, "ok": 0, "failed": 0, "failed_over": 0, "max_in_flight": 0} for _ in range(n)]

    def __len__(self) -> int:
        return len(self.base_urls)

    def client(self, i: int = 0) -> HttpClient:
        """The :class:`HttpClient` of endpoint ``i`` (created on first use)."""
        return self._clients[i].get()

    def post_json(self, path: str, payload: Any, *, headers: Mapping[str, str] | None = None) -> Any:
        """POST to one endpoint (failing over as the class says); the decoded JSON, or :class:`HttpError`."""
        tried: list[int] = []
        errors: list[HttpError] = []
        while True:
            i = self._acquire(tried)
            tried.append(i)
            try:
                data = self._clients[i].get().post_json(path, payload, headers=headers)
            except HttpError as err:
                self._release(i, ok=False, down=err.retryable)
                errors.append(err)
                if err.retryable and len(tried) < len(self._clients):
                    with self._cond:
                        self._counts[i]["failed_over"] += 1
                    continue
                raise self._final(err, tried, errors) from None
            except BaseException:
                self._release(i, ok=False, down=False)
                raise
            self._release(i, ok=True, down=False)
            return data

    def stats(self) -> dict[str, dict[str, int]]:
        """Per endpoint (base URL): ``sent``, ``ok``, ``failed``, ``failed_over`` (requests passed on to another
        endpoint) and ``max_in_flight`` (the most requests this pool had in flight to it at once)."""
        with self._cond:
            return {u: dict(c) for u, c in zip(self.base_urls, self._counts)}

    def close(self) -> None:
        """Close every endpoint's client (a later request opens new ones)."""
        for c in self._clients:
            c.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------------
    def _acquire(self, tried: list[int]) -> int:
        n = len(self._clients)
        with self._cond:
            while True:
                now = self._clock()
                untried = [j for j in range(n) if j not in tried]
                up = [j for j in untried if self._down_until[j] <= now]
                free = [j for j in (up or untried) if self._in_flight[j] < self.per_endpoint]
                if free:
                    i = min(free, key=lambda j: (self._in_flight[j], (j - self._next) % n))
                    self._next = (i + 1) % n
                    self._in_flight[i] += 1
                    c = self._counts[i]
                    c["sent"] += 1
                    c["max_in_flight"] = max(c["max_in_flight"], self._in_flight[i])
                    return i
                self._cond.wait(timeout=1.0)  # a slot frees (notified) or a down endpoint's cooldown ends

    def _release(self, i: int, *, ok: bool, down: bool) -> None:
        with self._cond:
            self._in_flight[i] -= 1
            self._counts[i]["ok" if ok else "failed"] += 1
            if ok:
                self._down_until[i] = -math.inf
            elif down:
                self._down_until[i] = self._clock() + self.cooldown
            self._cond.notify_all()

    def _final(self, err: HttpError, tried: list[int], errors: list[HttpError]) -> HttpError:
        urls = tuple(self.base_urls[j] for j in tried)
        if len(errors) == 1:
            detail = err.detail
        else:
            detail = f"all {len(errors)} endpoints failed: " + "; ".join(
                f"{u}: {e.detail}" + (f" (after {e.attempts} attempts)" if e.attempts > 1 else "")
                for u, e in zip(urls, errors)
            )
        return HttpError(
            err.kind,
            detail,
            url=err.url if len(errors) == 1 else "",
            status=err.status,
            attempts=sum(e.attempts for e in errors),
            retry_after=err.retry_after,
            endpoints=urls,
        )
