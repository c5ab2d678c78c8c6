"""The openai reader over several endpoints (vLLM replicas): order, spread, per-endpoint bound, failover, configs.

Local chat servers on 127.0.0.1 (threads, random ports) answer each request with the question id they find in
it, count the requests they get and record the most they held at once.  Nothing is timed: a server that must
see concurrency waits (at most a few seconds) until that many requests are in flight.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rageval.http import EndpointPool, HttpError, endpoint_list
from rageval.readers import ReaderRequest, get_reader, transport_params
from rageval.readers.openai_compat import OpenAIReader
from rageval.suite.config import SuiteError
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite
from rageval.types import Unit


class _Replica:
    """A chat server: answers ``"answer QID-<n> [1]."`` (else ``"answer #<prompt length> [1]."``); ``status``:
    always that HTTP error instead; ``gather``: hold requests until that many have been in flight at once (or
    ``max_wait`` s pass), so a reader that never sends that many at once cannot get past ``max_in_flight`` < it."""

    def __init__(self, *, status: int | None = None, gather: int = 1, max_wait: float = 5.0):
        self.count = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.auth: list[str | None] = []
        self.cond = threading.Condition()
        replica = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as vLLM serves

            def setup(self):
                super().setup()
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                with replica.cond:
                    replica.count += 1
                    replica.auth.append(self.headers.get("Authorization"))
                    replica.in_flight += 1
                    replica.max_in_flight = max(replica.max_in_flight, replica.in_flight)
                    replica.cond.notify_all()
                    replica.cond.wait_for(lambda: replica.max_in_flight >= gather, timeout=max_wait)
                    replica.in_flight -= 1
                if status is not None:
                    code, data = status, {"error": {"message": f"replica says {status}"}}
                else:
                    found = re.search(r"QID-\d+", body["messages"][-1]["content"])
                    qid = found.group(0) if found else f"#{len(body['messages'][-1]['content'])}"
                    data = {"choices": [{"message": {"content": f"answer {qid} [1]."}}], "usage": {"prompt_tokens": 7}}
                raw = json.dumps(data).encode()
                self.send_response(code if status is not None else 200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def _dead_url() -> str:
    """A port nothing listens on (bound, then closed): connections are refused at once."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def replicas():
    made: list[_Replica] = []

    def make(**kw) -> _Replica:
        made.append(_Replica(**kw))
        return made[-1]

    yield make
    for r in made:
        r.close()


def _reqs(n: int) -> list[ReaderRequest]:
    units = (Unit("Paris is the capital of France.", title="Paris"),)
    return [ReaderRequest(f"q{i}", f"QID-{i}: what is the capital of France?", units) for i in range(n)]


def _reader(urls, **kw) -> OpenAIReader:
    kw.setdefault("sleep", lambda s: None)  # no real waits between retries
    return OpenAIReader("m", base_url=urls, **kw)


# -- order and identity ---------------------------------------------------------------------------------------------


def test_outputs_in_request_order_and_identical_to_concurrency_one(replicas):
    a, b = replicas(), replicas()
    one = _reader(a.url)
    many = _reader([a.url, b.url], concurrency=8)
    try:
        serial = one.generate(_reqs(24))
        spread = many.generate(_reqs(24))
    finally:
        one.close(), many.close()
    assert [o.text for o in serial] == [f"answer QID-{i} [1]." for i in range(24)]  # request order
    assert spread == serial  # text, status, input_tokens and error alike
    assert all(o.status == "ok" and o.input_tokens == 7 for o in spread)


def test_concurrency_one_alternates_between_two_endpoints(replicas):
    a, b = replicas(), replicas()
    r = _reader([a.url, b.url])
    try:
        r.generate(_reqs(10))
        stats = r.endpoint_stats()
    finally:
        r.close()
    # one request at a time: both endpoints always have 0 in flight, so ties go round robin: 5 and 5
    assert (a.count, b.count) == (5, 5)
    assert [s["sent"] for s in stats.values()] == [5, 5] and [s["ok"] for s in stats.values()] == [5, 5]


def test_requests_spread_over_two_endpoints_and_the_key_goes_to_each(replicas, monkeypatch):
    monkeypatch.setenv("RAGEVAL_TEST_KEY", "sk-replicas")
    a, b = replicas(gather=2), replicas(gather=2)
    r = _reader([a.url, b.url], concurrency=4, api_key_env="RAGEVAL_TEST_KEY")
    try:
        out = r.generate(_reqs(16))
    finally:
        r.close()
    assert [o.text for o in out] == [f"answer QID-{i} [1]." for i in range(16)]
    assert a.count + b.count == 16 and a.count > 0 and b.count > 0
    assert set(a.auth) == set(b.auth) == {"Bearer sk-replicas"}  # each endpoint's own client sends it there
    assert "sk-replicas" not in json.dumps(r.info())


# -- the bound per endpoint ---------------------------------------------------------------------------------------


def test_the_bound_per_endpoint_is_respected_and_reached(replicas):
    # each server holds a request until 2 are in flight: it can see 2 only if the reader sends 2 at once,
    # and must never see 3 although the reader runs 8 threads
    a, b = replicas(gather=2, max_wait=3.0), replicas(gather=2, max_wait=3.0)
    r = _reader([a.url, b.url], concurrency=8, endpoint_concurrency=2)
    try:
        out = r.generate(_reqs(16))
        stats = r.endpoint_stats()
    finally:
        r.close()
    assert all(o.status == "ok" for o in out)
    assert (a.max_in_flight, b.max_in_flight) == (2, 2)
    assert [s["max_in_flight"] for s in stats.values()] == [2, 2]
    assert a.count + b.count == 16


def test_concurrency_is_the_bound_over_all_endpoints(replicas):
    a = replicas(gather=3, max_wait=3.0)
    r = _reader([a.url], concurrency=3)
    try:
        r.generate(_reqs(6))
    finally:
        r.close()
    assert a.max_in_flight == 3  # three at once, never four


# -- failover -----------------------------------------------------------------------------------------------------


def test_a_dead_endpoint_fails_over_and_is_passed_over_while_down(replicas):
    dead, live = _dead_url(), replicas()
    r = _reader([dead, live.url], max_retries=1)
    try:
        out = r.generate(_reqs(6))
        stats = r.endpoint_stats()
    finally:
        r.close()
    assert [o.text for o in out] == [f"answer QID-{i} [1]." for i in range(6)]
    assert live.count == 6
    # the first request tried the dead endpoint (its 2 attempts), then the live one; the dead one is then down
    # for `cooldown` (30 s) seconds, so no other request is sent there
    assert stats[dead] == {"sent": 1, "ok": 0, "failed": 1, "failed_over": 1, "max_in_flight": 1}
    assert stats[live.url]["sent"] == 6


def test_without_a_cooldown_every_request_tries_the_dead_endpoint_first(replicas):
    dead, live = _dead_url(), replicas()
    r = _reader([dead, live.url], max_retries=0, cooldown=0)
    try:
        out = r.generate(_reqs(4))
        stats = r.endpoint_stats()
    finally:
        r.close()
    assert all(o.status == "ok" for o in out) and live.count == 4
    assert stats[dead]["sent"] == stats[dead]["failed_over"] == 4  # round robin puts it first every time


def test_a_transient_status_fails_over_a_client_error_does_not(replicas):
    busy, live = replicas(status=503), replicas()
    r = _reader([busy.url, live.url], max_retries=1)
    try:
        out = r.generate(_reqs(1))[0]
    finally:
        r.close()
    assert out.text == "answer QID-0 [1]." and (busy.count, live.count) == (2, 1)

    bad, other = replicas(status=400), replicas()
    r = _reader([bad.url, other.url], max_retries=3)
    try:
        out = r.generate(_reqs(1))[0]
    finally:
        r.close()
    # a 400 is about the request: another replica of the same model would refuse it too
    assert (bad.count, other.count) == (1, 0)
    assert out.status == "reader_error" and out.error == f"HTTP 400 from {bad.url}: replica says 400"


def test_every_endpoint_failing_is_one_reader_error_naming_each(replicas):
    dead, busy = _dead_url(), replicas(status=503)
    r = _reader([dead, busy.url], max_retries=1)
    try:
        out = r.generate(_reqs(1))[0]
    finally:
        r.close()
    assert out.status == "reader_error" and out.text == ""
    assert out.error.startswith("gave up after 4 attempts on 2 endpoints: all 2 endpoints failed: ")
    assert f"{dead}: cannot connect" in out.error
    assert f"{busy.url}: HTTP 503: replica says 503 (after 2 attempts)" in out.error
    assert busy.count == 2


def test_the_pool_raises_httperror_with_the_endpoints_tried():
    dead1, dead2 = _dead_url(), _dead_url()
    with (
        EndpointPool([dead1, dead2], per_endpoint=1, max_retries=0, timeout=2.0) as pool,
        pytest.raises(HttpError) as err,
    ):
        pool.post_json("chat/completions", {})
    assert err.value.kind == "connect" and err.value.endpoints == (dead1, dead2) and err.value.attempts == 2


# -- configurations -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base_url", "message"),
    [
        ([], "base_url must be a URL or a non-empty list of URLs"),
        ("", "base_url must start with http:// or https://, got ''"),
        (["http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"], "lists http://127.0.0.1:8000/v1 twice"),
        (["http://h:80/v1", "http://H/v1/"], "lists http://H/v1/ twice (as http://h:80/v1)"),
        (["http://127.0.0.1:8000/v1", "ftp://127.0.0.1:8001/v1"], "must start with http:// or https://, got 'ftp:"),
        (["http://127.0.0.1:8000/v1", 8001], "must start with http:// or https://, got 8001"),
        (["http:///v1"], "names no host"),
        (["http://127.0.0.1:80x/v1"], "has a port that is not a number"),
        ({"url": "http://127.0.0.1:8000/v1"}, "base_url must be a URL or a non-empty list of URLs"),
    ],
)
def test_bad_endpoint_lists_are_clear_errors(base_url, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        get_reader("openai", model="m", base_url=base_url)


def test_distinct_paths_on_one_server_are_distinct_endpoints():
    assert endpoint_list(["http://h:1/a/", "http://h:1/b"]) == ("http://h:1/a", "http://h:1/b")


def test_endpoint_concurrency_must_be_a_positive_integer():
    with pytest.raises(ValueError, match="endpoint_concurrency must be a positive integer, got 0"):
        get_reader("openai", model="m", base_url="http://127.0.0.1:9/v1", endpoint_concurrency=0)
    with pytest.raises(ValueError, match="cooldown must be a finite number >= 0"):
        get_reader("openai", model="m", base_url="http://127.0.0.1:9/v1", cooldown=-1)


def _suite(tmp_path, reader: str, name: str = "s") -> str:
    p = tmp_path / f"{name}.yaml"
    p.write_text(f"""\
name: {name}
dataset: {{name: hotpotqa, limit: 3}}
retrieval: {{method: bm25, k: 3}}
settings:
  - {{compressor: identity}}
reader: {reader}
judge: {{spec: lexical}}
output_dir: {tmp_path / "out"}
""")
    return str(p)


def test_suite_yaml_takes_a_list_and_rejects_a_duplicate(tmp_path):
    ok = _suite(
        tmp_path,
        "{backend: openai, params: {model: m, base_url: ['http://10.0.0.1:8000/v1', "
        "'http://10.0.0.2:8000/v1'], concurrency: 8, endpoint_concurrency: 4}}",
    )
    assert load_suite(ok).reader.params["base_url"] == ["http://10.0.0.1:8000/v1", "http://10.0.0.2:8000/v1"]
    bad = _suite(
        tmp_path,
        "{backend: openai, params: {model: m, base_url: ['http://10.0.0.1:8000/v1', 'http://10.0.0.1:8000/v1/']}}",
        name="bad",
    )
    with pytest.raises(SuiteError, match=re.escape("reader.params: openai reader: base_url lists")):
        load_suite(bad)
    empty = _suite(tmp_path, "{backend: openai, params: {model: m, base_url: []}}", name="empty")
    with pytest.raises(SuiteError, match="non-empty list of URLs"):
        load_suite(empty)


# -- the record key and the suite runner --------------------------------------------------------------------------


def test_info_is_the_same_for_one_endpoint_or_two():
    one = get_reader("openai", model="m", base_url="http://10.0.0.1:8000/v1")
    two = get_reader(
        "openai", model="m", base_url=["http://10.0.0.1:8000/v1", "http://10.0.0.2:8000/v1"], concurrency=16, timeout=5
    )
    other = get_reader("openai", model="m2", base_url="http://10.0.0.1:8000/v1")
    assert one.info() == two.info() != other.info()
    assert "base_url" in transport_params("openai") and "model" not in transport_params("openai")
    assert transport_params("extractive") == ()


def test_a_cache_made_with_one_endpoint_is_reused_with_two(tmp_path, replicas):
    a, b = replicas(), replicas()
    first = run_suite(
        load_suite(_suite(tmp_path, f"{{backend: openai, params: {{model: m, base_url: '{a.url}'}}}}")),
        progress=False,
        build_report=False,
    )
    assert first.computed == 3 and a.count == 3
    records = (first.out_dir / "records.jsonl").read_bytes()
    two = f"{{backend: openai, params: {{model: m, base_url: ['{a.url}', '{b.url}'], concurrency: 4}}}}"
    again = run_suite(load_suite(_suite(tmp_path, two)), progress=False, build_report=False)
    assert (again.reused, again.computed) == (3, 0) and (a.count, b.count) == (3, 0)
    assert (again.out_dir / "records.jsonl").read_bytes() == records
    changed = f"{{backend: openai, params: {{model: m, base_url: ['{a.url}', '{b.url}'], max_tokens: 9}}}}"
    third = run_suite(load_suite(_suite(tmp_path, changed)), progress=False, build_report=False)
    assert third.computed == 3  # an option that can change an answer is in the key


def test_the_runner_hands_the_reader_enough_requests_for_its_concurrency(tmp_path, replicas):
    # reader.batch_size 1, concurrency 3: the server sees 3 requests at once only if the runner hands over 3
    a = replicas(gather=3, max_wait=3.0)
    reader = f"{{backend: openai, params: {{model: m, base_url: '{a.url}', concurrency: 3}}, batch_size: 1}}"
    res = run_suite(load_suite(_suite(tmp_path, reader)), progress=False, build_report=False)
    assert res.status_counts == {"ok": 3} and a.max_in_flight == 3


# -- one endpoint's client: connections in lanes --------------------------------------------------------------------


def test_an_http_client_splits_its_connections_into_lanes_and_uses_them_all(replicas):
    from concurrent.futures import ThreadPoolExecutor

    from rageval.http import HttpClient

    a = replicas(gather=20, max_wait=3.0)
    body = {"messages": [{"role": "user", "content": "QID-1"}]}
    with HttpClient(a.url, max_connections=20, timeout=10) as client, ThreadPoolExecutor(24) as pool:
        assert len(client._clients) == 3  # ceil(20 / 8) httpx pools of 7, 7 and 6 connections
        out = list(pool.map(lambda _: client.post_json("chat/completions", body), range(40)))
    assert all(o["choices"][0]["message"]["content"] == "answer QID-1 [1]." for o in out)
    assert a.max_in_flight == 20  # all 20 connections at once, never more (24 threads call)


def test_a_redirect_to_another_listed_endpoint_is_still_refused(replicas, monkeypatch):
    from fault_http import FaultServer

    monkeypatch.setenv("RAGEVAL_TEST_KEY", "sk-origin")
    other = replicas()
    with FaultServer() as first:
        first.play(("redirect", {"code": 307, "location": f"{other.url}/chat/completions"}))
        r = _reader([first.url, other.url], api_key_env="RAGEVAL_TEST_KEY")
        try:
            out = r.generate(_reqs(1))[0]
        finally:
            r.close()
    # each endpoint's client keeps to its own origin: being in the list does not make another origin a target
    assert out.status == "reader_error" and "redirect to another origin" in out.error
    assert other.count == 0 and first.requests[0]["headers"]["authorization"] == "Bearer sk-origin"


def test_validate_lists_the_endpoints_without_contacting_them(tmp_path):
    from rageval.suite.checks import model_availability

    path = _suite(
        tmp_path,
        "{backend: openai, params: {model: m, base_url: ['http://10.0.0.1:8000/v1', 'http://10.0.0.2:8000/v1']}}",
    )
    (entry,) = [a for a in model_availability(load_suite(path)) if a.where == "reader.params.base_url"]
    assert entry.ref == "http://10.0.0.1:8000/v1, http://10.0.0.2:8000/v1"
    assert entry.note == "endpoints: not contacted here"
