"""The second-evaluator audit of a run: rescore a seeded subsample's saved answers with a second judge.

Two modes, as the attribution–compression paper defines them:

* **fixed mappings** (``fixed``): the first judge's recovered source ids are kept
  (``extra.attribution.recovery`` of each record) and only support is judged again,
  so every (premise, sentence) pair is the same under both judges;
* **re-recovery** (``rerecover``): the second judge also re-attributes the units
  without declared provenance.

The first judge's values are the run's own (record metrics and per-sentence gate
decisions): no model is loaded for them.  The second judge scores through the one
engine (:func:`rageval.run.engine.execute`): the audit plans, per mode, one
:class:`~rageval.run.plan.Saved` setting per audited setting (``<mode>:<setting>``;
fixed mappings: ``Saved(fixed_recovery=True)``), the settings of a mode scored
together in one batch (:attr:`~rageval.run.plan.SettingPlan.joint`), with the
second judge as the plan's judge; its records are written to
``RUN_DIR/audit-<judge>/scored/`` (a run directory of its own, so a rerun
reuses them) and its calls cached in ``RUN_DIR/audit-<judge>/cache``, so a rerun
makes no new calls.  Everything is written into ``RUN_DIR/audit-<judge>/``; the
run's records are only read.

Figures (docs/statistics.md#second-evaluator-audit): emitted and grounded precision
and recall under each evaluator, both ways (a judge abstention scored as not
supported, as the paper scored its non-binary generations, and left out); the
paired emitted − grounded gaps under each with 95% bootstrap intervals; the
cross-judge differences (second − first) with intervals and Holm-adjusted sign-flip
p-values; the per-pair agreement rate and Cohen's kappa of the two judges'
decisions; and each judge's abstentions.

This module runs an audit (:func:`run_audit`): it checks the request, loads the run, plans the
second judge's scoring of the sample and has the engine run it; :mod:`rageval.audit.sample` picks the
settings, questions and records, :mod:`rageval.audit.tables` computes the tables and
:mod:`rageval.audit.write` writes them.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rageval import __version__
from rageval.audit.sample import (
    SCORES,
    AuditError,
    AuditItem,
    build_items,
    ok_cohort,
    select_sample,
    select_settings,
)
from rageval.audit.tables import (
    MODE_LABELS,
    abstentions_table,
    agreement_table,
    cross_judge_family,
    cross_judge_table,
    gaps_holm_summary,
    gaps_table,
    holm_planned_gaps,
    planned_gap_count,
    scores_table,
)
from rageval.audit.write import write_audit
from rageval.diagnostics import CATALOG
from rageval.diagnostics.attribution.options import AttributionOptions
from rageval.diagnostics.inputs import scoring_options
from rageval.errors import ModelUnavailable
from rageval.judges.checks import params_problems
from rageval.judges.spec import JudgeSpec, spec_slug
from rageval.readers import PromptTemplate
from rageval.report.contrast_tables import ALPHA
from rageval.report.load import RunError, load_run
from rageval.run.plan import Item, Origin, Plan, Saved, SettingPlan, sha
from rageval.rundir.claim import claim
from rageval.rundir.manifest import Manifest, RunDir, RunDirError
from rageval.stats.resolution import AUTO, parse_resamples, replicates_for, resolution
from rageval.types import Record

__all__ = ["AuditError", "AuditRequest", "run_audit", "audit_runs", "audit_dir", "plan_audit", "MODES", "DIAGNOSTICS"]

MODES = ("fixed", "rerecover")


def audit_dir(run_dir: str | Path, judge: str) -> Path:
    """``RUN_DIR/audit-<judge>`` (:func:`~rageval.judges.spec.spec_slug`: two judges never share a folder)."""
    return Path(run_dir) / f"audit-{spec_slug(judge)}"


# ---------------------------------------------------------------- the second judge

#: what the second judge scores: the citation scores, emitted and grounded (the engine's parts of both)
DIAGNOSTICS = ("emitted_precision", "emitted_recall", "grounded_precision", "grounded_recall")


def _second(rec: Record) -> dict[str, Any]:
    """The second judge's values of one audited record: its scores, abstentions and per-sentence details."""
    metrics = rec.metrics or {}
    details = (rec.extra or {}).get("attribution") or {}
    out = {k: metrics.get(k) for m in SCORES for k in (m, f"{m}_excl_abstain")}
    out["judge_abstentions"] = metrics.get("judge_abstentions")
    out["sentences"] = details.get("sentences") or []
    out["recovery"] = details.get("recovery") or {}
    return out


def _mode_setting(mode: str, name: str) -> str:
    return f"{mode}:{name}"


def plan_audit(scope: _Scope, items: Sequence[AuditItem], audited: Sequence[str], scoring: Any) -> Plan:
    """The :class:`~rageval.run.plan.Plan` of the second judge's scoring: per mode (fixed mappings first), one
    Saved setting ``<mode>:<setting>`` per audited setting, its items the audited records in sample order; the
    settings of a mode are scored together, in one batch (one judge call sees the whole sample)."""
    manifest = scope.manifest
    judge = scoring.judge.model_dump(mode="json")
    settings = []
    for mode in scope.modes:
        for name in audited:
            mine = [it for it in items if it.key[1] == name]
            if not mine:
                continue
            setting = replace(mine[0].saved.setting, name=_mode_setting(mode, name))
            key = {
                "rageval": __version__,
                "kind": "audit",
                "mode": mode,
                "scoring": scoring.to_json(),
                "judge": judge,
                "judge_id": None,
                "diagnostics": {d: CATALOG[d].version for d in DIAGNOSTICS},
                # fixed mappings: the first judge's recovered ids, which the saved record's hash does not cover
                "first": sha([[it.key[0], (it.record.get("extra") or {}).get("attribution")] for it in mine])
                if mode == "fixed"
                else None,
            }
            settings.append(
                SettingPlan(
                    setting,
                    Saved(fixed_recovery=mode == "fixed"),
                    DIAGNOSTICS,
                    key,
                    tuple(Item(None, None, saved=replace(it.saved, setting=setting)) for it in mine),
                    evidence_text=PromptTemplate.coerce(manifest.template_of(name)).evidence_text,
                    batch_size=max(1, len(items)),
                    joint=mode,
                )
            )
    of_run = str(scope.run_dir.resolve())
    config = {
        "judge": scope.judge,
        "params": dict(scope.judge_options),
        "threshold": scoring.judge.threshold,
        "modes": list(scope.modes),
        "n": scope.n,
        "seed": scope.seed,
        "settings": list(audited),
    }
    questions = list(dict.fromkeys(it.key[0] for it in items))
    return Plan(
        origin=Origin("audit", manifest.suite.name, sha([manifest.suite.hash, config])[:16], config, source=of_run),
        settings=tuple(settings),
        question_order=tuple(questions),
        scoring=scoring,
        diagnostics=DIAGNOSTICS,
        seed=scope.seed,
        summary={
            "dataset": manifest.suite.dataset,
            "origin": {"of_run": of_run},
            **({"accepted_edits": scope.run.accepted_edits} if scope.run.accepted_edits is not None else {}),
        },
        judge_cache=scope.out / "cache",
        records_file=RunDir(scope.run_dir).records_path.exists(),  # as the run: without it, the store alone
    )


def _score_second(scope: _Scope, items: Sequence[AuditItem], audited: Sequence[str], scoring: Any) -> Any:
    """Have the engine score the sample with the second judge (into ``audit-<judge>/scored/``) and give each item
    its second judge's values per mode; returns the engine's result."""
    from rageval.run.engine import execute

    scored = RunDir(scope.out / "scored")
    fresh = not scope.out.exists()
    try:
        result = execute(plan_audit(scope, items, audited, scoring), scored, progress_bar=False)
    except ModelUnavailable:
        if fresh:  # the second judge cannot be loaded: no audit folder of this call is left behind
            shutil.rmtree(scope.out, ignore_errors=True)
        raise
    records = {(r.setting.name, r.question_id): r for r in scored.records()}
    for it in items:
        q, name = it.key
        for mode in scope.modes:
            it.second[mode] = _second(records[(_mode_setting(mode, name), q)])
    return result


# ---------------------------------------------------------------- the audit


def _load(run_dir: Path, accept_edits: bool = False):
    """The run's records (as the report reads them: each checked, an edited one refused unless ``accept_edits``)
    and its typed manifest, whatever command wrote the run."""
    try:
        manifest = RunDir(run_dir).read_manifest()
        run = load_run(run_dir, accept_edits=accept_edits, command="rageval audit")
    except (RunError, RunDirError) as err:
        raise AuditError(str(err)) from None
    return run, manifest


def _options(manifest: Manifest, threshold: float | None) -> AttributionOptions:
    """The run's attribution options (from its manifest's scoring options), with the second judge's threshold."""
    try:
        opts = scoring_options(manifest.scoring_spec()).attribution
    except ValueError as err:
        raise AuditError(f"manifest.json: scoring options: {' '.join(str(err).split())}; rescore the run") from None
    if threshold is not None:
        opts = opts.model_copy(update={"threshold": threshold})
    return opts


def _check_alignment(items: Sequence[AuditItem], modes: Sequence[str]) -> None:
    for it in items:
        for mode in modes:
            n1, n2 = len(it.first["sentences"]), len(it.second[mode]["sentences"])
            if n1 != n2:
                q, s = it.key
                raise AuditError(
                    f"record ({q}, {s}): its saved answer parses into {n2} sentences now but {n1} in the run; "
                    "rescore the run first (rageval rescore RUN_DIR) so both judges see the same sentences"
                )


@dataclass(frozen=True)
class AuditRequest:
    """One run's audit: the run, the second judge and its options, the subsample (see :func:`run_audit`)."""

    run_dir: Path
    judge: str
    n: int = 100
    settings: Sequence[str] | None = None
    modes: Sequence[str] = MODES
    seed: int | None = None
    threshold: float | None = None
    judge_options: Mapping[str, Any] | None = None
    accept_edits: bool = False


def run_audit(
    run_dir: str | Path,
    judge: str,
    *,
    n: int = 100,
    settings: Sequence[str] | None = None,
    modes: Sequence[str] = MODES,
    seed: int | None = None,
    threshold: float | None = None,
    n_resamples: int | str | None = None,
    judge_options: Mapping[str, Any] | None = None,
    accept_edits: bool = False,
) -> dict[str, Any]:
    """Audit ``run_dir`` (a suite's or a score run) with the second judge ``judge`` (see the module doc); write and
    return the figures.  The run directory's lock is held throughout.  ``n_resamples``: ``"auto"``, ``"paper"``
    or a count (default: the suite's ``statistics.resamples``, else ``auto``; docs/statistics.md#resolution).
    ``judge_options``: the second judge's options (``max_length``, ``batch_size``, ..., its own parameters), as a
    suite's ``judge.params``.  ``accept_edits``: records edited after rageval wrote them are read (not refused),
    and listed in ``audit.json`` and the scored run's manifest (``accepted_edits``)."""
    req = AuditRequest(Path(run_dir), judge, n, settings, tuple(modes), seed, threshold, judge_options, accept_edits)
    return audit_runs([req], n_resamples=n_resamples)[0]


def audit_runs(requests: Sequence[AuditRequest], *, n_resamples: int | str | None = None) -> list[dict[str, Any]]:
    """Audit several runs and adjust their planned gaps (the second judge's emitted - grounded precision gaps per
    audited setting and mode; the recall gaps reported beside them) with Holm over the **union** of the runs, one family per abstention rule, as the
    paper adjusted both datasets together (docs/statistics.md#second-evaluator-audit).  Each run's lock is held
    throughout; each run's files are written once every run is scored."""
    if not requests:
        raise AuditError("no run to audit")
    with contextlib.ExitStack() as stack:
        for req in requests:
            stack.enter_context(RunDir(req.run_dir).lock("rageval audit"))
        scored = [_score_run(req, n_resamples) for req in requests]
        m_gaps = sum(planned_gap_count(sc.audited, sc.scope.modes) for sc in scored)
        results = [_tables(sc, m_gaps) for sc in scored]
        runs = [str(sc.scope.run_dir) for sc in scored]
        holm_planned_gaps([r["gaps"] for r in results], [r["settings"] for r in results], runs)
        for sc, result in zip(scored, results):
            result["gaps_holm"] = gaps_holm_summary(result["gaps"], runs)
            files = write_audit(sc.scope.out, result, sc.items, sc.scope.modes)
            result["files"] = {k: str(v) for k, v in files.items()}
        return results


@dataclass(frozen=True)
class _Scope:
    """What one audit was asked: the run, the second judge, the subsample's size and seed, the output folder."""

    run: Any
    manifest: Any
    run_dir: Path
    judge: str
    n: int
    modes: tuple[str, ...]
    seed: int
    options: Any
    n_resamples: int | str
    out: Path
    judge_options: Mapping[str, Any]


@dataclass
class _Scored:
    """One run's audit once the second judge scored its sample (the tables are computed from it)."""

    scope: _Scope
    items: list[AuditItem]
    audited: list[str]
    left_out: list[str]
    cohort: list[str]
    sample: list[str]
    runner_id: Any
    runner_stats: dict[str, Any]


def _score_run(req: AuditRequest, n_resamples) -> _Scored:
    run_dir, judge, n, modes = req.run_dir, req.judge, req.n, tuple(req.modes)
    if n < 1:
        raise AuditError(f"the audit needs at least one question, got n={n}")
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise AuditError(f"audit modes must be among {', '.join(MODES)}, got {list(modes)}")
    run, manifest = _load(
        run_dir, req.accept_edits
    )  # under the lock; read first, so a broken manifest is named as such
    claim(run_dir)  # before any write: no link in audit-<judge>/, a killed audit's temporary files removed
    options = _options(manifest, req.threshold)
    first = manifest.scoring.judge
    if judge == first.spec:
        raise AuditError(f"judge {judge!r} is the run's own judge: the audit needs a second evaluator")
    judge_options = _judge_options(judge, req.judge_options)
    seed = manifest.suite.seed if req.seed is None else req.seed
    stats = (manifest.suite.config or {}).get("statistics") or {}
    resamples = parse_resamples(n_resamples if n_resamples is not None else stats.get("resamples", AUTO))
    audited, left_out = select_settings(run, req.settings)
    if not audited:
        raise AuditError(
            f"none of the audited settings ran ({', '.join(left_out)}: no ok record): audit settings that ran"
        )
    cohort = ok_cohort(run, audited)
    if not cohort:
        raise AuditError(
            f"no question is ok in every audited setting ({', '.join(audited)}): restrict the audit with "
            "--settings to settings that ran"
        )
    sample = select_sample(cohort, n, seed)
    out = audit_dir(run_dir, judge)  # created by the engine once it runs, never before
    second = JudgeSpec(spec=judge, threshold=options.threshold, params=judge_options)
    scoring = manifest.scoring_spec(second)
    scope = _Scope(run, manifest, run_dir, judge, n, modes, seed, options, resamples, out, judge_options)
    items = build_items(run, audited, sample)
    result = _score_second(scope, items, audited, scoring)
    runner_id = result.models.get("judge")
    first_id = (run.manifest.get("models") or {}).get("judge")
    if first_id is not None and runner_id == first_id:
        raise AuditError(f"judge {judge!r} is the run's own judge ({first_id}): the audit needs a second evaluator")
    _check_alignment(items, modes)
    return _Scored(scope, items, audited, left_out, cohort, sample, runner_id, result.judge_stats)


def _judge_options(judge: str, given: Mapping[str, Any] | None) -> dict[str, Any]:
    """The second judge's options, checked as a suite's ``judge.params`` are (one line per bad option)."""
    params = dict(given or {})
    problems = params_problems(judge, params, "judge")
    if problems:
        raise AuditError("the second judge's options: " + "; ".join(p.strip() for p in problems))
    return params


def _tables(sc: _Scored, m_gaps: int) -> dict[str, Any]:
    scope, items, audited = sc.scope, sc.items, sc.audited
    run, manifest, judge, modes, seed = scope.run, scope.manifest, scope.judge, scope.modes, scope.seed
    first = manifest.scoring.judge
    first_id = (run.manifest.get("models") or {}).get("judge")
    clusters_of = _question_clusters(run)
    m = cross_judge_family(items, audited, modes)  # the Holm family that sizes the test under auto
    reps = replicates_for(scope.n_resamples, m, ALPHA)
    gap_reps = replicates_for(scope.n_resamples, m_gaps, ALPHA)
    return {
        "run": str(scope.run_dir),
        "suite": manifest.suite.name,
        "origin": manifest.origin.kind,
        "first_judge": {"spec": first.spec, "id": first_id, "threshold": first.threshold},
        "second_judge": {
            "spec": judge,
            "id": sc.runner_id,
            "threshold": scope.options.threshold,
            "params": dict(scope.judge_options),
        },
        "modes": [MODE_LABELS[m] for m in modes],
        "settings": audited,
        "settings_left_out": sc.left_out,
        "seed": seed,
        "n_requested": scope.n,
        "n_cohort": len(sc.cohort),
        "questions": sc.sample,
        "n_records": len(items),
        "n_resamples": reps.bootstrap,
        "n_test_resamples": reps.test,
        "n_gap_test_resamples": gap_reps.test,
        "resolution": resolution(m, reps, alpha=ALPHA),
        "gaps_resolution": resolution(m_gaps, gap_reps, alpha=ALPHA),
        "scores": scores_table(items, audited, modes),
        "gaps": gaps_table(items, audited, modes, clusters_of, seed, gap_reps),
        "cross_judge": cross_judge_table(items, audited, modes, clusters_of, seed, reps),
        "agreement": agreement_table(items, audited, modes),
        "abstentions": abstentions_table(items, audited, modes),
        "second_judge_stats": {k: v for k, v in sc.runner_stats.items() if isinstance(v, (int, float))},
        **({"accepted_edits": run.accepted_edits} if run.accepted_edits is not None else {}),
    }


def _clusters_of(run):
    key = (run.suite or {}).get("cluster_key")
    if not key:
        return lambda its: None
    ids = {}
    for r in run.records:
        c = (r.get("extra") or {}).get(key)
        if c is not None:
            ids[r["question_id"]] = c

    def of(its):
        cl = [ids.get(it.key[0]) for it in its]
        return None if any(c is None for c in cl) else cl

    return of


def _question_clusters(run):
    """Clusters for the paired tests of a group of audited records: the run's cluster key (QASPER papers), else
    the question itself when a question appears more than once (the pooled group: its settings stay together)."""
    by_key = _clusters_of(run)

    def of(its):
        cl = by_key(its)
        if cl is not None:
            return cl
        qs = [it.key[0] for it in its]
        return qs if len(set(qs)) < len(qs) else None

    return of
