"""The one run engine (rageval.run): every command on one RunDir, rescore and audit on suite and score runs alike,
0.1.0 run directories migrated or refused in one line, and the engine importing no front-end."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.rundir.manifest import FORMAT, RunDir, RunDirError, migrate

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "src" / "rageval" / "data" / "samples" / "score" / "example.jsonl"
OLD = ROOT / "tests" / "fixtures" / "run-0.1.0"
SRC = ROOT / "src" / "rageval"

TINY = """
name: tiny
dataset: {name: hotpotqa, limit: 2}
retrieval: {method: bm25, k: 3}
settings:
  - {compressor: identity}
  - {compressor: naive, budgets: [96]}
reader: {backend: extractive}
judge: {spec: lexical}
contrasts: [{vs: identity}]
output_dir: runs/tiny
"""


def _cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def score_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("score") / "run"
    res = _cli("score", str(EXAMPLE), "--out", str(out), "--no-progress", "--no-report")
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("suite")
    (d / "tiny.yaml").write_text(TINY, encoding="utf-8")
    out = d / "run"
    res = _cli("suite", str(d / "tiny.yaml"), "--out", str(out), "--no-progress")
    assert res.exit_code == 0, res.output
    return out


# -- one manifest ------------------------------------------------------------------------------------------------


def test_suite_and_score_runs_write_the_same_manifest_shape(suite_run, score_run):
    suite_m, score_m = RunDir(suite_run).read_manifest(), RunDir(score_run).read_manifest()
    assert suite_m.format == score_m.format == FORMAT
    assert (suite_m.origin.kind, suite_m.origin.name) == ("suite", "tiny")
    assert (score_m.origin.kind, score_m.origin.name) == ("score", "score")
    # the scoring options every later command reads, the same fields for both kinds of run
    assert suite_m.scoring.judge.spec == score_m.scoring.judge.spec == "lexical"
    assert suite_m.scoring.citations.model_dump() == {"mode": "default", "max_citations": 3}
    assert score_m.scoring.citations.model_dump() == {"mode": "default", "max_citations": 3}
    assert [s.name for s in suite_m.suite.settings] == ["identity", "naive@96"]
    assert [s.name for s in score_m.suite.settings] == ["baseline", "reranked"]
    for run in (suite_run, score_run):
        stats = json.loads((run / "run_stats.json").read_text(encoding="utf-8"))
        assert set(stats) >= {"records_reused", "records_computed", "status_counts", "judge"}


# -- rescore and audit on both kinds of run ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["suite", "score"])
def test_rescore_with_the_runs_own_judge_reproduces_every_record(kind, suite_run, score_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(suite_run if kind == "suite" else score_run, run)
    res = _cli("rescore", str(run))
    assert res.exit_code == 0, res.output
    before, after = _records(run / "records.jsonl"), _records(run / "rescore-lexical" / "records.jsonl")
    assert [(r["question_id"], r["setting"]["name"]) for r in after] == [
        (r["question_id"], r["setting"]["name"]) for r in before
    ]
    assert [r["metrics"] for r in after] == [r["metrics"] for r in before]  # same judge, same numbers
    m = RunDir(run / "rescore-lexical").read_manifest()
    assert m.origin.kind == "rescore" and m.origin.of_run == str(run.resolve())
    assert m.model_extra["rescore"]["of_origin"] == kind
    assert (run / "rescore-lexical" / "report.html").is_file()
    # the run itself is untouched; rescoring twice makes no judge call (the run's judge cache)
    again = _cli("rescore", str(run))
    assert again.exit_code == 0, again.output
    stats = json.loads((run / "rescore-lexical" / "run_stats.json").read_text(encoding="utf-8"))
    assert stats["records_computed"] == 0 and stats["records_reused"] == len(before)


def test_audit_of_a_score_run_runs_clean(score_run, tmp_path):
    """The issue's case: `rageval score EXAMPLE --out R` then `rageval audit R --judge minilm`."""
    run = tmp_path / "run"
    shutil.copytree(score_run, run)
    res = CliRunner().invoke(main, ["audit", str(run), "--judge", "minilm", "--resamples", "200"])
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output and "validation error" not in res.output
    audit = json.loads((run / "audit-minilm" / "audit.json").read_text(encoding="utf-8"))
    assert audit["origin"] == "score" and audit["first_judge"]["spec"] == "lexical"
    assert audit["settings"] == ["baseline", "reranked"] and audit["n_records"] == 12


def test_audit_of_a_suite_run(suite_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(suite_run, run)
    res = CliRunner().invoke(main, ["audit", str(run), "--judge", "minilm", "--resamples", "200"])
    assert res.exit_code == 0, res.output
    audit = json.loads((run / "audit-minilm" / "audit.json").read_text(encoding="utf-8"))
    assert audit["origin"] == "suite" and audit["suite"] == "tiny" and audit["n_records"] == 4


# -- 0.1.0 run directories ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["suite", "score"])
def test_a_0_1_0_run_directory_is_migrated(kind, tmp_path):
    run = tmp_path / kind
    shutil.copytree(OLD / kind, run)
    raw = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert "format" not in raw and "scoring" not in raw  # as 0.1.0 wrote it
    m = RunDir(run).read_manifest()
    assert m.format == FORMAT and m.origin.kind == kind
    assert m.scoring.judge.spec == "lexical" and m.scoring.judge.threshold == 0.5
    assert m.scoring.citations.model_dump() == {"mode": "default", "max_citations": 3}
    # the report, rescore and audit all read it
    for args in (["report", str(run)], ["rescore", str(run)]):
        res = _cli(*args)
        assert res.exit_code == 0, res.output
    # every 0.1.0 value is reproduced: 0.1.0's answer_in_context (inside one unit) is answer_in_context 2.0.0's
    # answer_in_context_unit; the rescore adds the packed context's answer_in_context beside it
    rescored = _records(run / "rescore-lexical" / "records.jsonl")
    for r in rescored:
        m = r["metrics"]
        if "answer_in_context_unit" in m:
            m["answer_in_context"] = m.pop("answer_in_context_unit")
        r.pop("digest")  # today's records carry a digest (format 3); 0.1.0's none
    assert rescored == _records(run / "records.jsonl")
    res = CliRunner().invoke(main, ["audit", str(run), "--judge", "minilm", "--resamples", "100"])
    assert res.exit_code == 0, res.output


def test_migrate_by_hand():
    old = {
        "suite": {
            "name": "s",
            "hash": "h",
            "settings": [{"name": "identity"}, {"name": "mine"}],
            "diagnostics": ["answer_f1"],
            "config": {
                "judge": {"spec": "nli:/m", "threshold": 0.7, "params": {"max_length": 256}},
                "citations": {"mode": "alce", "max_citations": 2},
                "retrieval": {"k": 4},
                "tokenizer": "whitespace",
                "reader": {"template": None},
                "settings": [{"name": "mine", "compressor": "given", "reader": {"template": {"unit": "{text}"}}}],
            },
        }
    }
    new = migrate(old, "m.json")
    assert new["format"] == FORMAT
    assert new["origin"] == {"kind": "suite", "name": "s", "hash": "h"}
    sc = new["scoring"]
    assert sc["judge"] == {"spec": "nli:/m", "threshold": 0.7, "params": {"max_length": 256}}
    assert sc["citations"] == {"mode": "alce", "max_citations": 2}
    assert (sc["retrieval_k"], sc["tokenizer"]) == (4, "whitespace")
    assert sc["templates"] == {"mine": {"unit": "{text}"}}  # the setting's own reader's template; identity: default
    score = migrate(
        {
            "suite": {
                "name": "score",
                "hash": "x",
                "diagnostics": ["a", "b"],
                "config": {"judge": "minilm", "threshold": 0.4, "citations": "alce"},
            },
            "score": {"diagnostics_per_setting": {"s1": ["a", "b"], "s2": ["a"]}},
        },
        "m.json",
    )
    assert score["origin"]["kind"] == "score"
    assert score["scoring"]["judge"] == {"spec": "minilm", "threshold": 0.4, "params": {}}
    assert score["scoring"]["citations"]["mode"] == "alce"
    assert score["scoring"]["diagnostics"] == {"s2": ["a"]}  # only where a setting differs from the run's


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"format": 99, "suite": {"name": "x"}}', "written by a newer rageval"),
        ('{"format": "two", "suite": {"name": "x"}}', "unknown run-directory format"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"suite": "nope"}', "'suite' must be an object"),
        ("{not json", "not valid JSON"),
        (b"\xff\xfe", "not valid JSON"),
    ],
)
@pytest.mark.parametrize("command", ["rescore", "audit", "report"])
def test_an_unusable_manifest_is_one_line_never_a_traceback(content, words, command, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    data = content if isinstance(content, bytes) else content.encode()
    (run / "manifest.json").write_bytes(data)
    (run / "records.jsonl").write_text("", encoding="utf-8")
    args = [command, str(run)] + (["--judge", "minilm"] if command == "audit" else [])
    res = CliRunner().invoke(main, args)
    assert res.exit_code in (1, 2), res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    err = res.output.strip().splitlines()
    assert len(err) == 1 and words in err[0], res.output


@pytest.mark.parametrize(
    ("content", "words"),
    [('{"suite": {"settings": []}}', "(no suite name)"), ('{"format": 2, "suite": {"name": "x"}}', "(no origin")],
)
@pytest.mark.parametrize("command", ["rescore", "audit"])
def test_a_manifest_that_names_no_run_is_refused_by_rescore_and_audit(command, content, words, tmp_path):
    """The report reads a hand-made manifest (settings from the records); rescore and audit need a run's."""
    (tmp_path / "manifest.json").write_text(content, encoding="utf-8")
    (tmp_path / "records.jsonl").write_text("", encoding="utf-8")
    args = [command, str(tmp_path)] + (["--judge", "minilm"] if command == "audit" else [])
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2 and "not a rageval run manifest " + words in res.output, res.output


def test_rundir_read_manifest_raises_rundirerror(tmp_path):
    with pytest.raises(RunDirError, match="is missing"):
        RunDir(tmp_path).read_manifest()


# -- the given source: a suite reading a rageval score file ------------------------------------------------------


def test_a_given_setting_takes_units_and_answers_from_the_dataset_read_once(tmp_path, monkeypatch):
    import rageval.data.formats.suite_data as sd

    shutil.copy(EXAMPLE, tmp_path / "outputs.jsonl")
    (tmp_path / "s.yaml").write_text(
        "name: mine\n"
        "dataset: {format: generic, path: outputs.jsonl}\n"
        "settings:\n"
        "  - {name: base, compressor: given, params: {system: baseline}, "
        f"reader: {{backend: saved, params: {{path: {tmp_path / 'outputs.jsonl'}, format: generic, system: baseline}}}}}}\n"
        "  - {compressor: identity}\n"
        "reader: {backend: extractive}\n"
        "judge: {spec: lexical}\n",
        encoding="utf-8",
    )
    from rageval.suite.load import load_suite
    from rageval.suite.run import run_suite

    suite = load_suite(tmp_path / "s.yaml")  # validation builds the saved reader once, to check its options
    calls = []
    real = sd.read_input
    monkeypatch.setattr(sd, "read_input", lambda *a, **k: calls.append(a) or real(*a, **k))
    result = run_suite(suite, tmp_path / "run", progress=False, build_report=False)
    assert result.status_counts == {"ok": 12}
    assert len(calls) == 1  # the run reads the dataset file once: the saved reader does not read it again
    recs = [r for r in _records(tmp_path / "run" / "records.jsonl") if r["setting"]["name"] == "base"]
    lines = [json.loads(x) for x in EXAMPLE.read_text(encoding="utf-8").splitlines() if x.strip()]
    given = {x["id"]: x for x in lines if x["system"] == "baseline"}
    assert len(recs) == len(given) == 6
    for r in recs:
        line = given[r["question_id"]]
        assert r["status"] == "ok"
        assert r["answer"]["text"] == line["answer"]  # the file's answer, not a reader's
        assert [u["text"] for u in r["context"]["units"]] == [u["text"] for u in line["units"]]


# -- structure ---------------------------------------------------------------------------------------------------


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_the_engine_imports_no_front_end():
    front = ("rageval.suite", "rageval.score", "rageval.audit", "rageval.report", "rageval.cli")
    for f in sorted((SRC / "run").glob("*.py")):
        bad = sorted(m for m in _imports(f) if m.startswith(front))
        assert not bad, f"{f.name} imports {bad}"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("suite/checks.py", "rageval.suite.config"),
        ("suite/config.py", "rageval.suite.checks"),
        ("suite/config.py", "rageval.suite.plan"),
        ("suite/checks.py", "rageval.suite.plan"),
        ("suite/run.py", "rageval.run.scale"),
        ("run/scale.py", "rageval.suite.run"),
    ],
)
def test_no_import_cycle_left_in_the_front_end(a, b):
    """`suite/checks ⇄ config ⇄ plan` and `runner ⇄ scale` no longer import each other (one direction only)."""
    name = b.rsplit(".", 1)[1]
    other = (SRC / b.removeprefix("rageval.").replace(".", "/")).with_suffix(".py")
    mine = "rageval." + a.removesuffix(".py").replace("/", ".")
    forward = b in _imports(SRC / a)
    backward = other.is_file() and mine in _imports(other)
    assert not (forward and backward), f"{a} and {name} import each other"
    if a == "suite/config.py":
        assert not forward  # the schema imports neither the checks nor the planner


# -- a lock holder's forked children ------------------------------------------------------------------------------

_HOLDER = """
import sys, time
from concurrent.futures import ProcessPoolExecutor
import multiprocessing, os
from rageval.rundir.lock import OutDirLock, child_of_lock_holder

with OutDirLock(sys.argv[1], "test holder"):
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(1, mp_context=ctx, initializer=child_of_lock_holder, initargs=(os.getpid(),)) as pool:
        fut = pool.submit(time.sleep, 60)
        print(max(pool._processes), flush=True)  # the worker's pid
        time.sleep(60)
"""


def test_a_killed_lock_holder_leaves_no_child_holding_its_lock(tmp_path):
    """kill -9 of a process whose forked workers are busy (the report's figures): the directory is free again."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from rageval.rundir.lock import OutDirLock

    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        child = int(proc.stdout.readline())
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the forked worker outlived its killed parent")
        with OutDirLock(tmp_path, "after"):  # taken over: no process holds the flock any more
            pass
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_folder_named_like_a_shipped_suite_does_not_hide_it(tmp_path, monkeypatch):
    """`rageval suite demo --out demo` twice in one folder: the second `demo` is still the shipped suite."""
    from rageval.suite.config import SuiteError
    from rageval.suite.load import resolve_suite_path, shipped_suites

    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo").mkdir()
    assert resolve_suite_path("demo") == shipped_suites()["demo"]
    (tmp_path / "mine").mkdir()
    with pytest.raises(SuiteError, match="is a folder"):
        resolve_suite_path("mine")
    res = CliRunner().invoke(main, ["validate", "demo"])
    assert res.exit_code == 0, res.output


def test_suite_help_says_a_shipped_suite_is_named_by_its_name():
    res = CliRunner().invoke(main, ["suite", "--help"])
    assert res.exit_code == 0 and "name of a shipped suite ('rageval suite demo'" in " ".join(res.output.split())


# -- the public face ---------------------------------------------------------------------------------------------


def test_the_public_face_resolves_every_name_lazily():
    import subprocess
    import sys

    import rageval

    for name in rageval.__all__:
        assert getattr(rageval, name) is not None, name
    assert rageval.run_audit.__name__ == "run_audit" and rageval.get_compressor.__name__ == "get"
    import rageval.audit.run  # a subpackage imported after the face: the face's names still stand

    assert rageval.run_audit.__name__ == "run_audit" and callable(rageval.rescore)
    public = set(rageval.__all__)
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    packages |= {p.stem for p in SRC.glob("*.py")}
    assert not public & packages, f"public names that a submodule import would replace: {public & packages}"
    with pytest.raises(AttributeError):
        rageval.not_a_name  # noqa: B018
    code = "import rageval, sys; print(sorted(m for m in ('torch', 'transformers', 'evaluate', 'matplotlib') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"  # importing the package imports none of them
