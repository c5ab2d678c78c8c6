"""The suite runner: every (question, setting), cached per record, resumable, byte-identical.

The run is split by idea:

* :mod:`rageval.suite.plan` — inputs (dataset, retrieval), the diagnostics to
  score, the typed scoring options and each record's input hash;
* :mod:`rageval.suite.execute` — compress, read and score one batch, turning
  every declared failure into a record with a status;
* :mod:`rageval.suite.cache` — the per-record cache and ``records.jsonl``;
* this module — the orchestration: load the judge, reader and compressors,
  skip what the cache holds, run the rest, then write ``records.jsonl``,
  ``manifest.json``, ``run_stats.json`` and the report.

``records.jsonl`` (suite setting order, then dataset question order),
``manifest.json`` and the report are written from the cached records alone, so a
resumed run ends with byte-identical files.  Counters that depend on the path
taken (judge cache hits, records reused) go to ``run_stats.json``, kept apart.
Scoring goes through the catalog (:func:`rageval.diagnostics.dispatch.score`),
the same path as ``rageval rescore``; the runner never imports ``evaluate``.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rageval import __version__
from rageval.errors import ConfigError, ModelUnavailable
from rageval.io import remove_stale_temps, write_json_atomic, write_text_atomic
from rageval.suite.cache import CacheTally, RecordCache
from rageval.suite.checks import run_problems, tokenizer_problem
from rageval.suite.config import Suite, SuiteError, suite_hash
from rageval.suite.execute import Item, Stage, run_batch
from rageval.suite.plan import (
    PlannedSetting,
    RunDirError,
    check_out_dir,
    load_inputs,
    planned_settings,
    record_hash,
    resolve_dataset_path,
    scoring_options,
    select_diagnostics,
    setting_key,
    sha,
)
from rageval.types import Record, Setting

__all__ = [
    "run_suite",
    "RunResult",
    "RunDirError",
    "write_json_atomic",
    "write_text_atomic",
    "resolve_dataset_path",
    "load_inputs",
    "load_judge",
    "write_report",
]


@dataclass
class RunResult:
    out_dir: Path
    n_records: int
    status_counts: dict[str, int]
    reused: int
    computed: int
    report: dict[str, Any] = field(default_factory=dict)
    retried: int = 0  # cached transient failures computed again (counted in computed too)
    quarantined: int = 0  # unreadable cache files moved to cache/quarantine/


def _package_versions() -> dict[str, str]:
    from importlib import metadata

    out = {"rageval": __version__, "python": platform.python_version()}
    for pkg in ("numpy", "scipy", "torch", "transformers", "bm25s", "nupunkt", "nltk"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def write_report(out: Path, seed: int) -> dict[str, Any]:
    """Statistics, tables, plots and HTML of the run in ``out``."""
    from rageval.report import build_report as _build

    return _build(out, seed=seed)


def _chunks(items: list, n: int) -> Iterable[list]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


@dataclass
class SettingWork:
    """One setting's records still to compute: its planned setting, its own reader spec (None: the suite's),
    the pending items, the reader batch size and the stage that runs them."""

    planned: PlannedSetting
    own_reader: Any
    pending: list[Item]
    batch_size: int
    stage: Stage

    def batches(self) -> Iterable[list[Item]]:
        return _chunks(self.pending, self.batch_size)


def _local_batches(work: Iterable[SettingWork]) -> Iterator[tuple[SettingWork, list[Item], list[Record]]]:
    """The single-process path: each batch compressed, read and scored here, in order."""
    for w in work:
        for batch in w.batches():
            yield w, batch, run_batch(batch, w.stage)


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


def _make_reader(suite: Suite, spec: Any = None):
    """The reader of ``spec`` (a setting's own ReaderSpec), else the suite's."""
    from rageval.readers import get_reader

    spec = spec or suite.reader
    params = dict(spec.params)
    if spec.template is not None:
        params["template"] = spec.template
    params.setdefault("tokenizer", suite.tokenizer)
    return get_reader(spec.backend, **params)


def load_judge(suite: Suite, cache_dir: Path, tokenizer: Any):
    from rageval.judges import get_judge

    try:
        return get_judge(suite.judge.spec, cache_dir=cache_dir, tokenizer=tokenizer, **suite.judge.params)
    except (ValueError, OSError) as err:
        raise ModelUnavailable(f"judge {suite.judge.spec!r} cannot be loaded: {err}") from err


def _plan_settings(
    suite: Suite,
    settings: list[PlannedSetting],
    examples: list,
    retrieved: list,
    reader: Any,
    tokenizer: Any,
    judge: Any,
    diagnostics: list[str],
    options: Any,
    models: dict[str, Any],
    expected: dict[tuple[str, str], str],
    opened: list[Any],
    cache: RecordCache,
    tally: CacheTally,
    bar: Any,
    *,
    allow_unavailable: bool,
    retry_failed: bool,
) -> Iterator[SettingWork]:
    """Setting by setting: load its compressor (and its own reader), hash its records, reuse what the cache holds
    (counted, the bar advanced) and yield the rest as a :class:`SettingWork`."""
    from rageval.compressors import get as get_compressor

    for ps in settings:
        own = ps.reader if ps.reader is not None and ps.reader != suite.reader else None
        setting_reader = reader
        if own is not None:  # the setting's own reader (docs/suites.md): e.g. saved answers beside compressors
            setting_reader = _make_reader(suite, own)
            opened.append(setting_reader)
            models[f"reader:{ps.name}"] = _reader_id(setting_reader, suite)
        setting = Setting(
            name=ps.name, compressor=ps.compressor, budget=ps.budget, reader=(own or suite.reader).backend
        )
        comp_error: str | None = None
        try:
            compressor = get_compressor(ps.compressor, **ps.params)
            models[f"compressor:{ps.name}"] = getattr(compressor, "model_id", None) or ps.compressor
        except ModelUnavailable as err:
            if not allow_unavailable:
                raise
            compressor, comp_error = None, str(err)
        key = setting_key(suite, setting, ps.params, compressor, models, diagnostics, own)
        pending: list[Item] = []
        for ex, ret in zip(examples, retrieved):
            item = Item(ex, ret, record_hash(key, ex, ret))
            expected[(ps.name, ex.id)] = item.input_hash
            if tally.reuse(cache, ps.name, ex.id, item.input_hash, retry_failed=retry_failed):
                bar.update(1)
                continue
            pending.append(item)
        stage = Stage(
            setting,
            compressor,
            comp_error,
            setting_reader,
            tokenizer,
            judge,
            diagnostics,
            options,
            allow_unavailable,
        )
        size = max((own or suite.reader).batch_size, getattr(setting_reader, "min_batch", 1))  # keep it busy
        yield SettingWork(ps, own, pending, size, stage)


def _manifest(suite: Suite, shash: str, settings, examples, retrieved, diagnostics, models, reader) -> dict:
    return {
        "suite": {
            "name": suite.name,
            "hash": shash,
            "dataset": suite.dataset.name,
            "seed": suite.seed,
            "contrasts": suite.contrasts,
            "settings": [
                {"name": s.name, "compressor": s.compressor, "budget": s.budget, "params": s.params} for s in settings
            ],
            "cluster_key": "cluster_id" if any(getattr(e, "cluster_id", None) for e in examples) else None,
            "diagnostics": diagnostics,
            "config": suite.model_dump(mode="json", exclude={"source", "output_dir"}),
        },
        "package": _package_versions(),
        "models": models,
        "inputs": {
            "dataset": str(
                suite.dataset.path
                or suite.dataset.hub_id
                or f"shipped sample: {suite.dataset.sample or suite.dataset.name}"
            ),
            "questions": len(examples),
            "questions_hash": sha([[e.id, e.question] for e in examples])[:32],
            "sources_hash": sha([[s.id, s.text] for r in retrieved for s in r.snippets])[:32],
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


def run_suite(
    suite: Suite,
    out_dir: str | Path | None = None,
    *,
    allow_unavailable: bool = False,
    progress: bool = True,
    build_report: bool = True,
    on_record: Callable[[Record], None] | None = None,
    retry_failed: bool = True,
    ray: str | None = None,
    ray_judges: int | None = None,
) -> RunResult:
    """Run (or resume) ``suite`` into ``out_dir`` (default: ``suite.output_dir``), holding the directory's lock.

    One writer per output directory (:mod:`rageval.suite.lock`): a second process on the
    same directory is refused with :class:`~rageval.suite.lock.OutDirBusy`.

    ``ray``: scale out on Ray (:mod:`rageval.suite.scale`, docs/scale.md): ``"local"`` starts a local
    instance (or joins the cluster ``RAY_ADDRESS`` names), any other string is the address of a cluster
    (``"auto"``, ``"ray://host:10001"``); questions are compressed and read in Ray tasks and judged by
    ``ray_judges`` Ray actors (default: one per GPU, else one per 4 CPUs), while this process alone
    scores, writes the records and the judge cache.  The outputs are the same bytes as without ``ray``.
    """
    from rageval.suite.lock import OutDirLock

    if ray is not None:
        from rageval.suite.scale import require_ray

        require_ray()  # a clear install hint before anything starts

    out = Path(out_dir if out_dir is not None else suite.output_dir)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"output directory {out} is a file; choose another --out (or output_dir)")
    with OutDirLock(out, f"rageval suite {suite.name}"):
        remove_stale_temps(out)  # a killed run's half-written outputs (we hold the lock: no write is in flight)
        return _run_suite(
            suite,
            out,
            allow_unavailable=allow_unavailable,
            progress=progress,
            build_report=build_report,
            on_record=on_record,
            retry_failed=retry_failed,
            ray=ray,
            ray_judges=ray_judges,
        )


def _run_suite(
    suite: Suite,
    out_dir: str | Path | None = None,
    *,
    allow_unavailable: bool = False,
    progress: bool = True,
    build_report: bool = True,
    on_record: Callable[[Record], None] | None = None,
    retry_failed: bool = True,
    ray: str | None = None,
    ray_judges: int | None = None,
) -> RunResult:
    """The run itself (see :func:`run_suite`).

    ``retry_failed``: compute cached records with a transient status (``reader_error``, ``judge_error``) again;
    False reuses them like every other cached record (docs/suites.md#statuses).
    """
    from rageval.text import get_tokenizer

    out = Path(out_dir if out_dir is not None else suite.output_dir)
    shash = suite_hash(suite)
    check_out_dir(out, suite)
    out.mkdir(parents=True, exist_ok=True)
    cache = RecordCache(out)
    cache.mark_suite(suite.name, shash)

    problem = tokenizer_problem(suite.tokenizer)  # configuration errors stop the run before any record
    if problem:
        raise SuiteError(f"{suite.source or suite.name}: invalid suite:\n  tokenizer: {problem}")
    tokenizer = get_tokenizer(suite.tokenizer)
    examples, retrieved = load_inputs(suite)
    diagnostics = select_diagnostics(suite, examples)
    problems = run_problems(suite, examples, diagnostics)
    if problems:
        raise SuiteError(f"{suite.source or suite.name}: invalid suite:\n" + "\n".join(problems))
    options = scoring_options(suite)
    session = None
    if ray is not None:
        from rageval.suite.scale import RaySession

        session = RaySession(ray, judge_actors=ray_judges)
    try:
        result = _run_planned(
            suite,
            out,
            shash,
            cache,
            tokenizer,
            examples,
            retrieved,
            diagnostics,
            options,
            session,
            allow_unavailable=allow_unavailable,
            progress=progress,
            on_record=on_record,
            retry_failed=retry_failed,
        )
    finally:
        if session is not None:
            session.close()  # before the report: Ray's threads and workers gone (the figures may fork)
    if build_report:
        result.report = write_report(out, suite.seed)
    return result


def _run_planned(
    suite: Suite,
    out: Path,
    shash: str,
    cache: RecordCache,
    tokenizer: Any,
    examples: list,
    retrieved: list,
    diagnostics: list[str],
    options: Any,
    session: Any,
    *,
    allow_unavailable: bool,
    progress: bool,
    on_record: Callable[[Record], None] | None,
    retry_failed: bool,
) -> RunResult:
    """Compute what the cache lacks (here, or on Ray through ``session``), then write the run's files but the
    report."""
    if session is None:
        judge = load_judge(suite, out / "cache" / "judge", tokenizer)
    else:  # the same runner and cache here; the backend's predict fans out to Ray actors
        judge = session.judge(suite, out / "cache" / "judge", tokenizer)
    reader = _make_reader(suite)
    opened: list[Any] = [judge, reader]  # closed however the run ends: the judge's sqlite, readers' connections
    try:
        settings = planned_settings(suite)
        bar = _progress(len(settings) * len(examples), progress)
        tally = CacheTally()
        computed = 0
        models: dict[str, Any] = {
            "judge": getattr(judge, "id", str(suite.judge.spec)),
            "reader": _reader_id(reader, suite),
        }
        expected: dict[tuple[str, str], str] = {}  # (setting, question) -> the input hash of this suite's record

        work = _plan_settings(  # a generator: setting by setting, as the batches are consumed
            suite,
            settings,
            examples,
            retrieved,
            reader,
            tokenizer,
            judge,
            diagnostics,
            options,
            models,
            expected,
            opened,
            cache,
            tally,
            bar,
            allow_unavailable=allow_unavailable,
            retry_failed=retry_failed,
        )
        batches = _local_batches(work) if session is None else session.batches(work, suite)
        for w, batch, records in batches:
            for item, rec in zip(batch, records):
                cache.write(w.planned.name, item.example.id, item.input_hash, rec)
                computed += 1
                tally.count(rec.status)
                if on_record is not None:
                    on_record(rec)
                bar.update(1)
        bar.close()

        # Final files, from the cache alone (identical whether or not the run was resumed).
        n = cache.assemble([s.name for s in settings], [e.id for e in examples], expected=expected)
        write_json_atomic(
            out / "manifest.json",
            _manifest(suite, shash, settings, examples, retrieved, diagnostics, models, reader),
            indent=2,
        )
        stats = {
            "records_reused": tally.reused,
            "records_computed": computed,
            "records_retried": tally.retried,
            "records_quarantined": len(cache.quarantined),
            "status_counts": tally.status_counts,
            "judge": judge.stats() if hasattr(judge, "stats") else {},
        }
        if session is not None:
            stats["ray"] = session.stats()
        write_json_atomic(out / "run_stats.json", stats, indent=2)
    finally:
        for part in opened:
            close = getattr(part, "close", None)
            if callable(close):
                close()
    return RunResult(
        out, n, tally.status_counts, tally.reused, computed, retried=tally.retried, quarantined=len(cache.quarantined)
    )
