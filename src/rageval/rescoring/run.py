"""``rageval rescore``: recompute every metric of a run from its saved records, into a folder of its own.

Any run directory — written by ``rageval suite`` or ``rageval score``, by this
rageval or by 0.1.0 (:mod:`rageval.rundir.manifest` migrates its manifest) — is
rescored from its manifest's scoring options (``scoring``: the judge, citation
rules, attribution options, tokenizer, each setting's diagnostics and prompt
template), optionally with another judge.

The front-end plans, the one engine runs: each saved record becomes an item of
a :class:`~rageval.run.plan.Saved` setting (its context and answer scored again
by :func:`rageval.diagnostics.dispatch.score`, the suite's scoring path; a
failed record kept as it was), and :func:`rageval.run.engine.execute` writes
``RUN_DIR/rescore-<judge>/`` (:func:`rescore_dir_name`) as a run directory of its
own: ``records.jsonl`` (the run's records, in the run's order, with the new
metrics; not written when the run has none: ``--no-records-file``), ``manifest.json`` (origin ``rescore``, the run's settings and
contrasts, the new judge), ``run_stats.json``, its record cache and its report.
Nothing of the run is changed, so a later ``rageval suite`` on the run directory
can never write the old scores over the rescored ones.  Judge decisions are
cached with the run's (``RUN_DIR/cache/judge/``, keyed by judge id), so
rescoring twice makes no judge call.  The run directory's lock is held
throughout.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rageval import __version__
from rageval.diagnostics import CATALOG
from rageval.errors import ConfigError
from rageval.infiles import loads
from rageval.judges.spec import spec_slug
from rageval.linestore import KeptLines
from rageval.report import build_report
from rageval.run.plan import Item, ItemStream, Origin, Plan, Saved, SettingPlan, sha
from rageval.rundir.claim import claim
from rageval.rundir.manifest import Manifest, RunDir, RunDirError
from rageval.scoring import ScoringConfig
from rageval.types import Record, Setting

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


def rescore(
    run_dir: str | Path,
    *,
    judge: str | None = None,
    accept_edits: bool = False,
    figures: Sequence[str] = (),
    progress: bool = False,
) -> RescoreResult:
    """Rescore the ``ok`` records of ``run_dir`` (with ``judge``, default the run's) into ``RUN_DIR/rescore-<judge>/``.

    A record edited after rageval wrote it (its digest does not match) is refused, unless ``accept_edits``: then it
    is rescored and the new run's manifest lists it (``accepted_edits``).  ``figures``: the report's figure files
    (``png``, ``svg``; default none: report.html draws its own).  ``progress``: a progress bar of the records on
    standard error (``rageval rescore`` shows it unless ``--no-progress``)."""
    from rageval.judges.checks import judge_problems
    from rageval.judges.spec import JudgeSpec
    from rageval.run.engine import execute

    rundir = RunDir(run_dir)
    if judge is not None and not judge.strip():
        raise RescoreError("--judge is empty: give a judge spec (e.g. 'lexical') or leave the option out")
    with rundir.lock("rageval rescore"):
        try:  # under the lock; read first, so a broken manifest is named as such
            manifest = rundir.read_manifest()
            records = RunRecords(rundir, manifest, accept_edits=accept_edits)
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
        result = execute(plan, out, progress_bar=progress)

        records.close()
        build_report(out.path, seed=manifest.suite.seed, figures=tuple(figures), progress=progress)
    rescored = records.ok
    judge_id = str(result.models.get("judge", scoring.judge.spec))
    return RescoreResult(out.path, result.n_records, rescored, scoring.judge.spec, judge_id)


class RunRecords:
    """The records of a run, read once line by line and never held: per setting the places of its lines in
    ``records.jsonl`` (:class:`~rageval.linestore.KeptLines`, 28 bytes a record) and its first record's setting,
    the run's questions in their first order, and the counts.  A record of a setting the manifest does not list
    is an error; each record is checked (its digest, its metrics' bounds: :meth:`RunDir.record_checks
    <rageval.rundir.manifest.RunDir.record_checks>`) and read again, checked against the first pass's bytes, when
    the engine takes it (:class:`_SavedItems`).  A run whose manifest lists settings and whose records vanished
    is an error."""

    #: the records read although edited (``accept_edits``), for the new run's manifest; None: none
    accepted_edits: dict[str, Any] | None = None

    def __init__(self, rundir: RunDir, manifest: Manifest, *, accept_edits: bool = False) -> None:
        self.rundir, self.kept = rundir, KeptLines(rundir.records_source())
        checks = rundir.record_checks(accept_edits=accept_edits)  # held for the pass only
        names = [s.name for s in manifest.suite.settings]
        self.lines: dict[str, array] = {n: array("I") for n in names}  # per setting: its records' places in kept
        self.places: dict[str, array] = {n: array("I") for n in names}  # per setting: its records' questions
        self.setting: dict[str, Setting] = {}
        self.questions: dict[str, int] = {}  # question id -> its place in the run's question order
        self.n = self.ok = 0
        for lineno, offset, raw, value in self.kept.source:
            r = rundir.record_of(value, lineno)
            name = r.setting.name
            if name not in self.lines:
                if names:
                    raise RescoreError(
                        f"{rundir.records_label}: setting {name!r} is not a setting of the run "
                        f"({', '.join(names)}); rerun the command that wrote it"
                    )
                self.lines[name], self.places[name] = array("I"), array("I")
            problem = checks.problem(value, lineno)  # after the checks naming its shape and setting
            if problem is not None:
                raise RescoreError(problem)
            self.setting.setdefault(name, r.setting)
            self.lines[name].append(len(self.kept))
            self.places[name].append(self.questions.setdefault(r.question_id, len(self.questions)))
            self.kept.add(lineno, offset, raw)
            self.n += 1
            self.ok += r.status == "ok"
        if not self.n and names:
            raise rundir.no_records(names)
        edits = checks.summary("rageval rescore")
        if edits is not None:  # else the class's None (no attribute more: the pass holds a few bytes a record)
            self.accepted_edits = edits

    def record(self, i: int) -> Record:
        """The ``i``-th record read, read again; an error naming its line when its bytes changed since."""
        lineno = self.kept.lineno(i)
        where = f"{self.rundir.records_label} line {lineno}"
        text = self.kept.text(i)
        if text is None:
            raise RescoreError(
                f"{where}: changed since rescore read it first (another program wrote the run meanwhile); "
                "rerun rageval rescore"
            )
        return self.rundir.record_of(loads(text, where, error=RescoreError), lineno)

    def close(self) -> None:
        self.kept.close()


class _SavedItems(ItemStream):
    """One setting's saved records as items, read again one by one in the order of ``records.jsonl``."""

    def __init__(self, run: RunRecords, name: str) -> None:
        self.run, self.lines, self.places = run, run.lines[name], run.places[name]

    def __len__(self) -> int:
        return len(self.lines)

    def __iter__(self) -> Iterator[Item]:
        for i in self.lines:
            yield Item(None, None, saved=self.run.record(i))

    def record_questions(self) -> Iterator[str]:
        """The run's question order restricted to the setting (as for a tuple of items)."""
        mine = bytearray(len(self.run.questions))
        for k in self.places:
            mine[k] = 1
        return (q for q, k in self.run.questions.items() if mine[k])


def _saved_setting(manifest: Manifest, name: str, run: RunRecords, scoring: ScoringConfig):
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
    items = _SavedItems(run, name)
    return SettingPlan(run.setting[name], Saved(), diagnostics, key, items, evidence_text=shown, batch_size=256)


def _summary(manifest: Manifest, records: RunRecords, scoring: ScoringConfig, of_run: str) -> dict[str, Any]:
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
            "records": records.n,
            "rescored": records.ok,
        },
    }
    if records.accepted_edits is not None:
        summary["accepted_edits"] = records.accepted_edits
    extra = manifest.model_extra or {}
    for section in ("score", "offline_defaults"):
        if section in extra:
            summary[section] = extra[section]
    if isinstance(summary.get("offline_defaults"), dict):
        summary["offline_defaults"] = {**summary["offline_defaults"], "judge": scoring.judge.spec}
    return summary


def _config(manifest: Manifest, scoring: ScoringConfig) -> dict[str, Any]:
    """The run's configuration, with the judge it is rescored with."""
    config = dict(manifest.suite.config)
    if isinstance(config.get("judge"), dict):  # a suite's
        config["judge"] = {**config["judge"], "spec": scoring.judge.spec, "params": dict(scoring.judge.params)}
    elif "judge" in config:  # a score run's
        config["judge"], config["judge_params"] = scoring.judge.spec, dict(scoring.judge.params)
    return config


def plan_rescore(rundir: RunDir, manifest: Manifest, records: RunRecords, scoring: ScoringConfig):
    """The :class:`~rageval.run.plan.Plan` that scores ``records`` again with ``scoring`` (one Saved setting per
    setting of the run, in the manifest's order; items in the order of ``records.jsonl``)."""

    settings = [_saved_setting(manifest, n, records, scoring) for n, lines in records.lines.items() if lines]
    of_run = str(rundir.path.resolve())
    suite = manifest.suite
    judge = scoring.judge.model_dump(mode="json")
    summary = _summary(manifest, records, scoring, of_run)
    config = _config(manifest, scoring)
    diagnostics_all = tuple(d for d in suite.diagnostics if d in CATALOG)
    return Plan(
        origin=Origin("rescore", suite.name, sha([suite.hash, judge])[:16], config, source=of_run),
        settings=tuple(settings),
        question_order=tuple(records.questions),
        scoring=scoring,
        diagnostics=diagnostics_all,
        seed=suite.seed,
        contrasts=suite.contrasts,
        cluster_key=suite.cluster_key,
        summary=summary,
        judge_needed=any(CATALOG[d].uses_judge for s in settings for d in s.diagnostics),
        judge_cache=rundir.judge_cache,
        notes=(records.accepted_edits["note"],) if records.accepted_edits is not None else (),
        records_file=rundir.records_path.exists(),  # as the run: without records.jsonl, the store alone
    )
