"""Arrow arrays built from their buffers, for the record store (:mod:`rageval.rundir.store`) and its export.

``pa.array`` on a Python list imports pandas to ask whether the list is one of its objects: some 50 MB of memory
for a run that never uses it.  These build the same arrays without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

__all__ = ["floats", "ints", "strings"]


def strings(values: Sequence[str | None]) -> pa.Array:
    """A string array of ``values`` (None: null)."""
    data = [v.encode("utf-8") if v is not None else b"" for v in values]
    offsets = np.zeros(len(data) + 1, dtype=np.int32)
    np.cumsum([len(d) for d in data], out=offsets[1:])
    return pa.Array.from_buffers(
        pa.string(), len(data), [_validity(values), pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]
    )


def floats(values: Sequence[float | None]) -> pa.Array:
    """A float64 array of ``values`` (None: null)."""
    data = np.array([0.0 if v is None else v for v in values], dtype=np.float64)
    return pa.Array.from_buffers(pa.float64(), len(values), [_validity(values), pa.py_buffer(data)])


def ints(values: Sequence[int]) -> pa.Array:
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(np.asarray(values, dtype=np.int64))])


def _validity(values: Sequence[Any]) -> pa.Buffer | None:
    present = np.array([v is not None for v in values], dtype=bool)
    if present.all():
        return None
    return pa.py_buffer(np.packbits(present, bitorder="little"))
