"""evaluate's module contract, for every rageval module (docs/evaluate.md#the-module-contract).

Upstream ``evaluate`` checks each of its own modules in ``tests/test_metric_common.py``: the module
loads, its doctests pass (more than one example), and its ``_compute`` takes no ``**kwargs``.  The
same checks run here for every module, discovered from the catalog and the ``metrics/`` folder (so a
new diagnostic is checked as soon as it is added), plus what rageval's modules promise beyond that:

* the module class defines ``_compute`` itself, with neither ``*args`` nor ``**kwargs``;
* its features are declared, and ``_compute``'s positional parameters are exactly the feature
  names (for a module with several feature sets, each set's);
* its keyword-only parameters are the pure function's options, each with the pure function's
  default, so a module and its function cannot drift apart;
* an undeclared keyword passed to ``_compute`` is Python's ``TypeError``, not silently taken.
"""

import doctest
import functools
import inspect
import sys
from pathlib import Path

import pytest
from test_common_modules import CASES

from rageval import diagnostics
from rageval.diagnostics import CATALOG

evaluate = pytest.importorskip("evaluate")

ROOT = Path(__file__).resolve().parents[1]
METRICS = ROOT / "metrics"
FOLDERS = sorted(p.name for p in METRICS.iterdir() if (p / f"{p.name}.py").is_file())
NAMES = sorted(set(CATALOG) | set(FOLDERS))
VAR_KINDS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


@functools.cache
def _load(name):
    return evaluate.load(str(METRICS / name))


def _parameters(module):
    """``_compute``'s parameters as ``inspect`` sees them on the class (``self`` first), as upstream reads them."""
    return inspect.signature(type(module)._compute).parameters


def _feature_sets(module):
    features = module.info.features
    return list(features) if isinstance(features, list) else [features]


def test_every_catalog_entry_has_a_module_and_every_module_an_entry():
    assert NAMES, "no module found"
    assert sorted(CATALOG) == FOLDERS, (
        f"catalog without a module: {sorted(set(CATALOG) - set(FOLDERS))}; "
        f"module without a catalog entry: {sorted(set(FOLDERS) - set(CATALOG))}"
    )


@pytest.mark.parametrize("name", NAMES)
def test_module_loads_offline_from_its_folder(name):
    module = _load(name)
    assert isinstance(module, evaluate.EvaluationModule)
    assert module.name == name


@pytest.mark.parametrize("name", NAMES)
def test_module_doctests_pass(name, monkeypatch):
    """The module file's doctests (its class docstring: the ``_KWARGS_DESCRIPTION`` examples), bare names local."""
    source = sys.modules[type(_load(name)).__module__]
    load = evaluate.load

    def local_load(path, *args, **kwargs):
        folder = METRICS / str(path)
        return load(str(folder) if (folder / f"{folder.name}.py").is_file() else path, *args, **kwargs)

    monkeypatch.setattr(evaluate, "load", local_load)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    for test in doctest.DocTestFinder().find(source):
        runner.run(test, out=report.append)
    results = runner.summarize(verbose=False)
    examples = doctest.DocTestParser().get_examples(source._KWARGS_DESCRIPTION)
    assert results.failed == 0, "".join(report)
    assert len(examples) > 1, f"{name}: _KWARGS_DESCRIPTION needs an Examples block of at least two lines"
    assert results.attempted >= len(examples), f"{name}: the Examples block is not in the module's docstrings"


@pytest.mark.parametrize("name", NAMES)
def test_compute_is_declared_by_the_module_without_var_arguments(name):
    cls = type(_load(name))
    assert "_compute" in vars(cls), f"{name}: the module class must define _compute itself"
    params = list(_parameters(_load(name)).values())
    assert params[0].name == "self"
    loose = [f"{p.name} ({p.kind.description})" for p in params if p.kind in VAR_KINDS]
    assert not loose, f"{name}._compute must declare its inputs and options by name, not take {loose}"


@pytest.mark.parametrize("name", NAMES)
def test_features_declared_and_compute_takes_exactly_them_positionally(name):
    module = _load(name)
    feature_sets = _feature_sets(module)
    assert feature_sets and all(len(f) for f in feature_sets), f"{name}: declare the module's features"
    params = _parameters(module)
    data = [n for n, p in params.items() if n != "self" and p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    for features in feature_sets:
        missing = sorted(set(features) - set(params))
        assert not missing, f"{name}._compute lacks the declared features {missing}"
        assert set(data) == set(features), f"{name}._compute's positional parameters must be its features"
    assert all(params[n].default is inspect.Parameter.empty for n in data), "evaluate passes every feature"


@pytest.mark.parametrize("name", NAMES)
def test_options_are_the_pure_functions_with_its_defaults(name):
    params = _parameters(_load(name))
    pure = inspect.signature(diagnostics.get(name)).parameters
    assert set(params) - {"self"} == set(pure), f"{name}._compute and the pure function take different names"
    options = [n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert options == [n for n in pure if n in options], f"{name}: options in the pure function's order"
    for n in options:
        default, expected = params[n].default, pure[n].default
        assert default is not inspect.Parameter.empty, f"{name}._compute: option {n!r} needs a default"
        assert (type(default), default) == (type(expected), expected), (name, n, default, expected)


@pytest.mark.parametrize("name", NAMES)
def test_option_defaults_are_the_scoring_config_s(name):
    """threshold, max_citations, alce_compat, the re-attribution options: ScoringConfig's defaults
    (rageval.scoring), whether a module imports the constant or writes the value."""
    from test_scoring_config import option_defaults

    params = _parameters(_load(name))
    want = option_defaults(params)
    for n in set(params) & set(want):
        assert (type(params[n].default), params[n].default) == (type(want[n]), want[n]), (name, n)


@pytest.mark.parametrize("name", NAMES)
def test_compute_rejects_an_undeclared_keyword(name):
    inputs, _ = CASES[name]
    with pytest.raises(TypeError, match="not_an_option"):
        _load(name)._compute(**inputs, not_an_option=1)


def _no_judge(kwargs):
    """The case's options with the model-free judge (the modules' defaults may name a model)."""
    return {**kwargs, "judge": "lexical"} if "judge" in kwargs else kwargs


@pytest.mark.parametrize("name", NAMES)
def test_compute_on_no_questions_is_the_pure_functions_empty_result(name):
    """Zero questions: what the pure function returns for empty lists (n = 0, the mean undefined), never an
    IndexError from evaluate's format inference (it read row 0 of an empty batch)."""
    inputs, kwargs = CASES[name]
    empty = {k: [] for k in inputs}
    got = _load(name).compute(**empty, **_no_judge(kwargs))
    want = diagnostics.get(name)(**empty, **_no_judge(kwargs))
    assert got["n"] == 0 and got.get(name) is None
    assert {k: v for k, v in got.items() if k in want} == {k: v for k, v in want.items() if k in got}


@pytest.mark.parametrize("name", NAMES)
def test_a_first_question_of_empty_lists_does_not_decide_the_format(name):
    """A batch whose first question's lists are empty is read in the format its later questions show: the same
    per-question values as the pure function, whatever the order."""
    inputs, kwargs = CASES[name]
    rows = len(next(iter(inputs.values())))
    blank = {k: ([[]] if isinstance(v[0], list) else v[:1]) + list(v) for k, v in inputs.items()}
    try:
        want = diagnostics.get(name)(**blank, **_no_judge(kwargs))
    except (TypeError, ValueError):
        pytest.skip(f"{name}: a question of empty lists is not a valid input of the pure function")
    got = _load(name).compute(**blank, **_no_judge(kwargs))
    assert len(got["per_question"]) == rows + 1
    assert got["per_question"] == want["per_question"]
