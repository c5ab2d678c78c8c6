"""``rageval calibrate``: a judge against human support labels — WiCE claims (:mod:`rageval.calibrate.core`)
and ALCE's human citation judgments, scored through rageval's own citation gate (:mod:`rageval.calibrate.alce`).

A front-end (docs/architecture.md#layers): it builds judges and runs the attribution gate; nothing below it
imports it."""

from __future__ import annotations

from rageval.calibrate.alce import calibrate_alce_human, format_alce_report, load_alce_human
from rageval.calibrate.core import LABELS, auroc, calibrate, calibrate_cmd, load_wice

__all__ = [
    "LABELS",
    "auroc",
    "calibrate",
    "calibrate_alce_human",
    "calibrate_cmd",
    "format_alce_report",
    "load_alce_human",
    "load_wice",
]
