"""One error policy for the CLI: a user error is one message (one line per problem) naming what, where and the fix,
exit 2 for the command, the suite or an input, 1 for a run that cannot go on, 130 when interrupted; --debug shows
the traceback; a programming error still fails loudly.  And: a suite that validates does not fail on its
configuration when it runs, and one that does not validate fails the same way before computing any record.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rageval.cli import main

ROOT = Path(__file__).resolve().parents[1]
BASE = """\
name: e
dataset: {name: hotpotqa, limit: 2}
retrieval: {method: bm25, k: 3}
settings:
  - {compressor: identity}
  - {compressor: naive, budgets: [60]}
reader: {backend: extractive}
judge: {spec: lexical}
diagnostics: [answer_f1, emitted_precision]
"""


def write(tmp_path: Path, text: str | bytes, name: str = "s.yaml") -> Path:
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)
    return p


def invoke(args):
    return CliRunner().invoke(main, [str(a) for a in args])


def check_handled(res, code: int, *needles: str) -> None:
    assert res.exit_code == code, (res.exit_code, res.output, res.exception)
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    for n in needles:
        assert n in res.output, res.output


# -- usage: the overrides are checked, never ignored ---------------------------------------------------

USAGE = [
    (["--judge", ""], "Invalid value for '--judge': is empty"),
    (["--judge", "  "], "Invalid value for '--judge': is empty"),
    (["--reader", ""], "Invalid value for '--reader': is empty"),
    (["--limit", "0"], "Invalid value for '--limit': 0 is not in the range x>=1"),
    (["--limit", "-3"], "Invalid value for '--limit'"),
    (["--limit", "two"], "Invalid value for '--limit'"),
    (["--retry"], "No such option '--retry'"),
]


@pytest.mark.parametrize("command", ["suite", "validate"])
@pytest.mark.parametrize("extra, message", USAGE, ids=[f"usage{i}" for i in range(len(USAGE))])
def test_overrides_are_checked_not_ignored(tmp_path, command, extra, message):
    res = invoke([command, write(tmp_path, BASE), *extra])
    check_handled(res, 2, message)
    assert not (tmp_path / "runs").exists()


def test_given_overrides_take_effect(tmp_path):
    res = invoke(["validate", write(tmp_path, BASE), "--limit", "1", "--judge", "lexcal"])
    check_handled(res, 2, "judge.spec: 'lexcal' is neither a judge name nor a local folder")
    res = invoke(["validate", write(tmp_path, BASE), "--limit", "1", "--reader", "saved"])
    check_handled(res, 2, "reader 'saved' needs 'path'")
    res = invoke(["validate", write(tmp_path, BASE), "--limit", "1"])
    check_handled(res, 0, "(1 questions)")


# -- configuration and inputs: exit 2, before anything runs ----------------------------------------------


def _bad_dataset(tmp_path: Path) -> str:
    (tmp_path / "bad.json").write_text('[{"_id": "a"}]')
    return BASE.replace("{name: hotpotqa, limit: 2}", f"{{name: hotpotqa, path: {tmp_path / 'bad.json'}}}")


CONFIG = [
    (lambda t: BASE.replace("[60]", "[true]"), "settings[1].budgets: budget True is not a number"),
    (lambda t: BASE + "name: f\n", "line 10, column 1: duplicate key 'name'"),
    (lambda t: BASE.replace("name: e", "name: caf\u00e9").encode("latin-1"), "not UTF-8 text"),
    (
        lambda t: (
            BASE
            + "x: &a [1, 2]\ny: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            + "".join(
                f"z{i}: &c{i} [" + ", ".join([f"*{'b' if i == 0 else f'c{i - 1}'}"] * 10) + "]\n" for i in range(6)
            )
        ),
        "expand to more than",
    ),
    (
        lambda t: BASE.replace("{spec: lexical}", "{spec: lexical, params: {foo: 1}}"),
        "judge.params.foo: unknown judge option",
    ),
    (lambda t: BASE + "tokenizer: no-such-tok\n", "tokenizer: 'no-such-tok' cannot be loaded"),
    (lambda t: BASE + "contrasts: [{vs: nonexistent}]\n", "Unknown setting 'nonexistent' in contrasts[0].vs"),
    (
        lambda t: (
            BASE.replace("diagnostics: [answer_f1, emitted_precision]", "diagnostics: auto")
            + "contrasts: [{vs: identity, metrics: [evidence_f1]}]\n"
        ),
        "contrasts: Unknown metric 'evidence_f1'",
    ),
    (_bad_dataset, "bad.json: record 0"),
    (lambda t: BASE.replace("limit: 2", "limit: 2, sample: qasper_intct"), "no shipped sample 'qasper_intct'"),
    (
        lambda t: BASE.replace("reader: {backend: extractive}", "reader: {backend: extractive, params: {x: 1}}"),
        "reader.params.x: unknown option",
    ),
]


def _data_file(tmp_path: Path, name: str, raw: bytes) -> Path:
    (tmp_path / name).write_bytes(raw)
    return tmp_path / name


CONFIG += [
    (
        lambda t: BASE.replace(
            "{name: hotpotqa, limit: 2}", f"{{name: hotpotqa, path: {_data_file(t, 'e.jsonl', b'')}}}"
        ),
        "e.jsonl holds no question to run",
    ),
    (
        lambda t: BASE.replace(
            "{name: hotpotqa, limit: 2}",
            f"{{name: hotpotqa, path: {_data_file(t, 'b.jsonl', b'{}' + bytes([10, 255]))}}}",
        ),
        "b.jsonl: line 2: not UTF-8 text (byte 0xff at offset 3)",
    ),
    (
        lambda t: BASE.replace(
            "{backend: extractive}", f"{{backend: saved, params: {{path: {_data_file(t, 'a.jsonl', bytes([255]))}}}}}"
        ),
        "a.jsonl line 1: not UTF-8 text",
    ),
    (
        lambda t: BASE.replace("{spec: lexical}", f"{{spec: 'replay:{_data_file(t, 'r.jsonl', bytes([255]))}'}}"),
        "replay judge file",
    ),
    (lambda t: BASE.replace("{name: hotpotqa, limit: 2}", "{name: musique, sample: asqa, limit: 2}"), "record 0"),
]


@pytest.mark.parametrize("make, message", CONFIG, ids=[f"config{i}" for i in range(len(CONFIG))])
def test_configuration_errors_exit_2_at_validate_and_before_any_record(tmp_path, make, message):
    suite = write(tmp_path, make(tmp_path))
    check_handled(invoke(["validate", suite]), 2, message)
    out = tmp_path / "out"
    check_handled(invoke(["suite", suite, "--out", out, "--no-progress"]), 2, message)
    assert not (out / "cache" / "store").exists() and not (out / "records.jsonl").exists()


def test_a_missing_suite_and_a_non_run_directory(tmp_path):
    check_handled(invoke(["validate", tmp_path / "nope.yaml"]), 2, "suite file not found")
    readme_path = invoke(["validate", tmp_path / "suites" / "demo.yaml"])  # the README's path, outside the checkout
    check_handled(readme_path, 2, "suite file not found", "rageval suite demo")  # the shipped one named
    assert "rageval suite" not in invoke(["validate", tmp_path / "nope.yaml"]).output
    check_handled(invoke(["suite", "dem"]), 2, "Did you mean 'demo'?")
    check_handled(invoke(["report", tmp_path]), 2, "records.jsonl is missing: run the command that writes it first")
    check_handled(invoke(["rescore", tmp_path]), 2, "manifest.json is missing")
    check_handled(invoke(["report", tmp_path / "nope"]), 2, "does not exist")


def test_an_output_directory_that_is_a_file(tmp_path):
    (tmp_path / "taken").write_text("x")
    suite = write(tmp_path, BASE + f"output_dir: {tmp_path / 'taken'}\n")
    check_handled(invoke(["validate", suite]), 2, "output_dir:", "is a file; give a folder")
    check_handled(invoke(["suite", suite, "--no-progress"]), 2, "output directory", "is a file; choose another --out")
    check_handled(invoke(["suite", suite, "--no-progress", "--out", tmp_path / "taken"]), 2, "is a file")
    res = invoke(["suite", suite, "--no-progress", "--out", tmp_path / "o"])  # --out wins over output_dir
    check_handled(res, 0)


def test_an_out_dir_of_another_suite(tmp_path):
    out = tmp_path / "out"
    assert invoke(["suite", write(tmp_path, BASE), "--out", out, "--no-progress"]).exit_code == 0
    other = write(tmp_path, BASE.replace("name: e", "name: other"), "o.yaml")
    check_handled(invoke(["suite", other, "--out", out, "--no-progress"]), 2, "holds a run of suite 'e'")


# -- run failures: exit 1 with the fix ---------------------------------------------------------------------


def test_missing_weights_exit_1_with_the_offline_fix(tmp_path):
    text = BASE.replace("{spec: lexical}", "{spec: 'nli:/no/such/model'}")
    res = invoke(["validate", write(tmp_path, text)])
    check_handled(res, 1, "nli:/no/such/model (judge.spec): no such folder", "--judge lexical --reader extractive")
    res = invoke(["suite", write(tmp_path, text), "--out", tmp_path / "o", "--no-progress"])
    check_handled(res, 1, "--judge lexical --reader extractive", "--allow-unavailable")
    assert len(res.output.strip().splitlines()) == 1
    lines = BASE.splitlines(keepends=True)
    comp = "".join(lines[:6]) + "  - {compressor: abstractive, budgets: [0.5], params: {model: /no/recomp}}\n"
    comp += "".join(lines[6:])
    check_handled(invoke(["validate", write(tmp_path, comp, "c.yaml")]), 1, "/no/recomp (setting abstractive@0.5)")
    check_handled(invoke(["validate", write(tmp_path, comp, "c.yaml"), "--allow-unavailable"]), 0, "NOT AVAILABLE")


def test_a_local_model_folder_is_found_without_loading_it(tmp_path):
    model = tmp_path / "tiny-nli"
    model.mkdir()
    (model / "config.json").write_text("{}")  # not loadable: validate only looks it up
    text = BASE.replace("{spec: lexical}", f"{{spec: 'nli:{model}'}}")
    res = invoke(["validate", write(tmp_path, text)])
    check_handled(res, 0, f"model nli:{model} (judge.spec): found")


def test_interrupted_is_130(tmp_path, monkeypatch):
    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr("rageval.suite.run.run_suite", interrupted)
    res = invoke(["suite", write(tmp_path, BASE), "--out", tmp_path / "o", "--no-progress"])
    check_handled(res, 130, "interrupted; rerun the same command to resume")


def test_a_programming_error_is_not_dressed_as_a_user_error(tmp_path, monkeypatch):
    def bug(*a, **k):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("rageval.suite.run.run_suite", bug)
    res = invoke(["suite", write(tmp_path, BASE), "--out", tmp_path / "o", "--no-progress"])
    assert isinstance(res.exception, ZeroDivisionError)  # escapes: a traceback for the user to report


def test_a_click_exception_caused_by_a_config_error_gets_exit_2(tmp_path):
    # report wraps its errors in a ClickException: the cause decides the code
    (tmp_path / "records.jsonl").write_text("{}\n")
    (tmp_path / "manifest.json").write_text("{}\n")
    check_handled(invoke(["report", tmp_path]), 2, "records.jsonl line 1")


# -- real processes: stderr has one line, no traceback; --debug has the traceback ----------------------------


def _cli(*args, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run(
        [sys.executable, "-m", "rageval.cli", *map(str, args)], check=False, capture_output=True, text=True, env=env
    )


def test_in_a_real_process_and_with_debug(tmp_path):
    bad = write(tmp_path, BASE.replace("[60]", "[true]"))
    plain = _cli("validate", bad)
    assert plain.returncode == 2 and "Traceback" not in plain.stderr
    assert plain.stderr.startswith("Error: ") and "budget True is not a number" in plain.stderr
    debug = _cli("--debug", "validate", bad)
    assert debug.returncode == 1 and "Traceback (most recent call last)" in debug.stderr
    assert "SuiteError" in debug.stderr
    env = _cli("validate", bad, env_extra={"RAGEVAL_DEBUG": "1"})
    assert "Traceback (most recent call last)" in env.stderr


# -- property: validate ok => the run does not fail on its configuration ------------------------------------

_MUTATIONS = {
    "reader": st.sampled_from(
        [
            "{backend: extractive, params: {max_sentences: 1}}",
            "{backend: extractive, params: {max_sentences: 0}}",
            "{backend: extractive, params: {min_overlap: 2}}",
            "{backend: extractive, template: {instruction: 'Answer briefly.'}}",
            "{backend: extractive, template: {user: '{question}'}}",
            "{backend: extractive, template: {unit: 'Doc {k}: {text}', unit_no_title: 'Doc {k}: {text}'}}",
            "{backend: extractive, template: {unit: 'Doc {k}'}}",
            "{backend: saved}",
            "{backend: extractive, batch_size: 1}",
        ]
    ),
    "judge": st.sampled_from(
        [
            "{spec: lexical}",
            "{spec: lexical, threshold: 0.9}",
            "{spec: lexical, params: {batch_size: 2, max_length: 64}}",
            "{spec: lexical, params: {dtyp: bf16}}",
            "{spec: 'replay:missing.jsonl'}",
            "{spec: 'lexical:'}",
        ]
    ),
    "contrasts": st.sampled_from(
        [
            "[{vs: identity}]",
            "[{vs: identity, metrics: [answer_f1]}]",
            "[{vs: identity, metrics: [grounded_precision]}]",
            "[{a: naive@60, b: identity}]",
            "[{pairs: budget_steps}]",
            "[{gap: [emitted_precision, grounded_precision]}]",
            "{holm: family, families: {f: [{vs: identity}]}}",
        ]
    ),
    "tokenizer": st.sampled_from(["regex", "whitespace", "regx", "no-such-tok"]),
    "citations": st.sampled_from(["{mode: alce}", "{max_citations: 1}", "{max_citations: 0}", "{mode: ALCE}"]),
}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chosen=st.fixed_dictionaries({}, optional={k: v for k, v in _MUTATIONS.items()}))
def test_validate_ok_means_the_run_does_not_fail_on_its_configuration(tmp_path_factory, chosen):
    tmp = tmp_path_factory.mktemp("prop")
    text = BASE.replace("limit: 2", "limit: 1") + "".join(f"{k}: {v}\n" for k, v in chosen.items())
    text = text.replace("reader: {backend: extractive}\n", "") if "reader" in chosen else text
    text = text.replace("judge: {spec: lexical}\n", "") if "judge" in chosen else text
    suite = write(tmp, text)
    checked = invoke(["validate", suite])
    ran = invoke(["suite", suite, "--out", tmp / "out", "--no-progress"])
    assert checked.exit_code in (0, 2) and ran.exit_code == checked.exit_code, (text, checked.output, ran.output)
    for res in (checked, ran):
        assert res.exception is None or isinstance(res.exception, SystemExit), (text, res.exception)
    if checked.exit_code == 2:
        assert not (tmp / "out" / "cache" / "store").exists()


# -- the error policy covers every error class rageval defines --------------------------------------------------

#: public exception classes that never reach the CLI as themselves, with where they end
_INTERNAL = {
    "rageval.http.errors:HttpError": "a reader's or judge's request: a reader_error / judge_error record",
}


def _exception_classes():
    import importlib
    import inspect
    import pkgutil

    import rageval

    for info in pkgutil.walk_packages(rageval.__path__, "rageval."):
        try:
            mod = importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed here
            continue
        for name, obj in vars(mod).items():
            is_own_exception = inspect.isclass(obj) and issubclass(obj, Exception) and obj.__module__ == info.name
            if is_own_exception and not name.startswith("_") and not issubclass(obj, click.ClickException):
                yield f"{info.name}:{name}", obj


def test_every_public_error_class_is_a_user_error_or_named_internal():
    """A new error class must say how the CLI shows it: a USER_ERRORS entry (or a subclass of one), or _INTERNAL."""
    import importlib

    from rageval.cli import USER_ERRORS

    covered = []
    for target in USER_ERRORS:
        module, name = target.split(":")
        covered.append(getattr(importlib.import_module(module), name))
    found = dict(_exception_classes())
    assert len(found) > 20  # the walk found the package's classes
    loose = sorted(t for t, cls in found.items() if t not in _INTERNAL and not issubclass(cls, tuple(covered)))
    assert not loose, f"error classes the CLI would print as a traceback: {loose}"
    assert set(_INTERNAL) <= set(found)
