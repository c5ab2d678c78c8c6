"""The replay judge: recorded probabilities (or decisions) looked up by (premise, hypothesis).

For rescoring saved runs without a model, and for parity tests.  The file is
JSON lines, one pair per line::

    {"premise": "...", "hypothesis": "...", "probability": 0.93}
    {"premise": "...", "hypothesis": "...", "decision": true}

(``decision`` true/false is replayed as 1.0/0.0).  A pair that was not
recorded is an error that names it, never a silent 0.  The judge id is
``replay:`` + the sha256 of the file's bytes, so a changed recording never
reuses stale cache entries.  :func:`save_replay` writes what a
:class:`~rageval.judges.base.JudgeRunner` has scored in a session.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from rageval.judges.base import JudgeError

__all__ = ["ReplayJudge", "save_replay"]


class ReplayJudge:
    uses_torch = False
    batch_size = 4096
    tokenizer = None

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"replay judge file not found: {self.path} (expected JSON lines of premise/hypothesis/probability)")
        data = self.path.read_bytes()
        self.id = "replay:" + hashlib.sha256(data).hexdigest()[:16]
        self._table: dict[tuple[str, str], float] = {}
        for lineno, line in enumerate(data.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                key = (row["premise"], row["hypothesis"])
            except (json.JSONDecodeError, KeyError, TypeError) as err:
                raise ValueError(f"{self.path}:{lineno}: expected an object with 'premise' and 'hypothesis' ({err})") from err
            if "probability" in row:
                p = float(row["probability"])
            elif "decision" in row:
                p = 1.0 if row["decision"] in (True, 1, "1", "true") else 0.0
            else:
                raise ValueError(f"{self.path}:{lineno}: needs 'probability' (float) or 'decision' (bool)")
            self._table[key] = p

    def predict(self, premises: list[str], hypotheses: list[str]) -> list[float]:
        out = []
        for p, h in zip(premises, hypotheses):
            try:
                out.append(self._table[(p, h)])
            except KeyError:
                raise JudgeError(
                    f"replay judge {self.path} has no recorded pair for hypothesis {h!r:.80} "
                    f"with premise {p!r:.80}; record it or use a model judge"
                ) from None
        return out

    def __len__(self) -> int:
        return len(self._table)

    def __repr__(self) -> str:
        return f"ReplayJudge({str(self.path)!r}, {len(self)} pairs)"


def save_replay(path: str | os.PathLike, runner) -> int:
    """Write every pair a :class:`JudgeRunner` scored (memo) as a replay file; return the count."""
    rows = sorted(runner._memo.items())
    with open(path, "w", encoding="utf-8") as f:
        for (p, h), prob in rows:
            f.write(json.dumps({"premise": p, "hypothesis": h, "probability": prob}, ensure_ascii=False) + "\n")
    return len(rows)
