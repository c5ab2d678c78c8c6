"""``rageval score``: score the outputs a RAG system already wrote, and compare systems (docs/score.md).

* :mod:`rageval.data.formats` — the input formats, beside the datasets: the generic layout (pydantic models,
  JSON Schema) and its conversion, and ALCE, RAGChecker, RAGAS-style and FlashRAG files into the generic layout;
* :mod:`rageval.data.formats.match` — settings per file or system, questions matched by id, else by text;
* :mod:`rageval.score.run` — scoring with the suite runner's cache, scoring step and report;
* :mod:`rageval.score.cli` — the ``rageval score`` command.
"""

from rageval.data.formats import FORMATS, read_input
from rageval.data.formats.layout import GenericRecord, ScoreInputError, json_schema
from rageval.score.run import ScoreOptions, ScoreResult, score_files

__all__ = [
    "FORMATS",
    "GenericRecord",
    "ScoreInputError",
    "ScoreOptions",
    "ScoreResult",
    "json_schema",
    "read_input",
    "score_files",
]
