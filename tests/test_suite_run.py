"""End-to-end suite runs: outputs, statuses, resume after SIGKILL (byte-identical), rescore, bad input."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.rundir.manifest import RunDirError
from rageval.suite.config import SuiteError
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite

TINY = """\
name: tiny
dataset: {{name: hotpotqa, limit: {limit}}}
retrieval: {{method: bm25, k: 4}}
settings:
  - {{compressor: identity}}
  - {{compressor: naive, budgets: [60]}}
  - {{compressor: token_prune, budgets: [0.5]}}
reader: {{backend: {reader}{reader_params}}}
judge: {{spec: lexical}}
contrasts: [{{vs: identity}}]
output_dir: {out}
seed: 0
"""

COMPARED = None  # every file at the top of the run dir except run_stats.json (path-dependent counters)


def tiny(tmp_path, *, limit=3, reader="extractive", reader_params="", name="tiny.yaml", extra=""):
    p = tmp_path / name
    p.write_text(TINY.format(limit=limit, reader=reader, reader_params=reader_params, out=tmp_path / "out") + extra)
    return p


def _strip_counters(name: str, data: bytes) -> bytes:
    """report.html holds this invocation's cache counters between markers; everything else must match."""
    if name != "report.html":
        return data
    from rageval.report.html import RUN_COUNTERS_BEGIN, RUN_COUNTERS_END

    text = data.decode()
    a, b = text.index(RUN_COUNTERS_BEGIN), text.index(RUN_COUNTERS_END)
    return (text[:a] + text[b:]).encode()


def snapshot(run_dir: Path) -> dict[str, bytes]:
    """Every output file except run_stats.json (path-dependent counters), counters stripped from the HTML."""
    return {
        p.name: _strip_counters(p.name, p.read_bytes())
        for p in sorted(run_dir.iterdir())
        if p.is_file() and p.name not in ("run_stats.json", "rescore_stats.json")
    }


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ref")
    suite = load_suite(tiny(tmp))
    result = run_suite(suite, tmp / "ref", progress=False)
    return suite, result


def test_outputs_and_record_keys(reference_run):
    _suite, result = reference_run
    out = result.out_dir
    lines = (out / "records.jsonl").read_text().splitlines()
    assert len(lines) == 3 * 3 == result.n_records
    for line in lines:
        rec = json.loads(line)
        for key in ("question_id", "setting", "status", "context", "sources", "answer", "metrics"):
            assert key in rec
        assert set(rec["setting"]) >= {"name", "compressor", "budget"}
        assert set(rec["context"]) >= {"units", "budget_tokens", "achieved_tokens", "achieved_ratio"}
        assert rec["status"] == "ok"
    for name in ("summary.csv", "summary.md", "manifest.json", "contrasts.csv", "contrasts.md", "report.html"):
        assert (out / name).is_file(), name
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["suite"]["name"] == "tiny" and manifest["suite"]["seed"] == 0
    assert manifest["package"]["rageval"] and manifest["inputs"]["questions_hash"]
    assert manifest["inputs"]["template_hash"]


def test_token_prune_shows_emitted_grounded_gap(reference_run):
    _, result = reference_run
    recs = [json.loads(l) for l in (result.out_dir / "records.jsonl").read_text().splitlines()]
    pruned = [r for r in recs if r["setting"]["compressor"] == "token_prune"]
    assert all(u["source_ids"] is None for r in pruned for u in r["context"]["units"])
    assert all(
        r["metrics"]["unsupported_declared_span"] == 1.0
        for r in pruned
        if r["metrics"]["unsupported_declared_span"] is not None
    )
    ident = [r for r in recs if r["setting"]["compressor"] == "identity"]
    assert all(r["metrics"]["re_attributability"] is None for r in ident)  # nothing to re-attribute: undefined
    assert all("reattribution_sweep" in r["extra"] for r in pruned)


def test_rerun_reuses_every_record_and_calls_no_judge(reference_run):
    suite, result = reference_run
    before = snapshot(result.out_dir)
    again = run_suite(suite, result.out_dir, progress=False)
    assert again.reused == result.n_records and again.computed == 0
    stats = json.loads((result.out_dir / "run_stats.json").read_text())
    assert stats["judge"]["executed"] == 0
    assert snapshot(result.out_dir) == before


def _run_cli(suite_path, out, **kw):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [sys.executable, "-m", "rageval.cli", "suite", str(suite_path), "--out", str(out), "--no-progress"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        **kw,
    )


def test_sigkill_at_random_points_then_resume_is_byte_identical(reference_run, tmp_path):
    suite, ref = reference_run
    expected = snapshot(ref.out_dir)
    suite_path = Path(suite.source)
    rng = random.Random(1234)
    # the kills land within one whole run's time, measured here (a fixed range missed every run on a fast machine)
    start = time.monotonic()
    _run_cli(suite_path, tmp_path / "timing").wait(timeout=300)
    whole = time.monotonic() - start
    killed_mid_run = 0
    for trial in range(3):
        out = tmp_path / f"trial{trial}"
        # kill 1-3 times at random moments, each time after some records may have been written
        for _ in range(rng.randint(1, 3)):
            proc = _run_cli(suite_path, out)
            time.sleep(rng.uniform(0.3, 0.95) * whole)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                killed_mid_run += 1
            proc.wait(timeout=120)
        done = subprocess.run(
            [sys.executable, "-m", "rageval.cli", "suite", str(suite_path), "--out", str(out), "--no-progress"],
            check=False,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        got = snapshot(out)
        assert sorted(got) == sorted(expected)
        for name in expected:
            assert got[name] == expected[name], f"trial {trial}: {name} differs after resume"
    assert killed_mid_run >= 1, "no kill landed mid-run: the test did not exercise resume"


def test_output_dir_of_another_suite_is_refused(reference_run, tmp_path):
    _, ref = reference_run
    other = load_suite(tiny(tmp_path, name="other.yaml", extra="").with_name("other.yaml"))
    other = other.model_copy(update={"name": "other"})
    with pytest.raises(RunDirError, match="holds a run of suite 'tiny'"):
        run_suite(other, ref.out_dir, progress=False)


def test_saved_reader_missing_question_is_a_counted_status(tmp_path, reference_run):
    _, ref = reference_run
    recs = [json.loads(l) for l in (ref.out_dir / "records.jsonl").read_text().splitlines()]
    qids = sorted({r["question_id"] for r in recs})
    saved = tmp_path / "answers.jsonl"
    saved.write_text("".join(json.dumps({"question_id": q, "answer": "An answer [1]."}) + "\n" for q in qids[:-1]))
    suite = load_suite(tiny(tmp_path, reader="saved", reader_params=f", params: {{path: {saved}}}"))
    result = run_suite(suite, tmp_path / "saved_out", progress=False)
    assert result.status_counts == {"ok": 6, "reader_error": 3}
    failed = [json.loads(l) for l in (tmp_path / "saved_out" / "records.jsonl").read_text().splitlines()]
    failed = [r for r in failed if r["status"] != "ok"]
    assert {r["question_id"] for r in failed} == {qids[-1]}
    assert all(r["error"] and r["metrics"] == {} for r in failed)
    summary = (tmp_path / "saved_out" / "summary.md").read_text()
    assert "reader_error" in summary


def test_saved_reader_with_a_broken_line_names_file_and_line(tmp_path):
    saved = tmp_path / "answers.jsonl"
    saved.write_text('{"question_id": "a", "answer": "x"}\nnot json\n')
    with pytest.raises(SuiteError, match=r"reader.params: .*answers.jsonl line 2: not valid JSON"):
        load_suite(tiny(tmp_path, reader="saved", reader_params=f", params: {{path: {saved}}}"))  # at load, not mid-run


def test_missing_weights_abort_with_hint_or_become_unavailable(tmp_path):
    extra = "  - {compressor: abstractive, budgets: [0.5], params: {model: /nonexistent/recomp}}\n"
    text = TINY.format(limit=2, reader="extractive", reader_params="", out=tmp_path / "out")
    text = text.replace("reader:", extra + "reader:", 1)
    p = tmp_path / "s.yaml"
    p.write_text(text)
    res = CliRunner().invoke(main, ["suite", str(p), "--out", str(tmp_path / "a"), "--no-progress"])
    assert res.exit_code != 0
    assert "--judge lexical --reader extractive" in res.output and "--allow-unavailable" in res.output
    res = CliRunner().invoke(
        main, ["suite", str(p), "--out", str(tmp_path / "b"), "--no-progress", "--allow-unavailable"]
    )
    assert res.exit_code == 0, res.output
    recs = [json.loads(l) for l in (tmp_path / "b" / "records.jsonl").read_text().splitlines()]
    unavailable = [r for r in recs if r["status"] == "unavailable"]
    assert len(unavailable) == 2 and all(r["setting"]["compressor"] == "abstractive" for r in unavailable)


def test_duplicate_question_ids_are_an_error(tmp_path):
    from rageval.data import sample_path

    rows = json.loads(Path(sample_path("hotpotqa")).read_text())[:2]
    data = tmp_path / "dup.json"
    data.write_text(json.dumps([rows[0], rows[1], rows[0]]))
    p = tiny(tmp_path)
    p.write_text(p.read_text().replace("{name: hotpotqa, limit: 3}", f"{{name: hotpotqa, path: {data}}}"))
    with pytest.raises(ValueError, match=r"dup.json: question id '\w+' occurs twice"):
        run_suite(load_suite(p), tmp_path / "o", progress=False)


def test_rescore_recomputes_metrics_without_generation(reference_run, tmp_path):
    import shutil

    from rageval.rundir.records import record_text

    _, ref = reference_run
    run_dir = tmp_path / "copy"
    shutil.copytree(ref.out_dir, run_dir)
    records = run_dir / "records.jsonl"
    original = records.read_bytes()
    # blank every metric: rescore must recompute the same values from contexts and answers
    blanked = [json.loads(l) for l in original.decode().splitlines()]
    for r in blanked:
        r["metrics"] = {}
        del r["digest"]
    # re-digested (record_text), as a program writing records would: an edit rescore would refuse otherwise
    records.write_text("".join(record_text(r) + "\n" for r in blanked))
    res = CliRunner().invoke(main, ["rescore", str(run_dir)])
    assert res.exit_code == 0, res.output
    rescored = run_dir / "rescore-lexical"
    assert (rescored / "records.jsonl").read_bytes() == original
    assert [json.loads(l)["metrics"] for l in records.read_text().splitlines()] == [{}] * len(blanked)  # untouched
    stats = json.loads((rescored / "run_stats.json").read_text())
    assert stats["judge"]["executed"] == 0  # every judgement came from the run's cache


def test_rescore_of_a_non_run_directory(tmp_path):
    res = CliRunner().invoke(main, ["rescore", str(tmp_path)])
    assert res.exit_code != 0 and "manifest.json is missing" in res.output


SHIPPED = ["asqa", "qasper", "hotpotqa", "musique"]


@pytest.mark.parametrize("name", SHIPPED)
def test_paper_suites_run_offline_with_overrides(name, tmp_path):
    root = Path(__file__).resolve().parents[1]
    args = [
        "suite",
        str(root / "suites" / f"{name}.yaml"),
        "--out",
        str(tmp_path / name),
        "--limit",
        "1",
        "--judge",
        "lexical",
        "--reader",
        "extractive",
        "--allow-unavailable",
        "--no-progress",
    ]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    recs = [json.loads(l) for l in (tmp_path / name / "records.jsonl").read_text().splitlines()]
    statuses = {r["status"] for r in recs}
    assert statuses <= {"ok", "unavailable"} and "ok" in statuses
    for r in recs:
        if r["status"] == "unavailable":
            assert r["setting"]["compressor"] in ("abstractive", "token_prune") and "local" in r["error"]


def test_paper_suite_without_overrides_says_how_to_run_offline(tmp_path):
    root = Path(__file__).resolve().parents[1]
    res = CliRunner().invoke(
        main,
        ["suite", str(root / "suites" / "asqa.yaml"), "--out", str(tmp_path / "a"), "--limit", "1", "--no-progress"],
    )
    assert res.exit_code != 0
    assert "--judge lexical --reader extractive" in res.output


def test_runner_never_imports_evaluate(tmp_path):
    code = (
        "import sys\n"
        "from rageval.suite.load import load_suite\n"
        "from rageval.suite.run import run_suite\n"
        f"run_suite(load_suite({str(tiny(tmp_path, limit=1))!r}), {str(tmp_path / 'o')!r}, progress=False, build_report=False)\n"
        "print('evaluate' in sys.modules)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip().splitlines()[-1] == "False"
