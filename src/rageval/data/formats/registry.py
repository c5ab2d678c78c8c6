"""The input formats of ``rageval score``: one registry entry per format (docs/architecture.md#add-an-input-format).

Each format is ``FORMATS.register(name, reader, FormatMeta(...))``: its *reader* (``"module:attr"`` or the
callable) turns one input into an :class:`~rageval.data.formats.common.ImportedFile`, and its
:class:`FormatMeta` says how ``--format auto`` recognises it — a *sniffer* that looks at a :class:`Peek` of the
file (its first JSON value), in the declared ``order``, or the file's suffix or the source's prefix — and how the
error that names no format describes it.  Everything that lists formats reads this registry: ``--format``'s
choices, a suite's ``dataset.format``, the saved reader's ``format``, the messages and the docs' table
(:func:`formats_table`).  Registering imports neither the reader nor the sniffer.

>>> FORMATS.names()
['generic', 'alce', 'ragchecker', 'ragas', 'flashrag']
>>> detection_order()
['alce', 'ragchecker', 'flashrag', 'ragas', 'generic']
>>> FORMATS.meta("ragas").suffixes
('.csv', '.tsv', '.parquet', '.pq')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rageval.data.formats.common import HF_PREFIX
from rageval.registry import Registry, import_target

__all__ = ["FORMATS", "FormatMeta", "Peek", "detection_order", "formats_table", "sniffer", "spoken_list"]


@dataclass(frozen=True)
class Peek:
    """What a sniffer sees of one input: its ``source`` (as given), its ``path`` and ``document``, the first JSON
    value of the file (the first line of JSON lines, else the whole document; None when neither is JSON)."""

    source: str
    path: Path
    document: Any

    @property
    def row(self) -> Mapping[str, Any] | None:
        """The first row: the document when it is an object, else the first item of a non-empty array when that is
        an object, else None."""
        doc = self.document
        if isinstance(doc, list) and doc:
            doc = doc[0]
        return doc if isinstance(doc, Mapping) else None


#: a sniffer: whether the input a :class:`Peek` shows is in this format
Sniffer = Callable[[Peek], bool]


@dataclass(frozen=True)
class FormatMeta:
    """How ``--format auto`` recognises a format, and how messages name it.

    ``description``: the format in the words of the error that recognises none ("an ALCE result file (...)");
    ``sniffer``: ``"module:attr"`` or a callable ``(Peek) -> bool`` (None: read only when named with ``--format``);
    ``order``: sniffers run in ascending order (ties: registration order), the catch-all generic layout last;
    ``suffixes``/``prefixes``: file suffixes (lower case) and source prefixes that are this format without reading
    the file (tried before any sniffer, in the same order); ``columns``: the reader reads rows by column, as
    ``reader(source, mapping, split)`` (``--map``, ``--split`` and ``hf:<id>`` apply), else ``reader(path)``.
    """

    description: str
    sniffer: str | Sniffer | None = None
    order: int = 50
    suffixes: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    columns: bool = False


#: The formats: name -> reader, in the order ``--format`` and the messages list them.
FORMATS: Registry[Callable[..., Any], FormatMeta] = Registry("format", meta=FormatMeta)
FORMATS.register(
    "generic",
    "rageval.data.formats.generic:read_generic",
    FormatMeta("the generic layout (question, answer, ...)", "rageval.data.formats.generic:sniff_generic", order=100),
)
FORMATS.register(
    "alce",
    "rageval.data.formats.alce:read_alce",
    FormatMeta(
        "an ALCE result file ({args, data: [{question, output, docs}]})",
        "rageval.data.formats.alce:sniff_alce",
        order=10,
    ),
)
FORMATS.register(
    "ragchecker",
    "rageval.data.formats.ragchecker:read_ragchecker",
    FormatMeta("a RAGChecker file ({results: [...]})", "rageval.data.formats.ragchecker:sniff_ragchecker", order=20),
)
FORMATS.register(
    "ragas",
    "rageval.data.formats.ragas:read_ragas",
    FormatMeta(
        "RAGAS columns",
        "rageval.data.formats.ragas:sniff_ragas",
        order=40,
        suffixes=(".csv", ".tsv", ".parquet", ".pq"),
        prefixes=(HF_PREFIX,),
        columns=True,
    ),
)
FORMATS.register(
    "flashrag",
    "rageval.data.formats.flashrag:read_flashrag",
    FormatMeta(
        "FlashRAG's intermediate_data.json ([{question, golden_answers, output: {pred, ...}}])",
        "rageval.data.formats.flashrag:sniff_flashrag",
        order=30,
    ),
)


def detection_order() -> list[str]:
    """The format names in the order ``--format auto`` tries them."""
    return sorted(FORMATS, key=lambda name: FORMATS.meta(name).order)


def sniffer(name: str) -> Sniffer | None:
    """The sniffer of format ``name`` (imported now when registered as ``"module:attr"``), else None."""
    target = FORMATS.meta(name).sniffer
    return import_target(target) if isinstance(target, str) else target


def spoken_list(items: list[str]) -> str:
    """``a, b or c``.

    >>> spoken_list(["a"]), spoken_list(["a", "b", "c"])
    ('a', 'a, b or c')
    """
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def formats_table() -> str:
    """The Markdown table of the formats docs/score.md#formats shows (a test keeps that copy current): in the order
    ``--format auto`` tries their sniffers (a name that a format claims decides before any content is read)."""
    rows = ["| `--format` | reads | `auto` recognises it by |", "| --- | --- | --- |"]
    for name in detection_order():
        meta = FORMATS.meta(name)
        by = [f"`{p}<id>`" for p in meta.prefixes] + [f"`*{s}`" for s in meta.suffixes]
        how = (f"{', '.join(by)}, else " if by else "") + ("its content" if meta.sniffer else "`--format` only")
        rows.append(f"| `{name}` | {meta.description.replace('|', '&#124;')} | {how} |")
    return "\n".join(rows)
