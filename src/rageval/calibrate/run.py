"""``rageval calibrate``'s implementation: the judge, built as a run's is, scored against a human-label file.

A calibration reads human labels, not a run: WiCE claims (:mod:`rageval.calibrate.core`) or ALCE's human
citation judgments (:mod:`rageval.calibrate.alce`).  Its judge is built the way the engine builds a run's
(:func:`~rageval.calibrate.judge.judge_runner`: a :class:`~rageval.judges.spec.JudgeSpec` — the spec, the threshold, its params —
loaded by :func:`rageval.run.parts.load_judge`, one :class:`~rageval.judges.base.JudgeRunner` with its sqlite
cache); :func:`run_calibration` reads the file, scores it and formats the figures (the command is
:mod:`rageval.calibrate.cli`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rageval.calibrate.alce import calibrate_alce_human, format_alce_report, load_alce_human
from rageval.calibrate.core import calibrate, format_report, load_wice
from rageval.scoring import DEFAULT_JUDGE, DEFAULT_THRESHOLD

__all__ = ["FORMATS", "run_calibration"]

#: the human-label files a calibration reads
FORMATS = ("wice", "alce-human")


def run_calibration(
    fmt: str,
    path: str | None,
    *,
    judge: Any = DEFAULT_JUDGE,
    threshold: float = DEFAULT_THRESHOLD,
    premise: str = "bm25",
    k: int = 5,
    limit: int | None = None,
    dtype: Any = None,
    max_length: int | None = 512,
    cache_dir: Any = None,
    judge_params: Mapping[str, Any] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Score ``judge`` on the human-label file ``path`` of format ``fmt`` (``wice``: default the shipped WiCE
    sample; ``alce-human``: needs the file), its first ``limit`` rows or sentences; ``(report text, figures)``."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    opts = dict(
        judge=judge,
        threshold=threshold,
        cache_dir=cache_dir,
        dtype=dtype,
        max_length=max_length,
        judge_params=judge_params,
    )
    if fmt == "alce-human":
        if not path:
            raise ValueError(
                "--format alce-human needs the file: rageval calibrate --format alce-human "
                "human_eval_citations_completed.json --judge ..."
            )
        sentences = load_alce_human(path)
        if limit:
            sentences = sentences[:limit]
        r = calibrate_alce_human(sentences, **opts)
        return format_alce_report(r), r
    rows = load_wice(path)
    if limit:
        rows = rows[:limit]
    r = calibrate(rows, premise=premise, k=k, **opts)
    return format_report(r), r
