"""The extractive reader: deterministic, no model, the offline default.

Reader card
-----------
**What it is.**  A quoting baseline.  It splits every unit into sentences
(:func:`rageval.text.split_sentences`), scores each sentence by the number of
distinct question content words it contains (lowercased word tokens of two or more
characters, English stopwords removed, as in BM25 retrieval), and writes an answer
made of the ``max_sentences`` best sentences (default 2) that share at least
``min_overlap`` such words (default 1).  Ties go to the earlier unit, then the
earlier sentence; a sentence that appears twice is quoted once.  Each quoted
sentence cites the unit it came from, the marker placed before its final full
stop: ``"Paris is the capital of France [2]."``.  Its ``input_tokens`` are the
suite tokenizer's count of the prompt a model would have received (the same
template), so cost columns stay comparable across readers.

**What it is not.**  It does not read, reason, compose or abstain: it never
answers yes/no questions with "yes" or "no", never combines two hops, and never
writes an answer that is not a verbatim sentence of the context.  Its answers are
therefore *perfectly attributable to the units it cites* when those units are
verbatim source text (an abstractive unit's sentence is quoted as is, which is the
point: grounded scores then show the unit's missing provenance).  Use it to
exercise the pipeline and the attribution diagnostics offline; do not report its
answer quality as a model's.  When no sentence shares a content word with the
question, the answer is empty (``""``, status ``ok``), which the metrics treat as
undefined rather than 0.

>>> from rageval.types import Unit
>>> from rageval.readers.base import ReaderRequest
>>> r = ExtractiveReader()
>>> req = ReaderRequest("q1", "What is the capital of France?",
...                     (Unit("Bananas are yellow."), Unit("Paris is the capital of France. It is large.")))
>>> r.generate([req])[0].text
'Paris is the capital of France [2].'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field, field_validator

from rageval.bm25 import tokenize as bm25_tokenize
from rageval.readers.base import Reader, ReaderOutput, ReaderRequest, check_requests
from rageval.readers.spec import ReaderParams, positive_int
from rageval.readers.template import PromptTemplate
from rageval.text.segment import split_sentences

__all__ = ["ExtractiveParams", "ExtractiveReader"]

_END = re.compile(r"([.!?])(['\"\u2019\u201d)\]]*)\s*$")


def _cite(sentence: str, k: int) -> str:
    s = sentence.strip()
    m = _END.search(s)
    if m and m.group(1) == ".":
        return f"{s[: m.start()]} [{k}]{m.group(1)}{m.group(2)}"
    if m:
        return f"{s} [{k}]"
    return f"{s} [{k}]."


class ExtractiveParams(ReaderParams):
    """The extractive reader's options."""

    what = "extractive reader"

    max_sentences: int = Field(2, description="sentences quoted at most")
    min_overlap: int = Field(1, description="question content words a quoted sentence shares at least")

    _positive = field_validator("max_sentences", "min_overlap", mode="before")(positive_int)


class ExtractiveReader(Reader):
    """Quote the top question-relevant sentences of the context and cite their units."""

    name = "extractive"
    needs_model = False
    Params = ExtractiveParams

    def __init__(
        self,
        *,
        max_sentences: int = 2,
        min_overlap: int = 1,
        template: PromptTemplate | Mapping[str, Any] | None = None,
        tokenizer: Any = "regex",
    ):
        super().__init__(template=template, tokenizer=tokenizer)
        self.Params.check(max_sentences=max_sentences, min_overlap=min_overlap)
        self.max_sentences = max_sentences
        self.min_overlap = min_overlap

    def params(self) -> dict[str, Any]:
        return {"max_sentences": self.max_sentences, "min_overlap": self.min_overlap}

    def answer(self, question: str, units: Sequence[Any]) -> str:
        q = set(bm25_tokenize(question))
        scored = []
        seen: set[str] = set()
        order = 0
        for k, unit in enumerate(units, 1):
            for sent in split_sentences(unit.text):
                key = " ".join(sent.split())
                if key in seen:
                    continue
                seen.add(key)
                score = len(q & set(bm25_tokenize(sent)))
                if score >= self.min_overlap:
                    scored.append((-score, order, k, sent))
                order += 1
        scored.sort()
        return " ".join(_cite(sent, k) for _, _, k, sent in scored[: self.max_sentences])

    def generate(self, requests: Sequence[ReaderRequest]) -> list[ReaderOutput]:
        out = []
        for req in check_requests(requests):
            out.append(ReaderOutput(self.answer(req.question, req.units), "ok", self.count_prompt_tokens(req)))
        return out
