"""The OpenAI-compatible reader against a tiny chat-completions server on 127.0.0.1."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rageval.readers import ReaderRequest, get_reader
from rageval.readers.openai_compat import OpenAIReader
from rageval.types import Unit


class _Server:
    """Scripted responses: each POST pops the next (status, body, headers, delay) from ``script``."""

    def __init__(self):
        self.script = []
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                status, payload, headers, delay = outer.script.pop(0) if outer.script else (200, None, {}, 0)
                if delay:
                    time.sleep(delay)
                if payload is None:
                    user = body["messages"][-1]["content"]
                    payload = {
                        "choices": [{"message": {"role": "assistant", "content": f" echo: {len(user)} [1]. "}}],
                        "usage": {"prompt_tokens": 321, "completion_tokens": 4},
                    }
                data = json.dumps(payload).encode() if not isinstance(payload, bytes) else payload
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = _Server()
    yield s
    s.close()


def _reqs(n=1):
    units = (Unit("Paris is the capital of France.", title="Paris"), Unit("The Seine flows through Paris."))
    return [ReaderRequest(f"q{i}", f"Question {i}: what is the capital of France?", units) for i in range(n)]


def _reader(server, **kw):
    sleeps = []
    kw.setdefault("sleep", sleeps.append)
    r = OpenAIReader("tiny-model", base_url=server.url, **kw)
    return r, sleeps


def test_chat_completion_request_and_response(server, monkeypatch):
    monkeypatch.setenv("RAGEVAL_TEST_KEY", "sk-local-test")
    r, _ = _reader(server, api_key_env="RAGEVAL_TEST_KEY", max_tokens=17)
    out = r.generate(_reqs(2))
    assert [o.status for o in out] == ["ok", "ok"]
    assert out[0].text.startswith("echo:") and out[0].text.endswith("[1].")  # stripped
    assert out[0].input_tokens == 321  # the server's usage.prompt_tokens
    sent = server.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["auth"] == "Bearer sk-local-test"
    assert sent["body"]["model"] == "tiny-model" and sent["body"]["max_tokens"] == 17
    assert sent["body"]["temperature"] == 0.0
    user = sent["body"]["messages"][-1]["content"]
    assert "Document [1] (Title: Paris): Paris is the capital of France." in user
    assert "sk-local-test" not in json.dumps(r.info())


def test_no_api_key_sends_no_authorization(server, monkeypatch):
    monkeypatch.delenv("RAGEVAL_TEST_KEY", raising=False)
    r, _ = _reader(server, api_key_env="RAGEVAL_TEST_KEY")
    assert r.generate(_reqs())[0].status == "ok"
    assert server.requests[0]["auth"] is None


def test_retries_server_errors_with_exponential_backoff(server):
    server.script = [
        (503, {"error": {"message": "overloaded"}}, {}, 0),
        (429, {"error": "slow down"}, {}, 0),
        (200, None, {}, 0),
    ]
    r, sleeps = _reader(server, max_retries=3, backoff=0.5)
    out = r.generate(_reqs())[0]
    assert out.status == "ok"
    assert len(server.requests) == 3
    assert sleeps == [0.5, 1.0]


def test_retry_after_header_is_honoured_up_to_the_cap(server):
    server.script = [(429, {"error": "x"}, {"Retry-After": "7"}, 0), (429, {"error": "x"}, {"Retry-After": "99"}, 0)]
    r, sleeps = _reader(server, max_retries=2, backoff=0.1, max_backoff=10)
    r.generate(_reqs())
    assert sleeps == [7.0, 10.0]


def test_gives_up_after_bounded_retries_with_the_last_error(server):
    server.script = [(500, {"error": {"message": "boom"}}, {}, 0)] * 3
    r, sleeps = _reader(server, max_retries=2, backoff=1.0)
    out = r.generate(_reqs())[0]
    assert out.status == "reader_error"
    assert "gave up after 3 attempts" in out.error and "HTTP 500: boom" in out.error
    assert len(server.requests) == 3 and sleeps == [1.0, 2.0]
    assert out.input_tokens == r.count_prompt_tokens(_reqs()[0])


def test_context_length_400_is_prompt_overflow_without_retry(server):
    msg = "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."
    server.script = [(400, {"error": {"message": msg, "code": "context_length_exceeded"}}, {}, 0)]
    r, sleeps = _reader(server)
    out = r.generate(_reqs())[0]
    assert out.status == "prompt_overflow" and "maximum context length" in out.error
    assert len(server.requests) == 1 and sleeps == []


def test_other_client_errors_are_reader_errors_without_retry(server):
    server.script = [(401, {"error": {"message": "invalid api key"}}, {}, 0)]
    r, sleeps = _reader(server)
    out = r.generate(_reqs())[0]
    assert out.status == "reader_error" and "HTTP 401" in out.error and "invalid api key" in out.error
    assert sleeps == []


def test_timeout_is_retried_then_reported(server):
    server.script = [(200, None, {}, 1.0), (200, None, {}, 1.0)]
    r, sleeps = _reader(server, timeout=0.2, max_retries=1, backoff=0.01)
    out = r.generate(_reqs())[0]
    assert out.status == "reader_error" and "gave up after 2 attempts" in out.error
    assert "timed out" in out.error.lower()
    assert sleeps == [0.01]


def test_malformed_response_is_a_reader_error(server):
    server.script = [(200, {"choices": []}, {}, 0)]
    r, _ = _reader(server)
    out = r.generate(_reqs())[0]
    assert out.status == "reader_error" and "unexpected response" in out.error


def test_concurrent_requests_keep_request_order(server):
    r, _ = _reader(server, concurrency=3)
    reqs = _reqs(5)
    out = r.generate(reqs)
    assert [o.status for o in out] == ["ok"] * 5
    expected = [f"echo: {len(r.template.messages(q.question, q.units)[-1]['content'])} [1]." for q in reqs]
    assert [o.text for o in out] == expected


def test_connection_refused_is_retried_then_reported():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens on this port now
    sleeps = []
    r = OpenAIReader("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, backoff=0.01, sleep=sleeps.append)
    out = r.generate(_reqs())[0]
    assert out.status == "reader_error" and "gave up after 2 attempts" in out.error
    assert sleeps == [0.01]


def test_configuration_errors_fail_early():
    with pytest.raises(ValueError, match="base_url must start with http"):
        get_reader("openai", model="m", base_url="127.0.0.1:8000")
    with pytest.raises(ValueError, match="reader 'openai' needs option\\(s\\) 'base_url'"):
        get_reader("openai", model="m")
    with pytest.raises(ValueError, match="max_retries must be a non-negative integer"):
        get_reader("openai", model="m", base_url="http://127.0.0.1:1/v1", max_retries=-1)
