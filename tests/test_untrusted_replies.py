"""Untrusted model output never stops a run: what a reader or a judge sends is parsed defensively.

Category "untrusted model output": a citation marker of thousands of digits, a lone
surrogate in an answer, ``top_logprobs`` that is a number or ``true``, a logprob of
400 digits.  Each becomes a scored record or a counted ``reader_error``/``judge_error``,
never a traceback; two hypothesis properties send any JSON (chat-completions shaped or
not) from the scripted server to the OpenAI reader and to the LLM judge.
"""

import json
import math

import pytest
from fault_http import FaultServer, chat_answer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from suite_files import one_setting_suite

from rageval.citations import parse_answer, parse_markers
from rageval.io import dump_json_line, json_text, scrub_surrogates, utf8
from rageval.judges.base import JudgeError
from rageval.judges.cache import pair_key
from rageval.judges.openai_compat import OpenAIJudge
from rageval.readers.base import READER_STATUSES, ReaderOutput, ReaderRequest
from rageval.readers.openai_compat import OpenAIReader
from rageval.run.plan import sha
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite
from rageval.types import Unit

LONE = "\ud800"
BIG = "9" * 5000


@pytest.fixture
def server():
    s = FaultServer()
    yield s
    s.close()


_suite = one_setting_suite


def _openai_reader(server):
    return f"{{backend: openai, params: {{model: m, base_url: '{server.url}', max_retries: 0, timeout: 2}}}}"


def _openai_judge(server):
    return (
        f"{{spec: openai, params: {{model: j, base_url: '{server.url}', max_retries: 0, timeout: 2, concurrency: 1}}}}"
    )


def _run(path):
    return run_suite(load_suite(path), progress=False, build_report=False)


def _records(out):
    return [json.loads(x) for x in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]


def _reply(obj) -> bytes:
    return json.dumps(obj).encode()  # ensure_ascii: a lone surrogate travels as the valid JSON escape \ud800


# -- citation markers: bounded digits ---------------------------------------------------------------


@pytest.mark.parametrize("digits", [4301, 5000, 20_000])
def test_a_citation_of_thousands_of_digits_is_one_invalid_citation(digits):
    a = parse_answer(f"Paris is in France [{'7' * digits}].", n_units=3)
    (s,) = a.sentences
    assert s.citations == () and s.invalid == ("7" * digits,)


@pytest.mark.parametrize(
    "marker,valid,n_invalid",
    [
        (f"[1-{BIG}]", [], 1),  # a range with a huge end
        (f"[{BIG}-1]", [], 1),  # reversed and huge
        (f"[1, {BIG}, 2]", [1, 2], 1),
        ("[" + "0" * 5000 + "1]", [1], 0),  # leading zeros are no digits of the number
        ("[" + "١" * 5000 + "]", [], 0),  # other scripts' digits make no marker at all: text (ASCII digits only)
        ("[" + "9" * 18 + "]", [], 1),  # the longest number converted: still out of range
    ],
)
def test_citation_numbers_are_bounded(marker, valid, n_invalid):
    got_valid, invalid = parse_markers(f"x {marker}", 3)
    assert got_valid == valid and len(invalid) == n_invalid


def test_alce_mode_bounds_the_digits_too():
    (s,) = parse_answer(f"Paris [{BIG}].", n_units=3, mode="alce").sentences
    assert s.citations == () and len(s.invalid) == 1


@given(st.lists(st.text(alphabet="0123456789١٢-, ", max_size=6000), max_size=3))
@settings(max_examples=60, deadline=None)
def test_any_marker_body_parses(bodies):
    text = " ".join(f"claim [{b}]." for b in bodies)
    for mode in ("default", "alce"):
        for s in parse_answer(text, n_units=5, mode=mode).sentences:
            assert all(1 <= k <= 5 for k in s.citations)
            assert all(x.replace("-", "").isdigit() for x in s.invalid)


def test_a_5000_digit_citation_in_a_served_answer_is_a_scored_record(tmp_path, server):
    server.responder = lambda body: chat_answer(f"Paris is in France [{BIG}].")
    res = _run(_suite(tmp_path, _openai_reader(server)))
    assert res.status_counts == {"ok": 2}
    for r in _records(res.out_dir):
        assert r["metrics"]["emitted_precision"] == 0.0
        assert [s["invalid"] for s in r["answer"]["sentences"]] == [[BIG]]


# -- lone surrogates: written, hashed and judged ----------------------------------------------------


def test_surrogate_safe_json_round_trips_and_encodes():
    for obj in [LONE, {"a": "x" + LONE}, ["\udfff", "é" + LONE + "😀"], {LONE: 1}]:
        text = json_text(obj)
        text.encode("utf-8")  # never UnicodeEncodeError
        assert json.loads(text) == obj and json.loads(dump_json_line(obj)) == obj
    assert json_text({"a": "é"}) == '{"a": "é"}'  # UTF-8 kept as before


def test_hashes_take_lone_surrogates():
    assert sha({"a": LONE}) != sha({"a": "\ufffd"})
    assert pair_key("j", "p" + LONE, "h") != pair_key("j", "p\ufffd", "h")
    assert utf8(LONE) == b"\xed\xa0\x80"


@pytest.mark.parametrize(
    "text,want",
    [
        ("a" + LONE + "b", "a\ufffdb"),
        ("\udc00", "\ufffd"),
        ("\ud83d\ude00", "😀"),  # a split pair is joined
        ("\ude00\ud83d", "\ufffd\ufffd"),  # reversed: two lone ones
        ("plain é", "plain é"),
    ],
)
def test_reader_outputs_never_hold_a_lone_surrogate(text, want):
    assert scrub_surrogates(text) == want
    out = ReaderOutput(text, "reader_error", 1, "error " + text)
    assert out.text == want and out.error == "error " + want


def test_a_lone_surrogate_in_a_served_answer_is_a_scored_record(tmp_path, server):
    server.responder = lambda body: _reply({"choices": [{"message": {"content": f"Paris {LONE} is in France [1]."}}]})
    suite = _suite(tmp_path, _openai_reader(server))
    res = _run(suite)
    assert res.status_counts == {"ok": 2}
    recs = _records(res.out_dir)
    assert all("\ufffd" in r["answer"]["text"] for r in recs)
    assert _run(suite).reused == 2  # the cached records read back


def test_a_lone_surrogate_reaches_the_llm_judge_as_json(tmp_path, server):
    judge = OpenAIJudge("j", base_url=server.url, concurrency=1, max_retries=0, timeout=2)
    server.responder = lambda body: chat_answer("Yes")
    assert judge.predict(["premise " + LONE], ["claim " + LONE]) == [1.0]
    sent = server.requests[-1]["body"]["messages"][-1]["content"]
    assert LONE in sent  # sent as the JSON escape, read back as it was
    judge.close()


# -- judge log-probabilities of every shape -----------------------------------------------------------


def _logprob_reply(first):
    return _reply({"choices": [{"message": {"content": "Yes"}, "logprobs": {"content": [first]}}]})


@pytest.mark.parametrize(
    "first",
    [
        {"token": "Yes", "logprob": -0.1, "top_logprobs": 5},
        {"token": "Yes", "logprob": -0.1, "top_logprobs": True},
        {"token": "Yes", "logprob": -0.1, "top_logprobs": "yes"},
        {"token": "Yes", "logprob": -0.1, "top_logprobs": {"token": "No"}},
        {"token": "Yes", "logprob": -0.1, "top_logprobs": [7]},
        {"token": "Yes", "logprob": int("1" + "0" * 400)},  # positive and past the float range
        {"token": "Yes", "logprob": "-0.1"},
        {"token": "Yes", "logprob": True},
        {"token": 5, "logprob": -0.1},
    ],
)
def test_malformed_logprobs_are_a_judge_error(server, first):
    judge = OpenAIJudge("j", base_url=server.url, concurrency=1, max_retries=0, timeout=2)
    server.responder = lambda body: _logprob_reply(first)
    with pytest.raises(JudgeError, match="malformed logprobs"):
        judge.predict(["p"], ["h"])
    judge.close()


def test_a_400_digit_negative_logprob_is_probability_zero(server):
    judge = OpenAIJudge("j", base_url=server.url, concurrency=1, max_retries=0, timeout=2)
    tiny = -int("1" + "0" * 400)
    first = {"token": "No", "logprob": -0.2, "top_logprobs": [{"token": "Yes", "logprob": tiny}]}
    server.responder = lambda body: _logprob_reply(first)
    assert judge.predict(["p"], ["h"]) == [0.0]
    first = {"token": "Yes", "logprob": tiny, "top_logprobs": [{"token": "No", "logprob": tiny}]}
    server.responder = lambda body: _logprob_reply(first)
    assert math.isnan(judge.predict(["p"], ["h"])[0])  # both impossible: an abstention
    judge.close()


@pytest.mark.parametrize("top", [5, True])
def test_malformed_logprobs_in_a_suite_are_counted_judge_errors(tmp_path, server, top):
    server.responder = lambda body: (
        _logprob_reply({"token": "Yes", "logprob": -0.1, "top_logprobs": top})
        if "<premise>" in json.dumps(body)
        else chat_answer("Paris [1].")
    )
    res = _run(_suite(tmp_path, _openai_reader(server), _openai_judge(server)))
    assert res.status_counts == {"judge_error": 2}
    assert all("malformed logprobs" in r["error"] for r in _records(res.out_dir))


# -- properties: any reply shape gets a status --------------------------------------------------------

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.sampled_from([LONE, "Yes", "No", " yes", "No, I cannot help with that.", "", "\udfffYes"])
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
_ENTRY = st.fixed_dictionaries(
    {}, optional={"token": _JSON, "logprob": _JSON, "top_logprobs": _JSON | st.lists(_JSON, max_size=3)}
)
_MESSAGE = st.fixed_dictionaries({}, optional={"content": _JSON, "refusal": _JSON, "tool_calls": _JSON})
_CHOICE = st.fixed_dictionaries(
    {},
    optional={
        "message": _MESSAGE | _JSON,
        "logprobs": st.fixed_dictionaries({"content": st.lists(_ENTRY | _JSON, max_size=2)}) | _JSON,
        "finish_reason": _JSON,
    },
)
REPLIES = (
    _JSON
    | st.fixed_dictionaries({"choices": st.lists(_CHOICE | _JSON, max_size=2)}, optional={"usage": _JSON})
    | st.fixed_dictionaries({"choices": st.lists(_CHOICE, min_size=1, max_size=1)})
)
_SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@given(reply=REPLIES)
@_SETTINGS
def test_any_reply_to_the_reader_is_an_output_with_a_status(server, reply):
    reader = OpenAIReader("m", base_url=server.url, max_retries=0, timeout=2)
    server.responder = lambda body: _reply(reply)
    req = ReaderRequest(question_id="q", question="Where?", units=(Unit("Paris is in France."),))
    (out,) = reader.generate([req])
    reader.close()
    assert out.status in READER_STATUSES and (out.status != "ok" or out.error is None)
    assert isinstance(out.text, str)
    out.text.encode("utf-8")
    if out.status != "ok":
        assert out.text == "" and out.error


@given(reply=REPLIES, logprobs=st.booleans())
@_SETTINGS
def test_any_reply_to_the_judge_is_a_probability_or_a_judge_error(server, reply, logprobs):
    judge = OpenAIJudge("j", base_url=server.url, logprobs=logprobs, concurrency=1, max_retries=0, timeout=2)
    server.responder = lambda body: _reply(reply)
    try:
        (p,) = judge.predict(["premise"], ["claim"])
    except JudgeError as err:
        assert str(err).startswith("judge 'openai:j@")
    else:
        assert math.isnan(p) or 0.0 <= p <= 1.0
    finally:
        judge.close()


@pytest.mark.parametrize("body", ["0- 0-0", "1 - 2 - 3", "1 -2- 3", "0-0 -0"])
def test_a_marker_with_several_range_dashes_is_one_invalid_citation_without_spaces(body):
    """Found by the property above: spaces inside a many-dash body were kept in the recorded citation."""
    (s,) = parse_answer(f"claim [{body}].", n_units=5).sentences
    assert s.citations == () and s.invalid == ("".join(body.split()),)
