"""``records.jsonl`` written as a run goes: one line per record, in the run's order, never all in memory; and each
record's digest, written here and checked here for every reader.

The engine's record cache (:class:`rageval.run.cache.RecordCache`) holds each finished record's text; this module
owns the file's order and its atomic replacement.  A record's line is the exact text its cache entry holds, so a
resumed run ends with the same bytes as an uninterrupted one.  (Reading the file back: :meth:`RunDir.record_lines
<rageval.rundir.manifest.RunDir.record_lines>`.)

**Digests** (run-directory format :data:`DIGESTS_FROM` on; docs/security.md#run-directories-digests-and-bounds).
Each record's text ends with ``"digest": "sha256:<hex>"`` (:func:`record_text`, the one writer): the SHA-256 of
the record's canonical JSON without that field (:func:`canonical`: sorted keys, no white space, ASCII), so a
line re-serialised with its keys in another order or other white space keeps its digest, and a change of any value
does not.  :class:`RecordChecks` is the one check of a record read back — by the report, ``rescore``, ``audit``
and the record cache: its digest, and each metric within the catalog's declared bounds.  A digest catches
accidental and casual edits (a value changed by hand or by a script that knows nothing of it); it is no
signature: whoever edits a record and computes its digest again (:func:`record_digest` is public) is not caught.

>>> import json
>>> line = record_text({"question_id": "q1", "metrics": {"m": 0.5}})
>>> line.startswith('{"metrics": {"m": 0.5}, "question_id": "q1", "digest": "sha256:')
True
>>> value = json.loads(line)
>>> digest_problem(value) is None
True
>>> digest_problem(json.loads(json.dumps(dict(reversed(value.items())), indent=2))) is None  # same content
True
>>> value["metrics"]["m"] = 0.75
>>> digest_problem(value)
'its digest does not match its content'
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rageval.diagnostics.catalog import CATALOG
from rageval.infiles import JsonLines, loads
from rageval.io import atomic_file, dump_json_line

__all__ = [
    "DIGEST",
    "DIGESTS_FROM",
    "MAX_BLANK_LINES",
    "OLD_METRIC_NAMES",
    "OLD_NAMES_NOTE",
    "Edit",
    "RecordChecks",
    "RecordLines",
    "RecordSource",
    "RecordsFile",
    "canonical",
    "digest_problem",
    "record_digest",
    "record_text",
    "store_records_name",
    "text_digest",
    "renamed_old_metrics",
]

#: the field of a record that holds its digest
DIGEST = "digest"
#: the run-directory format (``manifest.json``'s ``format``) whose records carry a digest: from it on, a record
#: without one is an edit
DIGESTS_FROM = 3
#: the metric keys of a record scored by ``answer_in_context`` before 2.0.0 and their names now: its
#: ``answer_in_context`` was the within-one-unit variant, its ``answer_in_context_packed`` the packed context's
#: (:func:`renamed_old_metrics`)
OLD_METRIC_NAMES: dict[str, str] = {
    "answer_in_context": "answer_in_context_unit",
    "answer_in_context_packed": "answer_in_context",
}
#: the one-line note of a run read with records scored before answer_in_context 2.0.0 (after the run's path)
OLD_NAMES_NOTE = (
    "records scored before answer_in_context 2.0.0: their answer_in_context (a match inside one unit) is read as "
    "answer_in_context_unit, their answer_in_context_packed (the packed context) as answer_in_context"
)
#: the blank lines a ``records.jsonl`` may hold (rageval writes none): beyond them the file is refused at once, so
#: that a file of blank lines (hundreds of megabytes of them) is not read line by line for minutes
MAX_BLANK_LINES = 10_000


def store_records_name(out_dir: str | Path) -> str:
    """How messages name a run's records read from its record store (a run written without ``records.jsonl``): that
    file's path, ``(in the record store)``."""
    return f"{Path(out_dir) / 'records.jsonl'} (in the record store)"


def canonical(value: Mapping[str, Any]) -> bytes:
    """The canonical JSON of a record without its digest: sorted keys, no white space, ASCII (what its digest is
    taken of)."""
    body = {k: v for k, v in value.items() if k != DIGEST}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def record_digest(value: Mapping[str, Any]) -> str:
    """``"sha256:<hex>"`` of :func:`canonical` of ``value`` (a record as JSON reads it; its own digest left out)."""
    return "sha256:" + hashlib.sha256(canonical(value)).hexdigest()


def record_text(record: Mapping[str, Any]) -> str:
    """The one writer of a record's text (its line of ``records.jsonl``, and its cache entry's record): rageval's
    JSON of ``record`` (:func:`~rageval.io.dump_json_line`: sorted keys, a NaN written null) with its digest as
    the last field, taken of the text as JSON reads it back."""
    body = {k: v for k, v in record.items() if k != DIGEST}
    text = dump_json_line(body)
    digest = record_digest(json.loads(text))
    return ("{" if text == "{}" else text[:-1] + ", ") + f'"{DIGEST}": "{digest}"}}'


def text_digest(text: str) -> str:
    """The digest a :func:`record_text` text ends with (read off its last field, not computed again).

    >>> t = record_text({"question_id": "q1"})
    >>> text_digest(t) == json.loads(t)["digest"]
    True
    """
    head = f'"{DIGEST}": "'
    return text[text.rindex(head) + len(head) : -2]


def digest_problem(value: Mapping[str, Any]) -> str | None:
    """Why the record ``value`` (as JSON reads it) is not as its digest says, None when it is."""
    found = value.get(DIGEST)
    if found is None:
        return "it has no digest"
    if not isinstance(found, str) or found != record_digest(value):
        return "its digest does not match its content"
    return None


@dataclass(frozen=True)
class Edit:
    """A record read although it was edited (``--accept-edits``): its line, question, setting and what is wrong."""

    line: int
    question_id: Any
    setting: Any
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "question_id": self.question_id, "setting": self.setting, "why": self.why}


def _setting_of(value: Mapping[str, Any]) -> Any:
    s = value.get("setting")
    return s.get("name") if isinstance(s, Mapping) else s


@dataclass
class RecordChecks:
    """The one check of a record read back from a run (module doc): its digest (``digests``: the run's format
    has them) and its metrics' bounds (``bounds``: output -> (low, high); default the catalog's).

    A record whose digest does not match is an error naming it (:meth:`problem`), unless ``accept_edits``: then it
    is read and listed in :attr:`edits` (the first :attr:`KEEP`; :attr:`n_edits` counts them all).  A metric
    outside its bounds is an error even so: no edit makes such a value true.
    """

    path: Path
    digests: bool
    accept_edits: bool = False
    bounds: Mapping[str, tuple[float, float]] | None = None
    edits: list[Edit] = field(default_factory=list)
    n_edits: int = 0
    KEEP = 100

    def __post_init__(self) -> None:
        if self.bounds is None:
            self.bounds = CATALOG.bounds()

    def _where(self, value: Mapping[str, Any], lineno: int) -> str:
        return (
            f"{self.path} line {lineno}: the record of question {value.get('question_id')!r}, setting "
            f"{_setting_of(value)!r}"
        )

    def problem(self, value: Mapping[str, Any], lineno: int) -> str | None:
        """The one-line refusal of the record ``value`` (as JSON read it) on line ``lineno``, else None (an edit
        accepted is kept in :attr:`edits`)."""
        bad = self.out_of_bounds(value)
        if bad is not None:
            key, v, (lo, hi) = bad
            return (
                f"{self._where(value, lineno)} has {key} = {v!r}, outside its declared bounds [{lo:g}, {hi:g}] "
                "(edited, or written by a faulty metric); rerun the command that wrote it"
            )
        if not self.digests:
            return None
        why = digest_problem(value)
        if why is None:
            return None
        if self.accept_edits:
            self.n_edits += 1
            if len(self.edits) < self.KEEP:
                self.edits.append(Edit(lineno, value.get("question_id"), _setting_of(value), why))
            return None
        return (
            f"{self._where(value, lineno)} was edited after rageval wrote it ({why}); rerun the command that "
            "wrote it, or read it anyway with --accept-edits"
        )

    def out_of_bounds(self, value: Mapping[str, Any]) -> tuple[str, Any, tuple[float, float]] | None:
        """The first metric of ``value`` outside its declared bounds: ``(key, value, bounds)``; None/NaN (undefined)
        and a value that is no number pass."""
        metrics = value.get("metrics")
        if not isinstance(metrics, Mapping) or not self.bounds:
            return None
        for key, v in metrics.items():
            b = self.bounds.get(key)
            if b is None or isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            if isinstance(v, float) and math.isnan(v):
                continue
            if not (b[0] <= v <= b[1]) or not math.isfinite(v):
                return key, v, b
        return None

    def summary(self, command: str) -> dict[str, Any] | None:
        """What the manifest records of the edits accepted (None: none): how many, by which command, which."""
        if not self.n_edits:
            return None
        return {
            "command": command,
            "records": self.n_edits,
            "listed": [e.to_json() for e in self.edits],
            "note": f"{self.n_edits} record(s) of {self.path} edited after rageval wrote them, read with "
            "--accept-edits",
        }


class RecordLines(JsonLines):
    """``records.jsonl`` read line by line (:class:`~rageval.infiles.JsonLines`), blank lines skipped but at most
    :data:`MAX_BLANK_LINES` of them: rageval writes none, so a file of more is not a run's records (refused in one
    line as soon as the bound is passed, never read to its end)."""

    def __iter__(self) -> Iterator[tuple[int, int, bytes, Any]]:
        blank = 0
        for lineno, offset, raw, line in self._lines():
            if line.strip(" \t\r\n"):
                yield lineno, offset, raw, loads(line, f"{self.name} line {lineno}", error=self.error)
                continue
            blank += 1
            if blank > MAX_BLANK_LINES:
                raise self.error(
                    f"{self.name}: more than {MAX_BLANK_LINES:,} blank lines (line {lineno}): not records rageval "
                    "wrote (it writes no blank line)"
                )


class RecordSource(Protocol):
    """Where a record's text let go of is read back from (the engine's record cache)."""

    @property
    def out_dir(self) -> Path: ...

    def read_line(self, setting: str, question_id: str, input_hash: str) -> str: ...


class _Sink(Protocol):
    def write(self, data: bytes) -> None: ...


class _Discard:
    def write(self, data: bytes) -> None:
        del data


class RecordsFile:
    """``records.jsonl`` written as a run goes (:meth:`open`): one line per record, in the run's order, never all
    in memory.

    The engine announces each setting's questions in output order (:meth:`expect`: an iterable, taken only as far
    as the file gets, so a setting of a million questions is not listed in memory) and hands over each record's
    text as it is reused or computed (:meth:`put`, with its input hash); a line is written as soon as every line
    before it is.  At most ``keep`` out-of-order texts are held; the others wait as their input hash and are read
    back from the cache when due (:meth:`RecordSource.read_line`), so a record computed long
    before its turn (a setting whose lines come in another order than the run's questions) costs some hundred
    bytes while it waits.  A failed run leaves the previous ``records.jsonl``.
    """

    def __init__(
        self, cache: RecordSource, fh: _Sink, *, keep: int = 1024, on_line: Callable[[str, str], None] | None = None
    ):
        self.cache, self.fh, self.keep = cache, fh, keep
        self.on_line = on_line  # told each line's (setting, question) as it is written (the record store's order)
        self.count = 0
        #: the announced settings' questions still to write: (setting, its (question, input hash or None) pairs)
        self._order: deque[tuple[str, Iterator[tuple[str, str | None]]]] = deque()
        self._head: tuple[str, str, str | None] | None = None  # the next line's (setting, question, input hash)
        #: per setting, the finished records not yet written: question -> text, or (let go: in its cache file)
        #: its input hash as bytes (b"": the announced one)
        self._ready: dict[str, dict[str, str | bytes]] = {}
        #: the texts held, oldest first: (setting, question) -> the input hash put with it
        self._held: OrderedDict[tuple[str, str], str | None] = OrderedDict()

    @classmethod
    @contextmanager
    def open(
        cls,
        cache: RecordSource,
        *,
        keep: int = 1024,
        durable: bool = True,
        on_line: Callable[[str, str], None] | None = None,
        write: bool = True,
    ) -> Iterator[RecordsFile]:
        """The run's ``records.jsonl``, replacing the old one atomically when the block ends without an error
        and with every expected record written (:func:`rageval.io.atomic_file`).  ``write=False``: the lines go
        nowhere (a run without the file: its record store is the record file; ``on_line`` still tells their
        order)."""
        path = cache.out_dir / "records.jsonl"
        with atomic_file(path, root=cache.out_dir, durable=durable) if write else nullcontext(_Discard()) as fh:
            out = cls(cache, fh, keep=keep, on_line=on_line)
            yield out
            out.check_complete()

    def check_complete(self) -> None:
        """Every expected record written (a record missing is a bug of the caller's: RuntimeError)."""
        head = self._next()
        if head is not None or any(self._ready.values()):
            setting, qid = head[:2] if head is not None else next((s, q) for s, r in self._ready.items() for q in r)
            raise RuntimeError(f"records.jsonl: no record of setting {setting!r}, question {qid!r}")

    def expect(self, setting: str, questions: Iterable[tuple[str, str | None]]) -> None:
        """The setting's ``(question, input hash)`` pairs (the hash None: the one :meth:`put` gives), in the order
        their lines go in the file; taken as the file advances."""
        self._order.append((setting, iter(questions)))
        self._flush()

    def put(self, setting: str, question_id: str, text: str, input_hash: str | None = None) -> None:
        """The finished record's JSON text (:meth:`RecordCache.write` / :meth:`RecordCache.read_entry`) and its
        input hash (None: the announced one), the cache entry read back should the text be let go."""
        self._ready.setdefault(setting, {})[question_id] = text
        self._held[(setting, question_id)] = input_hash
        while len(self._held) > self.keep:  # out of order for long: let the oldest go, read it back when due
            (s, q), h = self._held.popitem(last=False)
            self._ready[s][q] = h.encode() if h is not None else b""
        self._flush()

    def _next(self) -> tuple[str, str, str | None] | None:
        """The next line's (setting, question, announced input hash), None when every announced one is written."""
        while self._head is None and self._order:
            setting, questions = self._order[0]
            nxt = next(questions, None)
            if nxt is None:
                self._order.popleft()
            else:
                self._head = (setting, nxt[0], nxt[1])
        return self._head

    def _flush(self) -> None:
        while (head := self._next()) is not None:
            setting, qid, h = head
            ready = self._ready.get(setting)
            text = ready.pop(qid, None) if ready else None
            if text is None:
                return
            if isinstance(text, bytes):  # let go: read back from the cache, checked against its input hash
                text = self.cache.read_line(setting, qid, text.decode() if text else str(h))
            else:
                self._held.pop((setting, qid), None)
            self.fh.write(text.encode("utf-8") + b"\n")
            if self.on_line is not None:
                self.on_line(setting, qid)
            self.count += 1
            self._head = None


def renamed_old_metrics(metrics: Any, old_run: bool) -> dict[str, Any] | None:
    """A record's metrics under today's names when ``answer_in_context`` before 2.0.0 scored it, else None.

    Such a record carries ``answer_in_context`` without ``answer_in_context_unit`` (2.0.0 writes both) and either
    ``answer_in_context_packed`` (1.2.0's) or comes from a run written before (``old_run``: a run directory of a
    format before :data:`~rageval.rundir.manifest.PACKED_AIC_FROM`): its ``answer_in_context`` is the
    within-one-unit variant, its ``answer_in_context_packed`` the packed context's (:data:`OLD_METRIC_NAMES`;
    docs/design.md#answer-in-context).

    >>> renamed_old_metrics({"answer_in_context": 0.0, "answer_in_context_packed": 1.0}, False)
    {'answer_in_context_unit': 0.0, 'answer_in_context': 1.0}
    >>> renamed_old_metrics({"answer_in_context": 0.0}, True)
    {'answer_in_context_unit': 0.0}
    >>> renamed_old_metrics({"answer_in_context": 0.0}, False) is None  # today's run: today's names
    True
    """
    if not isinstance(metrics, Mapping) or "answer_in_context" not in metrics or "answer_in_context_unit" in metrics:
        return None
    if not old_run and "answer_in_context_packed" not in metrics:
        return None
    return {str(OLD_METRIC_NAMES.get(k, k)): v for k, v in metrics.items()}  # JSON keys: str already
