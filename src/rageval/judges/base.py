"""The judge protocol and the one wrapper every judge goes through.

Protocol
--------
A **judge** scores a batch of (premise, hypothesis) pairs.  For each pair it
returns exactly one of

* a **support probability** in [0, 1] (finite; an ``int``, ``float``, numpy or
  torch scalar), or
* **NaN**, an **abstention**: the judge could not reach a clean decision (a
  TRUE-style seq2seq judge whose first answer token is neither ``"0"`` nor
  ``"1"``, a replay row recorded as ``null`` / ``"abstain"``).

Anything else is a :class:`JudgeError` that names the judge id, the index of the
pair in the caller's request and the offending value: ``None`` (None is an
error, NaN is an abstention), a string (even ``"0.7"``), ``inf``, a value
outside [0, 1], or a wrong number of values.  A decision is
``probability >= threshold``; an abstention decides nothing (``None``).

Backends implement :class:`Judge`:

* ``id``: a string naming the judge *and* its weights (model revision or a
  hash of the weight files, dtype, truncation): it is the disk-cache key, so two
  judges that can disagree must never share an id;
* ``predict(premises, hypotheses) -> list[float]`` (probabilities or NaN);
* optionally ``batch_size`` (default 8 for torch judges, 256 otherwise),
  ``uses_torch`` (run under ``torch.inference_mode``), ``length(p, h)`` (the
  sort key; default: characters), ``token_counts(p, h) -> (before, after)``
  (verifier input tokens of one pair before and after the judge's own
  truncation; a judge that truncates must have it, so truncated inputs are
  counted), ``input_tokens(p, h)`` (the count after truncation, when there is
  no ``token_counts``; default for both: the suite tokenizer's count of
  premise + hypothesis, nothing truncated), ``tokenizer`` and ``stats()``
  (backend counters such as truncated pairs).

:class:`JudgeRunner` wraps a judge **once** (wrapping a runner returns it
unchanged).  For each call it

1. de-duplicates the requested pairs,
2. answers what it can from memory, then from the disk cache (sqlite, keyed by
   ``sha256(judge id, premise, hypothesis)``; every batch is committed in its
   own transaction, so a killed process loses at most the batch in flight),
3. sorts the remaining pairs by length, runs them in batches (under
   ``torch.inference_mode`` for torch judges), checks every value against the
   protocol and stores the results, abstentions included,

and counts ``requested`` (pairs asked for), ``executed`` (pairs the backend
actually scored), ``memory_hits``, ``cache_hits``, ``cache_misses``,
``abstained`` (requested pairs answered NaN, whether executed, from the disk
cache or from memory) and ``abstained_executed`` (executed pairs the backend
answered NaN); see :meth:`JudgeRunner.stats`.

The disk cache (its schema, what happens to a file sqlite cannot read) is
:mod:`rageval.judges.cache`.

A plain callable ``judge(premises, hypotheses) -> list[float]`` is accepted as
a judge too (:class:`CallableJudge`); it is cached on disk only when it carries
an explicit ``id`` attribute (or ``judge_id=`` is given), because a function's
name says nothing about what it computes.

>>> r = JudgeRunner(CallableJudge(lambda p, h: [1.0 if x in y else 0.0 for y, x in zip(p, h)], judge_id="substr"))
>>> r(["a b c", "a b c", "x"], ["b", "b", "y"])
[1.0, 1.0, 0.0]
>>> r.stats()["requested"], r.stats()["executed"]
(3, 2)
>>> r.decide(["a b c"], ["b"])  # threshold: DEFAULT_THRESHOLD
[True]
>>> a = JudgeRunner(CallableJudge(lambda p, h: [0.9, float("nan"), 0.1][:len(p)], judge_id="abstains"))
>>> a.decide(["p1", "p2", "p3"], ["h", "h", "h"], threshold=0.8)
[True, None, False]
>>> a.stats()["abstained"]
1
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from rageval.judges.cache import DiskCache, cache_file, pair_key
from rageval.scoring import DEFAULT_THRESHOLD
from rageval.strict import check_probability
from rageval.text import tokenize

__all__ = ["Judge", "CallableJudge", "JudgeRunner", "JudgeError", "pair_key", "format_premise", "is_abstention"]


class JudgeError(RuntimeError):
    """A judge returned something that is not one probability in [0, 1] (or NaN, an abstention) per pair."""


@runtime_checkable
class Judge(Protocol):
    """A batch of (premise, hypothesis) -> support probabilities in [0, 1], NaN for an abstention."""

    id: str

    def predict(self, premises: list[str], hypotheses: list[str]) -> list[float]: ...


def is_abstention(value: float) -> bool:
    """True when a judge's answer is an abstention (NaN).

    >>> is_abstention(float("nan")), is_abstention(0.0)
    (True, False)
    """
    return isinstance(value, float) and math.isnan(value)


def format_premise(items: Sequence[tuple[str | None, str]]) -> str:
    """Each ``(title, text)`` as ``"Title: {title}\\n{text}"`` (or the text alone), joined with ``"\\n"``.

    >>> format_premise([("Paris", "Paris is big."), (None, "It rains.")])
    'Title: Paris\\nParis is big.\\nIt rains.'
    """
    return "\n".join(f"Title: {t}\n{x}" if t is not None else x for t, x in items)


class CallableJudge:
    """Adapter: a plain ``f(premises, hypotheses) -> list[float]`` as a :class:`Judge`.

    ``predict`` returns what ``f`` returns, unchanged: the runner checks it.
    ``cacheable`` is True only when an explicit id was given (argument or the
    callable's own ``id`` attribute).
    """

    def __init__(
        self,
        fn: Callable[[list[str], list[str]], Sequence[float]],
        *,
        judge_id: str | None = None,
        batch_size: int = 256,
    ):
        if not callable(fn):
            raise TypeError(f"judge must be callable as judge(premises, hypotheses), got {type(fn).__name__}")
        self._fn = fn
        explicit = judge_id or getattr(fn, "id", None)
        self.cacheable = isinstance(explicit, str) and bool(explicit)
        name = getattr(fn, "__qualname__", type(fn).__name__)
        self.id = explicit if self.cacheable else f"callable:{name}"
        self.batch_size = batch_size
        self.tokenizer = getattr(fn, "tokenizer", None)

    def predict(self, premises: list[str], hypotheses: list[str]) -> Any:
        return self._fn(premises, hypotheses)

    def __repr__(self) -> str:
        return f"CallableJudge({self.id!r})"


def _as_probability(value: Any) -> float | None:
    """``value`` as a float in [0, 1] or NaN; None when it breaks the protocol."""
    if value is None or isinstance(value, (str, bytes)):
        return None
    try:
        p = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if math.isnan(p):
        return math.nan
    return p if 0.0 <= p <= 1.0 else None


class JudgeRunner:
    """De-duplicate, cache (memory + disk), length-sort and batch the calls of one judge.

    Call it like a judge: ``runner(premises, hypotheses) -> list[float]``
    (probabilities in [0, 1], NaN for an abstention);
    ``runner.decide(premises, hypotheses, threshold=DEFAULT_THRESHOLD) -> list[bool | None]``.
    ``cache_dir=None`` keeps the in-memory memo only.
    """

    def __init__(
        self,
        judge: Any,
        *,
        cache_dir: str | os.PathLike | None = None,
        batch_size: int | None = None,
        tokenizer: Any = None,
    ):
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
        self._memo_limit: int | None = None  # bound_memory
        cacheable = getattr(judge, "cacheable", True)
        self.cache_path: Path | None = None
        self._disk: DiskCache | None = None
        if cache_dir is not None and cacheable:
            self.cache_path = cache_file(cache_dir, self.id)
            self._disk = DiskCache(self.cache_path)
        backend_stats = getattr(judge, "stats", None)
        self._backend_base = dict(backend_stats()) if callable(backend_stats) else {}
        self._counts = {
            "requested": 0,
            "unique": 0,
            "executed": 0,
            "memory_hits": 0,
            "cache_hits": 0,
            "cache_misses": 0,
            "batches": 0,
            "abstained": 0,
            "abstained_executed": 0,
        }

    # -- scoring -----------------------------------------------------------------
    def __call__(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]:
        """One value per pair, in order: a probability in [0, 1], or NaN where the judge abstained."""
        premises, hypotheses = list(premises), list(hypotheses)
        if len(premises) != len(hypotheses):
            raise ValueError(
                f"judge got {len(premises)} premises but {len(hypotheses)} hypotheses: one premise per hypothesis"
            )
        for name, seq in (("premises", premises), ("hypotheses", hypotheses)):
            if set(map(type, seq)) <= {str}:  # the usual case, in one pass of C
                continue
            for i, x in enumerate(seq):
                if not isinstance(x, str):
                    raise TypeError(f"judge {name}[{i}] must be a string, got {type(x).__name__}")
        self._counts["requested"] += len(premises)
        if self._memo_limit is not None and self._disk is not None and len(self._memo) > self._memo_limit:
            self._memo.clear()  # bound_memory: the disk cache holds every value, nothing is judged twice
        pairs = list(zip(premises, hypotheses))
        unique = list(dict.fromkeys(pairs))  # each pair once, in the order of its first occurrence
        self._counts["unique"] += len(unique)
        todo = [pq for pq in unique if pq not in self._memo]
        self._counts["memory_hits"] += len(unique) - len(todo)
        keys: dict[tuple[str, str], str] = {}  # each pair's disk-cache key, taken once (a sha256 each)
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
            self._run(todo, pairs, keys)
        out = list(map(self._memo.__getitem__, pairs))
        self._counts["abstained"] += sum(math.isnan(p) for p in out)
        return out

    def _sort_key(self, pq: tuple[str, str]) -> int:
        length = getattr(self.judge, "length", None)
        return int(length(*pq)) if length is not None else len(pq[0]) + len(pq[1])

    def _run(self, todo: list[tuple[str, str]], pairs: list[tuple[str, str]], keys: dict[tuple[str, str], str]) -> None:
        order = sorted(todo, key=self._sort_key)
        ctx: Any = contextlib.nullcontext()
        if self.uses_torch:
            import torch  # only for torch judges

            ctx = torch.inference_mode()
        with ctx:
            for i in range(0, len(order), self.batch_size):
                batch = order[i : i + self.batch_size]
                probs = self.judge.predict([p for p, _ in batch], [h for _, h in batch])
                probs = self._check(probs, batch, pairs)
                self._counts["executed"] += len(batch)
                self._counts["abstained_executed"] += sum(math.isnan(p) for p in probs)
                self._counts["batches"] += 1
                for pq, p in zip(batch, probs):
                    self._memo[pq] = p
                if self._disk is not None:
                    self._disk.put_many([(keys[pq], p) for pq, p in zip(batch, probs)])

    def _check(self, probs: Any, batch: list[tuple[str, str]], pairs: list[tuple[str, str]]) -> list[float]:
        """The protocol: one probability in [0, 1] or NaN per pair; anything else is a :class:`JudgeError`.

        Pair indexes in the messages are positions in the caller's request (first occurrence of the pair).
        """
        rule = "a judge returns one probability in [0, 1], or NaN to abstain, per pair"
        if probs is None or isinstance(probs, (str, bytes, dict, set, frozenset)):
            raise JudgeError(
                f"judge {self.id!r} returned {type(probs).__name__} {probs!r:.80} for {len(batch)} pairs; {rule}"
            )
        try:
            values = list(probs)
        except TypeError as err:
            raise JudgeError(
                f"judge {self.id!r} returned {type(probs).__name__} {probs!r:.80} for {len(batch)} pairs; {rule}"
            ) from err
        if len(values) != len(batch):
            idx = sorted(map(pairs.index, batch))
            shown = ", ".join(map(str, idx[:10])) + (", …" if len(idx) > 10 else "")
            raise JudgeError(
                f"judge {self.id!r} returned {len(values)} values for {len(batch)} pairs "
                f"(request indexes {shown}); {rule}"
            )
        out = []
        for pq, v in zip(batch, values):
            p = _as_probability(v)
            if p is None:
                raise JudgeError(
                    f"judge {self.id!r} returned {v!r:.80} ({type(v).__name__}) for pair {pairs.index(pq)} "
                    f"(hypothesis {pq[1]!r:.60}); {rule} (None is an error, NaN is an abstention)"
                )
            out.append(p)
        return out

    def decide(
        self, premises: Sequence[str], hypotheses: Sequence[str], *, threshold: float = DEFAULT_THRESHOLD
    ) -> list[bool | None]:
        """``probability >= threshold`` for each pair; ``None`` where the judge abstained (NaN).

        ``threshold`` must lie in [0, 1].  Callers decide what an abstention
        means for them (and count it); it is never silently a ``False``.
        """
        t = check_probability(threshold)
        return [None if math.isnan(p) else p >= t for p in self(premises, hypotheses)]

    # -- accounting --------------------------------------------------------------
    def input_tokens(self, premise: str, hypothesis: str) -> int:
        """Verifier input tokens of one pair as the judge reads it (after truncation); see :meth:`token_counts`."""
        return self.token_counts(premise, hypothesis)[1]

    def token_counts(self, premise: str, hypothesis: str) -> tuple[int, int]:
        """Verifier input tokens of one pair, ``(before, after)`` the judge's own truncation.

        (docs/design.md#decision-verifier-tokens)

        The backend's ``token_counts`` when it has one; else its ``input_tokens`` (both
        the same: no truncation known); else the suite tokenizer's count of premise plus
        hypothesis (both the same).  The pair was truncated when ``after < before``.
        """
        both, own = self._counters()
        if both is None and own is None:  # the suite tokenizer: each text counted once, a pair is the sum of two
            per_text, tok = self._text_tokens()
            n = per_text.get(premise)
            if n is None:
                n = per_text[premise] = tok.count(premise)
            c = per_text.get(hypothesis)
            if c is None:
                c = per_text[hypothesis] = tok.count(hypothesis)
            return n + c, n + c
        memo = self.__dict__.setdefault("_token_memo", {})
        if self._memo_limit is not None and len(memo) > self._memo_limit:
            memo.clear()  # bound_memory: counted the same again when asked again
        key = (premise, hypothesis)
        hit = memo.get(key)
        if hit is not None:
            return hit
        if both is not None:
            before, after = both(premise, hypothesis)
            out = (int(before), int(after))
        else:
            n = int(own(premise, hypothesis))
            out = (n, n)
        memo[key] = out
        return out

    def _counters(self) -> tuple[Any, Any]:
        """The backend's ``token_counts`` and ``input_tokens`` methods (None where it has none), looked up once."""
        got = self.__dict__.get("_backend_counters")
        if got is None:
            got = self.__dict__["_backend_counters"] = (
                getattr(self.judge, "token_counts", None),
                getattr(self.judge, "input_tokens", None),
            )
        return got

    def _text_tokens(self) -> tuple[dict[str, int], Any]:
        """Each text's count by the suite tokenizer (premises recur across pairs; bounded as the pairs' memo is:
        :meth:`bound_memory`), and that tokenizer (looked up once)."""
        per_text = self.__dict__.get("_text_token_memo")
        if per_text is None:
            self.__dict__["_count_tokenizer"] = tokenize.get_tokenizer(self._suite_tokenizer)
            per_text = self.__dict__["_text_token_memo"] = {}
        elif self._memo_limit is not None and len(per_text) > self._memo_limit:
            per_text.clear()  # bound_memory: counted the same again when asked again
        return per_text, self.__dict__["_count_tokenizer"]

    def stats(self) -> dict[str, Any]:
        """Counters since creation (or :meth:`reset_stats`), plus the backend's own (e.g. ``truncated``).

        * ``requested``: pairs asked for (every call, duplicates included);
        * ``unique``: distinct pairs per call, summed over calls;
        * ``memory_hits``, ``cache_hits`` (disk), ``cache_misses`` (disk), ``executed``
          (pairs the backend scored), ``batches``; ``executed_over_requested``;
        * ``abstained``: requested pairs whose answer was NaN, counted per requested
          pair like ``requested`` (duplicates, memory and disk-cache hits included),
          so ``abstained / requested`` is the abstention rate of what callers asked;
        * ``abstained_executed``: pairs among ``executed`` that the backend answered NaN;
        * ``judge_id``, ``cache_path``; ``cache_rebuilt`` (unreadable disk-cache files moved aside and rebuilt).

        A backend counter whose name collides with one of these is reported as ``backend_<name>``.
        """
        out: dict[str, Any] = dict(self._counts)
        out["judge_id"] = self.id
        out["executed_over_requested"] = (
            self._counts["executed"] / self._counts["requested"] if self._counts["requested"] else None
        )
        out["cache_path"] = str(self.cache_path) if self.cache_path else None
        out["cache_rebuilt"] = self._disk.rebuilt if self._disk is not None else 0
        own = set(out)
        backend = getattr(self.judge, "stats", None)
        if callable(backend):  # the backend may be shared (loaded once per process): report this runner's share
            for k, v in backend().items():
                base = self._backend_base.get(k, 0)
                name = f"backend_{k}" if k in own else k
                out[name] = v - base if isinstance(v, (int, float)) and isinstance(base, (int, float)) else v
        return out

    def reset_stats(self) -> None:
        for k in self._counts:
            self._counts[k] = 0
        backend = getattr(self.judge, "stats", None)
        self._backend_base = dict(backend()) if callable(backend) else {}

    def clear_memory(self) -> None:
        """Forget the in-memory memo (the disk cache stays)."""
        self._memo.clear()

    def bound_memory(self, pairs: int) -> None:
        """Keep about ``pairs`` pairs in memory, not every pair judged (a run's judge: its memos would grow with the
        run): a call that finds more forgets them first.  The values are forgotten only when the disk cache holds
        each of them (a pair asked again is read back, never judged twice, so the values and the cache stay what
        they are; the counters then say ``cache_hits`` where they said ``memory_hits``); the token counts always
        (counted the same again).  :func:`~rageval.judges.replay.save_replay` writes what the memo holds: give it
        a runner with unbounded memory."""
        self._memo_limit = pairs

    def close(self) -> None:
        """Close the disk cache and the backend's own resources (its ``close()``, e.g. HTTP connections)."""
        if self._disk is not None:
            self._disk.close()
            self._disk = None
        backend_close = getattr(self.judge, "close", None)
        if callable(backend_close):
            backend_close()

    def __repr__(self) -> str:
        return f"JudgeRunner({self.id!r}, cache={str(self.cache_path) if self.cache_path else None})"
