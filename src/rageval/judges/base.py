"""The judge protocol and the one wrapper every judge goes through.

A **judge** scores a batch of (premise, hypothesis) pairs with entailment
probabilities in [0, 1]; a decision is ``probability >= threshold``.  Backends
implement :class:`Judge`:

* ``id``: a string naming the judge *and* its weights (model revision or a
  hash of the weight files, dtype, truncation): it is the disk-cache key, so two
  judges that can disagree must never share an id;
* ``predict(premises, hypotheses) -> list[float]``;
* optionally ``batch_size`` (default 8 for torch judges, 256 otherwise),
  ``uses_torch`` (run under ``torch.inference_mode``), ``length(p, h)`` (the
  sort key; default: characters), ``input_tokens(p, h)`` (verifier input tokens
  of one pair; default: the suite tokenizer's count of premise + hypothesis),
  ``tokenizer`` and ``stats()`` (backend counters such as truncated pairs).

:class:`JudgeRunner` wraps a judge **once** (wrapping a runner returns it
unchanged).  For each call it

1. de-duplicates the requested pairs,
2. answers what it can from memory, then from the disk cache (sqlite, keyed by
   ``sha256(judge id, premise, hypothesis)``; every batch is committed in its
   own transaction, so a killed process loses at most the batch in flight),
3. sorts the remaining pairs by length, runs them in batches (under
   ``torch.inference_mode`` for torch judges) and stores the results,

and counts ``requested`` (pairs asked for), ``executed`` (pairs the backend
actually scored), ``memory_hits``, ``cache_hits`` and ``cache_misses``.

A plain callable ``judge(premises, hypotheses) -> list[float]`` is accepted as
a judge too (:class:`CallableJudge`); it is cached on disk only when it carries
an explicit ``id`` attribute (or ``judge_id=`` is given), because a function's
name says nothing about what it computes.

>>> r = JudgeRunner(CallableJudge(lambda p, h: [1.0 if x in y else 0.0 for y, x in zip(p, h)], judge_id="substr"))
>>> r(["a b c", "a b c", "x"], ["b", "b", "y"])
[1.0, 1.0, 0.0]
>>> r.stats()["requested"], r.stats()["executed"]
(3, 2)
>>> r.decide(["a b c"], ["b"], threshold=0.5)
[True]
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

__all__ = ["Judge", "CallableJudge", "JudgeRunner", "JudgeError", "pair_key", "format_premise"]


class JudgeError(RuntimeError):
    """A judge returned something that is not one probability per pair."""


@runtime_checkable
class Judge(Protocol):
    """A batch of (premise, hypothesis) -> entailment probabilities."""

    id: str

    def predict(self, premises: list[str], hypotheses: list[str]) -> list[float]: ...


def format_premise(items: Sequence[tuple[str | None, str]]) -> str:
    """DESIGN §9: each ``(title, text)`` as ``"Title: {title}\\n{text}"`` (or the text), joined with ``"\\n"``.

    >>> format_premise([("Paris", "Paris is big."), (None, "It rains.")])
    'Title: Paris\\nParis is big.\\nIt rains.'
    """
    return "\n".join(f"Title: {t}\n{x}" if t is not None else x for t, x in items)


class CallableJudge:
    """Adapter: a plain ``f(premises, hypotheses) -> list[float]`` as a :class:`Judge`.

    ``cacheable`` is True only when an explicit id was given (argument or the
    callable's own ``id`` attribute).
    """

    def __init__(self, fn: Callable[[list[str], list[str]], Sequence[float]], *, judge_id: str | None = None,
                 batch_size: int = 256):
        if not callable(fn):
            raise TypeError(f"judge must be callable as judge(premises, hypotheses), got {type(fn).__name__}")
        self._fn = fn
        explicit = judge_id or getattr(fn, "id", None)
        self.cacheable = isinstance(explicit, str) and bool(explicit)
        name = getattr(fn, "__qualname__", type(fn).__name__)
        self.id = explicit if self.cacheable else f"callable:{name}"
        self.batch_size = batch_size
        self.tokenizer = getattr(fn, "tokenizer", None)

    def predict(self, premises: list[str], hypotheses: list[str]) -> list[float]:
        return list(self._fn(premises, hypotheses))

    def __repr__(self) -> str:
        return f"CallableJudge({self.id!r})"


def pair_key(judge_id: str, premise: str, hypothesis: str) -> str:
    """The cache key of one pair: sha256 over judge id, premise and hypothesis (length-prefixed)."""
    h = hashlib.sha256()
    for part in (judge_id, premise, hypothesis):
        b = part.encode("utf-8")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


class _DiskCache:
    """sqlite key -> probability; WAL journal, one transaction per stored batch."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), timeout=60, check_same_thread=False)
        with contextlib.suppress(sqlite3.OperationalError):
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS judgements (key TEXT PRIMARY KEY, prob REAL NOT NULL)")
        self._db.commit()

    def get_many(self, keys: list[str]) -> dict[str, float]:
        out: dict[str, float] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i:i + 500]
                marks = ",".join("?" * len(chunk))
                for k, p in self._db.execute(f"SELECT key, prob FROM judgements WHERE key IN ({marks})", chunk):
                    out[k] = p
        return out

    def put_many(self, items: list[tuple[str, float]]) -> None:
        with self._lock, self._db:
            self._db.executemany("INSERT OR REPLACE INTO judgements (key, prob) VALUES (?, ?)", items)

    def close(self) -> None:
        with self._lock:
            self._db.close()


class JudgeRunner:
    """De-duplicate, cache (memory + disk), length-sort and batch the calls of one judge.

    Call it like a judge: ``runner(premises, hypotheses) -> list[float]``;
    ``runner.decide(premises, hypotheses, threshold=0.5) -> list[bool]``.
    ``cache_dir=None`` keeps the in-memory memo only.
    """

    def __init__(self, judge: Any, *, cache_dir: str | os.PathLike | None = None, batch_size: int | None = None,
                 tokenizer: Any = None):
        if isinstance(judge, JudgeRunner):
            raise TypeError("judge is already wrapped; use it as it is (get_judge returns it unchanged)")
        if not isinstance(judge, Judge):
            judge = CallableJudge(judge)
        self.judge = judge
        self.id: str = judge.id
        self.uses_torch = bool(getattr(judge, "uses_torch", False))
        default_bs = 8 if self.uses_torch else 256
        self.batch_size = int(batch_size or getattr(judge, "batch_size", None) or default_bs)
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        self.tokenizer = getattr(judge, "tokenizer", None)
        self._suite_tokenizer = tokenizer
        self._memo: dict[tuple[str, str], float] = {}
        cacheable = getattr(judge, "cacheable", True)
        self.cache_path: Path | None = None
        self._disk: _DiskCache | None = None
        if cache_dir is not None and cacheable:
            safe = hashlib.sha256(self.id.encode()).hexdigest()[:16]
            self.cache_path = Path(cache_dir) / f"judge-{safe}.sqlite"
            self._disk = _DiskCache(self.cache_path)
        backend_stats = getattr(judge, "stats", None)
        self._backend_base = dict(backend_stats()) if callable(backend_stats) else {}
        self._counts = {"requested": 0, "unique": 0, "executed": 0, "memory_hits": 0,
                        "cache_hits": 0, "cache_misses": 0, "batches": 0}

    # -- scoring -----------------------------------------------------------------
    def __call__(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]:
        premises, hypotheses = list(premises), list(hypotheses)
        if len(premises) != len(hypotheses):
            raise ValueError(
                f"judge got {len(premises)} premises but {len(hypotheses)} hypotheses: one premise per hypothesis"
            )
        for name, seq in (("premises", premises), ("hypotheses", hypotheses)):
            for i, x in enumerate(seq):
                if not isinstance(x, str):
                    raise TypeError(f"judge {name}[{i}] must be a string, got {type(x).__name__}")
        self._counts["requested"] += len(premises)
        pairs = list(zip(premises, hypotheses))
        unique = list(dict.fromkeys(pairs))
        self._counts["unique"] += len(unique)
        todo = [pq for pq in unique if pq not in self._memo]
        self._counts["memory_hits"] += len(unique) - len(todo)
        if todo and self._disk is not None:
            keys = {pq: pair_key(self.id, *pq) for pq in todo}
            found = self._disk.get_many(list(keys.values()))
            rest = []
            for pq in todo:
                k = keys[pq]
                if k in found:
                    self._memo[pq] = found[k]
                else:
                    rest.append(pq)
            self._counts["cache_hits"] += len(todo) - len(rest)
            self._counts["cache_misses"] += len(rest)
            todo = rest
        if todo:
            self._run(todo)
        return [self._memo[pq] for pq in pairs]

    def _sort_key(self, pq: tuple[str, str]) -> int:
        length = getattr(self.judge, "length", None)
        return int(length(*pq)) if length is not None else len(pq[0]) + len(pq[1])

    def _run(self, todo: list[tuple[str, str]]) -> None:
        order = sorted(todo, key=self._sort_key)
        ctx: Any = contextlib.nullcontext()
        if self.uses_torch:
            import torch  # only for torch judges

            ctx = torch.inference_mode()
        with ctx:
            for i in range(0, len(order), self.batch_size):
                batch = order[i:i + self.batch_size]
                probs = self.judge.predict([p for p, _ in batch], [h for _, h in batch])
                probs = self._check(probs, len(batch))
                self._counts["executed"] += len(batch)
                self._counts["batches"] += 1
                for pq, p in zip(batch, probs):
                    self._memo[pq] = p
                if self._disk is not None:
                    self._disk.put_many([(pair_key(self.id, *pq), p) for pq, p in zip(batch, probs)])

    def _check(self, probs: Any, n: int) -> list[float]:
        try:
            out = [float(p) for p in probs]
        except (TypeError, ValueError) as err:
            raise JudgeError(f"judge {self.id!r} must return one probability per pair, got {probs!r:.80}") from err
        if len(out) != n:
            raise JudgeError(f"judge {self.id!r} returned {len(out)} probabilities for {n} pairs")
        for p in out:
            if math.isnan(p) or p < 0.0 or p > 1.0:
                raise JudgeError(f"judge {self.id!r} returned {p!r}; entailment probabilities must lie in [0, 1]")
        return out

    def decide(self, premises: Sequence[str], hypotheses: Sequence[str], *, threshold: float = 0.5) -> list[bool]:
        """``probability >= threshold`` for each pair."""
        return [p >= threshold for p in self(premises, hypotheses)]

    # -- accounting --------------------------------------------------------------
    def input_tokens(self, premise: str, hypothesis: str) -> int:
        """Verifier input tokens of one pair: the judge's own count, else the suite tokenizer's (DESIGN §9)."""
        own = getattr(self.judge, "input_tokens", None)
        if own is not None:
            return int(own(premise, hypothesis))
        from rageval.text.tokenize import get_tokenizer

        tok = get_tokenizer(self._suite_tokenizer)
        return tok.count(premise) + tok.count(hypothesis)

    def stats(self) -> dict[str, Any]:
        """Counters since creation (or :meth:`reset_stats`), plus the backend's own (e.g. ``truncated``)."""
        out: dict[str, Any] = dict(self._counts)
        out["judge_id"] = self.id
        out["executed_over_requested"] = (
            self._counts["executed"] / self._counts["requested"] if self._counts["requested"] else None
        )
        backend = getattr(self.judge, "stats", None)
        if callable(backend):  # the backend may be shared (loaded once per process): report this runner's share
            for k, v in backend().items():
                base = self._backend_base.get(k, 0)
                out[k] = v - base if isinstance(v, (int, float)) and isinstance(base, (int, float)) else v
        out["cache_path"] = str(self.cache_path) if self.cache_path else None
        return out

    def reset_stats(self) -> None:
        for k in self._counts:
            self._counts[k] = 0
        backend = getattr(self.judge, "stats", None)
        self._backend_base = dict(backend()) if callable(backend) else {}

    def clear_memory(self) -> None:
        """Forget the in-memory memo (the disk cache stays)."""
        self._memo.clear()

    def close(self) -> None:
        if self._disk is not None:
            self._disk.close()
            self._disk = None

    def __repr__(self) -> str:
        return f"JudgeRunner({self.id!r}, cache={str(self.cache_path) if self.cache_path else None})"
