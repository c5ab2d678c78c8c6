"""Benchmark: rageval scoring an ALCE ASQA result file in-process, against ALCE's own functions on the same items.

    .venv/bin/python bench/bench_alce_functions.py ALCE_DIR              # 2,000 items, 3 runs of each
    .venv/bin/python bench/bench_alce_functions.py ALCE_DIR --items 500 --repeat 1

``ALCE_DIR`` holds ``eval.py`` and ``utils.py`` of a checkout of princeton-nlp/ALCE (nothing of ALCE is shipped
with rageval: point the script at your own copy).  ALCE's functions are loaded as the parity check loads them
(``tests/fixtures/alce_parity/run_alce_eval.py``): its NLI call is the lexical judge's decision (probability
>= 0.5) and ``nltk.sent_tokenize`` is Punkt with rageval's ALCE-mode parameters, so both sides apply the same
entailment rule to the same sentences.

The items: a generated ALCE ASQA result file (``{"args", "data"}``; seeded random words, so no two items share
a text), each with 5 documents of two 15-word sentences, two ``qa_pairs`` of short answers and a three-sentence
output citing ``[1]``..``[5]``.  Two metric sets, each timed in this process, the two sides alternated:

* **str-EM**: ALCE ``compute_str_em`` (citations removed first, as ``main()`` does) against
  ``rageval.score.score_files(FILE, fmt="alce", diagnostics=["str_em"])``;
* **citations**: ALCE ``compute_autoais(at_most_citations=3)`` against the same with
  ``["emitted_precision", "emitted_recall"]`` (ALCE's citation recall and precision in ALCE mode).

rageval's time is the whole in-process command path (reading and checking the file, hashing, the record cache,
``records.jsonl``), without the report.  Printed: items per second of each side, and ALCE's time / rageval's
time (>= 1.0: rageval at least as fast), with the load average and thread settings.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import logging
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


def rageval_score(path: Path, out: Path, diagnostics: list[str]) -> None:
    from rageval.score import ScoreOptions, score_files

    shutil.rmtree(out, ignore_errors=True)
    score_files([str(path)], out, fmt="alce", options=ScoreOptions(diagnostics=diagnostics), build_report=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("alce_dir", type=Path, help="folder with ALCE's eval.py and utils.py")
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not (args.alce_dir / "eval.py").is_file():
        raise SystemExit(f"{args.alce_dir}: no eval.py (point the script at a copy of princeton-nlp/ALCE)")
    os.environ.update({"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    import torch

    torch.set_num_threads(1)
    alce = _load_alce(args.alce_dir)
    logging.getLogger("eval").setLevel(logging.WARNING)  # eval.py logs every sentence's citations at INFO
    items = make_items(args.items)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; BLAS/OpenMP/torch threads 1")
    sets = {
        "str-EM": (lambda data: alce_str_em(alce, data), ["str_em"]),
        "citations": (lambda data: alce_citations(alce, data), ["emitted_precision", "emitted_recall"]),
    }
    with tempfile.TemporaryDirectory(prefix="bench-alce-") as tmp:
        path = Path(tmp) / "asqa_result.json"
        path.write_text(json.dumps({"args": {"dataset_name": "asqa"}, "data": items}))
        for name, (alce_fn, diagnostics) in sets.items():
            times: dict[str, list[float]] = {"ALCE": [], "rageval": []}
            for _ in range(args.repeat):
                data = json.loads(json.dumps(items))  # a fresh copy: ALCE's functions change the items
                t = time.perf_counter()
                alce_fn(data)
                times["ALCE"].append(time.perf_counter() - t)
                t = time.perf_counter()
                rageval_score(path, Path(tmp) / "out", diagnostics)
                times["rageval"].append(time.perf_counter() - t)
            a, r = statistics.median(times["ALCE"]), statistics.median(times["rageval"])
            print(
                f"{name:9s}: ALCE {args.items / a:8.0f} items/s, rageval {args.items / r:8.0f} items/s "
                f"(medians of {args.repeat}; runs ALCE {', '.join(f'{x:.2f}' for x in times['ALCE'])} s, "
                f"rageval {', '.join(f'{x:.2f}' for x in times['rageval'])} s); ALCE / rageval = {a / r:.2f}x; "
                f"load {os.getloadavg()[0]:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
