"""Bad inputs to every pure function and every evaluate module: a one-line TypeError/ValueError (or JudgeError)
naming the field, never a KeyError, AttributeError, a multi-line datasets error or a silently wrong number.

Categories: container shape (None, a dict or a string where a list is expected, wrong lengths); unit and
source shape (a key missing, a value of the wrong type, an unknown key, a list where a dict is expected);
judge protocol (a callable returning None, a string, too few values, out-of-range values, dicts);
token counts (NaN, inf, negative, bool); helper functions; and property-based inputs of arbitrary shape.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rageval.diagnostics import CATALOG, get
from rageval.judges import JudgeError

P = ["Paris is the capital of France [1]."]
U = [[{"text": "Paris is the capital of France.", "source_ids": ["d0.s0"], "title": "Paris"}]]
S = [[{"id": "d0.s0", "text": "Paris is the capital of France.", "title": "Paris"}]]
BASE: dict[str, dict[str, Any]] = {
    "answer_in_context": {"contexts": ["Paris is the capital."], "references": [["Paris"]]},
    "str_em": {"predictions": ["Paris"], "references": [[["Paris"]]]},
    "answer_f1": {"predictions": ["Paris"], "references": [["Paris"]]},
    "qampari_f1": {"predictions": ["Paris, Lyon"], "references": [[["Paris"], ["Lyon"]]]},
    "rouge_lsum": {"predictions": ["Paris is big."], "references": [["Paris is a big city."]]},
    "claims_recall": {"predictions": ["Paris is big."], "references": [["Paris is big."]]},
    "retrieval_recall": {"retrieved": [["d0", "d1"]], "references": [["d0"]]},
    "gold_coverage": {"units": U, "references": [["d0"]]},
    "evidence_f1": {"predictions": P, "units": U, "sources": S, "references": [[["d0.s0"]]]},
    "compression": {
        "predictions": P,
        "units": U,
        "sources": S,
        "budget_tokens": [10],
        "retrieved_tokens": [20],
        "achieved_tokens": [7],
        "reader_input_tokens": [30],
    },
    **{
        n: {"predictions": P, "units": U, "sources": S}
        for n in (
            "emitted_precision",
            "emitted_recall",
            "grounded_precision",
            "grounded_recall",
            "re_attributability",
            "verification",
        )
    },
    "claim_support": {"predictions": P, "units": U, "sources": S, "claims": [["Paris is big."]]},
}
#: corruptions that are valid inputs (an absent optional key means None; token counts are optional; a question's
#: ``retrieved`` None means its retrieval is unknown: undefined, tests/test_silent_numbers.py; claim_support's
#: ``claims`` None, or a question's None: the answers' sentences are the claims)
VALID = (
    {"units no source_ids", "units no title", "sources no title", "retrieved=[None]", "claims=None"}
    | {"claims=[None]"}
    | {
        f"{k}{v}"
        for k in ("budget_tokens", "retrieved_tokens", "achieved_tokens", "reader_input_tokens")
        for v in ("=None", "=[None]", "=[5]")
    }
)


def corruptions(kw: dict) -> dict[str, dict]:
    out = {}
    for k, v in kw.items():
        out[f"{k}=None"] = {**kw, k: None}
        out[f"{k}=dict"] = {**kw, k: {"a": 1}}
        out[f"{k}=str"] = {**kw, k: "abc"}
        out[f"{k}=[None]"] = {**kw, k: [None]}
        out[f"{k}=[5]"] = {**kw, k: [5]}
        out[f"{k} twice as long"] = {**kw, k: v * 2}
        if isinstance(v[0], list) and v[0] and isinstance(v[0][0], dict):
            d = v[0][0]
            for key in d:
                out[f"{k} no {key}"] = {**kw, k: [[{kk: vv for kk, vv in d.items() if kk != key}]]}
                out[f"{k} {key}=5"] = {**kw, k: [[{**d, key: 5}]]}
            out[f"{k} extra key"] = {**kw, k: [[{**d, "foo": 1}]]}
            out[f"{k} typo key"] = {**kw, k: [[{**{kk: vv for kk, vv in d.items() if kk != "text"}, "txt": "x"}]]}
            out[f"{k} list not dict"] = {**kw, k: [[list(d.values())]]}
        if isinstance(v[0], (int, float)) and not isinstance(v[0], bool):
            for bad in (math.nan, math.inf, -1, True, "3"):
                out[f"{k}=[{bad!r}]"] = {**kw, k: [bad]}
    return {label: args for label, args in out.items() if label not in VALID}


CASES = [(name, label, args) for name in CATALOG for label, args in corruptions(BASE[name]).items()]


def assert_one_line_error(fn, *args, **kwargs):
    with pytest.raises((TypeError, ValueError, JudgeError)) as err:
        fn(*args, **kwargs)
    msg = str(err.value).strip()
    assert msg and "\n" not in msg, msg
    return msg


@pytest.mark.parametrize("name", list(CATALOG))
def test_the_baselines_are_valid(name):
    get(name)(**BASE[name])


@pytest.mark.parametrize("name, label, args", CASES, ids=[f"{n}:{lbl}" for n, lbl, _ in CASES])
def test_pure_functions_refuse_malformed_inputs_in_one_line(name, label, args):
    assert_one_line_error(get(name), **args)


def test_what_the_messages_say():
    gp = get("grounded_precision")
    assert assert_one_line_error(gp, P, [[{"source_ids": None}]], S) == "units[0][0] has no 'text'"
    msg = assert_one_line_error(gp, P, [[{"text": "x", "source_id": ["d0.s0"]}]], S)
    assert (
        msg == "units[0][0] has an unknown key 'source_id'. Did you mean 'source_ids'? Keys: text, source_ids, title."
    )
    msg = assert_one_line_error(get("gold_coverage"), U, [["d0"]], doc_of=[["d0.s0"]])
    assert msg.startswith("doc_of[0] must be a mapping source id -> document id")
    msg = assert_one_line_error(get("compression"), P, U, S, achieved_tokens=[math.nan])
    assert msg == "achieved_tokens[0] must be a finite non-negative number or None, got nan"


JUDGES = {
    "None": lambda p, h: None,
    "a string": lambda p, h: "yes",
    "too few values": lambda p, h: [],
    "too many values": lambda p, h: [0.5] * (len(p) + 1),
    "out of range": lambda p, h: [2.0] * len(p),
    "negative": lambda p, h: [-0.1] * len(p),
    "dicts": lambda p, h: [{"p": 1.0}] * len(p),
    "strings": lambda p, h: ["0.9"] * len(p),
}
JUDGED = [n for n, s in CATALOG.items() if s.uses_judge and n != "re_attributability"]


@pytest.mark.parametrize("name", JUDGED)
@pytest.mark.parametrize("kind", list(JUDGES))
def test_a_judge_callable_that_breaks_the_protocol_is_a_judge_error(name, kind):
    with pytest.raises(JudgeError) as err:
        get(name)(**BASE[name], judge=JUDGES[kind])
    assert "\n" not in str(err.value).strip() and "judge" in str(err.value)


def test_re_attributability_asks_the_judge_only_for_units_without_provenance():
    units = [[{"text": "Paris is the capital of France.", "source_ids": None}]]
    with pytest.raises(JudgeError):
        get("re_attributability")(P, units, S, judge=JUDGES["None"])


# -- helpers ------------------------------------------------------------------------------------------


def test_token_counts_and_ratios():
    from rageval.token_counts import achieved_ratio, count_tokens, evidence_tokens

    for bad in (math.nan, math.inf, -1, True, "3", None):
        assert_one_line_error(achieved_ratio, bad, 10)
        assert_one_line_error(achieved_ratio, 5, bad)
    assert achieved_ratio(5, 0) is None and achieved_ratio(0, 4) == 0.0 and achieved_ratio(3, 4) == 0.75
    assert_one_line_error(count_tokens, "regex", "three words here")  # a string is not a list of texts
    assert count_tokens("regex", ["three words here"]) == [3]
    for bad in ([None], [{"txt": "x"}], ["x"], [{"text": 5}]):
        assert_one_line_error(evidence_tokens, bad, "regex")


def test_normalization_takes_strings():
    from rageval.text.normalize import normalize_answer, normalized_tokens

    for bad in (None, 5, ["x"], b"x"):
        assert_one_line_error(normalize_answer, bad)
        assert_one_line_error(normalized_tokens, bad)


# -- evaluate modules: the same corruptions, one line before datasets encodes anything -----------------------


@pytest.fixture(scope="module")
def modules():
    import os

    evaluate = pytest.importorskip("evaluate")
    root = os.path.join(os.path.dirname(__file__), "..", "metrics")
    return {n: evaluate.load(os.path.join(root, n)) for n in CATALOG}


# a representative per category, for every module (the full matrix runs on the pure functions above)
MODULE_LABELS = (
    "units no text",
    "units extra key",
    "units typo key",
    "units list not dict",
    "units text=5",
    "sources no id",
    "sources extra key",
    "sources=dict",
    "predictions=[None]",
    "references=dict",
    "references=[5]",
    "contexts=[5]",
    "retrieved=dict",
    "achieved_tokens=[nan]",
    "budget_tokens=[inf]",
    "units twice as long",
)
MODULE_CASES = [(n, lbl, a) for n, lbl, a in CASES if lbl in MODULE_LABELS]


@pytest.mark.parametrize("name, label, args", MODULE_CASES, ids=[f"{n}:{lbl}" for n, lbl, _ in MODULE_CASES])
def test_evaluate_modules_refuse_malformed_inputs_in_one_line(modules, name, label, args):
    assert_one_line_error(modules[name].compute, **args)


def test_evaluate_module_add_and_add_batch_check_too(modules):
    m = modules["grounded_precision"]
    assert_one_line_error(m.add_batch, predictions=P, units=[[{"text": "x", "foo": 1}]], sources=S)
    assert_one_line_error(m.add, prediction=P[0], units=[{"source_ids": None}], sources=S[0])
    assert modules["gold_coverage"].compute(**BASE["gold_coverage"])["gold_coverage"] == 1.0


# -- property-based: inputs of any shape --------------------------------------------------------------------

_leaf = st.none() | st.booleans() | st.integers(-2, 5) | st.floats(allow_nan=True) | st.text(max_size=6)
_any = st.recursive(
    _leaf,
    lambda c: (
        st.lists(c, max_size=3)
        | st.dictionaries(st.sampled_from(["text", "source_ids", "title", "id", "doc_id", "x"]), c, max_size=4)
    ),
    max_leaves=10,
)
_unit = st.fixed_dictionaries(
    {"text": st.text(max_size=30)},
    optional={"source_ids": st.none() | st.lists(st.sampled_from(["d0.s0", "d0.s1", "d1.s0"]), min_size=1, max_size=2)},
)


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(sorted(BASE)),
    field=st.sampled_from(["predictions", "units", "sources", "references", "contexts", "retrieved"]),
    value=_any,
)
def test_any_shape_is_a_result_or_a_one_line_error(name, field, value):
    args = dict(BASE[name])
    if field not in args:
        return
    args[field] = value
    try:
        out = get(name)(**args)
    except (TypeError, ValueError, JudgeError) as err:
        assert str(err).strip() and "\n" not in str(err).strip(), str(err)
        return
    assert isinstance(out, dict) and out["n"] + out["n_undefined"] == len(out["per_question"])


@settings(max_examples=150, deadline=None)
@given(
    units=st.lists(_unit, max_size=3),
    answer=st.text(alphabet="ab [1]2.", max_size=25),
)
def test_well_formed_units_always_score(units, answer):
    sources = [{"id": i, "text": f"text {i}"} for i in ("d0.s0", "d0.s1", "d1.s0")]
    out = get("grounded_precision")([answer], [units], [sources])
    v = out["grounded_precision"]
    assert v is None or 0.0 <= v <= 1.0
