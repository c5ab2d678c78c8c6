"""The one HTTP client (rageval.http) and the OpenAI-compatible reader against a fault-injecting 127.0.0.1 server.

Every fault ends in a correct result, a counted status or a typed error within the
deadline: never a hang, never an exception other than HttpError from the client,
never an exception at all from the reader.
"""

import threading
import time

import pytest
from fault_http import FaultServer, chat_answer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rageval.http import ERROR_KINDS, HttpClient, HttpError, parse_retry_after
from rageval.readers import ReaderRequest
from rageval.readers.openai_compat import OpenAIReader
from rageval.types import Unit

MARGIN = 1.5  # seconds of slack over a deadline (thread start, cancellation, a loaded 2-core machine)


@pytest.fixture
def server():
    s = FaultServer()
    yield s
    s.close()


@pytest.fixture
def other():
    s = FaultServer()
    yield s
    s.close()


def _client(server, **kw):
    sleeps: list[float] = []
    kw.setdefault("sleep", sleeps.append)
    kw.setdefault("timeout", 2.0)
    kw.setdefault("max_retries", 0)
    c = HttpClient(server.url, **kw)
    return c, sleeps


def _fails(client, kind, *, status=None):
    with pytest.raises(HttpError) as info:
        client.post_json("chat/completions", {"x": 1})
    err = info.value
    assert err.kind == kind, err
    assert err.status == status
    return err


# -- the happy path --------------------------------------------------------------------------


def test_ok_answer_path_and_key(server):
    c, sleeps = _client(server, api_key="sk-test")
    with c:
        data = c.post_json("/chat/completions", {"model": "m", "é": "ü"})
    assert data["choices"][0]["message"]["content"] == "echo [1]."
    req = server.requests[0]
    assert req["method"] == "POST" and req["path"] == "/v1/chat/completions"
    assert req["headers"]["authorization"] == "Bearer sk-test"
    assert req["headers"]["content-type"] == "application/json"
    assert req["body"] == {"model": "m", "é": "ü"}
    assert sleeps == [] and c.stats() == {"requests": 1, "attempts": 1, "retries": 0, "ok": 1, "failed": 0}


def test_no_key_no_authorization_header(server):
    c, _ = _client(server)
    c.post_json("chat/completions", {})
    c.close()
    assert "authorization" not in server.requests[0]["headers"]


# -- total deadline ---------------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["drip_body", "drip_head", "stall"])
def test_total_deadline_holds_against_slow_servers(server, fault):
    """A server dripping one byte every 0.8 s (body or status line) or saying nothing: timeout=1 ends at ~1 s."""
    server.play((fault, {"interval": 0.8}))
    c, _ = _client(server, timeout=1.0)
    t0 = time.monotonic()
    err = _fails(c, "timeout")
    elapsed = time.monotonic() - t0
    c.close()
    assert 0.9 <= elapsed < 1.0 + MARGIN, elapsed
    assert "total deadline" in err.detail and err.attempts == 1


def test_deadline_is_per_attempt_and_the_whole_call_is_bounded(server):
    server.play(("drip_body", {"interval": 0.3}), ("drip_body", {"interval": 0.3}))
    c, sleeps = _client(server, timeout=0.5, max_retries=1, backoff=0.05)
    t0 = time.monotonic()
    err = _fails(c, "timeout")
    elapsed = time.monotonic() - t0
    c.close()
    assert err.attempts == 2 and sleeps == [0.05]
    assert elapsed < 2 * 0.5 + MARGIN, elapsed
    assert "after 2 attempts" in str(err)


# -- protocol and decoding errors: retried, then typed ----------------------------------------


@pytest.mark.parametrize(
    "fault,kind",
    [
        ("short_body", "protocol"),
        ("broken_status", "protocol"),
        ("reset", "protocol"),
        ("close", "protocol"),
        ("non_utf8", "decode"),
        ("non_json", "json"),
        (("ok", {"body": b"[" * 200_000 + b"]" * 200_000}), "json"),
    ],
)
def test_broken_answers_are_retried_then_typed(server, fault, kind):
    server.play(fault, fault, fault)
    c, sleeps = _client(server, max_retries=2, backoff=0.01)
    err = _fails(c, kind)
    c.close()
    assert err.attempts == 3 and len(server.requests) == 3 and sleeps == [0.01, 0.02]
    assert err.retryable and str(err).startswith(f"POST {server.url}/chat/completions: ")


@pytest.mark.parametrize("fault", ["short_body", "broken_status", "reset", "close", "non_utf8", "non_json"])
def test_one_broken_answer_then_ok_is_ok(server, fault):
    server.play(fault)
    c, sleeps = _client(server, max_retries=1, backoff=0.01)
    assert c.post_json("chat/completions", {})["usage"]["prompt_tokens"] == 321
    c.close()
    assert sleeps == [0.01] and c.stats()["retries"] == 1


def test_broken_status_line_variants(server):
    for line in (b"GARBAGE\r\n\r\n", b"HTTP/1.1 2000 OK\r\n\r\n", b"\x00\xff\xfe\r\n\r\n"):
        server.play(("broken_status", {"line": line}))
        c, _ = _client(server)
        _fails(c, "protocol")
        c.close()


def test_connection_refused_is_a_connect_error():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    sleeps = []
    c = HttpClient(f"http://127.0.0.1:{port}/v1", timeout=2, max_retries=1, backoff=0.01, sleep=sleeps.append)
    err = _fails(c, "connect")
    c.close()
    assert err.attempts == 2 and sleeps == [0.01]


# -- statuses -----------------------------------------------------------------------------------


def test_500_then_ok(server):
    server.play(("status", {"code": 500, "message": "boom"}))
    c, sleeps = _client(server, max_retries=3, backoff=0.5)
    assert "choices" in c.post_json("chat/completions", {})
    c.close()
    assert sleeps == [0.5] and len(server.requests) == 2


def test_429_retry_after_seconds_and_cap(server):
    server.play(
        ("status", {"code": 429, "headers": {"Retry-After": "7"}}),
        ("status", {"code": 429, "headers": {"Retry-After": "99"}}),
        ("status", {"code": 503, "headers": {"Retry-After": "0"}}),
    )
    c, sleeps = _client(server, max_retries=3, backoff=0.1, max_backoff=10)
    c.post_json("chat/completions", {})
    c.close()
    # 7 honoured, 99 capped at max_backoff, 0 never shortens the exponential wait (0.1 * 2**2)
    assert sleeps == [7.0, 10.0, 0.4]


def test_retry_after_http_date():
    assert parse_retry_after("Thu, 01 Jan 1970 00:01:00 GMT", now=30.0) == 30.0
    assert parse_retry_after("Thu, 01 Jan 1970 00:01:00 GMT", now=100.0) == 0.0  # in the past: no wait
    assert parse_retry_after("nan") is None and parse_retry_after("inf") is None and parse_retry_after("") is None


def test_client_errors_are_not_retried_and_keep_the_message(server):
    server.play(("status", {"code": 401, "message": "invalid api key"}))
    c, sleeps = _client(server, max_retries=3)
    err = _fails(c, "status", status=401)
    c.close()
    assert not err.retryable and err.attempts == 1 and sleeps == []
    assert err.detail == "HTTP 401: invalid api key"


def test_a_body_over_the_cap_is_refused(server):
    server.play(("big", {"size": 5000}))
    c, sleeps = _client(server, max_response_bytes=1000, max_retries=2)
    err = _fails(c, "too_large", status=200)
    c.close()
    assert sleeps == [] and "max_response_bytes" in err.detail


# -- redirects and credentials -------------------------------------------------------------------


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_redirect_to_another_origin_is_an_error_and_the_key_stays_home(server, other, code):
    server.play(("redirect", {"code": code, "location": f"{other.url}/chat/completions"}))
    c, sleeps = _client(server, api_key="sk-secret", max_retries=2)
    err = _fails(c, "redirect", status=code)
    c.close()
    assert other.requests == []  # nothing, so no key, reached the other origin
    assert not err.retryable and sleeps == []
    assert other.origin.replace("http://", "") in err.detail and "another origin" in err.detail


def test_redirect_to_another_port_of_the_same_host_is_another_origin(server, other):
    assert other.port != server.port
    server.play(("redirect", {"code": 307, "location": f"http://127.0.0.1:{other.port}/v1/chat/completions"}))
    c, _ = _client(server, api_key="sk-secret")
    _fails(c, "redirect", status=307)
    c.close()
    assert other.requests == []


def test_same_origin_307_is_followed_with_method_and_body(server):
    server.play(("redirect", {"code": 307, "location": "/v2/chat/completions"}))
    c, _ = _client(server, api_key="sk-k")
    assert "choices" in c.post_json("chat/completions", {"a": 1})
    c.close()
    _first, second = server.requests
    assert second["method"] == "POST" and second["path"] == "/v2/chat/completions" and second["body"] == {"a": 1}
    assert second["headers"]["authorization"] == "Bearer sk-k"


@pytest.mark.parametrize("location", ["http://127.0.0.1:notaport/x", "http://[::1/x", "http://exa mple/\x00"])
def test_redirect_to_an_unusable_location_is_a_redirect_error(server, location):
    server.play(("redirect", {"code": 307, "location": location}))
    c, _ = _client(server)
    with pytest.raises(HttpError) as info:
        c.post_json("chat/completions", {})
    c.close()
    # httpx itself rejects a malformed Location (a protocol error, retried like one); ours refuses the rest
    assert info.value.kind in ("protocol", "redirect") and "location" in info.value.detail.lower()
    assert len(server.requests) == 1


def test_same_origin_302_is_not_followed(server):
    server.play(("redirect", {"code": 302, "location": "/login"}))
    c, _ = _client(server)
    err = _fails(c, "redirect", status=302)
    c.close()
    assert "turn the POST into a GET" in err.detail and len(server.requests) == 1


def test_redirect_loop_is_bounded(server):
    server.play(*[("redirect", {"code": 307, "location": "/v1/chat/completions"})] * 10)
    c, _ = _client(server)
    err = _fails(c, "redirect")
    c.close()
    assert "more than 5 redirects" in err.detail and len(server.requests) == 6


def test_path_cannot_leave_the_origin(server):
    c, _ = _client(server, api_key="sk")
    for bad in ("http://evil.example/x", "//evil.example/x", "a\r\nHost: evil"):
        with pytest.raises(ValueError, match="must be relative to base_url"):
            c.post_json(bad, {})
    c.close()
    assert server.requests == []


@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"base_url": "127.0.0.1:8000"}, "must start with http"),
        ({"base_url": "http://user:pw@127.0.0.1:1/v1"}, "carries credentials"),
        ({"base_url": "http:///v1"}, "names no host"),
        ({"timeout": 0}, "timeout must be a positive number"),
        ({"timeout": float("nan")}, "timeout must be"),
        ({"timeout": True}, "timeout must be"),
        ({"max_retries": -1}, "max_retries must be a non-negative integer"),
        ({"max_retries": 1.5}, "max_retries must be"),
        ({"max_connections": 0}, "max_connections must be a positive integer"),
        ({"api_key": ""}, "api_key must be"),
        ({"api_key": "a\nb"}, "api_key must be"),
        ({"api_key": "clé"}, "api_key must be"),
        ({"base_url": "http://127.0.0.1:port/v1"}, "port that is not a number"),
    ],
)
def test_configuration_errors(kw, msg):
    kw = {"base_url": "http://127.0.0.1:1/v1", **kw}
    with pytest.raises(ValueError, match=msg):
        HttpClient(kw.pop("base_url"), **kw)


def test_payload_must_be_json(server):
    c, _ = _client(server)
    with pytest.raises(ValueError, match="not JSON-serialisable"):
        c.post_json("x", {"a": float("nan")})
    with pytest.raises(ValueError, match="not JSON-serialisable"):
        c.post_json("x", {"a": object()})
    c.close()


# -- threads and lifecycle ----------------------------------------------------------------------


def test_thread_safe_under_bounded_concurrency(server):
    server.play(*[("status", {"code": 503})] * 4)
    c, _ = _client(server, max_connections=4, max_retries=3, backoff=0.0)
    results, errors = [], []

    def work(i):
        try:
            results.append(c.post_json("chat/completions", {"i": i}))
        except Exception as e:  # noqa: BLE001 - collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    c.close()
    assert errors == [] and len(results) == 12
    bodies = [r["body"]["i"] for r in server.requests]
    assert len(bodies) == 16 and set(bodies) == set(range(12))  # 12 requests, four of them sent twice
    s = c.stats()
    assert s["requests"] == 12 and s["ok"] == 12 and s["retries"] == 4 and s["attempts"] == 16


def test_close_is_idempotent_and_stops_the_thread(server):
    c, _ = _client(server)
    c.post_json("x", {})
    thread = c._thread
    c.close()
    c.close()
    assert not thread.is_alive()
    with pytest.raises(RuntimeError, match="closed"):
        c.post_json("x", {})


# -- the reader: every fault is a status, never an exception -----------------------------------


def _reqs(n=1):
    units = (Unit("Paris is the capital of France.", title="Paris"), Unit("The Seine flows through Paris."))
    return [ReaderRequest(f"q{i}", f"Question {i}: capital of France?", units) for i in range(n)]


READER_CASES = [
    # fault(s) played, expected status, a piece of the error
    (["drip_body", "drip_body"], "reader_error", "timed out"),
    (["drip_head", "drip_head"], "reader_error", "timed out"),
    (["stall", "stall"], "reader_error", "timed out"),
    (["short_body", "short_body"], "reader_error", "gave up after 2 attempts"),
    (["broken_status", "broken_status"], "reader_error", "gave up after 2 attempts"),
    (["reset", "reset"], "reader_error", "gave up after 2 attempts"),
    (["non_utf8", "non_utf8"], "reader_error", "not UTF-8"),
    (["non_json", "non_json"], "reader_error", "not JSON"),
    ([("status", {"code": 500, "message": "boom"})] * 2, "reader_error", "HTTP 500: boom"),
    ([("status", {"code": 400, "message": "maximum context length is 8"})], "prompt_overflow", "too long"),
    ([("status", {"code": 403, "message": "forbidden"})], "reader_error", "HTTP 403 from"),
    ([("ok", {"body": b'{"choices": []}'})], "reader_error", "unexpected response"),
    ([("ok", {"body": b"null"})], "reader_error", "unexpected response"),
    (["reset"], "ok", None),
    ([("status", {"code": 429, "headers": {"Retry-After": "1"}})], "ok", None),
]


@pytest.mark.parametrize("faults,status,piece", READER_CASES)
def test_reader_turns_every_fault_into_a_status(server, faults, status, piece):
    server.play(*[(f, {"interval": 0.8}) if f in ("drip_body", "drip_head") else f for f in faults])
    sleeps = []
    r = OpenAIReader("m", base_url=server.url, timeout=1.0, max_retries=1, backoff=0.01, sleep=sleeps.append)
    t0 = time.monotonic()
    out = r.generate(_reqs())[0]
    elapsed = time.monotonic() - t0
    r.close()
    assert out.status == status, out
    if piece is not None:
        assert piece in out.error, out.error
        assert out.input_tokens == r.count_prompt_tokens(_reqs()[0])
    else:
        assert out.text == "echo [1]." and out.input_tokens == 321
    assert elapsed < 2 * 1.0 + 1.0 + MARGIN  # two attempts, each within its deadline, plus the waits


def test_reader_redirect_to_another_origin_is_a_reader_error_without_the_key(server, other, monkeypatch):
    monkeypatch.setenv("RAGEVAL_FAULT_KEY", "sk-never-leaves")
    other.play(("ok", {"body": chat_answer("stolen answer [1].")}))
    server.play(("redirect", {"code": 302, "location": f"{other.url}/chat/completions"}))
    r = OpenAIReader("m", base_url=server.url, api_key_env="RAGEVAL_FAULT_KEY", max_retries=3, sleep=lambda s: None)
    out = r.generate(_reqs())[0]
    r.close()
    assert out.status == "reader_error" and "another origin" in out.error
    assert other.requests == [] and server.requests[0]["headers"]["authorization"] == "Bearer sk-never-leaves"
    assert "sk-never-leaves" not in out.error


def test_reader_mixed_batch_keeps_order_and_counts(server):
    """Four requests, concurrency 2: faults land on some of them, every request gets its own output."""
    server.play("non_json", ("status", {"code": 404, "message": "no such model"}))
    r = OpenAIReader("m", base_url=server.url, max_retries=0, concurrency=2, sleep=lambda s: None)
    out = r.generate(_reqs(4))
    r.close()
    assert sorted(o.status for o in out) == ["ok", "ok", "reader_error", "reader_error"]
    assert len(server.requests) == 4


# -- a whole suite over a misbehaving server: counted statuses, no abort -------------------------


def test_a_suite_over_a_misbehaving_server_counts_every_fault_and_retries_them(tmp_path, server, other, monkeypatch):
    import json

    from rageval.suite.load import load_suite
    from rageval.suite.run import run_suite

    monkeypatch.setenv("RAGEVAL_FAULT_KEY", "sk-suite-secret")
    faults = [
        "short_body",
        "broken_status",
        "reset",
        "non_utf8",
        "non_json",
        ("drip_body", {"interval": 0.8}),
        ("redirect", {"code": 302, "location": f"{other.url}/chat/completions"}),
    ]
    server.play(*faults)
    p = tmp_path / "s.yaml"
    p.write_text(f"""\
name: faults
dataset: {{name: hotpotqa, limit: {len(faults)}}}
retrieval: {{method: bm25, k: 3}}
settings:
  - {{compressor: identity}}
reader:
  backend: openai
  params: {{model: m, base_url: '{server.url}', api_key_env: RAGEVAL_FAULT_KEY, max_retries: 0, timeout: 1}}
judge: {{spec: lexical}}
output_dir: {tmp_path / "out"}
""")
    t0 = time.monotonic()
    res = run_suite(load_suite(p), progress=False, build_report=False)
    assert time.monotonic() - t0 < 1.0 + 10  # the drip is cut at its 1 s deadline
    assert res.status_counts == {"reader_error": len(faults)}
    recs = [json.loads(x) for x in (res.out_dir / "records.jsonl").read_text().splitlines()]
    errors = " | ".join(r["error"] for r in recs)
    for piece in ("protocol error", "not UTF-8", "not JSON", "timed out", "another origin"):
        assert piece in errors, errors
    assert other.requests == [] and "sk-suite-secret" not in errors
    res = run_suite(load_suite(p), progress=False, build_report=False)  # the server behaves now
    assert res.status_counts == {"ok": len(faults)} and res.retried == len(faults)


def test_closing_while_a_request_waits_ends_it_at_once(server):
    server.play("stall")
    c, _ = _client(server, timeout=10.0)
    got = []
    t = threading.Thread(target=lambda: got.append(_catch(c)))
    t0 = time.monotonic()
    t.start()
    time.sleep(0.3)
    c.close()
    t.join(timeout=5)
    assert not t.is_alive() and time.monotonic() - t0 < 3
    assert isinstance(got[0], HttpError) and got[0].kind == "closed" and not got[0].retryable


def _catch(client):
    try:
        return client.post_json("chat/completions", {})
    except HttpError as e:
        return e


# -- whatever the server says: JSON or an HttpError, within the deadline --------------------------

_HEAD = st.sampled_from(
    [
        b"HTTP/1.1 200 OK\r\n",
        b"HTTP/1.1 500 Oops\r\n",
        b"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/x\r\n",
        b"HTTP/1.0 200\r\n",
        b"",
    ]
)
_HEADERS = st.lists(
    st.sampled_from(
        [
            b"Content-Length: 5\r\n",
            b"Content-Length: -1\r\n",
            b"Content-Length: 99999999999999999999\r\n",
            b"Transfer-Encoding: chunked\r\n",
            b"Content-Encoding: gzip\r\n",
            b"Retry-After: nope\r\n",
            b"Content-Type: application/json\r\n",
        ]
    ),
    max_size=3,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(head=_HEAD, headers=_HEADERS, gap=st.sampled_from([b"\r\n", b"", b"\n"]), body=st.binary(max_size=64))
def test_any_answer_is_json_or_an_http_error(server, head, headers, gap, body):
    server.play(("raw", {"data": head + b"".join(headers) + gap + body}))
    c, _ = _client(server, timeout=1.0)
    t0 = time.monotonic()
    try:
        got = c.post_json("chat/completions", {})
    except HttpError as err:
        assert err.kind in ERROR_KINDS
    else:
        assert got is None or isinstance(got, (dict, list, str, int, float, bool))
    finally:
        c.close()
    assert time.monotonic() - t0 < 1.0 + MARGIN
