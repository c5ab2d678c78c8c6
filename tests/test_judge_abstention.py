"""The judge protocol's abstention (NaN) and its errors, hand-computed: runner, disk cache, replay, mapping."""

import json
import math
import sqlite3

import pytest

from rageval.judges import CallableJudge, JudgeError, JudgeRunner, ReplayJudge, get_judge, pair_key, save_replay

NAN = float("nan")
PREMS = ["p1", "p2", "p3"]
HYPS = ["h", "h", "h"]


def fixed(values, judge_id="fixed:abstain"):
    """A judge answering ``values[i]`` for premise ``p{i+1}`` (order-independent: the runner sorts)."""

    def f(premises, hypotheses):
        f.calls += 1
        return [values[int(p[1:]) - 1] for p in premises]

    f.calls = 0
    f.id = judge_id
    return f


def test_decide_gives_none_for_an_abstention_and_counts_it():
    r = get_judge(fixed([0.9, NAN, 0.1]))
    assert r.decide(PREMS, HYPS, threshold=0.5) == [True, None, False]
    s = r.stats()
    assert (s["abstained"], s["abstained_executed"], s["executed"], s["requested"]) == (1, 1, 3, 3)
    # the raw call passes NaN through, and a memory hit is counted again per requested pair
    out = r(["p2", "p2", "p1"], ["h", "h", "h"])
    assert math.isnan(out[0]) and math.isnan(out[1]) and out[2] == 0.9
    s = r.stats()
    assert (s["abstained"], s["abstained_executed"], s["executed"], s["memory_hits"]) == (3, 1, 3, 2)
    r.reset_stats()
    assert r.stats()["abstained"] == 0


def test_threshold_applies_only_to_decided_pairs():
    r = get_judge(fixed([0.5, NAN, 0.49]))
    assert r.decide(PREMS, HYPS, threshold=0.5) == [True, None, False]
    assert r.decide(PREMS, HYPS, threshold=0.0) == [True, None, True]
    assert r.decide(PREMS, HYPS, threshold=1.0) == [False, None, False]
    for bad in (NAN, 1.5, -0.1, "0.5", None, True):
        with pytest.raises(ValueError, match="threshold must be a number in"):
            r.decide(PREMS, HYPS, threshold=bad)


def test_abstention_survives_a_disk_cache_round_trip(tmp_path):
    f1 = fixed([0.9, NAN, 0.1])
    r1 = get_judge(f1, cache_dir=tmp_path)
    assert r1.decide(PREMS, HYPS, threshold=0.5) == [True, None, False]
    r1.close()
    # the probabilities table keeps its old schema and never holds an abstention
    db = sqlite3.connect(str(r1.cache_path))
    assert db.execute("SELECT COUNT(*) FROM judgements").fetchone()[0] == 2
    assert db.execute("SELECT key FROM abstentions").fetchall() == [(pair_key("fixed:abstain", "p2", "h"),)]
    db.close()
    f2 = fixed([0.0, 0.0, 0.0])  # same id: everything must come from the cache
    r2 = get_judge(f2, cache_dir=tmp_path)
    assert r2.decide(PREMS, HYPS, threshold=0.5) == [True, None, False]
    s = r2.stats()
    assert (s["cache_hits"], s["cache_misses"], s["executed"], s["abstained"], s["abstained_executed"]) == (
        3,
        0,
        0,
        1,
        0,
    )
    assert f2.calls == 0


def test_a_rescored_pair_moves_between_cache_tables(tmp_path):
    r = get_judge(fixed([NAN]), cache_dir=tmp_path)
    r(["p1"], ["h"])
    r._disk.put_many([(pair_key(r.id, "p1", "h"), 0.25)])
    assert r._disk.get_many([pair_key(r.id, "p1", "h")]) == {pair_key(r.id, "p1", "h"): 0.25}
    r._disk.put_many([(pair_key(r.id, "p1", "h"), NAN)])
    got = r._disk.get_many([pair_key(r.id, "p1", "h")])
    assert math.isnan(got[pair_key(r.id, "p1", "h")])
    db = sqlite3.connect(str(r.cache_path))
    assert db.execute("SELECT COUNT(*) FROM judgements").fetchone()[0] == 0


def test_a_cache_file_of_the_old_schema_is_read_as_it_is(tmp_path):
    judge_id = "old:v1"
    r0 = get_judge(fixed([0.7], judge_id), cache_dir=tmp_path)  # only to learn the file name
    path = r0.cache_path
    r0.close()
    path.unlink()
    db = sqlite3.connect(str(path))  # the schema before abstentions: one table
    db.execute("CREATE TABLE judgements (key TEXT PRIMARY KEY, prob REAL NOT NULL)")
    db.execute("INSERT INTO judgements VALUES (?, ?)", (pair_key(judge_id, "p1", "h"), 0.3))
    db.commit()
    db.close()
    f = fixed([0.7, NAN], judge_id)
    r = get_judge(f, cache_dir=tmp_path)
    assert r.cache_path == path
    assert r.decide(["p1", "p2"], ["h", "h"], threshold=0.5) == [False, None]  # 0.3 from the old file
    s = r.stats()
    assert (s["cache_hits"], s["executed"], s["abstained"]) == (1, 1, 1)


@pytest.mark.parametrize("bad", [None, 1.5, -0.1, float("inf"), float("-inf"), "0.7", b"1", [0.5], {"p": 1}])
def test_a_value_that_is_neither_probability_nor_nan_is_an_error(bad):
    r = get_judge(fixed([0.2, bad, 0.9], judge_id="bad:v1"))
    with pytest.raises(JudgeError) as err:
        r(PREMS, HYPS)
    msg = str(err.value)
    assert "'bad:v1'" in msg and "for pair 1 " in msg and repr(bad)[:20] in msg
    assert r.stats()["executed"] == 0  # nothing of the failed batch is kept
    assert r._memo == {}


def test_the_pair_index_is_the_callers_position():
    r = get_judge(fixed([0.2, 0.3, None], judge_id="bad:v2"))
    with pytest.raises(JudgeError, match=r"returned None \(NoneType\) for pair 4 \(hypothesis 'h'\)"):
        r(["p1", "p1", "p2", "p1", "p3", "p3"], ["h"] * 6)


def test_a_wrong_number_of_values_or_no_sequence_is_an_error():
    with pytest.raises(JudgeError, match=r"'short' returned 2 values for 3 pairs \(request indexes 0, 1, 2\)"):
        get_judge(CallableJudge(lambda p, h: [0.5, 0.5], judge_id="short"))(PREMS, HYPS)
    with pytest.raises(JudgeError, match=r"'long' returned 4 values for 3 pairs"):
        get_judge(CallableJudge(lambda p, h: [0.5] * 4, judge_id="long"))(PREMS, HYPS)
    for ret in (None, "0.5", 0.5):
        with pytest.raises(JudgeError, match=r"'odd' returned .* for 1 pairs"):
            get_judge(CallableJudge(lambda p, h, ret=ret: ret, judge_id="odd"))(["p"], ["h"])


def test_numeric_types_are_accepted():
    np = pytest.importorskip("numpy")
    r = JudgeRunner(CallableJudge(lambda p, h: np.array([1, 0.25, np.nan], dtype=np.float32)[: len(p)], judge_id="np"))
    out = r(PREMS, HYPS)
    assert out[:2] == [1.0, 0.25] and math.isnan(out[2])
    assert all(type(x) is float for x in out)


def test_backend_counters_do_not_overwrite_the_runners():
    class Counts:
        id = "counts:v1"

        def predict(self, p, h):
            return [NAN] * len(p)

        def stats(self):
            return {"abstained": 100, "truncated": 2}

    r = get_judge(Counts())
    r(["a"], ["b"])
    s = r.stats()
    assert (s["abstained"], s["backend_abstained"], s["truncated"]) == (1, 0, 0)


# --- replay ---------------------------------------------------------------------------------------


def test_replay_null_and_abstain_are_abstentions(tmp_path):
    path = tmp_path / "rec.jsonl"
    rows = [
        {"premise": "p1", "hypothesis": "h", "probability": 0.8},
        {"premise": "p2", "hypothesis": "h", "probability": None},
        {"premise": "p3", "hypothesis": "h", "probability": "abstain"},
        {"premise": "p4", "hypothesis": "h", "decision": "abstain"},
        {"premise": "p5", "hypothesis": "h", "decision": None},
        {"premise": "p6", "hypothesis": "h", "decision": False},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = get_judge(f"replay:{path}")
    prems = [f"p{i}" for i in range(1, 7)]
    assert r.decide(prems, ["h"] * 6, threshold=0.5) == [True, None, None, None, None, False]
    assert r.stats()["abstained"] == 4
    # save_replay writes abstentions as null, and the file replays the same decisions
    out = tmp_path / "again.jsonl"
    assert save_replay(out, r) == 6
    text = out.read_text()
    assert "NaN" not in text and text.count('"probability": null') == 4
    assert get_judge(f"replay:{out}").decide(prems, ["h"] * 6, threshold=0.5) == [True, None, None, None, None, False]


@pytest.mark.parametrize(
    "row, why",
    [
        ({"probability": 1.5}, "probability 1.5 is not a number in"),
        ({"probability": -0.1}, "probability -0.1 is not a number in"),
        ({"probability": "0.7"}, "probability '0.7' is not a number in"),
        ({"probability": True}, "probability True is not a number in"),
        ({"decision": "maybe"}, "decision 'maybe' is not true or false"),
    ],
)
def test_replay_bad_values_name_the_line(tmp_path, row, why):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps({"premise": "a", "hypothesis": "b", "probability": 0.1})
        + "\n"
        + json.dumps({"premise": "p", "hypothesis": "h", **row})
        + "\n"
    )
    with pytest.raises(ValueError, match=rf"bad.jsonl:2: {why}"):
        ReplayJudge(path)


# --- the TRUE-style token -> probability mapping ----------------------------------------------------


def test_label_probabilities_hand_computed():
    torch = pytest.importorskip("torch")
    from rageval.judges.hf import label_probabilities

    # vocabulary of 4: id 1 is "0", id 2 is "1"
    logits = torch.tensor(
        [
            [0.0, 0.0, math.log(3.0), -1.0],  # "1" greedy: P("1") = 3 / (1 + 3) = 0.75
            [0.0, math.log(3.0), 0.0, -1.0],  # "0" greedy: P("1") = 1 / (3 + 1) = 0.25
            [5.0, 1.0, 2.0, 0.0],  # another token greedy: abstain, though "1" beats "0"
            [2.0, 1.0, 2.0, 0.0],  # "1" ties the other token: decided, P("1") = e / (1 + e)
        ]
    )
    got = label_probabilities(logits, 1, 2)
    assert got[0] == pytest.approx(0.75) and got[1] == pytest.approx(0.25)
    assert math.isnan(got[2])
    assert got[3] == pytest.approx(math.e / (1 + math.e))
    with pytest.raises(ValueError, match=r"NaN logits in row\(s\) \[1\]"):
        label_probabilities(torch.tensor([[0.0, 1.0, 2.0], [NAN, 1.0, 2.0]]), 1, 2)


def test_seq2seq_reads_the_label_after_a_whitespace_piece():
    """A tokenizer that spells "1" as ["▁", "1"]: a first token "▁" is followed by a second decoder step."""
    torch = pytest.importorskip("torch")
    from rageval.judges.hf import Seq2SeqJudge

    SPACE, ZERO, ONE = 1, 2, 3  # and id 4: another word

    class Tok:
        def __call__(self, texts, **kw):
            if kw.get("add_special_tokens") is False:  # _single_token
                return {"input_ids": [SPACE, {"0": ZERO, "1": ONE}[texts]]}
            if "return_tensors" not in kw:
                return {"input_ids": [[7] * 3 for _ in texts]}
            return {"input_ids": torch.tensor([[i] for i in range(len(texts))])}

        def decode(self, ids):
            return " " if ids == [SPACE] else "?"

    class Out:
        def __init__(self, logits):
            self.logits = logits

    class Model:
        """row 0: "▁" then "1" (3 vs 1); row 1: "▁" then another word; row 2: "0" at once; row 3: another word."""

        def __call__(self, input_ids, decoder_input_ids):
            rows = input_ids[:, 0].tolist()
            n_steps = decoder_input_ids.shape[1]
            out = torch.zeros(len(rows), n_steps, 5)
            for j, r in enumerate(rows):
                if n_steps == 1:
                    out[j, 0] = torch.tensor(
                        [[0, 9, 0, 0, 0], [0, 9, 0, 0, 0], [0, 0, 9, 1, 0], [0, 0, 0, 0, 9]][r], dtype=torch.float
                    )
                else:
                    assert decoder_input_ids[j].tolist() == [0, SPACE]
                    out[j, 1] = torch.tensor([[0, 0, 1, 3, 0], [0, 0, 0, 0, 9]][r], dtype=torch.float)
            return Out(out)

    j = Seq2SeqJudge.__new__(Seq2SeqJudge)
    j.name_or_path, j.max_length, j.device, j.torch_dtype = "fake", None, "cpu", torch.float32
    j._truncated = j._scored = j._off_label = 0
    j.label_prefix = None
    tok = Tok()
    j.label_ids = (j._single_token(tok, "0"), j._single_token(tok, "1"))
    assert (j.label_prefix, j.label_ids) == (SPACE, (ZERO, ONE))
    j.tokenizer, j.model, j.decoder_start, j.id = tok, Model(), 0, "seq2seq:fake|rule=v2"
    got = j.predict(["a", "b", "c", "d"], ["h"] * 4)
    assert got[0] == pytest.approx(math.exp(3) / (math.exp(1) + math.exp(3)))
    assert math.isnan(got[1]) and math.isnan(got[3])
    assert got[2] == pytest.approx(math.exp(1) / (math.exp(9) + math.exp(1)))
    assert j.stats()["off_label"] == 2
