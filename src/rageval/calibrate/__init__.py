"""``rageval calibrate``: a judge against human support labels — WiCE claims (:mod:`rageval.calibrate.core`)
and ALCE's human citation judgments, scored through rageval's own citation gate (:mod:`rageval.calibrate.alce`).

A front-end (docs/architecture.md#layers) of the same shape as the others: the command in
:mod:`rageval.calibrate.cli`, the implementation in :mod:`rageval.calibrate.run`, which builds the judge as the
engine builds a run's (:func:`rageval.run.parts.load_judge`); it reads human-label files, not runs, and nothing
below it imports it."""

from __future__ import annotations

from rageval.calibrate.alce import calibrate_alce_human, format_alce_report, load_alce_human
from rageval.calibrate.core import LABELS, auroc, calibrate, load_wice
from rageval.calibrate.judge import judge_runner
from rageval.calibrate.run import run_calibration

__all__ = [
    "LABELS",
    "auroc",
    "calibrate",
    "calibrate_alce_human",
    "format_alce_report",
    "judge_runner",
    "load_alce_human",
    "load_wice",
    "run_calibration",
]
