"""Base URLs and origins: what a client may be pointed at, and the origin its requests (and key) stay on."""

from __future__ import annotations

from typing import Any
from urllib.parse import SplitResult, urlsplit

__all__ = ["origin_of", "show_origin", "split_base_url", "endpoint_list"]


def origin_of(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of ``url``, the port filled in from the scheme.

    >>> origin_of("http://127.0.0.1:8000/v1"), origin_of("https://Example.org/x")
    (('http', '127.0.0.1', 8000), ('https', 'example.org', 443))
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme, 0)
    return scheme, (parts.hostname or "").lower(), port


def show_origin(o: tuple[str, str, int]) -> str:
    return f"{o[0]}://{o[1]}:{o[2]}"


def split_base_url(url: Any, what: str) -> SplitResult:
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
        parts = split_base_url(url, what)
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
