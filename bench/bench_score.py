"""Benchmark: ``rageval score`` on 10,000 generic records with the lexical judge.

    .venv/bin/python bench/bench_score.py              # 10,000 records, one system
    .venv/bin/python bench/bench_score.py --records 2000

Writes a synthetic generic-layout file (5 contexts per question, a two-sentence
cited answer, short gold answers), then, each in a fresh process:

1. ``rageval score FILE --no-report`` (cold): records/s and peak memory (the
   child's max RSS); the time from launching the command to the first record
   on disk (the first pack under ``cache/records/``, written with the first batch), polled every 2 ms;
2. the same command again (every record reused from the cache);
3. the report alone (``rageval report``: statistics, tables, plots, HTML);
4. the baseline: the same inputs scored in-process by
   :func:`rageval.diagnostics.dispatch.score` alone (no parsing of the file, no
   cache, no records), so the ratio is what the command adds around scoring;
5. which heavy modules (torch, transformers, evaluate, datasets) are imported
   when the first record is finished (``score_files(on_record=...)``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = (
    "river city capital museum tower bridge painter novel planet island mountain king queen war treaty "
    "language festival harbour railway cathedral university century empire desert forest lake"
).split()


def make_file(path: Path, n: int, seed: int = 0, systems: int = 1) -> None:
    """``n`` generic-layout lines written one by one (never held): ``n // systems`` questions, each answered by
    ``systems`` systems (``system`` A, B, ...; one setting each) citing different contexts."""
    rng = random.Random(seed)
    with path.open("w") as fh:
        for i in range(n // systems):
            ctxs = [
                " ".join(rng.choice(WORDS) for _ in range(12))
                + ". "
                + " ".join(rng.choice(WORDS) for _ in range(12))
                + "."
                for _ in range(5)
            ]
            gold = rng.choice(WORDS)
            for k in range(systems):
                s1 = " ".join(ctxs[k % 5].split()[:6]).rstrip(".")
                s2 = " ".join(rng.choice(WORDS) for _ in range(6))
                row = {
                    "id": f"q{i}",
                    "question": f"Question {i} about the {gold}?",
                    "answer": f"{s1} [{k % 5 + 1}]. {s2} [2][3].",
                    "contexts": ctxs,
                    "answers": [gold],
                }
                if systems > 1:
                    row["system"] = chr(ord("A") + k)
                fh.write(json.dumps(row) + "\n")


def _run(cmd: list[str], first_record_dir: Path | None = None) -> dict:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    first = None
    if first_record_dir is not None:
        while proc.poll() is None and first is None:
            if first_record_dir.is_dir() and any(first_record_dir.rglob("pack-*.jsonl")):
                first = time.perf_counter() - t0
                break
            time.sleep(0.002)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    assert proc.stdout is not None and proc.stderr is not None  # Popen(stdout=PIPE, stderr=PIPE)
    out, err = proc.stdout.read().decode(), proc.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out}\n{err}")
    cpu = usage.ru_utime + usage.ru_stime
    return {"wall": wall, "cpu": cpu, "first": first, "maxrss_mb": usage.ru_maxrss / 1024, "out": out}


BASELINE = """
import json, sys, time
from rageval.diagnostics.dispatch import score
from rageval.diagnostics.inputs import Gold, ScoringInput, ScoringOptions
from rageval.judges import get_judge
from rageval.readers.template import DEFAULT_TEMPLATE
from rageval.types import Context, SourceSnippet, Unit
from rageval.diagnostics import applicable
rows = [json.loads(l) for l in open(sys.argv[1])]
t0, c0 = time.perf_counter(), time.process_time()
inputs = []
for r in rows:
    ctxs = r["contexts"]
    units = tuple(Unit(c, (f"c{k}",)) for k, c in enumerate(ctxs, 1))
    sources = tuple(SourceSnippet(f"c{k}", c, f"c{k}") for k, c in enumerate(ctxs, 1))
    inputs.append(ScoringInput.build(question_id=r["id"], answer=r["answer"], context=Context(units, 0, 0),
        sources=sources, gold=Gold(answers=tuple(r["answers"])), evidence_text=DEFAULT_TEMPLATE.evidence_text))
diags = applicable("auto", lambda f: f == "answers")
judge = get_judge("lexical")
for i in range(0, len(inputs), 256):
    score(inputs[i:i + 256], diags, ScoringOptions(), judge)
print(json.dumps({"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0}))
"""

FIRST_RECORD_MODULES = """
import json, sys
from rageval.score import score_files
seen = []
def first(rec):
    if not seen:
        seen.append(sorted(m for m in ("torch", "transformers", "evaluate", "datasets", "matplotlib") if m in sys.modules))
score_files([sys.argv[1]], sys.argv[2], build_report=False, on_record=first)
print(json.dumps(seen[0]))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=10_000)
    args = ap.parse_args()
    from _threads import pin_blas_threads  # beside this script

    print(pin_blas_threads(None), "(the lexical judge does no BLAS work)")
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        data = tmp / "outputs.jsonl"
        make_file(data, args.records)
        out = tmp / "run"
        cmd = [py, "-m", "rageval.cli", "score", str(data), "--out", str(out), "--no-progress"]
        cold = _run([*cmd, "--no-report"], first_record_dir=out / "cache" / "records")
        warm = _run([*cmd, "--no-report"])
        report = _run([py, "-m", "rageval.cli", "report", str(out)])
        base = _run([py, "-c", BASELINE, str(data)])
        base_t = json.loads(base["out"].strip().splitlines()[-1])
        t_base, c_base = base_t["seconds"], base_t["cpu"]
        mods = _run([py, "-c", FIRST_RECORD_MODULES, str(data), str(tmp / "mods")])
        heavy = json.loads(mods["out"].strip().splitlines()[-1])
        start = _run([py, "-c", "import rageval.cli"])

    n = args.records
    load = os.getloadavg()[0]
    print(f"rageval score, {n:,} generic records, lexical judge (5 contexts, 2 cited sentences each); load {load:.1f}")
    print(
        f"  cold run (--no-report): {cold['wall']:.2f} s wall, {cold['cpu']:.2f} s CPU = "
        f"{n / cold['wall']:,.0f} records/s ({n / cold['cpu']:,.0f} per CPU second); peak RSS {cold['maxrss_mb']:.0f} MB"
    )
    print(
        f"  first record on disk:   {cold['first']:.2f} s after launch (bare `import rageval.cli`: {start['wall']:.2f} s)"
    )
    print(f"  rerun (all reused):     {warm['wall']:.2f} s wall, {warm['cpu']:.2f} s CPU")
    print(
        f"  report (stats + plots + HTML): {report['wall']:.2f} s wall, {report['cpu']:.2f} s CPU; peak RSS {report['maxrss_mb']:.0f} MB"
    )
    print(
        f"  baseline, dispatch.score alone in-process: {t_base:.2f} s wall, {c_base:.2f} s CPU = "
        f"{n / c_base:,.0f} records per CPU second; the command takes {cold['cpu'] / c_base:.2f}x the baseline's CPU "
        f"(peak RSS of that process {base['maxrss_mb']:.0f} MB)"
    )
    print(f"  heavy modules imported at the first record: {heavy or 'none'}")


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
