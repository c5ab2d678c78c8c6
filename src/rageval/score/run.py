"""``rageval score``: score the outputs a RAG system already wrote, and compare systems (docs/score.md).

The front-end reads the files and plans; the one engine runs the plan:

* :func:`_read_inputs` reads each file (:mod:`rageval.data.formats`), assigns
  settings (a file, or each ``system`` of a file) and matches questions across
  them, from each file's per-line index alone (ids, digests of the questions,
  flags: :class:`~rageval.data.formats.common.LineIndex`);
* :func:`build_plan` makes each setting a :class:`~rageval.run.plan.Given` setting whose items
  (:class:`_LineItems`, an :class:`~rageval.run.plan.ItemStream`) are made one by one, in the
  setting's input order, as the engine takes them (their records go in the run's question order):
  each input line (read again from its file when the file is a streamed JSONL one) an
  :class:`~rageval.run.plan.Item` — an :class:`~rageval.data.Example`
  (gold; the answer, units and reader tokens in ``meta``, so they enter the
  input hash), its sources, and the context and answer the file gives;
* :func:`rageval.run.engine.execute` scores, caches and writes the run as it
  does a suite's (so a killed run resumes and a rerun reuses every record whose
  input did not change), then the report (summary, paired contrasts with
  bootstrap CIs, sign-flip tests and Holm on the common cohort, plots,
  ``report.html``) is built.

Nothing on the path to the first record imports a model library or ``evaluate``
(the lexical judge needs none; a model judge loads its own).

Memory (docs/score.md#how-inputs-are-read): a generic JSONL input is never held — per line a few dozen bytes of
index while planning, then its place in the file, its question's position and its cache entry's — so a run of a
million lines fits in well under a gigabyte; the other formats' files are read whole and their items kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from rageval import __version__
from rageval.data.formats import ImportedFile, read_input
from rageval.data.formats.common import EMPTY_ANSWER, MARKERS, SELF_SOURCED, has_markers
from rageval.data.formats.layout import ScoreInputError, ScoreItem
from rageval.data.formats.match import (
    Matched,
    SettingLines,
    assign_settings,
    file_labels,
    match_questions,
    renamed_notes,
)
from rageval.data.schema import Example
from rageval.diagnostics import CATALOG, applicable
from rageval.diagnostics.inputs import scoring_options
from rageval.io import printable
from rageval.judges.spec import JudgeSpec
from rageval.registry import did_you_mean
from rageval.report import build_report as _build
from rageval.report.analysis import check_settings
from rageval.run.engine import execute
from rageval.run.plan import (
    Given,
    GivenOutput,
    Item,
    ItemStream,
    Origin,
    Plan,
    SettingPlan,
    sha,
    sha_of_items,
)
from rageval.rundir.claim import refuse_inputs
from rageval.rundir.manifest import RunDir
from rageval.scoring import (
    DEFAULT_JUDGE,
    DEFAULT_MAX_CITATIONS,
    DEFAULT_THRESHOLD,
    DEFAULT_TOKENIZER,
    AttributionConfig,
    CitationConfig,
    ScoringConfig,
)
from rageval.text import get_tokenizer
from rageval.types import Record, Setting, SourceSnippet

__all__ = ["CITATION_DIAGNOSTICS", "SUITE_NAME", "ScoreOptions", "ScoreResult", "has_markers", "score_files"]

#: the name a score run records as its suite (an output directory holds one kind of run)
SUITE_NAME = "score"


def _citation_diagnostics() -> tuple[str, ...]:
    """Diagnostics whose value is read off the answer's citations (undefined for a setting that never cites)."""
    cited_parts = {"emitted", "grounded", "verification"}
    return tuple(n for n, s in CATALOG.items() if cited_parts & set(s.engine_parts) or "evidence" in s.needs)


CITATION_DIAGNOSTICS = _citation_diagnostics()


@dataclass(frozen=True)
class ScoreOptions:
    """How to score (the ``rageval score`` options)."""

    judge: str = DEFAULT_JUDGE
    judge_params: Mapping[str, Any] = field(default_factory=dict)
    threshold: float = DEFAULT_THRESHOLD
    citations: str = "auto"  # auto | default | alce
    max_citations: int | None = DEFAULT_MAX_CITATIONS
    diagnostics: Any = "auto"
    tokenizer: str = DEFAULT_TOKENIZER
    retrieval_k: int | None = None
    attribution: AttributionConfig | None = None  # None: the defaults (not recorded); --grounding union sets one
    seed: int = 0
    resamples: int | str = "auto"  # the report's replicates: auto, paper or a count; it changes no record
    baseline: str | None = None
    all_pairs: bool = False
    batch_size: int = 256


@dataclass
class ScoreResult:
    out_dir: Path
    n_records: int
    status_counts: dict[str, int]
    reused: int
    computed: int
    settings: list[str]
    unmatched: list[Any]
    notes: list[str]
    report: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Given:
    """The retrieval of one input line as the runner reads it: its sources and ranked retrieved ids."""

    snippets: tuple[SourceSnippet, ...]
    doc_ids: tuple[str, ...] | None  # None: the line says nothing about retrieval
    self_sourced: bool = False  # plain contexts, each its own source: the units' provenance names no document


def _split_named(spec: str) -> tuple[str | None, str]:
    """``NAME=FILE`` -> (NAME, FILE) unless ``spec`` itself is a file (or a hub id)."""
    if "=" in spec and not Path(spec).exists() and not spec.startswith("hf:"):
        name, _, src = spec.partition("=")
        if name and src and "/" not in name:
            return name, src
    return None, spec


def _citation_mode(option: str, files: Sequence[ImportedFile]) -> str:
    if option == "auto":
        return "alce" if files and all(f.format == "alce" for f in files) else "default"
    if option not in ("default", "alce"):
        raise ScoreInputError(f"--citations {option!r}: expected auto, default or alce")
    return option


def _select(options: ScoreOptions, files: Sequence[ImportedFile]) -> list[str]:
    def has(name: str) -> bool:  # some line gives this gold field
        return any(name in f.index.gold for f in files)

    try:
        return applicable(options.diagnostics, has)
    except ValueError as err:
        raise ScoreInputError(f"--diagnostics: {err}") from None


def _example(item: ScoreItem, qid: str):
    meta: dict[str, Any] = {
        "answer": item.answer,
        "units": [u.to_dict() for u in item.units],
        "input_tokens": item.input_tokens,
        "self_sourced": item.self_sourced,
    }
    if item.answer_claims is not None:  # the answer's own claims (claim support), in the input hash
        meta["answer_claims"] = list(item.answer_claims)
    return Example(id=qid, **item.example_fields(), dataset="score", meta=meta)


def _setting_key(options: ScoreOptions, setting: Setting, fmt: str, mode: str, diagnostics, judge_id) -> dict:
    return {
        "rageval": __version__,
        "kind": "score",
        "setting": setting.to_dict(),
        "format": fmt,
        "tokenizer": options.tokenizer,
        "judge": {"spec": options.judge, "params": dict(options.judge_params), "threshold": options.threshold},
        "judge_id": judge_id,
        "citations": {"mode": mode, "max_citations": options.max_citations},
        "diagnostics": {d: CATALOG[d].version for d in diagnostics},
        "retrieval_k": options.retrieval_k,
        **({"attribution": options.attribution.model_dump(mode="json")} if options.attribution else {}),
    }


def _contrasts(settings: Sequence[str], baseline: str | None, all_pairs: bool) -> tuple[list | None, str | None]:
    if len(settings) < 2:
        return None, None
    if all_pairs:
        pairs = [
            {"a": settings[j], "b": settings[i]} for i in range(len(settings)) for j in range(i + 1, len(settings))
        ]
        return pairs, None
    base = baseline or settings[0]
    if base not in settings:
        hint = did_you_mean(base, settings) or f" Settings: {', '.join(settings)}."
        raise ScoreInputError(f"--baseline {base!r} is not a setting of this run.{hint}")
    return [{"vs": base}], base


def _flags(lines: SettingLines) -> np.ndarray:
    """The setting's lines' flags (:class:`~rageval.data.formats.common.LineIndex`), in order."""
    return np.fromiter(lines.flags(), dtype=np.uint8, count=len(lines))


def _notes(
    files: Sequence[ImportedFile],
    settings: Mapping[str, SettingLines],
    uncited: Sequence[str],
    matched: Matched,
) -> list[str]:
    notes = [n for f in files for n in f.notes] + renamed_notes(settings)
    for name, lines in settings.items():
        flags = _flags(lines)
        n_self = int(np.count_nonzero(flags & SELF_SOURCED))
        if n_self:
            what = "every question" if n_self == len(lines) else f"{n_self} of {len(lines)} questions"
            notes.append(
                f"{name}: {what} give(s) plain contexts without sources: each context is its own source, so "
                "grounded scores equal emitted ones by construction"
            )
        empty = np.flatnonzero(flags & EMPTY_ANSWER)
        if len(empty):
            notes.append(
                f"{name}: {len(empty)} empty answer(s) (first: {lines.where(int(empty[0]))}): scored as the "
                "definitions say (answer scores 0, citation scores undefined)"
            )
    for name in uncited:
        notes.append(
            f"{name}: no answer carries a citation marker [k]: the citation diagnostics "
            f"({', '.join(d for d in CITATION_DIAGNOSTICS)}) are undefined for this setting, not 0"
        )
    if matched.unmatched:
        first = ", ".join(f"{u.question_id!r} (missing in {', '.join(u.missing)})" for u in matched.unmatched[:5])
        notes.append(
            f"{len(matched.unmatched)} question(s) are not in every setting and stay out of the common cohort "
            f"(unmatched.csv lists them): {first}" + (" ..." if len(matched.unmatched) > 5 else "")
        )
    if matched.by_text:
        notes.append(f"{matched.n_by_text} question(s) matched by question text, not id (first: {matched.by_text[0]})")
    notes.extend(matched.conflicts[:5])
    return notes


@dataclass
class _Inputs:
    """What the inputs say, before anything is scored: settings, matched questions, diagnostics, notes."""

    files: list[ImportedFile]
    labels: list[str]
    sources: list[str]
    settings: dict[str, SettingLines]
    matched: Matched
    contrasts: list | None
    baseline: str | None
    mode: str
    diagnostics: list[str]
    per_setting: dict[str, list[str]]
    notes: list[str]
    fmt_of: dict[str, str]

    @property
    def names(self) -> list[str]:
        return list(self.settings)

    def close(self) -> None:
        for f in self.files:
            f.close()


def _read_inputs(inputs, fmt, mapping, split, options: ScoreOptions) -> _Inputs:
    if not inputs:
        raise ScoreInputError("no input file given")
    named = [_split_named(s) for s in inputs]
    files = [read_input(src, fmt, mapping=mapping, split=split) for _, src in named]
    labels = file_labels([src for _, src in named], [n for n, _ in named])
    settings = assign_settings(files, labels)
    fmt_by_path = {f.path: f.format for f in files}
    fmt_of = {name: fmt_by_path.get(items[0].file_line[0], "generic") for name, items in settings.items()}
    matched = match_questions(settings)
    names = list(settings)
    contrasts, baseline = _contrasts(names, options.baseline, options.all_pairs)
    diagnostics = _select(options, files)
    uncited = [n for n, lines in settings.items() if not np.any(_flags(lines) & MARKERS)]
    per_setting = {n: [d for d in diagnostics if n not in uncited or d not in CITATION_DIAGNOSTICS] for n in names}
    notes = _notes(files, settings, uncited, matched)
    for f in files:
        f.index.release()  # questions matched: planning needs no more of it
    return _Inputs(
        files=files,
        labels=labels,
        sources=[src for _, src in named],
        settings=settings,
        matched=matched,
        contrasts=contrasts,
        baseline=baseline,
        mode=_citation_mode(options.citations, files),
        diagnostics=diagnostics,
        per_setting=per_setting,
        notes=notes,
        fmt_of=fmt_of,
    )


def score_files(
    inputs: Sequence[str],
    out_dir: str | Path,
    *,
    fmt: str = "auto",
    mapping: Mapping[str, str] | None = None,
    split: str | None = None,
    options: ScoreOptions = ScoreOptions(),
    progress: bool = False,
    build_report: bool = True,
    on_record: Callable[[Record], None] | None = None,
    human_labels: str | Path | None = None,
    figures: Sequence[str] = (),
    records_file: bool = True,
) -> ScoreResult:
    """Score ``inputs`` (paths, ``NAME=PATH`` or ``hf:<id>``) into ``out_dir`` (see the module doc).

    ``figures``: the report's figure files (``png``, ``svg``; default none: report.html draws its own).
    Raises :class:`~rageval.data.formats.layout.ScoreInputError` (a ``ValueError``) for input that cannot be
    scored, naming the file, line and field.  ``human_labels``: a filled label file of ``rageval label`` for
    this run, added to its report (docs/score.md#human-labels).  ``records_file=False``: no ``records.jsonl``.
    """

    refuse_inputs(out_dir, [src for _, src in map(_split_named, inputs) if not src.startswith("hf:")])
    read = _read_inputs(inputs, fmt, mapping, split, options)
    try:
        if build_report:  # refused before anything is scored, not after (records alone: any number)
            more = f" and {len(read.sources) - 1} more input(s)" if len(read.sources) > 1 else ""
            check_settings(len(read.names), printable(read.sources[0]) + more)
        plan = replace(build_plan(read, options), records_file=records_file)
    except BaseException:
        read.close()
        raise
    rundir = RunDir(out_dir)
    with rundir.lock("rageval score"):  # one writer per output directory, as a suite run
        try:
            run = execute(plan, rundir, progress_bar=progress, on_record=on_record)
        finally:
            read.close()  # a streamed file's descriptor: every item is made
        read.matched.write_unmatched(rundir.path)
        result = ScoreResult(
            rundir.path,
            run.n_records,
            run.status_counts,
            run.reused,
            run.computed,
            read.names,
            read.matched.unmatched,
            read.notes,
        )
        if build_report:
            result.report = _build(
                rundir.path,
                seed=options.seed,
                n_resamples=options.resamples,
                figures=figures,
                human_labels=human_labels,
                progress=progress,  # the records read, on a terminal
            )
    return result


def _scoring(options: ScoreOptions, mode: str) -> ScoringConfig:
    """The run's :class:`~rageval.scoring.ScoringConfig` (no attribution section: the defaults)."""
    try:
        judge = JudgeSpec(spec=options.judge, threshold=float(options.threshold), params=dict(options.judge_params))
        scoring = ScoringConfig(
            judge=judge,
            tokenizer=options.tokenizer,
            citations=CitationConfig.model_validate({"mode": mode, "max_citations": options.max_citations}),
            attribution=options.attribution,
            retrieval_k=options.retrieval_k,
        )
        scoring_options(scoring)  # validated here, before anything is written
    except ValueError as err:
        raise ScoreInputError(f"scoring options: {' '.join(str(err).split())}") from None
    return scoring


def _item(it: ScoreItem, qid: str) -> Item:
    """The run's item of one input line (question ``qid``): its example, sources and what the file gives."""
    given = GivenOutput(
        tuple(it.units),
        it.answer,
        it.input_tokens,
        extra={"input": {"file": printable(it.file_line[0]), "line": it.file_line[1]}},
    )
    return Item(_example(it, qid), _Given(it.sources, it.retrieved, it.self_sourced), given=given)


class _LineItems(ItemStream):
    """A setting's items, made from its lines (a streamed file's read again) one by one in input order; its
    records go in the run's question order restricted to the setting
    (:meth:`~rageval.data.formats.match.Matched.record_order`)."""

    def __init__(self, lines: SettingLines, matched: Matched, name: str) -> None:
        self.lines, self.order, self.positions = lines, matched.order, matched.positions[name]
        self.ks = matched.record_order(name)

    def __len__(self) -> int:
        return len(self.lines)

    def __iter__(self) -> Iterator[Item]:
        order, positions = self.order, self.positions
        for k, it in enumerate(self.lines):
            yield _item(it, order[positions[k]])

    def record_questions(self) -> Iterator[str]:
        order, positions = self.order, self.positions
        return (order[positions[k]] for k in self.ks)


def build_plan(read: _Inputs, options: ScoreOptions):
    """The run :class:`~rageval.run.plan.Plan` of the inputs: one setting per file or system, every item given
    (its units and answer), keyed by the file's content and the scoring options."""

    scoring = _scoring(options, read.mode)
    get_tokenizer(options.tokenizer)  # a tokenizer that does not load stops the run before anything is written
    config = {
        "inputs": [
            {"name": lab, "source": printable(src), "format": f.format}
            for lab, src, f in zip(read.labels, read.sources, read.files)
        ],
        "judge": options.judge,
        "judge_params": dict(options.judge_params),
        "threshold": options.threshold,
        "citations": read.mode,
        "max_citations": options.max_citations,
        "diagnostics": options.diagnostics,
        "tokenizer": options.tokenizer,
        "retrieval_k": options.retrieval_k,
        "baseline": read.baseline,
        "all_pairs": options.all_pairs,
        "seed": options.seed,
    }
    settings = []
    for name in read.names:
        fmt = read.fmt_of.get(name, "generic")
        setting = Setting(name=name, compressor=f"given:{fmt}", budget=None, reader="saved")
        key = _setting_key(options, setting, fmt, read.mode, read.per_setting[name], None)
        settings.append(
            SettingPlan(
                setting,
                Given(label=setting.compressor),
                tuple(read.per_setting[name]),
                key,
                _LineItems(read.settings[name], read.matched, name),
                batch_size=options.batch_size,
            )
        )
    return Plan(
        origin=Origin(
            "score",
            SUITE_NAME,
            sha({"config": config, "settings": read.names})[:16],
            config,
            source=", ".join(map(printable, read.sources)),
        ),
        settings=tuple(settings),
        question_order=tuple(read.matched.order),
        scoring=scoring,
        diagnostics=tuple(read.diagnostics),
        seed=options.seed,
        contrasts=read.contrasts,
        inputs=tuple(Path(src) for src in read.sources if not src.startswith("hf:")),
        summary={
            "dataset": ", ".join(c["source"] for c in config["inputs"]),
            "inputs": {
                "questions": len(read.matched.order),
                "questions_hash": sha_of_items(read.matched.questions())[:32],  # each text read again
            },
            "score": {
                "diagnostics_per_setting": read.per_setting,
                "unmatched": len(read.matched.unmatched),
                "matched_by_text": read.matched.n_by_text,
                "files": [
                    {"source": printable(f.path), "format": f.format, "lines": len(f.items), "meta": f.meta}
                    for f in read.files
                ],
            },
        },
        notes=tuple(map(printable, read.notes)),
        judge_needed=any(CATALOG[d].uses_judge for d in read.diagnostics),
        first_batch=16,  # the first record on disk sooner
    )
