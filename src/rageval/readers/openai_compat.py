"""The OpenAI-compatible reader: chat completions over HTTP (vLLM, TGI, llama.cpp server, …).

``OpenAIReader(model, base_url="http://127.0.0.1:8000/v1")`` posts each request's
messages to ``{base_url}/chat/completions`` with ``temperature`` 0 (greedy) and
``max_tokens``.  The API key is read from the environment variable named by
``api_key_env`` (default ``OPENAI_API_KEY``) when the first batch is sent; without
it no ``Authorization`` header is sent (local servers need none).  The key never
appears in :meth:`info` and never leaves ``base_url``'s origin.

HTTP goes through :class:`rageval.http.HttpClient` (one client per reader, created
on first use, ``concurrency`` connections), which gives:

* a **total deadline** of ``timeout`` seconds per attempt (not per read: a server
  that drips bytes cannot hold a request past it);
* **retries** of transient failures — timeouts, refused or reset connections,
  protocol errors (broken status line, body shorter than its Content-Length), a
  body that is not UTF-8 or not JSON, HTTP 408/409/429/5xx — up to ``max_retries``
  times with exponential backoff (``backoff * 2**attempt`` seconds, capped at
  ``max_backoff``; ``Retry-After`` honoured up to the same cap); after the last
  attempt the request is a ``reader_error`` naming the last failure;
* **no cross-origin redirects**: a redirect to another origin (or any redirect but
  a same-origin 307/308) is a ``reader_error`` at once, and the key is never sent
  there.

Then:

* HTTP 400 whose message says the prompt is too long (``context length``,
  ``maximum context``, ``too long``, ``context_length_exceeded``) is
  ``prompt_overflow``; any other 4xx is a ``reader_error`` at once (no retry);
* a response without ``choices[0].message.content`` is a ``reader_error``.

No failure of one request escapes as an exception: every request gets an output.
``input_tokens`` is the server's ``usage.prompt_tokens`` when it reports one, else
the suite tokenizer's count of the rendered prompt.  Requests are sent
``concurrency`` at a time (threads), results in request order.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rageval.readers.base import Reader, ReaderOutput, ReaderRequest, check_requests
from rageval.readers.template import PromptTemplate

__all__ = ["OpenAIReader"]

_OVERFLOW_HINTS = ("context length", "context_length", "maximum context", "too long", "context window")


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
        trust_env: bool = False,
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
        for name, num in (
            ("timeout", timeout),
            ("backoff", backoff),
            ("max_backoff", max_backoff),
            ("temperature", temperature),
        ):
            if isinstance(num, bool) or not isinstance(num, (int, float)) or not math.isfinite(num) or num < 0:
                raise ValueError(f"openai reader: {name} must be a finite number >= 0, got {num!r}")
        if timeout == 0:
            raise ValueError("openai reader: timeout must be a positive number of seconds, got 0")
        self.model_name = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.max_tokens, self.temperature = max_tokens, float(temperature)
        self.timeout, self.max_retries = float(timeout), max_retries
        self.backoff, self.max_backoff = float(backoff), float(max_backoff)
        self.concurrency = concurrency
        self.extra_body = dict(extra_body or {})
        self.trust_env = bool(trust_env)
        self._sleep = sleep
        from rageval.http import LazyClient

        self._http = LazyClient(
            self.base_url,
            api_key_env=self.api_key_env,
            timeout=self.timeout,
            max_retries=self.max_retries,
            backoff=self.backoff,
            max_backoff=self.max_backoff,
            max_connections=self.concurrency,
            trust_env=self.trust_env,
            sleep=self._sleep,
        )

    def params(self) -> dict[str, Any]:
        return {
            "model": self.model_name,
            "base_url": self.base_url,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "extra_body": self.extra_body,
        }

    # -- the HTTP client -------------------------------------------------------------------
    def client(self):
        """The reader's :class:`rageval.http.HttpClient`, created on first use (the key is read then)."""
        return self._http.get()

    def close(self) -> None:
        """Close the HTTP connections (a later :meth:`generate` opens new ones)."""
        self._http.close()

    # -- one request -------------------------------------------------------------------------
    def _one(self, req: ReaderRequest) -> ReaderOutput:
        from rageval.http import HttpError

        messages = self.template.messages(req.question, req.units)
        body = {
            "model": self.model_name,
            "messages": messages,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            **self.extra_body,
        }
        try:
            resp = self.client().post_json("chat/completions", body)
        except HttpError as e:
            tokens = self.count_prompt_tokens(req)
            if e.kind == "status" and e.status == 400 and any(h in e.detail.lower() for h in _OVERFLOW_HINTS):
                return ReaderOutput(
                    "", "prompt_overflow", tokens, f"server rejected the prompt as too long: {e.detail}"
                )
            if e.attempts > 1:
                msg = f"gave up after {e.attempts} attempts to {self.base_url}: {e.detail}"
            elif e.kind == "status":
                msg = f"{e.detail.replace(f'HTTP {e.status}', f'HTTP {e.status} from {self.base_url}', 1)}"
            else:
                msg = f"{e.kind} error from {self.base_url}: {e.detail}"
            return ReaderOutput("", "reader_error", tokens, msg)
        return self._parse(req, resp)

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
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
            tokens = self.count_prompt_tokens(req)
        return ReaderOutput(content.strip(), "ok", tokens)

    def generate(self, requests: Sequence[ReaderRequest]) -> list[ReaderOutput]:
        reqs = check_requests(requests)
        if self.concurrency == 1 or len(reqs) <= 1:
            return [self._one(r) for r in reqs]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self._one, reqs))
