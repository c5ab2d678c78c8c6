"""The opt-in windowed judge (rageval.judges.windowed): premises longer than a model judge's window are judged in
overlapping token windows, support = the max over them.  Windows, token counts and per-record counts are worked
out by hand in the comments; probabilities are compared with the model called on each window directly.
"""

from __future__ import annotations

import math

import pytest

from rageval.judges.windowed import DEFAULT_OVERLAP, line_starts, parse_window, plan_windows

# ---------------------------------------------------------------- planning (no model)


def test_plan_windows_by_hand():
    # room 4, overlap 1: starts 0, 4-1=3, 7-1=6; the last window ends at the last token
    assert plan_windows(10, 4, 1) == [(0, 4), (3, 7), (6, 10)]
    # overlap 0: back to back
    assert plan_windows(8, 4, 0) == [(0, 4), (4, 8)]
    # a premise that fits is one window, whole
    assert plan_windows(4, 4, 3) == [(0, 4)]
    assert plan_windows(0, 4, 3) == [(0, 0)]
    # overlap is at most room // 2 = 2: 0-4, 2-6, 4-8, 6-10 (not 3 tokens, which would give 0-4, 1-5, ...)
    assert plan_windows(10, 4, 3) == [(0, 4), (2, 6), (4, 8), (6, 10)]
    # room 5, overlap 2: the nominal second start is 3; a line starting at token 4 lies in [3, 5]: start there
    assert plan_windows(12, 5, 2, starts=[4, 9]) == [(0, 5), (4, 9), (9, 12)]
    # a line start outside the overlap is not used: nominal starts 3, 6, 9 (and 9 is a line start anyway)
    assert plan_windows(12, 5, 2, starts=[2]) == [(0, 5), (3, 8), (6, 11), (9, 12)]
    with pytest.raises(ValueError, match="room"):
        plan_windows(10, 0, 0)


def test_every_token_is_in_some_window_and_windows_fit():
    for n in range(40):
        for room in (1, 2, 3, 7):
            for ov in (0, 1, 3, 9):
                spans = plan_windows(n, room, ov, starts=list(range(0, n, 5)))
                covered = set()
                for a, b in spans:
                    assert 0 <= a < b <= n or (n == 0 and (a, b) == (0, 0))
                    assert b - a <= room
                    covered.update(range(a, b))
                assert covered == set(range(n))
                assert [a for a, _ in spans] == sorted({a for a, _ in spans})  # strictly increasing starts


def test_line_starts_are_the_tokens_after_a_newline():
    text = "Title: A\nx y\nz"
    # tokens: Title(0,5) :(5,6) A(7,8) x(9,10) y(11,12) z(13,14)
    offs = [(0, 5), (5, 6), (7, 8), (9, 10), (11, 12), (13, 14)]
    assert line_starts(text, offs) == [3, 5]


def test_parse_window():
    assert parse_window(None) is None and parse_window(False) is None
    assert parse_window(True) == DEFAULT_OVERLAP == 128
    assert parse_window({"overlap": 0}) == 0
    assert parse_window({}) == DEFAULT_OVERLAP
    for bad in (-1, 3, "yes", {"overlap": -1}, {"overlap": 1.5}, {"overlap": True}, {"stride": 3}):
        with pytest.raises(ValueError, match="window"):
            parse_window(bad)


def test_window_refused_for_judges_without_a_token_window():
    from rageval.judges import get_judge

    with pytest.raises(ValueError, match="model judges"):
        get_judge("lexical", window=True)
    with pytest.raises(ValueError, match="window"):
        get_judge("lexical", window={"overlap": -2})
    with pytest.raises(ValueError, match="already wrapped"):
        get_judge(get_judge("lexical"), window=True)
    assert get_judge("lexical", window=False).id == "lexical:v1"


def test_suite_checks_and_cli_option(tmp_path):
    from rageval.suite.cli import _overrides
    from rageval.suite.config import SuiteError
    from rageval.suite.load import load_suite

    assert _overrides(None, None, None, 64) == {"judge.params.window": {"overlap": 64}}
    assert _overrides("nli:/m", None, None, 0) == {
        "judge.spec": "nli:/m",
        "judge.params": {},
        "judge.params.window": {"overlap": 0},
    }
    p = tmp_path / "s.yaml"
    base = "name: w\ndataset: {name: hotpotqa, limit: 2}\nsettings: [{compressor: identity}]\n"
    p.write_text(base + "judge: {spec: lexical, params: {window: true}}\n")
    with pytest.raises(SuiteError, match="judge.params.window: judge 'lexical' reads whole premises"):
        load_suite(p)
    p.write_text(base + "judge: {spec: 'nli:/nowhere', params: {window: {overlap: -3}}}\n")
    with pytest.raises(SuiteError, match="window.overlap must be an integer >= 0"):
        load_suite(p)


# ---------------------------------------------------------------- a fake judge on a real fast tokenizer

tokenizers = pytest.importorskip("tokenizers")
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tok():
    from test_judges_models import _tokenizer

    return _tokenizer("nli")  # WordLevel: one token per word or punctuation mark; [CLS] p [SEP] h [SEP]


class Scripted:
    """A judge on the tiny tokenizer whose answer for a window is scripted by the window's first word."""

    id = "scripted"
    batch_size = 2

    def __init__(self, tok, max_length, answers):
        self.tokenizer, self.max_length, self.answers, self.seen = tok, max_length, answers, []

    def full_lengths(self, premises, hypotheses):
        return [len(x) for x in self.tokenizer(premises, hypotheses)["input_ids"]]

    def predict(self, premises, hypotheses):
        self.seen.extend(premises)
        return [self.answers[p.split()[0]] for p in premises]


# ten words, one token each; hypothesis "paris" (1 token) + 3 specials: overhead 4; max_length 8: room 4
WORDS = "a b c d e f g h i j"
HYP = "paris"


def _windowed(tok, answers, overlap=1, max_length=8):
    from rageval.judges import get_judge

    return get_judge(Scripted(tok, max_length, answers), window={"overlap": overlap})


def test_windows_of_a_fake_judge_and_max_over_them(tok):
    # room 4, overlap 1: tokens 0-4, 3-7, 6-10 -> "a b c d", "d e f g", "g h i j"
    runner = _windowed(tok, {"a": 0.2, "d": 0.9, "g": 0.4})
    plan = runner.judge.plan(WORDS, HYP)
    assert plan.spans == ((0, 4), (3, 7), (6, 10))
    assert plan.texts == ("a b c d", "d e f g", "g h i j")
    assert runner([WORDS], [HYP]) == [0.9]
    assert runner.judge.backend.seen == ["a b c d", "d e f g", "g h i j"]
    # before: 10 + 4 = 14 tokens; after: what is read, 3 windows x (4 + 4) = 24
    assert runner.token_counts(WORDS, HYP) == (14, 24)
    assert runner.judge.window_count(WORDS, HYP) == 3
    s = runner.stats()
    assert (s["windowed"], s["windows"]) == (1, 3)


def test_abstaining_windows_are_no_evidence(tok):
    # one window decides (0.3), two abstain: 0.3, a decision, not an abstention
    r = _windowed(tok, {"a": math.nan, "d": 0.3, "g": math.nan})
    assert r([WORDS], [HYP]) == [0.3]
    assert r.decide([WORDS], [HYP], threshold=0.5) == [False]
    assert r.stats()["abstained"] == 0
    # every window abstains: the pair abstains
    r = _windowed(tok, {"a": math.nan, "d": math.nan, "g": math.nan})
    assert math.isnan(r([WORDS], [HYP])[0])
    assert r.decide([WORDS], [HYP]) == [None]
    # a window past an abstaining one supports: supported
    r = _windowed(tok, {"a": math.nan, "d": math.nan, "g": 0.8})
    assert r.decide([WORDS], [HYP]) == [True]


def test_a_short_premise_is_judged_as_without_windowing(tok):
    r = _windowed(tok, {"a": 0.6})
    assert r(["a b c d"], [HYP]) == [0.6]  # 4 + 4 = 8 tokens: fits
    assert r.judge.backend.seen == ["a b c d"]
    assert r.token_counts("a b c d", HYP) == (8, 8)
    assert r.judge.window_count("a b c d", HYP) == 1 and r.stats()["windowed"] == 0


def test_a_joint_premise_breaks_windows_at_its_lines(tok):
    # two units joined with "\n": "a b c" / "d e f g h": tokens a0 b1 c2 | d3 ... h7; room 4, overlap 2
    # first window 0-4; nominal next start 4 - 2 = 2; the line "d e f g h" starts at token 3, within [2, 4]
    premise = "a b c\nd e f g h"
    r = _windowed(tok, {"a": 0.1, "d": 0.7, "f": 0.2}, overlap=2)
    plan = r.judge.plan(premise, HYP)
    assert plan.spans == ((0, 4), (3, 7), (5, 8))  # then nominal 7 - 2 = 5, no line start in [5, 7]
    assert plan.texts == ("a b c\nd", "d e f g", "f g h")
    assert r([premise], [HYP]) == [0.7]


def test_an_over_long_hypothesis_is_truncated_not_windowed(tok):
    # hypothesis of 1 token + 3 specials = 4 = half of max_length 8: windowed
    r = _windowed(tok, {"a": 0.5})
    assert r.judge.window_count(WORDS, HYP) == 3
    long_h = "paris is"  # 2 + 3 = 5 > 8 / 2: not windowed
    assert r.judge.window_count(WORDS, long_h) == 1
    assert r.token_counts(WORDS, long_h) == (15, 8)  # counted as truncated (after < before)


def test_windowed_ids_differ_and_never_share_a_cache(tok, tmp_path):
    from rageval.judges import get_judge

    plain = get_judge(Scripted(tok, 8, {}))
    one = _windowed(tok, {}, overlap=1)
    two = _windowed(tok, {}, overlap=2)
    assert one.id == "scripted|window=overlap:1,max,v1" and two.id == "scripted|window=overlap:2,max,v1"
    assert len({plain.id, one.id, two.id}) == 3
    a = get_judge(Scripted(tok, 8, {"a": 0.2}), cache_dir=tmp_path)
    b = get_judge(Scripted(tok, 8, {"a": 0.2, "d": 0.9, "g": 0.4}), cache_dir=tmp_path, window={"overlap": 1})
    assert a.cache_path != b.cache_path


# ---------------------------------------------------------------- per-record counts through the attribution function

# one unit whose text is its declared snippet: summary-checked and declared-span ask the same pair
LONG = "a b c d e f g h i j"
UNITS = [[{"text": LONG, "source_ids": ["d0.s0"]}]]
SOURCES = [[{"id": "d0.s0", "text": LONG}]]
ANSWER = ["Paris [1]."]  # hypothesis "Paris." -> "paris ." (2 tokens) + 3 specials = 5; max_length 12: room 7


def test_per_record_counts_with_and_without_windows(tok):
    from rageval.diagnostics.verification import verification
    from rageval.judges import get_judge

    answers = {"a": 0.1, "e": 0.8}
    # windowed, overlap 4, at most room // 2 = 3: room 7 -> tokens 0-7, 4-10 ("a b c d e f g", "e f g h i j");
    # max 0.8: supported
    win = get_judge(Scripted(tok, 12, answers), window={"overlap": 4})
    r = verification(ANSWER, UNITS, SOURCES, judge=win)
    q = r["per_question"][0]
    assert (q["judge_inputs"], q["judge_inputs_truncated"], q["judge_inputs_windowed"]) == (1, 0, 1)
    assert q["unsupported_declared_span"] == 0.0
    # tokens before: 10 + 5 = 15 per checked pair; read: (7 + 5) + (6 + 5) = 23
    assert (q["verifier_tokens_declared_span"], q["verifier_tokens_declared_span_after_truncation"]) == (15, 23)
    assert r["total_judge_inputs_windowed"] == 1
    # the same judge truncating: the premise is cut to "a b c d e f g" (scripted 0.1): unsupported
    cut = get_judge(Truncating(tok, 12, answers))
    r = verification(ANSWER, UNITS, SOURCES, judge=cut)
    q = r["per_question"][0]
    assert (q["judge_inputs"], q["judge_inputs_truncated"], q["judge_inputs_windowed"]) == (1, 1, None)
    assert q["unsupported_declared_span"] == 1.0
    assert (q["verifier_tokens_declared_span"], q["verifier_tokens_declared_span_after_truncation"]) == (15, 12)
    assert r["total_judge_inputs_windowed"] is None


class Truncating(Scripted):
    """The scripted judge without windows: it reads the first ``max_length`` tokens of the pair."""

    id = "scripted-truncating"

    def token_counts(self, premise, hypothesis):
        n = self.full_lengths([premise], [hypothesis])[0]
        return n, min(n, self.max_length)


def test_compression_and_the_catalog_carry_the_windowed_count(tok):
    from rageval.diagnostics import CATALOG
    from rageval.diagnostics.compression import compression
    from rageval.judges import get_judge

    for name in ("verification", "compression"):
        out = {o.key: o for o in CATALOG[name].outputs}
        assert out["judge_inputs_windowed"].direction == "none"
    win = get_judge(Scripted(tok, 12, {"a": 0.1, "e": 0.8}), window={"overlap": 4})
    q = compression(ANSWER, UNITS, SOURCES, judge=win, reader_input_tokens=[100])["per_question"][0]
    assert q["judge_inputs_windowed"] == 1
    assert q["cost_declared_span"] == 100 + 15  # the cost counts the pair before truncation, as without windows


# ---------------------------------------------------------------- real (tiny) models built here

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def nli_path(tmp_path_factory):
    from test_judges_models import build_nli

    return build_nli(tmp_path_factory.mktemp("nli") / "tiny-nli")


# 20 words of the tiny vocabulary, one token each; hypothesis "paris is in france ." = 5 tokens, + 3 specials = 8
PREMISE = "paris is the capital of france lyon is a big city in the nile is a long river france paris"
CLAIM = "paris is in france ."


def _entailment_by_hand(path, premises, hypothesis):
    """The model called on each window directly: softmax mass of ENTAILMENT (label 0), one pair at a time."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tk = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    out = []
    with torch.inference_mode():
        for p in premises:
            enc = tk(p, hypothesis, return_tensors="pt")
            out.append(float(torch.softmax(model(**enc).logits.float(), dim=-1)[0, 0]))
    return out


def test_nli_windows_fit_and_the_probability_is_the_max_over_them(nli_path):
    from rageval.judges import get_judge

    runner = get_judge(f"nli:{nli_path}", max_length=20, window={"overlap": 2})
    plain = get_judge(f"nli:{nli_path}", max_length=20)
    assert runner.id == plain.id + "|window=overlap:2,max,v1"
    words = PREMISE.split()
    # 20 + 8 = 28 tokens > 20: room 20 - 8 = 12, overlap 2: tokens 0-12, 10-20
    plan = runner.judge.plan(PREMISE, CLAIM)
    assert plan.spans == ((0, 12), (10, 20))
    assert plan.texts == (" ".join(words[:12]), " ".join(words[10:]))
    lengths = runner.judge.backend.full_lengths(list(plan.texts), [CLAIM, CLAIM])
    assert lengths == [20, 18] and max(lengths) <= 20  # each window fits with the whole claim
    assert runner.token_counts(PREMISE, CLAIM) == (28, 38)
    by_hand = _entailment_by_hand(nli_path, plan.texts, CLAIM)
    assert runner([PREMISE], [CLAIM])[0] == pytest.approx(max(by_hand), abs=1e-5)
    assert runner.stats()["truncated"] == 0  # no window was cut
    # a short premise: exactly the unwindowed judge's probability
    short = " ".join(words[:6])
    assert runner([short], [CLAIM]) == plain([short], [CLAIM])
    assert runner.token_counts(short, CLAIM) == plain.token_counts(short, CLAIM) == (14, 14)


def test_seq2seq_windows_fit(tmp_path):
    from test_judges_models import build_t5

    from rageval.judges import get_judge

    path = build_t5(tmp_path / "t5")
    runner = get_judge(f"seq2seq:{path}", max_length=24, window={"overlap": 3})
    # "premise: {p} hypothesis: {h}": premise, :, hypothesis, :, 5 claim tokens, </s> = 10 besides the premise;
    # 20 + 10 = 30 > 24: room 14, overlap 3: tokens 0-14, 11-20
    plan = runner.judge.plan(PREMISE, CLAIM)
    assert plan.spans == ((0, 14), (11, 20))
    assert runner.judge.backend.full_lengths(list(plan.texts), [CLAIM, CLAIM]) == [24, 19]
    got = runner([PREMISE], [CLAIM])[0]
    each = runner.judge.backend.predict(list(plan.texts), [CLAIM, CLAIM])
    assert got == pytest.approx(max(each), abs=1e-6)


SUITE = """\
name: windows
dataset: {{name: hotpotqa, limit: 3}}
retrieval: {{method: bm25, k: 3}}
settings:
  - {{compressor: identity}}
reader: {{backend: extractive}}
judge: {{spec: "nli:{path}", params: {{max_length: 64{window}}}}}
diagnostics: [verification, compression]
output_dir: {out}
seed: 0
"""


@pytest.mark.slow
def test_suite_records_and_summary_count_windowed_inputs(nli_path, tmp_path):
    import csv
    import json

    from rageval.suite.load import load_suite
    from rageval.suite.run import run_suite

    def run(name, window):
        p = tmp_path / f"{name}.yaml"
        p.write_text(SUITE.format(path=nli_path, out=tmp_path / name, window=window))
        out = run_suite(load_suite(p), progress=False).out_dir
        recs = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
        return out, {r["question_id"]: r["metrics"] for r in recs if r["status"] == "ok"}

    _, cut = run("cut", "")
    out, win = run("win", ", window: {overlap: 8}")
    assert cut and cut.keys() == win.keys()
    for qid, m in win.items():
        c = cut[qid]
        assert c["judge_inputs_windowed"] is None  # windowing off
        assert m["judge_inputs"] == c["judge_inputs"]  # the same pairs are asked
        # an input the truncating judge cut is windowed, unless its claim takes over half the window
        assert m["judge_inputs_windowed"] + m["judge_inputs_truncated"] == c["judge_inputs_truncated"]
        # the pair counted whole is the same; what is read differs
        assert m["verifier_tokens_declared_span"] == c["verifier_tokens_declared_span"]
    assert sum(m["judge_inputs_windowed"] for m in win.values()) > 0
    with open(out / "summary.csv", newline="") as f:
        row = next(csv.DictReader(f))
    mean = sum(m["judge_inputs_windowed"] for m in win.values()) / len(win)
    assert float(row["judge_inputs_windowed"]) == pytest.approx(mean)
    assert "judge_inputs_windowed" in (out / "summary.md").read_text()
