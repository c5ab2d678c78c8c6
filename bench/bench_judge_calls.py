"""Calls not made: which judge pairs a first run asks for, and how many the judge actually runs.

    python bench/bench_judge_calls.py              # ALCE ASQA demos (~2 s), then the demo suite (~20-40 s)
    python bench/bench_judge_calls.py --no-suite   # the ALCE demos only
    python bench/bench_judge_calls.py --no-suite --check-needed   # + is every executed pair needed? (~30 s)

``requested`` counts every pair a diagnostic asks the judge runner for (duplicates included),
``executed`` the pairs the judge backend actually scored; the rest were answered from the
runner's memory (the same pair asked before in this run) or from its disk cache (a rerun).

1. **ALCE ASQA demos** (the 4 shipped demos, their own answers) under four settings, one
   question x setting at a time with one judge runner, as the suite runner scores them: identity
   (documents declaring their sentences), the top-3 documents at two nominal budgets (identical
   contexts, as RECOMP produced at 0.50 and 0.25), and the documents without provenance.  Printed:
   executed/requested on a first run (the attribution engine, every part), on a first run with
   the suite's recovery-threshold sweep (0.3-0.8, scored once and thresholded six times, as
   ``rageval suite`` runs it) and on a rerun from the disk cache; then where the first run's
   requests go, per phase and setting, and why each request that was not executed was not.
2. **The demo suite** (``rageval suite demo``: 100 HotpotQA questions x 17 settings, lexical
   judge), first run and rerun, from the run's own ``run_stats.json`` (its ``judge`` counters).

Everything runs with the lexical judge (no model, no download).  The counts depend on which pairs
are asked, not on the judge's speed; a model judge asks the same pairs except where its probabilities
change which recovery candidates pass (hence some grounded premises).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import sys
import tempfile
import time
from collections import Counter, defaultdict
from importlib import resources
from pathlib import Path

SETTINGS = ("identity", "top-3@0.50", "top-3@0.25", "no provenance")
SWEEP = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def load_demos():
    text = (resources.files("rageval.data") / "samples" / "asqa" / "alce_asqa_demos.json").read_text("utf-8")
    return json.loads(text)["demos"]


def alce_inputs():
    """[(setting, answer, units, sources)]: each demo under the four settings, demo by demo."""
    from rageval.text import split_sentences

    out = []
    for demo in load_demos():
        src, doc_units = [], []
        for i, d in enumerate(demo["docs"]):
            ids = []
            for j, s in enumerate(split_sentences(d["text"])):
                src.append({"id": f"d{i}.s{j}", "text": s, "title": d["title"]})
                ids.append(f"d{i}.s{j}")
            doc_units.append({"text": d["text"], "title": d["title"], "source_ids": ids})
        contexts = [
            doc_units,
            doc_units[:3],
            doc_units[:3],
            [{"text": u["text"], "title": u["title"], "source_ids": None} for u in doc_units],
        ]
        out.extend((name, demo["answer"], us, src) for name, us in zip(SETTINGS, contexts))
    return out


def _phase() -> str:
    """The phase of the attribution engine that is asking the judge (read off the call stack)."""
    names = []
    for fr in inspect.stack(0)[3:16]:
        fn, loc = fr.function, fr.frame.f_locals
        if fn == "run_gate":
            step = "joint" if "multi" not in loc else "alone" if "alone_ok" not in loc else "others"
            names.append(f"gate {fr.frame.f_back.f_locals.get('variant', '?')} {step}" if fr.frame.f_back else "gate")
        elif fn == "verify_claims":
            names.append(f"verify {loc.get('m', '?')}")
        elif fn == "score_recovery":
            names.append("recovery candidates")
        elif fn == "sweep_batch":
            names.append("sweep:")
    return " ".join(reversed(names)) or "other"


class Tally:
    """Counts every judge request by (phase, setting) and why it was or was not executed.

    ``within``: the pair was asked before in the same question x setting (another phase needs the same
    judgment, e.g. the summary-checked premise is the emitted joint premise); ``across``: asked before by
    an earlier question x setting (the same context under another compressor or budget); ``executed``;
    ``disk``: answered from the disk cache.
    """

    def __init__(self):
        self.key: tuple[str, int] = ("", 0)
        self.rows: Counter = Counter()
        self.seen_here: dict[tuple[str, int], set] = defaultdict(set)
        self.seen: set = set()

    @contextlib.contextmanager
    def installed(self):
        from rageval.judges.base import JudgeRunner

        orig = JudgeRunner.__call__
        tally = self

        def call(runner, premises, hypotheses):
            phase = _phase()
            before = dict(runner._counts)
            out = orig(runner, premises, hypotheses)
            executed = runner._counts["executed"] - before["executed"]
            disk = runner._counts["cache_hits"] - before["cache_hits"]
            within = across = 0
            here = tally.seen_here[tally.key]
            for pq in zip(premises, hypotheses):
                if pq in here:
                    within += 1
                elif pq in tally.seen:
                    across += 1
                here.add(pq)
                tally.seen.add(pq)
            setting = tally.key[0]
            tally.rows[(phase, setting, "requested")] += len(premises)
            tally.rows[(phase, setting, "executed")] += executed
            tally.rows[(phase, setting, "disk")] += disk
            tally.rows[(phase, setting, "within")] += within
            tally.rows[(phase, setting, "across")] += across
            return out

        JudgeRunner.__call__ = call
        try:
            yield self
        finally:
            JudgeRunner.__call__ = orig


def score_alce(runner, inputs, tally: Tally | None, sweep: bool) -> list[dict]:
    """Score each question x setting as the suite's dispatch does: the engine, then the sweep where a unit
    lacks provenance; return the engine's rows."""
    from rageval.diagnostics.attribution import attribution_scores_batch
    from rageval.diagnostics.attribution.sweep import sweep_batch

    rows = []
    for i, (setting, answer, units, sources) in enumerate(inputs):
        if tally is not None:
            tally.key = (setting, i // len(SETTINGS))
        rows += attribution_scores_batch([answer], [units], [sources], judge=runner, details=True)
        if sweep and any(u["source_ids"] is None for u in units):
            sweep_batch([answer], [units], [sources], judge=runner, thresholds=SWEEP)
    return rows


def recovery_alternatives(rows: list[dict], threshold: float = 0.5) -> tuple[int, int, int]:
    """Recovery candidates judged (all units without provenance), and what two other definitions would
    judge: the cited units' only (no re-attributability for the others), or the uncited units' candidates in
    rank order up to the first passing one.  Pairs, not distinct pairs; neither definition is used."""
    judged = cited_only = lazy = 0
    for r in rows:
        det = r["details"]
        cited = {c for s in det["sentences"] for c in s["citations"]}
        for unit, rec in det["recovery"].items():
            n = rec["pairs_scored"]
            judged += n
            if int(unit) in cited:
                cited_only += n
                lazy += n
            else:
                ps = rec["probabilities"]
                first = next((i for i, p in enumerate(ps) if p is not None and p >= threshold), None)
                lazy += n if first is None else first + 1
    return judged, cited_only, lazy


def _ratio(st) -> str:
    e, r = st["executed"], st["requested"]
    return f"{e:6d} / {r:6d} = {e / r:.2f}" if r else f"{e:6d} / {r:6d} (nothing requested)"


def alce(verbose: bool) -> dict[str, dict]:
    from rageval.judges import get_judge

    inputs = alce_inputs()
    figures: dict[str, dict] = {}
    tally = Tally()
    with tempfile.TemporaryDirectory() as cache:
        runner = get_judge("lexical", cache_dir=cache)
        with tally.installed():
            engine_rows = score_alce(runner, inputs, tally, sweep=False)
        figures["first run (attribution engine)"] = runner.stats()
        runner.close()
        runner = get_judge("lexical", cache_dir=cache)
        score_alce(runner, inputs, None, sweep=False)
        figures["rerun (disk cache)"] = runner.stats()
        runner.close()
    with tempfile.TemporaryDirectory() as cache:
        runner = get_judge("lexical", cache_dir=cache)
        score_alce(runner, inputs, None, sweep=True)
        figures["first run + threshold sweep (suite's way)"] = runner.stats()
        runner.close()

    print(
        f"ALCE ASQA demos: {len(inputs) // len(SETTINGS)} demos x {len(SETTINGS)} settings = {len(inputs)} "
        "question-settings, lexical judge, one runner, one question x setting at a time (the suite runner's way)"
    )
    print(f"  {'':45s} executed / requested")
    for name, st in figures.items():
        print(f"  {name:45s} {_ratio(st)}")

    rows = tally.rows
    phases = sorted({p for p, _, _ in rows}, key=lambda p: (not p.startswith("recovery"), p))
    print()
    print("where the first run's requests go (requested / executed, per phase and setting):")
    print(f"  {'phase':28s}" + "".join(f"{s:>15s}" for s in SETTINGS) + f"{'all':>15s}")
    for p in phases:
        cells = [f"{rows[(p, s, 'requested')]:>7d} / {rows[(p, s, 'executed')]:<5d}" for s in SETTINGS]
        req = sum(rows[(p, s, "requested")] for s in SETTINGS)
        exe = sum(rows[(p, s, "executed")] for s in SETTINGS)
        print(f"  {p:28s}" + "".join(cells) + f"{req:>9d} / {exe:<5d}")
    tot = {
        k: sum(v for (_, _, kk), v in rows.items() if kk == k) for k in ("requested", "executed", "within", "across")
    }
    rec_exe = sum(v for (p, _, k), v in rows.items() if k == "executed" and p.startswith("recovery"))
    print()
    print("why a requested pair was not executed (first run):")
    print(f"  asked before in the same question x setting (one judgment, several phases):  {tot['within']:5d}")
    print(f"  asked before by an earlier question x setting (same context, other setting): {tot['across']:5d}")
    print(f"  executed (each distinct pair of the run once):                               {tot['executed']:5d}")
    print(
        f"  of the executed, recovery candidates: {rec_exe} (each probability is recorded per unit, in the record's "
        "details; the candidates of a unit are all judged so that every passing one is recovered)"
    )
    judged, cited_only, lazy = recovery_alternatives(engine_rows)
    print(
        f"  recovery candidate pairs judged: {judged}; under definitions NOT used (they would change recorded "
        f"values): the cited units' only {cited_only}, uncited units up to their first passing candidate {lazy}"
    )
    if verbose:
        for k, st in figures.items():
            print(k, json.dumps({x: st[x] for x in ("requested", "unique", "executed", "memory_hits", "cache_hits")}))
    return figures


def check_needed() -> tuple[int, int]:
    """Flip the decision of each executed pair in turn (p -> 1.0 below 0.5, else 0.0) and rerun the ALCE first
    run with the sweep from scratch; return (pairs, pairs whose flip changed no record value).  A pair whose
    flip changes nothing is one the diagnostics did not need at all."""
    from rageval.diagnostics.attribution import attribution_scores_batch
    from rageval.diagnostics.attribution.sweep import sweep_batch
    from rageval.judges import CallableJudge, JudgeRunner, get_judge

    lexical = get_judge("lexical").judge
    inputs = alce_inputs()

    def records(fn) -> str:
        runner = JudgeRunner(CallableJudge(fn, judge_id="check"))
        out: list = []
        for _, answer, units, sources in inputs:
            out.append(attribution_scores_batch([answer], [units], [sources], judge=runner, details=True))
            if any(u["source_ids"] is None for u in units):
                by_t = sweep_batch([answer], [units], [sources], judge=runner, thresholds=SWEEP)
                out.append({str(t): rows for t, rows in by_t.items()})
        return json.dumps(out, sort_keys=True, default=str)

    scored: list = []

    def plain(premises, hypotheses):
        scored.extend(zip(premises, hypotheses))
        return lexical.predict(premises, hypotheses)

    reference = records(plain)
    pairs = list(dict.fromkeys(scored))
    probs = dict(zip(pairs, lexical.predict([p for p, _ in pairs], [h for _, h in pairs])))
    idle = 0
    for pair in pairs:
        flipped = 1.0 if probs[pair] < 0.5 else 0.0

        def fn(premises, hypotheses, pair=pair, flipped=flipped):
            out = lexical.predict(premises, hypotheses)
            return [flipped if pq == pair else v for pq, v in zip(zip(premises, hypotheses), out)]

        idle += records(fn) == reference
    return len(pairs), idle


def demo_suite() -> dict[str, dict]:
    from rageval.suite.load import load_suite, resolve_suite_path
    from rageval.suite.run import run_suite

    suite = load_suite(resolve_suite_path("demo"))
    figures = {}
    tally = Tally()
    with tempfile.TemporaryDirectory() as out:
        for name in ("first run", "rerun (records reused)"):
            t0 = time.perf_counter()
            with tally.installed() if name == "first run" else contextlib.nullcontext():
                run_suite(suite, out, progress=False, build_report=False)
            st = json.loads((Path(out) / "run_stats.json").read_text("utf-8"))
            figures[name] = st["judge"]
            print(
                f"  {name:45s} {_ratio(st['judge'])}   ({st['records_computed']} records computed, "
                f"{st['records_reused']} reused, {time.perf_counter() - t0:.1f} s, no report)"
            )
    by_phase: dict[str, Counter] = defaultdict(Counter)
    for (phase, _, kind), v in tally.rows.items():
        by_phase[phase][kind] += v
    print("  first run per phase (requested / executed):")
    for phase in sorted(by_phase, key=lambda p: -by_phase[p]["executed"]):
        print(f"    {phase:40s} {by_phase[phase]['requested']:6d} / {by_phase[phase]['executed']:<6d}")
    return figures


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-suite", action="store_true", help="skip the demo suite (the ALCE demos only)")
    ap.add_argument("--verbose", action="store_true", help="also print the runner's counters")
    ap.add_argument(
        "--check-needed",
        action="store_true",
        help="also flip each executed ALCE pair's decision in turn and count the flips that change no record (~30 s)",
    )
    args = ap.parse_args(argv)
    from _threads import load_line, pin_blas_threads  # beside this script

    print(load_line())
    print(pin_blas_threads(1))
    alce(args.verbose)
    if args.check_needed:
        t0 = time.perf_counter()
        n, idle = check_needed()
        print(
            f"  needed: flipping the decision of one executed pair (of the {n} executed with the sweep) left every "
            f"record value unchanged for {idle} of them; each other flip changed a record ({time.perf_counter() - t0:.0f} s)"
        )
    if not args.no_suite:
        print()
        print("demo suite (rageval suite demo: 100 HotpotQA questions x 17 settings, lexical judge; run_stats.json):")
        print(f"  {'':45s} executed / requested")
        demo_suite()
    return 0


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    sys.exit(run_and_save(__file__, main))
