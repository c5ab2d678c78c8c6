"""The catalog drives everything: each entry, listed alone in a suite, reaches every record, the summary,
the report and its evaluate module with its declared directions; a new diagnostic is one entry + its scorer."""

import csv
import json
from pathlib import Path

import pytest

from rageval.diagnostics import CATALOG, direction_of
from rageval.diagnostics import catalog as cat
from rageval.diagnostics.inputs import ScoringInput
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite

ROOT = Path(__file__).resolve().parents[1]

#: a dataset whose gold makes each diagnostic defined somewhere
DATASET = {"str_em": "asqa", "evidence_f1": "qasper"}
SUITE = """\
name: cat-{name}
dataset: {{name: {dataset}, limit: 3{sample}}}
retrieval: {retrieval}
settings:
  - {{compressor: identity}}
  - {{compressor: token_prune, budgets: [0.5]}}
reader: {{backend: extractive}}
judge: {{spec: lexical}}
diagnostics: [{name}]
contrasts: [{{vs: identity}}]
output_dir: {out}
seed: 0
"""


def _suite(tmp_path: Path, name: str) -> Path:
    dataset = DATASET.get(name, "hotpotqa")
    retrieval = {"asqa": "{method: bm25, k: 3, corpus: dataset}", "qasper": "{method: given}"}.get(
        dataset, "{method: bm25, k: 4}"
    )
    sample = ", sample: qasper_intact" if dataset == "qasper" else ""
    p = tmp_path / f"{name}.yaml"
    p.write_text(SUITE.format(name=name, dataset=dataset, retrieval=retrieval, sample=sample, out=tmp_path / name))
    return p


def _summary(run_dir: Path) -> dict[str, dict[str, str]]:
    with open(run_dir / "summary.csv", newline="") as f:
        return {r["setting"]: r for r in csv.DictReader(f)}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CATALOG))
def test_every_catalog_entry_reaches_records_summary_report_and_module(name, tmp_path):
    spec = CATALOG[name]
    result = run_suite(load_suite(_suite(tmp_path, name)), progress=False)
    records = [json.loads(line) for line in (result.out_dir / "records.jsonl").read_text().splitlines()]
    ok = [r for r in records if r["status"] == "ok"]
    assert ok, "no ok record"
    others = {k for s in CATALOG.values() if s.name != name for k in s.keys} - set(spec.keys)
    for r in ok:
        assert set(spec.keys) <= set(r["metrics"]), (name, sorted(r["metrics"]))
        assert not (set(r["metrics"]) & others), f"{name} wrote another diagnostic's outputs"
    summary = _summary(result.out_dir)
    for key in spec.keys:
        assert all(key in row for row in summary.values()), f"summary lacks {key}"
    report = json.loads((result.out_dir / "report.json").read_text())
    for c in report["contrasts"]:
        if c["kind"] == "pair":
            assert c["direction"] == direction_of(c["metric_a"])
    declared = {k for s in CATALOG.values() for k in s.keys}
    assert {c["metric_a"] for c in report["contrasts"]} <= declared | set(cat.DERIVED)
    card = (ROOT / "metrics" / name / "README.md").read_text()
    assert f"version: {spec.version}" in card
    assert (ROOT / "metrics" / name / f"{name}.py").is_file()


def test_directions_come_from_the_catalog_not_the_name():
    assert direction_of("emitted_minus_grounded_precision") == "none"
    assert direction_of("foo_precision") == "none"
    assert direction_of("unsupported_declared_span_excl_abstain") == "lower"
    assert direction_of("grounded_recall_excl_abstain") == "higher"
    for spec in CATALOG.values():
        for o in spec.outputs:
            assert direction_of(o.key) == o.direction


def test_output_keys_declared_once_with_one_direction():
    seen = {}
    for spec in CATALOG.values():
        for o in spec.outputs + spec.module_keys:
            assert seen.setdefault(o.key, o.direction) == o.direction, o.key


def test_unknown_diagnostic_in_a_suite_fails_at_load(tmp_path):
    from rageval.suite.config import SuiteError

    p = _suite(tmp_path, "answer_f1")
    p.write_text(p.read_text().replace("diagnostics: [answer_f1]", "diagnostics: [answer_f11]"))
    with pytest.raises(SuiteError, match="Did you mean 'answer_f1'"):
        load_suite(p)


# ---------------------------------------------------------------- adding a diagnostic


def score_answer_length(inputs, options):
    """The scorer of the walk-through diagnostic: answer length in words (a pure function over inputs)."""
    per_q = [{"answer_words": float(len(x.answer.split()))} for x in inputs]
    return {"answer_words": sum(q["answer_words"] for q in per_q) / len(per_q), "per_question": per_q}


@pytest.fixture
def answer_words():
    spec = cat.DiagnosticSpec(
        name="answer_words",
        version="0.1.0",
        summary="Words in the answer.",
        family="answer",
        function=f"{__name__}:score_answer_length",
        outputs=(cat.Output("answer_words", "lower"),),
        scorer=f"{__name__}:score_answer_length",
    )
    cat.register(spec)
    yield spec
    cat.unregister("answer_words")


def test_walkthrough_adding_a_diagnostic_is_one_entry_and_its_scorer(answer_words, tmp_path):
    """The whole of adding a diagnostic: a scorer (here, in this file) and one catalog entry (the fixture).
    The runner, the summary and the contrasts pick it up with its direction; nothing else is edited."""
    p = _suite(tmp_path, "answer_f1")
    p.write_text(p.read_text().replace("diagnostics: [answer_f1]", "diagnostics: [answer_f1, answer_words]"))
    result = run_suite(load_suite(p), progress=False)
    records = [json.loads(line) for line in (result.out_dir / "records.jsonl").read_text().splitlines()]
    for r in records:
        if r["status"] == "ok":
            assert r["metrics"]["answer_words"] == len(r["answer"]["text"].split())
    assert "answer_words" in _summary(result.out_dir)["identity"]
    report = json.loads((result.out_dir / "report.json").read_text())
    rows = [c for c in report["contrasts"] if c["metric_a"] == "answer_words"]
    assert rows and all(c["direction"] == "lower" for c in rows)


def test_register_rejects_a_duplicate_and_a_conflicting_direction():
    with pytest.raises(ValueError, match="already in the catalog"):
        cat.register(CATALOG["answer_f1"])
    bad = cat.DiagnosticSpec(
        name="bad",
        version="0.1.0",
        summary="x",
        family="answer",
        function="json:dumps",
        outputs=(cat.Output("answer_f1", "lower"),),
        scorer="json:dumps",
    )
    with pytest.raises(ValueError, match="answer_f1"):
        cat.register(bad)
    assert "bad" not in CATALOG and "bad" not in CATALOG.functions and cat.direction_of("answer_f1") == "higher"
    with pytest.raises(ValueError, match="built-in"):
        cat.unregister("answer_f1")
    with pytest.raises(TypeError):  # by keyword only: six positional fields are not read by position
        cat.DiagnosticSpec("x", "0.1.0", "x", "answer", "json:dumps", ())  # type: ignore[misc]
    engine_only = dict(name="ex", version="0.1.0", summary="x", family="answer", function="json:dumps", outputs=())
    with pytest.raises(ValueError, match="engine diagnostics"):
        cat.register(cat.DiagnosticSpec(**engine_only, scorer="json:dumps", record_extra="json:dumps"))


def test_the_catalog_is_a_mapping_and_adding_keeps_everything_derived_in_step(answer_words):
    """CATALOG is one object: adding a spec updates the directions, owners and registries together, with no
    module global refilled behind the caller's back; removing it takes them all back."""
    from collections.abc import Mapping

    assert isinstance(CATALOG, Mapping) and isinstance(CATALOG, cat.Catalog)
    assert list(CATALOG)[-1] == "answer_words" and CATALOG["answer_words"] is answer_words
    assert cat.direction_of("answer_words") == "lower" and cat.output_owner("answer_words") == "answer_words"
    assert CATALOG.scorers.get("answer_words") is score_answer_length


def test_the_engine_special_cases_are_declared_in_the_spec_not_in_dispatch():
    """compression computes its record metrics from the engine row, re_attributability adds the sweep to
    extra: both declared in their specs; the dispatcher names no diagnostic."""
    import inspect

    from rageval.diagnostics import dispatch

    assert CATALOG["compression"].record_values == "rageval.diagnostics.compression:record_values"
    assert CATALOG["re_attributability"].record_extra == "rageval.diagnostics.attribution.sweep:record_sweeps"
    assert sorted(CATALOG.record_values) == ["compression"] and sorted(CATALOG.record_extras) == ["re_attributability"]
    source = inspect.getsource(dispatch)
    code = source[source.index('"""', 3) + 3 :]  # after the module doc
    assert not [name for name in CATALOG if f'"{name}"' in code]


def test_scoring_input_round_trips_a_saved_record(tmp_path):
    """rescore's inputs equal the runner's: the same ScoringInput from a saved record."""
    from rageval.diagnostics.dispatch import score
    from rageval.readers import PromptTemplate
    from rageval.suite.plan import scoring_options
    from rageval.types import Record

    p = _suite(tmp_path, "grounded_precision")
    suite = load_suite(p)
    result = run_suite(suite, progress=False, build_report=False)
    records = [
        Record.from_dict(json.loads(line)) for line in (result.out_dir / "records.jsonl").read_text().splitlines()
    ]
    template = PromptTemplate.coerce(None)
    inputs = [ScoringInput.from_record(r, template.evidence_text) for r in records if r.status == "ok"]
    again = score(inputs, ["grounded_precision"], scoring_options(suite), "lexical")
    for r, (metrics, _) in zip([r for r in records if r.status == "ok"], again):
        assert metrics == dict(r.metrics)
