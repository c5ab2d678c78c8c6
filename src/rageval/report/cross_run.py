"""Contrasts across runs (``rageval report RUN_DIR RUN_DIR ... --contrasts FILE``).

``FILE`` is a YAML contrast plan in the suite's ``contrasts:`` format (:mod:`rageval.stats.contrasts`: pairs,
``vs``, families, ``separate``, ``holm`` and ``interactions``), optionally under a top-level ``contrasts:`` key
beside ``labels:``, whose settings are named ``RUNLABEL:setting``.  A run's label is its folder's name, or the
one ``labels:`` gives it (``{RUN_DIR as given on the command line: label}``)::

    labels: {runs/hotpotqa_qwen3b: 3b, runs/hotpotqa_qwen14b: 14b}
    contrasts:
      families: [{readers: [{a: "14b:submodular@160", b: "3b:submodular@160", metrics: [answer_f1]}]}]
      interactions:   # the reader-ladder reversal: the packer's gain under the 3B reader vs under the 14B
        - [["3b:submodular@160", "3b:focused@160"], ["14b:submodular@160", "14b:focused@160"]]

The **cohort** is the questions in every run's common cohort (by question id).  Runs whose cohorts differ are
not intersected silently: how many questions each run has, how many all share and how many of each were left
out are printed, written in ``contrasts.md`` and, with the left-out ids, in ``cross_run.json``.  Each row is
tested as in a run (the same engine: paired bootstrap interval, sign-flip p) over the shared questions; Holm
runs over the file's own plan (its scope and families; the interactions on their own), beside the runs' own
families, which their reports adjust as before.  Written to ``--out`` (default: a folder named after ``FILE``,
beside it): ``contrasts.csv`` (the columns of a run's, the gain decomposition's included), ``contrasts.md`` (with
the gain decomposition tables of its answer-quality pairs) and ``cross_run.json``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import yaml

from rageval.diagnostics import contrasted_by_default
from rageval.escape import md_text
from rageval.io import write_text_atomic
from rageval.report import contrast_tables as C
from rageval.report import tables as T
from rageval.report.analysis import _cohort_clusters, _cohort_table
from rageval.report.family import family_contrasts, family_counts, holm_info, largest_family, setting_replicates
from rageval.report.load import Run, RunError
from rageval.report.result import Analysis
from rageval.rundir.claim import claim, mark_run, owned
from rageval.rundir.lock import OutDirLock
from rageval.stats.contrasts import expand_plan
from rageval.token_counts import CONTEXT_METRICS

__all__ = ["cross_run_contrasts", "read_contrasts_file", "run_labels", "default_out"]

#: the largest contrasts file read (a plan, not data)
MAX_FILE_BYTES = 1 << 20


def read_contrasts_file(path: str | Path) -> tuple[Any, dict[str, str]]:
    """``(the plan, {run dir as given: label})`` of a cross-run contrasts file (see the module doc)."""
    p = Path(path)
    if p.stat().st_size > MAX_FILE_BYTES:
        raise RunError(f"{p}: a contrasts file is a plan of at most {MAX_FILE_BYTES:,} bytes")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise RunError(f"{p}: not a readable YAML file ({' '.join(str(err).split())})") from err
    labels: Any = {}
    if isinstance(data, Mapping) and "contrasts" in data:
        unknown = [k for k in data if k not in ("contrasts", "labels")]
        if unknown:
            raise RunError(f"{p}: unknown key {unknown[0]!r} (a contrasts file holds contrasts: and labels:)")
        labels = data.get("labels") or {}
        data = data["contrasts"]
    if not isinstance(labels, Mapping) or not all(isinstance(v, str) and v for v in labels.values()):
        raise RunError(f"{p}: labels must map a run directory (as given) to a label, e.g. {{runs/a: a}}")
    if data is None:
        raise RunError(f"{p} declares no contrast")
    return data, {str(k): str(v) for k, v in labels.items()}


def run_labels(run_dirs: Sequence[str | Path], given: Mapping[str, str]) -> list[str]:
    """Each run's label: ``given[dir as written]`` (also matched after normalizing the path), else its folder name;
    two runs with one label, or a label holding ``:``, are refused."""
    norm = {str(Path(k)): v for k, v in given.items()}
    known = {str(Path(d)) for d in run_dirs}
    stray = [k for k in norm if k not in known]
    if stray:
        raise RunError(f"labels names {stray[0]!r}, which is not one of the run directories given")
    labels = [norm.get(str(Path(d)), Path(d).resolve().name) for d in run_dirs]
    for d, lab in zip(run_dirs, labels):
        if ":" in lab or not lab.strip():
            raise RunError(f"run {str(d)!r} has the label {lab!r}: a label may not be empty or hold ':'")
    twice = [lab for lab in labels if labels.count(lab) > 1]
    if twice:
        raise RunError(
            f"two runs have the label {twice[0]!r}: name them in the contrasts file (labels: {{RUN_DIR: label}})"
        )
    return labels


def default_out(contrasts_file: str | Path) -> Path:
    """The cross-run contrasts' folder when ``--out`` is not given: ``FILE`` without its suffix, beside it."""
    p = Path(contrasts_file)
    return p.with_name(p.stem)


@dataclasses.dataclass(frozen=True)
class _Union:
    """The shared questions and every run's settings (``label:setting``) aligned with them (a cohort table)."""

    qids: list[str]
    settings: list[str]
    metric_names: list[str]
    values: dict[tuple[str, str], np.ndarray]


def _cohort_counts(labels: Sequence[str], cohorts: Sequence[Sequence[str]], shared: set[str]) -> dict[str, Any]:
    return {
        "n_shared": len(shared),
        "runs": {
            lab: {
                "n_cohort": len(q),
                "n_left_out": sum(x not in shared for x in q),
                "left_out": [x for x in q if x not in shared],
            }
            for lab, q in zip(labels, cohorts)
        },
    }


def cohort_lines(cohort: Mapping[str, Any]) -> list[str]:
    """The cohort in words: the shared questions and, per run, its own and those left out."""
    runs = cohort["runs"]
    differ = any(r["n_left_out"] for r in runs.values())
    each = "; ".join(f"{lab}: {r['n_cohort']} questions, {r['n_left_out']} left out" for lab, r in runs.items())
    head = f"Cross-run cohort: {cohort['n_shared']} questions in the common cohort of every run ({each})."
    if differ:
        head += " The runs' question sets differ: every contrast uses the shared questions only."
    return [head]


def _union(runs: Sequence[Run], labels: Sequence[str]) -> tuple[_Union, dict[str, Any], list[Any], Any]:
    tables = [_cohort_table(r) for r in runs]
    cohorts = [t.qids for t in tables]
    shared = set(cohorts[0]).intersection(*cohorts[1:])
    qids = [q for q in cohorts[0] if q in shared]
    metrics = [m for m in tables[0].metric_names if all(m in t.metric_names for t in tables[1:])]
    values: dict[tuple[str, str], np.ndarray] = {}
    refs: list[Any] = []
    for run, lab, t in zip(runs, labels, tables):
        where = {q: i for i, q in enumerate(t.qids)}
        idx = np.array([where[q] for q in qids], dtype=np.intp)
        for s in run.settings:
            if s["name"] not in t.settings:
                continue  # did not run (left out of that run's cohort)
            name = f"{lab}:{s['name']}"
            comp = s.get("compressor")
            refs.append(
                {"name": name, "compressor": None if comp is None else f"{lab}:{comp}", "budget": s.get("budget")}
            )
            for m in [*metrics, *CONTEXT_METRICS]:  # the context measures: contrasted where the plan names them
                values[(name, m)] = t.values[(s["name"], m)][idx]
    u = _Union(qids, [r["name"] for r in refs], metrics, values)
    return u, _cohort_counts(labels, cohorts, shared), refs, tables[0]


def cross_run_contrasts(
    runs: Sequence[Run],
    labels: Sequence[str],
    spec: Any,
    out: str | Path,
    *,
    seed: int | None = None,
    n_resamples: int | str | None = None,
    source: str = "",
) -> dict[str, Any]:
    """Test the plan ``spec`` over the runs' shared questions and write ``contrasts.csv``, ``contrasts.md`` and
    ``cross_run.json`` into ``out``; returns ``{"files": {name: path}, "cohort": ..., "lines": [...]}``."""
    u, cohort, refs, _ = _union(runs, labels)
    try:
        names = [*u.metric_names, *(m for m in CONTEXT_METRICS if m not in u.metric_names)]
        plan = expand_plan(spec, refs, metric_names=names, contrasted=contrasted_by_default)
    except (ValueError, TypeError) as err:
        raise RunError(f"{source or 'the contrasts file'}: {err}") from err
    first = runs[0]
    seed = seed if seed is not None else int(first.suite.get("seed") or 0)
    sizes = family_counts(plan.rows, (), plan.holm, plan.separate)
    m = largest_family(sizes)
    reps = setting_replicates(first, n_resamples, m)
    clusters = _cohort_clusters(first, u.qids)
    rows, res = family_contrasts(
        u, plan.rows, clusters, seed=seed, reps=reps, constant=(), holm_scope=plan.holm, separate=plan.separate
    )
    holm = dict(holm_info(first, plan, (), reps, res, m))
    holm["runs"] = list(labels)
    view = cast(
        "Analysis",
        _View(
            contrasts=tuple(rows),
            holm=cast("Any", holm),
            cohort={"n_clusters": len(set(clusters)) if clusters is not None else None},
            confidence=0.95,
            n_resamples=reps.bootstrap,
            n_test_resamples=reps.test,
            seed=seed,
        ),
    )
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with OutDirLock(out, "rageval report"):
        claim(out)
        if not owned(out):
            mark_run(out, "cross-run", None)
        files = {
            "contrasts_csv": _write(
                out / "contrasts.csv", T.to_csv(C.contrast_columns(view), C.contrast_csv_rows(view))
            ),
            "contrasts_md": _write(out / "contrasts.md", _markdown(view, cohort, labels, runs)),
            "cross_run_json": _write(
                out / "cross_run.json",
                json.dumps(
                    {
                        "runs": {lab: str(r.path) for lab, r in zip(labels, runs)},
                        "cohort": cohort,
                        "holm": holm,
                        "seed": seed,
                        "contrasts": rows,
                    },
                    indent=1,
                    sort_keys=True,
                    allow_nan=False,
                )
                + "\n",
            ),
        }
    return {"files": files, "cohort": cohort, "lines": cohort_lines(cohort)}


@dataclasses.dataclass(frozen=True)
class _View:
    """What the contrast tables read of an analysis (:mod:`rageval.report.contrast_tables`)."""

    contrasts: tuple[Any, ...]
    holm: Any
    cohort: Mapping[str, Any]
    confidence: float
    n_resamples: int
    n_test_resamples: int
    seed: int


def _write(path: Path, text: str) -> Path:
    write_text_atomic(path, text)
    return path


def _markdown(an: Analysis, cohort: Mapping[str, Any], labels: Sequence[str], runs: Sequence[Run]) -> str:
    parts = ["# Paired contrasts across runs\n\n"]
    parts += [
        f"- {md_text(lab)}: `{md_text(str(r.path))}` (suite {md_text(str(r.suite.get('name')))})\n"
        for lab, r in zip(labels, runs)
    ]
    parts.append("\n" + " ".join(md_text(x) for x in cohort_lines(cohort)) + "\n\n")
    parts.append(C.contrasts_intro(an, md_text) + "\n\n")
    parts += [f"{line}\n\n" for line in T.resolution_lines(an.holm)]
    if not an.contrasts:
        parts.append("The contrasts file expands to no rows.\n")
        return "".join(parts)
    for fam, sig, rest in C.contrast_families(an):
        parts.append(f"## {md_text(fam)} ({len(sig) + len(rest)} contrasts, {len(sig)} with Holm p < {C.ALPHA:g})\n\n")
        for chunk in (sig, rest):
            if chunk:
                cols, body = C.contrasts_table(an, rows=chunk)
                parts.append(T.to_markdown(cols, body, align=["l"] + ["r"] * (len(cols) - 2) + ["l"]) + "\n")
    parts += C.gain_markdown(an, parts[-1])
    return "".join(parts)
