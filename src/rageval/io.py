"""Atomic file writes: a kill leaves the old file or the new one, never half of one."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["write_text_atomic", "write_json_atomic", "dump_json_line"]


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, fsync'ed, then renamed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def dump_json_line(obj: Any) -> str:
    """The canonical JSON of rageval's files: sorted keys, UTF-8 kept."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False)


def write_json_atomic(path: str | os.PathLike, obj: Any, *, indent: int | None = None) -> None:
    write_text_atomic(path, json.dumps(obj, sort_keys=True, ensure_ascii=False, indent=indent) + "\n")
