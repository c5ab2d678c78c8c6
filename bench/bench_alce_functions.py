"""Benchmark: rageval scoring ALCE ASQA items in-process, against ALCE's own functions on the same items.

    .venv/bin/python bench/bench_alce_functions.py ALCE_DIR              # 2,000 items, 3 runs of each
    .venv/bin/python bench/bench_alce_functions.py ALCE_DIR --items 500 --repeat 1

``ALCE_DIR`` holds ``eval.py`` and ``utils.py`` of a checkout of princeton-nlp/ALCE (nothing of ALCE is shipped
with rageval: point the script at your own copy).  ALCE's functions are loaded as the parity check loads them
(``tests/fixtures/alce_parity/run_alce_eval.py``): its NLI call is the lexical judge's decision (probability
>= 0.5) and ``nltk.sent_tokenize`` is nltk's plain Punkt with rageval's ALCE-mode parameters (rageval remembers
Punkt's break decisions: the same sentences), so both sides apply the same entailment rule, through the same judge
code, to the same sentences.

The items: a generated ALCE ASQA result file (``{"args", "data"}``; seeded random words, so no two items share
a text), each with 5 documents of two 15-word sentences, two ``qa_pairs`` of short answers and a three-sentence
output citing ``[1]``..``[5]``.  Two metric sets, ALCE's function against two rageval paths, each timed in this
process (the three alternated, the lexical judge's and the sentence splitter's memos emptied before each):

* **str-EM**: ALCE ``compute_str_em`` (citations removed first, as ``main()`` does) against
  ``rageval.str_em(outputs, short answers, alce_compat=True)`` (the function, on the items in memory, as ALCE's
  function gets them) and ``rageval.score.score_files(FILE, fmt="alce", diagnostics=["str_em"])`` (the command
  path);
* **citations**: ALCE ``compute_autoais(at_most_citations=3)`` against
  ``rageval.attribution_scores_batch(outputs, documents as units, parts=("emitted",), alce_compat=True)`` and
  ``score_files`` with ``["emitted_precision", "emitted_recall"]`` (ALCE's citation recall and precision).

The function's time includes making its arguments from ALCE's items.  The command path's is the whole of
``score_files`` without the report: reading and checking the file, hashing, the record cache,
``records.jsonl``.  Before timing, the values are checked: each rageval path's mean equals ALCE's.

``--gc`` (default ``as-is``): the process's collector as it is (ALCE's ``eval.py`` imported torch and
transformers into the heap; rageval's ``attribution_scores_batch`` keeps the caller's heap out of the collector's
passes and pauses the collector while it scores, ``score_files`` keeps the heap out of its passes, ALCE's
functions do neither); ``off``: the collector off for every side (``gc.disable``: its cost taken out of the
comparison).  Printed: items per second of each, and ALCE's time / rageval's (>= 1.0: rageval at least as fast),
with the load average and thread settings.
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
import shutil
import statistics
import tempfile
import time
import warnings
from contextlib import redirect_stdout
from pathlib import Path

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


WORDS = (
    "river city capital museum tower bridge painter novel planet island mountain king queen war treaty "
    "language festival harbour railway cathedral university century empire desert forest lake garden "
    "market castle valley poet singer village ocean temple station library theatre prince battle"
).split()


def make_items(n: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)

    def sentence(k: int = 15) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(k)) + "."

    items = []
    for i in range(n):
        docs = [{"id": str(k), "title": f"Doc {i}-{k}", "text": f"{sentence()} {sentence()}"} for k in range(5)]
        shorts = [[rng.choice(WORDS)], [rng.choice(WORDS), rng.choice(WORDS)]]
        first = " ".join(docs[0]["text"].split()[:8]).rstrip(".")
        output = f"{first} [1]. {sentence(8)[:-1]} [2][3]. {sentence(6)[:-1]} [4][5]."
        items.append(
            {
                "sample_id": f"q{i}",
                "question": f"Question {i} about the {shorts[0][0]}?",
                "qa_pairs": [{"short_answers": s} for s in shorts],
                "answer": sentence(12),
                "docs": docs,
                "output": output,
            }
        )
    return items


def alce_str_em(alce, data: list[dict]) -> None:
    for item in data:
        item["output"] = alce.remove_citations(item["output"])
    alce.compute_str_em(data)


def alce_citations(alce, data: list[dict]) -> None:
    with warnings.catch_warnings(), redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        alce.compute_autoais(data, at_most_citations=3)


def rageval_str_em(data: list[dict]) -> dict:
    import rageval

    references = [[qa["short_answers"] for qa in item["qa_pairs"]] for item in data]
    return rageval.str_em([item["output"] for item in data], references, alce_compat=True)


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


def check_values(alce, items: list[dict], path: Path, out: Path) -> None:
    """Each rageval path gives ALCE's means (x 100, as ALCE prints them) on these items, or the script stops."""
    import numpy as np

    data = json.loads(json.dumps(items))
    for item in data:
        item["output"] = alce.remove_citations(item["output"])
    em, hit = alce.compute_str_em(data)
    got = rageval_str_em(json.loads(json.dumps(items)))
    rageval_score(path, out, ["str_em"])
    want = {"str-EM function": (em, 100 * got["str_em"]), "str-hit function": (hit, 100 * got["str_hit"])}
    want["str-EM command"] = (em, _records_mean(out, "str_em"))
    with warnings.catch_warnings(), redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        cites = alce.compute_autoais(json.loads(json.dumps(items)), at_most_citations=3)
    rows = rageval_citations(json.loads(json.dumps(items)))
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
    print("values: " + ", ".join(f"{k} {float(a):.4f}" for k, (a, _) in want.items()) + " (ALCE's = rageval's)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("alce_dir", type=Path, help="folder with ALCE's eval.py and utils.py")
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gc", choices=("as-is", "off"), default="as-is", help="the collector (see the module doc)")
    args = ap.parse_args()
    if not (args.alce_dir / "eval.py").is_file():
        raise SystemExit(f"{args.alce_dir}: no eval.py (point the script at a copy of princeton-nlp/ALCE)")
    os.environ.update({"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    import torch

    from rageval.judges.lexical import clear_memo
    from rageval.text.segment import clear_memo as clear_break_memo

    torch.set_num_threads(1)
    alce = _load_alce(args.alce_dir)
    logging.getLogger("eval").setLevel(logging.WARNING)  # eval.py logs every sentence's citations at INFO
    items = make_items(args.items)
    print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; BLAS/OpenMP/torch threads 1; "
        f"collector {args.gc}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-alce-") as tmp:
        path, out = Path(tmp) / "asqa_result.json", Path(tmp) / "out"
        path.write_text(json.dumps({"args": {"dataset_name": "asqa"}, "data": items}))
        check_values(alce, items, path, out)
        sets = {
            "str-EM": ((lambda data: alce_str_em(alce, data)), rageval_str_em, ["str_em"]),
            "citations": (
                (lambda data: alce_citations(alce, data)),
                rageval_citations,
                ["emitted_precision", "emitted_recall"],
            ),
        }
        if args.gc == "off":
            gc.disable()
        for name, (alce_fn, rageval_fn, diagnostics) in sets.items():
            times: dict[str, list[float]] = {"ALCE": [], "function": [], "command": []}
            for _ in range(args.repeat):
                for side, got in times.items():
                    data = json.loads(json.dumps(items))  # a fresh copy: ALCE's functions change the items
                    clear_memo()
                    clear_break_memo()
                    t = time.perf_counter()
                    if side == "ALCE":
                        alce_fn(data)
                    elif side == "function":
                        rageval_fn(data)
                    else:
                        rageval_score(path, out, diagnostics)
                    got.append(time.perf_counter() - t)
                    del data
            a = statistics.median(times["ALCE"])
            runs = "; ".join(f"{k} {', '.join(f'{x:.3f}' for x in v)} s" for k, v in times.items())
            print(f"{name}: ALCE {args.items / a:,.0f} items/s (medians of {args.repeat}; runs: {runs})", flush=True)
            for side, what in (("function", "function"), ("command", "score_files")):
                r = statistics.median(times[side])
                print(
                    f"  rageval {what:11s} {args.items / r:8,.0f} items/s; ALCE / rageval = {a / r:.2f}x; "
                    f"load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
