"""The client's policy: how long to wait before the next attempt (backoff, ``Retry-After``) and its options' checks."""

from __future__ import annotations

import email.utils
import math
import time
from typing import Any

__all__ = ["parse_retry_after", "retry_wait", "check_positive"]


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


def retry_wait(attempt: int, *, backoff: float, max_backoff: float, retry_after: float | None = None) -> float:
    """Seconds to wait after failed attempt ``attempt`` (0-based): ``backoff * 2**attempt``, at least
    ``retry_after`` (the server's ``Retry-After``) when there is one, never more than ``max_backoff``.

    >>> retry_wait(0, backoff=1.0, max_backoff=30.0), retry_wait(3, backoff=1.0, max_backoff=5.0)
    (1.0, 5.0)
    >>> retry_wait(0, backoff=1.0, max_backoff=30.0, retry_after=7.0)
    7.0
    """
    wait = min(max_backoff, backoff * (2**attempt))
    if retry_after is not None:
        wait = min(max_backoff, max(wait, retry_after))
    return wait


def check_positive(name: str, value: Any, *, integer: bool = False, allow_zero: bool = False) -> None:
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
