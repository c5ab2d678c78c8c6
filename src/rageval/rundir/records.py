"""``records.jsonl`` written as a run goes: one line per record, in the run's order, never all in memory.

The engine's record cache (:class:`rageval.run.cache.RecordCache`) holds each finished record's text; this module
owns the file's order and its atomic replacement.  A record's line is the exact text its cache entry holds, so a
resumed run ends with the same bytes as an uninterrupted one.  (Reading the file back: :meth:`RunDir.record_lines
<rageval.rundir.manifest.RunDir.record_lines>`.)
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from rageval.io import atomic_file

__all__ = ["RecordsFile", "RecordSource"]


class RecordSource(Protocol):
    """Where a record's text let go of is read back from (the engine's record cache)."""

    @property
    def out_dir(self) -> Path: ...

    def read_line(self, setting: str, question_id: str, input_hash: str) -> str: ...


class _Sink(Protocol):
    def write(self, data: bytes) -> None: ...


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

    def __init__(self, cache: RecordSource, fh: _Sink, *, keep: int = 1024):
        self.cache, self.fh, self.keep = cache, fh, keep
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
    def open(cls, cache: RecordSource, *, keep: int = 1024, durable: bool = True) -> Iterator[RecordsFile]:
        """The run's ``records.jsonl``, replacing the old one atomically when the block ends without an error
        and with every expected record written (:func:`rageval.io.atomic_file`)."""
        with atomic_file(cache.out_dir / "records.jsonl", root=cache.out_dir, durable=durable) as fh:
            out = cls(cache, fh, keep=keep)
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
            self.count += 1
            self._head = None
