"""Model replies read strictly (issue 41, category 4): what the LLM judge and the OpenAI reader take from a reply.

The judge: a reply's verdict is its first word (``yes`` 1.0, ``no`` 0.0), after a closed
``<think>…</think>`` block; a refusal is the model declining in the first person (or as
an AI, or opening with an apology) — "cannot"/"unable" about the premise is an answer;
a reply holding both words abstains.  The reader: the choice of ``index`` 0, never
another; ``finish_reason: length`` keeps the cut answer, flagged ``extra.truncated``
and counted per setting; ``content_filter`` is no answer; a ``usage.prompt_tokens``
that is no count (10**30) is not recorded; the served model is recorded when it is not
the one asked for; a body's charset comes from its Content-Type; ``HTTP://`` is
``http://``.
"""

from __future__ import annotations

import json
import math
import re

import pytest
from fault_http import FaultServer, _response
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from suite_files import one_setting_suite

from rageval.http.chat import MAX_USAGE_TOKENS, first_choice, usage_count
from rageval.http.client import body_charset
from rageval.http.urls import endpoint_list, split_base_url
from rageval.judges.openai_compat import OpenAIJudge, probability_from_answer
from rageval.judges.replies import answer_text, is_refusal, verdict
from rageval.readers.base import ReaderRequest
from rageval.readers.openai_compat import OpenAIReader
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite
from rageval.types import Unit

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


# -- the judge: a reply's verdict ----------------------------------------------------------------------------

#: replies and their verdicts, by the rule (module doc)
REPLIES = [
    ("Yes", 1.0),
    ("yes.", 1.0),
    ("**No**", 0.0),
    ("No, the premise cannot support the claim.", 0.0),  # "cannot" about the premise: an answer
    ("No, the premise is unable to establish that.", 0.0),
    ("Yes — the patient was unable to walk, as the premise says.", 1.0),
    ("Yes, the company declined to comment, as stated.", 1.0),
    ("No. The premise does not mention it.", 0.0),
    ("Yes and no: the first part is supported, the second is not supported.", math.nan),  # both words
    ("Yes/No", math.nan),
    ("No... well, yes, partly.", math.nan),
    ("No, I cannot help with that.", math.nan),  # first-person refusals
    ("Yes, but as an AI I cannot be sure.", math.nan),
    ("Sorry, I'm unable to determine that.", math.nan),
    ("I'm afraid I must decline.", math.nan),
    ("Unfortunately the premise is unclear.", math.nan),
    ("<think>The premise says Paris is in France. I cannot see a problem.</think>\n\nYes", 1.0),
    ("<THINK>\nno way to tell? yes it is said\n</think> No.", 0.0),
    ("<thinking>hm</thinking>yes", 1.0),
    ("<think>The premise says", math.nan),  # never closed: no answer came
    ("<think>", math.nan),
    ("<think></think>", math.nan),  # closed, then nothing
    ("Maybe", math.nan),
    ("Yesterday it was so.", math.nan),
    ("", math.nan),
    (None, math.nan),
]


@pytest.mark.parametrize("reply,p", REPLIES)
def test_a_reply_reads_as_its_rule_says(reply, p):
    assert same(verdict(reply), p) and same(probability_from_answer(reply), p)


_FILLER = st.text(alphabet=st.sampled_from("abcdefghijklmnoprstuvwz .,;:'-"), max_size=60)
_NEUTRAL = _FILLER.filter(lambda t: not ({"yes", "no"} & set(re.findall(r"[a-z]+", t.lower()))))  # as words
_NEUTRAL = _NEUTRAL.filter(lambda t: not is_refusal(t) and not is_refusal("Yes " + t))
_THIRD_PERSON = st.sampled_from(["cannot", "can't", "unable", "won't", "refuse", "decline", "not allowed", "sorry"])
_SUBJECT = st.sampled_from(["the premise", "the author", "they", "she", "it", "the claim"])


@FAST
@given(
    word=st.sampled_from(["yes", "Yes", "YES", "no", "No", "NO"]),
    rest=_NEUTRAL,
    punct=st.sampled_from(["", ".", ",", "!", " -"]),
)
def test_a_first_word_decides_when_nothing_else_does(word, rest, punct):
    want = 1.0 if word.lower() == "yes" else 0.0
    assert verdict(f"{word}{punct} {rest}") == want
    assert (
        verdict(f"<think>{rest} I cannot tell, yes or no?</think>\n{word}{punct} {rest}") == want
    )  # reasoning dropped


@FAST
@given(word=st.sampled_from(["yes", "no"]), subject=_SUBJECT, verb=_THIRD_PERSON, rest=_NEUTRAL)
def test_refusal_words_about_someone_else_are_an_answer(word, subject, verb, rest):
    reply = f"{word.capitalize()}, {subject} {verb} {rest}"
    assert not is_refusal(reply)
    assert verdict(reply) == (1.0 if word == "yes" else 0.0)


@FAST
@given(
    word=st.sampled_from(["Yes", "No"]),
    refusal=st.sampled_from(["I cannot", "I can't", "I won't", "I'm unable to", "I am not able to", "I refuse to"]),
    rest=_NEUTRAL,
)
def test_the_model_declining_in_the_first_person_abstains(word, refusal, rest):
    reply = f"{word}, {refusal} {rest}"
    assert is_refusal(reply) and math.isnan(verdict(reply))


@FAST
@given(
    first=st.sampled_from(["yes", "no"]),
    before=_NEUTRAL,
    after=_NEUTRAL,
    sep=st.sampled_from([" and ", "/", " or ", ". "]),
)
def test_a_reply_with_both_words_abstains(first, before, after, sep):
    other = "no" if first == "yes" else "yes"
    assert math.isnan(verdict(f"{first}{sep}{before} {other} {after}"))


@FAST
@given(inner=_NEUTRAL)
def test_a_reasoning_block_never_closed_abstains(inner):
    assert answer_text(f"<think>{inner} yes") is None and math.isnan(verdict(f"<think>{inner} yes"))


def _judge(server, **kw):
    return OpenAIJudge("j", base_url=server.url, concurrency=1, max_retries=0, timeout=5, api_key_env=None, **kw)


def _raw(body: dict) -> bytes:
    return json.dumps(body).encode()


@pytest.fixture
def server():
    s = FaultServer()
    yield s
    s.close()


def test_the_judge_reads_replies_through_a_server(server):
    """The text rule end to end, and a first token that opens a reasoning block read from the text instead."""
    judge = _judge(server)
    think_lp = {"content": [{"token": "<think>", "logprob": -0.01, "top_logprobs": [{"token": "Yes", "logprob": -9}]}]}
    replies = iter(
        [
            {"choices": [{"message": {"content": "No, the premise cannot support the claim."}}]},
            {"choices": [{"message": {"content": "<think>I cannot see it… fine.</think> Yes"}, "logprobs": think_lp}]},
            {"choices": [{"message": {"content": "Yes and no: not supported."}}]},
            {"choices": [{"index": 2, "message": {"content": "No"}}, {"index": 0, "message": {"content": "Yes"}}]},
        ]
    )
    server.responder = lambda _: _raw(next(replies))
    got = judge.predict(["p1", "p2", "p3", "p4"], ["h"] * 4)
    assert got[:2] == [0.0, 1.0] and math.isnan(got[2]) and got[3] == 1.0
    stats = judge.stats()
    assert stats["reasoning"] == 1 and stats["refused"] == 0 and stats["off_label"] == 1
    judge.close()


def test_the_judge_refuses_a_reply_without_a_choice_of_index_0(server):
    from rageval.judges.base import JudgeError

    judge = _judge(server)
    server.responder = lambda _: _raw({"choices": [{"index": 2, "message": {"content": "Yes"}}]})
    with pytest.raises(JudgeError, match="no choice of index 0"):
        judge.predict(["p"], ["h"])
    judge.close()


# -- the chat-completions reply: choice, usage --------------------------------------------------------------


@FAST
@given(indexes=st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=5, unique=True))
def test_the_choice_read_is_the_one_of_index_0(indexes):
    choices = [{"index": i, "message": {"content": f"answer {i}"}} for i in indexes]
    choice, why = first_choice({"choices": choices})
    if 0 in indexes:
        assert why is None and choice["message"]["content"] == "answer 0"
    else:
        assert choice is None and "no choice of index 0" in why


@FAST
@given(value=st.one_of(st.integers(min_value=-(10**40), max_value=10**40), st.floats(), st.booleans(), st.text()))
def test_a_usage_count_is_a_non_negative_integer_within_bounds(value):
    count, refused = usage_count({"usage": {"prompt_tokens": value}}, "prompt_tokens")
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_USAGE_TOKENS
    assert (count, refused) == ((value, None) if ok else (None, value))


# -- the reader ---------------------------------------------------------------------------------------------

REQ = ReaderRequest("q1", "Where is Paris?", (Unit("Paris is in France."),))


def _reader(url="http://127.0.0.1:9/v1", **kw):
    return OpenAIReader("tiny", base_url=url, api_key_env=None, max_retries=0, timeout=5, **kw)


def _parse(resp):
    return _reader()._parse(REQ, resp)


def test_a_length_cut_answer_is_kept_and_flagged():
    out = _parse({"choices": [{"index": 0, "message": {"content": "Paris is in Fr"}, "finish_reason": "length"}]})
    assert (out.status, out.text, out.extra) == ("ok", "Paris is in Fr", {"truncated": True})
    out = _parse({"choices": [{"index": 0, "message": {"content": "Paris [1]."}, "finish_reason": "stop"}]})
    assert (out.status, out.extra) == ("ok", {})


@pytest.mark.parametrize(
    "resp,reason",
    [
        ({"choices": [{"index": 2, "message": {"content": "Berlin"}}]}, "no choice of index 0"),
        (
            {"choices": [{"index": 0, "message": {"content": "a"}}, {"index": 0, "message": {"content": "b"}}]},
            "2 choices",
        ),
        ({"choices": [{"message": {"content": "Par"}, "finish_reason": "content_filter"}]}, "content filter"),
        ({"choices": [{"message": {"content": "x"}, "finish_reason": "tool_calls"}]}, "tool calls"),
    ],
)
def test_replies_that_give_no_answer_of_choice_0(resp, reason):
    out = _parse(resp)
    assert out.status == "reader_error" and reason in out.error and out.text == ""


def test_the_answer_of_index_0_is_taken_wherever_it_is_listed():
    resp = {"choices": [{"index": 1, "message": {"content": "Berlin"}}, {"index": 0, "message": {"content": "Paris"}}]}
    assert _parse(resp).text == "Paris"


@pytest.mark.parametrize("tokens", [10**30, 10**400, -1, 3.5, True, "321", MAX_USAGE_TOKENS + 1])
def test_a_prompt_token_count_that_is_no_count_is_not_recorded(tokens):
    reader = _reader()
    out = reader._parse(REQ, {"choices": [{"message": {"content": "Paris"}}], "usage": {"prompt_tokens": tokens}})
    assert out.status == "ok" and out.input_tokens == reader.count_prompt_tokens(REQ)
    assert "prompt_tokens_refused" in out.extra and len(json.dumps(out.extra)) < 80  # 10**400: its size, not digits


def test_the_served_model_is_recorded_only_when_it_is_another():
    base = {"choices": [{"message": {"content": "Paris"}}]}
    assert _parse({**base, "model": "tiny"}).extra == {}  # the model asked for: records unchanged
    assert _parse(base).extra == {}
    assert _parse({**base, "model": "tiny-2024-08-06"}).extra == {"served_model": "tiny-2024-08-06"}
    assert _parse({**base, "model": 7}).extra == {}  # not a name


@FAST
@given(
    charset=st.sampled_from(["iso-8859-1", "ISO-8859-1", "latin-1", "utf-16", "utf-8", "cp1252"]),
    text=st.text(alphabet="aéüß€ñ x", max_size=20),
)
def test_a_body_is_decoded_in_its_declared_charset(charset, text):
    try:
        raw = json.dumps({"t": text}, ensure_ascii=False).encode(charset)
    except UnicodeEncodeError:
        return  # € is not Latin-1: no body to send
    assert json.loads(raw.decode(body_charset(f"application/json; charset={charset}"))) == {"t": text}


def test_a_latin1_body_reaches_the_reader(server):
    body = json.dumps({"choices": [{"message": {"content": "Café [1]."}}]}, ensure_ascii=False).encode("iso-8859-1")
    raw = _response(200, body).replace(
        b"Content-Type: application/json", b"Content-Type: application/json; charset=iso-8859-1"
    )
    server.play(("raw", {"data": raw}), ("raw", {"data": raw.replace(b"iso-8859-1", b"x-no-such-charset")}))
    reader = _reader(server.url)
    first, second = reader.generate([REQ, REQ])
    assert (first.status, first.text) == ("ok", "Café [1].")
    assert second.status == "reader_error" and "unknown charset" in second.error
    reader.close()


@FAST
@given(
    scheme=st.sampled_from(["http", "https"]).flatmap(
        lambda s: st.sampled_from(sorted({s, s.upper(), s.capitalize(), s.swapcase()}))
    )
)
def test_a_scheme_in_any_case_is_taken(scheme):
    url = f"{scheme}://127.0.0.1:8000/v1"
    assert split_base_url(url, "x").hostname == "127.0.0.1" and endpoint_list(url) == (url,)


def test_a_truncated_answer_is_counted_per_setting_and_named_in_the_summary(tmp_path, server):
    from click.testing import CliRunner

    from rageval.cli import main

    cut = {"choices": [{"message": {"content": "Paris is"}, "finish_reason": "length"}], "model": "m"}
    whole = {"choices": [{"message": {"content": "Paris [1]."}, "finish_reason": "stop"}], "model": "m"}
    replies = iter([cut, whole])
    server.responder = lambda _: _raw(next(replies))
    reader = f"{{backend: openai, params: {{model: m, base_url: '{server.url}', api_key_env: null, max_retries: 0}}}}"
    suite = one_setting_suite(tmp_path, reader)
    res = CliRunner().invoke(main, ["suite", str(suite), "--no-progress"])
    assert res.exit_code == 0, res.output
    out = tmp_path / "out"
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert sorted(r["extra"].get("truncated", False) for r in records) == [False, True]
    assert all(r["status"] == "ok" and "served_model" not in r["extra"] for r in records)
    stats = json.loads((out / "run_stats.json").read_text())
    (name,) = stats["truncated"]
    assert stats["truncated"] == {name: 1}
    assert f"truncated: {name}: 1 answer(s) cut at the reader's max_tokens" in res.output
    again = run_suite(load_suite(suite), progress=False, build_report=False)  # reused from the cache: counted too
    assert again.truncated == {name: 1} and again.reused == 2


def test_the_in_process_judge_counts_a_first_token_that_opens_a_reasoning_block():
    import threading

    from rageval.judges.causal import CausalLMJudge

    judge = CausalLMJudge.__new__(CausalLMJudge)  # no model: its top tokens are scripted below
    judge.engine, judge._lock = "transformers", threading.Lock()
    judge._counts = {"from_logprobs": 0, "off_label": 0, "reasoning": 0}
    tops = {
        "p1": [("<think>", -0.01), ("The", -6.0)],  # a reasoning model: nothing to read
        "p2": [("<think>", -0.1), ("Yes", -3.0), ("No", -3.0)],  # its alternatives still decide
        "p3": [("Yes", -0.1), ("No", -2.4)],
    }
    judge.top_tokens = lambda premise, hypothesis: tops[premise]
    got = judge.predict(["p1", "p2", "p3"], ["h"] * 3)
    assert math.isnan(got[0]) and got[1] == 0.5
    assert got[2] == pytest.approx(math.exp(-0.1) / (math.exp(-0.1) + math.exp(-2.4)), abs=1e-12)
    assert judge.stats() == {"from_logprobs": 3, "off_label": 1, "reasoning": 2}
