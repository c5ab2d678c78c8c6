"""The LLM judge over an OpenAI-compatible server, against a small stub server the tests start on 127.0.0.1.

No LLM runs here: the stub answers chat completions with the log-probabilities, text
or errors a test gives it (by claim, or scripted per request), and by default with
the lexical judge's probability as yes/no log-probabilities, so figures through the
server can be compared with the lexical judge's own.
"""

import json
import math
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner
from suite_files import one_setting_suite

from rageval.judges import BUILTIN, JudgeError, JudgeRunner, get_judge
from rageval.judges.lexical import LexicalJudge
from rageval.judges.openai_compat import (
    PROMPT_VERSION,
    SYSTEM_PROMPT,
    USER_TEMPLATE,
    OpenAIJudge,
    normalize_token,
    parse_spec,
    probability_from_answer,
    probability_from_logprobs,
)

_PAIR = re.compile(
    r"\A<premise>\n(?P<premise>.*)\n</premise>\n\n<claim>\n(?P<claim>.*)\n</claim>\n\nIs the claim fully supported",
    re.DOTALL,
)
NEVER = -9999.0  # what vLLM reports for a probability of 0 (JSON has no -inf)


def completion(text, top=None, chosen_lp=None):
    """A chat-completions answer: ``text`` as the one answer token, ``top``: [(token, logprob)] or None (no logprobs)."""
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}
    if top is not None:
        lp = dict(top).get(text, NEVER) if chosen_lp is None else chosen_lp
        choice["logprobs"] = {
            "content": [
                {"token": text, "logprob": lp, "top_logprobs": [{"token": t, "logprob": v} for t, v in top]},
            ]
        }
    else:
        choice["logprobs"] = None
    return {"choices": [choice], "usage": {"prompt_tokens": 50, "completion_tokens": 1}}


def lexical_completion(premise, claim):
    """The default answer: the lexical judge's p as yes/no log-probabilities."""
    p = LexicalJudge().predict([premise], [claim])[0]
    yes = math.log(p) if p > 0 else NEVER
    no = math.log(1 - p) if p < 1 else NEVER
    return completion("Yes" if p >= 0.5 else "No", [("Yes", yes), ("No", no), ("The", -12.0)])


class StubLLM:
    """Chat completions on 127.0.0.1.

    ``by_claim``: claim -> a completion dict (or ``(status, body)``); ``script``: a list of
    ``(status, body)`` that the next requests pop first (errors); ``delay``: seconds each
    answer waits (to see requests overlap).  Records every request and the most requests
    in flight at once.  Bounded: every connection has a timeout, bodies over 1 MiB are refused.
    """

    def __init__(self):
        self.by_claim = {}
        self.script = []
        self.requests = []
        self.delay = 0.0
        self.in_flight = self.max_in_flight = 0
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 10

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                if n > 2**20:
                    return self._send(413, {"error": {"message": "too large"}})
                body = json.loads(self.rfile.read(n))
                with outer._lock:
                    outer.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                    scripted = outer.script.pop(0) if outer.script else None
                try:
                    if outer.delay:
                        time.sleep(outer.delay)
                    status, payload = scripted or outer.answer(body)
                finally:
                    with outer._lock:
                        outer.in_flight -= 1
                self._send(status, payload)

            def _send(self, status, payload):
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
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

    def answer(self, body):
        m = _PAIR.match(body["messages"][-1]["content"])
        if m is None:
            return 400, {"error": {"message": "not a judge prompt"}}
        claim = m.group("claim")
        got = self.by_claim.get(claim)
        if got is None:
            return 200, lexical_completion(m.group("premise"), claim)
        return got if isinstance(got, tuple) else (200, got)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = StubLLM()
    yield s
    s.close()


def judge(server, **kw):
    kw.setdefault("sleep", lambda s: None)
    kw.setdefault("api_key_env", None)
    return get_judge("openai", model="stub-llm", base_url=server.url, **kw)


# -- the probability rule (hand-computed) --------------------------------------------------------


def test_probability_from_logprobs_by_hand():
    e = math.exp
    top = [("Yes", -0.2), ("No", -1.9), (" yes", -3.0), ("The", -4.0), ("▁NO", -5.0)]
    want = (e(-0.2) + e(-3.0)) / (e(-0.2) + e(-3.0) + e(-1.9) + e(-5.0))
    assert probability_from_logprobs(top) == pytest.approx(want, abs=1e-12)
    assert probability_from_logprobs([("Yes", -0.2), ("Yes", -0.2), ("No", -0.2)]) == 0.5  # a repeated token once
    assert probability_from_logprobs([("yes", -3.0)]) == 1.0  # "no" below the top-k: mass 0
    assert probability_from_logprobs([("NO", -0.01), ("Maybe", -5.0)]) == 0.0
    assert math.isnan(probability_from_logprobs([("Maybe", -0.1), ("The", -2.0)]))
    assert math.isnan(probability_from_logprobs([]))
    assert probability_from_logprobs([("Yes", -1000.0), ("No", -1001.0)]) == pytest.approx(1 / (1 + e(-1)))
    assert [normalize_token(t) for t in ("Yes", " YES ", "\nyes", "ĠYes", "▁yes")] == ["yes"] * 5
    assert normalize_token("yes.") == "yes."  # punctuation is not stripped: only case and whitespace


def test_probability_from_answer():
    assert probability_from_answer("Yes") == 1.0
    assert probability_from_answer(" yes, it is.") == 1.0
    assert probability_from_answer("NO.") == 0.0
    for text in ("", None, "Maybe", "Yesterday", "<think>", "The claim is supported", "noyes"):
        assert math.isnan(probability_from_answer(text)), text


def test_logprobs_through_the_server_hand_computed(server):
    e = math.exp
    server.by_claim = {
        "c1": completion("Yes", [("Yes", -0.105), ("No", -2.3), ("Sure", -4.1)]),
        "c2": completion(" no", [(" no", -0.4), ("No", -1.6), ("yes", -2.2), ("Yes", -2.5)]),
        "c3": completion("Yes", [("Yes", -0.01), ("The", -5.0)]),  # only yes among the top
        "c4": completion("NO", [("NO", -0.02), ("I", -4.0)]),
    }
    r = judge(server)
    got = r(["p", "p", "p", "p"], ["c1", "c2", "c3", "c4"])
    want = [
        e(-0.105) / (e(-0.105) + e(-2.3)),
        (e(-2.2) + e(-2.5)) / (e(-2.2) + e(-2.5) + e(-0.4) + e(-1.6)),
        1.0,
        0.0,
    ]
    assert got == pytest.approx(want, abs=1e-12)
    assert got[0] == pytest.approx(0.8998, abs=1e-4) and got[1] == pytest.approx(0.1811, abs=1e-4)
    assert r.stats()["from_logprobs"] == 4 and r.stats()["abstained"] == 0


def test_the_request(server, monkeypatch):
    monkeypatch.setenv("RAGEVAL_JUDGE_KEY", "sk-judge-secret")
    r = judge(server, api_key_env="RAGEVAL_JUDGE_KEY", top_logprobs=5)
    server.by_claim = {"The sky is blue.": completion("Yes", [("Yes", -0.1), ("No", -2.5)])}
    r(["The sky is blue today."], ["The sky is blue."])
    (req,) = server.requests
    assert req["path"] == "/v1/chat/completions"
    assert req["auth"] == "Bearer sk-judge-secret"
    b = req["body"]
    assert b["model"] == "stub-llm" and b["max_tokens"] == 1 and b["temperature"] == 0.0
    assert b["logprobs"] is True and b["top_logprobs"] == 5
    assert b["messages"] == [
        {"role": "system", "content": SYSTEM_PROMPT},
        {
            "role": "user",
            "content": USER_TEMPLATE.format(premise="The sky is blue today.", hypothesis="The sky is blue."),
        },
    ]
    for where in (r.id, repr(r), repr(r.judge), json.dumps(r.stats())):
        assert "sk-judge-secret" not in where


def test_api_key_parameter_and_no_key(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    judge(server, api_key_env="OPENAI_API_KEY")(["p"], ["h"])
    assert server.requests[-1]["auth"] is None
    r = get_judge("openai", model="stub-llm", base_url=server.url, api_key="sk-param")
    r(["p"], ["h"])
    assert server.requests[-1]["auth"] == "Bearer sk-param"
    assert "sk-param" not in r.id + repr(r.judge)


# -- text-only answers ------------------------------------------------------------------------------


def test_text_only_answers(server):
    server.by_claim = {"a": completion("Yes"), "b": completion("no."), "c": completion(" YES")}
    r = judge(server)
    assert r(["p"] * 3, ["a", "b", "c"]) == [1.0, 0.0, 1.0]
    assert r.stats()["from_answer"] == 3 and r.stats()["from_logprobs"] == 0


def test_logprobs_false_asks_for_text_only_and_has_its_own_id(server):
    server.by_claim = {"a": completion("Yes", [("Yes", -0.7), ("No", -0.7)])}
    r = judge(server, logprobs=False)
    assert r(["p"], ["a"]) == [1.0]  # the answer, not the (here 0.5) log-probabilities
    body = server.requests[-1]["body"]
    assert "logprobs" not in body and "top_logprobs" not in body
    assert r.id.endswith("|p=answer-v2")
    assert judge(server)(["p"], ["a"]) == [0.5]


# -- abstentions -----------------------------------------------------------------------------------


def test_neither_yes_nor_no_is_an_abstention_counted_by_the_runner(server, tmp_path):
    server.by_claim = {
        "maybe": completion("Maybe"),  # text only
        "think": completion("<think>", [("<think>", -0.01), ("The", -5.0)]),  # logprobs, neither token
        "empty": completion(""),
        "yes": completion("Yes", [("Yes", -0.1), ("No", -2.4)]),
    }
    r = judge(server, cache_dir=tmp_path)
    p = r(["p"] * 5, ["maybe", "think", "empty", "yes", "maybe"])
    assert [math.isnan(x) for x in p] == [True, True, True, False, True]
    s = r.stats()
    assert s["abstained"] == 4 and s["abstained_executed"] == 3 and s["off_label"] == 3
    assert r.decide(["p"] * 2, ["think", "yes"]) == [None, True]  # never a silent False / 0
    r.close()
    again = judge(server, cache_dir=tmp_path)  # abstentions are cached like probabilities
    n = len(server.requests)
    assert [math.isnan(x) for x in again(["p"] * 3, ["maybe", "think", "yes"])] == [True, True, False]
    assert len(server.requests) == n and again.stats()["cache_hits"] == 3 and again.stats()["abstained"] == 2


def test_abstentions_in_a_diagnostic_are_counted(server):
    from rageval.diagnostics.attribution import grounded_precision

    units = [[{"text": "Paris is France's capital.", "source_ids": None}]]
    sources = [[{"id": "d0.s0", "text": "Paris is the capital of France."}]]
    server.by_claim = {"Paris is the capital of France.": completion("Perhaps", [("Perhaps", -0.1)])}
    r = judge(server)
    out = grounded_precision(["Paris is the capital of France [1]."], units, sources, judge=r)
    assert r.stats()["abstained"] >= 1
    assert out["grounded_precision"] == 0.0  # an abstention counts as not supported in the main score


def test_a_prompt_longer_than_the_context_is_an_abstention(server):
    msg = "This model's maximum context length is 2048 tokens. However, you requested 9000 tokens"
    server.by_claim = {"long": (400, {"error": {"message": msg}})}
    r = judge(server)
    assert math.isnan(r(["p"], ["long"])[0])
    assert r.stats()["prompt_overflow"] == 1 and r.stats()["abstained"] == 1


# -- failures ----------------------------------------------------------------------------------------


def test_a_500_then_ok_is_retried(server):
    sleeps = []
    server.script = [(500, {"error": {"message": "boom"}})]
    r = judge(server, sleep=sleeps.append, backoff=0.25)
    server.by_claim = {"h": completion("Yes", [("Yes", -0.2), ("No", -1.8)])}
    assert r(["p"], ["h"]) == pytest.approx([math.exp(-0.2) / (math.exp(-0.2) + math.exp(-1.8))])
    assert len(server.requests) == 2 and sleeps == [0.25]
    assert r.stats()["http_retries"] == 1


def test_failure_after_the_retries_is_a_judge_error_and_nothing_is_cached(server, tmp_path):
    server.script = [(503, {"error": {"message": "overloaded"}})] * 2
    r = judge(server, cache_dir=tmp_path, max_retries=1, api_key="sk-hidden")
    with pytest.raises(JudgeError, match=r"after 2 attempts.*503.*overloaded") as err:
        r(["p"], ["h"])
    assert "sk-hidden" not in str(err.value)
    assert r.stats()["executed"] == 0
    server.by_claim = {"h": completion("No", [("No", -0.1), ("Yes", -2.4)])}
    assert r(["p"], ["h"]) == pytest.approx([1 / (1 + math.exp(2.3))])  # the server is back: asked again
    assert r.stats()["executed"] == 1 and len(server.requests) == 3


@pytest.mark.parametrize(
    "status, body",
    [(401, {"error": {"message": "invalid api key"}}), (404, {"error": {"message": "model not found"}})],
)
def test_a_client_error_is_a_judge_error_at_once(server, status, body):
    server.script = [(status, body)]
    with pytest.raises(JudgeError, match=str(status)):
        judge(server, max_retries=3)(["p"], ["h"])
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "payload",
    [
        {"choices": []},
        {"nothing": 1},
        {"choices": [{"message": {"content": 7}}]},
        {"choices": [{"message": {"content": "Yes"}, "logprobs": {"content": [{"token": "Yes", "logprob": "high"}]}}]},
    ],
)
def test_a_malformed_response_is_a_judge_error(server, payload):
    server.by_claim = {"h": payload}
    with pytest.raises(JudgeError, match="judge 'openai:stub-llm@"):
        judge(server)(["p"], ["h"])


def test_connection_refused_is_a_judge_error():
    r = get_judge("openai", model="m", base_url="http://127.0.0.1:9/v1", max_retries=1, timeout=2, sleep=lambda s: None)
    with pytest.raises(JudgeError, match="connect"):
        r(["p"], ["h"])


# -- concurrency --------------------------------------------------------------------------------------


def test_concurrency_gives_the_same_results_in_the_same_order(server):
    claims = [f"claim {i}" for i in range(24)]
    server.by_claim = {
        c: completion("Yes", [("Yes", -0.05 * (i + 1)), ("No", -0.08 * (24 - i)), ("x", -9.0)])
        for i, c in enumerate(claims)
    }
    server.delay = 0.05
    premises = [f"premise {i % 5}" for i in range(24)]
    one = judge(server, concurrency=1)(premises, claims)
    assert server.max_in_flight == 1
    server.max_in_flight = 0
    t = time.perf_counter()
    many = judge(server, concurrency=6)(premises, claims)
    elapsed = time.perf_counter() - t
    assert many == one  # bit for bit, in request order
    assert 1 < server.max_in_flight <= 6
    assert elapsed < 24 * 0.05  # overlapped
    assert len(set(one)) == 24


def test_the_runner_batches_and_deduplicates(server):
    r = judge(server, concurrency=3, batch_size=4)
    p = r(["Paris is big."] * 10, [f"Paris {i % 5}" for i in range(10)])
    assert len(p) == 10 and p[:5] == p[5:]
    s = r.stats()
    assert s["requested"] == 10 and s["executed"] == 5 and s["batches"] == 2 and len(server.requests) == 5


# -- the spec, the id, the registry -------------------------------------------------------------------


def test_spec_forms_and_the_id(server):
    a = get_judge(f"openai:stub-llm@{server.url}")
    b = judge(server)
    assert a.id == b.id
    origin = server.url.rsplit("/v1", 1)[0]
    assert a.id == f"openai:stub-llm@{origin}/v1|prompt={PROMPT_VERSION}|p=yesno-logprobs-top20+answer-v2"
    assert a(["p"], ["h"]) == b(["p"], ["h"])
    assert isinstance(a, JudgeRunner) and isinstance(a.judge, OpenAIJudge)
    assert "openai[:<model>@<base_url>]" in BUILTIN
    ids = {
        get_judge("openai", model="m", base_url="http://127.0.0.1:8000/v1").id,
        get_judge("openai", model="m2", base_url="http://127.0.0.1:8000/v1").id,
        get_judge("openai", model="m", base_url="http://127.0.0.1:8001/v1").id,
        get_judge("openai", model="m", base_url="http://127.0.0.1:8000/v2").id,
        get_judge("openai", model="m", base_url="http://127.0.0.1:8000/v1", top_logprobs=5).id,
        get_judge("openai", model="m", base_url="http://127.0.0.1:8000/v1", logprobs=False).id,
        get_judge("openai", model="m", base_url="http://127.0.0.1:8000/v1", extra_body={"seed": 1}).id,
    }
    assert len(ids) == 7
    same = {
        get_judge("openai", model="m", base_url=u).id
        for u in ("http://localhost:8000/v1", "http://localhost:8000/v1/", "http://LocalHost:8000/v1")
    }
    assert len(same) == 1
    assert get_judge("openai", model="m", base_url="http://h/v1").id.startswith("openai:m@http://h:80/v1|")


def test_parse_spec():
    assert parse_spec("llama3:8b@http://127.0.0.1:11434/v1") == ("llama3:8b", "http://127.0.0.1:11434/v1")
    assert parse_spec("org/model@v2@https://x.org/v1") == ("org/model@v2", "https://x.org/v1")
    assert parse_spec("org/model") == ("org/model", None)


def test_spec_and_params_together(server):
    r = get_judge("openai:stub-llm", base_url=server.url)  # model in the spec, base_url as a parameter
    assert r.id.startswith("openai:stub-llm@http://127.0.0.1:")
    with pytest.raises(ValueError, match="give it once"):
        get_judge(f"openai:stub-llm@{server.url}", model="other")


@pytest.mark.parametrize(
    "kw, match",
    [
        ({}, "no model"),
        ({"model": "m"}, "no base_url"),
        ({"model": "m", "base_url": "127.0.0.1:8000"}, "http:// or https://"),
        ({"model": "", "base_url": "http://h/v1"}, "model"),
        ({"model": "m", "base_url": "http://h/v1", "concurency": 2}, "Did you mean 'concurrency'"),
        ({"model": "m", "base_url": "http://h/v1", "concurrency": 0}, "concurrency"),
        ({"model": "m", "base_url": "http://h/v1", "top_logprobs": 0}, "top_logprobs"),
        ({"model": "m", "base_url": "http://h/v1", "logprobs": "yes"}, "logprobs"),
        ({"model": "m", "base_url": "http://h/v1", "extra_body": {"max_tokens": 5}}, "may not set max_tokens"),
        ({"model": "m", "base_url": "http://h/v1", "timeout": 0}, "timeout"),
    ],
)
def test_bad_parameters(kw, match):
    with pytest.raises(ValueError, match=match):
        get_judge("openai", **kw)


def test_other_judges_refuse_parameters():
    with pytest.raises(ValueError, match="takes no parameters.*openai"):
        get_judge("lexical", model="m")
    with pytest.raises(ValueError, match="takes no parameters"):
        get_judge(get_judge("lexical"), base_url="http://h/v1")


def test_extra_body_is_sent(server):
    r = judge(server, extra_body={"chat_template_kwargs": {"enable_thinking": False}})
    r(["p"], ["h"])
    assert server.requests[-1]["body"]["chat_template_kwargs"] == {"enable_thinking": False}
    assert "|extra=" in r.id


# -- the README example, a suite, calibrate -------------------------------------------------------------


def test_readme_grounded_precision_example_through_the_server(server):
    """README.md, "Using a diagnostic": the grounded_precision call with judge=get_judge("openai", ...)."""
    from rageval.diagnostics.attribution import grounded_precision

    kw = dict(
        units=[[{"text": "Paris is France's capital.", "source_ids": None}]],  # no declared provenance
        sources=[[{"id": "d0.s0", "text": "Paris is the capital of France."}]],
    )
    r = get_judge("openai", model="stub-llm", base_url=server.url, api_key_env=None)
    out = grounded_precision(["Paris is the capital of France [1]."], judge=r, **kw)
    ref = grounded_precision(["Paris is the capital of France [1]."], judge="lexical", **kw)
    assert out["grounded_precision"] == ref["grounded_precision"] == 1.0
    assert out["per_question"][0]["citations_recovered"] == ref["per_question"][0]["citations_recovered"] == 1
    assert server.requests and r.stats()["executed"] == len(server.requests)


@pytest.mark.slow
def test_readme_example_as_an_evaluate_module(server):
    pytest.importorskip("evaluate")
    from pathlib import Path

    import evaluate

    root = Path(__file__).resolve().parents[1]
    gp = evaluate.load(str(root / "metrics" / "grounded_precision"))
    out = gp.compute(
        predictions=["Paris is the capital of France [1]."],
        units=[[{"text": "Paris is France's capital.", "source_ids": None}]],
        sources=[[{"id": "d0.s0", "text": "Paris is the capital of France."}]],
        judge=get_judge("openai", model="stub-llm", base_url=server.url, api_key_env=None),
    )
    assert out["grounded_precision"] == 1.0 and server.requests


def _suite(tmp_path, judge_yaml):
    return one_setting_suite(tmp_path, "{backend: extractive}", judge_yaml)


def test_a_suite_with_the_openai_judge_and_judge_errors_retried(server, tmp_path):
    from rageval.suite.load import load_suite
    from rageval.suite.run import run_suite

    spec = f"{{spec: openai, params: {{model: stub-llm, base_url: '{server.url}', max_retries: 0, concurrency: 2}}}}"
    suite = load_suite(_suite(tmp_path, spec))
    server.script = [(503, {"error": {"message": "down"}})] * 200
    res = run_suite(suite, progress=False, build_report=False)
    assert res.status_counts == {"judge_error": 2}
    server.script = []
    res = run_suite(suite, progress=False, build_report=False)  # the server is back: computed again
    assert res.status_counts == {"ok": 2} and res.retried == 2
    stats = json.loads((res.out_dir / "run_stats.json").read_text())["judge"]
    assert stats["judge_id"].startswith("openai:stub-llm@http://127.0.0.1:") and stats["executed"] > 0
    manifest = json.loads((res.out_dir / "manifest.json").read_text())
    assert manifest["models"]["judge"] == stats["judge_id"]
    n = len(server.requests)
    res = run_suite(load_suite(_suite(tmp_path, spec)), progress=False, build_report=False)
    assert (res.reused, res.computed) == (2, 0) and len(server.requests) == n


def test_suite_validation_of_the_openai_judge(tmp_path, server):
    from rageval.suite.checks import model_availability
    from rageval.suite.config import SuiteError
    from rageval.suite.load import load_suite

    ok = load_suite(_suite(tmp_path, f"{{spec: openai, params: {{model: m, base_url: '{server.url}'}}}}"))
    (avail,) = [a for a in model_availability(ok) if a.where == "judge.spec"]
    assert avail.ref == server.url and avail.problem is None and "not contacted" in avail.note
    assert load_suite(_suite(tmp_path, f"{{spec: 'openai:m@{server.url}'}}")).judge.spec.startswith("openai:m@")
    bad = {
        "{spec: openai, params: {model: m, base_url: 'http://h/v1', api_key: sk-x}}": "api_key_env",
        "{spec: openai, params: {model: m, base_url: 'http://h/v1', concurency: 2}}": "Did you mean 'concurrency'",
        "{spec: openai, params: {model: m}}": "no base_url",
        "{spec: openai, params: {model: m, base_url: 'http://h/v1', top_logprobs: 0}}": "top_logprobs",
        "{spec: lexical, params: {model: m}}": "unknown judge option",
    }
    for yaml_judge, match in bad.items():
        with pytest.raises(SuiteError, match=match) as err:
            load_suite(_suite(tmp_path, yaml_judge))
        assert "sk-x" not in str(err.value)


def _calibrate(args):
    from rageval.cli import main

    return CliRunner().invoke(main, ["calibrate", *args], catch_exceptions=False)


def test_calibrate_through_the_server_matches_the_lexical_judge(server, tmp_path):
    """The stub answers with the lexical judge's p as log-probabilities: the figures must be the lexical judge's."""
    ref = _calibrate(["--judge", "lexical", "--limit", "40", "--json", str(tmp_path / "lex.json")])
    assert ref.exit_code == 0, ref.output
    res = _calibrate(
        [
            "--judge",
            "openai",
            "--judge-param",
            "model=stub-llm",
            "--judge-param",
            f"base_url={server.url}",
            "--judge-param",
            "concurrency=4",
            "--judge-param",
            "api_key_env=null",
            "--limit",
            "40",
            "--json",
            str(tmp_path / "llm.json"),
        ]
    )
    assert res.exit_code == 0, res.output
    lex, llm = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("lex", "llm"))
    assert llm["judge"].startswith("openai:stub-llm@")
    assert llm["n_rows"] == 40 and llm["n_abstained"] == 0 and len(server.requests) == 40
    for part in ("binary", "partial_as_not_supported", "partially_supported"):
        for key, value in lex[part].items():
            assert llm[part][key] == pytest.approx(value, abs=1e-9), (part, key)
    assert "judge: openai:stub-llm@" in res.output


def test_calibrate_with_the_spec_form_and_abstentions(server):
    from rageval.calibrate.core import load_wice

    rows = load_wice()[:6]
    server.by_claim = {rows[0]["claim"]: completion("Unsure"), rows[1]["claim"]: completion("Unsure")}
    res = _calibrate(["--judge", f"openai:stub-llm@{server.url}", "--limit", "6"])
    assert res.exit_code == 0, res.output
    assert "abstentions (no clean decision; left out of every figure above): 2" in res.output


def test_calibrate_judge_param_errors():
    res = _calibrate(["--judge-param", "model"])
    assert res.exit_code == 2 and "KEY=VALUE" in res.output
    res = _calibrate(["--judge", "lexical", "--judge-param", "model=m", "--limit", "2"])
    assert res.exit_code != 0 and "takes no parameters" in res.output


def test_parse_judge_params():
    from rageval.calibrate.cli import parse_judge_params

    assert parse_judge_params(["a=1", "b=0.5", "c=true", "d=null", "e=x=y", "f=[1]", "g="]) == {
        "a": 1,
        "b": 0.5,
        "c": True,
        "d": None,
        "e": "x=y",
        "f": "[1]",
        "g": "",
    }


def test_the_documented_prompt_is_the_prompt():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "judges.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```text\n(.*?)\n```", doc, re.DOTALL)
    assert SYSTEM_PROMPT in blocks and USER_TEMPLATE in blocks
    assert f"version `{PROMPT_VERSION}`" in doc
