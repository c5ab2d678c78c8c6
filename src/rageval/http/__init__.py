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

The modules: :mod:`~rageval.http.client` (:class:`HttpClient`, :class:`LazyClient`),
:mod:`~rageval.http.pool` (:class:`EndpointPool`), :mod:`~rageval.http.errors`
(:class:`HttpError`, :data:`ERROR_KINDS`, :data:`RETRY_STATUS`),
:mod:`~rageval.http.policy` (backoff, ``Retry-After``, the options' checks) and
:mod:`~rageval.http.urls` (base URLs, origins, :func:`endpoint_list`).
"""

from rageval.http.client import HttpClient, LazyClient
from rageval.http.errors import ERROR_KINDS, RETRY_STATUS, HttpError
from rageval.http.policy import parse_retry_after
from rageval.http.pool import EndpointPool
from rageval.http.urls import endpoint_list, origin_of

__all__ = [
    "HttpClient",
    "HttpError",
    "LazyClient",
    "EndpointPool",
    "ERROR_KINDS",
    "RETRY_STATUS",
    "endpoint_list",
    "origin_of",
    "parse_retry_after",
]
