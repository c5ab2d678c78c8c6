"""The OpenAI-compatible reader: chat completions over HTTP (vLLM, TGI, llama.cpp server, …).

``OpenAIReader(model, base_url="http://127.0.0.1:8000/v1")`` posts each request's
messages to ``{base_url}/chat/completions`` with ``temperature`` 0 (greedy) and
``max_tokens``.  The API key is read from the environment variable named by
``api_key_env`` when the first batch is sent; without it no ``Authorization``
header is sent (local servers need none).  Unnamed (the default), the variable is
``OPENAI_API_KEY`` and its key goes to OpenAI's own API (``https://api.openai.com``)
only — never to a local vLLM or llama.cpp server or any other endpoint; a named
variable (``api_key_env: OPENAI_API_KEY`` included) goes to the configured
endpoints (:func:`rageval.http.urls.key_env_for`).  The key never
appears in :meth:`info` and never leaves ``base_url``'s origin, and it is sent only
over ``https://`` or to a loopback host (``localhost``, ``127.0.0.0/8``, ``::1``):
when a named variable is set and an endpoint is plain ``http://`` elsewhere, the
reader is refused (at ``rageval validate`` and when the suite is loaded) unless
``allow_insecure_key: true``.  A ``base_url`` with credentials in it
(``user:password@``, a query such as ``?api-key=...``) is refused, its secret not
printed.

``base_url`` may be a list of endpoints (replicas of the same model, e.g. vLLM
servers): requests go through :class:`rageval.http.EndpointPool`, one
:class:`rageval.http.HttpClient` per endpoint (created on first use), at most
``concurrency`` requests in flight in all and at most ``endpoint_concurrency``
(default: ``concurrency``) to one endpoint; each request goes to the endpoint with
the fewest requests in flight (ties: round robin).  An endpoint that gives up on a
request with a transient failure (after its own retries) is passed over for
``cooldown`` seconds and the request is sent to another endpoint; see
:class:`~rageval.http.EndpointPool`.  Each client gives:

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
* a response without a choice of ``index`` 0 with ``message.content``
  (:func:`rageval.http.chat.first_choice`) is a ``reader_error``, and so is a
  reply that is no answer: ``content: null``, OpenAI's refusal shape
  (``message.refusal``), ``tool_calls`` instead of text, or ``finish_reason:
  content_filter`` — the record's ``error`` names which (and the refusal's words).
  Text is kept as sent, except lone surrogates (``"\\ud800"``, valid JSON but not
  Unicode), which become U+FFFD;
* ``finish_reason: length`` (cut at ``max_tokens``) stays the answer, flagged:
  the record's ``extra.truncated`` (counted per setting in ``run_stats.json``);
* the reply's ``model``, when it is not the model asked for, is the record's
  ``extra.served_model``.

No failure of one request escapes as an exception: every request gets an output.
``input_tokens`` is the server's ``usage.prompt_tokens`` when it reports a count (an
integer in ``[0, 10**8]``), else the suite tokenizer's count of the rendered prompt
(a reported value that is no count is kept in ``extra.prompt_tokens_refused``).  Requests are sent
``concurrency`` at a time (threads), results in request order; with greedy
decoding (``temperature`` 0) on replicas of one model the outputs are those of
``concurrency`` 1 on one endpoint.

:meth:`info` (the reader's part of every record's input hash) holds the model
name, ``max_tokens``, ``temperature`` and ``extra_body`` — what decides an answer
— and not the endpoints or the transport options (``base_url``, ``concurrency``,
``endpoint_concurrency``, ``timeout``, retries, ``cooldown``, ...; the registry's
``transport`` list): the same model behind one endpoint or two gives the same
records, so a cache made with one is reused with the other.  The endpoints are in
the run's manifest (the suite's configuration).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import Field, field_validator, model_validator

from rageval.http import EndpointPool, HttpError, endpoint_list
from rageval.http.chat import finish_reason, first_choice, served_model, usage_count
from rageval.http.errors import show_reply
from rageval.http.urls import DEFAULT_KEY, DefaultKeyEnv, check_key_transport
from rageval.io import scrub_surrogates
from rageval.readers.base import Reader, ReaderOutput, ReaderRequest, check_requests
from rageval.readers.spec import ReaderParams, finite_non_negative, positive_int
from rageval.readers.template import PromptTemplate
from rageval.token_counts import show_number

__all__ = ["OpenAIParams", "OpenAIReader"]

_OVERFLOW_HINTS = ("context length", "context_length", "maximum context", "too long", "context window")


class OpenAIParams(ReaderParams):
    """The openai reader's options (checked without a connection)."""

    what = "openai reader"

    model: str = Field(description="the served model (e.g. the name vLLM was started with)")
    base_url: Any = Field(description="the endpoint, or a list of replicas (http:// or https://, e.g. .../v1)")
    api_key_env: str | None = Field("OPENAI_API_KEY", description="the variable that holds the API key (null: none)")
    max_tokens: int = Field(256, description="tokens generated at most")
    temperature: float = Field(0.0, description="sampling temperature (0: greedy)")
    timeout: float = Field(60.0, description="total deadline per attempt, seconds")
    max_retries: int = Field(3, description="retries of a transient failure")
    backoff: float = Field(1.0, description="first retry delay, seconds (doubled per attempt)")
    max_backoff: float = Field(30.0, description="longest retry delay, seconds")
    concurrency: int = Field(1, description="requests in flight in all")
    endpoint_concurrency: int | None = Field(None, description="requests in flight per endpoint (default: all)")
    cooldown: float = Field(30.0, description="seconds a failing endpoint is passed over")
    extra_body: Any = Field(None, description="extra request fields (a mapping)")
    trust_env: Any = Field(False, description="use the environment's proxy settings")
    allow_insecure_key: bool = Field(
        False, description="send the key over plain http to a host that is not loopback (default: refused)"
    )

    _positive = field_validator("max_tokens", "concurrency", mode="before")(positive_int)
    _numbers = field_validator("timeout", "backoff", "max_backoff", "temperature", "cooldown", mode="before")(
        finite_non_negative
    )

    @field_validator("model", mode="before")
    @classmethod
    def _model(cls, value: Any) -> Any:
        if not isinstance(value, str) or not value.strip():
            raise ValueError("openai reader: 'model' must name the served model (e.g. the name vLLM was started with)")
        return value

    @field_validator("base_url", mode="before")
    @classmethod
    def _base_url(cls, value: Any) -> Any:
        endpoint_list(value, what="openai reader")  # its ValueError names the fix
        return value

    @field_validator("api_key_env", mode="before")
    @classmethod
    def _api_key_env(cls, value: Any) -> Any:
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValueError(f"openai reader: api_key_env must name an environment variable (or null), got {value!r}")
        return value

    @model_validator(mode="after")
    def _key_transport(self) -> OpenAIParams:
        # unnamed (the default), $OPENAI_API_KEY goes to OpenAI's own API only (https): nothing to check
        if "api_key_env" in self.model_fields_set and self.api_key_env and os.environ.get(self.api_key_env):
            check_key_transport(
                endpoint_list(self.base_url, what="openai reader"),
                what="openai reader",
                key_from=f"${self.api_key_env}",
                allow_insecure_key=self.allow_insecure_key,
            )
        return self

    @field_validator("endpoint_concurrency", mode="before")
    @classmethod
    def _endpoint_concurrency(cls, value: Any, info: Any) -> Any:
        return value if value is None else positive_int(cls, value, info)

    @field_validator("max_retries", mode="before")
    @classmethod
    def _max_retries(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"openai reader: max_retries must be a non-negative integer, got {value!r}")
        return value

    @field_validator("timeout", mode="after")
    @classmethod
    def _timeout(cls, value: float) -> float:
        if value == 0:
            raise ValueError("openai reader: timeout must be a positive number of seconds, got 0")
        return value

    @field_validator("extra_body", mode="before")
    @classmethod
    def _extra_body(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, Mapping):
            raise ValueError(f"openai reader: extra_body must be a mapping, got {type(value).__name__}")
        return value


def _clip(value: Any, n: int = 200) -> str:
    return show_reply(value, n)


def reply_text(resp: Any) -> tuple[str, str | None]:
    """The answer text of a chat-completions reply and None, or ``("", why it is no answer)``.

    The answer is choice 0's (:func:`rageval.http.chat.first_choice`: the choice whose ``index`` is 0).  No
    answer: no such choice or no ``message``; a refusal (``message.refusal``); ``tool_calls`` instead of text
    (or ``finish_reason`` ``tool_calls``/``function_call``); ``finish_reason: content_filter`` (content withheld,
    whatever is left of it); ``content`` null or not text.  ``finish_reason: length`` is an answer (cut at
    ``max_tokens``: the caller flags it).
    """
    choice, missing = first_choice(resp)
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(choice, dict) or not isinstance(message, dict):
        why = f"; {missing}" if missing and missing != "no choices" else ""
        return "", f"unexpected response (no choices[0].message.content{why}): {_clip(resp)}"
    content, refusal = message.get("content"), message.get("refusal")
    finish = finish_reason(choice)
    if isinstance(refusal, str) and refusal.strip():
        return "", f"the model refused: {_clip(refusal.strip())}"
    if refusal not in (None, "", False):
        return "", f"the model refused (message.refusal {_clip(refusal, 80)})"
    if message.get("tool_calls") or message.get("function_call") or finish in ("tool_calls", "function_call"):
        return "", "the model answered with tool calls, not text (no tools were offered)"
    if finish == "content_filter":
        return "", "the server's content filter withheld the answer (finish_reason content_filter)"
    if isinstance(content, str):
        return content, None
    if content is None:
        why = f" (finish_reason {_clip(choice.get('finish_reason'), 40)})" if choice.get("finish_reason") else ""
        return "", f"empty reply: choices[0].message.content is null{why}"
    return "", f"unexpected response (choices[0].message.content is not text): {_clip(content, 120)}"


class OpenAIReader(Reader):
    """Any OpenAI-compatible chat-completions endpoint."""

    name = "openai"
    needs_model = True
    Params = OpenAIParams

    def __init__(
        self,
        model: str,
        *,
        base_url: str | Sequence[str],
        api_key_env: str | None = DEFAULT_KEY,
        template: PromptTemplate | Mapping[str, Any] | None = None,
        max_tokens: int = 256,
        temperature: float = 0.0,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        concurrency: int = 1,
        endpoint_concurrency: int | None = None,
        cooldown: float = 30.0,
        extra_body: Mapping[str, Any] | None = None,
        tokenizer: Any = "regex",
        trust_env: bool = False,
        allow_insecure_key: bool = False,
        sleep: Callable[[float], None] = time.sleep,
    ):
        super().__init__(template=template, tokenizer=tokenizer)
        named = {} if isinstance(api_key_env, DefaultKeyEnv) else {"api_key_env": api_key_env}
        self.Params.check(
            model=model,
            base_url=base_url,
            **named,
            max_tokens=max_tokens,
            temperature=temperature,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            max_backoff=max_backoff,
            concurrency=concurrency,
            endpoint_concurrency=endpoint_concurrency,
            cooldown=cooldown,
            extra_body=extra_body,
            trust_env=trust_env,
            allow_insecure_key=allow_insecure_key,
        )

        base_urls = endpoint_list(base_url, what="openai reader")
        if endpoint_concurrency is None:
            endpoint_concurrency = concurrency
        self.model_name = model
        self.base_urls = base_urls
        self.base_url = base_urls[0]  # the first (the only one, for a single endpoint)
        self.api_key_env = api_key_env
        self.max_tokens, self.temperature = max_tokens, float(temperature)
        self.timeout, self.max_retries = float(timeout), max_retries
        self.backoff, self.max_backoff = float(backoff), float(max_backoff)
        self.concurrency, self.endpoint_concurrency = concurrency, endpoint_concurrency
        self.cooldown = float(cooldown)
        self.extra_body = dict(extra_body or {})
        self.trust_env = bool(trust_env)
        self._sleep = sleep
        self._http = EndpointPool(
            self.base_urls,
            per_endpoint=min(self.endpoint_concurrency, self.concurrency),
            cooldown=self.cooldown,
            api_key_env=self.api_key_env,
            timeout=self.timeout,
            max_retries=self.max_retries,
            backoff=self.backoff,
            max_backoff=self.max_backoff,
            trust_env=self.trust_env,
            allow_insecure_key=bool(allow_insecure_key),
            sleep=self._sleep,
        )

    def params(self) -> dict[str, Any]:
        return {  # what decides an answer; not the endpoints (see the module doc)
            "model": self.model_name,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "extra_body": self.extra_body,
        }

    # -- the HTTP client -------------------------------------------------------------------
    @property
    def min_batch(self) -> int:
        """The fewest requests per :meth:`generate` call that keep ``concurrency`` busy (the suite runner
        hands the reader batches at least this large)."""
        return self.concurrency

    def client(self, i: int = 0):
        """Endpoint ``i``'s :class:`rageval.http.HttpClient`, created on first use (the key is read then)."""
        return self._http.client(i)

    def endpoint_stats(self) -> dict[str, dict[str, int]]:
        """Per endpoint: requests sent, ok, failed, failed over, most in flight at once (see EndpointPool)."""
        return self._http.stats()

    def close(self) -> None:
        """Close the HTTP connections (a later :meth:`generate` opens new ones)."""
        self._http.close()

    # -- one request -------------------------------------------------------------------------
    def _one(self, req: ReaderRequest) -> ReaderOutput:
        messages = self.template.messages(req.question, req.units)
        body = {
            "model": self.model_name,
            "messages": messages,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            **self.extra_body,
        }
        try:
            resp = self._http.post_json("chat/completions", body)
        except HttpError as e:
            tokens = self.count_prompt_tokens(req)
            if e.kind == "status" and e.status == 400 and any(h in e.detail.lower() for h in _OVERFLOW_HINTS):
                return ReaderOutput(
                    "", "prompt_overflow", tokens, f"server rejected the prompt as too long: {e.detail}"
                )
            where = e.endpoints[-1] if e.endpoints else self.base_url
            if len(e.endpoints) > 1:
                msg = f"gave up after {e.attempts} attempts on {len(e.endpoints)} endpoints: {e.detail}"
            elif e.attempts > 1:
                msg = f"gave up after {e.attempts} attempts to {where}: {e.detail}"
            elif e.kind == "status":
                msg = f"{e.detail.replace(f'HTTP {e.status}', f'HTTP {e.status} from {where}', 1)}"
            else:
                msg = f"{e.kind} error from {where}: {e.detail}"
            return ReaderOutput("", "reader_error", tokens, msg)
        return self._parse(req, resp)

    def _parse(self, req: ReaderRequest, resp: Any) -> ReaderOutput:
        content, problem = reply_text(resp)
        if problem is not None:
            return ReaderOutput("", "reader_error", self.count_prompt_tokens(req), problem)
        extra: dict[str, Any] = {}
        tokens, refused = usage_count(resp, "prompt_tokens")
        if tokens is None:  # absent, or no count (10**30, -1, 3.5, text): the suite tokenizer's count instead
            tokens = self.count_prompt_tokens(req)
            if refused is not None:
                extra["prompt_tokens_refused"] = show_number(refused) if isinstance(refused, int) else _clip(refused)
        choice, _ = first_choice(resp)
        if choice is not None and finish_reason(choice) == "length":  # cut at max_tokens: kept, flagged, counted
            extra["truncated"] = True
        served = served_model(resp)
        if served is not None and served != self.model_name:  # the same model: nothing added to the record
            extra["served_model"] = scrub_surrogates(served)
        return ReaderOutput(scrub_surrogates(content).strip(), "ok", tokens, extra=extra)

    def generate(self, requests: Sequence[ReaderRequest]) -> list[ReaderOutput]:
        reqs = check_requests(requests)
        if self.concurrency == 1 or len(reqs) <= 1:
            return [self._one(r) for r in reqs]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self._one, reqs))
