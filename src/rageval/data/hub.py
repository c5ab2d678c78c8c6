"""The hub reader of the dataset loaders: a ``datasets.load_dataset`` id -> its raw records.

``datasets`` is imported only on this path (heavy); any failure becomes one
:class:`~rageval.data.errors.DataUnavailable` naming the id, the config, the split
and the offline fix.
"""

from __future__ import annotations

from typing import Any

from rageval.data.errors import DataUnavailable
from rageval.data.registry import LOADERS

__all__ = ["hub_records"]


def hub_records(hub_id: str, config: str | None, split: str | None, ds: str) -> tuple[list[Any], str]:
    """``(records, source)`` of split ``split`` (default: dataset ``ds``'s hub split) of a hub dataset."""
    split = split or LOADERS.meta(ds).split
    try:
        import datasets  # heavy: only on this path
    except ImportError as e:  # pragma: no cover - datasets is a dependency
        raise DataUnavailable(f"loading {hub_id!r} needs the 'datasets' package: {e}") from e
    try:
        data = datasets.load_dataset(hub_id, config, split=split)
    except Exception as e:
        shipped = (
            f"or use the shipped sample (rageval.data.sample_path({ds!r}))"
            if LOADERS.meta(ds).sample
            else f"rageval ships no {ds} rows"
        )
        raise DataUnavailable(
            f"could not load hub dataset {hub_id!r} (config={config!r}, split={split!r}): {type(e).__name__}: {e}. "
            f"Without hub access, download the file elsewhere and pass it (a suite: --dataset-path FILE; the API: "
            f"path=...); {shipped}."
        ) from e
    return [dict(row) for row in data], f"hub:{hub_id}[{split}]"
