"""The second-evaluator audit of a run: rescore a seeded subsample's saved answers with a second judge.

Two modes, as the attribution–compression paper defines them:

* **fixed mappings** (``fixed``): the first judge's recovered source ids are kept
  (``extra.attribution.recovery`` of each record) and only support is judged again,
  so every (premise, sentence) pair is the same under both judges;
* **re-recovery** (``rerecover``): the second judge also re-attributes the units
  without declared provenance.

The first judge's values are the run's own (record metrics and per-sentence gate
decisions): no model is loaded for them.  The second judge's calls are cached in
``RUN_DIR/audit-<judge>/cache``, so a rerun makes no new calls.  Everything is
written into ``RUN_DIR/audit-<judge>/``; the run's records are only read.

Figures (docs/statistics.md#second-evaluator-audit): emitted and grounded precision
and recall under each evaluator, both ways (a judge abstention scored as not
supported, as the paper scored its non-binary generations, and left out); the
paired emitted − grounded gaps under each with 95% bootstrap intervals; the
cross-judge differences (second − first) with intervals and Holm-adjusted sign-flip
p-values; the per-pair agreement rate and Cohen's kappa of the two judges'
decisions; and each judge's abstentions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rageval.errors import ConfigError

__all__ = ["AuditError", "run_audit", "audit_dir", "judge_slug", "MODES", "SCORES", "select_sample"]

MODES = ("fixed", "rerecover")
MODE_LABELS = {"fixed": "fixed mappings", "rerecover": "re-recovery"}
SCORES = ("emitted_precision", "emitted_recall", "grounded_precision", "grounded_recall")
GAPS = (("precision", "emitted_precision", "grounded_precision"), ("recall", "emitted_recall", "grounded_recall"))
#: the two ways of counting a judge abstention (docs/design.md#abstentions)
WAYS = (("as_unsupported", ""), ("left_out", "_excl_abstain"))


class AuditError(ConfigError):
    """A run that cannot be audited as asked; the message names what, where and the fix."""


def judge_slug(spec: str) -> str:
    """A folder-safe name for a judge spec: ``minilm`` -> ``minilm``, ``nli:/m/deberta`` -> ``nli-m-deberta``."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", str(spec)).strip("-.")
    return slug[-80:] or "judge"


def audit_dir(run_dir: str | Path, judge: str) -> Path:
    return Path(run_dir) / f"audit-{judge_slug(judge)}"


# ---------------------------------------------------------------- the sample


def select_sample(question_ids: Sequence[str], n: int, seed: int) -> list[str]:
    """``n`` of ``question_ids`` drawn without replacement with ``np.random.default_rng(seed)``, in their order.

    >>> select_sample(["q1", "q2", "q3", "q4"], 2, seed=0) == select_sample(["q1", "q2", "q3", "q4"], 2, seed=0)
    True
    """
    ids = list(question_ids)
    if n >= len(ids):
        return ids
    pick = set(np.random.default_rng(seed).choice(len(ids), size=n, replace=False).tolist())
    return [q for i, q in enumerate(ids) if i in pick]


def _settings(run, wanted: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """``(audited, left out)``: the wanted settings (default: every setting) that ran, and those that did not
    (no ok record, e.g. unavailable weights: left out as the common cohort leaves them out)."""
    from rageval.registry import did_you_mean

    names = run.setting_names
    for s in wanted or ():
        if s not in names:
            hint = did_you_mean(s, names) or f" Known: {', '.join(names)}."
            raise AuditError(f"audit setting {s!r} is not a setting of this run.{hint}")
    chosen = [s for s in names if not wanted or s in set(wanted)]
    ran = {r["setting"]["name"] for r in run.records if r["status"] == "ok"}
    return [s for s in chosen if s in ran], [s for s in chosen if s not in ran]


def _cohort(run, settings: Sequence[str]) -> list[str]:
    """Questions whose records are ok in every audited setting, in the run's question order."""
    status: dict[tuple[str, str], str] = {(r["question_id"], r["setting"]["name"]): r["status"] for r in run.records}
    order = list(dict.fromkeys(r["question_id"] for r in run.records))
    return [q for q in order if all(status.get((q, s)) == "ok" for s in settings)]


# ---------------------------------------------------------------- scoring


@dataclass
class _Item:
    """One audited record: its scoring input, the first judge's values and the second judge's per mode."""

    record: dict[str, Any]
    input: Any
    fixed: dict[int, list[str]]
    first: dict[str, Any]
    second: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return self.record["question_id"], self.record["setting"]["name"]


def _fixed_map(rec: Mapping[str, Any], where: str) -> dict[int, list[str]]:
    recovery = ((rec.get("extra") or {}).get("attribution") or {}).get("recovery") or {}
    out = {}
    for unit, r in recovery.items():
        try:
            k = int(unit) - 1
        except (TypeError, ValueError):
            raise AuditError(f"{where}: extra.attribution.recovery has a unit key {unit!r}, not a number") from None
        out[k] = list((r or {}).get("recovered") or [])
    return out


def _first(rec: Mapping[str, Any], where: str) -> dict[str, Any]:
    metrics = rec.get("metrics") or {}
    missing = [m for m in SCORES if m not in metrics]
    if missing:
        raise AuditError(
            f"{where}: the record carries no {', '.join(missing)}: the audit needs the run's citation scores "
            "(diagnostics emitted_* and grounded_*); add them and rescore the run (rageval rescore RUN_DIR)"
        )
    details = (rec.get("extra") or {}).get("attribution")
    if not isinstance(details, Mapping) or not isinstance(details.get("sentences"), list):
        raise AuditError(
            f"{where}: the record carries no per-sentence decisions (extra.attribution.sentences): "
            "rescore the run first (rageval rescore RUN_DIR)"
        )
    out = {k: metrics.get(k) for m in SCORES for k in (m, f"{m}_excl_abstain")}
    out["judge_abstentions"] = metrics.get("judge_abstentions")
    out["sentences"] = details["sentences"]
    return out


def _second(row: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: row.get(k) for m in SCORES for k in (m, f"{m}_excl_abstain")}
    out["judge_abstentions"] = row.get("judge_abstentions")
    out["sentences"] = (row.get("details") or {}).get("sentences") or []
    out["recovery"] = (row.get("details") or {}).get("recovery") or {}
    return out


def _score_second(items: Sequence[_Item], runner: Any, options: Any, modes: Sequence[str]) -> None:
    from rageval.diagnostics.attribution import attribution_scores_batch

    answers = [it.input.answer for it in items]
    units = [it.input.unit_dicts() for it in items]
    sources = [it.input.source_dicts() for it in items]
    for mode in modes:
        rows = attribution_scores_batch(
            answers,
            units,
            sources,
            judge=runner,
            options=options,
            parts=("emitted", "grounded"),
            details=True,
            recovered=[it.fixed for it in items] if mode == "fixed" else None,
        )
        for it, row in zip(items, rows):
            it.second[mode] = _second(row)


# ---------------------------------------------------------------- figures


def _v(x: Any) -> float:
    return math.nan if x is None else float(x)


def _mean(xs: Sequence[float]) -> tuple[float | None, int]:
    a = np.array(xs, dtype=float)
    ok = np.isfinite(a)
    return (float(a[ok].mean()) if ok.any() else None), int(ok.sum())


def _evaluators(modes: Sequence[str]) -> list[tuple[str, str | None]]:
    """``[(label, mode)]``: the first judge, then the second under each mode."""
    return [("first", None)] + [(f"second ({MODE_LABELS[m]})", m) for m in modes]


def _values(it: _Item, mode: str | None) -> Mapping[str, Any]:
    return it.first if mode is None else it.second[mode]


def _groups(items: Sequence[_Item], settings: Sequence[str]) -> list[tuple[str, list[_Item]]]:
    by = [(s, [it for it in items if it.key[1] == s]) for s in settings]
    return by + ([("all audited settings", list(items))] if len(settings) > 1 else [])


def _scores_table(items, settings, modes) -> list[dict[str, Any]]:
    rows = []
    for group, its in _groups(items, settings):
        for label, mode in _evaluators(modes):
            for way, suffix in WAYS:
                row: dict[str, Any] = {"setting": group, "evaluator": label, "abstentions": way}
                for m in SCORES:
                    mean, n = _mean([_v(_values(it, mode).get(m + suffix)) for it in its])
                    row[m], row[f"{m}_n"] = mean, n
                rows.append(row)
    return rows


def _tests(cols: list[np.ndarray], clusters, seed: int, n_resamples: int):
    from rageval.stats import paired_tests

    if not cols:
        return None
    return paired_tests(np.column_stack(cols), clusters=clusters, n_resamples=n_resamples, seed=seed)


def _row_stats(res, c: int) -> dict[str, Any]:
    r = res.row(c)
    return {
        "effect": r["estimate"],
        "ci_low": r["ci_low"],
        "ci_high": r["ci_high"],
        "p_value": r["p_value"],
        "n": r["n"],
        "n_dropped": r["n_dropped"],
        "note": r["reason"],
    }


def _gaps_table(items, settings, modes, clusters_of, seed, n_resamples) -> list[dict[str, Any]]:
    """Paired emitted - grounded gap per setting, evaluator and abstention rule (one engine call per setting)."""
    rows = []
    for group, its in _groups(items, settings):
        specs, cols = [], []
        for label, mode in _evaluators(modes):
            for way, suffix in WAYS:
                for name, e, g in GAPS:
                    vals = [_values(it, mode) for it in its]
                    cols.append(np.array([_v(v.get(e + suffix)) - _v(v.get(g + suffix)) for v in vals]))
                    specs.append({"setting": group, "evaluator": label, "abstentions": way, "gap": name})
        res = _tests(cols, clusters_of(its), seed, n_resamples)
        rows += [{**spec, **_row_stats(res, c)} for c, spec in enumerate(specs)] if res is not None else []
    return rows


def _cross_table(items, settings, modes, clusters_of, seed, n_resamples) -> list[dict[str, Any]]:
    """Second - first judge per setting, mode, score and abstention rule; Holm over the rows of each rule."""
    from rageval.stats.holm import holm

    rows = []
    for group, its in _groups(items, settings):
        specs, cols = [], []
        # emitted premises are the unit texts: the same under both modes, so emitted rows are tested once
        plan = [(modes[0], m, "both (emitted)") for m in SCORES if m.startswith("emitted")]
        plan += [(mode, m, MODE_LABELS[mode]) for mode in modes for m in SCORES if m.startswith("grounded")]
        for mode, m, mode_label in plan:
            for way, suffix in WAYS:
                a = np.array([_v(it.first.get(m + suffix)) for it in its])
                b = np.array([_v(it.second[mode].get(m + suffix)) for it in its])
                cols.append(b - a)
                specs.append(
                    {
                        "setting": group,
                        "mode": mode_label,
                        "abstentions": way,
                        "metric": m,
                        "mean_first": _mean(a.tolist())[0],
                        "mean_second": _mean(b.tolist())[0],
                    }
                )
        res = _tests(cols, clusters_of(its), seed, n_resamples)
        if res is not None:
            rows += [{**spec, **_row_stats(res, c)} for c, spec in enumerate(specs)]
    # one Holm family per abstention rule over every setting, mode and score (the pooled rows are a summary,
    # not a further test: they stay out of the family and keep their raw p)
    for way, _ in WAYS:
        idx = [i for i, r in enumerate(rows) if r["abstentions"] == way and r["setting"] in settings]
        adj = holm([rows[i]["p_value"] for i in idx]) if idx else np.array([])
        for i, p in zip(idx, adj):
            rows[i]["p_holm"] = None if not math.isfinite(p) else float(p)
        for r in rows:
            if r["abstentions"] == way and r["setting"] not in settings:
                r["p_holm"] = None
                r["note"] = r["note"] or "pooled summary: not in the Holm family"
        for r in rows:
            if r["abstentions"] == way:
                r["holm_family_size"] = len(idx)
    return rows


def _decisions(first: Sequence[Mapping], second: Sequence[Mapping], variant: str):
    """Per judged pair: (first label, second label) of the joint decision, and of each citation's precision.

    A joint label is None when that judge abstained on it; the citation labels of a sentence are None when
    either judge abstained on any decision of that sentence (the saved details mark abstentions per sentence).
    A sentence with no premise (no valid citation, or every grounded citation unresolvable) is no pair.
    """
    joint, prec = [], []
    for s1, s2 in zip(first, second):
        d1, d2 = s1.get(variant) or {}, s2.get(variant) or {}
        cites = s1.get("citations") or []
        if not cites or (variant == "grounded" and all(e == "missing" for e in s1.get("evidence") or [])):
            continue

        def label(d):
            if d.get("abstained") and not d.get("supported"):
                return None
            return int(bool(d.get("supported")))

        l1, l2 = label(d1), label(d2)
        joint.append((l1, l2))
        p1, p2 = d1.get("precise") or [], d2.get("precise") or []
        unsure = bool(d1.get("abstained") or d2.get("abstained"))
        for c in range(min(len(p1), len(p2))):
            # as in ALCE's analysis: a citation of a sentence whose joint decision failed is imprecise
            a = None if unsure else int(bool(p1[c]) and l1 == 1)
            b = None if unsure else int(bool(p2[c]) and l2 == 1)
            prec.append((a, b))
    return joint, prec


def _agreement_table(items, settings, modes) -> list[dict[str, Any]]:
    from rageval.stats.agreement import agreement

    rows = []
    kinds = [("emitted", "emitted", "fixed" if "fixed" in modes else modes[0])]
    if "fixed" in modes:
        kinds.append(("grounded", "grounded", "fixed"))
    if "rerecover" in modes:
        kinds.append(("grounded (re-recovery: premises may differ)", "grounded", "rerecover"))
    for group, its in _groups(items, settings):
        for label, variant, mode in kinds:
            joint, prec = [], []
            for it in its:
                j, p = _decisions(it.first["sentences"], it.second[mode]["sentences"], variant)
                joint += j
                prec += p
            for unit, pairs in (("sentence support (joint decision)", joint), ("citation precision", prec)):
                ag = agreement([a for a, _ in pairs], [b for _, b in pairs])
                rows.append({"setting": group, "premise": label, "decision": unit, **ag})
    return rows


def _abstained_sentences(sentences: Sequence[Mapping], variant: str) -> int:
    """Sentences with an abstained decision in the ``variant`` gate (joint or a citation's own)."""
    return sum(1 for x in sentences if (x.get(variant) or {}).get("abstained"))


def _abstentions_table(items, settings, modes) -> list[dict[str, Any]]:
    rows = []
    for group, its in _groups(items, settings):
        for label, mode in _evaluators(modes):
            vals = [_values(it, mode) for it in its]
            counts = [v.get("judge_abstentions") for v in vals]
            known = [int(c) for c in counts if c is not None]
            rows.append(
                {
                    "setting": group,
                    "evaluator": label,
                    "sentences_abstained_emitted": sum(_abstained_sentences(v["sentences"], "emitted") for v in vals),
                    "sentences_abstained_grounded": sum(_abstained_sentences(v["sentences"], "grounded") for v in vals),
                    # the first judge's count covers every attribution part the run scored (recovery, gate,
                    # verification); the second judge's only what the audit asks (recovery and the gate)
                    "judge_abstentions": sum(known) if known else None,
                    "records_with_abstentions": sum(c > 0 for c in known),
                    "records": len(its),
                }
            )
    return rows


# ---------------------------------------------------------------- the audit


def _load(run_dir: Path):
    """The run's records (as the report reads them) and its typed manifest, whatever command wrote the run."""
    from rageval.report.load import RunError, load_run
    from rageval.run.rundir import RunDir, RunDirError

    try:
        manifest = RunDir(run_dir).read_manifest()
        run = load_run(run_dir)
    except (RunError, RunDirError) as err:
        raise AuditError(str(err)) from None
    return run, manifest


def _options(manifest: Any, threshold: float | None):
    """The run's attribution options (from its manifest's scoring options), with the second judge's threshold."""
    try:
        opts = manifest.scoring_spec().options().attribution
    except ValueError as err:
        raise AuditError(f"manifest.json: scoring options: {' '.join(str(err).split())}; rescore the run") from None
    if threshold is not None:
        opts = opts.model_copy(update={"threshold": threshold})
    return opts


def _build_items(run, settings: Sequence[str], sample: Sequence[str], manifest: Any) -> list[_Item]:
    from rageval.diagnostics.inputs import ScoringInput
    from rageval.readers import PromptTemplate
    from rageval.types import Record

    shown = {s: PromptTemplate.coerce(manifest.template_of(s)).evidence_text for s in settings}
    wanted = set(sample)
    order = {q: i for i, q in enumerate(sample)}
    sorder = {s: i for i, s in enumerate(settings)}
    recs = [
        r for r in run.records if r["question_id"] in wanted and r["setting"]["name"] in sorder and r["status"] == "ok"
    ]
    recs.sort(key=lambda r: (sorder[r["setting"]["name"]], order[r["question_id"]]))
    items = []
    for r in recs:
        where = f"records.jsonl line {r.get('_line')} ({r['question_id']}, {r['setting']['name']})"
        clean = {k: v for k, v in r.items() if k != "_line"}
        items.append(
            _Item(
                record=r,
                input=ScoringInput.from_record(Record.from_dict(clean), shown[r["setting"]["name"]]),
                fixed=_fixed_map(r, where),
                first=_first(r, where),
            )
        )
    return items


def _check_alignment(items: Sequence[_Item], modes: Sequence[str]) -> None:
    for it in items:
        for mode in modes:
            n1, n2 = len(it.first["sentences"]), len(it.second[mode]["sentences"])
            if n1 != n2:
                q, s = it.key
                raise AuditError(
                    f"record ({q}, {s}): its saved answer parses into {n2} sentences now but {n1} in the run; "
                    "rescore the run first (rageval rescore RUN_DIR) so both judges see the same sentences"
                )


def run_audit(
    run_dir: str | Path,
    judge: str,
    *,
    n: int = 100,
    settings: Sequence[str] | None = None,
    modes: Sequence[str] = MODES,
    seed: int | None = None,
    threshold: float | None = None,
    n_resamples: int = 10_000,
    judge_options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Audit ``run_dir`` (a suite's or a score run) with the second judge ``judge`` (see the module doc); write and
    return the figures.  The run directory's lock is held throughout."""
    from rageval.run.rundir import RunDir

    run_dir = Path(run_dir)
    with RunDir(run_dir).lock("rageval audit"):
        return _run_audit(run_dir, judge, n, settings, modes, seed, threshold, n_resamples, judge_options)


def _run_audit(run_dir, judge, n, settings, modes, seed, threshold, n_resamples, judge_options) -> dict[str, Any]:
    from rageval.judges.spec import JudgeSpec
    from rageval.run.parts import Parts, load_judge
    from rageval.text import get_tokenizer

    if n < 1:
        raise AuditError(f"the audit needs at least one question, got n={n}")
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise AuditError(f"audit modes must be among {', '.join(MODES)}, got {list(modes)}")
    run, manifest = _load(run_dir)
    options = _options(manifest, threshold)
    first = manifest.scoring.judge
    if judge == first.spec:
        raise AuditError(f"judge {judge!r} is the run's own judge: the audit needs a second evaluator")
    seed = manifest.suite.seed if seed is None else seed
    audited, left_out = _settings(run, settings)
    if not audited:
        raise AuditError(
            f"none of the audited settings ran ({', '.join(left_out)}: no ok record): audit settings that ran"
        )
    cohort = _cohort(run, audited)
    if not cohort:
        raise AuditError(
            f"no question is ok in every audited setting ({', '.join(audited)}): restrict the audit with "
            "--settings to settings that ran"
        )
    sample = select_sample(cohort, n, seed)
    out = audit_dir(run_dir, judge)  # created by the judge's cache once the judge loads, never before
    second = JudgeSpec(spec=judge, threshold=options.threshold, params=dict(judge_options or {}))
    scope = _Scope(run, manifest, run_dir, judge, n, tuple(modes), seed, options, n_resamples, out)
    with Parts() as parts:
        runner = parts.add(load_judge(second, out / "cache", get_tokenizer(manifest.scoring.tokenizer)))
        return _audit_with(scope, runner, audited, left_out, cohort, sample)


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
    n_resamples: int
    out: Path


def _audit_with(sc: _Scope, runner: Any, audited, left_out, cohort, sample) -> dict[str, Any]:
    run, manifest, judge, modes, seed, options, n_resamples = (
        sc.run,
        sc.manifest,
        sc.judge,
        sc.modes,
        sc.seed,
        sc.options,
        sc.n_resamples,
    )
    run_dir, out, n = sc.run_dir, sc.out, sc.n
    first = manifest.scoring.judge
    first_id = (run.manifest.get("models") or {}).get("judge")
    if first_id is not None and getattr(runner, "id", None) == first_id:
        raise AuditError(f"judge {judge!r} is the run's own judge ({first_id}): the audit needs a second evaluator")
    items = _build_items(run, audited, sample, manifest)
    _score_second(items, runner, options, modes)
    _check_alignment(items, modes)
    clusters_of = _question_clusters(run)
    result = {
        "run": str(run_dir),
        "suite": manifest.suite.name,
        "origin": manifest.origin.kind,
        "first_judge": {"spec": first.spec, "id": first_id, "threshold": first.threshold},
        "second_judge": {"spec": judge, "id": getattr(runner, "id", None), "threshold": options.threshold},
        "modes": [MODE_LABELS[m] for m in modes],
        "settings": audited,
        "settings_left_out": left_out,
        "seed": seed,
        "n_requested": n,
        "n_cohort": len(cohort),
        "questions": sample,
        "n_records": len(items),
        "n_resamples": n_resamples,
        "scores": _scores_table(items, audited, modes),
        "gaps": _gaps_table(items, audited, modes, clusters_of, seed, n_resamples),
        "cross_judge": _cross_table(items, audited, modes, clusters_of, seed, n_resamples),
        "agreement": _agreement_table(items, audited, modes),
        "abstentions": _abstentions_table(items, audited, modes),
        "second_judge_stats": {
            k: v for k, v in (runner.stats() if hasattr(runner, "stats") else {}).items() if isinstance(v, (int, float))
        },
    }
    from rageval.audit.write import write_audit

    result["files"] = {k: str(v) for k, v in write_audit(out, result, items, modes).items()}
    return result


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
