"""Which judge produced a run's numbers, its calibration figure where one is known, and whether the offline
stand-ins produced them: the lines the console, ``summary.md`` and ``report.html`` put beside the headline
table and the findings (docs/statistics.md#the-first-screen).

The judge is the one the run's manifest records (``models.judge``: the judge's id, e.g. ``lexical:v1``).
:data:`CALIBRATION` holds the figures measured against human labels, keyed by judge id, each with the command
that produced it (docs/judges.md#calibration-against-wice-human-support-labels); a judge without one is named
and said to have none.  The **offline stand-ins** are the model-free lexical judges and the extractive reader:
a run that used one shows the mechanics of the metrics, not a trained model's quality.

The lines keep `backquoted` spans for code: the console drops the backquotes, Markdown and HTML turn them into
code spans (each writer escapes by its own rule, :mod:`rageval.escape`).

>>> note = judge_note({"models": {"judge": "lexical:v1", "reader": {"reader": "extractive"}}})
>>> print("\\n".join(note.lines()))
Judge: `lexical:v1` (model-free word overlap); WiCE dev, partial support counted as unsupported (n = 349): balanced accuracy 0.682 (`rageval calibrate --judge lexical`).
Offline stand-ins produced these numbers (the model-free lexical judge, the extractive reader): these numbers show the mechanics, not model quality.
>>> judge_note({}).lines()
['Judge: none recorded in the manifest.']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CALIBRATION",
    "STAND_IN_JUDGES",
    "STAND_IN_READERS",
    "Calibration",
    "JudgeNote",
    "judge_json",
    "judge_note",
]


@dataclass(frozen=True)
class Calibration:
    """One calibration figure of a judge against human labels, and the command that produced it."""

    what: str  #: the judge in words
    data: str  #: the labelled rows the figure is over
    figure: str  #: the figure's name
    value: float
    n: int
    command: str

    def sentence(self) -> str:
        return f"{self.data} (n = {self.n}): {self.figure} {self.value:.3f} (`{self.command}`)"


#: the known calibration figures, keyed by judge id (docs/judges.md#calibration-against-wice-human-support-labels;
#: each measured with its command at threshold 0.5 on the 349 WiCE dev rows shipped in ``rageval.data``)
CALIBRATION: Mapping[str, Calibration] = {
    "lexical:v1": Calibration(
        what="model-free word overlap",
        data="WiCE dev, partial support counted as unsupported",
        figure="balanced accuracy",
        value=0.682,
        n=349,
        command="rageval calibrate --judge lexical",
    ),
    "lexical-strict:v1": Calibration(
        what="model-free word overlap with refusal rules",
        data="WiCE dev, partial support counted as unsupported, out of fold",
        figure="balanced accuracy",
        value=0.669,
        n=349,
        command="python scripts/fit_strict_judge.py",
    ),
}

#: the judges whose numbers show the mechanics only (no model): the lexical judges' ids
STAND_IN_JUDGES: Mapping[str, str] = {
    "lexical:v1": "the model-free lexical judge",
    "lexical-strict:v1": "the model-free strict lexical judge",
}
#: the readers whose answers show the mechanics only (no model), by the reader's name in the manifest
STAND_IN_READERS: Mapping[str, str] = {"extractive": "the extractive reader"}

STAND_IN_CAVEAT = "these numbers show the mechanics, not model quality"


@dataclass(frozen=True)
class JudgeNote:
    """The run's judge (its id; None: none recorded), its calibration figure (None: none known) and the offline
    stand-ins that produced the numbers (in words; empty: none)."""

    judge: str | None
    calibration: Calibration | None
    stand_ins: tuple[str, ...]

    def judge_line(self) -> str:
        """``Judge: `id` (...)``: the judge with its calibration figure, or that none is known."""
        if self.judge is None:
            return "Judge: none recorded in the manifest."
        if self.calibration is None:
            return (
                f"Judge: `{self.judge}`; no calibration figure recorded for it "
                "(measure one: `rageval calibrate --judge <spec>`)."
            )
        c = self.calibration
        return f"Judge: `{self.judge}` ({c.what}); {c.sentence()}."

    def stand_in_line(self) -> str | None:
        """The caveat when an offline stand-in produced the numbers, else None."""
        if not self.stand_ins:
            return None
        return f"Offline stand-ins produced these numbers ({', '.join(self.stand_ins)}): {STAND_IN_CAVEAT}."

    def lines(self) -> list[str]:
        """The judge line, then the stand-in caveat where there is one."""
        caveat = self.stand_in_line()
        return [self.judge_line(), *([caveat] if caveat else [])]

    def lead(self) -> str:
        """The line that heads a findings block: the judge, and the stand-ins' caveat where it applies."""
        caveat = f"; offline stand-ins ({', '.join(self.stand_ins)}): {STAND_IN_CAVEAT}" if self.stand_ins else ""
        return f"Judge: `{self.short()}`{caveat}."

    def short(self) -> str:
        """The judge's id alone (``none recorded``: none), for a heading."""
        return self.judge if self.judge is not None else "none recorded"


def _readers(models: Mapping[str, Any]) -> list[str]:
    """The reader names the manifest records (``reader`` and each ``reader:<setting>``)."""
    out = []
    for k, v in models.items():
        if k == "reader" or k.startswith("reader:"):
            name = v.get("reader") if isinstance(v, Mapping) else v
            if isinstance(name, str):
                out.append(name)
    return out


def judge_note(manifest: Mapping[str, Any] | None) -> JudgeNote:
    """The judge note of a run from its manifest (``models.judge``; the readers ``models.reader[:<setting>]``)."""
    models = (manifest or {}).get("models") or {}
    if not isinstance(models, Mapping):
        models = {}
    found = models.get("judge")
    judge = str(found) if found is not None else None
    stand_ins = [STAND_IN_JUDGES[judge]] if judge is not None and judge in STAND_IN_JUDGES else []
    stand_ins += list(dict.fromkeys(STAND_IN_READERS[r] for r in _readers(models) if r in STAND_IN_READERS))
    return JudgeNote(judge, CALIBRATION.get(judge) if judge is not None else None, tuple(stand_ins))


def judge_json(manifest: Mapping[str, Any] | None) -> dict[str, Any]:
    """The judge note as JSON (``rageval score --json``): ``{"id", "calibration", "stand_ins", "caveat"}``, the
    calibration ``{"data", "figure", "value", "n", "command"}`` or None, the caveat None without a stand-in.

    >>> judge_json({"models": {"judge": "lexical:v1"}})["calibration"]["value"]
    0.682
    """
    note = judge_note(manifest)
    c = note.calibration
    cal = None if c is None else {"data": c.data, "figure": c.figure, "value": c.value, "n": c.n, "command": c.command}
    caveat = STAND_IN_CAVEAT if note.stand_ins else None
    return {"id": note.judge, "calibration": cal, "stand_ins": list(note.stand_ins), "caveat": caveat}
