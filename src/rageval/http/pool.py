"""One service served by several endpoints (replicas), one :class:`~rageval.http.client.HttpClient` each, with failover."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from rageval.http.client import HttpClient, LazyClient
from rageval.http.errors import HttpError
from rageval.http.policy import check_positive
from rageval.http.urls import endpoint_list

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["EndpointPool"]


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
        check_positive("per_endpoint", per_endpoint, integer=True)
        check_positive("cooldown", cooldown, allow_zero=True)
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
