"""Dataset loaders: ASQA, QASPER, HotpotQA, 2WikiMultiHopQA, MuSiQue -> :class:`Example`.

One entry point, :func:`load_examples`, reads a local ``.json``/``.jsonl`` file (or,
for users with hub access, a ``datasets.load_dataset`` id) and returns examples in
rageval's schema.  Layouts are recognised from the records themselves:

=================  =========================================================================
dataset            layouts
=================  =========================================================================
``asqa``           ``din0s/asqa`` (``ambiguous_question, sample_id, qa_pairs, annotations``):
                   no candidate documents; the annotators' passages (``qa_pairs[].context``,
                   ``annotations[].knowledge[].content``) form a corpus (:func:`load_corpus`)
                   to retrieve from with BM25, and a question's own passages are its gold
                   documents.  ALCE's eval layout (``question, qa_pairs, docs [{title, text}]``,
                   also the ``{"demos": [...]}`` prompt file): ``docs`` are the candidates,
                   in rank order.
``qasper``         the original JSON (``{paper_id: {title, abstract, full_text [{section_name,
                   paragraphs}], qas}}``) and the hub's columnar layout.  One example per
                   question; the abstract is a document of its own (id ``abstract``, title
                   ``Abstract``, first), then the paper's paragraphs (``d0, d1, …``, title =
                   section name); gold evidence strings are mapped to paragraph ids per
                   annotator; per annotator, the official scorer's reference string
                   (``answers``) and the short answers of its str-EM (``annotator_answers``).
``hotpotqa``       original (``_id, answer, supporting_facts [[title, i]], context [[title,
                   [sentences]]]``), the hub's (``context {title, sentences}``) and FlashRAG's
                   (``golden_answers, metadata {context, supporting_facts}``).
``2wikimultihopqa`` original (as HotpotQA, plus ``evidences``) and FlashRAG's
                   (``metadata.context {title, content}``).
``musique``        the 20-paragraph layout (``paragraphs [{idx, title, paragraph_text,
                   is_supporting}]``, ``answer_aliases``, ``answerable``).
=================  =========================================================================

Document ids are ``d0, d1, …`` in the dataset's own candidate order (ASQA corpus
passages: ``w`` + a hash of their text, so they are stable whatever subset is
loaded); snippet ids are ``{doc_id}.s{sentence}``.  Dataset inconsistencies that
are not structural (a HotpotQA supporting fact pointing past the last sentence,
a QASPER evidence string that is a table caption) are kept in ``Example.meta``,
not raised.  Structural problems raise :class:`DataLoadError` naming the file,
the record, the field and what was expected.

>>> exs = load_examples("hotpotqa", sample_path("hotpotqa"), limit=1)
>>> exs[0].answers, exs[0].gold_doc_ids, exs[0].supporting_facts
(('a spirit',), ('d9', 'd5'), ('d9.s3', 'd5.s0'))
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from rageval.data.schema import Document, Example, passage_to_snippets
from rageval.registry import Registry, did_you_mean, unknown_name
from rageval.text.normalize import normalize_answer

__all__ = [
    "DataLoadError",
    "DataUnavailable",
    "DATASETS",
    "LOADERS",
    "DatasetMeta",
    "load_examples",
    "load_corpus",
    "examples_from_records",
    "sample_path",
    "corpus_doc_id",
    "SAMPLES",
]


class DataLoadError(ValueError):
    """A record does not have the layout the loader expects.

    Attributes name where (``source``, ``index``) and what (``field``, ``expected``).
    """

    def __init__(self, source: str, index: int | None, field: str | None, expected: str, got: Any = ...):
        self.source, self.index, self.field, self.expected = source, index, field, expected
        where = source if index is None else f"{source}: record {index}"
        if field is None:
            msg = f"{where}: {expected}"
        elif got is ...:
            msg = f"{where}: missing field {field!r}; expected {expected}"
        else:
            shown = repr(got)
            if len(shown) > 80:
                shown = shown[:77] + "..."
            msg = f"{where}: field {field!r} is {type(got).__name__} {shown}; expected {expected}"
        super().__init__(msg)


class DataUnavailable(RuntimeError):
    """A hub dataset could not be loaded (offline, unknown id, no ``datasets``)."""


@dataclass(frozen=True)
class DatasetMeta:
    """A dataset loader's registry metadata."""

    sample: str  # the shipped sample, a path under ``samples/``
    sample_aliases: tuple[str, ...] = ()  # other names :func:`sample_path` accepts for it
    split: str = "validation"  # the default hub split


#: The dataset loaders: dataset name -> ``"module:builder"``, ``builder(record, dataset)`` returning
#: an :class:`Example` or a list of them (imported on first use), with its :class:`DatasetMeta`;
#: ``aliases``: other names :func:`load_examples` accepts.  Adding a dataset is one entry here plus
#: its builder.
LOADERS: Registry[Callable[..., Any], DatasetMeta] = Registry("dataset", meta=DatasetMeta, cutoff=0.5)
LOADERS.register(
    "asqa",
    "rageval.data.loaders:_asqa",
    DatasetMeta(sample="asqa/asqa_dev_first100.jsonl", split="dev"),
    aliases=("alce", "alce_asqa"),
)
LOADERS.register(
    "qasper", "rageval.data.loaders:_qasper_paper", DatasetMeta(sample="qasper/qasper_dev_v0.1_hf_dummy_EDITED.json")
)
LOADERS.register(
    "hotpotqa",
    "rageval.data.loaders:_multihop",
    DatasetMeta(sample="hotpotqa/hotpotqa_train100_distractor.json", sample_aliases=("hotpot_qa",)),
    aliases=("hotpot_qa", "hotpot"),
)
LOADERS.register(
    "2wikimultihopqa",
    "rageval.data.loaders:_multihop",
    DatasetMeta(sample="2wikimultihopqa/2wiki_dev2.json", sample_aliases=("2wiki",)),
    aliases=("2wiki", "2wikimqa"),
)
LOADERS.register("musique", "rageval.data.loaders:_musique", DatasetMeta(sample="musique/musique_train100.json"))

#: The dataset names (aliases such as ``2wiki`` are accepted too).
DATASETS = tuple(LOADERS.names())

#: Shipped samples (see ``samples/PROVENANCE.md``): name -> path under ``samples/``; each
#: dataset's own sample (from :data:`LOADERS`) and the other files.
SAMPLES = {
    **{name: LOADERS.meta(name).sample for name in DATASETS},
    "alce_asqa_demos": "asqa/alce_asqa_demos.json",
    "qasper_train": "qasper/qasper_train_v0.1_hf_dummy_EDITED.json",
    "qasper_intact": "qasper/qasper_handwritten_intact.json",
    "wice": "human/wice_claim_dev.jsonl",
}
_SAMPLE_ALIASES = {a: name for name in DATASETS for a in LOADERS.meta(name).sample_aliases}


def sample_path(name: str) -> Path:
    """Path of a shipped sample file (read through ``importlib.resources``).

    >>> sample_path("musique").name
    'musique_train100.json'
    """
    key = _SAMPLE_ALIASES.get(name, name)
    if key not in SAMPLES:
        raise KeyError(
            f"No shipped sample {name!r}; available: {sorted(SAMPLES)}.{did_you_mean(name, SAMPLES, cutoff=0.5)}"
        )
    res = resources.files("rageval.data").joinpath("samples", *SAMPLES[key].split("/"))
    return Path(str(res))


# ---------------------------------------------------------------------------
# reading files
# ---------------------------------------------------------------------------


def _read_records(path: Path) -> list[Any]:
    src = str(path)
    if not path.exists():
        raise FileNotFoundError(f"dataset file not found: {src} (pass an existing .json/.jsonl file)")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        bad_line = raw[: e.start].count(b"\n") + 1
        raise DataLoadError(
            src,
            None,
            None,
            f"line {bad_line}: not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start}); save it as UTF-8",
        ) from None
    if path.suffix != ".jsonl":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            if not text.lstrip().startswith("{"):
                raise DataLoadError(
                    src,
                    None,
                    None,
                    f"not valid JSON ({e.msg} at line {e.lineno}, column {e.colno}); expected a "
                    "JSON list, a JSON object, or JSON Lines",
                ) from None
            data = None  # maybe JSON Lines without the .jsonl suffix
        if data is not None:
            return _unwrap(data, src)
    records = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise DataLoadError(
                src,
                None,
                None,
                f"line {lineno} is not valid JSON ({e.msg} at column {e.colno}); expected one JSON object per line",
            ) from None
    return records


def _unwrap(data: Any, src: str) -> list[Any]:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in ("data", "demos", "examples"):
            if isinstance(data.get(key), list):
                return data[key]
        if data and all(isinstance(v, dict) for v in data.values()):
            # QASPER: {paper_id: paper}
            return [v if "id" in v else {"id": k, **v} for k, v in data.items()]
    raise DataLoadError(
        src,
        None,
        None,
        f"top-level JSON is {type(data).__name__}; expected a list of records, "
        "{'data'|'demos': [...]}, or {id: record}",
    )


# ---------------------------------------------------------------------------
# field access with precise errors
# ---------------------------------------------------------------------------


class _Rec:
    """One record with its location, for error messages."""

    def __init__(self, rec: Any, source: str, index: int):
        self.source, self.index = source, index
        if not isinstance(rec, Mapping):
            raise DataLoadError(source, index, None, f"the record is {type(rec).__name__}; expected a JSON object")
        self.rec = rec

    def err(self, field: str | None, expected: str, got: Any = ...) -> DataLoadError:
        return DataLoadError(self.source, self.index, field, expected, got)

    def get(
        self,
        obj: Mapping,
        key: str,
        expected: str,
        path: str,
        *,
        types: tuple = (str,),
        optional: bool = False,
        default: Any = None,
    ) -> Any:
        if not isinstance(obj, Mapping):
            raise self.err(path.rsplit(".", 1)[0] if "." in path else path, "a JSON object", obj)
        if key not in obj or (obj[key] is None and optional):
            if optional:
                return default
            raise self.err(path, expected)
        value = obj[key]
        if types and not isinstance(value, types):
            raise self.err(path, expected, value)
        return value

    def str_list(self, value: Any, path: str, expected: str = "a list of strings") -> list[str]:
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise self.err(path, expected, value)
        for i, v in enumerate(value):
            if not isinstance(v, str):
                raise self.err(f"{path}[{i}]", "a string", v)
        return list(value)


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for x in items:
        if x not in seen:
            seen[x] = None
    return tuple(seen)


def _make_doc(doc_id: str, text: str | Sequence[str], title: str | None, source_key: str | None = None) -> Document:
    if isinstance(text, str):
        full = text
    else:
        parts: list[str] = []
        for i, s in enumerate(text):
            if i and s and not s[0].isspace() and parts and not parts[-1][-1:].isspace():
                parts.append(" ")
            parts.append(s)
        full = "".join(parts).strip()
    snippets = passage_to_snippets(text, doc_id=doc_id, title=title)
    return Document(id=doc_id, text=full, title=title, snippets=tuple(snippets), source_key=source_key)


def _answer_type(answers: Sequence[str]) -> str:
    if answers and all(normalize_answer(a) in ("yes", "no") for a in answers):
        return "yes_no"
    return "span"


# ---------------------------------------------------------------------------
# HotpotQA and 2WikiMultiHopQA (same shape)
# ---------------------------------------------------------------------------


def _context_pairs(r: _Rec, ctx: Any, path: str) -> list[tuple[str, list[str]]]:
    """``[[title, [sentences]]]`` or ``{title: [...], sentences|content: [[...]]}``."""
    expected = "a list of [title, [sentences]] pairs or {title: [...], sentences: [[...]]}"
    if isinstance(ctx, Mapping):
        titles = r.get(ctx, "title", "a list of titles", f"{path}.title", types=(list,))
        key = "sentences" if "sentences" in ctx else "content"
        sents = r.get(
            ctx, key, "a list of sentence lists (key 'sentences' or 'content')", f"{path}.sentences", types=(list,)
        )
        if len(titles) != len(sents):
            raise r.err(path, f"as many titles as sentence lists, got {len(titles)} titles and {len(sents)} lists")
        pairs = list(zip(titles, sents))
    elif isinstance(ctx, list):
        pairs = []
        for i, p in enumerate(ctx):
            if not isinstance(p, (list, tuple)) or len(p) != 2:
                raise r.err(f"{path}[{i}]", "a [title, [sentences]] pair", p)
            pairs.append((p[0], p[1]))
    else:
        raise r.err(path, expected, ctx)
    out = []
    for i, (title, sents) in enumerate(pairs):
        if not isinstance(title, str):
            raise r.err(f"{path}[{i}].title", "a string", title)
        if isinstance(sents, str):
            sents = [sents]
        out.append((title, r.str_list(sents, f"{path}[{i}].sentences")))
    return out


def _supporting_pairs(r: _Rec, sf: Any, path: str) -> list[tuple[str, int]]:
    if isinstance(sf, Mapping):
        titles = r.get(sf, "title", "a list of titles", f"{path}.title", types=(list,))
        ids = r.get(sf, "sent_id", "a list of sentence indices", f"{path}.sent_id", types=(list,))
        if len(titles) != len(ids):
            raise r.err(path, f"as many titles as sent_ids, got {len(titles)} and {len(ids)}")
        pairs = list(zip(titles, ids))
    elif isinstance(sf, list):
        pairs = []
        for i, p in enumerate(sf):
            if not isinstance(p, (list, tuple)) or len(p) != 2:
                raise r.err(f"{path}[{i}]", "a [title, sentence_index] pair", p)
            pairs.append((p[0], p[1]))
    else:
        raise r.err(path, "a list of [title, sentence_index] pairs or {title: [...], sent_id: [...]}", sf)
    for i, (t, s) in enumerate(pairs):
        if not isinstance(t, str):
            raise r.err(f"{path}[{i}].title", "a string", t)
        if isinstance(s, bool) or not isinstance(s, int):
            raise r.err(f"{path}[{i}].sent_id", "an integer sentence index", s)
    return pairs


def _multihop(r: _Rec, dataset: str) -> Example:
    rec = r.rec
    if "golden_answers" in rec:  # FlashRAG
        layout = "flashrag"
        qid = r.get(rec, "id", "a string or integer id", "id", types=(str, int))
        answers = r.str_list(
            r.get(rec, "golden_answers", "a list of gold answers", "golden_answers", types=(list,)), "golden_answers"
        )
        meta_src = r.get(
            rec, "metadata", "an object with 'context' and 'supporting_facts'", "metadata", types=(Mapping,)
        )
        ctx = r.get(meta_src, "context", "the candidate paragraphs", "metadata.context", types=())
        ctx_path, sf_path = "metadata.context", "metadata.supporting_facts"
        sf = r.get(meta_src, "supporting_facts", "the supporting facts", sf_path, types=(), optional=True, default=[])
        extra = {k: meta_src[k] for k in ("type", "level", "evidences") if k in meta_src}
    else:
        layout = "original"
        key = "_id" if "_id" in rec else "id"
        qid = r.get(rec, key, "a string id ('_id' or 'id')", "_id", types=(str, int))
        ans = r.get(rec, "answer", "the gold answer string", "answer")
        answers = [ans]
        ctx = r.get(rec, "context", "the candidate paragraphs", "context", types=())
        ctx_path, sf_path = "context", "supporting_facts"
        sf = r.get(rec, "supporting_facts", "the supporting facts", sf_path, types=(), optional=True, default=[])
        extra = {k: rec[k] for k in ("type", "level", "evidences") if k in rec}
    question = r.get(rec, "question", "the question string", "question")
    pairs = _context_pairs(r, ctx, ctx_path)
    docs = tuple(_make_doc(f"d{i}", sents, title, source_key=title) for i, (title, sents) in enumerate(pairs))
    by_title: dict[str, Document] = {}
    for doc in docs:
        by_title.setdefault(doc.title or "", doc)
    gold: list[str] = []
    facts: list[str] = []
    unmatched: list[list[Any]] = []
    for title, sent in _supporting_pairs(r, sf, sf_path):
        d = by_title.get(title)
        if d is None:
            unmatched.append([title, sent])
            continue
        gold.append(d.id)
        sid = f"{d.id}.s{sent}"
        if any(s.id == sid for s in d.snippets):
            facts.append(sid)
        else:
            unmatched.append([title, sent])
    meta: dict[str, Any] = {"layout": layout, **extra}
    if unmatched:
        meta["unmatched_supporting_facts"] = unmatched
    answers = list(_dedupe(answers))
    return Example(
        id=str(qid),
        question=question,
        answers=tuple(answers),
        gold_doc_ids=_dedupe(gold),
        supporting_facts=_dedupe(facts),
        documents=docs,
        answer_type=_answer_type(answers),
        dataset=dataset,
        meta=meta,
    )


# ---------------------------------------------------------------------------
# MuSiQue
# ---------------------------------------------------------------------------


def _musique(r: _Rec, dataset: str) -> Example:
    rec = r.rec
    if "golden_answers" in rec:  # FlashRAG-style rows
        meta_src = r.get(rec, "metadata", "an object with 'paragraphs'", "metadata", types=(Mapping,))
        answers = r.str_list(
            r.get(rec, "golden_answers", "a list of gold answers", "golden_answers", types=(list,)), "golden_answers"
        )
        paras_path = "metadata.paragraphs"
        answerable = meta_src.get("answerable", True)
    else:
        meta_src = rec
        ans = r.get(rec, "answer", "the gold answer string", "answer")
        aliases = r.get(
            rec,
            "answer_aliases",
            "a list of answer aliases",
            "answer_aliases",
            types=(list,),
            optional=True,
            default=[],
        )
        answers = [ans, *r.str_list(aliases, "answer_aliases")]
        paras_path = "paragraphs"
        answerable = rec.get("answerable", True)
    qid = r.get(rec, "id", "a string id", "id", types=(str, int))
    question = r.get(rec, "question", "the question string", "question")
    paras = r.get(
        meta_src, "paragraphs", "a list of {idx, title, paragraph_text, is_supporting}", paras_path, types=(list,)
    )
    docs, gold = [], []
    for i, p in enumerate(paras):
        where = f"{paras_path}[{i}]"
        text = r.get(p, "paragraph_text", "the paragraph text", f"{where}.paragraph_text")
        title = r.get(p, "title", "the paragraph title", f"{where}.title", optional=True)
        idx = p.get("idx", i)
        d = _make_doc(f"d{i}", text, title, source_key=str(idx))
        docs.append(d)
        if p.get("is_supporting", False):
            gold.append(d.id)
    answers = list(_dedupe(answers))
    meta: dict[str, Any] = {"layout": "flashrag" if "golden_answers" in rec else "original", "answerable": answerable}
    if "question_decomposition" in meta_src:
        meta["question_decomposition"] = meta_src["question_decomposition"]
    return Example(
        id=str(qid),
        question=question,
        answers=tuple(answers),
        gold_doc_ids=tuple(gold),
        documents=tuple(docs),
        answer_type="unanswerable" if answerable is False else _answer_type(answers),
        dataset=dataset,
        meta=meta,
    )


# ---------------------------------------------------------------------------
# ASQA (din0s layout + corpus, and ALCE's eval layout)
# ---------------------------------------------------------------------------

_NO_CONTEXT = "No context provided"


def corpus_doc_id(text: str) -> str:
    """Stable id of an ASQA corpus passage: ``w`` + the first 10 hex digits of sha1(text)."""
    return "w" + hashlib.sha1(" ".join(text.split()).encode("utf-8")).hexdigest()[:10]


def _asqa_passages(r: _Rec) -> list[tuple[str, str | None]]:
    """The annotators' passages of one din0s/asqa record: (text, title) in record order."""
    rec = r.rec
    out: list[tuple[str, str | None]] = []
    for i, qa in enumerate(
        r.get(rec, "qa_pairs", "a list of {question, short_answers, context, wikipage}", "qa_pairs", types=(list,))
    ):
        ctx = r.get(
            qa, "context", "the qa_pair's passage (a string)", f"qa_pairs[{i}].context", optional=True, default=""
        )
        if ctx and ctx.strip() and ctx.strip() != _NO_CONTEXT:
            out.append((ctx.strip(), qa.get("wikipage")))
    for j, ann in enumerate(
        r.get(
            rec,
            "annotations",
            "a list of {long_answer, knowledge}",
            "annotations",
            types=(list,),
            optional=True,
            default=[],
        )
    ):
        know = r.get(
            ann,
            "knowledge",
            "a list of {content, wikipage}",
            f"annotations[{j}].knowledge",
            types=(list,),
            optional=True,
            default=[],
        )
        for k, kn in enumerate(know):
            content = r.get(
                kn, "content", "the passage text", f"annotations[{j}].knowledge[{k}].content", optional=True, default=""
            )
            if content and content.strip():
                out.append((content.strip(), kn.get("wikipage")))
    return out


def _asqa_din0s(r: _Rec, dataset: str) -> Example:
    rec = r.rec
    qid = r.get(rec, "sample_id", "the sample id", "sample_id", types=(str, int))
    question = r.get(rec, "ambiguous_question", "the ambiguous question string", "ambiguous_question")
    pairs, qa_questions = [], []
    for i, qa in enumerate(r.get(rec, "qa_pairs", "a list of {question, short_answers}", "qa_pairs", types=(list,))):
        sa = r.get(qa, "short_answers", "a list of short answers", f"qa_pairs[{i}].short_answers", types=(list,))
        pairs.append(tuple(r.str_list(sa, f"qa_pairs[{i}].short_answers")))
        qa_questions.append(qa.get("question"))
    long_answers = [a.get("long_answer") for a in rec.get("annotations") or [] if isinstance(a, Mapping)]
    gold = _dedupe(corpus_doc_id(t) for t, _ in _asqa_passages(r))
    return Example(
        id=str(qid),
        question=question,
        answers=_dedupe(a for p in pairs for a in p),
        qa_pairs=tuple(pairs),
        gold_doc_ids=gold,
        documents=(),
        answer_type="long_form",
        dataset=dataset,
        meta={"layout": "din0s", "qa_questions": qa_questions, "long_answers": long_answers},
    )


def _asqa_alce(r: _Rec, dataset: str) -> Example:
    rec = r.rec
    question = r.get(rec, "question", "the question string", "question")
    qid = rec.get("sample_id", rec.get("id", f"alce-{r.index}"))
    docs = []
    for i, d in enumerate(r.get(rec, "docs", "a list of {title, text}", "docs", types=(list,))):
        text = r.get(d, "text", "the passage text", f"docs[{i}].text")
        title = r.get(d, "title", "the passage title", f"docs[{i}].title", optional=True)
        key = d.get("id")
        docs.append(_make_doc(f"d{i}", text, title, source_key=str(key) if key is not None else None))
    pairs = []
    for i, qa in enumerate(
        r.get(rec, "qa_pairs", "a list of {short_answers}", "qa_pairs", types=(list,), optional=True, default=[])
    ):
        sa = r.get(qa, "short_answers", "a list of short answers", f"qa_pairs[{i}].short_answers", types=(list,))
        pairs.append(tuple(r.str_list(sa, f"qa_pairs[{i}].short_answers")))
    meta: dict[str, Any] = {"layout": "alce"}
    if isinstance(rec.get("answer"), str):
        meta["long_answers"] = [rec["answer"]]
    return Example(
        id=str(qid),
        question=question,
        answers=_dedupe(a for p in pairs for a in p),
        qa_pairs=tuple(pairs),
        documents=tuple(docs),
        answer_type="long_form",
        dataset=dataset,
        meta=meta,
    )


def _asqa(r: _Rec, dataset: str) -> Example:
    if "ambiguous_question" in r.rec:
        return _asqa_din0s(r, dataset)
    if "docs" in r.rec:
        return _asqa_alce(r, dataset)
    raise r.err(
        "ambiguous_question",
        "an ASQA record: the din0s/asqa layout (ambiguous_question, qa_pairs, annotations) "
        "or ALCE's eval layout (question, qa_pairs, docs)",
    )


# ---------------------------------------------------------------------------
# QASPER
# ---------------------------------------------------------------------------


def _qasper_rows(r: _Rec) -> tuple[list[tuple[str | None, list[str]]], list[Mapping]]:
    """(sections, qas) of a paper in either the original or the hub's columnar layout."""
    rec = r.rec
    ft = r.get(rec, "full_text", "a list of {section_name, paragraphs}", "full_text", types=(list, Mapping))
    sections: list[tuple[str | None, list[str]]] = []
    if isinstance(ft, Mapping):  # hub: {section_name: [...], paragraphs: [[...]]}
        names = r.get(ft, "section_name", "a list of section names", "full_text.section_name", types=(list,))
        paras = r.get(ft, "paragraphs", "a list of paragraph lists", "full_text.paragraphs", types=(list,))
        for i, (n, ps) in enumerate(zip(names, paras)):
            sections.append((n, r.str_list(ps, f"full_text.paragraphs[{i}]")))
    else:
        for i, s in enumerate(ft):
            name = r.get(s, "section_name", "the section name", f"full_text[{i}].section_name", optional=True)
            ps = r.get(s, "paragraphs", "a list of paragraph strings", f"full_text[{i}].paragraphs", types=(list,))
            sections.append((name, r.str_list(ps, f"full_text[{i}].paragraphs")))
    qas = r.get(rec, "qas", "a list of {question, question_id, answers}", "qas", types=(list, Mapping))
    if isinstance(qas, Mapping):  # hub: columnar
        qs = r.get(qas, "question", "a list of questions", "qas.question", types=(list,))
        ids = r.get(qas, "question_id", "a list of question ids", "qas.question_id", types=(list,))
        anss = r.get(qas, "answers", "a list of answer groups", "qas.answers", types=(list,))
        rows = []
        for i, (q, qid, group) in enumerate(zip(qs, ids, anss)):
            inner = r.get(group, "answer", "a list of answer objects", f"qas.answers[{i}].answer", types=(list,))
            rows.append({"question": q, "question_id": qid, "answers": [{"answer": a} for a in inner]})
        qas = rows
    return sections, qas


def _qasper_reference(r: _Rec, a: Mapping, where: str) -> tuple[str, str, tuple[str, ...]]:
    """One annotation: the official evaluator's reference string, its answer type, and the short
    answers of rageval's QASPER str-EM (all must appear; ``()`` when unanswerable)."""
    if a.get("unanswerable"):
        return "Unanswerable", "unanswerable", ()
    spans = a.get("extractive_spans") or []
    if spans:
        spans = r.str_list(spans, f"{where}.extractive_spans")
        return ", ".join(spans), "span", tuple(spans)
    if a.get("free_form_answer"):
        return a["free_form_answer"], "free_form", (a["free_form_answer"],)
    if a.get("yes_no") is True:
        return "Yes", "yes_no", ("Yes",)
    if a.get("yes_no") is False:
        return "No", "yes_no", ("No",)
    raise r.err(where, "an answer with unanswerable, extractive_spans, free_form_answer or yes_no set", dict(a))


def _qasper_abstract(r: _Rec) -> str:
    abstract = r.get(r.rec, "abstract", "the abstract (a string)", "abstract", types=(str,), optional=True, default="")
    return abstract or ""


def _qasper_paper(r: _Rec, dataset: str) -> list[Example]:
    rec = r.rec
    paper_id = str(r.get(rec, "id", "the paper id", "id", types=(str, int)))
    sections, qas = _qasper_rows(r)
    docs: list[Document] = []
    by_text: dict[str, str] = {}
    abstract = _qasper_abstract(r)
    if abstract.strip():  # the paper scores abstract + full text: the abstract is a document of its own
        a = _make_doc("abstract", abstract, "Abstract")
        by_text[abstract.strip()] = a.id
    for name, paras in sections:
        for p in paras:
            if not p.strip():
                continue
            d = _make_doc(f"d{len(docs)}", p, name or None)
            docs.append(d)
            by_text.setdefault(p.strip(), d.id)
    if abstract.strip():
        docs.insert(0, a)
    out = []
    for i, qa in enumerate(qas):
        where = f"qas[{i}]"
        question = r.get(qa, "question", "the question string", f"{where}.question")
        qid = str(r.get(qa, "question_id", "the question id", f"{where}.question_id", types=(str, int)))
        refs, types, shorts, evidence, unmatched, floats = [], [], [], [], 0, 0
        for j, ans in enumerate(r.get(qa, "answers", "a list of {answer: {...}}", f"{where}.answers", types=(list,))):
            a = r.get(ans, "answer", "an answer object", f"{where}.answers[{j}].answer", types=(Mapping,))
            ref, typ, short = _qasper_reference(r, a, f"{where}.answers[{j}].answer")
            refs.append(ref)
            types.append(typ)
            shorts.append(short)
            ev = r.str_list(a.get("evidence") or [], f"{where}.answers[{j}].answer.evidence")
            ids = []
            for e in ev:
                pid = by_text.get(e.strip())
                if pid is None:
                    if e.startswith("FLOAT SELECTED"):
                        floats += 1
                    else:
                        unmatched += 1
                    continue
                ids.append(pid)
            evidence.append(_dedupe(ids))
        out.append(
            Example(
                id=qid,
                question=question,
                answers=_dedupe(refs),
                evidence=tuple(evidence),
                gold_doc_ids=_dedupe(p for e in evidence for p in e),
                documents=tuple(docs),
                cluster_id=paper_id,
                answer_type=types[0] if types else None,
                dataset=dataset,
                annotator_answers=tuple(shorts),
                meta={
                    "layout": "qasper",
                    "paper_title": rec.get("title"),
                    "answer_types": types,
                    "unmatched_evidence": unmatched,
                    "float_evidence": floats,
                },
            )
        )
    return out


# ---------------------------------------------------------------------------
# entry points
# ---------------------------------------------------------------------------


def _canonical(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a string, got {type(name).__name__}")
    key = name.strip().lower()
    if key not in LOADERS:
        raise unknown_name("dataset", name, DATASETS, spellings=LOADERS.spellings(), cutoff=0.5)
    return LOADERS.canonical(key)


def examples_from_records(
    name: str, records: Iterable[Any], *, source: str = "<records>", limit: int | None = None
) -> list[Example]:
    """Convert raw records (dicts in any supported layout) into examples."""
    ds = _canonical(name)
    build = LOADERS.get(ds)
    out: list[Example] = []
    for i, rec in enumerate(records):
        if limit is not None and len(out) >= limit:
            break
        got = build(_Rec(rec, source, i), ds)
        out.extend(got if isinstance(got, list) else [got])
    if limit is not None:
        out = out[:limit]
    seen: dict[str, int] = {}
    for ex in out:
        if ex.id in seen:
            raise DataLoadError(source, None, None, f"question id {ex.id!r} occurs twice; ids must be unique")
        seen[ex.id] = 1
    return out


def _hub_records(hub_id: str, config: str | None, split: str | None, ds: str) -> tuple[list[Any], str]:
    split = split or LOADERS.meta(ds).split
    try:
        import datasets  # heavy: only on this path
    except ImportError as e:  # pragma: no cover - datasets is a dependency
        raise DataUnavailable(f"loading {hub_id!r} needs the 'datasets' package: {e}") from e
    try:
        data = datasets.load_dataset(hub_id, config, split=split)
    except Exception as e:
        raise DataUnavailable(
            f"could not load hub dataset {hub_id!r} (config={config!r}, split={split!r}): {type(e).__name__}: {e}. "
            "Without hub access, download the file elsewhere and pass path=..., or use a shipped sample: "
            "rageval.data.sample_path(name)."
        ) from e
    return [dict(row) for row in data], f"hub:{hub_id}[{split}]"


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

    ``name`` is one of :data:`DATASETS` (aliases such as ``2wiki`` accepted);
    ``path`` a local ``.json``/``.jsonl`` file in a supported layout (see the module
    docstring); or ``hub_id`` (+ ``hub_config``, ``split``) for
    ``datasets.load_dataset``.  ``limit`` keeps the first questions.
    """
    ds = _canonical(name)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be a non-negative integer or None, got {limit!r}")
    if (path is None) == (hub_id is None):
        raise ValueError(
            f"load_examples({name!r}) needs exactly one of path= (a local .json/.jsonl file, e.g. "
            f"rageval.data.sample_path({ds!r})) or hub_id= (a datasets.load_dataset id)"
        )
    if path is not None:
        p = Path(path)
        records, source = _read_records(p), str(p)
    else:
        records, source = _hub_records(hub_id, hub_config, split, ds)  # type: ignore[arg-type]
    return examples_from_records(ds, records, source=source, limit=limit)


def load_corpus(
    name: str,
    path: str | Path | None = None,
    *,
    hub_id: str | None = None,
    hub_config: str | None = None,
    split: str | None = None,
) -> list[Document]:
    """A retrieval corpus built from a whole dataset file.

    ASQA (``din0s/asqa`` layout): every annotator passage of every question
    (``qa_pairs[].context`` and ``annotations[].knowledge[].content``), deduplicated
    by text, ids :func:`corpus_doc_id` — the same ids as ``Example.gold_doc_ids``.
    A question's own passages would leak its answer; retrieving from the pool of
    all questions' passages with BM25 does not hand it over.

    Only this layout has a corpus: the other datasets ship each question's own
    candidates (distractor paragraphs, ALCE docs, the paper), whose gold ids live in
    that per-question id space; pooling them under new ids would make
    ``retrieval_recall`` silently wrong, so it is refused with the fix.
    """
    ds = _canonical(name)
    if (path is None) == (hub_id is None):
        raise ValueError(f"load_corpus({name!r}) needs exactly one of path= or hub_id=")
    if path is not None:
        records, source = _read_records(Path(path)), str(path)
    else:
        records, source = _hub_records(hub_id, hub_config, split, ds)  # type: ignore[arg-type]
    if not (ds == "asqa" and records and isinstance(records[0], Mapping) and "ambiguous_question" in records[0]):
        raise ValueError(
            f"{source}: a retrieval corpus is built only for ASQA in the din0s/asqa layout; {ds} "
            f"({'ALCE layout' if ds == 'asqa' else 'its own layout'}) ships each question's candidates: retrieve "
            "over them (retrieval method 'given', or 'bm25' without a corpus)"
        )
    docs: dict[str, Document] = {}
    for i, rec in enumerate(records):
        for text, title in _asqa_passages(_Rec(rec, source, i)):
            did = corpus_doc_id(text)
            if did not in docs:
                docs[did] = _make_doc(did, text, title)
    return list(docs.values())
