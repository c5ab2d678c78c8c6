"""What rageval writes in a run directory, and the check every writing command makes before it writes.

**Output names.**  rageval writes, at the top of a run directory, only the names
of :data:`OUTPUT_FILES` and :data:`OUTPUT_PATTERNS` (the report's figures), the
folders of :data:`OUTPUT_FOLDERS` (``cache/``; ``rescore-*/``, a run directory of
its own; ``audit-*/``) and the temporary files of its atomic writer beside them
(``.<name>.<8 characters>.tmp``, :mod:`rageval.io`).  Every other entry is the
user's and is never written, moved or removed.

**Whose files.**  A directory is rageval's when it holds rageval's marker: a
``manifest.json`` or a ``cache/suite.json`` that is a regular file holding a JSON
object (the engine writes ``cache/suite.json`` before its first record, the report
writes it into a fresh ``--out``).  In a directory that is rageval's, every entry
of an output name is rageval's and is rewritten; in any other, an entry of an
output name is a user's file (a ``report.html`` of their own, a ``summary.md``)
and the command is refused before it writes anything.

:func:`claim` — called by every writing command under the directory's lock — refuses
(:class:`~rageval.rundir.errors.RunDirError`, one line, exit 2):

* an input of the command (a score file, a suite's dataset, a saved reader's answers)
  inside the directory: rageval would write over what it reads;
* a user's file of an output name in a directory that is not rageval's;
* a symbolic link — or a FIFO, socket or device — at any path rageval writes:
  an output name at the top, anything under ``cache/`` and ``audit-*/`` (the record
  cache, the judge's sqlite and its ``-wal``/``-shm``, the quarantine), so nothing
  is written or read through a link;

and removes the temporary files a killed writer left in those folders (no write is
in flight while the lock is held).  ``rescore-*/`` folders are checked for being
links but not entered: each is a run directory with its own lock and its own claim.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from rageval.io import TEMP_NAME, remove_temps, write_json_atomic
from rageval.rundir.manifest import RunDirError

__all__ = [
    "OUTPUT_FILES",
    "OUTPUT_FOLDERS",
    "OUTPUT_PATTERNS",
    "OwnershipError",
    "claim",
    "is_output_name",
    "mark_run",
    "owned",
    "refuse_inputs",
]

#: the files rageval writes at the top of a run directory
OUTPUT_FILES = frozenset(
    {
        ".rageval.lock",
        "manifest.json",
        "records.jsonl",
        "run_stats.json",
        "unmatched.csv",
        "summary.csv",
        "summary.md",
        "contrasts.csv",
        "contrasts.md",
        "validity.csv",
        "validity.md",
        "reattribution_sweep.csv",
        "reattribution_sweep.png",
        "reattribution_sweep.svg",
        "report.json",
        "report.html",
    }
)
#: the report's figures
OUTPUT_PATTERNS = (re.compile(r"^(frontier|pareto)_.+\.(png|svg)$"),)
#: the folders rageval writes at the top of a run directory (``cache``; ``rescore-<judge>``, ``audit-<judge>``)
OUTPUT_FOLDERS = (re.compile(r"^cache$"), re.compile(r"^rescore-.+$"), re.compile(r"^audit-.+$"))
_MARKERS = ("manifest.json", "cache/suite.json")
#: what must be a file, and what a folder, where it exists (rageval would fail writing it otherwise)
_FILES_IN = frozenset({"cache/suite.json", "cache/plots.json"})
_FOLDERS_IN = frozenset({"cache/records", "cache/store", "cache/judge", "cache/quarantine"})


class OwnershipError(RunDirError):
    """A run directory rageval may not write: it holds an input, a user's file of an output name, or a link."""


def _is_output(name: str) -> bool:
    return name in OUTPUT_FILES or any(p.match(name) for p in OUTPUT_PATTERNS + OUTPUT_FOLDERS)


def is_output_name(name: str) -> bool:
    """True for a name rageval writes at the top of a run directory, or a temporary file of one.

    >>> [is_output_name(n) for n in ("report.html", "frontier_f1.png", ".summary.md.ab12cd34.tmp", "notes.md")]
    [True, True, True, False]
    """
    m = TEMP_NAME.match(name)
    return _is_output(m.group("name") if m else name)


def _markers(out: Path) -> Iterator[tuple[Path, str | None]]:
    """``(marker, None)`` for each readable marker in ``out``, ``(marker, what is wrong)`` for an unreadable one."""
    for marker in _MARKERS:
        path = out / marker
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            data = json.loads(path.read_bytes().decode("utf-8"))
        except OSError:
            continue
        except (ValueError, RecursionError) as err:  # not UTF-8, not JSON
            yield path, f"not valid JSON ({str(err)[:100]})"
            continue
        yield path, None if isinstance(data, dict) else "names no suite, so the run it holds is unknown"


def owned(out: Path) -> bool:
    """True when ``out`` holds rageval's marker (see the module doc)."""
    return any(problem is None for _, problem in _markers(out))


def _refuse_broken_marker(out: Path) -> None:
    for path, problem in _markers(out):
        if problem is not None:
            raise OwnershipError(f"{path}: {problem}; delete the output directory or choose another --out")


def _inside(path: Path, folder: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(folder))
    except ValueError:
        return False
    return True


def refuse_inputs(out: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]]) -> None:
    """Refuse an input inside ``out`` (links resolved): checked before the inputs are read, and again by
    :func:`claim`."""
    for p in inputs:
        if _inside(Path(p), Path(out)):
            raise OwnershipError(
                f"{p} is inside the output directory {out}: rageval would write over its own input; "
                "choose another --out (or output_dir), or move the input out of it"
            )


def _walk(out: Path) -> Iterator[tuple[os.DirEntry[str], bool]]:
    """``(entry, top)`` for each entry rageval writes in ``out``: output names at the top, everything inside
    ``cache/`` and ``audit-*/``; ``rescore-*/`` folders themselves but not their content."""
    try:
        top = list(os.scandir(out))
    except (FileNotFoundError, NotADirectoryError):
        return
    stack: list[str] = []
    for e in top:
        if is_output_name(e.name):
            yield e, True
            if e.is_dir(follow_symlinks=False) and not e.name.startswith("rescore-"):
                stack.append(e.path)
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                yield e, False
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)


def _kind(mode: int) -> str | None:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"


def _leftover(folder: str) -> bool:
    """True when ``folder`` holds nothing but rageval's temporary files (a first run killed before its marker)."""
    for root, _dirs, files in os.walk(folder):
        if any(not TEMP_NAME.match(f) for f in files):
            return False
    return True


def _wrong_kind(e: os.DirEntry[str], rel: str) -> str | None:
    """What is wrong with the kind of ``e`` (at ``rel`` in the run directory), or None."""
    mode = e.stat(follow_symlinks=False).st_mode
    kind = _kind(mode)
    if kind is not None:
        return kind
    folder = stat.S_ISDIR(mode)
    top = "/" not in rel
    if folder and (rel in _FILES_IN or (top and _is_output(rel) and not any(p.match(rel) for p in OUTPUT_FOLDERS))):
        return "a folder where rageval writes a file"
    if not folder and (rel in _FOLDERS_IN or (top and any(p.match(rel) for p in OUTPUT_FOLDERS))):
        return "a file where rageval writes a folder"
    return None


def _refuse_special(e: os.DirEntry[str], out: Path) -> None:
    kind = _wrong_kind(e, Path(e.path).relative_to(out).as_posix())
    if kind is not None:
        raise OwnershipError(
            f"{e.path} is {kind} inside the output directory; remove it (rageval never writes or reads through a "
            "link in a run directory, nor replaces what is not its own)"
        )


def _refuse_foreign(e: os.DirEntry[str], out: Path) -> None:
    if e.name == ".rageval.lock" or TEMP_NAME.match(e.name):
        return  # the lock this command holds; a killed writer's temporary file
    if e.name == "cache" and e.is_dir(follow_symlinks=False) and _leftover(e.path):
        return
    raise OwnershipError(
        f"{e.path} is not rageval's ({out} holds no rageval run: no manifest.json or cache/suite.json) and rageval "
        "writes a file of that name; move it, or choose another --out (or output_dir)"
    )


def claim(out: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]] = ()) -> list[Path]:
    """Check that ``out`` may be written (see the module doc; call it holding the directory's lock); return the
    temporary files of a killed writer it removed."""
    out = Path(out)
    refuse_inputs(out, inputs)
    mine = owned(out)
    entries = list(_walk(out))  # every check before the first removal
    for e, _ in entries:
        _refuse_special(e, out)
    if not mine:
        _refuse_broken_marker(out)
        for e, top in entries:
            if top:
                _refuse_foreign(e, out)
    return remove_temps(e for e, _ in entries)


def mark_run(out_dir: Path, name: str, suite_hash: str | None) -> None:
    """``cache/suite.json``: the run that owns ``out_dir`` (rageval's marker, :func:`owned`)."""
    write_json_atomic(
        Path(out_dir) / "cache" / "suite.json", {"suite": {"name": name, "hash": suite_hash}}, root=out_dir
    )
