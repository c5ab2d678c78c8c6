"""Label files: the exported ``labels.jsonl`` or its CSV twin, read with each ``label`` parsed
(docs/score.md#human-labels)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rageval.labels.errors import LabelError

__all__ = ["LabelRow", "parse_label", "read_labels"]

_TRUE = {"true", "1", "supported", "yes", "s"}
_FALSE = {"false", "0", "unsupported", "no", "u", "not_supported"}


def parse_label(value: Any, where: str) -> bool | None:
    """A label cell as True (supported), False (unsupported) or None (not labelled); anything else an error.

    >>> parse_label("supported", "x"), parse_label(0, "x"), parse_label(None, "x"), parse_label("", "x")
    (True, False, None, None)
    """
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise LabelError(f"{where}: label {value!r} is not true/false, 1/0, supported/unsupported or null")


@dataclass(frozen=True)
class LabelRow:
    id: str
    question_id: str
    label: bool | None


def read_labels(path: str | Path) -> list[LabelRow]:
    """The rows of a label file (JSON lines, or CSV when its name ends in ``.csv``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise LabelError(f"{path}: cannot read the label file ({err})") from None
    rows: list[LabelRow] = []
    if path.suffix.lower() == ".csv":
        for lineno, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
            if "id" not in row or "label" not in row:
                raise LabelError(f"{path}: a label CSV needs the columns id, question_id and label")
            rows.append(
                LabelRow(row["id"], row.get("question_id") or "", parse_label(row["label"], f"{path}:{lineno}"))
            )
        return rows
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise LabelError(f"{path}:{lineno}: not a JSON object (a label line)") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
            raise LabelError(f"{path}:{lineno}: a label line needs an 'id' (the exported pair id)")
        rows.append(
            LabelRow(obj["id"], str(obj.get("question_id") or ""), parse_label(obj.get("label"), f"{path}:{lineno}"))
        )
    return rows
