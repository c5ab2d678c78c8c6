"""The HTTP client of one origin (:class:`HttpClient`) and the lazily created client of one service (:class:`LazyClient`).

Its guarantees, and how the deadline of an attempt is kept, are in :mod:`rageval.http`.
``httpx`` is imported when the first client is made: only network users pay for it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from rageval.http.errors import RETRY_STATUS, HttpError, server_message
from rageval.http.policy import check_positive, parse_retry_after, retry_wait
from rageval.http.urls import check_key_transport, key_env_for, origin_of, show_origin, split_base_url
from rageval.io import json_text

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["HttpClient", "LazyClient", "body_charset"]

_MAX_REDIRECTS = 5
_LANE_CONNECTIONS = 8  # connections per httpx pool (see HttpClient.__init__)


async def _cancel_and_close(clients: list[Any]) -> None:
    """Cancel the attempts in flight (their callers get HttpError kind "closed"), then close the connections."""
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for client in clients:
        await client.aclose()


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


def body_charset(content_type: str | None) -> str:
    """The charset a response body is decoded with: the ``charset`` parameter of its ``Content-Type`` (RFC 9110
    section 8.3.1), else UTF-8 (JSON's encoding, RFC 8259).

    >>> body_charset("application/json; charset=ISO-8859-1"), body_charset('application/json;charset="utf-8"')
    ('iso-8859-1', 'utf-8')
    >>> body_charset("application/json"), body_charset(None)
    ('utf-8', 'utf-8')
    """
    for param in (content_type or "").split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            value = value.strip().strip('"').strip().lower()
            return value or "utf-8"
    return "utf-8"


def _json_body(raw: bytes, status: int, content_type: str | None) -> Any:
    """A 2xx body decoded in its charset (:func:`body_charset`) and read as JSON, or :class:`HttpError`."""
    charset = body_charset(content_type)
    try:
        text = raw.decode(charset)
    except LookupError:  # no such codec, or one that is not a text encoding (base64, rot13)
        raise HttpError("decode", f"HTTP {status} body is in an unknown charset {charset!r:.60}") from None
    except UnicodeDecodeError as err:
        name = "UTF-8" if charset == "utf-8" else charset
        raise HttpError("decode", f"HTTP {status} body is not {name} ({err.reason} at byte {err.start})") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as err:  # RecursionError: nested deeper than Python parses
        what = "nested too deeply" if isinstance(err, RecursionError) else "not JSON"
        raise HttpError("json", f"HTTP {status} body is {what}: {text[:120]!r}") from None


class HttpClient:
    """JSON over HTTP to one origin, with a total deadline per attempt, bounded retries and no cross-origin hops.

    ``base_url``: ``http://`` or ``https://`` URL every path is relative to.
    ``api_key``: sent as ``Authorization: Bearer <key>`` to ``base_url``'s origin only (None: no header), and only
    over https or to a loopback host unless ``allow_insecure_key`` (else a ValueError here).
    ``timeout``: seconds for one attempt as a whole.  ``max_retries``, ``backoff``, ``max_backoff``: see
    :mod:`rageval.http`.  ``max_connections``: the connection pool's size (callers' concurrency).
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
        allow_insecure_key: bool = False,
        sleep: Callable[[float], None] = time.sleep,
    ):
        split_base_url(base_url, "http client")  # refuses credentials in the URL (userinfo, query)
        check_positive("timeout", timeout)
        check_positive("max_retries", max_retries, integer=True, allow_zero=True)
        check_positive("backoff", backoff, allow_zero=True)
        check_positive("max_backoff", max_backoff, allow_zero=True)
        check_positive("max_connections", max_connections, integer=True)
        check_positive("max_response_bytes", max_response_bytes, integer=True)
        if api_key is not None and (
            not isinstance(api_key, str) or not api_key or not api_key.isascii() or not api_key.isprintable()
        ):
            raise ValueError("http client: api_key must be a non-empty string of printable ASCII characters, or None")
        if api_key is not None:  # the last fence: the reader's and the judge's checks refuse this at validate
            check_key_transport(base_url, what="http client", key_from="api_key", allow_insecure_key=allow_insecure_key)
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
            body = json_text(payload, sort_keys=False, allow_nan=False).encode("utf-8")
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
                wait = retry_wait(
                    attempt, backoff=self.backoff, max_backoff=self.max_backoff, retry_after=err.retry_after
                )
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
            raise ValueError(f"http client: {url!r} is not on {show_origin(self.origin)}")
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
                    content_type = resp.headers.get("Content-Type")
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
                f"HTTP {status}: {server_message(raw) or 'no message'}",
                status=status,
                retry_after=retry_after if status in RETRY_STATUS else None,
            )
        return _json_body(raw, status, content_type)

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
                f"HTTP {status} redirect to another origin ({show_origin(there)}) refused: requests and "
                f"credentials stay on {show_origin(self.origin)}; set base_url to the server that answers",
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
    ``api_key_env`` (:func:`~rageval.http.urls.key_env_for`: the unnamed default,
    ``OPENAI_API_KEY``, for OpenAI's own API only), read when the client is created
    (the first request).  ``options``
    are :class:`HttpClient`'s keyword arguments.  Thread-safe; after :meth:`close`, the
    next :meth:`get` opens a new client.
    """

    def __init__(self, base_url: str, *, api_key: str | None = None, api_key_env: str | None = None, **options: Any):
        self._base_url, self._api_key, self._api_key_env, self._options = base_url, api_key, api_key_env, options
        self._client: HttpClient | None = None
        self._lock = threading.Lock()

    def get(self) -> HttpClient:
        with self._lock:
            if self._client is None:
                key = self._api_key
                env = key_env_for(self._base_url, self._api_key_env)
                if key is None and env:
                    key = os.environ.get(env) or None
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
