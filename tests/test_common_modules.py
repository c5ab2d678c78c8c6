"""Common tests over every diagnostic and every evaluate module (scikit-learn style).

Each diagnostic in the catalog needs an entry in ``CASES``: inputs for several
questions (at least one undefined where the definition allows it) and the keyword
options.  The same checks then run for all of them: declared inputs, range,
direction, invariance to question order, undefined handling, card + version.
"""

import math
import random
import re
from pathlib import Path
from typing import Any

import pytest

from rageval import diagnostics
from rageval.diagnostics import CATALOG

ROOT = Path(__file__).resolve().parents[1]
METRICS = ROOT / "metrics"

UNITS = [
    [
        {"text": "Paris is the capital of France.", "source_ids": ["d0.s0"]},
        {"text": "Lyon is big.", "source_ids": None},
    ],
    [{"text": "The Nile is long.", "source_ids": ["d0.s0"]}],
    [{"text": "Mars is red.", "source_ids": None}],
    [{"text": "Water boils at 100 C.", "source_ids": ["d0.s0", "d0.s1"]}],
]
SOURCES = [
    [{"id": "d0.s0", "text": "Paris is the capital of France."}, {"id": "d1.s0", "text": "Lyon is a big city."}],
    [{"id": "d0.s0", "text": "The Nile is a long river."}],
    [{"id": "d0.s0", "text": "Mars is the red planet."}],
    [{"id": "d0.s0", "text": "Water boils at 100 C."}, {"id": "d0.s1", "text": "At sea level."}],
]
PREDICTIONS = [
    "Paris is the capital of France [1]. Lyon is big [2].",
    "The Nile is long [1].",
    "",
    "Water boils at 100 C [1].",
]

#: name -> (inputs keyed by argument name, options)
CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "answer_in_context": (
        {
            "contexts": ["Paris is nice", "the Nile", "x", "boils at 100"],
            "references": [["Paris"], ["Amazon"], ["no"], ["100"]],
        },
        {},
    ),
    "str_em": (
        {"predictions": ["Paris", "Rome", "x", "y"], "references": [[["Paris"], ["Lyon"]], [["Rome"]], [], [["z"]]]},
        {},
    ),
    "answer_f1": (
        {"predictions": ["Paris", "the Rome", "x", "yes"], "references": [["Paris"], ["Rome city"], ["the"], ["no"]]},
        {},
    ),
    "qampari_f1": (
        {
            "predictions": ["Ann, Bob [1].", "Carl", "x", ""],
            "references": [[["Ann"], ["Dora"]], [["Carl", "Karl"]], [], [["Eve"]]],
        },
        {},
    ),
    "rouge_lsum": (
        {
            "predictions": ["The cat sat on the mat.", "Dogs bark [1].", "x", ""],
            "references": [["A cat sat on a mat."], ["Dogs bark loudly.", "Cats meow."], [], ["Eve."]],
        },
        {},
    ),
    "claims_recall": (
        {
            "predictions": ["Paris is the capital of France.", "Dogs bark.", "x", ""],
            "references": [["Paris is the capital.", "Berlin is big."], ["Dogs bark."], [], ["Eve runs."]],
        },
        {"judge": "lexical"},
    ),
    "retrieval_recall": (
        {"retrieved": [["a", "b"], ["c"], ["d"], ["e", "f"]], "references": [["a"], ["x"], [], ["f", "g"]]},
        {"k": 2},
    ),
}

ATTRIBUTION_INPUTS = {"predictions": PREDICTIONS, "units": UNITS, "sources": SOURCES}
# gold-document coverage (no evaluate module): covered, not covered, no provenance (undefined), no gold (undefined)
CASES["gold_coverage"] = ({"units": UNITS, "references": [["d0"], ["d1"], ["d0"], []]}, {})
for _name in (
    "emitted_precision",
    "emitted_recall",
    "grounded_precision",
    "grounded_recall",
    "re_attributability",
    "verification",
):
    CASES[_name] = (ATTRIBUTION_INPUTS, {"judge": "lexical"})
CASES["evidence_f1"] = (
    dict(
        ATTRIBUTION_INPUTS,
        paragraph_of=[{"d0.s0": "p0", "d1.s0": "p1"}, {"d0.s0": "p0"}, {"d0.s0": "p0"}, {"d0.s0": "p0", "d0.s1": "p0"}],
        references=[[["p0"]], [["p1"], ["p0"]], [["p0"]], [[]]],
    ),
    {},
)
CASES["compression"] = (ATTRIBUTION_INPUTS, {"judge": "lexical"})
# the answers' sentences, except question 1's given claims; question 2's empty answer has no claim (undefined)
CASES["claim_support"] = (
    dict(ATTRIBUTION_INPUTS, claims=[None, ["The Nile is a long river.", "Mars is red."], None, None]),
    {"judge": "lexical"},
)
# `rageval new-metric NAME` adds its case above this line


def _module_names():
    return sorted(p.name for p in METRICS.iterdir() if (p / f"{p.name}.py").is_file())


def _cases_for_catalog():
    out = []
    for name in sorted(CATALOG):
        case = CASES.get(name)
        if case is None:
            continue
        out.append(name)
    return out


def test_every_diagnostic_has_a_common_test_case():
    missing = [n for n in CATALOG if n not in CASES]
    assert not missing, f"add these diagnostics to CASES in {__file__}: {missing}"


def test_every_module_is_in_the_catalog():
    assert set(_module_names()) <= set(CATALOG)


@pytest.mark.parametrize("name", _module_names())
def test_card_present_with_version_matching_catalog(name):
    card = (METRICS / name / "README.md").read_text()
    m = re.search(r"^version:\s*(\S+)", card, re.MULTILINE)
    assert m, f"metrics/{name}/README.md needs a 'version: X.Y.Z' line"
    assert m.group(1) == CATALOG[name].version
    assert "direction" in card.lower() or "better" in card.lower()
    for section in ("Definition", "Inputs", "Degenerate"):
        assert section.lower() in card.lower(), f"card of {name} lacks a {section} section"


def _run(name, inputs, options):
    return diagnostics.get(name)(**inputs, **options)


def _aggregates(name, result):
    keys = [name, *CATALOG[name].also]
    return {k: result.get(k) for k in keys if k in result}


@pytest.mark.parametrize("name", _cases_for_catalog())
def test_result_shape_range_and_undefined(name):
    inputs, options = CASES[name]
    result = _run(name, inputs, options)
    n_q = len(next(iter(inputs.values())))
    assert len(result["per_question"]) == n_q
    assert result["n"] + result["n_undefined"] == n_q
    for key, value in _aggregates(name, result).items():
        if value is None:
            continue
        assert isinstance(value, float) and not math.isnan(value)
        if CATALOG[name].direction != "none" and CATALOG.direction(key) != "none":  # counts and lengths: no range
            assert 0.0 <= value <= 1.0, (key, value)
    for q in result["per_question"]:
        v = q.get(name)
        assert v is None or (0.0 <= v <= 1.0) or CATALOG[name].direction == "none"
    for o in CATALOG[name].outputs:  # declared bounds hold for every value, per question and mean
        if o.bounds is not None:
            values = [result.get(o.key), *(q.get(o.key) for q in result["per_question"])]
            assert all(v is None or o.bounds[0] <= v <= o.bounds[1] for v in values), (o.key, o.bounds, values)


@pytest.mark.parametrize("name", _cases_for_catalog())
def test_invariant_to_question_order(name):
    inputs, options = CASES[name]
    n_q = len(next(iter(inputs.values())))
    perm = list(range(n_q))
    random.Random(0).shuffle(perm)
    shuffled = {k: [v[i] for i in perm] for k, v in inputs.items()}
    a, b = _run(name, inputs, options), _run(name, shuffled, options)
    for key, value in _aggregates(name, a).items():
        assert (value is None and b[key] is None) or b[key] == pytest.approx(value)
    assert [b["per_question"][perm.index(i)] for i in range(n_q)] == a["per_question"]


@pytest.mark.parametrize("name", _cases_for_catalog())
def test_mismatched_lengths_rejected(name):
    inputs, options = CASES[name]
    first = next(iter(inputs))
    broken = dict(inputs, **{first: list(inputs[first])[:-1]})
    with pytest.raises(ValueError):
        _run(name, broken, options)


def test_directions_are_declared():
    for info in CATALOG.values():
        assert info.direction in ("higher", "lower", "none")
        assert re.fullmatch(r"\d+\.\d+\.\d+", info.version)


@pytest.fixture(scope="module")
def evaluate_mod():
    return pytest.importorskip("evaluate")


@pytest.mark.parametrize("name", _module_names())
def test_evaluate_module_declares_inputs_and_matches_pure_function(name, evaluate_mod, monkeypatch):
    monkeypatch.chdir(ROOT)
    module = evaluate_mod.load(f"metrics/{name}")
    assert CATALOG[name].version in module.description
    declared = module.features if not isinstance(module.features, list) else module.features[0]
    inputs, options = CASES[name]
    assert set(declared) == set(inputs), "declared evaluate features must be exactly the data inputs"
    via_module = module.compute(**inputs, **options)
    direct = _run(name, inputs, options)
    assert _aggregates(name, via_module) == _aggregates(name, direct)
    assert via_module["per_question"] == direct["per_question"]
