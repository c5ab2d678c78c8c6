"""The record cache of a run directory: one JSON file per (setting, question), keyed by an input hash.

``cache/records/<setting>/<question>.json`` holds ``{"input_hash", "record"}``,
written atomically the moment a record is finished, so a killed run loses at
most the batch in flight.  A record is reused only when its input hash matches
(:func:`rageval.suite.plan.record_hash`).  ``records.jsonl`` is assembled from
the cache alone, in suite setting order then dataset question order, so a
resumed run ends with the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Iterable

from rageval.io import dump_json_line, write_json_atomic, write_text_atomic
from rageval.types import Record

__all__ = ["RecordCache", "safe_name"]


def safe_name(name: str) -> str:
    """A file-system-safe, collision-free name for a setting or question id."""
    return re.sub(r"[^A-Za-z0-9._@-]+", "_", name)[:80] + "-" + hashlib.sha1(name.encode()).hexdigest()[:8]


class RecordCache:
    """The ``cache/`` folder of one run directory."""

    def __init__(self, out_dir: Path):
        self.out_dir = Path(out_dir)
        self.root = self.out_dir / "cache" / "records"

    def path(self, setting: str, question_id: str) -> Path:
        return self.root / safe_name(setting) / f"{safe_name(question_id)}.json"

    def read(self, setting: str, question_id: str, input_hash: str) -> Record | None:
        """The cached record if its input hash matches, else None (a broken file is never trusted)."""
        path = self.path(setting, question_id)
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text())
        except (json.JSONDecodeError, OSError):
            return None
        if data.get("input_hash") != input_hash:
            return None
        return Record.from_dict(data["record"])

    def write(self, setting: str, question_id: str, input_hash: str, record: Record) -> None:
        write_json_atomic(self.path(setting, question_id), {"input_hash": input_hash, "record": record.to_dict()})

    def mark_suite(self, name: str, suite_hash: str) -> None:
        write_json_atomic(self.out_dir / "cache" / "suite.json", {"suite": {"name": name, "hash": suite_hash}})

    def assemble(self, settings: Iterable[str], question_ids: list[str]) -> int:
        """Write ``records.jsonl`` from the cache; return the number of records."""
        lines = []
        for name in settings:
            for qid in question_ids:
                data = json.loads(self.path(name, qid).read_text())
                lines.append(dump_json_line(data["record"]))
        write_text_atomic(self.out_dir / "records.jsonl", "\n".join(lines) + "\n")
        return len(lines)
