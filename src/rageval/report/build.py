"""``build_report``: every statistic, table, plot and the HTML report of a run directory."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from rageval.diagnostics import contrasted_by_default
from rageval.io import write_text_atomic
from rageval.report import contrast_tables as C
from rageval.report import tables as T
from rageval.report import validity_tables as V
from rageval.report.analysis import _resolve_seed, analyze, holm_family_counts
from rageval.report.audit_section import load_audits
from rageval.report.examples import reference_setting
from rageval.report.explorer import ExplorerPass, explorer_data
from rageval.report.html import render_html
from rageval.report.load import Run, RunError, load_run
from rageval.report.page_figures import page_figures
from rageval.report.plot_cache import cached_plots
from rageval.report.plots import check_formats, constant_metrics, render_figures, unplotted_metrics
from rageval.report.result import Analysis, PageParts
from rageval.report.union import adjust_union, union_family_size
from rageval.rundir.claim import claim, mark_run, owned
from rageval.rundir.lock import OutDirLock, holds_out_dir
from rageval.rundir.manifest import RunDir

__all__ = ["build_report", "build_reports", "write_report_files"]


def _write(path: Path, text: str) -> Path:
    write_text_atomic(path, text)  # atomic, never through a link placed there, with the user's umask
    return path


def _run_counters(run_dir: Path) -> dict[str, Any]:
    """The newest of run_stats.json / rescore_stats.json (path-dependent counters, shown apart in the HTML)."""
    found = [p for p in (run_dir / "run_stats.json", run_dir / "rescore_stats.json") if p.is_file()]
    if not found:
        return {}
    newest = max(found, key=lambda p: p.stat().st_mtime_ns)
    try:
        return json.loads(newest.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return {}


def build_report(
    run_dir: str | Path,
    *,
    seed: int | None = None,
    n_resamples: int | str | None = None,
    out_dir: str | Path | None = None,
    plots: bool = True,
    holm: str | None = None,
    accept_edits: bool = False,
    human_labels: str | Path | None = None,
    figures: str | Sequence[str] | None = None,
    progress: bool = False,
) -> dict[str, Path]:
    """Rebuild the statistics and reports of ``run_dir`` from its records (no model calls).

    Reads ``records.jsonl`` and ``manifest.json``; writes into ``out_dir`` (default:
    ``run_dir``) ``summary.csv``/``.md``, ``contrasts.csv``/``.md``,
    ``validity.csv``/``.md``, ``reattribution_sweep.csv`` (when records carry a
    sweep), ``report.json`` (every number, machine readable) and ``report.html``
    (self-contained; it draws its own figures from their data).  ``figures``: the
    figure files to write besides (``"png,svg"``, ``["png"]``; default none: no
    ``frontier_*.png``/``.svg``, and matplotlib is not imported); ``plots=False``: no
    figure at all, in the page or as files.  ``seed`` defaults to the suite's
    seed (manifest ``suite.seed``); the same records and seed give byte-identical
    files.  ``n_resamples``: ``"auto"`` (the test's replicates sized for the Holm
    family), ``"paper"`` (10,000) or a count; default: the suite's
    ``statistics.resamples``, else ``auto`` (docs/statistics.md#resolution).  ``holm`` (``"suite"`` or ``"family"``) overrides the Holm scope the suite
    declares.  ``accept_edits``: records edited after rageval wrote them are read (not refused), and listed in
    the manifest (:func:`_note_edits`).  ``human_labels``: a filled label file of ``rageval label``: the
    judge-error correction (:mod:`rageval.report.ppi`) is added (``ppi.csv``/``.md``, ``report.json``'s ``ppi``,
    a section of ``report.html`` and its findings).  ``progress``: a bar of the records read, on standard error
    where it is a terminal (``rageval report`` shows it unless ``--no-progress``).  Returns ``{name: path}`` of what
    was written.

    Raises ``rageval.report.load.RunError`` (a ``ValueError``) for a run that cannot
    be reported honestly (records of different suites mixed, unknown settings in
    the contrasts, ...).
    """
    with _writing_into([run_dir] if out_dir is None else []) as claimed:
        # the explorer's data from the load's one checked pass over the records (each record parsed once)
        explorer: ExplorerPass | None = None

        def ride(settings: Sequence[Mapping[str, Any]], manifest: Mapping[str, Any]) -> Any:
            nonlocal explorer
            if not settings:  # the settings are those the records name: known after the pass (the page's own)
                return None
            names = [s["name"] for s in settings]
            explorer = ExplorerPass(
                names,
                None,  # the metrics shown: known after the pass
                seed=_resolve_seed(manifest.get("suite") or {}, seed),
                reference=reference_setting(settings, names),
                shown=contrasted_by_default,
            )
            return explorer.add

        run = load_run(run_dir, accept_edits=accept_edits, also=ride, progress=progress)
        if out_dir is None:
            _note_edits(run)
        m = union_family_size([holm_family_counts(run)], holm) if holm is not None else None
        an = analyze(run, seed=seed, n_resamples=n_resamples, family_size=m)
        if holm is not None:
            (an,) = adjust_union([an], scope=holm)
        if human_labels is not None:
            an = _with_ppi(run, an, human_labels)
        out = Path(out_dir) if out_dir is not None else run.path
        return write_report_files(
            run,
            an,
            out,
            plots=plots,
            figures=figures,
            explorer=_explorer_of(run, an, explorer) if explorer is not None else None,
            claimed=out.resolve() in claimed,
        )


def _with_ppi(run: Run, an: Any, human_labels: str | Path) -> Any:
    """``an`` with its judge-error correction from ``human_labels`` and the findings that read it."""
    from rageval.report.findings import with_findings
    from rageval.report.ppi import ppi_section

    return with_findings(replace(an, ppi=ppi_section(run, an, human_labels)))


def _note_edits(run: Run) -> None:
    """Record in the run's ``manifest.json`` the records read although edited (the report writes into the run,
    under its lock; a report into another ``--out`` shows them in its own files only)."""
    if run.accepted_edits is not None:
        RunDir(run.path).note_accepted_edits(run.accepted_edits)


@contextlib.contextmanager
def _writing_into(run_dirs: Sequence[str | Path]) -> Iterator[set[Path]]:
    """Hold the lock of each run directory the report is written into, and claim it, *before* its manifest and
    records are read: no writer changes them between the read and the report, and a link there is refused
    before anything is read through it.  (A run reported into another ``--out`` is only read: it may be
    read-only.)  Gives the directories claimed (resolved): claimed under the lock held throughout, they need no
    second claim before the report's files are written."""
    claimed: set[Path] = set()
    with contextlib.ExitStack() as stack:
        for d in run_dirs:
            if not Path(d).is_dir():
                continue  # not a run: reading it says so (a lock would create the folder)
            stack.enter_context(OutDirLock(Path(d), "rageval report"))
            if owned(Path(d)):  # else not a run: reading it says so (and the writer claims it, if it gets there)
                claim(d)
                claimed.add(Path(d).resolve())
        yield claimed


def build_reports(
    run_dirs: Sequence[str | Path],
    *,
    seed: int | None = None,
    n_resamples: int | str | None = None,
    plots: bool = True,
    holm: str | None = None,
    accept_edits: bool = False,
    figures: str | Sequence[str] | None = None,
    progress: bool = False,
) -> dict[Path, dict[str, Path]]:
    """The report of each run in its own directory, with Holm over the union of the runs' contrasts.

    ``holm``: ``"suite"`` (one family over every row of every run), ``"family"`` (one per
    family name across the runs) or None (the scope the runs declare; they must agree).
    The union and its family sizes are stated in every run's tables; under ``auto`` the
    test's replicates are sized for the union's largest family.  Returns
    ``{run dir: {name: path}}``.  ``plots``, ``figures`` and ``progress``: as :func:`build_report`.
    """
    with _writing_into(run_dirs) as claimed:
        return _build_reports(run_dirs, seed, n_resamples, plots, holm, accept_edits, figures, claimed, progress)


def _build_reports(
    run_dirs, seed, n_resamples, plots, holm, accept_edits=False, figures=None, claimed=frozenset(), progress=False
) -> dict[Path, dict[str, Path]]:
    runs = [load_run(d, accept_edits=accept_edits, progress=progress) for d in run_dirs]
    for r in runs:
        _note_edits(r)
    seen: dict[Path, str] = {}
    for r, d in zip(runs, run_dirs):
        key = r.path.resolve()
        if key in seen:
            raise RunError(f"run directory {str(d)!r} is given twice: each run enters the union once")
        seen[key] = str(d)
    # the union is the Holm family: under ``auto`` its size, known before any test, sizes every run's test
    m = union_family_size([holm_family_counts(r) for r in runs], holm)
    analyses = [analyze(r, seed=seed, n_resamples=n_resamples, family_size=m) for r in runs]
    analyses = adjust_union(analyses, scope=holm, names=[str(d) for d in run_dirs])
    return {
        r.path: write_report_files(r, an, r.path, plots=plots, figures=figures, claimed=r.path.resolve() in claimed)
        for r, an in zip(runs, analyses)
    }


@holds_out_dir("out", "rageval report")  # one writer per output directory (docs/suites.md#one-writer-per-directory)
def write_report_files(
    run: Run,
    an: Analysis,
    out: Path,
    *,
    plots: bool = True,
    figures: str | Sequence[str] | None = None,
    explorer: dict[str, Any] | None = None,
    claimed: bool = False,
) -> dict[str, Path]:
    """Every table, ``report.json`` and ``report.html`` of one analysed run into ``out``, and the figure files
    of the ``figures`` formats (``png``, ``svg``; default none: the page draws its own figures).

    ``out`` is claimed first (:func:`rageval.rundir.claim.claim`: no user's file of an output name, no link, a
    killed writer's temporary files removed); a fresh ``out`` gets rageval's marker (``cache/suite.json``).
    ``explorer``: the explorer's data when a pass already made it (:func:`_explorer_of`; default: a pass here);
    ``claimed``: ``out`` was claimed already, under the lock held since (:func:`_writing_into`)."""
    out.mkdir(parents=True, exist_ok=True)
    if not claimed:
        claim(out)
    if not owned(out):
        mark_run(out, str(run.suite.get("name") or run.path.name), run.suite.get("hash"))
    written: dict[str, Path] = {}

    written["summary_csv"] = _write(out / "summary.csv", T.to_csv(T.summary_columns(an), T.summary_rows(an)))
    written["summary_md"] = _write(out / "summary.md", T.summary_markdown(an))
    written["contrasts_csv"] = _write(out / "contrasts.csv", T.to_csv(C.contrast_columns(an), C.contrast_csv_rows(an)))
    written["contrasts_md"] = _write(out / "contrasts.md", C.contrasts_markdown(an))
    written["validity_csv"] = _write(out / "validity.csv", T.to_csv(V.VALIDITY_COLUMNS, V.validity_rows(an)))
    written["validity_md"] = _write(out / "validity.md", V.validity_markdown(an))
    if an.sweep:
        sweep_rows = [dict(r, threshold=f"{r['threshold']:g}") for r in an.sweep]
        written["sweep_csv"] = _write(out / "reattribution_sweep.csv", T.to_csv(T.sweep_columns(), sweep_rows))

    formats = check_formats(figures)
    if plots and formats:
        # the files on request only, drawn lazily (matplotlib imported here), and only when the analysis or the
        # plotting code changed since the files in ``out`` were drawn (in worker processes forked from this one
        # where that is safe: rageval.report.plots.render_figures)
        drawn, pareto_drawn, sweep_drawn = cached_plots(
            out, an, lambda: render_figures(an, out, formats=formats), formats=formats
        )
        for prefix, figs in (("frontier_", drawn), ("pareto_", pareto_drawn), ("", {"sweep": sweep_drawn})):
            for name, fig in figs.items():
                for fmt in formats:
                    if fig and fig.get(fmt):
                        written[f"{prefix}{name}_{fmt}"] = fig[fmt]

    if an.ppi:
        from rageval.report.ppi import ppi_csv, ppi_markdown

        written["ppi_csv"] = _write(out / "ppi.csv", ppi_csv(an.ppi))
        written["ppi_md"] = _write(out / "ppi.md", ppi_markdown(an.ppi))
    else:  # a report without labels leaves no correction of an earlier one beside it
        for name in ("ppi.csv", "ppi.md"):
            (out / name).unlink(missing_ok=True)
    written["report_json"] = _write(out / "report.json", an.to_json())
    page = _page_parts(run, an, plots=plots, explorer=explorer)
    html = render_html(an, page_figures(an) if plots else None, page=page)
    written["report_html"] = _write(out / "report.html", html)
    return written


def _explorer_metrics(metric_names: Sequence[str]) -> list[str]:
    """The metrics the explorer shows: the contrasted ones."""
    return [m for m in metric_names if contrasted_by_default(m)]


def _explorer_args(run: Run, an: Analysis) -> tuple[list[str], list[str], int, str | None]:
    """The explorer's settings, metrics, seed and reference for the analysis ``an`` of ``run``."""
    return list(run.setting_names), _explorer_metrics(an.metric_names), an.seed, an.examples.get("reference")


def _explorer_of(run: Run, an: Analysis, p: ExplorerPass) -> dict[str, Any] | None:
    """The data of the pass ``p`` made in the load's pass, when it saw every record with the arguments the page's
    own pass takes (else None: the page makes its pass)."""
    settings, metrics, seed, reference = _explorer_args(run, an)
    if (p.settings, p.seed, p.reference) != (settings, seed, reference) or p.n_total != len(run.records):
        return None
    if p.metric_keys is None:
        return p.result(metrics) if p.shown is not None and all(p.shown(k) for k in metrics) else None
    return p.result() if p.metric_keys == metrics else None


def _page_parts(run: Run, an: Analysis, *, plots: bool, explorer: dict[str, Any] | None = None) -> PageParts:
    """What the HTML page shows beside the analysis: the metrics the figures leave out (with the figures), the
    run's counters, the audits written into the run directory and the explorer's data (one pass over the
    records, unless ``explorer`` is that pass' data already)."""
    if explorer is None:
        settings, metrics, seed, reference = _explorer_args(run, an)
        explorer = explorer_data(run.records, settings, metrics, seed=seed, reference=reference)
    return PageParts(
        unplotted=tuple(unplotted_metrics(an)) if plots else (),
        constant_metrics=tuple(constant_metrics(an)) if plots else (),
        run_counters=_run_counters(run.path),
        audits=tuple(load_audits(run.path)),
        explorer=explorer,
    )
