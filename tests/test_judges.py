"""The judge wrapper (dedup, cache, sorting, batching), the lexical and replay judges, get_judge."""

import json
import sqlite3

import pytest

from rageval.judges import (
    CallableJudge,
    JudgeError,
    JudgeRunner,
    LexicalJudge,
    ReplayJudge,
    get_judge,
    save_replay,
)
from rageval.judges.lexical import content_tokens

try:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    HAVE_HYPOTHESIS = True
except ImportError:  # pragma: no cover
    HAVE_HYPOTHESIS = False


class Counting:
    id = "counting:v1"

    def __init__(self, batch_size=4):
        self.batches = []
        self.batch_size = batch_size

    def predict(self, premises, hypotheses):
        self.batches.append(list(zip(premises, hypotheses)))
        return [min(1.0, len(h) / max(1, len(p))) for p, h in zip(premises, hypotheses)]


def test_runner_deduplicates_and_counts():
    j = Counting()
    r = get_judge(j)
    out = r(["aa", "aa", "bbbb", "aa"], ["a", "a", "b", "a"])
    assert out == [0.5, 0.5, 0.25, 0.5]
    s = r.stats()
    assert (s["requested"], s["unique"], s["executed"]) == (4, 2, 2)
    r(["aa"], ["a"])
    s = r.stats()
    assert (s["requested"], s["executed"], s["memory_hits"]) == (5, 2, 1)
    assert s["executed_over_requested"] == pytest.approx(2 / 5)


def test_runner_sorts_by_length_and_batches():
    j = Counting(batch_size=2)
    r = get_judge(j)
    prem = ["x" * n for n in (9, 1, 5, 3, 7)]
    r(prem, ["h"] * 5)
    assert [len(b) for b in j.batches] == [2, 2, 1]
    lengths = [len(p) for b in j.batches for p, _ in b]
    assert lengths == sorted(lengths)


def test_disk_cache_hits_on_rerun(tmp_path):
    j1 = Counting()
    r1 = get_judge(j1, cache_dir=tmp_path)
    r1(["p1", "p2"], ["h", "h"])
    assert r1.stats()["cache_misses"] == 2
    r1.close()
    j2 = Counting()
    r2 = get_judge(j2, cache_dir=tmp_path)
    assert r2(["p1", "p2", "p3"], ["h", "h", "h"]) == [0.5, 0.5, 0.5]
    s = r2.stats()
    assert (s["cache_hits"], s["cache_misses"], s["executed"]) == (2, 1, 1)
    assert j2.batches == [[("p3", "h")]]


def test_cache_key_includes_judge_id(tmp_path):
    a = Counting()
    get_judge(a, cache_dir=tmp_path)(["p"], ["h"])
    b = Counting()
    b.id = "counting:v2"
    rb = get_judge(b, cache_dir=tmp_path)
    rb(["p"], ["h"])
    assert rb.stats()["cache_hits"] == 0 and rb.stats()["executed"] == 1


def test_cache_survives_a_killed_batch(tmp_path):
    class Dies:
        id = "dies"
        batch_size = 1

        def __init__(self):
            self.n = 0

        def predict(self, p, h):
            self.n += 1
            if self.n == 3:
                raise KeyboardInterrupt
            return [0.9] * len(p)

    r = get_judge(Dies(), cache_dir=tmp_path)
    with pytest.raises(KeyboardInterrupt):
        r(["a", "bb", "ccc", "dddd"], ["h"] * 4)
    db = sqlite3.connect(str(r.cache_path))
    assert db.execute("SELECT COUNT(*) FROM judgements").fetchone()[0] == 2


def test_plain_callable_is_accepted_but_not_disk_cached_without_id(tmp_path):
    r = get_judge(lambda p, h: [1.0] * len(p), cache_dir=tmp_path)
    assert r.cache_path is None
    assert r.decide(["a"], ["b"], threshold=0.5) == [True]
    r2 = get_judge(lambda p, h: [0.2] * len(p), cache_dir=tmp_path, judge_id="const:0.2")
    assert r2.cache_path is not None and r2(["a"], ["b"]) == [0.2]


def test_judge_returning_garbage_is_an_error():
    with pytest.raises(JudgeError, match=r"returned 1 values for 2 pairs \(request indexes 0, 1\)"):
        get_judge(lambda p, h: [0.5])(["a", "b"], ["c", "d"])
    with pytest.raises(JudgeError, match=r"returned 1\.5 .*for pair 0 .*probability in \[0, 1\]"):
        get_judge(lambda p, h: [1.5] * len(p))(["a"], ["b"])
    with pytest.raises(ValueError, match="one premise per hypothesis"):
        get_judge("lexical")(["a", "b"], ["c"])
    with pytest.raises(TypeError, match=r"premises\[0\]"):
        get_judge("lexical")([None], ["c"])


def test_threshold_decision_is_inclusive():
    r = get_judge(lambda p, h: [0.5] * len(p))
    assert r.decide(["a"], ["b"], threshold=0.5) == [True]
    assert r.decide(["a"], ["b"], threshold=0.51) == [False]


def test_wrapping_twice_is_refused_and_get_judge_returns_runner():
    r = get_judge("lexical")
    assert get_judge(r) is r
    with pytest.raises(TypeError, match="already wrapped"):
        JudgeRunner(r)


def test_unknown_judge_name_suggests():
    with pytest.raises(ValueError, match="Did you mean 'lexical'"):
        get_judge("lexcal")
    with pytest.raises(TypeError):
        get_judge(42)
    with pytest.raises(ValueError, match="empty"):
        get_judge("  ")


# --- lexical --------------------------------------------------------------------------------------


def test_lexical_rule_hand_computed():
    j = LexicalJudge()
    # content(h) = {eiffel, tower, pari, built, 1889}; premise has eiffel, tower, pari, 1889 -> 4/5
    p = j.predict(["The Eiffel Tower stands in Paris since 1889."], ["The Eiffel Tower in Paris was built in 1889."])
    assert p == [0.8]
    assert j.predict(["anything"], ["the of and"]) == [0.0]  # no content token
    assert content_tokens("Title: Cats") == {"cat"}


def _content_by_definition(text):
    """The rule as the module doc states it, on the whole text at once: normalize, split, drop stopwords, stem."""
    from rageval.judges.lexical import STOPWORDS
    from rageval.text.normalize import normalize_answer

    out = set()
    for t in normalize_answer(text).split():
        if t in STOPWORDS:
            continue
        out.add(t[:-1] if len(t) > 3 and t.endswith("s") and not t.endswith("ss") else t)
    return out


TRICKY_LINES = [
    "Title: The Cats\nThe cats sat.",
    "ΟΔΟΣ\nΣΟΦΟΣ ΟΔΟΣ.",  # the final sigma: lowercased by its context, which a newline ends
    "a\nan\nthe\nthe a an",  # articles at the start and end of lines
    "glass\nbus\nhis\nis\nss\nboss's",  # the stem's edges: "ss", 3 letters, a stopword, an apostrophe
    "end-\nof-line\r\nwith CRLF\t tabs",
    "\n\n\nonly newlines\n",
    "İstanbul\nİ\nﬁle café\u00a0naïve",  # lowercasing to several characters, a no-break space
    "x.\ny,z\n[1] 3.5 \u2028 line separator",
]


def test_lexical_multi_line_text_is_the_union_of_its_lines():
    """The memo reads a text of several lines as the union of its lines' sets: the same set as the rule applied to
    the whole text, on lines that normalization could join or split (hand-picked edges)."""
    from rageval.judges.lexical import clear_memo

    for text in TRICKY_LINES:
        clear_memo()
        assert content_tokens(text) == _content_by_definition(text), text
        assert content_tokens(text) == set().union(*(_content_by_definition(x) for x in text.split("\n"))), text
    # by hand: "Title: The Cats" -> {cat}; "The cats sat." -> {cat, sat}
    assert content_tokens(TRICKY_LINES[0]) == {"cat", "sat"}
    # a hypothesis scored against a two-line premise: {cat, sat, mat} has cat and sat in it -> 2/3
    assert LexicalJudge().predict([TRICKY_LINES[0]], ["Cats sat on mats"]) == [2 / 3]


def test_lexical_is_deterministic_and_in_range():
    j = get_judge("lexical")
    a = j(["Paris is big", "x"], ["Paris", "y z"])
    assert a == LexicalJudge().predict(["Paris is big", "x"], ["Paris", "y z"])
    assert all(0.0 <= v <= 1.0 for v in a)


if HAVE_HYPOTHESIS:

    @settings(max_examples=60, deadline=None)
    @given(st.text(max_size=60), st.text(max_size=60))
    def test_lexical_probability_in_unit_interval(p, h):
        v = LexicalJudge().predict([p], [h])[0]
        assert 0.0 <= v <= 1.0
        # a premise that contains the hypothesis entails it whenever it has content
        w = LexicalJudge().predict([p + " " + h], [h])[0]
        assert w == (1.0 if content_tokens(h) else 0.0)

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=30), min_size=1, max_size=5))
    def test_lexical_tokens_of_joined_lines_equal_the_rule_on_the_whole(lines):
        from rageval.judges.lexical import clear_memo

        text = "\n".join(lines)
        clear_memo()
        assert content_tokens(text) == _content_by_definition(text)

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.tuples(st.sampled_from(["a", "bb", "ccc"]), st.sampled_from(["x", "yy"])), max_size=12))
    def test_runner_equals_direct_scores_in_any_order(pairs):
        direct = Counting()
        expected = direct.predict([p for p, _ in pairs], [h for _, h in pairs]) if pairs else []
        r = get_judge(Counting())
        assert r([p for p, _ in pairs], [h for _, h in pairs]) == expected
        assert r.stats()["executed"] == len(set(pairs))


# --- replay ---------------------------------------------------------------------------------------


def test_replay_judge_round_trip(tmp_path):
    r = get_judge("lexical")
    r(["Paris is big", "Lyon"], ["Paris is big", "Nice"])
    path = tmp_path / "rec.jsonl"
    assert save_replay(path, r) == 2
    rep = get_judge(f"replay:{path}")
    assert rep(["Lyon", "Paris is big"], ["Nice", "Paris is big"]) == [0.0, 1.0]
    assert rep.id.startswith("replay:")
    with pytest.raises(JudgeError, match="no recorded pair"):
        rep(["unknown"], ["pair"])


def test_replay_decisions_and_bad_files(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"premise": "p", "hypothesis": "h", "decision": True}) + "\n")
    assert ReplayJudge(path).predict(["p"], ["h"]) == [1.0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"premise": "p"}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        ReplayJudge(bad)
    with pytest.raises(FileNotFoundError):
        get_judge(f"replay:{tmp_path / 'none.jsonl'}")


def test_callable_judge_id_from_attribute():
    def f(p, h):
        return [1.0] * len(p)

    f.id = "fixed:1"
    assert CallableJudge(f).cacheable and CallableJudge(f).id == "fixed:1"
