"""What a finished run prints on the console from its report: the judge, the headline table and the findings,
the Holm families, and why nothing could be compared (``rageval suite``, ``score``, ``report`` print these).

Every line is at most :data:`~rageval.report.first_screen.WIDTH` (100) characters: prose wraps at words
(:func:`say`), the table into blocks of columns; a word longer than that (a path) stays whole.  The command
prints the report's path last (docs/statistics.md#the-first-screen)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rageval.escape import console_text, echo
from rageval.report.first_screen import console_blocks, question_set_notes, wrap
from rageval.report.headline import headline_metrics
from rageval.report.judge_note import judge_note

__all__ = ["echo_headline", "echo_holm", "nothing_scored", "say"]


def say(line: str, err: bool = False, indent: str = "  ") -> None:
    """``line`` echoed (:func:`rageval.escape.echo`) in pieces of at most 100 characters (:func:`wrap`), measured
    after the console rule has written its control characters as visible escapes."""
    for piece in wrap(console_text(line), indent=indent):
        echo(piece, err=err)


def nothing_scored(status_counts: Mapping[str, int], report_json: Path | None) -> str | None:
    """Why a finished run has nothing to compare, else None: no record is ``ok``, or (from ``report.json``) no
    question is ``ok`` in every setting that ran.  The counts are in the message.

    >>> nothing_scored({"reader_error": 6}, None)
    'no record is ok (reader_error: 6): nothing was scored'
    >>> nothing_scored({"ok": 3, "judge_error": 1}, None) is None
    True
    """
    counts = ", ".join(f"{k}: {v}" for k, v in sorted(status_counts.items())) or "no records"
    if not status_counts.get("ok"):
        return f"no record is ok ({counts}): nothing was scored"
    if report_json is None:
        return None
    try:
        cohort = json.loads(Path(report_json).read_text(encoding="utf-8")).get("cohort") or {}
    except (OSError, json.JSONDecodeError):
        return None
    if cohort.get("n") == 0:
        return (
            f"the common cohort is empty: none of the {cohort.get('n_questions')} questions is ok in every setting "
            f"that ran ({counts}); nothing can be compared"
        )
    return None


def echo_headline(summary: Mapping[str, Any], err: bool = False) -> None:
    """Print the judge (:mod:`rageval.report.judge_note`), each setting's headline means with their 95%
    intervals (:func:`rageval.report.first_screen.console_blocks`), where the contrasts use other questions than
    the means, and the findings, each under a title line."""
    note = judge_note(summary.get("manifest"))
    for line in note.lines():
        say(line.replace("`", ""), err=err)
    cohort = summary.get("cohort") or {}
    interval = "; [95% CI]" if "frontier" in summary else ""
    say(
        f"headline means on the common cohort ({cohort.get('n', '?')} of {cohort.get('n_questions', '?')} "
        f"questions{interval}; n=k: k defined; — undefined):",
        err=err,
    )
    keys = headline_metrics(summary)
    for line in console_blocks(summary, keys):
        echo(line, err=err)
    for line in question_set_notes(summary, keys):
        say("note: " + line.replace("`", ""), err=err)
    found = summary.get("findings") or []
    if found:  # the findings are the last lines before the report's path (rageval.report.findings)
        from rageval.report.findings import findings_lines

        say(f"findings (judge {note.short()}; report.html shows them after this table):", err=err)
        for line in findings_lines(found):
            say(line, err=err)


def echo_holm(report_json: Path, prefix: str = "", err: bool = False) -> None:
    """Print the contrast count per family and the Holm scope recorded in ``report.json``."""
    from rageval.report.union import describe_holm

    try:
        holm = json.loads(report_json.read_text(encoding="utf-8")).get("holm")
    except (OSError, json.JSONDecodeError):
        return
    if holm:
        for line in describe_holm(holm):
            say(prefix + line, err=err)
