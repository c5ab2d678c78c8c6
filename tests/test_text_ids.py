"""Text metrics over token ids (rageval.text.ids, rageval.text.lcs): the same numbers as the string definitions.

Parity is checked against the libraries and definitions themselves, on every shipped sample's texts: ROUGE-Lsum
against ``rouge_score`` (its ``rougeLsum`` with its Porter stemmer and tokenizer, as ALCE's ``compute_rouge`` and
rageval called it before), through both LCS kernels (Python and numba); the SQuAD/ALCE normalization against its
definition (lowercase, drop every ``string.punctuation`` character, drop the articles, collapse whitespace); str-EM,
token F1/EM and the lexical judge's overlap against their string definitions.  Small LCS cases are worked by hand.
"""

from __future__ import annotations

import json
import os
import random
import re
import string
import subprocess
import sys
from collections import Counter
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the backport, a dependency of mypy (the test extra)
    import tomli as tomllib

import pytest

from rageval.diagnostics import alce as alce_metrics
from rageval.diagnostics.answer import answer_f1, squad_token_f1, str_em, token_f1
from rageval.judges import lexical
from rageval.text import ids, lcs
from rageval.text.normalize import remove_citations

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "src" / "rageval" / "data" / "samples"
ALCE_FILES = sorted((ROOT / "tests" / "fixtures" / "alce_parity").glob("alce_*.json"))
ALCE_FILES = [p for p in ALCE_FILES if p.name != "alce_outputs.json"]
ALCE_FILES += sorted((ROOT / "tests" / "fixtures" / "peers").glob("alce_*.json"))


def _strings(value, out: list[str]) -> None:
    if isinstance(value, str):
        if value.strip():
            out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)


def _load(path: Path) -> list:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


#: strings drawn from each file (every string of a smaller file)
PER_FILE = 250


def _sample_texts() -> list[str]:
    """Strings of every shipped sample (src/rageval/data/samples) and ALCE-format fixture: each file's strings,
    at most :data:`PER_FILE` of them drawn at random (seeded) from a larger file, in file order."""
    files = sorted(p for p in SAMPLES.rglob("*") if p.suffix in (".json", ".jsonl")) + ALCE_FILES
    out: list[str] = []
    rng = random.Random(0)
    for path in files:
        found: list[str] = []
        _strings(_load(path), found)
        found = list(dict.fromkeys(found))
        out += found if len(found) <= PER_FILE else rng.sample(found, PER_FILE)
    return list(dict.fromkeys(out))


TEXTS = _sample_texts()


def _squad_normalize(s: str) -> str:
    """The SQuAD v1.1 / ALCE definition, written out: lowercase, drop each punctuation character, drop the
    articles, collapse whitespace."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


@pytest.fixture(params=["python", "numba"])
def kernel(request, monkeypatch):
    """Run a test with each LCS kernel (numba: the ``fast`` extra, installed by the test extra)."""
    if request.param == "numba":
        pytest.importorskip("numba")
    monkeypatch.setenv("RAGEVAL_LCS", request.param)
    return request.param


# -- hand-computed LCS --------------------------------------------------------------------------------------


def test_lcs_indices_by_hand():
    # ref a b c d, candidate b d: the one LCS is (b, d) at positions 1 and 3
    assert lcs.lcs_indices((1, 2, 3, 4), (2, 4)) == [3, 1]
    # nothing shared: no position
    assert lcs.lcs_indices((1, 2), (3, 4)) == []
    # ref x y x, candidate x: three LCS of length 1 candidates, the walk from the corner takes the last x
    assert lcs.lcs_indices((5, 6, 5), (5,)) == [2]
    # ref 7 8 9, candidate 8 7 9: LCS (7, 9) or (8, 9); at cell (2, 2) left (1) is not larger than up (1): up,
    # so the walk keeps 7 (position 0) and 9 (position 2)
    assert lcs.lcs_indices((7, 8, 9), (8, 7, 9)) == [2, 0]


def test_summary_hits_by_hand():
    # reference one line 1 2 3 4 5; candidate lines (1 2 9) and (3 5): LCS with the first is {0, 1}, with the
    # second {2, 4}; union {0, 1, 2, 4}: 4 hits; m = 5, n = 5; P = R = 0.8, F = 2 * .8 * .8 / 1.6
    ref, hyp = ((1, 2, 3, 4, 5),), ((1, 2, 9), (3, 5))
    assert lcs.summary_hits_python(ref, hyp) == 4
    assert lcs.rouge_f(4, 5, 5) == 2 * 0.8 * 0.8 / (0.8 + 0.8)
    # a token used once by the candidate counts once: reference (1 1) and (1), candidate (1): the union of the
    # first line is {1} (one hit, the candidate's only 1 used), the second line's 1 finds no unused copy
    assert lcs.summary_hits_python(((1, 1), (1,)), ((1,),)) == 1
    # no token on one side: rouge_score's Score(0, 0, 0), an integer
    assert lcs.rouge_f(0, 0, 3) == 0 and isinstance(lcs.rouge_f(0, 0, 3), int)
    assert lcs.rouge_f(0, 3, 3) == 0.0 and isinstance(lcs.rouge_f(0, 3, 3), float)


@pytest.mark.parametrize("seed", range(3))
def test_both_kernels_equal_rouge_score_on_random_token_strings(seed):
    """Small alphabets (many ties, repeated tokens): the hits of both kernels are rouge_score's."""
    from rouge_score.rouge_scorer import _summary_level_lcs

    rng = random.Random(seed)
    docs, pairs = [], []
    for _ in range(300):
        k = rng.randint(2, 6)

        def doc(k=k):
            return tuple(tuple(rng.randrange(k) for _ in range(rng.randint(1, 9))) for _ in range(rng.randint(1, 4)))

        docs += [doc(), doc()]
        pairs.append((len(docs) - 2, len(docs) - 1))
    want = []
    for a, b in pairs:
        score = _summary_level_lcs([list(x) for x in docs[a]], [list(x) for x in docs[b]])
        want.append(score.fmeasure)
    sizes = [sum(map(len, d)) for d in docs]
    python = [lcs.summary_hits_python(docs[a], docs[b]) for a, b in pairs]
    assert [lcs.rouge_f(h, sizes[a], sizes[b]) for h, (a, b) in zip(python, pairs)] == want
    if lcs.numba_available():
        compiled = lcs.summary_hits_numba(docs, pairs, 10)
        assert compiled == python


def test_the_python_kernel_s_shortcut_keeps_rouge_score_s_walk():
    """Rows of reference tokens absent from the candidate are left out of the table: the positions found are
    rouge_score's ``lcs_ind`` on the full table, on random strings."""
    from rouge_score.rouge_scorer import lcs_ind

    rng = random.Random(5)
    for _ in range(2000):
        ref = [rng.randrange(6) for _ in range(rng.randint(0, 10))]
        can = [rng.randrange(4) for _ in range(rng.randint(0, 10))]
        assert sorted(lcs.lcs_indices(tuple(ref), tuple(can))) == lcs_ind(ref, can)


# -- ROUGE-Lsum: rouge_score on every shipped sample's texts -----------------------------------------------


def _rouge_score_lsum(reference: str, answer: str):
    """ROUGE-Lsum as ALCE's compute_rouge (and rageval before token ids) computes it, with rouge_score."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True)
    lsum = alce_metrics._lsum_text
    return scorer.score(lsum(reference), lsum(answer))["rougeLsum"].fmeasure


def test_rouge_tokens_equal_rouge_score_s_tokenizer_on_every_sample_text():
    from rouge_score.tokenizers import DefaultTokenizer

    tokenizer = DefaultTokenizer(use_stemmer=True)
    vocab: dict[int, str] = {}
    with ids.session():
        for text in TEXTS:
            for line in text.split("\n"):
                want = tokenizer.tokenize(line)
                got = ids.rouge_tokens(line)
                assert len(got) == len(want), line
                for i, tok in zip(got, want):
                    assert vocab.setdefault(i, tok) == tok, (line, tok)  # one id, one token, in both directions
    assert len(set(vocab.values())) == len(vocab)


def test_rouge_lsum_equals_rouge_score_on_every_sample_text(kernel):
    """Each shipped text against its neighbour and a text drawn at random: the same F-measure, bit for bit and
    type for type (rouge_score's integer 0 for an empty side included)."""
    rng = random.Random(0)
    texts = [t for t in TEXTS if len(t) < 4000]
    refs = [[texts[(i + 1) % len(texts)], rng.choice(texts)] for i in range(len(texts))]
    ids.clear()
    got = alce_metrics.rouge_lsum(texts, refs)["per_question"]
    for q, (answer, two) in enumerate(zip(texts, refs)):
        text = alce_metrics.answer_text(answer, alce_compat=False)  # rageval's citation removal first
        want = max(_rouge_score_lsum(r, text) for r in two if r.strip())
        value = got[q]["rouge_lsum"]
        assert (type(value), value) == (type(want), want), (answer[:80], two[0][:80])


def test_rouge_lsum_equals_rouge_score_on_the_alce_files(kernel):
    """The ALCE-format fixtures as `rageval score` reads them (answer: first line, ALCE's citation removal)."""
    for path in ALCE_FILES:
        data = _load(path)["data"]
        answers = [item["output"] for item in data]
        refs = []
        for item in data:
            if item.get("annotations"):
                refs.append([a["long_answer"] for a in item["annotations"]])
            else:
                refs.append([item.get("answer") or ""])
        got = alce_metrics.rouge_lsum(answers, refs, alce_compat=True)["per_question"]
        for q, (answer, two) in enumerate(zip(answers, refs)):
            text = alce_metrics.answer_text(answer, alce_compat=True)
            two = [r for r in two if r.strip()]
            want = max((_rouge_score_lsum(r, text) for r in two), default=None)
            assert got[q]["rouge_lsum"] == want and type(got[q]["rouge_lsum"]) is type(want), (path.name, q)


def test_the_compiled_kernel_is_loaded_only_once_the_python_one_has_spent_as_much(monkeypatch):
    monkeypatch.delenv("RAGEVAL_LCS", raising=False)
    monkeypatch.setattr(lcs, "numba_available", lambda: True)
    monkeypatch.delitem(sys.modules, lcs._KERNEL, raising=False)
    monkeypatch.setattr(lcs, "_python_cells", 0)
    assert lcs.backend(lcs.NUMBA_MIN_CELLS - 1) == "python"
    assert lcs.backend(lcs.NUMBA_MIN_CELLS) == "numba"  # one batch as large as the fixed cost
    monkeypatch.setattr(lcs, "_python_cells", lcs.NUMBA_MIN_CELLS - 10)
    assert lcs.backend(9) == "python"
    assert lcs.backend(10) == "numba"  # the process's cells reach it
    # scoring in Python counts the cells (a batch of 2 x 3 = 6 cells)
    monkeypatch.setattr(lcs, "_python_cells", 0)
    assert lcs.summary_hits_batch([((1, 2),), ((2, 3, 1),)], [(0, 1)], 4) == [1]
    assert lcs._python_cells == 6
    # once loaded: every batch from NUMBA_BATCH_CELLS up
    monkeypatch.setitem(sys.modules, lcs._KERNEL, object())
    assert lcs.backend(lcs.NUMBA_BATCH_CELLS) == "numba"
    assert lcs.backend(lcs.NUMBA_BATCH_CELLS - 1) == "python"
    # without numba: the Python kernel whatever the size; forcing numba then is an error naming the extra
    monkeypatch.setattr(lcs, "numba_available", lambda: False)
    assert lcs.backend(10**12) == "python"
    monkeypatch.setenv("RAGEVAL_LCS", "numba")
    with pytest.raises(RuntimeError, match="fast"):
        lcs.backend(1)


def test_a_numba_that_fails_to_import_leaves_the_python_kernel(monkeypatch):
    monkeypatch.delenv("RAGEVAL_LCS", raising=False)
    monkeypatch.setattr(lcs, "_numba_failed", False)
    monkeypatch.setattr(lcs, "backend", lambda cells: "numba")

    def broken(*args):
        raise ImportError("numba needs another numpy")

    monkeypatch.setattr(lcs, "summary_hits_numba", broken)
    assert lcs.summary_hits_batch([((1, 2),), ((2, 3, 1),)], [(0, 1)], 4) == [1]
    assert lcs._numba_failed


# -- the SQuAD/ALCE normalization and the metrics on it ----------------------------------------------------


def test_normalized_equals_the_squad_alce_definition_on_every_sample_text():
    ids.clear()
    for text in TEXTS:
        want = _squad_normalize(text)
        assert ids.normalized(text) == want
        assert ids.normalized(text) == want  # the memo's answer too
    with ids.session():
        seen: dict[int, str] = {}
        for text in TEXTS:
            toks = _squad_normalize(text).split()
            got = ids.normalized_ids(text)
            assert len(got) == len(toks)
            for i, tok in zip(got, toks):
                assert seen.setdefault(i, tok) == tok
    assert len(set(seen.values())) == len(seen)


def _squad_f1(pred: str, gold: str) -> float:
    pt, gt = _squad_normalize(pred).split(), _squad_normalize(gold).split()
    same = sum((Counter(pt) & Counter(gt)).values())
    if same == 0:
        return 0.0
    p, r = same / len(pt), same / len(gt)
    return 2 * p * r / (p + r)


def test_token_f1_and_em_over_ids_equal_the_string_definitions():
    rng = random.Random(1)
    short = [t for t in TEXTS if len(t) < 300]
    pairs = [(rng.choice(short), rng.choice(short)) for _ in range(3000)]
    pairs += [("Yes, it does", "Yes"), ("yes", "Yes."), ("no", "yes"), ("", "the"), ("a b a", "b a a")]
    for pred, gold in pairs:
        assert squad_token_f1(pred, gold) == _squad_f1(pred, gold)
        p, g = _squad_normalize(pred), _squad_normalize(gold)
        special = p in ("yes", "no", "noanswer") or g in ("yes", "no", "noanswer")
        if special and p != g:
            assert token_f1(pred, gold) == (0.0, 0.0, 0.0)
        else:
            assert token_f1(pred, gold)[0] == _squad_f1(pred, gold)
    preds = [p for p, _ in pairs]
    golds = [[g, p] for p, g in pairs]
    got = answer_f1(preds, golds)["per_question"]
    for (pred, gold), row in zip(pairs, got):
        aliases = [a for a in (gold, pred) if _squad_normalize(a)]
        if not aliases:
            assert row == {"answer_f1": None, "answer_em": None}
        else:
            clean = _squad_normalize(remove_citations(pred))  # answer_f1 removes the answer's citations first
            assert row["answer_em"] == max(float(clean == _squad_normalize(a)) for a in aliases)


def test_str_em_equals_alce_s_definition_on_the_asqa_sample():
    """ALCE's compute_str_em (exact_presence: a normalized short answer is a substring of the normalized
    output), with the sample's long answers as outputs."""
    rows = _load(SAMPLES / "asqa" / "asqa_dev_first100.jsonl")
    outputs = [r["annotations"][i % len(r["annotations"])]["long_answer"] for i, r in enumerate(rows)]
    outputs = [outputs[(i + i % 3) % len(outputs)] for i in range(len(outputs))]  # some right, some wrong
    refs = [[qa["short_answers"] for qa in r["qa_pairs"]] for r in rows]
    got = str_em(outputs, refs, alce_compat=True)["per_question"]
    for out, pairs, row in zip(outputs, refs, got):
        n_out = _squad_normalize(out)
        hits = [any(_squad_normalize(a) in n_out for a in shorts) for shorts in pairs]
        assert row["str_em"] == sum(hits) / len(hits)
        assert row["str_hit"] == float(all(hits))


def test_the_lexical_judge_s_overlap_over_ids_equals_the_string_sets():
    rng = random.Random(2)
    premises = [rng.choice(TEXTS) for _ in range(2000)]
    hypotheses = [rng.choice(TEXTS) for _ in range(2000)]
    lexical.clear_memo()
    got = lexical.LexicalJudge().predict(premises, hypotheses)
    for p, h, value in zip(premises, hypotheses, got):
        hyp = lexical.content_tokens(h)
        assert value == (len(hyp & lexical.content_tokens(p)) / len(hyp) if hyp else 0.0)


# -- the bounds ----------------------------------------------------------------------------------------------


def test_a_memo_is_emptied_when_it_passes_its_bound(monkeypatch):
    ids.clear()
    monkeypatch.setattr(ids._norm, "max_items", 3)
    for k in range(3):
        ids.normalized(f"text {k}")
    assert ids.stats()["normalized"] == 3
    ids.normalized("text 3")  # a fourth: the memo is emptied, then holds the new text
    assert ids.stats()["normalized"] == 1
    monkeypatch.setattr(ids._norm, "max_chars", 10)
    ids.normalized("abcdefgh")
    assert ids.stats()["normalized_chars"] <= 10
    ids.normalized("ijklmnopq")  # 8 + 9 characters > 10: emptied first
    assert ids.stats()["normalized"] == 1 and ids.stats()["normalized_chars"] == 9
    assert ids.normalized("ijklmnopq") == "ijklmnopq"


def test_the_vocabulary_is_reset_past_its_bound_only_between_sessions(monkeypatch):
    ids.clear()
    lexical.clear_memo()
    monkeypatch.setattr(ids, "VOCAB_SIZE", 5)
    judge = lexical.LexicalJudge()
    assert judge.predict(["cats sat on mats"], ["cats sat"]) == [1.0]
    assert lexical._line_ids.cache_info().currsize > 0
    with ids.session():
        first = ids.normalized_ids("one two three four five six seven")
        assert ids.stats()["vocab"] > 5
        with ids.session():  # nested (or another thread's): never reset while one is open
            assert ids.normalized_ids("one two three four five six seven") == first
        assert ids.stats()["vocab_resets"] == 0
    before = ids.stats()["vocab_resets"]
    with ids.session():  # no session open, vocabulary past its bound: emptied first, with the judge's id memo
        assert ids.stats()["vocab"] == 0
        assert lexical._line_ids.cache_info().currsize == 0
    assert ids.stats()["vocab_resets"] == before + 1
    assert judge.predict(["cats sat on mats"], ["cats sat"]) == [1.0]  # same answers after the reset


def test_the_lsum_memo_is_bounded():
    assert alce_metrics._lsum_text.cache_info().maxsize == alce_metrics.LSUM_MEMO_SIZE


def test_the_light_core_does_not_need_numba():
    """numba is the ``fast`` extra (and the test extra's), not a core dependency, and a short run never imports it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not [d for d in project["dependencies"] if d.lower().startswith("numba")]
    assert project["optional-dependencies"]["fast"] == ["numba>=0.60"]
    assert "numba>=0.60" in project["optional-dependencies"]["test"]
    code = (
        "import sys\n"
        "from rageval.diagnostics.alce import rouge_lsum\n"
        "r = rouge_lsum(['Paris is big. It has towers.'], [['Paris is a big city.']])\n"
        "assert r['rouge_lsum'] > 0\n"
        "print('numba' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RAGEVAL_LCS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "False"
