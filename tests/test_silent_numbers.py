"""Numbers that were silently wrong and inputs that were silently accepted: each category, several cases.

* what is not known is undefined, never 0 (retrieval recall and gold coverage of a line that says nothing
  about retrieval);
* nothing a peer's file gives is dropped without a word (a RAGChecker ``gt_answer`` list);
* a threshold is a number in [0, 1]: not ``"0.5"``, not a bool (numpy's either), not NaN;
* a citation marker is ASCII digits outside code (``[١]``, ``[１]``, ```arr[1]``` are text);
* every JSON file rageval writes is JSON: no bare ``NaN``/``Infinity``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from rageval.citations import parse_answer
from rageval.cli import main
from rageval.diagnostics.attribution.options import AttributionOptions
from rageval.diagnostics.retrieval_recall import retrieval_recall
from rageval.io import json_text, write_json_atomic
from rageval.judges.base import CallableJudge, JudgeRunner
from rageval.strict import check_probability


def _score(tmp_path, rows, *extra, name="in.jsonl"):
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows) if isinstance(rows, list) else rows)
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["score", str(p), "--out", str(out), "--no-report", "--no-progress", *extra])
    return res, out


def _records(out):
    return {r["question_id"]: r for r in map(json.loads, (out / "records.jsonl").read_text().splitlines())}


# -- undefined, never 0 ---------------------------------------------------------------------------------------

Q = {"question": "Capital of France?", "answer": "Paris [1].", "answers": ["Paris"], "gold_docs": ["d1"]}
RETRIEVAL_CASES = {
    # id: (line fields, retrieval_recall, gold_coverage) — by hand from the definitions
    "contexts only": ({"contexts": ["Paris is the capital."]}, None, None),
    "contexts, ranked ids given": ({"contexts": ["Paris is the capital."], "retrieved": ["d9", "d1"]}, 1.0, None),
    "contexts, empty ranking": ({"contexts": ["Paris is the capital."], "retrieved": []}, 0.0, None),
    "sources and declared units": (
        {
            "sources": [{"id": "d1", "text": "Paris is the capital."}, {"id": "d2", "text": "Lyon."}],
            "units": [{"text": "Paris is the capital.", "source_ids": ["d1"]}],
        },
        1.0,
        1.0,
    ),
    "sources, the gold not cited by a unit": (
        {
            "sources": [{"id": "d2", "text": "Lyon."}, {"id": "d1", "text": "Paris is the capital."}],
            "units": [{"text": "Lyon.", "source_ids": ["d2"]}],
        },
        1.0,
        0.0,
    ),
}


def test_retrieval_recall_and_gold_coverage_are_undefined_when_the_line_says_nothing(tmp_path):
    rows = [{"id": k, **Q, **fields} for k, (fields, _, _) in RETRIEVAL_CASES.items()]
    res, out = _score(tmp_path, rows)
    assert res.exit_code == 0, res.output
    got = _records(out)
    for k, (_, recall, coverage) in RETRIEVAL_CASES.items():
        m = got[k]["metrics"]
        assert m["retrieval_recall"] == recall and m["gold_coverage"] == coverage, (k, m)


def test_the_pure_function_tells_unknown_from_empty():
    r = retrieval_recall([None, [], ["d1"], None], [["d1"], ["d1"], ["d1"], []])
    assert [q["retrieval_recall"] for q in r["per_question"]] == [None, 0.0, 1.0, None]
    assert r["retrieval_recall"] == 0.5 and r["n"] == 2 and r["n_undefined"] == 2


# -- a RAGChecker gt_answer list is every reference, not dropped -------------------------------------------------


def _ragchecker(gt):
    return json.dumps(
        {
            "results": [
                {
                    "query_id": "q1",
                    "query": "What is Paris?",
                    "response": "Paris is the capital",
                    "gt_answer": gt,
                    "retrieved_context": [{"doc_id": "d1", "text": "Paris is the capital of France."}],
                }
            ]
        }
    )


@pytest.mark.parametrize(
    ("gt", "f1"),
    [
        # normalized response: paris is capital (3 tokens); "the" is an article
        ("Paris is the capital of France", 0.75),  # 3 common; P = 1, R = 3/5
        (["Lyon", "Paris is the capital of France"], 0.75),  # the best reference
        (["Paris is the capital"], 1.0),
        (["Lyon"], 0.0),
    ],
)
def test_a_ragchecker_gt_answer_list_is_scored_as_references(tmp_path, gt, f1):
    res, out = _score(tmp_path, _ragchecker(gt), name="rc.json")
    assert res.exit_code == 0, res.output
    assert _records(out)["q1"]["metrics"]["answer_f1"] == pytest.approx(f1)


@pytest.mark.parametrize("gt", [[1, 2], {"a": "b"}, 3, ["ok", None]])
def test_a_gt_answer_of_another_shape_is_refused(tmp_path, gt):
    res, _ = _score(tmp_path, _ragchecker(gt), name="rc.json")
    assert res.exit_code == 2 and "gt_answer" in res.output and "Traceback" not in res.output


# -- thresholds ---------------------------------------------------------------------------------------------

NOT_PROBABILITIES = [
    "0.5",
    b"0.5",
    True,
    False,
    np.bool_(True),
    math.nan,
    np.float64("nan"),
    math.inf,
    -0.1,
    1.01,
    None,
    [0.5],
    complex(0.5, 0),
]


@pytest.mark.parametrize("value", NOT_PROBABILITIES, ids=repr)
def test_a_threshold_that_is_no_probability_is_refused_everywhere(value):
    with pytest.raises(ValueError, match="must be a number in"):
        check_probability(value)
    with pytest.raises(ValueError, match="must be a number in"):
        AttributionOptions(threshold=value)
    with pytest.raises(ValueError, match="must be a number in"):
        AttributionOptions(recovery_threshold=value) if value is not None else check_probability(None)
    with pytest.raises(ValueError, match="must be a number in"):
        JudgeRunner(CallableJudge(lambda p, h: [0.5] * len(p), judge_id="half")).decide(["p"], ["h"], threshold=value)


@pytest.mark.parametrize("value", [0, 1, 0.5, np.float32(0.25), np.float64(0.75), np.int64(1), np.uint8(0)], ids=repr)
def test_python_and_numpy_numbers_are_probabilities(value):
    assert check_probability(value) == float(value)
    assert AttributionOptions(threshold=value).threshold == float(value)


# -- citation markers: ASCII digits, outside code -----------------------------------------------------------------

NON_ASCII_DIGITS = [chr(c) for c in range(0x110000) if chr(c).isdigit() and not chr(c).isascii()]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(NON_ASCII_DIGITS), min_size=1, max_size=3), st.integers(1, 3))
def test_a_marker_of_non_ascii_digits_is_text_in_the_default_mode(digits, k):
    marker = "[" + "".join(digits) + "]"
    a = parse_answer(f"Paris is big {marker}. Lyon is big [{k}].", n_units=3)
    assert [s.citations for s in a.sentences] == [(), (k,)]
    assert marker in a.sentences[0].text and not a.sentences[0].invalid


CODE = st.text(st.sampled_from("abc xyz=[]()0123,."), min_size=0, max_size=20)


@settings(max_examples=80, deadline=None)
@given(CODE, st.integers(1, 3), st.sampled_from(["inline", "fence", "tilde", "open"]))
def test_nothing_inside_code_is_a_marker(code, k, how):
    inner = f"x = arr[{k}] {code}"
    if how == "inline":
        text = f"Use `{inner.replace('`', '')}` here [{k}]."
    elif how == "fence":
        text = f"Code:\n```\n{inner}\n```\nParis is big [{k}]."
    elif how == "tilde":
        text = f"Code:\n~~~\n{inner}\n~~~\nParis is big [{k}]."
    else:
        text = f"Paris is big [{k}]. Then ```{inner}"  # an unclosed fence runs to the end
    a = parse_answer(text, n_units=3)
    cited = [s for s in a.sentences if s.citations]
    assert [s.citations for s in cited] == [(k,)], [(s.raw, s.citations) for s in a.sentences]
    assert all(not s.invalid for s in a.sentences)
    assert any(f"arr[{k}]" in s.text for s in a.sentences)  # the code is kept as written


def test_alce_mode_reads_markers_as_alces_eval_does():
    """ALCE's ``re.findall(r"\\[\\d+", sent)``: Python's ``\\d`` reads ``[١]`` as [1], in code too."""
    a = parse_answer("Paris [١].", n_units=2, mode="alce")
    assert a.sentences[0].citations == (1,)


# -- every JSON file is JSON ---------------------------------------------------------------------------------

FLOATS = st.floats(allow_nan=True, allow_infinity=True)
TREES = st.recursive(
    st.none() | st.booleans() | FLOATS | st.integers() | st.text(max_size=5),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=4), kids, max_size=4),
    max_leaves=20,
)


def _strict(text):
    def refuse(name):
        raise ValueError(f"bare {name} in JSON")

    return json.loads(text, parse_constant=refuse)


def _same(a, b) -> bool:
    if isinstance(a, float) and not math.isfinite(a):
        return b is None
    if isinstance(a, (list, tuple)):
        return isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


@settings(max_examples=150, deadline=None)
@given(TREES)
def test_json_text_is_strict_json_with_undefined_as_null(tree):
    back = _strict(json_text(tree))
    assert _same(tree, back)


def test_a_nan_in_a_manifest_is_written_as_null(tmp_path):
    write_json_atomic(tmp_path / "manifest.json", {"judge": {"threshold": math.nan}, "x": [math.inf, 1.5]})
    assert _strict((tmp_path / "manifest.json").read_text()) == {"judge": {"threshold": None}, "x": [None, 1.5]}
