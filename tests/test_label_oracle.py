"""The oracle check of the judge-error correction (docs/score.md#human-labels): a second judge's decisions play
the human labels of a score run with three settings and several pairs per question.  Its own means (every pair of
every question decided by it) are the truth: the PPI++ means and paired contrasts from labels on half the
questions recover them within their intervals, and where the two judges disagree on a contrast's sign the
findings say that the judge-only conclusion flips.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from rageval.judges.lexical import LexicalJudge
from rageval.labels.apply import human_values
from rageval.labels.export import export_labels
from rageval.report import build_report
from rageval.score.run import ScoreOptions, score_files

STRICT = 0.8  # the second judge: the lexical judge at a stricter threshold than the run's 0.5


def _words(rng: random.Random, k: int) -> list[str]:
    return [f"w{rng.randrange(10**6):06d}" for _ in range(k)]


def _lines(n: int, seed: int) -> list[dict]:
    """Per question three units of distinct made-up words; three systems answering with two or three cited
    sentences: ``copy`` (a unit's words, or words of none), ``para`` (55-75% of the cited unit's words: the run's
    judge finds it supported, the strict one not) and ``multi`` (one sentence citing two units, precision's
    single and leave-one-out pairs)."""
    rng = random.Random(seed)
    out = []
    for q in range(n):
        units = [_words(rng, 10) for _ in range(3)]
        texts = [" ".join(u) + "." for u in units]
        ctx = {
            "units": [{"text": t, "source_ids": [f"d{k}"]} for k, t in enumerate(texts)],
            "sources": [{"id": f"d{k}", "text": t} for k, t in enumerate(texts)],
        }

        def part(k: int, share: float, units: list[list[str]] = units) -> str:
            kept = rng.sample(units[k], round(10 * share))
            return " ".join(kept + _words(rng, 10 - len(kept)))

        copy = [f"{part(0, 1.0)} [1].", f"{part(1, 1.0 if rng.random() < 0.5 else 0.0)} [2]."]
        para = [f"{part(k, rng.choice([0.6, 0.7]))} [{k + 1}]." for k in range(2)]
        multi = [f"{' '.join(units[0][:5] + units[1][:5])} [1][2].", f"{part(2, rng.choice([0.4, 0.9]))} [3]."]
        for system, sentences in (("copy", copy), ("para", para), ("multi", multi)):
            out.append(
                {
                    "id": f"q{q:02d}",
                    "system": system,
                    "question": f"question {q}?",
                    "answer": " ".join(sentences),
                    **ctx,
                }
            )
    return out


def _strict_labels(src: Path, dst: Path) -> Path:
    rows = [json.loads(x) for x in src.read_text().splitlines()]
    probs = LexicalJudge().predict([r["premise"] for r in rows], [r["hypothesis"] for r in rows])
    dst.write_text("".join(json.dumps({**r, "label": p >= STRICT}) + "\n" for r, p in zip(rows, probs)))
    return dst


def test_a_second_judge_as_labeller_is_recovered(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in _lines(40, seed=5)))
    run = tmp_path / "run"
    options = ScoreOptions(
        judge="lexical",
        diagnostics=["emitted_precision", "emitted_recall", "grounded_precision", "grounded_recall"],
        resamples=400,
        baseline="copy",
    )
    score_files([str(path)], run, options=options, build_report=False, progress=False)

    # the truth: every pair of every question decided by the second judge
    every = export_labels(run, tmp_path / "all", n=40, seed=0)
    assert len(every["questions"]) == 40 and every["pairs"] > 3 * 40 * 2  # several pairs per question
    truth_values = human_values(run, _strict_labels(tmp_path / "all" / "labels.jsonl", tmp_path / "all.jsonl"))
    assert len(truth_values.labelled) == 40

    def truth(setting: str, metric: str, minus: str | None = None) -> float:
        vals = []
        for per in truth_values.values.values():
            a = per[setting][metric]
            b = None if minus is None else per[minus][metric]
            if a is not None and (minus is None or b is not None):
                vals.append(a - (b or 0.0))
        return sum(vals) / len(vals)

    # half the questions labelled by the second judge
    export_labels(run, tmp_path / "half", n=20, seed=3)
    labels = _strict_labels(tmp_path / "half" / "labels.jsonl", tmp_path / "half.jsonl")
    build_report(run, human_labels=labels, plots=False)
    report = json.loads((run / "report.json").read_text())
    ppi = report["ppi"]
    assert ppi["labels"]["questions_labelled"] == 20 and ppi["labels"]["questions_unlabelled"] == 0

    means = [m for m in ppi["means"] if m["ci_low"] is not None]
    assert len(means) == 12  # 3 settings x 4 metrics
    covered = [m["ci_low"] - 1e-12 <= truth(m["setting"], m["metric"]) <= m["ci_high"] + 1e-12 for m in means]
    assert sum(covered) >= 11, [(m["setting"], m["metric"]) for m, c in zip(means, covered) if not c]
    # the judge-only intervals of the para setting's recall miss the second judge's mean (the two disagree there)
    para = next(m for m in means if (m["setting"], m["metric"]) == ("para", "emitted_recall"))
    assert not para["judge_ci_low"] <= truth("para", "emitted_recall") <= para["judge_ci_high"]

    contrasts = [c for c in ppi["contrasts"] if c["ci_low"] is not None]
    assert contrasts
    inside = [c["ci_low"] - 1e-12 <= truth(c["a"], c["metric"], c["b"]) <= c["ci_high"] + 1e-12 for c in contrasts]
    assert sum(inside) >= 0.9 * len(contrasts)

    # para - copy on recall: the run's judge says para is better, the second judge worse
    flip = next(c for c in contrasts if {c["a"], c["b"]} == {"para", "copy"} and c["metric"] == "emitted_recall")
    assert flip["flip"] == "sign" and flip["judge_effect"] * truth(flip["a"], "emitted_recall", flip["b"]) < 0
    texts = [f["text"] for f in report["findings"]]
    said = [t for t in texts if re.search(r"`(para|copy)` − `(para|copy)` on `emitted_recall` changes sign", t)]
    assert said, texts
    assert "Judge-error correction" in (run / "report.html").read_text()
