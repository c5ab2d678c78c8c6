"""``rageval score``: score the outputs a RAG system already wrote, and compare systems (docs/score.md).

The run reuses the suite runner's pieces, one piece of code per idea:

* each input line becomes an :class:`~rageval.data.Example` (gold; the answer,
  units and reader tokens in ``meta``) and its sources, and the record's input
  hash is :func:`rageval.suite.plan.record_hash` of them and of the run's key;
* records are scored and assembled by :func:`rageval.suite.execute.score_outputs`
  (the suite runner's scoring step: :func:`rageval.diagnostics.dispatch.score`,
  citation parsing, ``judge_error`` records) and cached per record by
  :class:`rageval.suite.cache.RecordCache`, so a killed run resumes and a rerun
  reuses every record whose input did not change;
* ``records.jsonl``, ``manifest.json``, ``run_stats.json`` and the report
  (summary, paired contrasts with bootstrap CIs, sign-flip tests and Holm on the
  common cohort, plots, ``report.html``) are written as a suite's are.

Nothing on the path to the first record imports a model library or ``evaluate``
(the lexical judge needs none; a model judge loads its own).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from rageval import __version__
from rageval.score.importers import ImportedFile, read_input
from rageval.score.layout import ScoreInputError, ScoreItem
from rageval.score.match import Matched, assign_settings, file_labels, match_questions
from rageval.types import Record, Setting, SourceSnippet

__all__ = ["CITATION_DIAGNOSTICS", "SUITE_NAME", "ScoreOptions", "ScoreResult", "has_markers", "score_files"]

#: the name a score run records as its suite (an output directory holds one kind of run)
SUITE_NAME = "score"

_MARKER = re.compile(r"\[\d+")


def has_markers(text: str) -> bool:
    """True when ``text`` carries a citation marker ``[k`` (the pattern ALCE's eval.py reads).

    >>> has_markers("Paris [1]."), has_markers("Paris [1, 2]."), has_markers("Paris [a].")
    (True, True, False)
    """
    return _MARKER.search(text) is not None


def _citation_diagnostics() -> tuple[str, ...]:
    """Diagnostics whose value is read off the answer's citations (undefined for a setting that never cites)."""
    from rageval.diagnostics import CATALOG

    cited_parts = {"emitted", "grounded", "verification"}
    return tuple(n for n, s in CATALOG.items() if cited_parts & set(s.engine_parts) or "evidence" in s.needs)


CITATION_DIAGNOSTICS = _citation_diagnostics()


@dataclass(frozen=True)
class ScoreOptions:
    """How to score (the ``rageval score`` options)."""

    judge: str = "lexical"
    judge_params: Mapping[str, Any] = field(default_factory=dict)
    threshold: float = 0.5
    citations: str = "auto"  # auto | default | alce
    max_citations: int | None = 3
    diagnostics: Any = "auto"
    tokenizer: str = "regex"
    retrieval_k: int | None = None
    seed: int = 0
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
    doc_ids: tuple[str, ...]


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


def _select(options: ScoreOptions, items: Sequence[ScoreItem]) -> list[str]:
    from rageval.diagnostics import applicable

    def has(name: str) -> bool:
        return any(it.gold.get(name) for it in items)

    try:
        return applicable(options.diagnostics, has)
    except ValueError as err:
        raise ScoreInputError(f"--diagnostics: {err}") from None


def _example(item: ScoreItem, qid: str):
    from rageval.data.schema import Example

    g = item.gold
    return Example(
        id=qid,
        question=item.question,
        answers=g["answers"],
        qa_pairs=g["qa_pairs"],
        gold_doc_ids=g["gold_doc_ids"],
        evidence=g["evidence"],
        reference=g["reference"],
        dataset="score",
        meta={
            "answer": item.answer,
            "units": [u.to_dict() for u in item.units],
            "input_tokens": item.input_tokens,
            "self_sourced": item.self_sourced,
        },
    )


def _setting_key(options: ScoreOptions, setting: Setting, fmt: str, mode: str, diagnostics, judge_id) -> dict:
    from rageval.diagnostics import CATALOG

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
        from rageval.registry import did_you_mean

        hint = did_you_mean(base, settings) or f" Settings: {', '.join(settings)}."
        raise ScoreInputError(f"--baseline {base!r} is not a setting of this run.{hint}")
    return [{"vs": base}], base


def _notes(
    files: Sequence[ImportedFile],
    settings: Mapping[str, Sequence[ScoreItem]],
    uncited: Sequence[str],
    matched: Matched,
) -> list[str]:
    notes = [n for f in files for n in f.notes]
    for name, items in settings.items():
        n_self = sum(it.self_sourced for it in items)
        if n_self:
            what = "every question" if n_self == len(items) else f"{n_self} of {len(items)} questions"
            notes.append(
                f"{name}: {what} give(s) plain contexts without sources: each context is its own source, so "
                "grounded scores equal emitted ones by construction"
            )
        empty = [it.where for it in items if not it.answer.strip()]
        if empty:
            notes.append(
                f"{name}: {len(empty)} empty answer(s) (first: {empty[0]}): scored as the definitions say "
                "(answer scores 0, citation scores undefined)"
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
        notes.append(
            f"{len(matched.by_text)} question(s) matched by question text, not id (first: {matched.by_text[0]})"
        )
    notes.extend(matched.conflicts[:5])
    return notes


def _write_unmatched(out: Path, matched: Matched) -> None:
    import csv
    import io

    from rageval.io import write_text_atomic

    path = out / "unmatched.csv"
    if not matched.unmatched:
        if path.exists():
            path.unlink()
        return
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["question_id", "question", "present_in", "missing_in"])
    for u in matched.unmatched:
        w.writerow([u.question_id, u.question, ";".join(u.present), ";".join(u.missing)])
    write_text_atomic(path, buf.getvalue())


def _load_judge(options: ScoreOptions, out: Path, tokenizer: Any, needed: bool):
    if not needed:
        return None
    from rageval.errors import ModelUnavailable
    from rageval.judges import get_judge

    try:
        return get_judge(options.judge, cache_dir=out / "cache" / "judge", tokenizer=tokenizer, **options.judge_params)
    except (ValueError, OSError) as err:
        raise ModelUnavailable(f"judge {options.judge!r} cannot be loaded: {err}") from err


def _progress(total: int, enabled: bool):
    from rageval.suite.runner import _progress as bar

    return bar(total, enabled)


def _batches(items: list, size: int, first: int = 16):
    """``items`` in batches of ``size``, the first one small (the first record is on disk sooner)."""
    start, n = 0, min(first, size)
    while start < len(items):
        yield items[start : start + n]
        start, n = start + n, size


@dataclass
class _Plan:
    """What the inputs say, before anything is scored: settings, matched questions, diagnostics, notes."""

    files: list[ImportedFile]
    labels: list[str]
    sources: list[str]
    settings: dict[str, list[ScoreItem]]
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


def _plan(inputs, fmt, mapping, split, options: ScoreOptions) -> _Plan:
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
    diagnostics = _select(options, [it for items in settings.values() for it in items])
    uncited = [n for n, items in settings.items() if not any(has_markers(it.answer) for it in items)]
    per_setting = {n: [d for d in diagnostics if n not in uncited or d not in CITATION_DIAGNOSTICS] for n in names}
    return _Plan(
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
        notes=_notes(files, settings, uncited, matched),
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
) -> ScoreResult:
    """Score ``inputs`` (paths, ``NAME=PATH`` or ``hf:<id>``) into ``out_dir`` (see the module doc).

    Raises :class:`~rageval.score.layout.ScoreInputError` (a ``ValueError``) for input that cannot be
    scored, naming the file, line and field.
    """
    from rageval.suite.lock import OutDirLock
    from rageval.suite.plan import check_out_dir

    plan = _plan(inputs, fmt, mapping, split, options)
    out = Path(out_dir)
    with OutDirLock(out, "rageval score"):  # one writer per output directory, as a suite run
        check_out_dir(out, cast(Any, SimpleNamespace(name=SUITE_NAME)))  # it reads the name only
        return _score(out, plan, options, progress, build_report, on_record)


def _score(out: Path, plan: _Plan, options: ScoreOptions, progress, build_report, on_record) -> ScoreResult:
    from rageval.diagnostics import CATALOG
    from rageval.diagnostics.attribution import AttributionOptions
    from rageval.diagnostics.inputs import ScoringOptions
    from rageval.readers.base import ReaderOutput
    from rageval.readers.template import DEFAULT_TEMPLATE
    from rageval.suite.cache import CacheTally, RecordCache
    from rageval.suite.execute import Item, Stage, score_outputs
    from rageval.suite.plan import record_hash, sha
    from rageval.text import get_tokenizer
    from rageval.tokens import evidence_tokens
    from rageval.types import Context

    settings, matched, names, diagnostics, mode = (
        plan.settings,
        plan.matched,
        plan.names,
        plan.diagnostics,
        plan.mode,
    )
    per_setting, fmt_of = plan.per_setting, plan.fmt_of
    all_items = [it for items in settings.values() for it in items]
    out.mkdir(parents=True, exist_ok=True)
    cache = RecordCache(out, durable=False)  # no fsync per record (rageval.io): the rename stays atomic
    tokenizer = get_tokenizer(options.tokenizer)
    judge = _load_judge(options, out, tokenizer, any(CATALOG[d].engine_parts for d in diagnostics))
    judge_id = getattr(judge, "id", None) if judge is not None else None
    try:
        attribution = AttributionOptions(
            threshold=options.threshold, max_citations=options.max_citations, alce_compat=mode == "alce"
        )
    except ValueError as err:
        raise ScoreInputError(f"scoring options: {err}") from None
    scoring = ScoringOptions(attribution=attribution, retrieval_k=options.retrieval_k)
    config = {
        "inputs": [
            {"name": lab, "source": src, "format": f.format}
            for lab, src, f in zip(plan.labels, plan.sources, plan.files)
        ],
        "judge": options.judge,
        "judge_params": dict(options.judge_params),
        "threshold": options.threshold,
        "citations": mode,
        "max_citations": options.max_citations,
        "diagnostics": options.diagnostics,
        "tokenizer": options.tokenizer,
        "retrieval_k": options.retrieval_k,
        "baseline": plan.baseline,
        "all_pairs": options.all_pairs,
        "seed": options.seed,
    }
    run_hash = sha({"config": config, "settings": names})[:16]
    cache.mark_suite(SUITE_NAME, run_hash)

    tally = CacheTally()
    computed = 0
    expected: dict[tuple[str, str], str] = {}  # (setting, question) -> the input hash of this run's record
    bar = _progress(len(all_items), progress)
    reader = SimpleNamespace(template=DEFAULT_TEMPLATE)
    for name in names:
        items, qids = settings[name], matched.ids[name]
        setting = Setting(name=name, compressor=f"given:{fmt_of.get(name, 'generic')}", budget=None, reader="saved")
        key = _setting_key(options, setting, fmt_of.get(name, "generic"), mode, per_setting[name], judge_id)
        pending: list[tuple[Item, ScoreItem]] = []
        for it, qid in zip(items, qids):
            example = _example(it, qid)
            retrieved = _Given(it.sources, it.retrieved)
            item = Item(example, retrieved, record_hash(key, example, retrieved))
            expected[(name, qid)] = item.input_hash
            if tally.reuse(cache, name, qid, item.input_hash, retry_failed=True):
                bar.update(1)
                continue
            pending.append((item, it))
        stage = Stage(setting, None, None, reader, tokenizer, judge, per_setting[name], scoring, False)
        for chunk in _batches(pending, options.batch_size):
            batch = [p[0] for p in chunk]
            contexts = [
                Context.measure(it.units, tokenizer=tokenizer, retrieved_tokens=evidence_tokens(it.sources, tokenizer))
                for _, it in chunk
            ]
            outputs = {i: ReaderOutput(it.answer, "ok", it.input_tokens, None) for i, (_, it) in enumerate(chunk)}
            records: list[Record | None] = [None] * len(batch)
            score_outputs(batch, contexts, outputs, records, stage)
            for (item, it), rec in zip(chunk, records):
                assert rec is not None
                rec = replace(rec, extra={**rec.extra, "input": {"file": it.file_line[0], "line": it.file_line[1]}})
                cache.write(name, item.example.id, item.input_hash, rec)
                computed += 1
                tally.count(rec.status)
                if on_record is not None:
                    on_record(rec)
                bar.update(1)
    bar.close()

    present = {(n, q) for n in names for q in matched.ids[n]}
    n_records = cache.assemble(names, matched.order, present=lambda s, q: (s, q) in present, expected=expected)
    _write_unmatched(out, matched)
    _write_manifest(out, run_hash, config, plan)
    from rageval.io import write_json_atomic

    stats = {
        "records_reused": tally.reused,
        "records_computed": computed,
        "records_retried": tally.retried,
        "records_quarantined": len(cache.quarantined),
        "status_counts": tally.status_counts,
        "judge": judge.stats() if judge is not None and hasattr(judge, "stats") else {},
    }
    write_json_atomic(out / "run_stats.json", stats, indent=2)
    result = ScoreResult(
        out, n_records, tally.status_counts, tally.reused, computed, names, matched.unmatched, plan.notes
    )
    if build_report:
        from rageval.suite.runner import write_report

        result.report = write_report(out, options.seed)
    return result


def _write_manifest(out: Path, run_hash: str, config: dict, plan: _Plan) -> None:
    from rageval.io import write_json_atomic
    from rageval.suite.plan import sha
    from rageval.suite.runner import _package_versions

    names, fmt_of, matched = plan.names, plan.fmt_of, plan.matched
    manifest = {
        "suite": {
            "name": SUITE_NAME,
            "hash": run_hash,
            "dataset": ", ".join(c["source"] for c in config["inputs"]),
            "seed": config.get("seed", 0),
            "contrasts": plan.contrasts,
            "settings": [
                {"name": n, "compressor": f"given:{fmt_of.get(n, 'generic')}", "budget": None, "params": {}}
                for n in names
            ],
            "cluster_key": None,
            "diagnostics": plan.diagnostics,
            "config": config,
        },
        "score": {
            "diagnostics_per_setting": plan.per_setting,
            "unmatched": len(matched.unmatched),
            "matched_by_text": len(matched.by_text),
            "files": [
                {"source": f.path, "format": f.format, "lines": len(f.items), "meta": f.meta} for f in plan.files
            ],
        },
        "notes": plan.notes,
        "package": _package_versions(),
        "models": {"judge": config["judge"]},
        "inputs": {
            "questions": len(matched.order),
            "questions_hash": sha([[q, matched.questions[q]] for q in matched.order])[:32],
        },
    }
    write_json_atomic(out / "manifest.json", manifest, indent=2)
