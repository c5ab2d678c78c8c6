from pathlib import Path

import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.suite.config import SuiteError, suite_hash
from rageval.suite.load import load_suite

ROOT = Path(__file__).resolve().parents[1]
SUITES = sorted((ROOT / "suites").glob("*.yaml"))

BASE = """\
name: t
dataset: {name: hotpotqa, limit: 3}
settings:
  - {compressor: identity}
  - {compressor: naive, budgets: [50, 0.5]}
"""


def write(tmp_path, text, name="s.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


#: shipped suites that read a file the user brings (--dataset-path): they load once it is given
USER_FILE = {"asqa_gtr.yaml": '[{"question": "q?", "qa_pairs": [], "docs": [{"title": "t", "text": "x."}]}]'}


@pytest.mark.parametrize("path", SUITES, ids=[p.name for p in SUITES])
def test_shipped_suites_validate(path, tmp_path, monkeypatch):
    if path.name in USER_FILE:
        monkeypatch.chdir(tmp_path)  # the suite's own dataset.path is not here: loading says what is missing
        with pytest.raises(SuiteError, match="--dataset-path FILE"):
            load_suite(path)
        (tmp_path / "given.json").write_text(USER_FILE[path.name])
        suite = load_suite(path, **{"dataset.path": str(tmp_path / "given.json")})
    else:
        suite = load_suite(path)
    assert suite.setting_names()


def test_settings_expand_compressor_times_budgets(tmp_path):
    suite = load_suite(write(tmp_path, BASE))
    assert suite.setting_names() == ["identity", "naive@50", "naive@0.5"]


@pytest.mark.parametrize(
    "text, message",
    [
        (BASE + "readerr: {}\n", "readerr: unknown key. Did you mean 'reader'?"),
        (BASE.replace("limit: 3", "limt: 3"), "dataset.limt: unknown key. Did you mean 'limit'?"),
        (
            BASE.replace("identity", "identiy"),
            "settings[0].compressor: unknown compressor 'identiy'. Did you mean 'identity'?",
        ),
        (BASE.replace("[50, 0.5]", "[-5]"), "settings[1].budgets"),
        (BASE.replace("[50, 0.5]", "[1.5]"), "a float is a fraction"),
        (BASE + "diagnostics: [answer_f2]\n", "Did you mean 'answer_f1'?"),
        (BASE.replace("name: t\n", ""), "name: required key is missing"),
        (BASE + "  - {compressor: naive, budgets: [50]}\n", "duplicate setting names ['naive@50']"),
        ("name: [x\n", "line 2"),
        ("- a\n- b\n", "must be a YAML mapping"),
        (BASE + "judge: {threshold: 2}\n", "judge.threshold"),
        (
            BASE + "reader: {backend: extractiv}\n",
            "reader.backend: unknown reader 'extractiv'. Did you mean 'extractive'?",
        ),
    ],
)
def test_bad_suites_name_field_and_fix(tmp_path, text, message):
    with pytest.raises(SuiteError) as err:
        load_suite(write(tmp_path, text))
    assert message in str(err.value)
    assert "s.yaml" in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(SuiteError, match="not found"):
        load_suite(tmp_path / "nope.yaml")


def test_include_overrides_only_what_differs(tmp_path):
    write(tmp_path, BASE + "judge: {spec: lexical, threshold: 0.4}\nseed: 3\n", "base.yaml")
    child = write(tmp_path, "include: base.yaml\nname: child\njudge: {threshold: 0.7}\n", "child.yaml")
    suite = load_suite(child)
    assert suite.name == "child" and suite.seed == 3
    assert (suite.judge.spec, suite.judge.threshold) == ("lexical", 0.7)
    assert suite.setting_names() == ["identity", "naive@50", "naive@0.5"]


def test_include_cycle_is_an_error(tmp_path):
    write(tmp_path, "include: b.yaml\n", "a.yaml")
    write(tmp_path, "include: a.yaml\n", "b.yaml")
    with pytest.raises(SuiteError, match="include cycle"):
        load_suite(tmp_path / "a.yaml")


def test_overrides_and_hash(tmp_path):
    p = write(tmp_path, BASE)
    a, b = load_suite(p), load_suite(p, **{"judge.spec": "other"})
    assert b.judge.spec == "other"
    assert suite_hash(a) != suite_hash(b)
    assert suite_hash(a) == suite_hash(load_suite(p))


def test_validate_command(tmp_path):
    ok = CliRunner().invoke(main, ["validate", str(write(tmp_path, BASE))])
    assert ok.exit_code == 0 and "naive@0.5" in ok.output
    bad = CliRunner().invoke(main, ["validate", str(write(tmp_path, BASE + "x: 1\n", "b.yaml"))])
    assert bad.exit_code != 0 and "x: unknown key" in bad.output


def test_shipped_suite_by_name(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert load_suite("demo").name == "demo"
    assert load_suite("musique").dataset.name == "musique"  # its include: resolves beside the shipped file
    with pytest.raises(SuiteError, match="Did you mean 'demo'"):
        load_suite("dem")
