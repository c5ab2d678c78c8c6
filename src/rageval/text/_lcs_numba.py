"""The compiled kernel of :mod:`rageval.text.lcs` (numba, the ``fast`` extra): imported only by
:func:`rageval.text.lcs.summary_hits_numba`, so ``import rageval`` never imports numba.

``pair_hits`` scores a batch of (reference, candidate) pairs as :func:`rageval.text.lcs.summary_hits_python` does
(rouge_score's summary-level LCS, its table walk), on flat arrays: ``tokens`` every line's ids one after another,
``line_start[l]`` where line ``l`` starts (one more entry at the end), ``doc_line[d]`` the first line of document
``d`` (one more at the end), ``ref_doc[p]`` and ``hyp_doc[p]`` pair ``p``'s documents, ``vocab`` one more than the
largest id, ``max_line`` the longest line's length.  ``cache=True``: compiled once per machine, then loaded from
numba's cache (beside this file, else numba's per-user cache folder).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["pair_hits"]


@numba.njit(cache=True, nogil=True)
def _mark_lcs(tokens, a0, m, b0, n, table, union):
    """Mark in ``union`` the positions of reference line ``tokens[a0:a0+m]`` on rouge_score's LCS with candidate
    line ``tokens[b0:b0+n]`` (its table, then its walk from the corner)."""
    for j in range(n + 1):
        table[0, j] = 0
    for i in range(1, m + 1):
        x = tokens[a0 + i - 1]
        left = 0
        table[i, 0] = 0
        for j in range(n):
            if tokens[b0 + j] == x:
                left = table[i - 1, j] + 1
            else:
                left = max(left, table[i - 1, j + 1])
            table[i, j + 1] = left
    i, j = m, n
    while i > 0 and j > 0:
        if tokens[a0 + i - 1] == tokens[b0 + j - 1]:
            union[i - 1] = 1
            i -= 1
            j -= 1
        elif table[i, j - 1] > table[i - 1, j]:
            j -= 1
        else:
            i -= 1


@numba.njit(cache=True, nogil=True)
def _count(tokens, start, stop, counts, value):
    """``counts[t] += 1`` for each token of ``tokens[start:stop]`` (``value`` 1), or ``counts[t] = 0`` (0)."""
    for q in range(start, stop):
        counts[tokens[q]] = counts[tokens[q]] + 1 if value else 0


@numba.njit(cache=True, nogil=True)
def pair_hits(tokens, line_start, doc_line, ref_doc, hyp_doc, vocab, max_line):
    cnt_r = np.zeros(vocab, np.int32)
    cnt_c = np.zeros(vocab, np.int32)
    table = np.zeros((max_line + 1, max_line + 1), np.int32)
    union = np.zeros(max_line, np.uint8)
    out = np.zeros(ref_doc.shape[0], np.int64)
    for p in range(ref_doc.shape[0]):
        r0, r1 = doc_line[ref_doc[p]], doc_line[ref_doc[p] + 1]
        c0, c1 = doc_line[hyp_doc[p]], doc_line[hyp_doc[p] + 1]
        _count(tokens, line_start[r0], line_start[r1], cnt_r, 1)
        _count(tokens, line_start[c0], line_start[c1], cnt_c, 1)
        hits = 0
        for rl in range(r0, r1):
            a0 = line_start[rl]
            m = line_start[rl + 1] - a0
            union[:m] = 0
            for cl in range(c0, c1):
                _mark_lcs(tokens, a0, m, line_start[cl], line_start[cl + 1] - line_start[cl], table, union)
            for k in range(m):
                t = tokens[a0 + k]
                if union[k] and cnt_c[t] > 0 and cnt_r[t] > 0:
                    hits += 1
                    cnt_c[t] -= 1
                    cnt_r[t] -= 1
        out[p] = hits
        _count(tokens, line_start[r0], line_start[r1], cnt_r, 0)
        _count(tokens, line_start[c0], line_start[c1], cnt_c, 0)
    return out
