"""The files ``rageval score`` reads (docs/score.md#formats), one module per format:

* :mod:`~rageval.data.formats.layout` — the generic layout (pydantic models, JSON Schema),
  :class:`~rageval.data.formats.layout.ScoreItem` and the one conversion into it;
* :mod:`~rageval.data.formats.generic`, :mod:`~rageval.data.formats.alce`,
  :mod:`~rageval.data.formats.ragchecker`, :mod:`~rageval.data.formats.ragas` — each format
  into :class:`ImportedFile`: its items plus notes, by building generic-layout dicts and
  validating them with :func:`~rageval.data.formats.layout.validate_record`, so every format
  goes through one conversion;
* :mod:`~rageval.data.formats.registry` — :data:`FORMATS`: each format's reader and sniffer (:class:`FormatMeta`),
  the one list of formats there is;
* :mod:`~rageval.data.formats.read` — :func:`detect` (the format by name or content) and :func:`read_input`;
* :mod:`~rageval.data.formats.common` — what they share (reading text, JSON and rows).

Every error names the file, the line (or item) and the field.
"""

from rageval.data.formats.common import HF_PREFIX, ImportedFile
from rageval.data.formats.ragas import RAGAS_COLUMNS, parse_mapping
from rageval.data.formats.read import detect, read_input
from rageval.data.formats.registry import FORMATS, FormatMeta, Peek

__all__ = [
    "FORMATS",
    "HF_PREFIX",
    "FormatMeta",
    "Peek",
    "RAGAS_COLUMNS",
    "ImportedFile",
    "detect",
    "parse_mapping",
    "read_input",
]
