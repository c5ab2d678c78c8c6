"""The OpenAI-compatible reader: chat completions over HTTP (vLLM, TGI, llama.cpp server, …).

``OpenAIReader(model, base_url="http://127.0.0.1:8000/v1")`` posts each request's
messages to ``{base_url}/chat/completions`` with ``temperature`` 0 (greedy) and
``max_tokens``.  The API key is read from the environment variable named by
``api_key_env`` (default ``OPENAI_API_KEY``); without it no ``Authorization``
header is sent (local servers need none).  The key never appears in :meth:`info`.

Failures and retries (standard library only, no extra dependency):

* timeouts, refused connections and HTTP 408/409/429/5xx are retried up to
  ``max_retries`` times with exponential backoff (``backoff * 2**attempt`` seconds,
  capped at ``max_backoff``; a numeric ``Retry-After`` header is honoured up to the
  same cap); after the last attempt the request is a ``reader_error`` naming the
  last failure;
* HTTP 400 whose message says the prompt is too long (``context length``,
  ``maximum context``, ``too long``, ``context_length_exceeded``) is
  ``prompt_overflow``; any other 4xx is a ``reader_error`` at once (no retry);
* a response without ``choices[0].message.content`` is a ``reader_error``.

``input_tokens`` is the server's ``usage.prompt_tokens`` when it reports one, else
the suite tokenizer's count of the rendered prompt.  Requests are sent
``concurrency`` at a time (threads), results in request order.
"""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Mapping, Sequence

from rageval.readers.base import Reader, ReaderOutput, ReaderRequest, check_requests
from rageval.readers.template import PromptTemplate

__all__ = ["OpenAIReader"]

_RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
_OVERFLOW_HINTS = ("context length", "context_length", "maximum context", "too long", "context window")


class _Retryable(Exception):
    def __init__(self, msg: str, retry_after: float | None = None):
        super().__init__(msg)
        self.retry_after = retry_after


class OpenAIReader(Reader):
    """Any OpenAI-compatible chat-completions endpoint."""

    name = "openai"
    needs_model = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key_env: str = "OPENAI_API_KEY",
        template: PromptTemplate | Mapping[str, Any] | None = None,
        max_tokens: int = 256,
        temperature: float = 0.0,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        concurrency: int = 1,
        extra_body: Mapping[str, Any] | None = None,
        tokenizer: Any = "regex",
        sleep: Callable[[float], None] = time.sleep,
    ):
        super().__init__(template=template, tokenizer=tokenizer)
        if not isinstance(model, str) or not model.strip():
            raise ValueError("openai reader: 'model' must name the served model (e.g. the name vLLM was started with)")
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"openai reader: base_url must start with http:// or https://, got {base_url!r} "
                "(e.g. http://127.0.0.1:8000/v1)"
            )
        for name, v in (("max_tokens", max_tokens), ("concurrency", concurrency)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"openai reader: {name} must be a positive integer, got {v!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"openai reader: max_retries must be a non-negative integer, got {max_retries!r}")
        if not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ValueError(f"openai reader: timeout must be a positive number of seconds, got {timeout!r}")
        self.model_name = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.max_tokens, self.temperature = max_tokens, float(temperature)
        self.timeout, self.max_retries = float(timeout), max_retries
        self.backoff, self.max_backoff = float(backoff), float(max_backoff)
        self.concurrency = concurrency
        self.extra_body = dict(extra_body or {})
        self._sleep = sleep

    def params(self) -> dict[str, Any]:
        return {
            "model": self.model_name,
            "base_url": self.base_url,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "extra_body": self.extra_body,
        }

    # -- one HTTP call -------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        h = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            h["Authorization"] = f"Bearer {key}"
        return h

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        data = json.dumps(body).encode("utf-8")
        req = urllib.request.Request(
            f"{self.base_url}/chat/completions", data=data, headers=self._headers(), method="POST"
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            detail = _error_message(e)
            if e.code in _RETRY_STATUS:
                ra = e.headers.get("Retry-After") if e.headers else None
                try:
                    retry_after = float(ra) if ra is not None else None
                except ValueError:
                    retry_after = None
                raise _Retryable(f"HTTP {e.code}: {detail}", retry_after) from None
            raise _HTTPFailure(e.code, detail) from None
        except (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError) as e:
            reason = getattr(e, "reason", e)
            raise _Retryable(f"{type(reason).__name__}: {reason}") from None
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            raise _HTTPFailure(200, f"response is not JSON: {raw[:200]!r}") from None

    def _one(self, req: ReaderRequest) -> ReaderOutput:
        messages = self.template.messages(req.question, req.units)
        body = {
            "model": self.model_name,
            "messages": messages,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            **self.extra_body,
        }
        last = ""
        for attempt in range(self.max_retries + 1):
            try:
                resp = self._post(body)
            except _Retryable as e:
                last = str(e)
                if attempt < self.max_retries:
                    wait = min(self.max_backoff, self.backoff * (2**attempt))
                    if e.retry_after is not None:
                        wait = min(self.max_backoff, max(wait, e.retry_after))
                    self._sleep(wait)
                continue
            except _HTTPFailure as e:
                tokens = self.count_prompt_tokens(req)
                if e.code == 400 and any(h in e.detail.lower() for h in _OVERFLOW_HINTS):
                    return ReaderOutput(
                        "", "prompt_overflow", tokens, f"server rejected the prompt as too long: {e.detail}"
                    )
                return ReaderOutput("", "reader_error", tokens, f"HTTP {e.code} from {self.base_url}: {e.detail}")
            return self._parse(req, resp)
        return ReaderOutput(
            "",
            "reader_error",
            self.count_prompt_tokens(req),
            f"gave up after {self.max_retries + 1} attempts to {self.base_url}: {last}",
        )

    def _parse(self, req: ReaderRequest, resp: Any) -> ReaderOutput:
        try:
            content = resp["choices"][0]["message"]["content"]
            if content is None:
                content = ""
            if not isinstance(content, str):
                raise TypeError
        except (KeyError, IndexError, TypeError):
            return ReaderOutput(
                "",
                "reader_error",
                self.count_prompt_tokens(req),
                f"unexpected response (no choices[0].message.content): {str(resp)[:200]}",
            )
        usage = resp.get("usage") if isinstance(resp, dict) else None
        tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        if not isinstance(tokens, int) or isinstance(tokens, bool):
            tokens = self.count_prompt_tokens(req)
        return ReaderOutput(content.strip(), "ok", tokens)

    def generate(self, requests: Sequence[ReaderRequest]) -> list[ReaderOutput]:
        reqs = check_requests(requests)
        if self.concurrency == 1 or len(reqs) <= 1:
            return [self._one(r) for r in reqs]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self._one, reqs))


class _HTTPFailure(Exception):
    def __init__(self, code: int, detail: str):
        super().__init__(f"HTTP {code}: {detail}")
        self.code, self.detail = code, detail


def _error_message(e: "urllib.error.HTTPError") -> str:
    try:
        raw = e.read()
    except Exception:
        return str(e.reason)
    try:
        body = json.loads(raw)
        err = body.get("error", body) if isinstance(body, dict) else body
        if isinstance(err, dict):
            return str(err.get("message") or err.get("code") or err)
        return str(err)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return raw[:300].decode("utf-8", "replace") or str(e.reason)
