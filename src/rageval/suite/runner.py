"""The suite runner: every (question, setting), cached per record, resumable, byte-identical.

Flow for ``run_suite(suite)``:

1. load the dataset into examples and retrieve (the dataset's candidates, or BM25);
2. for every setting (compressor x budget) and question: compress -> read ->
   parse citations -> score with the pure metric functions (never ``evaluate``);
3. each finished record is written at once to ``cache/records/<setting>/<qid>.json``
   (atomically: temp file + rename), keyed by an input hash of everything that can
   change it; a killed run re-uses every record whose hash still matches;
4. at the end ``records.jsonl`` (suite setting order, then dataset question
   order), ``manifest.json`` and the report (summary, contrasts, plots, HTML) are
   written from the cached records alone, so a resumed run ends with
   byte-identical files.  Run counters that depend on the path taken (judge cache
   hits, records reused) go to ``run_stats.json``, kept apart.

Failures become records with a status (``budget_check``, ``prompt_overflow``,
``reader_error``, ``judge_error``, ``compressor_error``, ``unavailable``), are
counted in the summary and are never dropped.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from rageval import __version__
from rageval.citations import parse_answer
from rageval.errors import ModelUnavailable
from rageval.suite.config import Suite, suite_hash
from rageval.types import Context, Record, Setting, SourceSnippet

__all__ = ["run_suite", "RunResult", "compute_metrics", "write_json_atomic", "RunDirError"]

ATTRIBUTION_METRICS = (
    "emitted_precision",
    "emitted_recall",
    "grounded_precision",
    "grounded_recall",
    "re_attributability",
    "verification",
    "compression",
)

#: attribution values kept as record metrics (the rest of the engine's counters go to extra)
RECORD_METRICS = frozenset(
    {
        "emitted_precision", "emitted_recall", "grounded_precision", "grounded_recall", "re_attributability",
        "unsupported_summary_checked", "unsupported_declared_span", "unsupported_recovered_source",
        "verifier_tokens_summary_checked", "verifier_tokens_declared_span", "verifier_tokens_recovered_source",
        "recovery_candidates_scored",
    }
)


class RunDirError(ValueError):
    """An output directory that belongs to another suite, or is unreadable."""


def _sha(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a kill leaves the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json_atomic(path: Path, obj: Any, *, indent: int | None = None) -> None:
    write_text_atomic(path, json.dumps(obj, sort_keys=True, ensure_ascii=False, indent=indent) + "\n")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._@-]+", "_", name)[:80] + "-" + hashlib.sha1(name.encode()).hexdigest()[:8]


# --------------------------------------------------------------------------------------------
# metrics of one batch of records (pure functions only)
# --------------------------------------------------------------------------------------------


def applicable_diagnostics(suite: Suite, examples: Sequence[Any]) -> list[str]:
    from rageval.diagnostics import CATALOG

    if suite.diagnostics != "auto":
        return list(suite.diagnostics)
    has = lambda attr: any(getattr(e, attr, None) for e in examples)  # noqa: E731
    out = []
    if has("answers") or has("qa_pairs"):
        out.append("answer_in_context")
    if has("qa_pairs"):
        out.append("str_em")
    if has("answers"):
        out.append("answer_f1")
    if has("gold_doc_ids"):
        out.append("retrieval_recall")
        if "gold_coverage" in CATALOG:
            out.append("gold_coverage")
    out.extend(n for n in ATTRIBUTION_METRICS if n in CATALOG)
    if has("evidence") and "evidence_f1" in CATALOG:
        out.append("evidence_f1")
    return out


def _value(result: dict[str, Any], key: str) -> Any:
    return result["per_question"][0].get(key)


def compute_metrics(
    items: Sequence[dict[str, Any]],
    diagnostics: Sequence[str],
    *,
    judge: Any,
    suite: Suite,
    template: Any = None,
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(metrics, extra) per item.  An item: example, retrieved, context, answer (str), sources.

    ``template`` is the reader's prompt template: answer-in-context is scored on the
    units exactly as it shows them (titles included where it shows them).  Items whose
    record is not ``ok`` are not passed here.
    """
    from rageval import diagnostics as D
    from rageval.readers import PromptTemplate

    template = PromptTemplate.coerce(template)

    out: list[tuple[dict[str, Any], dict[str, Any]]] = [({}, {}) for _ in items]
    if not items:
        return out
    for i, it in enumerate(items):
        ex, ctx, ans = it["example"], it["context"], it["answer"]
        m = out[i][0]
        gold = [list(p) for p in ex.qa_pairs] if ex.qa_pairs else list(ex.answers)
        if "answer_in_context" in diagnostics:
            shown = [template.evidence_text(u) for u in ctx.units]
            r = D.get("answer_in_context")([shown], [gold])
            m["answer_in_context"] = _value(r, "answer_in_context")
        if "str_em" in diagnostics:
            r = D.get("str_em")([ans], [[list(p) for p in ex.qa_pairs]], alce_compat=suite.citations.mode == "alce")
            m["str_em"], m["str_hit"] = _value(r, "str_em"), _value(r, "str_hit")
        if "answer_f1" in diagnostics:
            r = D.get("answer_f1")([ans], [list(ex.answers)])
            m["answer_f1"], m["answer_em"] = _value(r, "answer_f1"), _value(r, "answer_em")
        if "retrieval_recall" in diagnostics:
            r = D.get("retrieval_recall")([list(it["retrieved_ids"])], [list(ex.gold_doc_ids)], k=suite.retrieval.k)
            m["retrieval_recall"], m["all_gold"] = _value(r, "retrieval_recall"), _value(r, "all_gold")
        if "gold_coverage" in diagnostics:
            m["gold_coverage"] = _gold_coverage(ctx, it["sources"], ex.gold_doc_ids)
        if "evidence_f1" in diagnostics:
            m["evidence_f1"] = _evidence_f1(it, suite)
    wanted_attr = [n for n in ATTRIBUTION_METRICS if n in diagnostics]
    if wanted_attr:
        from rageval.diagnostics.attribution import attribution_scores_batch

        preds = [it["answer"] for it in items]
        units = [[u.to_dict() for u in it["context"].units] for it in items]
        sources = [[{"id": s.id, "text": s.text, "title": s.title} for s in it["sources"]] for it in items]
        parts = []
        if any(n.startswith("emitted") for n in wanted_attr):
            parts.append("emitted")
        if any(n.startswith("grounded") for n in wanted_attr):
            parts.append("grounded")
        if "re_attributability" in wanted_attr:
            parts.append("re_attributability")
        if "verification" in wanted_attr or "compression" in wanted_attr:
            parts.append("verification")
        results = attribution_scores_batch(
            preds, units, sources, parts=tuple(parts), details=True, **attribution_options(suite, judge)
        )
        if "re_attributability" in wanted_attr:
            _add_sweep(out, items, units, sources, judge, suite)
        for (m, extra), r, it in zip(out, results, items):
            details = r.pop("details", None)
            counts = {}
            for key, value in r.items():
                if key in RECORD_METRICS:
                    m[key] = value
                elif isinstance(value, (int, float)) or value is None:
                    counts[key] = value
            extra["attribution_counts"] = counts
            if "compression" in wanted_attr:
                m.update(_compression(it, r))
            extra["attribution"] = details
    return out


def attribution_options(suite: Suite, judge: Any) -> dict[str, Any]:
    """Keyword options of the attribution engine, as the suite sets them."""
    return dict(
        judge=judge,
        threshold=suite.judge.threshold,
        max_citations=suite.citations.max_citations,
        alce_compat=suite.citations.mode == "alce",
        **suite.attribution.model_dump(),
    )


def _add_sweep(out, items, units, sources, judge, suite: Suite) -> None:
    """Per record, re-attributability and grounded precision at recovery thresholds 0.3-0.8.

    Only for records with at least one unit without declared provenance (elsewhere
    the rate is undefined and grounded precision does not depend on the threshold).
    The judge's probabilities come from the runner's memo/cache, so this re-thresholds.
    """
    from rageval.diagnostics.attribution import DEFAULT_SWEEP, attribution_scores_batch

    idx = [i for i, u in enumerate(units) if any(x.get("source_ids") is None for x in u)]
    if not idx:
        return
    sweeps: dict[int, dict[str, dict[str, Any]]] = {i: {} for i in idx}
    options = attribution_options(suite, judge)
    for t in DEFAULT_SWEEP:
        options["recovery_threshold"] = t
        rows = attribution_scores_batch(
            [items[i]["answer"] for i in idx], [units[i] for i in idx], [sources[i] for i in idx],
            parts=("grounded", "re_attributability"), details=False, **options,
        )
        for i, r in zip(idx, rows):
            sweeps[i][f"{t:.1f}"] = {"rate": r.get("re_attributability"), "grounded_precision": r.get("grounded_precision")}
    for i in idx:
        out[i][1]["reattribution_sweep"] = sweeps[i]


def _gold_coverage(ctx: Context, sources: Sequence[SourceSnippet], gold_doc_ids: Sequence[str]) -> float | None:
    from rageval.diagnostics import get

    fn = get("gold_coverage")
    units = [u.to_dict() for u in ctx.units]
    res = fn([units], [list(gold_doc_ids)], doc_of=[{s.id: s.doc_id for s in sources}])
    return _value(res, "gold_coverage")


def _evidence_f1(it: dict[str, Any], suite: Suite) -> float | None:
    from rageval.diagnostics import get

    ex, ctx = it["example"], it["context"]
    paragraph_of = {s.id: s.doc_id for s in it["sources"]}
    res = get("evidence_f1")(
        [it["answer"]],
        [[u.to_dict() for u in ctx.units]],
        [[{"id": s.id, "text": s.text} for s in it["sources"]]],
        paragraph_of=[paragraph_of],
        references=[[list(a) for a in ex.evidence]],
        max_citations=suite.citations.max_citations,
        alce_compat=suite.citations.mode == "alce",
    )
    return _value(res, "evidence_f1")


def _compression(it: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    ctx: Context = it["context"]
    reader_tokens = it.get("reader_input_tokens")
    # nominal budget, achieved tokens and ratio live in the record's context
    out = {"reader_input_tokens": reader_tokens}
    for mode in ("summary_checked", "declared_span", "recovered_source"):
        v = r.get(f"verifier_tokens_{mode}")
        out[f"verification_cost_{mode}"] = (
            None if reader_tokens is None or v is None else reader_tokens + v + (r.get("recovery_tokens") or 0 if mode == "recovered_source" else 0)
        )
    return out


# --------------------------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------------------------


@dataclass
class RunResult:
    out_dir: Path
    n_records: int
    status_counts: dict[str, int]
    reused: int
    computed: int
    report: dict[str, Any] = field(default_factory=dict)


def _package_versions() -> dict[str, str]:
    from importlib import metadata

    out = {"rageval": __version__, "python": platform.python_version()}
    for pkg in ("numpy", "scipy", "torch", "transformers", "bm25s", "nupunkt", "nltk"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def _check_out_dir(out_dir: Path, suite: Suite, shash: str) -> None:
    manifest = out_dir / "manifest.json"
    marker = out_dir / "cache" / "suite.json"
    for path in (marker, manifest):
        if path.is_file():
            try:
                data = json.loads(path.read_text())
            except json.JSONDecodeError as err:
                raise RunDirError(f"{path}: not valid JSON ({err}); delete the output directory or choose another --out") from None
            found = data.get("suite", {}).get("name"), data.get("suite", {}).get("hash")
            if found[0] != suite.name:
                raise RunDirError(
                    f"output directory {out_dir} holds a run of suite {found[0]!r}, not {suite.name!r}; "
                    "choose another --out (or delete it)"
                )
            return


def resolve_dataset_path(suite: Suite) -> Path | None:
    """The dataset file: ``path`` (relative to the suite file, else the cwd), a shipped sample, or None (hub)."""
    from rageval.data import sample_path

    ds = suite.dataset
    if ds.hub_id is not None:
        return None
    if ds.path is None:
        return sample_path(ds.sample or ds.name)
    p = Path(ds.path).expanduser()
    if not p.is_absolute() and suite.source:
        beside = Path(suite.source).resolve().parent / p
        if beside.exists():
            return beside
    if not p.exists():
        raise FileNotFoundError(f"dataset.path {ds.path!r} not found (looked beside the suite file and in the cwd)")
    return p


def load_inputs(suite: Suite):
    """Examples and their retrieval, as the suite describes."""
    from rageval.data import load_corpus, load_examples
    from rageval.retrieval import retrieve_all

    ds = suite.dataset
    path = resolve_dataset_path(suite)
    examples = load_examples(ds.name, path, hub_id=ds.hub_id, hub_config=ds.hub_config, split=ds.split, limit=ds.limit)
    corpus = None
    if suite.retrieval.method == "bm25" and suite.retrieval.corpus == "dataset":
        corpus = load_corpus(ds.name, path, hub_id=ds.hub_id, hub_config=ds.hub_config, split=ds.split)
    retrieved = retrieve_all(examples, method=suite.retrieval.method, k=suite.retrieval.k, corpus=corpus)
    return examples, retrieved


def run_suite(
    suite: Suite,
    out_dir: str | Path | None = None,
    *,
    allow_unavailable: bool = False,
    progress: bool = True,
    build_report: bool = True,
    on_record: Callable[[Record], None] | None = None,
) -> RunResult:
    """Run (or resume) ``suite`` into ``out_dir`` (default: ``suite.output_dir``)."""
    from rageval.compressors import BudgetError, CompressorError
    from rageval.compressors import get as get_compressor
    from rageval.judges import get_judge
    from rageval.readers import get_reader
    from rageval.text import get_tokenizer

    out = Path(out_dir if out_dir is not None else suite.output_dir)
    shash = suite_hash(suite)
    _check_out_dir(out, suite, shash)
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "cache" / "suite.json", {"suite": {"name": suite.name, "hash": shash}})

    tokenizer = get_tokenizer(suite.tokenizer)
    examples, retrieved = load_inputs(suite)
    diagnostics = applicable_diagnostics(suite, examples)

    try:
        judge = get_judge(suite.judge.spec, cache_dir=out / "cache" / "judge", tokenizer=tokenizer, **suite.judge.params)
    except (ValueError, OSError) as err:
        raise ModelUnavailable(f"judge {suite.judge.spec!r} cannot be loaded: {err}") from err
    reader = _make_reader(get_reader, suite)

    settings = suite.expand_settings()
    total = len(settings) * len(examples)
    bar = _progress(total, progress)
    status_counts: dict[str, int] = {}
    reused = computed = 0
    models: dict[str, Any] = {"judge": getattr(judge, "id", str(suite.judge.spec)), "reader": _reader_id(reader, suite)}
    for name, comp_name, budget, params in settings:
        setting = Setting(name=name, compressor=comp_name, budget=budget, reader=suite.reader.backend)
        comp_error: str | None = None
        try:
            compressor = get_compressor(comp_name, **params)
            models[f"compressor:{name}"] = getattr(compressor, "model_id", None) or comp_name
        except ModelUnavailable as err:
            if not allow_unavailable:
                raise
            compressor, comp_error = None, str(err)
        base = {
            "rageval": __version__,
            "setting": setting.to_dict(),
            "params": params,
            "compressor": getattr(compressor, "config", None) if compressor is not None else None,
            "tokenizer": suite.tokenizer,
            "reader": suite.reader.model_dump(mode="json"),
            "reader_id": models["reader"],
            "judge": suite.judge.model_dump(mode="json"),
            "judge_id": models["judge"],
            "citations": suite.citations.model_dump(mode="json"),
            "attribution": suite.attribution.model_dump(mode="json"),
            "diagnostics": diagnostics,
            "retrieval": suite.retrieval.model_dump(mode="json"),
        }
        setting_dir = out / "cache" / "records" / _safe(name)
        pending: list[dict[str, Any]] = []
        for ex, ret in zip(examples, retrieved):
            sources = tuple(ret.snippets)
            ihash = _sha(
                {
                    **base,
                    "question": ex.id,
                    "q": ex.question,
                    "gold": ex.to_dict() if hasattr(ex, "to_dict") else ex.id,
                    "sources": [[s.id, s.text, s.title] for s in sources],
                    "retrieved": list(ret.doc_ids),
                }
            )[:32]
            path = setting_dir / f"{_safe(ex.id)}.json"
            cached = _read_cached(path, ihash)
            if cached is not None:
                reused += 1
                status_counts[cached.status] = status_counts.get(cached.status, 0) + 1
                bar.update(1)
                continue
            pending.append({"example": ex, "retrieved": ret, "sources": sources, "hash": ihash, "path": path,
                            "retrieved_ids": ret.doc_ids})
        for batch in _chunks(pending, suite.reader.batch_size):
            records = _run_batch(batch, setting, compressor, comp_error, reader, tokenizer, judge, suite, diagnostics,
                                 BudgetError, CompressorError, ModelUnavailable, allow_unavailable)
            for it, rec in zip(batch, records):
                write_json_atomic(it["path"], {"input_hash": it["hash"], "record": rec.to_dict()})
                computed += 1
                status_counts[rec.status] = status_counts.get(rec.status, 0) + 1
                if on_record is not None:
                    on_record(rec)
                bar.update(1)
    bar.close()

    # Final files, from the cache alone (identical whether or not the run was resumed).
    lines = []
    for name, *_ in settings:
        setting_dir = out / "cache" / "records" / _safe(name)
        for ex in examples:
            data = json.loads((setting_dir / f"{_safe(ex.id)}.json").read_text())
            lines.append(json.dumps(data["record"], sort_keys=True, ensure_ascii=False))
    write_text_atomic(out / "records.jsonl", "\n".join(lines) + "\n")
    manifest = {
        "suite": {
            "name": suite.name,
            "hash": shash,
            "dataset": suite.dataset.name,
            "seed": suite.seed,
            "contrasts": suite.contrasts,
            "settings": [{"name": n, "compressor": c, "budget": b, "params": p} for n, c, b, p in settings],
            "cluster_key": "cluster_id" if any(getattr(e, "cluster_id", None) for e in examples) else None,
            "diagnostics": diagnostics,
            "config": suite.model_dump(mode="json", exclude={"source", "output_dir"}),
        },
        "package": _package_versions(),
        "models": models,
        "inputs": {
            "dataset": str(suite.dataset.path or suite.dataset.hub_id
                           or f"shipped sample: {suite.dataset.sample or suite.dataset.name}"),
            "questions": len(examples),
            "questions_hash": _sha([[e.id, e.question] for e in examples])[:32],
            "sources_hash": _sha([[s.id, s.text] for r in retrieved for s in r.snippets])[:32],
            "template_hash": getattr(getattr(reader, "template", None), "hash", None),
        },
        "offline_defaults": {
            "judge": suite.judge.spec,
            "reader": suite.reader.backend,
            "note": "lexical judge / extractive reader are model-free stand-ins"
            if suite.judge.spec == "lexical" or suite.reader.backend == "extractive"
            else None,
        },
    }
    write_json_atomic(out / "manifest.json", manifest, indent=2)
    stats = {"records_reused": reused, "records_computed": computed, "status_counts": status_counts,
             "judge": judge.stats() if hasattr(judge, "stats") else {}}
    write_json_atomic(out / "run_stats.json", stats, indent=2)
    result = RunResult(out, len(lines), status_counts, reused, computed)
    if build_report:
        result.report = _build_report(out, suite.seed)
    return result


def _build_report(out: Path, seed: int) -> dict[str, Any]:
    try:
        from rageval.report import build_report
    except ImportError:  # pragma: no cover - the report ships with the package
        return {}
    return build_report(out, seed=seed)


def _chunks(items: list, n: int) -> Iterable[list]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def _read_cached(path: Path, ihash: str) -> Record | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, OSError):
        return None  # a torn write cannot happen (atomic rename), but never trust a broken file
    if data.get("input_hash") != ihash:
        return None
    return Record.from_dict(data["record"])


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool):
    if not enabled:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit="rec", desc="rageval", file=sys.stderr, dynamic_ncols=True)


def _reader_id(reader: Any, suite: Suite) -> Any:
    info = getattr(reader, "info", None)
    return info() if callable(info) else suite.reader.backend


def _make_reader(get_reader: Callable, suite: Suite):
    params = dict(suite.reader.params)
    if suite.reader.template is not None:
        params["template"] = suite.reader.template
    params.setdefault("tokenizer", suite.tokenizer)
    return get_reader(suite.reader.backend, **params)


def _run_batch(batch, setting, compressor, comp_error, reader, tokenizer, judge, suite, diagnostics,
               BudgetError, CompressorError, ModelUnavailable, allow_unavailable) -> list[Record]:
    from rageval.judges.base import JudgeError
    from rageval.readers import ReaderRequest

    records: list[Record | None] = [None] * len(batch)
    contexts: list[Context | None] = [None] * len(batch)
    for i, it in enumerate(batch):
        ex = it["example"]
        if compressor is None:
            records[i] = _failed(it, setting, "unavailable", comp_error)
            continue
        try:
            ctx = compressor.compress(ex.question, list(it["sources"]), setting.budget, tokenizer=tokenizer)
            contexts[i] = ctx
            ignores = getattr(compressor, "ignores_budget", setting.compressor == "abstractive")
            if ctx.budget_tokens is not None and ctx.achieved_tokens > ctx.budget_tokens and not ignores:
                records[i] = _failed(
                    it, setting, "budget_check",
                    f"context has {ctx.achieved_tokens} tokens, over the budget of {ctx.budget_tokens}", context=ctx,
                )
        except BudgetError as err:
            records[i] = _failed(it, setting, "budget_check", str(err))
        except ModelUnavailable as err:
            if not allow_unavailable:
                raise
            records[i] = _failed(it, setting, "unavailable", str(err))
        except (CompressorError, RuntimeError) as err:
            records[i] = _failed(it, setting, "compressor_error", f"{type(err).__name__}: {err}")
    todo = [i for i in range(len(batch)) if records[i] is None]
    outputs = {}
    if todo:
        try:
            gen = reader.generate(
                [ReaderRequest(batch[i]["example"].id, batch[i]["example"].question, contexts[i].units, setting.name)
                 for i in todo]
            )
            outputs = dict(zip(todo, gen))
        except (RuntimeError, OSError) as err:  # a backend that fails as a whole: every record gets the status
            if isinstance(err, ModelUnavailable):
                raise
            msg = f"{type(err).__name__}: {err}"
            for i in todo:
                records[i] = _failed(it=batch[i], setting=setting, status="reader_error", error=msg, context=contexts[i])
            todo = []
    scored = []
    for i in todo:
        o = outputs[i]
        status = getattr(o, "status", "ok")
        if status != "ok":
            records[i] = _failed(batch[i], setting, status, getattr(o, "error", None), context=contexts[i])
            continue
        batch[i]["context"] = contexts[i]
        batch[i]["answer"] = o.text
        batch[i]["reader_input_tokens"] = getattr(o, "input_tokens", None)
        scored.append(i)
    if scored:
        try:
            results = compute_metrics([batch[i] for i in scored], diagnostics, judge=judge, suite=suite,
                                      template=reader.template)
        except (JudgeError, RuntimeError) as err:  # judge failures are recorded, not fatal; bugs still raise
            msg = f"{type(err).__name__}: {err}"
            results = None
            for i in scored:
                records[i] = _failed(batch[i], setting, "judge_error", msg, context=contexts[i],
                                     answer_text=batch[i]["answer"], trace=traceback.format_exc(limit=3))
        if results is not None:
            for i, (metrics, extra) in zip(scored, results):
                it = batch[i]
                n_units = len(contexts[i].units)
                answer = parse_answer(it["answer"], n_units, mode=suite.citations.mode,
                                      max_citations=suite.citations.max_citations)
                extra = dict(extra)
                extra.update(_common_extra(it))
                records[i] = Record(
                    question_id=it["example"].id,
                    setting=setting,
                    status="ok",
                    context=contexts[i],
                    sources=it["sources"],
                    answer=answer,
                    metrics=metrics,
                    input_hash=it["hash"],
                    extra=extra,
                )
    return records  # type: ignore[return-value]


def _common_extra(it: dict[str, Any]) -> dict[str, Any]:
    ex = it["example"]
    return {
        "cluster_id": getattr(ex, "cluster_id", None),
        "retrieved_doc_ids": list(it["retrieved_ids"]),
        "reader_input_tokens": it.get("reader_input_tokens"),
        "gold": {
            "answers": list(ex.answers),
            "qa_pairs": [list(p) for p in ex.qa_pairs],
            "gold_doc_ids": list(ex.gold_doc_ids),
            "evidence": [list(e) for e in ex.evidence],
        },
    }


def _failed(it, setting, status, error, *, context=None, answer_text=None, trace=None) -> Record:
    from rageval.types import Answer

    extra = _common_extra(it)
    if trace:
        extra["trace"] = trace
    return Record(
        question_id=it["example"].id,
        setting=setting,
        status=status,
        context=context,
        sources=it["sources"],
        answer=Answer(answer_text) if answer_text is not None else None,
        metrics={},
        input_hash=it["hash"],
        error=error,
        extra=extra,
    )
