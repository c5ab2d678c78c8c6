"""The one run loop: ``execute(plan, run_dir)`` — every command's records are computed here.

For a :class:`~rageval.run.plan.Plan` (built by a front-end) and a run directory:

1. hold the directory's lock; refuse a directory that holds the plan's inputs, a
   user's file of an output name or a link, and remove a killed run's temporary
   files (:func:`rageval.rundir.claim.claim`); refuse a directory that holds
   another run (:meth:`~rageval.rundir.manifest.RunDir.check_owner`);
2. build the parts (:mod:`rageval.run.parts`): the tokenizer, the judge (once,
   with its sqlite cache), the run's reader, each setting's compressor and own
   reader — on Ray with ``ray=`` (:mod:`rageval.run.scale`);
3. per setting, fill the part-dependent fields of its key
   (:data:`~rageval.run.plan.PART_KEYS`), announce the order of its records
   (:meth:`~rageval.run.plan.SettingPlan.record_questions`, taken as the file
   advances), then take its items one by one in their own order (a streamed
   plan's made as they are taken): hash each, reuse what the record cache holds
   (:mod:`rageval.run.cache`) and gather the rest into batches to compress, read
   and score (:mod:`rageval.run.execute`; the settings of a joint group in
   batches across them, one scoring call each: :attr:`~rageval.run.plan.SettingPlan.joint`),
   each batch's records written to the record
   cache (rows of the record store: :mod:`rageval.run.cache`) and streamed to ``records.jsonl`` in the run's order
   (:class:`~rageval.rundir.records.RecordsFile`: one JSON encoding per record, no
   record held once written, a resumed run's file the same bytes).  Nothing is
   held per item beyond the batch in flight, the rows waiting for the next part
   of the store (at most about a second's) and the records waiting for their
   turn (their texts up to a bound, then their input hashes), so memory does not
   grow with the run where a setting's items come in the run's question order;
4. write ``manifest.json`` (a :class:`~rageval.rundir.manifest.Manifest`) and
   ``run_stats.json``; close every part however the run ends.

The report is the front-end's: the engine imports nothing from ``rageval.suite``,
``score``, ``audit`` or ``report``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rageval.diagnostics.inputs import scoring_options
from rageval.errors import ModelUnavailable
from rageval.progress import progress
from rageval.run.cache import CacheTally, RecordCache
from rageval.run.execute import Stage, run_batch, run_joint
from rageval.run.parts import Parts, load_judge, make_compressor, make_reader, package_versions, reader_id
from rageval.run.plan import PART_KEYS, CompressRead, Item, Plan, SettingPlan, record_hash, settings_json, sha
from rageval.run.scale import RaySession, require_ray
from rageval.rundir.claim import claim
from rageval.rundir.manifest import Manifest, RunDir
from rageval.rundir.records import RecordsFile
from rageval.text import get_tokenizer
from rageval.text.segment import punkt_notes
from rageval.types import Record

log = logging.getLogger("rageval")

__all__ = ["RunResult", "SettingWork", "execute"]


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
    models: dict[str, Any] = field(default_factory=dict)  # the ids of the parts, as the manifest records them
    #: setting -> counts of its records over their budget (:attr:`~rageval.run.cache.CacheTally.over_budget`)
    over_budget: dict[str, dict[str, int]] = field(default_factory=dict)
    judge_stats: dict[str, Any] = field(default_factory=dict)  # the judge runner's counters (run_stats.json's)
    #: setting -> its answers cut at the reader's token limit (:attr:`~rageval.run.cache.CacheTally.truncated`)
    truncated: dict[str, int] = field(default_factory=dict)
    #: setting -> its contexts over the context limit and prompts too long for the reader
    #: (:attr:`~rageval.run.cache.CacheTally.context_failures`)
    context_failures: dict[str, dict[str, int]] = field(default_factory=dict)


@dataclass
class SettingWork:
    """One setting's records still to compute: its plan, its pending (hashed) items as they come, the batch size,
    the stage."""

    planned: SettingPlan
    pending: Iterable[Item]
    batch_size: int
    stage: Stage
    first_batch: int | None = None
    tokenizer_spec: str = "regex"
    run_hash: str = ""

    def batches(self) -> Iterator[list[Item]]:
        """The pending items in batches of ``batch_size`` (the first of ``first_batch``), in order."""
        n = self.batch_size
        size = min(self.first_batch, n) if self.first_batch else n
        batch: list[Item] = []
        for item in self.pending:
            batch.append(item)
            if len(batch) >= size:
                yield batch
                batch, size = [], n
        if batch:
            yield batch


def _local_batches(work: Iterable[SettingWork]) -> Iterator[tuple[SettingWork, list[Item], list[Record]]]:
    """The single-process path: each batch compressed, read and scored here, in order (a joint group's batches
    across its settings: :attr:`~rageval.run.plan.SettingPlan.joint`)."""
    for group in _joint_groups(work):
        if len(group) == 1:
            w = group[0]
            for batch in w.batches():
                yield w, batch, run_batch(batch, w.stage)
            continue
        for parts in _joint_batches(group):
            records = run_joint([(batch, w.stage) for w, batch in parts])
            for (w, batch), recs in zip(parts, records):
                yield w, batch, recs


def _joint_groups(work: Iterable[SettingWork]) -> Iterator[list[SettingWork]]:
    """The settings one by one, those next to each other with the same ``joint`` label together; a setting
    without one is handed on at once (the next setting's parts are not built before its batches run)."""
    group: list[SettingWork] = []
    for w in work:
        if group and w.planned.joint != group[0].planned.joint:
            yield group
            group = []
        if w.planned.joint is None:
            yield [w]
            continue
        group.append(w)
    if group:
        yield group


def _joint_batches(group: list[SettingWork]) -> Iterator[list[tuple[SettingWork, list[Item]]]]:
    """A joint group's pending items in batches of its first setting's ``batch_size``, across its settings, in
    order: each batch as its settings' parts."""
    size = group[0].batch_size
    diagnostics = group[0].planned.diagnostics
    parts: list[tuple[SettingWork, list[Item]]] = []
    n = 0
    for w in group:
        if w.planned.diagnostics != diagnostics:
            raise ValueError(f"joint settings {group[0].planned.name!r} and {w.planned.name!r} differ in diagnostics")
        for item in w.pending:
            if not parts or parts[-1][0] is not w:
                parts.append((w, []))
            parts[-1][1].append(item)
            n += 1
            if n >= size:
                yield parts
                parts, n = [], 0
    if parts:
        yield parts


def item_hash(key: Mapping[str, Any], item: Item) -> str:
    """The input hash of an item: of its example and retrieval, or of the saved record it rescores."""
    if item.saved is not None:
        r = item.saved
        return sha(
            {
                **key,
                "record": r.input_hash,
                "question": r.question_id,
                "status": r.status,
                "answer": r.answer.text if r.answer is not None else None,
                "context": r.context.to_dict() if r.context is not None else None,
            }
        )[:32]
    return record_hash(key, item.example, item.retrieved)


#: the pairs a run's judge keeps in memory (:meth:`~rageval.judges.base.JudgeRunner.bound_memory`): a batch of 256
#: records asks some 3,000 distinct pairs, and a pair comes back within its batch, not across the run
JUDGE_MEMO_PAIRS = 1 << 15


def execute(
    plan: Plan,
    run_dir: str | Path | RunDir,
    *,
    allow_unavailable: bool = False,
    progress_bar: bool = True,
    on_record: Callable[[Record], None] | None = None,
    retry_failed: bool = True,
    ray: str | None = None,
    ray_judges: int | None = None,
) -> RunResult:
    """Run (or resume) ``plan`` into ``run_dir`` (see the module doc); returns the counts.

    ``retry_failed``: compute cached records with a transient status (``reader_error``, ``judge_error``) again.
    ``ray``: scale out on Ray (``"local"`` or a cluster address; :mod:`rageval.run.scale`); the outputs are the
    same bytes.
    """
    rundir = run_dir if isinstance(run_dir, RunDir) else RunDir(run_dir)
    out = rundir.path
    if ray is not None:
        require_ray()  # a clear install hint before anything starts
    with rundir.lock(f"rageval {plan.origin.kind} {plan.origin.name}"):  # refuses a file path
        claim(out, plan.inputs)  # and a killed run's temporary files removed (no write is in flight: we hold the lock)
        rundir.check_owner(plan.origin.name)
        out.mkdir(parents=True, exist_ok=True)
        cache = RecordCache(out, durable=plan.durable)
        cache.mark_suite(plan.origin.name, plan.origin.hash)
        session = None
        if ray is not None:
            session = RaySession(ray, judge_actors=ray_judges)
        try:
            return _execute(plan, rundir, cache, session, allow_unavailable, progress_bar, on_record, retry_failed)
        finally:
            if session is not None:
                session.close()  # before the report: Ray's threads and workers gone (the figures may fork)


def _resolve_key(key: Mapping[str, Any], compressor: Any, reader: Any, judge: Any) -> dict[str, Any]:
    out = dict(key)
    parts = {
        "compressor": getattr(compressor, "config", None) if compressor is not None else None,
        "reader_id": reader,
        "judge_id": getattr(judge, "id", None) if judge is not None else None,
    }
    for k in PART_KEYS:
        if k in out:
            out[k] = parts[k]
    return out


class _Execution:
    """One execution of a plan: the parts it built, the counters it keeps, the hashes it expects."""

    def __init__(self, plan: Plan, rundir: RunDir, cache: RecordCache, session: Any, parts: Parts, **how: Any):
        self.plan, self.rundir, self.cache, self.session, self.parts = plan, rundir, cache, session, parts
        self.allow_unavailable: bool = how["allow_unavailable"]
        self.retry_failed: bool = how["retry_failed"]
        self.tokenizer = get_tokenizer(plan.scoring.tokenizer)
        self.options = scoring_options(plan.scoring)
        self.tally = CacheTally()
        self.judge = self._judge() if plan.judge_needed else None
        self.models: dict[str, Any] = {
            "judge": getattr(self.judge, "id", None) if self.judge is not None else plan.scoring.judge.spec
        }
        self.reader = None
        if plan.reader is not None:
            self.reader = parts.add(make_reader(plan.reader, plan.scoring.tokenizer))
            self.models["reader"] = reader_id(self.reader, plan.reader)

    def _judge(self) -> Any:
        cache_dir = self.plan.judge_cache or self.rundir.judge_cache
        if self.session is None:
            judge = self.parts.add(load_judge(self.plan.scoring.judge, cache_dir, self.tokenizer))
        else:  # the same runner and cache here; the backend's predict fans out to Ray actors
            judge = self.parts.add(self.session.judge(self.plan.scoring.judge, cache_dir, self.tokenizer))
        bound = getattr(judge, "bound_memory", None)
        if callable(bound):
            bound(JUDGE_MEMO_PAIRS)  # memory that does not grow with the run
        return judge

    def _compressor(self, sp: SettingPlan) -> tuple[Any, str | None]:
        src = sp.source
        if not isinstance(src, CompressRead):
            return None, None
        try:
            compressor = make_compressor(src.compressor, src.params)
            weights = getattr(compressor, "weights", None)  # a GGUF file's hash: computed here, once per process
        except ModelUnavailable as err:
            if not self.allow_unavailable:
                raise
            return None, str(err)
        model = getattr(compressor, "model_id", None) or src.compressor
        self.models[f"compressor:{sp.name}"] = model if weights is None else {"model": model, "weights": weights}
        return compressor, None

    def _reader(self, sp: SettingPlan) -> tuple[Any, Any]:
        """The reader of a setting (None: its items bring their answers) and its id in the record key."""
        spec = getattr(sp.source, "reader", None)
        if spec is None:
            return None, None
        if not getattr(sp.source, "own_reader", False):
            return self.reader, self.models.get("reader")
        reader = self.parts.add(make_reader(spec, self.plan.scoring.tokenizer))
        self.models[f"reader:{sp.name}"] = reader_id(reader, spec)
        return reader, self.models[f"reader:{sp.name}"]

    def pending(self, sp: SettingPlan, key: Mapping[str, Any], bar: Any, out: RecordsFile) -> Iterator[Item]:
        """The setting's items to compute, hashed, in their order, as they are taken: a reused one handed to ``out``
        at once (counted, the bar advanced) instead."""
        for item in sp.items:
            item = replace(item, input_hash=item_hash(key, item))
            qid = item.question_id
            text = self.tally.reuse(self.cache, sp.name, qid, item.input_hash, retry_failed=self.retry_failed)
            if text is None:
                yield item
                continue
            out.put(sp.name, qid, text, item.input_hash)
            bar.update(1)

    def work(self, bar: Any, out: RecordsFile) -> Iterator[SettingWork]:
        """Setting by setting: build its parts, announce its records' order to ``out`` and yield a
        :class:`SettingWork` whose pending items are hashed, and reused where the cache holds them
        (:meth:`pending`), as its batches are taken."""
        plan = self.plan
        for sp in plan.settings:
            reader, rid = self._reader(sp)
            compressor, comp_error = self._compressor(sp)
            key = _resolve_key(sp.key, compressor, rid, self.judge)
            stage = Stage(
                sp.setting,
                compressor,
                comp_error,
                reader,
                self.tokenizer,
                self.judge,
                sp.diagnostics,
                self.options,
                self.allow_unavailable,
                evidence_text=sp.evidence_text,
                fixed_recovery=bool(getattr(sp.source, "fixed_recovery", False)),
                context_limit=sp.context_limit,
            )
            spec = getattr(sp.source, "reader", None)
            size = sp.batch_size or (spec.batch_size if spec is not None else 256)
            size = max(size, getattr(reader, "min_batch", 1))  # keep a concurrent reader busy
            out.expect(sp.name, ((q, None) for q in sp.record_questions(plan.question_order)))  # taken as written
            pending = self.pending(sp, key, bar, out)
            yield SettingWork(sp, pending, size, stage, plan.first_batch, plan.scoring.tokenizer, plan.origin.hash)


def _execute(
    plan: Plan,
    rundir: RunDir,
    cache: RecordCache,
    session: Any,
    allow_unavailable: bool,
    progress_bar: bool,
    on_record: Callable[[Record], None] | None,
    retry_failed: bool,
) -> RunResult:
    with Parts() as parts:
        run = _Execution(
            plan, rundir, cache, session, parts, allow_unavailable=allow_unavailable, retry_failed=retry_failed
        )
        bar = progress(plan.n_items(), progress_bar)
        computed = 0
        complete = False
        try:
            # records.jsonl replaced only when every record is in it; the store told each line's record, its order
            with RecordsFile.open(cache, on_line=cache.written, write=plan.records_file) as out:
                work = run.work(bar, out)  # a generator: setting by setting, as the batches are consumed
                batches = _local_batches(work) if session is None else session.batches(work)
                for w, batch, records in batches:
                    for item, rec in zip(batch, records):
                        name = w.planned.name
                        out.put(
                            name,
                            rec.question_id,
                            cache.write(name, rec.question_id, item.input_hash, rec),
                            item.input_hash,
                        )
                        computed += 1
                        run.tally.count(rec)
                        if on_record is not None:
                            on_record(rec)
                        bar.update(1)
                    cache.batch_done()  # a part of the store (at most about once a second: rageval.run.cache)
                bar.close()
            complete = True
        finally:
            cache.close(complete=complete)
        n = out.count
        if not plan.records_file and rundir.records_path.exists():  # the store's fold holds the run now
            rundir.records_path.unlink()  # an older file would stand for it
            log.warning(
                "rageval: note: removed %s (--no-records-file: the record store holds the run's records; "
                "'rageval export %s --out FILE' writes the file)",
                rundir.records_path,
                rundir.path,
            )
        rundir.write_manifest(_manifest(plan, run.models, context_note(plan, run.tally.context_failures)))
        judge = run.judge
        stats = {
            "records_reused": run.tally.reused,
            "records_computed": computed,
            "records_retried": run.tally.retried,
            "records_quarantined": len(cache.quarantined),
            "status_counts": run.tally.status_counts,
            "over_budget": run.tally.over_budget,
            "judge": judge.stats() if judge is not None and hasattr(judge, "stats") else {},
        }
        if run.tally.truncated:  # answers cut at the reader's token limit, per setting (only when there are any)
            stats["truncated"] = run.tally.truncated
        if run.tally.context_failures:  # contexts over the limit, prompts too long (only when there are any)
            limits = {s.name: s.context_limit for s in plan.settings if s.context_limit is not None}
            stats["context_limit"] = {
                "limit": next(iter(limits.values())) if len(set(limits.values())) == 1 else (limits or None),
                "failures": run.tally.context_failures,
            }
        if session is not None:
            stats["ray"] = session.stats()
        rundir.write_stats(stats)
    tally = run.tally
    return RunResult(
        rundir.path,
        n,
        tally.status_counts,
        tally.reused,
        computed,
        retried=tally.retried,
        quarantined=len(cache.quarantined),
        models=dict(run.models),
        over_budget=tally.over_budget,
        judge_stats=dict(stats["judge"]),
        truncated=tally.truncated,
        context_failures=tally.context_failures,
    )


def context_note(plan: Plan, failures: Mapping[str, Mapping[str, int]]) -> list[str]:
    """The manifest's note (the summary's "Notes on the inputs") on the records that failed for their context's
    length: over the context limit (``budget_check``) or too long for the reader (``prompt_overflow``), per
    setting; none when no record did."""
    if not failures:
        return []
    limits = sorted({s.context_limit for s in plan.settings if s.context_limit is not None})
    per = "; ".join(
        f"{name}: " + ", ".join(f"{n} {status}" for status, n in c.items() if n) for name, c in failures.items()
    )
    n = sum(sum(c.values()) for c in failures.values())
    limit = f"the context limit of {', '.join(map(str, limits))} tokens" if limits else "no context limit"
    note = (
        f"context length: {n} record(s) failed for their context's length ({per}): budget_check when the context "
        f"is over {limit}, prompt_overflow when the reader refused the prompt; their questions are left out of "
        "the common cohort (docs/suites.md#context-limit)"
    )
    return [note]


def _manifest(plan: Plan, models: Mapping[str, Any], notes: Sequence[str] = ()) -> Manifest:
    o = plan.origin
    summary = dict(plan.summary)
    scoring = plan.scoring.to_json()
    # per setting only where it differs from the run's: its diagnostics, and its reader's template when not default
    scoring["diagnostics"] = {s.name: list(s.diagnostics) for s in plan.settings if s.diagnostics != plan.diagnostics}
    scoring["templates"] = {s.name: t for s in plan.settings if (t := _template_of(s)) is not None}
    origin: dict[str, Any] = {"kind": o.kind, "name": o.name, "hash": o.hash, "source": o.source}
    origin.update(summary.pop("origin", {}) or {})
    data = {
        "origin": origin,
        "suite": {
            "name": o.name,
            "hash": o.hash,
            "dataset": summary.pop("dataset", None),
            "seed": plan.seed,
            "contrasts": plan.contrasts,
            "settings": settings_json(plan.settings),
            "cluster_key": plan.cluster_key,
            "diagnostics": list(plan.diagnostics),
            "config": dict(o.config),
        },
        "scoring": scoring,
        "package": package_versions(),
        "models": {**(summary.pop("models", None) or {}), **models},
        "inputs": summary.pop("inputs", {}),
        "notes": [*plan.notes, *notes, *punkt_notes()],  # punkt: ALCE-mode sentences from substitute parameters
        **summary,  # the front-end's own sections (score, offline_defaults, rescore)
    }
    return Manifest.model_validate(data)


def _template_of(sp: SettingPlan) -> Any:
    spec = getattr(sp.source, "reader", None)
    return getattr(spec, "template", None) if spec is not None else None
