"""The replay judge: recorded probabilities (or decisions) looked up by (premise, hypothesis).

For rescoring saved runs without a model, and for parity tests.  The file is
JSON lines, one pair per line::

    {"premise": "...", "hypothesis": "...", "probability": 0.93}
    {"premise": "...", "hypothesis": "...", "decision": true}

(``decision`` true/false is replayed as 1.0/0.0).  An abstention is recorded
as ``"probability": null`` or ``"probability": "abstain"`` (``"decision"``
likewise) and replayed as NaN, the protocol's abstention.  Any other value
(a probability outside [0, 1], a string) is an error naming the file and line,
and so is a pair that was not recorded, never a silent 0.  The judge id is
``replay:`` + the sha256 of the file's bytes, so a changed recording never
reuses stale cache entries.  :func:`save_replay` writes what a
:class:`~rageval.judges.base.JudgeRunner` has scored in a session (abstentions as ``null``).
"""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path

from rageval.infiles import decode, iter_json_lines, read_bytes
from rageval.io import json_text
from rageval.judges.base import JudgeError

__all__ = ["ReplayJudge", "save_replay"]


_ABSTAIN = (None, "abstain")


def _probability(v) -> float | None:
    if v in _ABSTAIN:
        return math.nan
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    p = float(v)
    return p if math.isnan(p) or 0.0 <= p <= 1.0 else None


def _decision(v) -> float | None:
    if v in _ABSTAIN:
        return math.nan
    if v in (True, "1", "true"):  # True == 1 == 1.0
        return 1.0
    if v in (False, "0", "false"):
        return 0.0
    return None


class ReplayJudge:
    uses_torch = False
    batch_size = 4096
    tokenizer = None

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if not self.path.exists():
            raise FileNotFoundError(
                f"replay judge file not found: {self.path} (expected JSON lines of premise/hypothesis/probability)"
            )
        data = read_bytes(self.path, what="the replay judge file")
        self.id = "replay:" + hashlib.sha256(data).hexdigest()[:16]
        self._table: dict[tuple[str, str], float] = {}
        src = str(self.path)
        for lineno, row in iter_json_lines(
            decode(data, src, what="the replay judge file"), src, where=lambda s, n: f"{s}:{n}"
        ):
            try:
                key = (row["premise"], row["hypothesis"])
                hash(key)
            except (KeyError, TypeError) as err:
                raise ValueError(
                    f"{self.path}:{lineno}: expected an object with 'premise' and 'hypothesis' ({err})"
                ) from None
            if "probability" in row:
                p = _probability(row["probability"])
            elif "decision" in row:
                p = _decision(row["decision"])
            else:
                raise ValueError(f"{self.path}:{lineno}: needs 'probability' (float) or 'decision' (bool)")
            if p is None:
                field = "probability" if "probability" in row else "decision"
                raise ValueError(
                    f"{self.path}:{lineno}: {field} {row[field]!r} is not "
                    + ("a number in [0, 1]" if field == "probability" else "true or false")
                    + ", null or 'abstain' (an abstention)"
                )
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
    """Write every pair a :class:`JudgeRunner` scored (memo) as a replay file; return the count.

    Abstentions (NaN) are written as ``"probability": null``.
    """
    rows = sorted(runner._memo.items())
    with open(path, "w", encoding="utf-8") as f:
        for (p, h), prob in rows:
            value = None if math.isnan(prob) else prob
            f.write(
                json_text({"premise": p, "hypothesis": h, "probability": value}, sort_keys=False, allow_nan=False)
                + "\n"
            )
    return len(rows)
