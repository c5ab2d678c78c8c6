"""Progress bars on standard error: a record count or a file's bytes (tqdm, imported only when a bar is shown).

The engine's bar of the records a run scores (:mod:`rageval.run.engine`) and the report's bar of the records it
reads (:mod:`rageval.report.load`) are both made here.
"""

from __future__ import annotations

import sys
from typing import Protocol

__all__ = ["Bar", "progress"]


class Bar(Protocol):
    """What a caller does with a bar: move it on, close it."""

    def update(self, n: int = 1) -> object: ...

    def close(self) -> None: ...


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def progress(
    total: int | None, enabled: bool, *, desc: str = "rageval", unit: str = "rec", terminal: bool = False
) -> Bar:
    """A tqdm bar on stderr (records, or ``unit``: ``"B"`` counts bytes, shown as kB, MB, ...), or one that shows
    nothing; ``terminal``: shown only when stderr is a terminal (never in a pipe or a log)."""
    if not enabled:
        return _NoBar()
    from tqdm import tqdm

    bar: Bar = tqdm(
        total=total,
        unit=unit,
        unit_scale=unit == "B",
        desc=desc,
        file=sys.stderr,
        dynamic_ncols=True,
        disable=None if terminal else False,  # None: tqdm's own test, off where stderr is not a terminal
    )
    return bar
