"""The record cache's packs of an older layout (``rageval score`` before the record store; read, never written).

``cache/records/<setting>/pack-<n>.jsonl``: each line a cache entry (``{"input_hash", "record"}``, the text a
per-record file holds), the last line of a question the one that counts (see :class:`Pack`).  A run directory
written so still resumes: :class:`~rageval.run.cache.RecordCache` reads an entry here that its store
(:mod:`rageval.rundir.store`) lacks, moves it into the store, and removes the packs when the run completes.
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path

__all__ = ["Pack"]

log = logging.getLogger("rageval")

_PACK = re.compile(r"^pack-(\d{6,})\.jsonl$")
_MASK = (1 << 48) - 1  # an index entry's offset and length: 48 bits each


class Pack:
    """The packs of one setting (``cache/records/<setting>/pack-<n>.jsonl``, an older layout), read only: each
    line a cache entry (``{"input_hash", "record"}``), the last line of a question the one that counts.

    A torn last line (a killed run's) is skipped; a line that cannot be read is skipped with a warning and its
    question computed again.
    """

    def __init__(self, folder: Path, out_dir: Path):
        self.folder, self.out_dir = folder, out_dir
        #: question -> where its last entry lies, ``(pack number, offset, length)`` in one int (:meth:`_where`):
        #: some 80 bytes a question, the cache's only per-record memory
        self.index: dict[str, int] = {}
        self._paths: dict[int, Path] = {}  # pack number -> its file
        self.packs: list[Path] = []
        self._fds: dict[Path, int] = {}  # read descriptors of the packs
        self._bad: dict[Path, int] = {}
        self.has_files = False  # the folder holds per-record files (an older layout), read for what no pack has
        if folder.is_dir():
            names = [e.name for e in os.scandir(folder)]
            self.has_files = any(n.endswith(".json") for n in names)
            numbered = [(int(m.group(1)), n) for n in names if (m := _PACK.match(n))]
            for _, name in sorted(numbered):
                self._load(folder / name)
        for path, n in self._bad.items():
            log.warning(
                "rageval: warning: cache pack %s: %d unreadable line(s) skipped; their records are computed again",
                path.relative_to(out_dir),
                n,
            )

    def _number(self, path: Path) -> int:
        n = len(self._paths)
        self._paths[n] = path
        return n

    @staticmethod
    def _where(pack: int, offset: int, length: int) -> int:
        return (pack << 96) | (offset << 48) | length

    def _at(self, where: int) -> tuple[Path, int, int]:
        """``(pack, offset, length)`` of an index entry."""
        return self._paths[where >> 96], (where >> 48) & _MASK, where & _MASK

    def _load(self, path: Path) -> None:
        self.packs.append(path)
        number = self._number(path)
        offset = 0
        with open(path, "rb") as fh:
            for line in fh:
                n = len(line)
                if line.endswith(b"\n"):
                    try:
                        qid = json.loads(line)["record"]["question_id"]
                    except (ValueError, RecursionError, KeyError, TypeError):
                        qid = None
                    if isinstance(qid, str):
                        self.index[qid] = self._where(number, offset, n)
                    else:
                        self._bad[path] = self._bad.get(path, 0) + 1
                # else: the torn last line of a killed run: skipped
                offset += n

    def read(self, question_id: str) -> tuple[str, Path] | None:
        """The text of the question's last entry and its pack, or None."""
        where = self.index.get(question_id)
        if where is None:
            return None
        path, offset, length = self._at(where)
        fd = self._fds.get(path)
        if fd is None:
            fd = self._fds[path] = os.open(path, os.O_RDONLY)
        try:
            return os.pread(fd, length, offset).decode("utf-8"), path
        except UnicodeDecodeError:
            self.drop(question_id, "not UTF-8")
            return None

    def drop(self, question_id: str, why: str) -> None:
        """Forget the question's entry (it cannot be trusted: ``why``); it is computed again."""
        path = self._at(self.index.pop(question_id))[0]
        log.warning(
            "rageval: warning: cache pack %s: the entry of question %r is unreadable (%s); recomputing it",
            path.relative_to(self.out_dir),
            question_id,
            why,
        )

    def remove(self) -> None:
        """Remove the packs (the run completed: what it read of them is in the store now)."""
        self.close()
        for path in self.packs:
            path.unlink(missing_ok=True)
        self.packs = []
        self.index.clear()

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
