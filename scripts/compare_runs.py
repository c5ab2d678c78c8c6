"""Compare two run directories file by file (byte for byte): the check that a refactoring changed no number.

    python scripts/compare_runs.py RUN_A RUN_B [FILE ...]

FILE defaults to records.jsonl, summary.csv and contrasts.csv.  Exits 1 and names the first differing line
of each file that differs; prints "same" for each file that does not.
"""

from __future__ import annotations

import sys
from pathlib import Path

DEFAULT = ("records.jsonl", "summary.csv", "contrasts.csv")


def compare(a: Path, b: Path, names: tuple[str, ...] = DEFAULT) -> int:
    bad = 0
    for name in names:
        x, y = a / name, b / name
        if not x.is_file() or not y.is_file():
            print(f"{name}: missing in {a if not x.is_file() else b}")
            bad += 1
            continue
        bx, by = x.read_bytes(), y.read_bytes()
        if bx == by:
            print(f"{name}: same ({len(bx):,} bytes)")
            continue
        bad += 1
        for i, (lx, ly) in enumerate(zip(bx.splitlines(), by.splitlines()), 1):
            if lx != ly:
                print(f"{name}: differs at line {i}:\n  {lx[:200]!r}\n  {ly[:200]!r}")
                break
        else:
            print(f"{name}: differs in length ({len(bx.splitlines())} vs {len(by.splitlines())} lines)")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(compare(Path(sys.argv[1]), Path(sys.argv[2]), tuple(sys.argv[3:]) or DEFAULT))
