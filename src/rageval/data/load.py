"""The entry points of the dataset loaders: a file (or a hub id) or raw records -> :class:`Example` s.

:func:`load_examples` reads a local ``.json``/``.jsonl`` file
(:mod:`rageval.data.files`) or, for users with hub access, a
``datasets.load_dataset`` id (:mod:`rageval.data.hub`), and the dataset's builder
(:data:`rageval.data.registry.LOADERS`) turns each record into examples in
rageval's schema.  Layouts are recognised from the records themselves; each
dataset's module lists its own: :mod:`rageval.data.asqa` (``din0s/asqa``, ALCE's
eval layout), :mod:`rageval.data.qasper`, :mod:`rageval.data.multihop` (HotpotQA,
2WikiMultiHopQA), :mod:`rageval.data.musique`.

Document ids are ``d0, d1, …`` in the dataset's own candidate order (ASQA corpus
passages: ``w`` + a hash of their text, so they are stable whatever subset is
loaded); snippet ids are ``{doc_id}.s{sentence}``.  Dataset inconsistencies that
are not structural (a HotpotQA supporting fact pointing past the last sentence,
a QASPER evidence string that is a table caption) are kept in ``Example.meta``,
not raised.  Structural problems raise :class:`~rageval.data.errors.DataLoadError`
naming the file, the record, the field and what was expected.

>>> from rageval.data import sample_path
>>> exs = load_examples("hotpotqa", sample_path("hotpotqa"), limit=1)
>>> exs[0].answers, exs[0].gold_doc_ids, exs[0].supporting_facts
(('a spirit',), ('d9', 'd5'), ('d9.s3', 'd5.s0'))
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rageval.data.errors import DataLoadError
from rageval.data.fields import LocatedRecord
from rageval.data.files import read_records
from rageval.data.hub import hub_records
from rageval.data.registry import LOADERS, canonical_dataset
from rageval.data.schema import Example

__all__ = ["examples_from_records", "load_examples"]


def examples_from_records(
    name: str, records: Iterable[Any], *, source: str = "<records>", limit: int | None = None
) -> list[Example]:
    """Convert raw records (dicts in any supported layout) into examples."""
    ds = canonical_dataset(name)
    build = LOADERS.get(ds)
    out: list[Example] = []
    for i, rec in enumerate(records):
        if limit is not None and len(out) >= limit:
            break
        got = build(LocatedRecord(rec, source, i), ds)
        out.extend(got if isinstance(got, list) else [got])
    if limit is not None:
        out = out[:limit]
    seen: dict[str, int] = {}
    for ex in out:
        if ex.id in seen:
            raise DataLoadError(source, None, None, f"question id {ex.id!r} occurs twice; ids must be unique")
        seen[ex.id] = 1
    return out


def load_examples(
    name: str,
    path: str | Path | None = None,
    *,
    hub_id: str | None = None,
    hub_config: str | None = None,
    split: str | None = None,
    limit: int | None = None,
) -> list[Example]:
    """Load a dataset into :class:`Example` objects.

    ``name`` is one of :data:`~rageval.data.registry.DATASETS` (aliases such as ``2wiki`` accepted);
    ``path`` a local ``.json``/``.jsonl`` file in a supported layout (see the module
    docstring and the dataset's module); or ``hub_id`` (+ ``hub_config``, ``split``) for
    ``datasets.load_dataset``.  ``limit`` keeps the first questions.
    """
    ds = canonical_dataset(name)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be a non-negative integer or None, got {limit!r}")
    if (path is None) == (hub_id is None):
        raise ValueError(
            f"load_examples({name!r}) needs exactly one of path= (a local .json/.jsonl file, e.g. "
            f"rageval.data.sample_path({ds!r})) or hub_id= (a datasets.load_dataset id)"
        )
    if path is not None:
        p = Path(path)
        records, source = read_records(p), str(p)
    else:
        records, source = hub_records(hub_id, hub_config, split, ds)  # type: ignore[arg-type]
    return examples_from_records(ds, records, source=source, limit=limit)
