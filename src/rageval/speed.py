"""The speed tricks rageval keeps, in one place: each bought at least 15% of a real command's time.

Each trick was timed with and without it (``bench/bench_tricks.py``: the demo suite and a 10,000-record
``rageval score``, alternated pairs of runs with the load printed); the table of every trick measured, its
share and the decision is in ``docs/architecture.md`` ("Speed tricks"); a trick that bought less was removed.
The commands apply these around the pure functions (the run engine, ``rageval score``'s reading of its
inputs), never inside ``rageval.diagnostics`` (a test reads that package for any collector switch).

====================================  ========================================================================
trick                                 why it stays
====================================  ========================================================================
:func:`heap_frozen`,                  a run's objects left out of the garbage collector's full passes, and
:func:`freeze_survivors`              what survives each batch too: the collector walked a heap that grows
                                      with the run again and again and found nothing to collect
====================================  ========================================================================

The line store (:class:`rageval.linestore.KeptLines`) is not a speed trick: it is kept for memory (streamed
inputs and records hold 28 bytes a line, not the lines), with its figures in the same table.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["freeze_survivors", "heap_frozen"]

_frozen_depth = 0  # how many heap_frozen blocks are open (the outermost unfreezes)


@contextmanager
def heap_frozen() -> Iterator[None]:
    """The objects alive when the block starts left out of the garbage collector's passes until it ends
    (:func:`gc.freeze`; the block's own objects are collected as usual; a nested block freezes what the outer
    one made since).

    A full collection walks every tracked object of the process, and a run's allocations trigger one again and
    again.  Nothing frozen is lost: the objects go back to the oldest generation when the outermost block ends.
    A caller that froze objects itself is left as it is.
    """
    global _frozen_depth
    if _frozen_depth == 0 and gc.get_freeze_count():
        yield
        return
    _frozen_depth += 1
    gc.freeze()
    try:
        yield
    finally:
        _frozen_depth -= 1
        if _frozen_depth == 0:
            gc.unfreeze()


def freeze_survivors() -> None:
    """Inside a :func:`heap_frozen` block, what is alive now joins the frozen objects (:func:`gc.freeze`); a no-op
    outside one.  Called after each batch: the objects a run keeps (its items, the records' lines waiting for
    their turn, the judges' memos) grow with the run, and a full collection walked all of them again and again,
    so the collector's time grew with the square of the records.  A batch's own garbage is freed by reference
    counting before this; a cycle that was alive when frozen is collected when the outermost block ends."""
    if _frozen_depth:
        gc.freeze()
