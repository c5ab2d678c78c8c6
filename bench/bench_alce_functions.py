"""Benchmark: rageval scoring ALCE ASQA items against ALCE's own functions and its own ``eval.py``, same items.

    .venv/bin/python bench/bench_alce_functions.py ALCE_DIR              # 2,000 items, 3 runs of each
    .venv/bin/python bench/bench_alce_functions.py ALCE_DIR --items 500 --repeat 1 --command-repeat 1

``ALCE_DIR`` holds ``eval.py`` and ``utils.py`` of a checkout of princeton-nlp/ALCE (nothing of ALCE is shipped
with rageval: point the script at your own copy; it is read, never written).  ALCE's functions are loaded as the
parity check loads them (``tests/fixtures/alce_parity/run_alce_eval.py``), in this process and in the ALCE command's
process alike: its NLI call is the lexical judge's decision (probability >= 0.5) and ``nltk.sent_tokenize`` is
nltk's plain Punkt with rageval's ALCE-mode parameters (rageval remembers Punkt's break decisions: the same
sentences), so both sides apply the same entailment rule, through the same judge code, to the same sentences.
Both are changed at run time, in memory; the copy on disk is not touched.

The items: a generated ALCE ASQA result file (``{"args", "data"}``), each with 5 documents of two 15-word sentences,
two ``qa_pairs`` of short answers, two ``annotations`` long answers of two sentences (ROUGE-Lsum's references), an
``answer`` and a three-sentence output citing ``[1]``..``[5]``.  Words are drawn, seeded, from the words of the
shipped ASQA sample's long answers and passages with their frequencies there (``--vocabulary sample``, the
default: a real text's share of distinct words, which a memo of words cannot shortcut), or from a list of 40
(``--vocabulary toy``, the items before this option, so a run compares with the earlier figures).

**The functions** (each timed in this process in CPU seconds of the process, the sides alternated, every memo
emptied before each run: the lexical judge's, the sentence splitter's, the token ids, ROUGE inputs and parsed
answers; runs before 2026-12-04 02:30 UTC timed wall-clock seconds, which on a loaded machine count other processes'
turns too; runs before 2026-12-04 23:00 UTC kept the last 1,024 parsed answers between runs, so up to 1,024 items
the citations' later runs found their answers parsed):

* **str-EM**: ALCE ``compute_str_em`` (citations removed first, as ``main()`` does) against
  ``rageval.str_em(outputs, short answers, alce_compat=True)``;
* **ROUGE-Lsum**: ALCE ``compute_rouge`` (``rouge_score`` with its Porter stemmer, best of the two annotations,
  its bootstrap aggregate) against ``rageval.rouge_lsum(outputs, long answers, alce_compat=True)``;
* **citations**: ALCE ``compute_autoais(at_most_citations=3)`` against ``rageval.attribution_scores_batch(outputs,
  documents as units, parts=("emitted",), alce_compat=True)`` (ALCE's citation recall and precision);
* **the ALCE metric set**: the three together (the sum of their medians).

Each also against ``rageval.score.score_files(FILE, fmt="alce", diagnostics=[...])`` (the command path without a
report: reading and checking the file, hashing, the record cache, ``records.jsonl``).  The function's time includes
making its arguments from ALCE's items.  Before timing, the values are checked: each rageval path's mean equals
ALCE's (ROUGE-Lsum item by item on the first items, as ALCE's aggregate is a bootstrap's median).

**The LCS kernels** (``rageval.text.lcs``) on these items' ROUGE-Lsum tables: the Python and the compiled (numba)
kernel's CPU time and the same hits, and numba's fixed cost in a fresh process (the first compile into an empty
cache folder, then a load from it): the figures behind ``lcs.NUMBA_MIN_CELLS``.

**The whole commands** (each in a fresh process, alternated, ``--command-repeat`` times): ALCE's ``eval.py --f FILE
--citations`` (its ``main()``: length, str-EM, ROUGE-Lsum, citation recall and precision; the rule swapped in as
above, ``sys.argv`` set, ``eval.py`` imported as it is, with torch and transformers) against ``rageval score FILE
--format alce --judge lexical`` with its report (every diagnostic that applies, the statistics, tables, figures and
``report.html``) and with ``--no-report``.  Printed: wall and CPU seconds (the process and its children) of each
and ALCE's / rageval's; then where rageval's command spends its time, from one more run with timers around its
steps (CPU and wall: start-up and imports, reading, each diagnostic, the engine, the report and its figures; the
steps nest: the diagnostics are inside the engine, the figures inside the report).

Before each timed function run, outside the timer and on every side alike, the bench collects its own garbage
(``gc.collect()``): the copies of the items it makes for each run otherwise pile up until one full collection of
the whole process (half a million objects, a quarter of a second) falls into whichever side runs next, which made
the same side's time swing by 2x between runs (``timeit`` switches the collector off for the same reason).  Inside
the timer the collector runs as it is, so each side pays for the collections its own work sets off; their CPU
time is printed beside each run.  ``--gc`` (default ``as-is``): that; ``off``: the collector off for every
function side (``gc.disable``).  Printed with the load average and the thread settings.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import io
import json
import logging
import math
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from _results import row
from _threads import load_line, pin_blas_threads

ROOT = Path(__file__).resolve().parents[1]
#: the parity check's loader of ALCE's functions with the shared rule (one loader; the checkout's tests/ folder)
PARITY = ROOT / "tests" / "fixtures" / "alce_parity" / "run_alce_eval.py"


def _load_alce(alce_dir: Path):
    spec = importlib.util.spec_from_file_location("run_alce_eval", PARITY)
    if spec is None or spec.loader is None or not PARITY.is_file():
        raise SystemExit(f"{PARITY} is missing: run this benchmark from a checkout of rageval")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._load_alce(alce_dir)


TOY_WORDS = (
    "river city capital museum tower bridge painter novel planet island mountain king queen war treaty "
    "language festival harbour railway cathedral university century empire desert forest lake garden "
    "market castle valley poet singer village ocean temple station library theatre prince battle"
).split()


def sample_words() -> tuple[list[str], list[int]]:
    """The words of the shipped ASQA sample's long answers and passages (letters only, lowercased) and their counts."""
    from rageval.data import sample_path  # the shipped sample, from a checkout or an installed wheel

    counts: Counter[str] = Counter()
    for line in Path(sample_path("asqa")).read_text(encoding="utf-8").splitlines():
        row_ = json.loads(line)
        texts = [a["long_answer"] for a in row_["annotations"]] + [q["context"] for q in row_["qa_pairs"]]
        for text in texts:
            counts.update(w for w in (t.strip(".,;:()\"'").lower() for t in text.split()) if w.isalpha())
    words = sorted(counts)
    return words, [counts[w] for w in words]


def make_items(n: int, seed: int = 0, vocabulary: str = "sample") -> list[dict]:
    rng = random.Random(seed)
    words, weights = (TOY_WORDS, [1] * len(TOY_WORDS)) if vocabulary == "toy" else sample_words()

    def sentence(k: int = 15) -> str:
        return " ".join(rng.choices(words, weights, k=k)).capitalize() + "."

    def word() -> str:
        return rng.choices(words, weights)[0]

    items = []
    for i in range(n):
        docs = [{"id": str(k), "title": f"Doc {i}-{k}", "text": f"{sentence()} {sentence()}"} for k in range(5)]
        shorts = [[word()], [word(), word()]]
        first = " ".join(docs[0]["text"].split()[:8]).rstrip(".")
        output = f"{first} [1]. {sentence(8)[:-1]} [2][3]. {sentence(6)[:-1]} [4][5]."
        items.append(
            {
                "sample_id": f"q{i}",
                "question": f"Question {i} about the {shorts[0][0]}?",
                "qa_pairs": [{"short_answers": s} for s in shorts],
                "annotations": [{"long_answer": f"{sentence(14)} {sentence(10)}"} for _ in range(2)],
                "answer": sentence(12),
                "docs": docs,
                "output": output,
            }
        )
    return items


# -- the functions ------------------------------------------------------------------------------------------


def alce_str_em(alce, data: list[dict]) -> None:
    for item in data:
        item["output"] = alce.remove_citations(item["output"])
    alce.compute_str_em(data)


def alce_rouge(alce, data: list[dict]) -> float:
    for item in data:
        item["output"] = alce.remove_citations(item["output"])
    return alce.compute_rouge(data)


def alce_citations(alce, data: list[dict]) -> None:
    with warnings.catch_warnings(), redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):  # its tqdm bar
        warnings.simplefilter("ignore")
        alce.compute_autoais(data, at_most_citations=3)


def rageval_str_em(data: list[dict]) -> dict:
    import rageval

    references = [[qa["short_answers"] for qa in item["qa_pairs"]] for item in data]
    return rageval.str_em([item["output"] for item in data], references, alce_compat=True)


def rageval_rouge(data: list[dict]) -> dict:
    from rageval.diagnostics.alce import rouge_lsum

    references = [[a["long_answer"] for a in item["annotations"]] for item in data]
    return rouge_lsum([item["output"] for item in data], references, alce_compat=True)


def rageval_citations(data: list[dict]) -> list[dict]:
    import rageval

    units = [[{"text": d["text"], "title": d["title"], "source_ids": None} for d in item["docs"]] for item in data]
    return rageval.attribution_scores_batch(
        [item["output"] for item in data],
        units,
        [[] for _ in data],
        judge="lexical",
        parts=("emitted",),
        details=False,
        alce_compat=True,
        max_citations=3,
    )


def rageval_score(path: Path, out: Path, diagnostics: list[str]) -> None:
    from rageval.score import ScoreOptions, score_files

    shutil.rmtree(out, ignore_errors=True)
    score_files([str(path)], out, fmt="alce", options=ScoreOptions(diagnostics=diagnostics), build_report=False)


def _records_mean(out: Path, key: str) -> float:
    values = [json.loads(line)["metrics"][key] for line in (out / "records.jsonl").read_text().splitlines()]
    return 100 * statistics.fmean(values)


def _copy(items: list[dict]) -> list[dict]:
    return json.loads(json.dumps(items))


def check_values(alce, items: list[dict], path: Path, out: Path, per_item: int = 40) -> None:
    """Each rageval path gives ALCE's values (x 100, as ALCE prints them) on these items, or the script stops."""
    import numpy as np

    data = _copy(items)
    for item in data:
        item["output"] = alce.remove_citations(item["output"])
    em, hit = alce.compute_str_em(data)
    got = rageval_str_em(_copy(items))
    rageval_score(path, out, ["str_em"])
    want = {"str-EM function": (em, 100 * got["str_em"]), "str-hit function": (hit, 100 * got["str_hit"])}
    want["str-EM command"] = (em, _records_mean(out, "str_em"))
    # ROUGE-Lsum: ALCE's aggregate is a bootstrap's median, so item by item (one item alone: its F-measure)
    rouge = rageval_rouge(_copy(items))["per_question"]
    rageval_score(path, out, ["rouge_lsum"])
    records = [json.loads(line)["metrics"] for line in (out / "records.jsonl").read_text().splitlines()]
    for i in range(min(per_item, len(items))):
        one = alce_rouge(alce, _copy(items[i : i + 1]))
        want[f"ROUGE-Lsum item {i} function"] = (one, 100 * rouge[i]["rouge_lsum"])
        want[f"ROUGE-Lsum item {i} command"] = (one, 100 * records[i]["rouge_lsum"])
    with warnings.catch_warnings(), redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        cites = alce.compute_autoais(_copy(items), at_most_citations=3)
    rows = rageval_citations(_copy(items))
    rageval_score(path, out, ["emitted_precision", "emitted_recall"])
    for name, alce_key, key in (
        ("recall", "citation_rec", "emitted_recall"),
        ("precision", "citation_prec", "emitted_precision"),
    ):
        want[f"citation {name} function"] = (cites[alce_key], 100 * float(np.mean([r[key] for r in rows])))
        want[f"citation {name} command"] = (cites[alce_key], _records_mean(out, key))
    bad = {k: v for k, v in want.items() if not math.isclose(float(v[0]), float(v[1]), abs_tol=1e-9)}
    if bad:
        raise SystemExit(f"rageval and ALCE disagree on these items (ALCE, rageval): {bad}")
    shown = {k: v for k, v in want.items() if "item" not in k}
    print(
        "values: "
        + ", ".join(f"{k} {float(a):.4f}" for k, (a, _) in shown.items())
        + f"; ROUGE-Lsum of the first {min(per_item, len(items))} items one by one (ALCE's = rageval's)"
    )


def _clear_memos() -> None:
    from rageval.citations import _parse
    from rageval.diagnostics.alce import _lsum_text
    from rageval.judges.lexical import clear_memo
    from rageval.text import ids
    from rageval.text.segment import clear_memo as clear_break_memo

    clear_memo()
    clear_break_memo()
    ids.clear()
    _lsum_text.cache_clear()
    _parse.cache_clear()  # the parsed answers (their sentences): 1,024 kept, so 1,000 items came back warm


class _CollectorTime:
    """The CPU seconds the collector spends (``gc.callbacks``), summed into ``spent``."""

    def __init__(self) -> None:
        self.spent = 0.0
        self._start = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            self.spent += time.process_time() - self._start


def time_functions(alce, items: list[dict], path: Path, out: Path, repeat: int, gc_mode: str) -> dict[str, dict]:
    sets = {
        "str-EM": ((lambda data: alce_str_em(alce, data)), rageval_str_em, ["str_em"]),
        "ROUGE-Lsum": ((lambda data: alce_rouge(alce, data)), rageval_rouge, ["rouge_lsum"]),
        "citations": (
            (lambda data: alce_citations(alce, data)),
            rageval_citations,
            ["emitted_precision", "emitted_recall"],
        ),
    }
    if gc_mode == "off":
        gc.disable()
    medians: dict[str, dict] = {}
    n = len(items)
    collector = _CollectorTime()
    gc.callbacks.append(collector)
    for name, (alce_fn, rageval_fn, diagnostics) in sets.items():
        times: dict[str, list[float]] = {"ALCE": [], "function": [], "command": []}
        collected: dict[str, list[float]] = {side: [] for side in times}
        for _ in range(repeat):
            for side, got in times.items():
                data = _copy(items)  # a fresh copy: ALCE's functions change the items
                _clear_memos()
                gc.collect()  # the bench's own garbage, before the timer (the module doc)
                collector.spent = 0.0
                t = time.process_time()  # CPU time: the machine is shared (its load printed with each ratio)
                if side == "ALCE":
                    alce_fn(data)
                elif side == "function":
                    rageval_fn(data)
                else:
                    rageval_score(path, out, diagnostics)
                got.append(time.process_time() - t)
                collected[side].append(collector.spent)
                del data
        med = {k: statistics.median(v) for k, v in times.items()}
        medians[name] = med
        runs = "; ".join(f"{k} {', '.join(f'{x:.3f}' for x in v)} s CPU" for k, v in times.items())
        in_gc = "; ".join(f"{k} {', '.join(f'{x:.3f}' for x in v)} s" for k, v in collected.items())
        print(
            f"{name}: ALCE {n / med['ALCE']:,.0f} items per CPU-second (medians of {repeat}; runs: {runs}; "
            f"of which the collector: {in_gc})",
            flush=True,
        )
        _print_ratios(name, med, n)
    gc.callbacks.remove(collector)
    if gc_mode == "off":
        gc.enable()
    total = {side: sum(m[side] for m in medians.values()) for side in ("ALCE", "function", "command")}
    print("the ALCE metric set (str-EM, ROUGE-Lsum, citation recall and precision; sums of the medians):")
    _print_ratios("ALCE metric set", total, n)
    medians["ALCE metric set"] = total
    return medians


def _print_ratios(name: str, med: dict[str, float], n: int) -> None:
    a = med["ALCE"]
    for side, what in (("function", "function"), ("command", "score_files")):
        r = med[side]
        print(
            f"  rageval {what:11s} {n / r:8,.0f} items/s; ALCE / rageval = {a / r:.2f}x; load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    row(  # the columns of the earlier runs' rows (docs/benchmarks.md)
        step=name,
        ALCE=f"{n / a:,.0f} items/s",
        functions=f"{n / med['function']:,.0f} items/s",
        ALCE_over_functions=f"**{a / med['function']:.2f}x**",
        score_files=f"{n / med['command']:,.0f} items/s",
        ALCE_over_score_files=f"{a / med['command']:.2f}x",
    )


# -- the LCS kernels -------------------------------------------------------------------------------------------

#: importing numba and getting the compiled kernel, in a fresh process (argv: nothing; NUMBA_CACHE_DIR set)
KERNEL_LOAD = """
import time
t = time.process_time()
from rageval.text import lcs
lcs.summary_hits_numba([((1, 2, 3),), ((1, 3),)], [(0, 1)], 4)
print("CPU", time.process_time() - t)
"""


def time_kernels(items: list[dict], tmp: Path) -> None:
    """The Python and the compiled kernel on these items' ROUGE-Lsum tables (CPU seconds, this process), and numba's
    fixed cost in a fresh process: the first compile (an empty cache folder) and a load from the cache."""
    from rageval.diagnostics.alce import _lsum_text, answer_text
    from rageval.text import ids, lcs

    texts = [answer_text(item["output"], alce_compat=True) for item in items]
    refs = [a["long_answer"] for item in items for a in item["annotations"]]
    with ids.session():
        docs = [ids.rouge_lines(_lsum_text(x)) for x in texts + refs]
        vocab = ids.vocab_size()
    n = len(texts)
    pairs = [(n + 2 * i + k, i) for i in range(n) for k in (0, 1)]
    sizes = [sum(map(len, d)) for d in docs]
    cells = sum(sizes[a] * sizes[b] for a, b in pairs)
    t = time.process_time()
    python = [lcs.summary_hits_python(docs[a], docs[b]) for a, b in pairs]
    py_cpu = time.process_time() - t
    print(f"LCS kernels on these items' {len(pairs):,} (reference, answer) pairs, {cells:,} table cells:")
    print(f"  Python {py_cpu:.3f} s CPU ({1e9 * py_cpu / cells:.0f} ns a cell)")
    result = f"{cells:,} cells: Python {py_cpu:.3f} s CPU ({1e9 * py_cpu / cells:.1f} ns a cell)"
    if not lcs.numba_available():
        print("  numba not installed (pip install 'rageval[fast]'): the compiled kernel not measured")
        row(step="ROUGE-Lsum LCS kernels", result=result + "; numba not installed")
        return
    cache = tmp / "numba_cache"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    fixed = []
    for what in ("first compile (empty cache)", "load from the cache"):
        _, _, out = _run([sys.executable, "-c", KERNEL_LOAD], env)
        cpu = float(out.split()[-1])
        print(f"  numba import + {what}: {cpu:.2f} s CPU in a fresh process")
        fixed.append(f"numba import + {what} {cpu:.2f} s CPU")
    lcs.summary_hits_numba(docs, pairs[:1], vocab)  # loaded in this process
    t = time.process_time()
    compiled = lcs.summary_hits_numba(docs, pairs, vocab)
    nb_cpu = time.process_time() - t
    assert compiled == python, "the kernels disagree"
    print(
        f"  numba {nb_cpu:.4f} s CPU ({1e9 * nb_cpu / cells:.1f} ns a cell, the arrays' making included; the same "
        f"hits); its load pays for itself after about {cpu / max(py_cpu / cells - nb_cpu / cells, 1e-12):,.0f} cells "
        f"(lcs.NUMBA_MIN_CELLS = {lcs.NUMBA_MIN_CELLS:,})"
    )
    result += f", numba {nb_cpu:.4f} s CPU ({1e9 * nb_cpu / cells:.1f} ns a cell), same hits; " + ", ".join(fixed)
    row(step="ROUGE-Lsum LCS kernels", result=result + " (a fresh process each)")


# -- the whole commands ---------------------------------------------------------------------------------------

#: ALCE's eval.py as a command, the shared rule swapped in at run time (argv: ALCE_DIR FILE)
ALCE_COMMAND = """
import importlib.util, logging, sys
spec = importlib.util.spec_from_file_location("run_alce_eval", {parity!r})
loader = importlib.util.module_from_spec(spec)
spec.loader.exec_module(loader)
alce = loader._load_alce(__import__("pathlib").Path(sys.argv[1]))
sys.argv = ["eval.py", "--f", sys.argv[2], "--citations"]
alce.main()
"""

#: rageval's command with timers around its steps (argv: the command's arguments)
TIMED_COMMAND = """
import time, sys, json, importlib, os
def now():
    t = os.times()  # CPU of this process and of its waited-for children (the figures' workers)
    return time.perf_counter(), t.user + t.system + t.children_user + t.children_system
T0 = now()
spent = {{}}
def wrap(module, name, label):
    mod = importlib.import_module(module)
    fn = getattr(mod, name)
    def timed(*a, **k):
        t = now()
        try:
            return fn(*a, **k)
        finally:
            end = now()
            w, c = spent.get(label, (0.0, 0.0))
            spent[label] = (w + end[0] - t[0], c + end[1] - t[1])
    setattr(mod, name, timed)
from rageval.cli import main
for module, name, label in {steps!r}:
    wrap(module, name, label)
end = now()
spent["start-up (imports, command line)"] = (end[0] - T0[0], end[1] - T0[1])
try:
    main(sys.argv[1:])
except SystemExit:
    pass
end = now()
spent["total"] = (end[0] - T0[0], end[1] - T0[1])
print("TIMED " + json.dumps(spent))
"""

#: the steps timed in rageval's command (module, function, label)
STEPS = [
    ("rageval.score.run", "_read_inputs", "reading and checking the file"),
    ("rageval.score.run", "execute", "engine (scoring, cache, records.jsonl)"),
    ("rageval.diagnostics.dispatch", "score", "diagnostics (all)"),
    ("rageval.text.segment", "punkt_tokenizer", "nltk's import and Punkt's loading"),
    ("rageval.diagnostics.alce", "score_rouge_lsum", "rouge_lsum (Punkt's loading included)"),
    ("rageval.diagnostics.answer", "score_str_em", "str_em"),
    ("rageval.diagnostics.answer", "score_answer_in_context", "answer_in_context"),
    ("rageval.diagnostics.answer", "score_answer_f1", "answer_f1"),
    ("rageval.diagnostics.claim_support", "score_claim_support", "claim_support"),
    ("rageval.diagnostics.dispatch", "_scored_by_engine", "citations (attribution engine)"),
    ("rageval.score.run", "_build", "report (all)"),
    ("rageval.report.build", "render_figures", "report figures (PNG+SVG)"),
    ("rageval.report.build", "load_run", "report: reading the run (records.jsonl)"),
]


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall and CPU seconds (this process's children) of one command, and its standard output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd[:4])} ... failed ({done.returncode}):\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def time_commands(alce_dir: Path, path: Path, tmp: Path, repeat: int) -> None:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    py = sys.executable
    out = tmp / "command_out"
    rageval_args = [str(path), "--format", "alce", "--judge", "lexical", "--out", str(out), "--no-progress"]
    sides = {
        "ALCE eval.py --citations": [py, "-c", ALCE_COMMAND.format(parity=str(PARITY)), str(alce_dir), str(path)],
        "rageval score (report)": [py, "-m", "rageval", "score", *rageval_args],
        "rageval score --no-report": [py, "-m", "rageval", "score", *rageval_args, "--no-report"],
    }
    got: dict[str, list[tuple[float, float]]] = {k: [] for k in sides}
    for _ in range(repeat):
        for side, cmd in sides.items():
            shutil.rmtree(out, ignore_errors=True)
            wall, cpu, _ = _run(cmd, env)
            got[side].append((wall, cpu))
            print(f"  {side}: {wall:.2f} s wall, {cpu:.2f} s CPU; load {os.getloadavg()[0]:.1f}", flush=True)
    alce_wall = statistics.median(w for w, _ in got["ALCE eval.py --citations"])
    alce_cpu = statistics.median(c for _, c in got["ALCE eval.py --citations"])
    print(f"whole commands (medians of {repeat}), {load_line()}:")
    parts = []
    for side, runs in got.items():
        wall, cpu = statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)
        ratio = "" if side.startswith("ALCE") else f": ALCE / rageval **{alce_cpu / cpu:.2f}x** CPU, "
        ratio += "" if side.startswith("ALCE") else f"{alce_wall / wall:.2f}x wall"
        print(f"  {side}: {wall:.2f} s wall, {cpu:.2f} s CPU{ratio.replace('**', '')}")
        parts.append(f"{side} {cpu:.2f} s CPU, {wall:.2f} s wall{ratio}")
    row(step="whole commands", result=f"{'; '.join(parts)} (medians of {repeat})")
    # where rageval's command spends its time: one more run, with timers around its steps
    shutil.rmtree(out, ignore_errors=True)
    timed = [py, "-c", TIMED_COMMAND.format(steps=STEPS), "score", *rageval_args]
    _, _, stdout = _run(timed, env)
    spent = json.loads(next(line for line in stdout.splitlines() if line.startswith("TIMED "))[6:])
    total_wall, total_cpu = spent.pop("total")
    print(
        f"rageval score (report), one run with timers around its steps: {total_cpu:.2f} s CPU, {total_wall:.2f} s wall"
    )
    print(f"  {'step':42s} {'CPU s':>7s} {'share':>6s} {'wall s':>7s}")
    for label, (wall, cpu) in spent.items():
        print(f"  {label:42s} {cpu:7.2f} {100 * cpu / total_cpu:5.1f}% {wall:7.2f}")
    shares = ", ".join(f"{label} {100 * cpu / total_cpu:.0f}%" for label, (_, cpu) in spent.items())
    row(step="rageval score's steps", result=f"one run, {total_cpu:.2f} s CPU: {shares} (of its CPU time)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("alce_dir", type=Path, help="folder with ALCE's eval.py and utils.py")
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each function side")
    ap.add_argument("--command-repeat", type=int, default=2, help="runs of each whole command (0: none)")
    ap.add_argument("--vocabulary", choices=("sample", "toy"), default="sample", help="the items' words (module doc)")
    ap.add_argument("--gc", choices=("as-is", "off"), default="as-is", help="the collector (see the module doc)")
    args = ap.parse_args()
    if not (args.alce_dir / "eval.py").is_file():
        raise SystemExit(f"{args.alce_dir}: no eval.py (point the script at a copy of princeton-nlp/ALCE)")
    os.environ.update({"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    import torch

    from rageval.text import lcs

    torch.set_num_threads(1)
    alce = _load_alce(args.alce_dir)
    logging.getLogger("eval").setLevel(logging.WARNING)  # eval.py logs every sentence's citations at INFO
    items = make_items(args.items, vocabulary=args.vocabulary)
    kernel = os.environ.get("RAGEVAL_LCS") or f"auto (numba {'installed' if lcs.numba_available() else 'absent'})"
    print(
        f"{load_line()}; {pin_blas_threads(1)}; torch threads 1; collector {args.gc}; "
        f"{args.items:,} items, {args.vocabulary} vocabulary; LCS kernel {kernel}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-alce-") as tmp:
        path, out = Path(tmp) / "asqa_result.json", Path(tmp) / "out"
        path.write_text(json.dumps({"args": {"dataset_name": "asqa"}, "data": items}))
        check_values(alce, items, path, out)
        time_functions(alce, items, path, out, args.repeat, args.gc)
        time_kernels(items, Path(tmp))
        if args.command_repeat:
            time_commands(args.alce_dir, path, Path(tmp), args.command_repeat)
    print(load_line())


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
