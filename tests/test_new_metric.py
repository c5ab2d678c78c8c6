"""`rageval new-metric NAME` scaffolds a diagnostic (docs/architecture.md#add-a-diagnostic): in a copy of the
checkout's catalog and common tests, `rageval new-metric demo_metric --root DIR` writes the pure function, the
evaluate module and its card and adds the catalog entry and the common-test case; once one question's value is
written (here 1.0), the common tests and the module contract pass on it, run from the copies."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.diagnostics import catalog as cat
from rageval.evaluate_support.scaffold import spec_of

ROOT = Path(__file__).resolve().parents[1]
NAME = "demo_metric"
STUB = f'raise NotImplementedError("{NAME}: write the value of one question (rageval new-metric wrote a stub)")'


def _load(module_name: str, path: Path, monkeypatch):
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, module_name, module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def checkout(tmp_path):
    """A folder with the two files new-metric adds an entry to, copied from this checkout."""
    root = tmp_path / "checkout"
    for rel in ("src/rageval/diagnostics/catalog.py", "tests/test_common_modules.py", "tests/test_module_contract.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, root / rel)
    (root / "metrics").mkdir()
    return root


@pytest.mark.slow
def test_new_metric_writes_a_diagnostic_whose_common_tests_pass_once_its_value_is_written(checkout, monkeypatch):
    evaluate = pytest.importorskip("evaluate")
    from rageval.evaluate_support import modules
    from rageval.evaluate_support.export import render_folder

    res = CliRunner().invoke(main, ["new-metric", NAME, "--root", str(checkout)])
    assert res.exit_code == 0, res.output
    function = checkout / "src" / "rageval" / "diagnostics" / f"{NAME}.py"
    folder = checkout / "metrics" / NAME
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "app.py", f"{NAME}.py", "requirements.txt"]

    # the one catalog entry, as written into the catalog: the spec new-metric declares, its output bounded
    written = _load("_scaffolded_catalog", checkout / "src" / "rageval" / "diagnostics" / "catalog.py", monkeypatch)
    spec = written.CATALOG[NAME]
    assert spec == spec_of(NAME, spec.summary) and spec.outputs[0].bounds == (0.0, 1.0)
    assert list(written.CATALOG)[:-1] == list(cat.CATALOG)  # added at the end, nothing else changed

    # the stub is not a definition until one question's value is written
    source = function.read_text(encoding="utf-8")
    assert source.count(STUB) == 1
    stub = _load(f"rageval.diagnostics.{NAME}", function, monkeypatch)
    with pytest.raises(NotImplementedError):
        stub.demo_metric(["Paris"], [["Paris"]])
    function.write_text(source.replace(STUB, "return 1.0"), encoding="utf-8")
    _load(f"rageval.diagnostics.{NAME}", function, monkeypatch)

    cat.register(spec)
    modules.known_names.cache_clear()
    try:
        common = _load("_scaffolded_common", checkout / "tests" / "test_common_modules.py", monkeypatch)
        assert common.METRICS == checkout / "metrics" and NAME in common.CASES
        monkeypatch.setitem(sys.modules, "test_common_modules", common)  # the contract's cases: the copy's
        contract = _load("_scaffolded_contract", checkout / "tests" / "test_module_contract.py", monkeypatch)
        common.test_every_module_is_in_the_catalog()
        common.test_card_present_with_version_matching_catalog(NAME)
        common.test_result_shape_range_and_undefined(NAME)
        common.test_invariant_to_question_order(NAME)
        common.test_mismatched_lengths_rejected(NAME)
        common.test_evaluate_module_declares_inputs_and_matches_pure_function(NAME, evaluate, monkeypatch)
        for check in (
            contract.test_module_loads_offline_from_its_folder,
            contract.test_compute_is_declared_by_the_module_without_var_arguments,
            contract.test_features_declared_and_compute_takes_exactly_them_positionally,
            contract.test_options_are_the_pure_functions_with_its_defaults,
            contract.test_compute_rejects_an_undeclared_keyword,
            contract.test_compute_on_no_questions_is_the_pure_functions_empty_result,
            contract.test_a_first_question_of_empty_lists_does_not_decide_the_format,
        ):
            check(NAME)
        contract.test_module_doctests_pass(NAME, monkeypatch)
        # the definition by hand: 1.0 for each of the three questions with gold answers; the fourth undefined
        result = common._run(NAME, *common.CASES[NAME])
        assert (result[NAME], result["n"], result["n_undefined"]) == (1.0, 3, 1)
        # the folder is what `rageval export-metrics` writes
        for fname, text in render_folder(NAME, source=folder).items():
            assert (folder / fname).read_text(encoding="utf-8") == text, fname
    finally:
        cat.unregister(NAME)
        modules.known_names.cache_clear()


def test_new_metric_refuses_a_taken_name_a_bad_name_and_a_folder_without_the_marks(checkout, tmp_path):
    catalog = (checkout / "src" / "rageval" / "diagnostics" / "catalog.py").read_text(encoding="utf-8")
    for name, message in (("answer_f1", "already a diagnostic"), ("Demo-Metric", "lower-case letters")):
        res = CliRunner().invoke(main, ["new-metric", name, "--root", str(checkout)])
        assert res.exit_code == 2 and message in res.output, res.output
    bare = tmp_path / "bare"
    (bare / "src" / "rageval" / "diagnostics").mkdir(parents=True)
    (bare / "src" / "rageval" / "diagnostics" / "catalog.py").write_text("_SPECS = []\n", encoding="utf-8")
    (bare / "tests").mkdir()
    (bare / "tests" / "test_common_modules.py").write_text("CASES = {}\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["new-metric", NAME, "--root", str(bare)])
    assert res.exit_code == 2 and "adds its entry above this line" in res.output
    assert not (bare / "metrics").exists() and not (bare / "src" / "rageval" / "diagnostics" / f"{NAME}.py").exists()
    assert (checkout / "src" / "rageval" / "diagnostics" / "catalog.py").read_text(encoding="utf-8") == catalog


def test_new_metric_outside_a_checkout_says_so_and_writes_nothing(tmp_path):
    """From an installed wheel the default root is no clone of rageval: one line, exit 2, nothing written."""
    res = CliRunner().invoke(main, ["new-metric", NAME, "--root", str(tmp_path)])
    assert res.exit_code == 2 and "is not a rageval checkout" in res.output, res.output
    assert not any(tmp_path.iterdir())
