"""The garbage collector kept off the caller's heap while rageval scores (:func:`heap_frozen`).

A full collection walks every tracked object of the process, and scoring's many small allocations trigger one
again and again: in a process that holds a large heap (one that imported torch tracks some 300,000 objects) that
was about a third of ``score_files``' time and a quarter of ``attribution_scores_batch``'s
(``bench/bench_alce_functions.py``).  The run engine and the attribution engine score inside a
:func:`heap_frozen` block, and the attribution engine, whose one call is bounded by its inputs, with the collector
paused (:func:`collector_paused`).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused", "freeze_survivors", "heap_frozen"]

_frozen_depth = 0  # how many heap_frozen blocks are open (the outermost unfreezes)


@contextmanager
def heap_frozen() -> Iterator[None]:
    """The objects alive when the block starts left out of the garbage collector's passes until it ends
    (:func:`gc.freeze`; the block's own objects are collected as usual; a nested block freezes what the outer
    one made since).

    A full collection walks every tracked object of the process, and a run's allocations trigger one again and
    again: in a process that holds a large heap (one that imported torch tracks some 300,000 objects) that was
    about a third of ``score_files``' time (``bench/bench_alce_functions.py``).  Nothing frozen is lost: the
    objects go back to the oldest generation when the outermost block ends.  A caller that froze objects itself
    is left as it is.
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
    so the collector's time grew with the square of the records (``bench/bench_stream.py``: scoring CPU
    ~n^1.1, a quarter of it the collector's at 20,000 records, which found nothing to collect).  A batch's own
    garbage is freed by reference counting before this; a cycle that was alive when frozen is collected when the
    outermost block ends."""
    if _frozen_depth:
        gc.freeze()


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block, then as it was (:func:`gc.disable`).

    For a piece of work bounded by its inputs that allocates many objects and leaves little cyclic garbage: one
    call of the attribution engine makes a few hundred thousand containers (its sentences, premises, pairs and
    rows), and the collections they trigger found nothing to collect yet took a quarter of its time
    (``bench/bench_alce_functions.py``).  What the block leaves in cycles is collected after it, as usual; memory
    is freed by reference counting inside it as ever.  A collector the caller turned off stays off.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
