"""The CLI's error policy, per category of user-caused error: one line, the documented exit code, no traceback.

Each category below is one mechanism (docs/suites.md#errors-and-exit-codes), tested on several cases, some of
them not in any report: a score format read by a suite, seeds, replicate counts, output paths, include links,
thresholds, and the YAML number forms YAML 1.1 reads differently from every other reader.  (sqlite errors of
the judge cache: tests/test_cache_faults.py; error classes without a policy: tests/test_cli_errors.py.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rageval.cli import main
from rageval.suite.load import load_suite
from rageval.suite.yamlsafe import YamlError, load_yaml_text

LINE = {"id": "q1", "question": "Capital of France?", "answer": "Paris [1].", "contexts": ["Paris is in France."]}


def invoke(args, **kw):
    return CliRunner().invoke(main, [str(a) for a in args], **kw)


def one_line_error(res, code: int, *needles: str) -> str:
    """The command failed with ``code`` and printed one ``Error:`` line holding every needle, no traceback."""
    assert res.exit_code == code, (res.exit_code, res.output, res.exception)
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    errors = [x for x in res.output.splitlines() if x.startswith("Error:")]
    assert len(errors) == 1, res.output
    for n in needles:
        assert n in res.output, res.output
    return errors[0]


def score_input(tmp_path: Path, rows=(LINE,), name="in.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


@pytest.fixture(scope="module")
def score_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("run")
    out = tmp / "out"
    res = invoke(["score", score_input(tmp), "--out", out, "--no-progress", "--resamples", "100"])
    assert res.exit_code == 0, res.output
    return out


def suite_file(tmp_path: Path, extra: str = "", name: str = "s.yaml", **fields: str) -> Path:
    body = {
        "name": "e",
        "dataset": "{name: hotpotqa, limit: 2}",
        "settings": "[{compressor: identity}]",
        "reader": "{backend: extractive}",
        "output_dir": f"'{tmp_path / 'out'}'",
        **fields,
    }
    p = tmp_path / name
    p.write_text("".join(f"{k}: {v}\n" for k, v in body.items()) + extra)
    return p


# -- a score format read by a suite: its input errors are user errors ------------------------------------------

BAD_SCORE_LINES = {
    "unknown field": ('{"id": "q1", "question": "x", "answer": "a", "bogus": 1}\n', "unknown field 'bogus'"),
    "not JSON": ('{"id": "q1", "question": "x"\n', "line 1"),
    "missing answer": ('{"id": "q1", "question": "x"}\n', "answer"),
    "a list, not an object": ("[1, 2]\n", "expected a JSON object"),
}


@pytest.mark.parametrize("case", sorted(BAD_SCORE_LINES))
def test_a_suite_reading_a_bad_score_file_is_one_line(tmp_path, case):
    text, needle = BAD_SCORE_LINES[case]
    (tmp_path / "data.jsonl").write_text(text)
    answers = score_input(tmp_path, name="answers.jsonl")
    reader = (
        f"{{name: mine, compressor: given, reader: {{backend: saved, params: {{path: '{answers}', format: generic}}}}}}"
    )
    p = suite_file(tmp_path, dataset="{format: generic, path: data.jsonl}", settings=f"[{reader}]")
    one_line_error(invoke(["suite", p, "--no-progress"]), 2, needle)


# -- seeds: a whole number from 0 to 2**63 - 1, everywhere ------------------------------------------------------

BAD_SEEDS = ["-1", "-9999999999", str(2**63), "9" * 40]


@pytest.mark.parametrize("seed", BAD_SEEDS)
@pytest.mark.parametrize("command", ["score", "report", "audit"])
def test_a_bad_seed_is_refused_before_any_work(tmp_path, score_run, command, seed):
    args = {
        "score": ["score", score_input(tmp_path), "--out", tmp_path / "o"],
        "report": ["report", score_run],
        "audit": ["audit", score_run, "--judge", "nli:/nowhere"],
    }[command]
    one_line_error(invoke([*args, "--seed", seed]), 2, "--seed", "whole number from 0 to")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("seed", ["-1", str(2**63), "1.5", "'3'", "true"])
def test_a_bad_suite_seed_fails_validation(tmp_path, seed):
    p = suite_file(tmp_path, seed=seed)
    one_line_error(invoke(["validate", p]), 2, "seed")


def test_the_largest_seed_runs(tmp_path):
    out = tmp_path / "o"
    res = invoke(["score", score_input(tmp_path), "--out", out, "--seed", str(2**63 - 1), "--resamples", "50"])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "manifest.json").read_text())["suite"]["seed"] == 2**63 - 1


# -- replicate counts: bounded, whatever the spelling ----------------------------------------------------------

BAD_RESAMPLES = ["1000000000", "1e9", "0", "-5", "9" * 5000, "١٢", "1000001", "auto-ish"]


@pytest.mark.parametrize("value", BAD_RESAMPLES)
@pytest.mark.parametrize("command", ["score", "report"])
def test_a_replicate_count_past_the_cap_or_malformed_is_refused(tmp_path, score_run, command, value):
    args = ["score", score_input(tmp_path), "--out", tmp_path / "o"] if command == "score" else ["report", score_run]
    one_line_error(invoke([*args, "--resamples", value]), 2, "--resamples")


@pytest.mark.parametrize("value", ["1000000000", "0", "'1e9'"])
def test_a_bad_suite_resamples_fails_validation(tmp_path, value):
    p = suite_file(tmp_path, statistics=f"{{resamples: {value}}}")
    one_line_error(invoke(["validate", p]), 2, "resamples")


# -- output paths: never empty, no control character, ~ is the home folder -------------------------------------

BAD_OUT = ["", "   ", "a\nb", "a\tb", "a\x7fb", "runs/\x1b[31mred"]


@pytest.mark.parametrize("out", BAD_OUT)
@pytest.mark.parametrize("command", ["score", "suite", "report"])
def test_a_bad_out_is_refused_and_nothing_is_written(tmp_path, score_run, command, out, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = {
        "score": ["score", score_input(tmp_path)],
        "suite": ["suite", suite_file(tmp_path), "--no-progress"],
        "report": ["report", score_run],
    }[command]
    before = sorted(os.listdir(tmp_path))
    one_line_error(invoke([*args, "--out", out]), 2, "--out")
    assert sorted(os.listdir(tmp_path)) == before  # nothing written into the current folder


@pytest.mark.parametrize("out", ['"a\\0b"', '"a\\nb"', '"\\u0007bell"'])
def test_a_suite_output_dir_with_a_control_character_fails_validation(tmp_path, out):
    one_line_error(invoke(["validate", suite_file(tmp_path, output_dir=out)]), 2, "control character")


def test_a_tilde_output_dir_is_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    p = suite_file(tmp_path, output_dir="~/runs/x", settings="[{compressor: identity}]")
    res = invoke(["suite", p, "--no-progress"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "home" / "runs" / "x" / "records.jsonl").is_file()
    assert not (tmp_path / "~").exists()


# -- include: links and names that cannot be followed ----------------------------------------------------------


def test_include_symlink_loops_are_one_line(tmp_path):
    (tmp_path / "a.yaml").symlink_to(tmp_path / "b.yaml")
    (tmp_path / "b.yaml").symlink_to(tmp_path / "a.yaml")
    (tmp_path / "self.yaml").symlink_to(tmp_path / "self.yaml")
    for target in ("a.yaml", "self.yaml"):
        p = suite_file(tmp_path, extra=f"include: {target}\n", name=f"inc-{target}")
        one_line_error(invoke(["validate", p]), 2, "symbolic-link loop", target)
    one_line_error(invoke(["validate", tmp_path / "a.yaml"]), 2, "symbolic-link loop")


@pytest.mark.parametrize("include", ['"a\\0b.yaml"', "/"])
def test_include_of_an_unusable_name_is_one_line(tmp_path, include):
    p = suite_file(tmp_path, extra=f"include: {include}\n")
    one_line_error(invoke(["validate", p]), 2)


# -- thresholds: a number in [0, 1]; NaN is no number --------------------------------------------------------

BAD_THRESHOLDS = ["nan", "NaN", "inf", "-inf", "-0.1", "1.5", "half"]


@pytest.mark.parametrize("value", BAD_THRESHOLDS)
@pytest.mark.parametrize("command", ["score", "audit", "calibrate"])
def test_a_bad_threshold_is_refused(tmp_path, score_run, command, value):
    args = {
        "score": ["score", score_input(tmp_path), "--out", tmp_path / "o"],
        "audit": ["audit", score_run, "--judge", "nli:/nowhere"],
        "calibrate": ["calibrate", "--judge", "lexical"],
    }[command]
    one_line_error(invoke([*args, "--threshold", value]), 2, "--threshold")
    assert not (tmp_path / "o").exists()


# -- YAML 1.1 number forms ---------------------------------------------------------------------------------------

YAML_FORMS = {
    "1:30": "base-60",
    "-1:30.5": "base-60",
    "012": "leading zero",
    "0777": "leading zero",
    "9" * 70: "more than 64 digits",
    "1" * 70 + ".5": "more than 64 digits",
}


@pytest.mark.parametrize("text", sorted(YAML_FORMS))
def test_yaml_1_1_number_forms_are_refused_with_the_fix(tmp_path, text):
    with pytest.raises(YamlError, match=YAML_FORMS[text]):
        load_yaml_text(f"k: {text}\n")
    p = suite_file(tmp_path, retrieval=f"{{method: bm25, k: {text}}}")
    one_line_error(invoke(["validate", p]), 2, YAML_FORMS[text])


@pytest.mark.parametrize("text", ['"1:30"', "'012'", "12", "0", "0.5", "1_000", "0x1F", "-3"])
def test_unambiguous_numbers_and_quoted_text_still_read(text):
    assert load_yaml_text(f"k: {text}\n")["k"] in (
        "1:30",
        "012",
        12,
        0,
        0.5,
        1000,
        31,
        -3,
    )


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(st.lists(st.integers(0, 59), min_size=2, max_size=4))
def test_any_base_60_form_is_refused_never_read_as_a_number(parts):
    """PyYAML reads ``a:b`` as base 60 when ``a`` has no leading zero; otherwise it is text.  Either way no
    suite value becomes a number the file does not show."""
    text = ":".join(str(p) for p in parts)
    try:
        got = load_yaml_text(f"budgets: [{text}]\n")
    except YamlError as err:
        assert "base-60" in str(err) and not text.startswith("0")
    else:
        assert got == {"budgets": [text]}


def test_a_sexagesimal_budget_never_reaches_the_suite(tmp_path):
    p = suite_file(tmp_path, settings="[{compressor: naive, budgets: [1:30]}]")
    with pytest.raises(Exception, match="base-60"):
        load_suite(p)
