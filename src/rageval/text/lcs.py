"""ROUGE-Lsum's summary-level LCS over token ids: a compiled kernel (numba) and a pure-Python one, same numbers.

``rouge_score``'s ``rougeLsum`` (``_summary_level_lcs``): for each reference line ``r``, the union over the
candidate lines ``c`` of the positions of ``r`` on *one* longest common subsequence of ``r`` and ``c`` -- the one
its table walk finds (from the table's corner: a diagonal step on equal tokens, else left when the cell to the
left is larger than the one above, else up) -- then, in position order, a token of the union is a hit while the
reference and the candidate both have an unused copy of it (each hit uses one of each).  Recall = hits / reference
tokens, precision = hits / candidate tokens, F = 2PR / (P + R).  Which LCS the walk picks changes the union, so both
kernels walk the table exactly as ``rouge_score`` does; the tests compare them with ``rouge_score`` on every shipped
sample's texts and on random token strings.

**Kernels.**  :func:`summary_hits_python` is ``rouge_score``'s algorithm on tuples of ints, with one exact
shortcut: a reference token absent from the candidate line never matches, and its row of the table equals the row
above, so the walk passes it going up; such rows are left out of the table (the tests check this equality).
:func:`summary_hits_numba` (the table in full, no shortcut) scores a whole batch of (reference, candidate) pairs
in one compiled call, with numba (the ``fast`` extra: ``pip install 'rageval[fast]'``), imported lazily so the
light core stays light.

**Why numba, and when.**  The work is a small dynamic-programming table per pair of lines, with a walk back through
it: integer loops that no numpy operation vectorizes (each cell depends on its left neighbour), and no installed
compiled package computes this particular walk (edit-distance libraries pick their own LCS, which changes the
union).  numba compiles the loops of :mod:`rageval.text._lcs_numba` with no compiler at install time, and its
kernel runs about 8 times faster than the Python one (5 against 40 ns a cell on the 2-core development machine).
Its cost is fixed, once per process: importing numba and loading the compiled kernel from numba's on-disk cache
(``cache=True``) took 0.5 s of CPU there, the very first compile on a machine 2.1 s (docs/benchmarks.md, section
bench_alce_functions).  That is what the Python kernel spends on about :data:`NUMBA_MIN_CELLS` table cells -- an
ASQA run of some 1,400 answers against two long answers each.  So a process scores with the Python kernel until
the cells it has scored (this batch's included) reach that count, and with numba from then on (once loaded, for
every batch of at least :data:`NUMBA_BATCH_CELLS` cells): a run that never gets there never imports numba and is
never slower, and a long run pays the fixed cost at most once, after the Python kernel has spent about as much.
Without numba (or when it fails to import) the Python kernel scores everything.  ``RAGEVAL_LCS=python|numba``
forces a kernel (tests, benchmarks).

>>> ref, hyp = ((1, 2, 3, 4, 5),), ((1, 2, 9), (3, 5))
>>> summary_hits_python(ref, hyp)  # union of (1, 2) and (3, 5): 4 hits, 5 reference and 5 candidate tokens
4
>>> rouge_f(4, 5, 5)  # rouge_score's Score(precision=0.8, recall=0.8, fmeasure=0.8000000000000002)
0.8000000000000002
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from collections import Counter
from collections.abc import Sequence

__all__ = [
    "NUMBA_MIN_CELLS",
    "NUMBA_BATCH_CELLS",
    "lcs_indices",
    "summary_hits_python",
    "summary_hits_numba",
    "summary_hits_batch",
    "rouge_f",
    "numba_available",
    "backend",
]

Line = Sequence[int]
Doc = Sequence[Line]

#: the table cells (reference tokens x candidate tokens, summed over line pairs) the Python kernel scores in a
#: process before the compiled one is loaded: about the fixed cost of loading it (module doc)
NUMBA_MIN_CELLS = 12_000_000
#: once numba is loaded, the smallest batch (in cells) given to it; a smaller one is scored in Python
NUMBA_BATCH_CELLS = 20_000
_python_cells = 0  # cells the Python kernel has scored in this process
_numba_failed = False  # numba was found but did not import: the Python kernel from then on


def lcs_indices(ref: Line, can: Line) -> list[int]:
    """The positions of ``ref`` on rouge_score's LCS of ``ref`` and ``can`` (``lcs_ind``), in decreasing order.

    >>> lcs_indices((1, 2, 1), (1,))  # the walk meets the last 1 first
    [2]
    >>> lcs_indices((7, 8, 9), (8, 7, 9))  # two LCS of length 2: the walk goes up on a tie, keeping 7
    [2, 0]
    """
    present = set(can)
    rows = [k for k, t in enumerate(ref) if t in present]  # the exact shortcut (module doc)
    if not rows:
        return []
    n = len(can)
    prev = [0] * (n + 1)
    table = [prev]
    for k in rows:
        x = ref[k]
        row = [0] * (n + 1)
        left = 0
        for j in range(n):
            if can[j] == x:
                left = prev[j] + 1
            else:
                up = prev[j + 1]
                if up > left:  # noqa: PLR1730 (a comparison, not a call of max: this is the inner loop)
                    left = up
            row[j + 1] = left
        table.append(row)
        prev = row
    out = []
    i, j = len(rows), n
    while i > 0 and j > 0:
        k = rows[i - 1]
        if ref[k] == can[j - 1]:
            out.append(k)
            i -= 1
            j -= 1
        elif table[i][j - 1] > table[i - 1][j]:
            j -= 1
        else:
            i -= 1
    return out


def summary_hits_python(ref: Doc, hyp: Doc) -> int:
    """rouge_score's summary-level LCS hits of a reference and a candidate, each a sequence of lines of ids."""
    cnt_r: Counter[int] = Counter()
    cnt_c: Counter[int] = Counter()
    for line in ref:
        cnt_r.update(line)
    for line in hyp:
        cnt_c.update(line)
    hits = 0
    for r in ref:
        union: set[int] = set()
        for c in hyp:
            union.update(lcs_indices(r, c))
        for k in sorted(union):
            t = r[k]
            if cnt_c[t] > 0 and cnt_r[t] > 0:
                hits += 1
                cnt_c[t] -= 1
                cnt_r[t] -= 1
    return hits


def rouge_f(hits: int, m: int, n: int) -> float | int:
    """rouge_score's F-measure from the hits, the reference's ``m`` and the candidate's ``n`` tokens, with its types:
    the integer 0 when either side has no token (its ``Score(0, 0, 0)``), else a float."""
    if not m or not n:
        return 0
    recall = hits / m
    precision = hits / n
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


# -- the compiled kernel ----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def numba_available() -> bool:
    """numba is installed (the ``fast`` extra); found without importing it."""
    return importlib.util.find_spec("numba") is not None


def backend(cells: int) -> str:
    """``"numba"`` or ``"python"``: the kernel for a batch of ``cells`` table cells (module doc)."""
    forced = os.environ.get("RAGEVAL_LCS", "").strip().lower()
    if forced in ("python", "numba"):
        if forced == "numba" and not numba_available():
            raise RuntimeError("RAGEVAL_LCS=numba but numba is not installed: pip install 'rageval[fast]'")
        return forced
    if _numba_failed or not numba_available():
        return "python"
    if _KERNEL in sys.modules:
        return "numba" if cells >= NUMBA_BATCH_CELLS else "python"
    return "numba" if _python_cells + cells >= NUMBA_MIN_CELLS else "python"


_KERNEL = "rageval.text._lcs_numba"


def summary_hits_numba(docs: Sequence[Doc], pairs: Sequence[tuple[int, int]], vocab: int) -> list[int]:
    """:func:`summary_hits_python` of each ``(reference, candidate)`` pair of indexes into ``docs``, in one compiled
    call (``vocab``: one more than the largest id)."""
    import numpy as np

    tokens: list[int] = []
    line_start = [0]
    doc_line = [0]
    max_line = 1
    for doc in docs:
        for line in doc:
            tokens.extend(line)
            line_start.append(len(tokens))
            max_line = max(max_line, len(line))
        doc_line.append(len(line_start) - 1)
    if not pairs:
        return []
    ref = np.fromiter((p[0] for p in pairs), np.int64, len(pairs))
    hyp = np.fromiter((p[1] for p in pairs), np.int64, len(pairs))
    from rageval.text._lcs_numba import pair_hits  # numba: imported on the first compiled batch

    out = pair_hits(
        np.asarray(tokens, np.int64),
        np.asarray(line_start, np.int64),
        np.asarray(doc_line, np.int64),
        ref,
        hyp,
        max(vocab, 1),
        max_line,
    )
    return [int(h) for h in out]


def summary_hits_batch(docs: Sequence[Doc], pairs: Sequence[tuple[int, int]], vocab: int) -> list[int]:
    """The hits of each ``(reference, candidate)`` pair of ``docs``, with the kernel :func:`backend` picks for the
    batch's table cells."""
    global _python_cells, _numba_failed
    sizes = [sum(map(len, doc)) for doc in docs]
    cells = sum(sizes[a] * sizes[b] for a, b in pairs)
    if backend(cells) == "numba":
        try:
            return summary_hits_numba(docs, pairs, vocab)
        except ImportError:
            if os.environ.get("RAGEVAL_LCS", "").strip().lower() == "numba":
                raise
            _numba_failed = True  # installed but broken (e.g. a numpy it does not support): Python from now on
    _python_cells += cells
    return [summary_hits_python(docs[a], docs[b]) for a, b in pairs]
