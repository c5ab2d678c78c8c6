"""The evaluate modules' streaming API and evaluate.combine, for every module (docs/design.md#module-interface).

* ``add_batch`` (in chunks) or ``add`` (one question at a time) then ``compute(**options)``
  gives exactly what one ``compute`` over the same data gives — also when optional keys
  (a unit's ``title`` or ``source_ids``, a source's ``title``, evidence_f1's ``paragraph_of``)
  are left out, which ``compute`` fills and the streaming path must fill the same way.
* One key, one owner: no two modules return the same aggregate, so ``evaluate.combine``
  gives every metric key once, unprefixed, and prefixes only the common counts; with
  ``force_prefix=True`` every key is ``<module>_<key>``.
"""

from pathlib import Path

import pytest
from test_common_modules import ATTRIBUTION_INPUTS, CASES

evaluate = pytest.importorskip("evaluate")

ROOT = Path(__file__).resolve().parents[1]
NAMES = sorted(p.name for p in (ROOT / "metrics").iterdir() if (p / f"{p.name}.py").is_file())
COMMON = {"n", "n_undefined", "per_question"}


@pytest.fixture(scope="module")
def modules():
    return {n: evaluate.load(str(ROOT / "metrics" / n)) for n in NAMES}


def _split(inputs, at):
    return {k: v[:at] for k, v in inputs.items()}, {k: v[at:] for k, v in inputs.items()}


def _example(inputs, i):
    """Question ``i`` as ``add`` takes it: predictions -> prediction, references -> reference."""
    rename = {"predictions": "prediction", "references": "reference"}
    return {rename.get(k, k): v[i] for k, v in inputs.items()}


def _n_questions(inputs):
    return len(next(iter(inputs.values())))


@pytest.mark.parametrize("name", NAMES)
def test_add_batch_in_chunks_then_compute_equals_compute(name, modules):
    inputs, options = CASES[name]
    m = modules[name]
    expected = m.compute(**inputs, **options)
    first, rest = _split(inputs, 1)
    m.add_batch(**first)
    m.add_batch(**rest)
    assert m.compute(**options) == expected


@pytest.mark.parametrize("name", NAMES)
def test_add_one_question_at_a_time_then_compute_equals_compute(name, modules):
    inputs, options = CASES[name]
    m = modules[name]
    expected = m.compute(**inputs, **options)
    for i in range(_n_questions(inputs)):
        m.add(**_example(inputs, i))
    assert m.compute(**options) == expected


def _drop_optional(rows, keys):
    return [[{k: v for k, v in d.items() if k not in keys} for d in per_q] for per_q in rows]


ATTRIBUTION = [n for n in NAMES if "units" in CASES[n][0]]


@pytest.mark.parametrize("name", ATTRIBUTION)
def test_streaming_fills_absent_optional_keys_like_compute(name, modules):
    """Units without title / source_ids, sources without title, a few with titles: the
    streaming path fills exactly what compute fills (it used to fail with KeyError: 'title')."""
    inputs, options = CASES[name]
    units = _drop_optional(inputs["units"], {"title", "source_ids"})  # no source_ids = declares nothing
    units[0] = [dict(u, title="Capitals") for u in units[0]]  # a title on one question only
    sparse = dict(inputs, units=units)
    if "sources" in inputs:
        sparse["sources"] = [list(q) for q in inputs["sources"]]
        sparse["sources"][1] = [dict(src, title="Rivers") for src in sparse["sources"][1]]
    m = modules[name]
    expected = m.compute(**sparse, **options)
    assert expected["per_question"][0] is not None
    m.add_batch(**_split(sparse, 2)[0])
    for i in range(2, _n_questions(sparse)):
        m.add(**_example(sparse, i))
    assert m.compute(**options) == expected
    # leaving a key out means None, on both paths
    explicit = dict(sparse, units=[[dict(u, title=u.get("title"), source_ids=None) for u in q] for q in units])
    if "sources" in sparse:
        explicit["sources"] = [[dict(src, title=src.get("title")) for src in q] for q in sparse["sources"]]
    assert m.compute(**explicit, **options) == expected


def test_evidence_f1_streams_without_paragraph_of(modules):
    inputs, options = CASES["evidence_f1"]
    sparse = {k: v for k, v in inputs.items() if k != "paragraph_of"}
    m = modules["evidence_f1"]
    expected = m.compute(**sparse, **options)
    m.add_batch(**_split(sparse, 2)[0])
    for i in range(2, _n_questions(sparse)):
        m.add(**_example(sparse, i))
    assert m.compute(**options) == expected


def test_stream_of_nothing_is_an_error_not_a_zero(modules):
    m = modules["answer_f1"]
    with pytest.raises(ValueError):
        m.compute()


# ---------------------------------------------------------------- one key, one owner


def _own_top_level_keys(name, modules):
    inputs, options = CASES[name]
    return set(modules[name].compute(**inputs, **options))


def test_no_two_modules_return_the_same_aggregate(modules):
    keys = {n: _own_top_level_keys(n, modules) - COMMON for n in NAMES}
    for a in NAMES:
        assert a in keys[a], f"{a} must return its aggregate under its own name"
        for b in NAMES:
            if a < b:
                assert not keys[a] & keys[b], f"{a} and {b} both return {sorted(keys[a] & keys[b])}"


def test_module_returns_its_catalog_keys_and_no_other_modules_aggregate(modules):
    from rageval.diagnostics import CATALOG

    declared = {n: {o.key for o in s.outputs + s.module_keys} for n, s in CATALOG.items()}
    for name in NAMES:
        got = _own_top_level_keys(name, modules) - COMMON
        others = set().union(*(v for k, v in declared.items() if k != name)) - declared[name]
        assert not got & others, (name, sorted(got & others))


# evidence_f1 shares predictions/units/sources with the attribution modules; its references are its own
COMBINED = [
    "compression",
    "emitted_precision",
    "emitted_recall",
    "evidence_f1",
    "grounded_precision",
    "grounded_recall",
    "re_attributability",
    "verification",
]
COMBINED_INPUTS = dict(CASES["evidence_f1"][0], **ATTRIBUTION_INPUTS)


def _separately(modules):
    out = {}
    for n in COMBINED:
        feats = modules[n]._feature_names()
        out[n] = modules[n].compute(**{k: COMBINED_INPUTS[k] for k in feats}, judge="lexical")
    return out


def test_combine_gives_every_metric_key_once_unprefixed(modules):
    alone = _separately(modules)
    combined = evaluate.combine([modules[n] for n in COMBINED]).compute(**COMBINED_INPUTS, judge="lexical")
    expected = {}
    for n, result in alone.items():
        for k, v in result.items():
            expected[f"{n}_{k}" if k in COMMON else k] = v
    assert combined == expected
    assert combined["emitted_precision"] == alone["emitted_precision"]["emitted_precision"]
    assert "emitted_minus_grounded_precision" in combined and "emitted_minus_grounded_recall" in combined
    assert "grounded_precision_emitted_precision" not in combined  # the old doubled, prefixed copy


def test_combine_with_force_prefix_prefixes_every_key(modules):
    alone = _separately(modules)
    combined = evaluate.combine([modules[n] for n in COMBINED], force_prefix=True).compute(
        **COMBINED_INPUTS, judge="lexical"
    )
    expected = {f"{n}_{k}": v for n, result in alone.items() for k, v in result.items()}
    assert combined == expected


def test_combine_streaming_equals_combine_compute(modules):
    names = ["emitted_precision", "grounded_recall", "verification"]
    combo = evaluate.combine([modules[n] for n in names])
    expected = combo.compute(**ATTRIBUTION_INPUTS, judge="lexical")
    first, rest = _split(ATTRIBUTION_INPUTS, 2)
    combo.add_batch(**first)
    for i in range(_n_questions(rest)):
        combo.add(**_example(rest, i))
    assert combo.compute(judge="lexical") == expected
