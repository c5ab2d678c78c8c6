"""Base URLs and origins: what a client may be pointed at, and the origin its requests (and key) stay on.

Credentials never ride in a URL: :func:`split_base_url` refuses a ``base_url`` with
userinfo (``user:password@``), a query (``?api-key=...``) or a fragment, with a
message that shows the URL redacted (:func:`redact_url`), and :func:`check_key_transport`
refuses to send a key over plain ``http://`` to a host that is not loopback unless the
caller opts in (``allow_insecure_key``).
"""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import SplitResult, urlsplit

from rageval.errors import redact_url

__all__ = [
    "DEFAULT_KEY",
    "DefaultKeyEnv",
    "OPENAI_ORIGIN",
    "key_env_for",
    "origin_of",
    "show_origin",
    "split_base_url",
    "endpoint_list",
    "redact_url",
    "is_loopback",
    "insecure_key_problem",
    "check_key_transport",
]


#: the origin the default key goes to: OpenAI's own API
OPENAI_ORIGIN = ("https", "api.openai.com", 443)


class DefaultKeyEnv(str):
    """The ``api_key_env`` of a reader or judge whose configuration names none: the variable ``OPENAI_API_KEY``,
    whose key goes to OpenAI's own API (:data:`OPENAI_ORIGIN`) and nowhere else — a local vLLM or llama.cpp
    server is not OpenAI.  A configuration that names a variable (``api_key_env: OPENAI_API_KEY`` included) sends
    its key to the endpoints it configures (:func:`key_env_for`)."""

    def __repr__(self) -> str:
        return f"{str(self)!r} (unnamed: for {show_origin(OPENAI_ORIGIN)} only)"


#: the default ``api_key_env`` (:class:`DefaultKeyEnv`)
DEFAULT_KEY = DefaultKeyEnv("OPENAI_API_KEY")


def key_env_for(url: str, api_key_env: str | None) -> str | None:
    """The environment variable whose key goes to ``url``: ``api_key_env`` when the configuration names one (None:
    no key); by default (:data:`DEFAULT_KEY`) ``OPENAI_API_KEY`` for OpenAI's own API and none elsewhere.

    >>> key_env_for("https://api.openai.com/v1", DEFAULT_KEY), key_env_for("http://127.0.0.1:8000/v1", DEFAULT_KEY)
    ('OPENAI_API_KEY', None)
    >>> key_env_for("http://127.0.0.1:8000/v1", "OPENAI_API_KEY"), key_env_for("https://api.openai.com/v1", None)
    ('OPENAI_API_KEY', None)
    """
    if isinstance(api_key_env, DefaultKeyEnv):
        return str(api_key_env) if origin_of(url) == OPENAI_ORIGIN else None
    return api_key_env


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a URL's hostname) is this machine: ``localhost`` or a loopback address.

    >>> [is_loopback(h) for h in ["127.0.0.1", "127.8.0.1", "::1", "LocalHost", "10.0.0.1", "example.org"]]
    [True, True, True, True, False, False]
    """
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def insecure_key_problem(url: str) -> bool:
    """True when a key sent to ``url`` would travel in plain text off this machine (``http://``, not loopback)."""
    scheme, host, _ = origin_of(url)
    return scheme != "https" and not is_loopback(host)


def check_key_transport(urls: Any, *, what: str, key_from: str, allow_insecure_key: bool) -> None:
    """Refuse (ValueError, one line) to send a key (from ``key_from``, e.g. ``"$OPENAI_API_KEY"``) to any of
    ``urls`` over plain http off this machine, unless ``allow_insecure_key``."""
    if allow_insecure_key:
        return
    for url in [urls] if isinstance(urls, str) else list(urls):
        if insecure_key_problem(url):
            raise ValueError(
                f"{what}: the key in {key_from} would be sent unencrypted to {redact_url(url)} (plain http to a host "
                "that is not loopback); use https://, send no key (api_key_env: null), or set "
                "allow_insecure_key: true"
            )


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
    """``url``'s parts, after checking it is an ``http(s)://`` URL (the scheme in any case: ``HTTP://`` is
    ``http://``, RFC 3986 section 3.1) with a host and a numeric port (if any)."""
    shown = repr(redact_url(url)) if isinstance(url, str) else repr(url)
    if not isinstance(url, str) or not url[:8].lower().startswith(("http://", "https://")):  # RFC 3986: any case
        raise ValueError(
            f"{what}: base_url must start with http:// or https://, got {shown} (e.g. http://127.0.0.1:8000/v1)"
        )
    parts = urlsplit(url)
    if "@" in parts.netloc:
        raise ValueError(
            f"{what}: base_url {shown} carries credentials (user:password@); remove them and put the key in the "
            "environment variable named by api_key_env (sent as a Bearer token)"
        )
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise ValueError(
            f"{what}: base_url {shown} has a query or fragment (?... or #...), which rageval would write into "
            "records and the manifest and append paths after; remove it and put a key in the environment variable "
            "named by api_key_env (sent as a Bearer token)"
        )
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ValueError(f"{what}: base_url {shown} has a port that is not a number") from None
    if not parts.hostname:
        raise ValueError(f"{what}: base_url {shown} names no host (e.g. http://127.0.0.1:8000/v1)")
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
