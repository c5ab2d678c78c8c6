"""The packed record cache of one setting (``rageval score``; :mod:`rageval.run.cache` holds the cache).

``cache/records/<setting>/pack-<n>.jsonl``: each line a cache entry (``{"input_hash", "record"}``, the text a
per-record file holds), the last line of a question the one that counts (see :class:`Pack`).
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path

from rageval.io import atomic_file, check_folders

__all__ = ["Pack"]

log = logging.getLogger("rageval")

_PACK = re.compile(r"^pack-(\d{6,})\.jsonl$")
_MASK = (1 << 48) - 1  # an index entry's offset and length: 48 bits each


class Pack:
    """The packed cache of one setting (``cache/records/<setting>/pack-<n>.jsonl``): each line a cache entry
    (``{"input_hash", "record"}``, the text a per-record file holds), the last line of a question the one that
    counts.

    A run appends its entries to a new pack, one write per batch (:meth:`flush`); a killed run leaves its pack
    with the batches written before the kill (a torn last line is skipped when read).  A run that completes folds
    the setting's packs into one (:meth:`compact`: written atomically before the older ones are removed), so the
    folder holds one pack between runs.  A line that cannot be read is skipped with a warning and its question
    computed again; nothing is moved.
    """

    def __init__(self, folder: Path, out_dir: Path, *, durable: bool):
        self.folder, self.out_dir, self.durable = folder, out_dir, durable
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
        last = int(_PACK.match(self.packs[-1].name).group(1)) if self.packs else 0  # type: ignore[union-attr]
        self.new = folder / f"pack-{last + 1:06d}.jsonl"  # this run's pack, created at its first flush
        self._new = self._number(self.new)
        self._fd = -1  # its append descriptor
        self._size = 0  # bytes written to it
        self._buf = bytearray()

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

    def append(self, question_id: str, entry: str) -> None:
        data = entry.encode("utf-8")
        self.index[question_id] = self._where(self._new, self._size + len(self._buf), len(data))
        self._buf += data

    def flush(self) -> None:
        if not self._buf:
            return
        if self._fd < 0:
            check_folders(self.folder, self.out_dir)
            self.folder.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.new, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o666)
            self.packs.append(self.new)
        with memoryview(self._buf) as view:
            done = 0
            while done < len(view):
                done += os.write(self._fd, view[done:])
        if self.durable:
            os.fsync(self._fd)
        self._size += len(self._buf)
        self._buf.clear()

    def read(self, question_id: str) -> tuple[str, Path] | None:
        """The text of the question's last entry and its pack, or None."""
        where = self.index.get(question_id)
        if where is None:
            return None
        path, offset, length = self._at(where)
        if path == self.new and offset >= self._size:
            self.flush()
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

    def compact(self) -> None:
        """Fold the packs into one holding each question's last entry (a no-op for one pack)."""
        if len(self.packs) < 2:
            return
        self.close()
        keep = [p for p in self.packs if p == self.new]
        if any(where >> 96 != self._new for where in self.index.values()):  # entries in older packs: one pack of all
            last = int(_PACK.match(self.packs[-1].name).group(1))  # type: ignore[union-attr]
            folded = self.folder / f"pack-{last + 1:06d}.jsonl"
            fds: dict[Path, int] = {}
            try:
                with atomic_file(folded, root=self.out_dir, durable=self.durable) as fh:
                    for path, offset, length in map(self._at, self._in_file_order()):
                        if path not in fds:
                            fds[path] = os.open(path, os.O_RDONLY)
                        fh.write(os.pread(fds[path], length, offset))
            finally:
                for fd in fds.values():
                    os.close(fd)
            keep = [folded]
        for path in self.packs:
            if path not in keep:
                path.unlink(missing_ok=True)
        self.packs = keep
        self.index.clear()  # stale: the run is over

    def _in_file_order(self) -> list[int]:
        """The index entries by pack (its path's order) and offset."""
        by_name = sorted(self._paths, key=lambda n: str(self._paths[n]))
        if by_name == sorted(by_name):  # numbered in that order already (pack names of one width)
            return sorted(self.index.values())
        rank = {n: r for r, n in enumerate(by_name)}
        return sorted(self.index.values(), key=lambda w: (rank[w >> 96], w))

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
