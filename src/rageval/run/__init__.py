"""The run engine: one typed plan, one loop, one run directory, behind every command (docs/architecture.md).

* :mod:`rageval.run.plan` — :class:`~rageval.run.plan.Plan`: settings, items and their sources
  (compress and read, given by a file, saved records), diagnostics, scoring options, what built it;
* :mod:`rageval.run.parts` — building and closing the judge, readers, compressors;
* :mod:`rageval.run.engine` — :func:`~rageval.run.engine.execute`: the one loop;
* :mod:`rageval.run.execute` — one batch: compress, read, score through the catalog;
* :mod:`rageval.run.cache` — the per-record cache and ``records.jsonl``;
* :mod:`rageval.run.rundir` — :class:`~rageval.run.rundir.RunDir` and the
  :class:`~rageval.run.rundir.Manifest`, read and written by every command (0.1.0 migrated);
* :mod:`rageval.run.lock` — one writer per run directory;
* :mod:`rageval.run.scale` — the same loop on Ray.

The front-ends (``rageval.suite``, ``rageval.score``, ``rageval rescore``, ``rageval.audit``) build a plan and read
a run directory; nothing here imports them.  Names are imported on first use (``rageval --help`` stays fast).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Manifest", "Plan", "RunDir", "RunDirError", "RunResult", "execute"]

_WHERE = {
    "Manifest": "rageval.run.rundir",
    "RunDir": "rageval.run.rundir",
    "RunDirError": "rageval.run.rundir",
    "Plan": "rageval.run.plan",
    "RunResult": "rageval.run.engine",
    "execute": "rageval.run.engine",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'rageval.run' has no attribute {name!r}")
