"""Records as columns: what the cohort and the metric tables read from a run's records (``records.jsonl``).

Records are the dicts of ``records.jsonl`` (``Record.to_dict()``); ``Record`` objects are accepted too.  This is the
one place that reads a record's question, setting, status, metrics and context measures into typed arrays; the
statistics (:mod:`rageval.stats`) take those arrays and know no record format.
"""

from __future__ import annotations

import functools
import math
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np

from rageval.stats.cohort import Cohort, cohort_of, wholly_unavailable_columns

__all__ = [
    "BLOCK",
    "MetricTable",
    "RecordColumns",
    "as_record_dict",
    "cell_matrix",
    "common_cohort",
    "metric_table",
    "metric_value",
    "setting_name",
    "wholly_unavailable",
]


def as_record_dict(rec: Any) -> Mapping[str, Any]:
    if isinstance(rec, Mapping):
        return rec
    to_dict = getattr(rec, "to_dict", None)
    if callable(to_dict):
        d = to_dict()
        if isinstance(d, Mapping):
            return d
    raise TypeError(f"a record must be a dict (one records.jsonl line) or a Record, got {type(rec).__name__}")


def setting_name(rec: Mapping[str, Any]) -> str:
    s = rec.get("setting")
    if isinstance(s, Mapping):
        s = s.get("name")
    if not isinstance(s, str):
        raise ValueError(f"record for question {rec.get('question_id')!r} has no setting name: {rec.get('setting')!r}")
    return s


def wholly_unavailable(statuses: Sequence[Any]) -> bool:
    """A setting that did not run: it has records and every one of them is ``unavailable`` (``statuses``: one
    per question, None where the setting has no record of it)."""
    present = np.array([st is not None for st in statuses], dtype=bool).reshape(-1, 1)
    unavailable = np.array([st == "unavailable" for st in statuses], dtype=bool).reshape(-1, 1)
    return bool(wholly_unavailable_columns(present, unavailable)[0])


def common_cohort(
    records: Iterable[Any], settings: Sequence[str] | None = None, *, leave_out_unavailable: bool = True
) -> Cohort:
    """The common cohort of ``records`` over ``settings`` (default: every setting seen).

    The cohort is the questions ``ok`` in every setting that ran: with
    ``leave_out_unavailable`` (the default, docs/design.md#common-cohort) a setting
    whose every record is ``unavailable`` is left out (``Cohort.left_out``) instead of
    emptying the cohort; ``False`` requires ``ok`` in every setting.

    >>> recs = [{"question_id": q, "setting": {"name": s}, "status": st}
    ...         for q, s, st in [("q1", "a", "ok"), ("q1", "b", "ok"), ("q2", "a", "ok"), ("q2", "b", "reader_error")]]
    >>> c = common_cohort(recs)
    >>> c.question_ids, c.counts["a"]["n_excluded"], c.counts["b"]["n_failed"]
    (('q1',), 1, 1)
    >>> recs += [{"question_id": q, "setting": {"name": "c"}, "status": "unavailable"} for q in ("q1", "q2")]
    >>> c = common_cohort(recs)
    >>> c.question_ids, c.left_out, c.counts["c"]["n_cohort"]
    (('q1',), ('c',), 0)
    """
    return RecordColumns.of(records, metrics=False).cohort(settings, leave_out_unavailable=leave_out_unavailable)


#: records per block of a metric column: each full block is kept in the narrowest float type holding its values
#: exactly (:class:`RecordColumns`)
BLOCK = 1 << 16
#: the narrower types a full block may be kept in, narrowest first (float16: integers up to 2,048, halves, NaN)
_NARROW = (np.float16, np.float32)


@functools.cache
def _nan_block(size: int) -> np.ndarray:
    """A full block of a metric not seen yet: float16 NaN, shared (a metric first met late costs nothing for it)."""
    out = np.full(size, np.nan, dtype=np.float16)
    out.flags.writeable = False
    return out


def _narrowest(values: np.ndarray) -> np.ndarray:
    """``values`` (float64) in the narrowest of float16, float32, float64 that holds each of them exactly."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for t in _NARROW:
            narrow: np.ndarray = values.astype(t)
            if np.array_equal(narrow, values, equal_nan=True):
                return narrow
    whole: np.ndarray = values.copy()
    return whole


class RecordColumns:
    """Records as columns, filled in one pass, a few bytes per record: what the cohort and the metric tables read.

    Per record: its question and setting (indexes into :attr:`question_ids` and :attr:`settings`, both in order
    of appearance), its status, each metric (NaN where undefined, absent or not a scalar) and the context's
    achieved ratio and tokens; no text is held.  A metric's values are float64 as they come; each full
    :data:`BLOCK` of them is kept in the narrowest float type holding every value of the block exactly (a count,
    a 0/1 or an undefined value: 2 bytes, not 8; the benchmark's 48 metrics: 126 bytes a record, not 384), and
    :meth:`column` gives them back as float64, the same values.  :meth:`of` fills them from records in one pass (the
    report reads ``records.jsonl`` as a stream: a run of a million records is held as these columns, not as
    records), then ask for the :meth:`cohort` and the :meth:`metric_table`.  ``metrics=False``: questions, settings
    and statuses only.

    >>> cols = RecordColumns.of(
    ...     {"question_id": q, "setting": {"name": s}, "status": "ok", "metrics": {"m": v}}
    ...     for q, s, v in [("q2", "a", 1), ("q1", "a", None), ("q1", "b", 0.5), ("q2", "b", True)]
    ... )
    >>> t = cols.metric_table(["q1", "q2"], ["a", "b"], ["m"])
    >>> t[("a", "m")].tolist(), t[("b", "m")].tolist()
    ([nan, 1.0], [0.5, 1.0])
    """

    def __init__(self, *, metrics: bool = True) -> None:
        self.question_ids: list[str] = []
        self.settings: list[str] = []
        self.statuses: list[Any] = []  # the distinct status values, in order of appearance
        self._q: dict[str, int] = {}
        self._s: dict[str, int] = {}
        self._st: dict[Any, int] = {}
        self.q, self.s, self.status = array("q"), array("q"), array("q")
        self.with_metrics = metrics
        self.metrics: dict[str, array[float]] = {}  # name -> its values since the last full block (float64)
        self._blocks: dict[str, list[np.ndarray]] = {}  # name -> its full blocks, each narrowed (_narrowest)
        self._done = 0  # records in full blocks
        self.scalar: dict[str, bool] = {}  # name -> every value a number, a bool or null
        self.ratio, self.tokens = array("d"), array("d")  # the context's achieved ratio and tokens per record

    @classmethod
    def of(cls, records: Iterable[Any], *, metrics: bool = True) -> RecordColumns:
        """The columns of ``records`` (``records.jsonl`` dicts or ``Record`` objects), each passed to :meth:`add`
        as it comes: the one way the columns are filled (a stream is read once, never held)."""
        cols = cls(metrics=metrics)
        for r in records:
            cols.add(as_record_dict(r))
        return cols

    def __len__(self) -> int:
        return len(self.q)

    def add(self, r: Mapping[str, Any]) -> None:
        """One record (a ``records.jsonl`` dict); a record without a string question id or a setting name is a
        ValueError."""
        qid = r.get("question_id")
        if not isinstance(qid, str):
            raise ValueError(f"record without a string question_id: {qid!r}")
        s = setting_name(r)
        st = r.get("status")
        qi = self._q.get(qid)
        if qi is None:
            qi = self._q[qid] = len(self.question_ids)
            self.question_ids.append(qid)
        si = self._s.get(s)
        if si is None:
            si = self._s[s] = len(self.settings)
            self.settings.append(s)
        sti = self._st.get(st)
        if sti is None:
            sti = self._st[st] = len(self.statuses)
            self.statuses.append(st)
        n = len(self.q)
        self.q.append(qi)
        self.s.append(si)
        self.status.append(sti)
        if not self.with_metrics:
            return
        ms = r.get("metrics")
        ms = ms if isinstance(ms, Mapping) else {}
        for k in ms:
            if k not in self.metrics:
                self.metrics[k] = array("d", [math.nan]) * (n - self._done)
                self._blocks[k] = [_nan_block(BLOCK)] * (self._done // BLOCK)
                self.scalar[k] = True
        for k, col in self.metrics.items():
            v = ms.get(k)
            if type(v) is float:
                col.append(v)
                continue
            try:
                col.append(metric_value(v))
            except TypeError:
                self.scalar[k] = False
                col.append(math.nan)
        ctx = r.get("context")
        ctx = ctx if isinstance(ctx, Mapping) else {}
        for key, out in (("achieved_ratio", self.ratio), ("achieved_tokens", self.tokens)):
            try:
                out.append(metric_value(ctx.get(key)))
            except TypeError:
                out.append(math.nan)
        if n + 1 - self._done == BLOCK:
            self._seal()

    def _seal(self) -> None:
        """Keep the full block of each metric narrowed; its float64 values are let go."""
        for k, tail in self.metrics.items():
            self._blocks[k].append(_narrowest(np.frombuffer(tail, dtype=np.float64)))
            self.metrics[k] = array("d")
        self._done += BLOCK

    def column(self, name: str) -> np.ndarray:
        """A metric's value per record, float64 (a view of the column up to :data:`BLOCK` records, a new array
        beyond: never written to)."""
        tail = np.frombuffer(self.metrics[name], dtype=np.float64)
        blocks = self._blocks[name]
        return np.concatenate([*blocks, tail], dtype=np.float64) if blocks else tail

    def context_column(self, key: str) -> np.ndarray:
        """The context's ``achieved_ratio`` or ``achieved_tokens`` per record (NaN: none)."""
        return np.frombuffer({"achieved_ratio": self.ratio, "achieved_tokens": self.tokens}[key], dtype=np.float64)

    def indexes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(question index, setting index, status index)`` per record."""
        return tuple(np.frombuffer(a, dtype=np.int64) for a in (self.q, self.s, self.status))  # type: ignore[return-value]

    def first_repeat(self) -> int | None:
        """The first record (in order) of a (question, setting) that an earlier record already has, else None."""
        if not len(self):
            return None
        q, s, _ = self.indexes()
        keys = q * len(self.settings) + s
        _, first = np.unique(keys, return_index=True)
        repeat = np.ones(keys.size, dtype=bool)
        repeat[first] = False
        return int(np.argmax(repeat)) if repeat.any() else None

    def check_unique(self) -> None:
        """A ValueError naming the first (question, setting) with two records."""
        i = self.first_repeat()
        if i is not None:
            qid, s = self.question_ids[self.q[i]], self.settings[self.s[i]]
            raise ValueError(
                f"two records for question {qid!r} in setting {s!r}: records of different runs or suites mixed?"
            )

    def status_code(self, status: Any) -> int:
        """The index of a status value in :attr:`statuses` (-2: no record has it)."""
        return self._st.get(status, -2)

    def cohort(self, settings: Sequence[str] | None = None, *, leave_out_unavailable: bool = True) -> Cohort:
        """The common cohort over ``settings`` (default: every setting seen; see :func:`common_cohort`)."""
        self.check_unique()
        settings = tuple(self.settings if settings is None else settings)
        unknown = [s for s in self.settings if s not in settings]
        if unknown:
            raise ValueError(f"records name settings {unknown} that are not in the family {list(settings)}")
        m = np.full((len(self.question_ids), len(settings)), -1, dtype=np.int64)  # status per question x setting
        if len(self):
            q, s_idx, st = self.indexes()
            col = np.array([settings.index(name) for name in self.settings], dtype=np.int64)
            m[q, col[s_idx]] = st
        return cohort_of(
            self.question_ids,
            settings,
            present=m >= 0,
            ok=m == self.status_code("ok"),
            unavailable=m == self.status_code("unavailable"),
            leave_out_unavailable=leave_out_unavailable,
        )

    def positions(self, question_ids: Sequence[str]) -> np.ndarray:
        """Per record: the position of its question in ``question_ids`` (-1: not there)."""
        to_pos = np.full(len(self.question_ids), -1, dtype=np.int64)
        for i, q in enumerate(question_ids):
            j = self._q.get(q)
            if j is not None:
                to_pos[j] = i
        out: np.ndarray = to_pos[self.indexes()[0]]
        return out

    def rows(self, setting: str, *, ok_only: bool = False) -> np.ndarray:
        """The records of ``setting`` (a boolean mask per record); only its ``ok`` ones with ``ok_only``."""
        _, s, st = self.indexes()
        mask = s == self._s.get(setting, -1)
        if ok_only:
            mask &= st == self.status_code("ok")
        out: np.ndarray = mask
        return out

    def aligned(
        self,
        values: np.ndarray,
        question_ids: Sequence[str],
        setting: str,
        *,
        ok_only: bool = False,
        pos: np.ndarray | None = None,
    ) -> np.ndarray:
        """``values`` (one per record) of ``setting``'s records aligned with ``question_ids`` (NaN: no record; a
        later record of a question wins).  ``pos``: :meth:`positions` of ``question_ids``, when already known."""
        pos = self.positions(question_ids) if pos is None else pos
        return _placed(values, *self._slots(setting, pos, ok_only=ok_only), len(question_ids))

    def _slots(self, setting: str, pos: np.ndarray, *, ok_only: bool) -> tuple[np.ndarray, np.ndarray]:
        """``(mask, at)``: the records of ``setting`` (its ``ok`` ones with ``ok_only``) whose question has a place
        in ``pos`` (:meth:`positions`), and that place of each."""
        mask = self.rows(setting, ok_only=ok_only) & (pos >= 0)
        return mask, pos[mask]

    def metric_table(
        self,
        question_ids: Sequence[str],
        settings: Sequence[str],
        metrics: Sequence[str],
        *,
        ok_only: bool = False,
        pos: np.ndarray | None = None,
    ) -> MetricTable:
        """``{(setting, metric): values aligned with question_ids}``, NaN where undefined or absent; ``ok_only``:
        from the ``ok`` records alone; ``pos``: :meth:`positions` of ``question_ids``, when already known.  Each
        setting's records are found once, for all its metrics; each value array is made when asked for
        (:class:`MetricTable`: the table holds no copy of the columns)."""
        pos = self.positions(question_ids) if pos is None else pos
        slots = {}
        for s in settings:
            mask, at = self._slots(s, pos, ok_only=ok_only)
            slots[s] = (np.flatnonzero(mask), at)
        present = [m for m in metrics if m in self.metrics]
        return MetricTable(self.column, present, slots, metrics, len(question_ids))


def _placed(values: np.ndarray, mask: np.ndarray, at: np.ndarray, n: int) -> np.ndarray:
    """``values[mask]`` placed at ``at`` in ``n`` NaNs (a later value for one place wins)."""
    out = np.full(n, np.nan)
    out[at] = values[mask]
    return out


class MetricTable(MutableMapping[tuple[str, str], np.ndarray]):
    """``{(setting, metric): values aligned with the questions}`` (NaN where undefined or absent), each made from
    the record columns when asked for: a new float64 array at each access, so a table of many metrics and
    settings holds no second copy of the columns (a report of a million records would otherwise hold every metric
    twice).  A key set in it (``table[key] = values``, ``update``) is held as given; keys iterate in table order
    (setting, then metric), then the keys set.

    ``slots``: per setting, the records placed (their indexes, in order) and the place of each
    (:meth:`RecordColumns._slots`); ``column``: a metric's value per record, given its name
    (:meth:`RecordColumns.column`: one column made at a time); ``present``: the metrics the records have (the
    others are NaN throughout)."""

    def __init__(
        self,
        column: Callable[[str], np.ndarray],
        present: Iterable[str],
        slots: Mapping[str, tuple[np.ndarray, np.ndarray]],
        metrics: Sequence[str],
        n: int,
    ) -> None:
        self._column, self._present, self._slots, self._n = column, set(present), dict(slots), n
        self._metrics = set(metrics)
        self._order = [(s, m) for s in self._slots for m in dict.fromkeys(metrics)]
        self._set: dict[tuple[str, str], np.ndarray] = {}
        self._gone: set[tuple[str, str]] = set()

    def _made(self, key: tuple[str, str]) -> bool:
        return (
            isinstance(key, tuple) and len(key) == 2 and key[0] in self._slots and key[1] in self._metrics
        ) and key not in self._gone

    def __getitem__(self, key: tuple[str, str]) -> np.ndarray:
        if key in self._set:
            return self._set[key]
        if not self._made(key):
            raise KeyError(key)
        if key[1] not in self._present:
            return np.full(self._n, np.nan)
        at_record, at = self._slots[key[0]]
        out = np.full(self._n, np.nan)
        out[at] = self._column(key[1])[at_record]
        return out

    def __setitem__(self, key: tuple[str, str], value: np.ndarray) -> None:
        self._set[key] = value

    def __delitem__(self, key: tuple[str, str]) -> None:
        if key in self._set:
            del self._set[key]
        elif self._made(key):
            self._gone.add(key)
        else:
            raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return key in self._set or self._made(key)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        made = [k for k in self._order if k not in self._gone]
        seen = set(made)
        yield from made
        yield from (k for k in self._set if k not in seen)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def cell_matrix(values: Mapping[Any, np.ndarray], cells: Sequence[Any], n: int) -> np.ndarray:
    """Questions x ``cells`` (float64): column j is ``values[cells[j]]`` (``n`` values), filled a column at a
    time, so no list of the columns is held beside the matrix (a table's columns are made on access:
    :class:`MetricTable`)."""
    out = np.empty((n, len(cells)))
    for j, c in enumerate(cells):
        out[:, j] = values[c]
    return out


def metric_value(v: Any) -> float:
    """A metric value as float; ``None``/NaN -> NaN; bools count 0/1; other types raise TypeError."""
    if v is None:
        return math.nan
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v)
    raise TypeError(f"not a scalar metric value: {v!r}")


def metric_table(
    records: Iterable[Any], question_ids: Sequence[str], settings: Sequence[str], metrics: Sequence[str]
) -> MetricTable:
    """``{(setting, metric): values aligned with question_ids}``, NaN where undefined or absent."""
    wanted, names = set(question_ids), set(settings)
    mine = (r for r in map(as_record_dict, records) if r.get("question_id") in wanted and setting_name(r) in names)
    return RecordColumns.of(mine).metric_table(question_ids, settings, metrics)
