"""Long evidence: an opt-in windowed model judge (support = the max over overlapping premise windows).

A model judge reads at most ``max_length`` tokens (512 by default); without
windowing a longer pair has its premise cut (counted per record as
``judge_inputs_truncated``), so evidence past the cut is never read.  With
``window`` on (``get_judge(spec, window={"overlap": 128})``, a suite's
``judge.params.window``, ``--judge-window OVERLAP``), a pair that does not fit
is judged in **windows** instead:

* the pair does not fit when its tokens (premise + hypothesis + the judge's
  special and format tokens, :meth:`~rageval.judges.hf.NLIJudge.full_lengths`)
  exceed ``max_length``; a pair that fits is judged exactly as without windowing
  (same premise, same probability);
* ``room`` = ``max_length`` minus the pair's tokens other than the premise's (the
  full hypothesis always stays); the premise's tokens (``add_special_tokens=False``)
  are split into spans of at most ``room`` tokens, the first starting at token 0,
  each next one starting ``overlap`` tokens before the previous one ended
  (``overlap`` is at most ``room // 2``), or later, at the first token that starts
  a line of the premise (the token after a ``"\\n"``: a unit, a document's title or
  its text) within that overlap, so that windows break at unit boundaries where
  they can; the last span ends at the premise's last token;
* each window is the premise's text from its first token's first character to
  its last token's last character, judged with the full hypothesis; its encoded
  pair is checked to fit (a tokenizer may count a cut text differently; then all
  spans are planned again with ``room`` reduced by the excess);
* the pair's probability is the **max over its windows**; a window that abstains
  (NaN) is no evidence; all windows abstain: NaN (an abstention);
* a pair whose hypothesis and special tokens take more than half of ``max_length``
  is not windowed: it is truncated as without windowing (and counted so).

**What max over windows means.**  For a *single* premise (one cited unit, one
recovery candidate) the claim is supported when some stretch of ``room`` tokens of
that premise supports it alone.  For a **joint premise** (the units a claim cites,
concatenated, as ALCE's citation recall judges them): the claim is supported when
some window *of the concatenation* supports it alone.  Evidence that must be
combined from two cited units (or two parts of one long unit) is found only when
one window holds both; two far-apart pieces (more than ``room`` tokens apart) are
never read together, so such a claim may be judged unsupported although the whole
premise entails it.  Windowing therefore never cuts evidence off, but it can miss
a combination of evidence that truncation would also have missed (cut) or that a
judge with a longer window would read whole.

The judge id is the wrapped judge's id plus ``|window=overlap:{N},max,v1``: cached
probabilities of windowed and truncating judges never mix.  Verifier tokens after
the judge's "truncation" count every window's encoded pair (what is really read,
so with overlap and a repeated hypothesis more than before it); per record
``judge_inputs_windowed`` counts the judge inputs split into two or more windows
(``judge_inputs_truncated`` keeps counting those cut, e.g. an over-long
hypothesis).  ``stats()`` adds ``windowed`` (pairs scored in windows) and
``windows`` (their windows) to the wrapped judge's counters, whose ``scored``
counts windows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_OVERLAP", "WindowedJudge", "parse_window", "plan_windows", "line_starts"]

#: overlap in tokens of ``window: true``
DEFAULT_OVERLAP = 128
_RULE = "v1"


def parse_window(value: Any) -> int | None:
    """The overlap in tokens of a ``window`` option, or None when windowing is off.

    ``None`` / ``False``: off; ``True``: on, overlap :data:`DEFAULT_OVERLAP`;
    ``{"overlap": N}``: on, ``N`` an integer >= 0.  Anything else is a ValueError.

    >>> parse_window(None), parse_window(True), parse_window({"overlap": 32})
    (None, 128, 32)
    """
    if value is None or value is False:
        return None
    if value is True:
        return DEFAULT_OVERLAP
    if isinstance(value, Mapping):
        extra = sorted(set(value) - {"overlap"})
        if extra:
            raise ValueError(f"window: unknown key {extra[0]!r}; write window: {{overlap: N}} (tokens) or true")
        n = value.get("overlap", DEFAULT_OVERLAP)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"window.overlap must be an integer >= 0 (tokens), got {n!r}")
        return n
    raise ValueError(
        f"window must be true (overlap {DEFAULT_OVERLAP} tokens), {{overlap: N}} or null/false (off), got {value!r}"
    )


def plan_windows(n_tokens: int, room: int, overlap: int, starts: Sequence[int] = ()) -> list[tuple[int, int]]:
    """Token spans ``[start, end)`` of the windows of a premise of ``n_tokens`` tokens (see the module doc).

    ``starts``: sorted indices of the tokens that start a line (preferred window starts).

    >>> plan_windows(10, 4, 1)
    [(0, 4), (3, 7), (6, 10)]
    >>> plan_windows(10, 4, 2, starts=[4])  # the line starting at token 4 is within the overlap [2, 4]
    [(0, 4), (4, 8), (6, 10)]
    """
    if room < 1:
        raise ValueError(f"room must be >= 1 token, got {room}")
    if n_tokens <= room:
        return [(0, n_tokens)]
    ov = min(max(overlap, 0), room // 2)
    spans: list[tuple[int, int]] = []
    start = 0
    while True:
        end = min(start + room, n_tokens)
        spans.append((start, end))
        if end == n_tokens:
            return spans
        nominal = end - ov  # > start, since ov <= room // 2 < room
        start = next((t for t in starts if nominal <= t <= end), nominal)


def line_starts(text: str, offsets: Sequence[tuple[int, int]]) -> list[int]:
    """Indices of the tokens (character ``offsets``) that start a line of ``text`` (right after a ``"\\n"``).

    >>> line_starts("a b\\nc", [(0, 1), (2, 3), (4, 5)])
    [2]
    """
    out = []
    for t in range(1, len(offsets)):
        a = offsets[t][0]
        if "\n" in text[offsets[t - 1][1] : a] or (a > 0 and text[a - 1] == "\n"):
            out.append(t)
    return out


@dataclass(frozen=True)
class _Plan:
    texts: tuple[str, ...]  # the premise of each window; one window = the pair judged as without windowing
    before: int  # the pair's tokens, whole
    after: int  # the tokens the judge reads: every window's encoded pair (or the truncated pair)
    spans: tuple[tuple[int, int], ...] = ()

    @property
    def windowed(self) -> bool:
        return len(self.texts) > 1


class WindowedJudge:
    """A model judge (``max_length``, a fast ``tokenizer``, ``full_lengths``) whose long premises are judged in
    overlapping windows, support = the max over them (module doc)."""

    def __init__(self, backend: Any, overlap: int = DEFAULT_OVERLAP):
        missing = [a for a in ("full_lengths", "tokenizer", "max_length", "predict", "id") if not hasattr(backend, a)]
        if missing:
            raise ValueError(
                f"window: judge {getattr(backend, 'id', type(backend).__name__)!r} has no token window to split "
                "premises for; window applies to model judges (nli:, seq2seq:, a model folder or hub id)"
            )
        if backend.max_length is None:
            raise ValueError("window needs the judge's max_length (tokens); it is None (nothing is truncated)")
        if not getattr(backend.tokenizer, "is_fast", False):
            raise ValueError(
                f"window: judge {backend.id!r} has a slow tokenizer; windows are cut at token offsets, "
                "which need a fast (Rust) tokenizer"
            )
        if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 0:
            raise ValueError(f"window overlap must be an integer >= 0 (tokens), got {overlap!r}")
        self.backend = backend
        self.overlap = overlap
        self.max_length: int = int(backend.max_length)
        self.id = f"{backend.id}|window=overlap:{overlap},max,{_RULE}"
        self.cacheable = getattr(backend, "cacheable", True)
        self.uses_torch = getattr(backend, "uses_torch", False)
        self.batch_size = getattr(backend, "batch_size", 8)
        self.tokenizer = backend.tokenizer
        self._plans: dict[tuple[str, str], _Plan] = {}
        self._windowed = 0
        self._windows = 0

    # -- planning ---------------------------------------------------------------------
    def plan(self, premise: str, hypothesis: str) -> _Plan:
        """The windows of one pair (memoized)."""
        key = (premise, hypothesis)
        hit = self._plans.get(key)
        if hit is None:
            hit = self._plans[key] = self._plan(premise, hypothesis)
        return hit

    def _plan(self, premise: str, hypothesis: str) -> _Plan:
        full = self.backend.full_lengths([premise], [hypothesis])[0]
        limit = self.max_length
        if full <= limit:
            return _Plan((premise,), full, full)
        enc = self.tokenizer(premise, add_special_tokens=False, return_offsets_mapping=True)
        offsets = [tuple(o) for o in enc["offset_mapping"]]
        n = len(offsets)
        overhead = full - n
        if 2 * overhead > limit or n == 0:  # the hypothesis takes over half the window: truncate as without windows
            return _Plan((premise,), full, limit)
        starts = line_starts(premise, offsets)
        room = limit - overhead
        while room >= 1:
            spans = plan_windows(n, room, self.overlap, starts)
            texts = tuple(premise[offsets[a][0] : offsets[b - 1][1]] for a, b in spans)
            lengths = self.backend.full_lengths(list(texts), [hypothesis] * len(texts))
            excess = max(lengths) - limit
            if excess <= 0:
                return _Plan(texts, full, sum(lengths), tuple(spans))
            room -= excess  # a cut text tokenized differently: plan every window again, smaller
        return _Plan((premise,), full, limit)  # pragma: no cover - a tokenizer that never fits

    def window_count(self, premise: str, hypothesis: str) -> int:
        """How many windows the pair is judged in (1: as without windowing)."""
        return len(self.plan(premise, hypothesis).texts)

    # -- the judge protocol -------------------------------------------------------------
    def token_counts(self, premise: str, hypothesis: str) -> tuple[int, int]:
        """The pair's tokens whole, and the tokens the judge reads: every window's encoded pair (when windowed),
        or the pair after truncation (an over-long hypothesis: not windowed, truncated)."""
        p = self.plan(premise, hypothesis)
        return p.before, p.after

    def input_tokens(self, premise: str, hypothesis: str) -> int:
        return self.token_counts(premise, hypothesis)[1]

    def length(self, premise: str, hypothesis: str) -> int:
        own = getattr(self.backend, "length", None)
        return int(own(premise, hypothesis)) if own is not None else len(premise) + len(hypothesis)

    def predict(self, premises: list[str], hypotheses: list[str]) -> list[float]:
        plans = [self.plan(p, h) for p, h in zip(premises, hypotheses)]
        flat_p = [t for pl in plans for t in pl.texts]
        flat_h = [h for pl, h in zip(plans, hypotheses) for _ in pl.texts]
        values: list[float] = []
        bs = max(1, int(self.batch_size))
        for i in range(0, len(flat_p), bs):
            got = list(self.backend.predict(flat_p[i : i + bs], flat_h[i : i + bs]))
            if len(got) != len(flat_p[i : i + bs]):
                from rageval.judges.base import JudgeError

                n = len(flat_p[i : i + bs])
                raise JudgeError(f"judge {self.backend.id!r} returned {len(got)} values for {n} windows")
            values.extend(float(v) for v in got)
        out: list[float] = []
        i = 0
        for pl in plans:
            k = len(pl.texts)
            out.append(_max_support(values[i : i + k]))
            i += k
            if pl.windowed:
                self._windowed += 1
                self._windows += k
        return out

    def stats(self) -> dict[str, int]:
        """The wrapped judge's counters (its ``scored`` counts windows) plus ``windowed`` (pairs scored in two
        or more windows) and ``windows`` (those pairs' windows)."""
        own = getattr(self.backend, "stats", None)
        base = dict(own()) if callable(own) else {}
        return {**base, "windowed": self._windowed, "windows": self._windows}

    def close(self) -> None:
        fn = getattr(self.backend, "close", None)
        if callable(fn):
            fn()

    def __repr__(self) -> str:
        return f"WindowedJudge({self.id!r})"


def _max_support(values: Sequence[float]) -> float:
    """The max of the windows' probabilities; an abstaining (NaN) window is no evidence; all abstain: NaN.

    >>> _max_support([0.2, float("nan"), 0.7]), _max_support([float("nan")])
    (0.7, nan)
    """
    decided = [v for v in values if not math.isnan(v)]
    return max(decided) if decided else math.nan
