"""kill -9 loops (issue 22): a command killed while its forked figure workers draw leaves no worker alive, no lock
held and, after the next command, no temporary file; the rerun succeeds.  Each of report, score, suite and rescore
is killed several times at a random moment of its drawing (real subprocesses, real SIGKILL)."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rageval.score.cli import EXAMPLE
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite

pytestmark = pytest.mark.slow

SUITE = """\
name: kl
dataset: {name: hotpotqa, limit: 3}
retrieval: {method: bm25, k: 3}
settings:
  - {compressor: identity}
  - {compressor: naive, budgets: [20, 40, 80]}
reader: {backend: extractive}
judge: {spec: lexical}
diagnostics: [answer_f1, answer_in_context, emitted_precision, grounded_precision, retrieval_recall]
contrasts: [{vs: identity}]
seed: 0
"""
ROWS = (
    '{"id": "q1", "question": "Capital?", "answer": "Paris [1].", "contexts": ["Paris is in France."], '
    '"answers": ["Paris"]}\n{"id": "q2", "question": "Who?", "answer": "Shakespeare [1].", '
    '"contexts": ["Shakespeare wrote it."], "answers": ["Shakespeare"]}\n'
)
#: the figure files (report.html draws its own figures; only files are drawn by forked workers)
FILES = ["--figures", "png,svg"]
ENV = {**os.environ, "RAGEVAL_FIGURE_PROCESSES": "2"}  # forked workers even on a busy machine


def children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(entry))
    return out


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def cli(args: list) -> list[str]:
    return [sys.executable, "-m", "rageval.cli", *map(str, args)]


def kill_while_drawing(args: list, rng: random.Random) -> None:
    """Start the command, SIGKILL it once its figure workers exist (after a random pause), check that they die."""
    proc = subprocess.Popen(cli(args), env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 180
        workers: list[int] = []
        while not workers and proc.poll() is None and time.monotonic() < deadline:
            workers = children(proc.pid)
            time.sleep(0.005)
        assert workers, f"no figure worker was forked: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}"
        time.sleep(rng.uniform(0, 0.4))
        workers = children(proc.pid) or workers
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 15
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(w) for w in workers), "a figure worker outlived its killed parent"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def rerun(args: list, out: Path) -> None:
    res = subprocess.run(cli(args), env=ENV, capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode in (0, 3), res.stderr[-3000:]
    assert "in use by" not in res.stderr
    left = [p for p in out.rglob("*.tmp") if not p.name.startswith(".notes")]
    assert not left, left
    assert not (out / ".rageval.lock").exists()


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("kill")
    path = base / "s.yaml"
    path.write_text(SUITE)
    run_suite(load_suite(path), base / "run", progress=False)
    return path, base / "run"


def _fresh(suite_run, tmp_path: Path) -> tuple[Path, Path]:
    path, run = suite_run
    out = tmp_path / "run"
    shutil.copytree(run, out)
    return path, out


def _forget_figures(out: Path) -> None:
    (out / "cache" / "plots.json").unlink(missing_ok=True)  # the next report draws them again


def test_report_killed_while_drawing(suite_run, tmp_path):
    _, out = _fresh(suite_run, tmp_path)
    rng = random.Random(0)
    for _ in range(3):
        _forget_figures(out)
        kill_while_drawing(["report", out, *FILES], rng)
        rerun(["report", out, *FILES], out)


def test_suite_killed_while_drawing(suite_run, tmp_path):
    path, out = _fresh(suite_run, tmp_path)
    rng = random.Random(1)
    for _ in range(2):
        _forget_figures(out)
        kill_while_drawing(["suite", path, "--out", out, "--no-progress", *FILES], rng)
        rerun(["suite", path, "--out", out, "--no-progress", *FILES], out)


def test_rescore_killed_while_drawing(suite_run, tmp_path):
    _, out = _fresh(suite_run, tmp_path)
    rng = random.Random(2)
    for _ in range(2):
        _forget_figures(out / "rescore-lexical")
        kill_while_drawing(["rescore", out, *FILES], rng)
        rerun(["rescore", out, *FILES], out)


def test_score_killed_while_drawing(tmp_path):
    data = {}
    for name in ("a", "b", "c"):
        data[name] = tmp_path / f"{name}.jsonl"
        data[name].write_text(ROWS)
    out = tmp_path / "out"
    # the example's two systems differ in achieved ratio, so figures are drawn (identical files draw none: no axis varies)
    args = ["score", EXAMPLE, *data.values(), "--out", out, *FILES]
    rng = random.Random(3)
    for i in range(2):
        if i:
            _forget_figures(out)
        kill_while_drawing(args, rng)
        rerun(args, out)
