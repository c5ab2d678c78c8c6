"""``rageval rescore``: recompute every metric of a run from its saved records, into a folder of its own.

Any run directory — written by ``rageval suite`` or ``rageval score``, by this
rageval or by 0.1.0 (:mod:`rageval.run.rundir` migrates its manifest) — is
rescored from its manifest's scoring options (``scoring``: the judge, citation
rules, attribution options, tokenizer, each setting's diagnostics and prompt
template), optionally with another judge.

The front-end plans, the one engine runs: each saved record becomes an item of
a :class:`~rageval.run.plan.Saved` setting (its context and answer scored again
by :func:`rageval.diagnostics.dispatch.score`, the suite's scoring path; a
failed record kept as it was), and :func:`rageval.run.engine.execute` writes
``RUN_DIR/rescore-<judge>/`` (:func:`rescore_dir_name`) as a run directory of its
own: ``records.jsonl`` (the run's records, in the run's order, with the new
metrics), ``manifest.json`` (origin ``rescore``, the run's settings and
contrasts, the new judge), ``run_stats.json``, its record cache and its report.
Nothing of the run is changed, so a later ``rageval suite`` on the run directory
can never write the old scores over the rescored ones.  Judge decisions are
cached with the run's (``RUN_DIR/cache/judge/``, keyed by judge id), so
rescoring twice makes no judge call.  The run directory's lock is held
throughout.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rageval import __version__
from rageval.diagnostics import CATALOG
from rageval.errors import ConfigError
from rageval.judges.spec import spec_slug
from rageval.report import build_report
from rageval.run.outputs import claim
from rageval.run.plan import Item, Origin, Plan, Saved, SettingPlan, sha
from rageval.run.rundir import Manifest, RunDir, RunDirError

__all__ = ["RescoreError", "RescoreResult", "rescore", "rescore_dir_name"]


class RescoreError(ConfigError):
    """A run directory that cannot be rescored (not a run, a broken manifest or record, an unusable judge)."""


@dataclass(frozen=True)
class RescoreResult:
    out_dir: Path
    n_records: int
    rescored: int
    judge: str
    judge_id: str


def rescore_dir_name(judge: str) -> str:
    """``rescore-<judge>`` (:func:`~rageval.judges.spec.spec_slug`).

    >>> rescore_dir_name("lexical"), rescore_dir_name("nli:/models/deberta")
    ('rescore-lexical', 'rescore-nli_models_deberta-02aa1f6d')
    """
    return f"rescore-{spec_slug(judge)}"


def rescore(run_dir: str | Path, *, judge: str | None = None) -> RescoreResult:
    """Rescore the ``ok`` records of ``run_dir`` (with ``judge``, default the run's) into ``RUN_DIR/rescore-<judge>/``."""
    from rageval.judges.checks import judge_problems
    from rageval.judges.spec import JudgeSpec
    from rageval.run.engine import execute

    rundir = RunDir(run_dir)
    if judge is not None and not judge.strip():
        raise RescoreError("--judge is empty: give a judge spec (e.g. 'lexical') or leave the option out")
    with rundir.lock("rageval rescore"):
        try:  # under the lock; read first, so a broken manifest is named as such
            manifest = rundir.read_manifest()
            records = rundir.records()
        except RunDirError as err:
            raise RescoreError(str(err)) from None
        claim(rundir.path)  # before any write: the judge cache and rescore-<judge>/ are written here, no link there
        new_judge = None
        if judge is not None:
            new_judge = JudgeSpec(spec=judge, threshold=manifest.scoring.judge.threshold, params={})
        scoring = manifest.scoring_spec(new_judge)
        problems = judge_problems(scoring.judge.spec, scoring.judge.params)
        if problems:
            raise RescoreError(f"--judge {scoring.judge.spec!r}: " + "; ".join(p.strip() for p in problems))
        plan = plan_rescore(rundir, manifest, records, scoring)
        out = RunDir(rundir.path / rescore_dir_name(scoring.judge.spec))
        result = execute(plan, out, progress_bar=False)

        build_report(out.path, seed=manifest.suite.seed)
    rescored = sum(r.status == "ok" for r in records)
    judge_id = str(result.models.get("judge", scoring.judge.spec))
    return RescoreResult(out.path, result.n_records, rescored, scoring.judge.spec, judge_id)


def _by_setting(rundir: RunDir, manifest: Manifest, records: list[Any]) -> dict[str, list[Any]]:
    """The records of each setting of the run, in the manifest's setting order (a record of another: an error)."""
    names = [s.name for s in manifest.suite.settings] or list(dict.fromkeys(r.setting.name for r in records))
    by_setting: dict[str, list[Any]] = {n: [] for n in names}
    for r in records:
        if r.setting.name not in by_setting:
            raise RescoreError(
                f"{rundir.records_path}: setting {r.setting.name!r} is not a setting of the run "
                f"({', '.join(names)}); rerun the command that wrote it"
            )
        by_setting[r.setting.name].append(r)
    return by_setting


def _saved_setting(manifest: Manifest, name: str, recs: list[Any], scoring: Any):
    """One Saved setting: the setting's records, its diagnostics, its key (the new scoring options)."""
    from rageval.readers import PromptTemplate

    diagnostics = tuple(d for d in manifest.diagnostics_of(name) if d in CATALOG)
    key = {
        "rageval": __version__,
        "kind": "rescore",
        "scoring": scoring.to_json(),
        "judge": scoring.judge.model_dump(mode="json"),
        "judge_id": None,
        "diagnostics": {d: CATALOG[d].version for d in diagnostics},
    }
    shown = PromptTemplate.coerce(manifest.template_of(name)).evidence_text
    items = tuple(Item(None, None, saved=r) for r in recs)
    return SettingPlan(recs[0].setting, Saved(), diagnostics, key, items, evidence_text=shown, batch_size=256)


def _summary(manifest: Manifest, records: list[Any], scoring: Any, of_run: str) -> dict[str, Any]:
    """The rescored run's manifest sections: the run's inputs and models, what was rescored with what."""
    summary: dict[str, Any] = {
        "dataset": manifest.suite.dataset,
        "inputs": dict(manifest.inputs),
        "models": {k: v for k, v in manifest.models.items() if k != "judge"},
        "origin": {"of_run": of_run},
        "rescore": {
            "judge": scoring.judge.spec,
            "of_run": of_run,
            "of_suite_hash": manifest.suite.hash,
            "of_origin": manifest.origin.kind,
            "records": len(records),
            "rescored": sum(r.status == "ok" for r in records),
        },
    }
    extra = manifest.model_extra or {}
    for section in ("score", "offline_defaults"):
        if section in extra:
            summary[section] = extra[section]
    if isinstance(summary.get("offline_defaults"), dict):
        summary["offline_defaults"] = {**summary["offline_defaults"], "judge": scoring.judge.spec}
    return summary


def _config(manifest: Manifest, scoring: Any) -> dict[str, Any]:
    """The run's configuration, with the judge it is rescored with."""
    config = dict(manifest.suite.config)
    if isinstance(config.get("judge"), dict):  # a suite's
        config["judge"] = {**config["judge"], "spec": scoring.judge.spec, "params": dict(scoring.judge.params)}
    elif "judge" in config:  # a score run's
        config["judge"], config["judge_params"] = scoring.judge.spec, dict(scoring.judge.params)
    return config


def plan_rescore(rundir: RunDir, manifest: Manifest, records: list[Any], scoring: Any):
    """The :class:`~rageval.run.plan.Plan` that scores ``records`` again with ``scoring`` (one Saved setting per
    setting of the run, in the manifest's order; items in the order of ``records.jsonl``)."""

    settings = [
        _saved_setting(manifest, n, recs, scoring) for n, recs in _by_setting(rundir, manifest, records).items() if recs
    ]
    of_run = str(rundir.path.resolve())
    suite = manifest.suite
    judge = scoring.judge.model_dump(mode="json")
    summary = _summary(manifest, records, scoring, of_run)
    config = _config(manifest, scoring)
    diagnostics_all = tuple(d for d in suite.diagnostics if d in CATALOG)
    return Plan(
        origin=Origin("rescore", suite.name, sha([suite.hash, judge])[:16], config, source=of_run),
        settings=tuple(settings),
        question_order=tuple(dict.fromkeys(r.question_id for r in records)),
        scoring=scoring,
        diagnostics=diagnostics_all,
        seed=suite.seed,
        contrasts=suite.contrasts,
        cluster_key=suite.cluster_key,
        summary=summary,
        judge_needed=any(CATALOG[d].uses_judge for s in settings for d in s.diagnostics),
        judge_cache=rundir.judge_cache,
    )
