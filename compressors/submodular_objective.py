"""The submodular packer's problem and objective (:mod:`rageval.compressors.submodular` packs it).

:class:`PackerProblem` holds a question's candidates as arrays; :class:`Objective` evaluates
``F(S) = w_rel·Rel(S) + w_qry·QueryCov(S) + w_cov·Repr(S) + w_div·Div(S)`` incrementally (the marginal
gains of a block of candidates in one numpy call per term) and from scratch.  The terms are defined in
:mod:`rageval.compressors.submodular`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from rageval.compressors.similarity import SimilarityMatrix

__all__ = ["PackerProblem", "Objective"]


@dataclass
class PackerProblem:
    """Everything the objective needs, as arrays over candidates ``0..n-1`` (ties break by index)."""

    costs: np.ndarray  # int, > 0
    rel: np.ndarray  # [0, 1]
    query_terms: list[np.ndarray] | np.ndarray  # per candidate: ids of the question terms it contains,
    # or an (n, |Q|) boolean presence matrix
    query_weights: np.ndarray  # per question term, sums to 1 (or empty)
    sim: SimilarityMatrix
    docs: np.ndarray  # document group of each candidate (0..n_docs-1)
    weights: tuple[float, float, float, float] = (1.0, 1.0, 0.5, 0.5)
    # greedy ranks by gain / cost**cost_exponent (1 = per token, as in the packing paper)
    cost_exponent: float = 1.0
    # computed in __post_init__
    row_sums: np.ndarray = field(init=False)  # Σ_j sim(i, j)
    div_reward: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        n = len(self.costs)
        nq = len(self.query_weights)
        if isinstance(self.query_terms, np.ndarray) and self.query_terms.ndim == 2:
            self.presence = self.query_terms.astype(bool)
        else:
            self.presence = np.zeros((n, nq), dtype=bool)
            for i, q in enumerate(self.query_terms):
                self.presence[i, np.asarray(q, dtype=np.int64)] = True
        self.row_sums = self.sim.row_sums() if n else np.zeros(0)
        self.repr_norm = float(self.row_sums.max()) if n and self.row_sums.max() > 0 else 1.0
        self.div_reward = (self.rel + self.row_sums / self.repr_norm) / 2.0
        m = float(self.div_reward.max()) if n else 0.0
        self.div_norm = math.sqrt(m) if m > 0 else 1.0
        self.n_docs = int(self.docs.max()) + 1 if n else 0
        self.scale = np.asarray(self.costs, dtype=np.float64) ** float(self.cost_exponent)

    @property
    def n(self) -> int:
        return len(self.costs)


class Objective:
    """Incremental evaluation of F: ``gain(i)`` given the current set, ``add(i)``; ``value(S)`` from scratch."""

    def __init__(self, p: PackerProblem):
        self.p = p
        self.covered = np.zeros(len(p.query_weights), dtype=bool)
        self.cur = np.zeros(p.n)  # max_{i∈S} sim(i, j)
        self.doc_acc = np.zeros(p.n_docs)
        self.value_ = 0.0
        self.evaluations = 0
        w_rel, w_qry, w_cov, w_div = p.weights
        self._cov_scale = w_cov / p.repr_norm
        self._div_scale = w_div / p.div_norm
        # the terms a gain adds, in a fixed order; a zero-weight term is skipped (it would add 0.0: the same bits)
        self._rel, self._qry, self._cov, self._div = (
            bool(w_rel),
            bool(w_qry) and bool(len(self.covered)),
            bool(w_cov),
            bool(w_div),
        )
        # the whole similarity matrix where it is held (kernel mode): a block of rows is one gather
        self._kernel = p.sim.kernel() if w_cov and p.n else None
        #: a block's gains cost no Python work per candidate (no similarity row fetched or computed one at a time)
        self.gathers = self._kernel is not None or not self._cov

    def singleton_gains(self) -> np.ndarray:
        """F({i}) for every i (= gains at the empty set), vectorized."""
        p = self.p
        w_rel, w_qry, w_cov, w_div = p.weights
        qcov = p.presence @ p.query_weights if p.presence.shape[1] else np.zeros(p.n)
        return (
            w_rel * p.rel + w_qry * qcov + w_cov * p.row_sums / p.repr_norm + w_div * np.sqrt(p.div_reward) / p.div_norm
        )

    def gains(self, idx: np.ndarray) -> np.ndarray:
        """The marginal gains of the candidates ``idx`` given the current set, in one numpy call per term (the one
        gain computation: :meth:`gain`, the lazy greedy's blocks and the plain greedy's steps all use it)."""
        p = self.p
        self.evaluations += len(idx)
        g = None
        if self._rel:
            g = p.weights[0] * p.rel[idx]
        if self._qry:
            # a product and a row sum, not a matrix-vector product (BLAS sums a block's rows and a single row
            # in different orders): a candidate's gain has the same bits in any block
            q = p.weights[1] * np.add.reduce((p.presence[idx] & ~self.covered) * p.query_weights, axis=1)
            g = q if g is None else g + q
        if self._cov:
            k = self._kernel
            rows = k.take(idx, axis=0) if k is not None else p.sim.rows(idx)  # a fresh (len(idx), n) array
            rows -= self.cur
            np.maximum(rows, 0.0, out=rows)
            c = np.add.reduce(rows, axis=1)  # rows.sum(axis=1) without its Python wrapper
            c *= self._cov_scale
            g = c if g is None else g + c
        if self._div:
            a = self.doc_acc[p.docs[idx]]
            d = (np.sqrt(a + p.div_reward[idx]) - np.sqrt(a)) * self._div_scale
            g = d if g is None else g + d
        return np.zeros(len(idx)) if g is None else g

    def gain(self, i: int) -> float:
        """The marginal gain of candidate ``i`` (:meth:`gains` of one)."""
        return float(self.gains(np.array([i]))[0])

    def add(self, i: int, gain: float | None = None) -> None:
        """Add candidate ``i`` (its ``gain`` if known); only the state the weighted terms read is updated."""
        p = self.p
        if gain is None:
            gain = self.gain(i)
        self.value_ += gain
        if self._qry:
            self.covered |= p.presence[i]
        if self._cov:
            k = self._kernel
            np.maximum(self.cur, k[i] if k is not None else p.sim.row(i), out=self.cur)
        if self._div:
            self.doc_acc[p.docs[i]] += p.div_reward[i]

    def value(self, S: Sequence[int]) -> float:
        """F(S) from scratch (for tests)."""
        p = self.p
        S = list(S)
        if not S:
            return 0.0
        w_rel, w_qry, w_cov, w_div = p.weights
        rel = float(p.rel[S].sum())
        covered = p.presence[S].any(axis=0)
        qcov = float(p.query_weights[covered].sum())
        cur = np.zeros(p.n)
        for i in S:
            cur = np.maximum(cur, p.sim.row(i))
        rep = float(cur.sum()) / p.repr_norm
        acc = np.zeros(p.n_docs)
        for i in S:
            acc[p.docs[i]] += p.div_reward[i]
        div = float(np.sqrt(acc).sum()) / p.div_norm
        return w_rel * rel + w_qry * qcov + w_cov * rep + w_div * div
