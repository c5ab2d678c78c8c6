"""What an HTTP request can fail with: :class:`HttpError`, its kinds, and the statuses worth retrying."""

from __future__ import annotations

import json

__all__ = ["HttpError", "ERROR_KINDS", "RETRY_STATUS", "server_message", "show_reply"]

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
ERROR_KINDS = ("timeout", "connect", "protocol", "decode", "json", "status", "redirect", "too_large", "closed")
_TRANSIENT_KINDS = frozenset({"timeout", "connect", "protocol", "decode", "json"})


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


def server_message(raw: bytes) -> str:
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


def show_reply(value: object, n: int = 200) -> str:
    """At most ``n`` characters of an untrusted reply (or part of one) for an error message; never raises (a number
    past Python's digit limit is named, not printed), lone surrogates become U+FFFD.

    >>> show_reply({"choices": []}), show_reply("x" * 500, 5)
    ("{'choices': []}", 'xxxxx')
    """
    try:
        text = value if isinstance(value, str) else repr(value)
    except (ValueError, RecursionError):  # an int past the digit limit; a structure nested too deep
        text = f"<{type(value).__name__} too large to show>"
    return text[:n].encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
