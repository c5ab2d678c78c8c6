"""``rageval suite | validate``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from rageval.cli.options import (
    figures_option,
    human_labels_option,
    no_progress_option,
    non_blank,
    out_dir_value,
    records_file_option,
)
from rageval.escape import echo
from rageval.suite.config import SuiteError
from rageval.suite.load import load_suite


def _overrides(
    judge: str | None,
    reader: str | None,
    limit: int | None,
    judge_window: int | None = None,
    dataset_path: str | None = None,
) -> dict:
    """The command-line overrides as dotted suite keys (given means given: an empty value is refused earlier)."""
    out: dict = {}
    if dataset_path is not None:  # the command's path is the current directory's, not the suite file's
        out["dataset.path"] = str(Path(dataset_path).expanduser().absolute())
        out["dataset.sample"] = None
        out["dataset.hub_id"] = None
        out["dataset.hub_config"] = None  # the hub's options go with the hub source the file replaces
        out["dataset.split"] = None
    if judge is not None:
        out["judge.spec"] = judge
        out["judge.params"] = {}  # the suite's judge options belong to the suite's judge
    if judge_window is not None:
        out["judge.params.window"] = {"overlap": judge_window}
    if reader is not None:
        out["reader.backend"] = reader
        out["reader.params"] = {}
    if limit is not None:
        out["dataset.limit"] = limit
    return out


def _override_options(fn):
    """--judge, --judge-window, --reader, --limit, --dataset-path, --allow-unavailable: the same for `validate`
    and `suite`."""
    fn = click.option(
        "--dataset-path",
        "dataset_path",
        default=None,
        callback=non_blank,
        metavar="FILE",
        help="Read the dataset from FILE (sets dataset.path; e.g. ALCE's GTR file for suites/asqa_gtr.yaml).",
    )(fn)
    fn = click.option(
        "--allow-unavailable",
        is_flag=True,
        help="Mark settings whose model weights are missing as 'unavailable' instead of aborting.",
    )(fn)
    fn = click.option(
        "--limit", type=click.IntRange(min=1), default=None, help="Override dataset.limit (first N questions)."
    )(fn)
    fn = click.option(
        "--reader", default=None, callback=non_blank, help="Override the reader backend (e.g. 'extractive')."
    )(fn)
    fn = click.option(
        "--judge-window",
        "judge_window",
        type=click.IntRange(min=0),
        default=None,
        metavar="OVERLAP",
        help="Judge premises longer than a model judge's max_length in windows overlapping by OVERLAP tokens; "
        "support = the max over the windows (sets judge.params.window; docs/judges.md#long-evidence-windows).",
    )(fn)
    fn = click.option(
        "--judge", default=None, callback=non_blank, help="Override the judge (e.g. 'lexical', a local model path)."
    )(fn)
    return fn


_OFFLINE_FIX = (
    "to run without those weights: --judge lexical --reader extractive, and --allow-unavailable to mark "
    "compressors whose weights are missing as 'unavailable'"
)


@click.command("validate")
@click.argument("suite_file", type=click.Path())
@_override_options
def validate_cmd(suite_file: str, judge, judge_window, reader, limit, allow_unavailable, dataset_path) -> None:
    """Check a suite YAML without running it: everything a run would check before computing a record.

    The configuration (exit 2 when wrong), the dataset as the run reads it, the
    tokenizer, and every model the suite names, looked up locally (exit 1 when one
    is missing here; see docs/suites.md#validation).
    """
    from rageval.errors import ModelUnavailable
    from rageval.suite.checks import check_suite

    suite = load_suite(suite_file, **_overrides(judge, reader, limit, judge_window, dataset_path))
    found = check_suite(suite)
    if found.problems:
        raise SuiteError(f"{suite_file}: invalid suite:\n" + "\n".join(found.problems))
    names = suite.setting_names()
    questions = f" ({found.questions} questions)" if found.questions is not None else ""
    echo(
        f"{suite_file}: configuration ok — suite {suite.name!r}, dataset {suite.dataset.name}{questions}, "
        f"{len(names)} settings:"
    )
    for n in names:
        echo(f"  {n}")
    if found.diagnostics:
        echo(f"diagnostics: {', '.join(found.diagnostics)}")
    if suite.tokenizer != "regex":  # the budget unit (docs/suites.md#the-budget-unit)
        from rageval.text.tokenize import budget_unit

        unit = budget_unit(suite.tokenizer)
        detail = f", {unit['gguf_file']}" if "gguf_file" in unit else ""
        fallback = f" (in place of {unit['requested']!r}, which cannot be loaded here)" if "requested" in unit else ""
        echo(f"budget unit: {unit['tokenizer']} tokens ({unit['kind']}{detail}){fallback}")
    limits = sorted({n for n in suite.context_limits().values() if n is not None})
    if limits:
        echo(
            f"context limit: {', '.join(map(str, limits))} tokens (every setting's context, identity's too: "
            "over it, budget_check)"
        )
    for line in _plan_lines(suite):
        echo(line)
    for where, ref, problem, note in _grouped(found.models):
        echo(f"model {ref} ({where}): " + (f"NOT AVAILABLE: {problem}" if problem else (note or "found")))
    missing = found.unavailable(allow_unavailable)
    if missing:
        lines = [f"  {ref} ({where}): {' '.join(str(problem).split())}" for where, ref, problem, _ in _grouped(missing)]
        raise ModelUnavailable(
            f"{suite_file}: {len(lines)} model(s) the run needs cannot be loaded here:\n"
            + "\n".join(lines)
            + f"\n  fix: point them at local folders, or {_OFFLINE_FIX}"
        )


def _grouped(models) -> list[tuple[str, str, str | None, str]]:
    """One line per model: ``(the fields naming it, its reference, why it is unavailable, note)``."""
    out: dict[tuple, list[str]] = {}
    for m in models:
        out.setdefault((m.ref, m.problem, m.note), []).append(m.where)
    rows = []
    for (ref, problem, note), wheres in out.items():
        if len(wheres) > 1 and all(w.startswith("setting ") for w in wheres):
            wheres = ["settings " + ", ".join(w.removeprefix("setting ") for w in wheres)]
        rows.append((", ".join(wheres), ref, problem, note))
    return rows


def _plan_lines(suite) -> list[str]:
    """The contrast plan per family as the suite declares it (metrics named, or the default set)."""
    from rageval.stats.contrasts import expand_plan

    placeholder = "(default metrics)"
    settings = suite.setting_refs()
    plan = expand_plan(suite.contrasts, settings, default_metrics=(placeholder,))
    if not plan.rows:
        return ["contrasts: none declared"]
    lines = [f"contrasts (Holm scope: {plan.holm}):"]
    planned = [f for f in plan.families if f not in plan.separate]

    def family_line(fam: str, indent: str) -> str:
        rows = [r for r in plan.rows if r.family == fam]
        named = sum(r.metric_a != placeholder for r in rows)
        default = len(rows) - named
        what = "interactions" if rows and all(r.kind == "interaction" for r in rows) else "pairs"
        parts = ([f"{named} rows"] if named else []) + (
            [f"{default} {what} x the default metrics (every metric with a direction the records carry)"]
            if default
            else []
        )
        return f"{indent}{fam}: {' + '.join(parts)}"

    lines += [family_line(fam, "  ") for fam in planned]
    rows = [r for r in plan.rows if r.family in planned]
    named = sum(r.metric_a != placeholder for r in rows)
    if (len(planned) > 1 or plan.separate) and named == len(rows):
        one = ", one Holm family" if plan.holm == "suite" else ""
        lines.append(f"  total: {named} rows in {len(planned)} famil{'y' if len(planned) == 1 else 'ies'}{one}")
    if plan.separate:
        lines.append("  outside it (each adjusted on its own):")
        lines += [family_line(fam, "    ") for fam in plan.separate]
    return lines


@click.command("suite")
@click.argument("suite_file", type=click.Path())
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    callback=out_dir_value,
    help="Output directory (default: the suite's output_dir).",
)
@_override_options
@click.option(
    "--retry-failed/--no-retry-failed",
    default=True,
    show_default=True,
    help="Compute cached records that failed transiently (reader_error, judge_error) again.",
)
@no_progress_option()
@figures_option()
@records_file_option()
@human_labels_option()
@click.option(
    "--ray",
    "ray_address",
    is_flag=False,
    flag_value="local",
    default=None,
    metavar="[ADDRESS]",
    help="Scale out on Ray (pip install 'rageval[ray]'): questions in Ray tasks, judge calls on Ray actors, this "
    "process writing every file; the same outputs. Alone: a local Ray instance (or RAY_ADDRESS); else a cluster "
    "address ('auto', 'ray://head:10001'). See docs/scale.md.",
)
@click.option(
    "--ray-judges",
    type=click.IntRange(min=1),
    default=None,
    help="With --ray: number of judge actors (default: one per GPU for a torch judge, else one per 4 CPUs).",
)
def suite_cmd(
    suite_file,
    out_dir,
    judge,
    judge_window,
    reader,
    limit,
    allow_unavailable,
    dataset_path,
    retry_failed,
    no_progress,
    figures,
    records_file,
    ray_address,
    ray_judges,
    human_labels=None,
) -> None:
    """Run a suite YAML: every question x setting, cached and resumable (--ray: scaled out on Ray).

    SUITE_FILE is a suite's YAML file or the name of a shipped suite ('rageval suite demo': the demo on shipped
    data, offline)."""
    from rageval.data import DataUnavailable
    from rageval.errors import ModelUnavailable
    from rageval.suite.run import run_suite

    suite = load_suite(suite_file, **_overrides(judge, reader, limit, judge_window, dataset_path))
    try:
        result = run_suite(
            suite,
            out_dir,
            allow_unavailable=allow_unavailable,
            progress=not no_progress,
            retry_failed=retry_failed,
            ray=ray_address,
            ray_judges=ray_judges,
            human_labels=human_labels,
            figures=figures,
            records_file=records_file,
        )
    except (ModelUnavailable, DataUnavailable) as err:  # user-facing (exit 1), with the offline fix
        raise type(err)(f"{' '.join(str(err).split())}; {_OFFLINE_FIX}") from None
    _summary(result)
    _fail_if_nothing_scored(result)
    if suite.audit is not None:
        _suite_audit(result.out_dir, suite, allow_unavailable, human_labels, figures)


def _suite_audit(out_dir, suite, allow_unavailable: bool, human_labels=None, figures=None) -> None:
    """The suite's ``audit:`` section, run after the report, which is then rebuilt with the audit's section
    (docs/statistics.md#second-evaluator-audit)."""
    from rageval.audit.cli import echo_summary
    from rageval.audit.run import AuditError, run_audit
    from rageval.errors import ModelUnavailable

    a = suite.audit
    try:
        result = run_audit(
            out_dir,
            a.judge,
            n=a.n,
            settings=a.settings,
            modes=tuple(a.modes),
            seed=a.seed,
            threshold=a.threshold,
            judge_options=a.params,
        )
    except ModelUnavailable as err:
        msg = f"audit: second judge {a.judge!r} is unavailable ({' '.join(str(err).split())})"
        if not allow_unavailable:
            raise click.ClickException(f"{msg}; run it later with: rageval audit {out_dir} --judge <a judge>") from None
        echo(f"{msg}: skipped; run it later with: rageval audit {out_dir} --judge <a judge>")
        return
    except AuditError as err:
        raise click.ClickException(f"audit: {err}") from None
    echo_summary(result)
    from rageval.report import build_report
    from rageval.suite.run import report_figures

    # again, now with the audit's section (its figure files, where asked for, cached: reused)
    written = build_report(out_dir, figures=report_figures(suite, figures), human_labels=human_labels)
    echo(f"report (with the audit): {written['report_html']}")


def _summary(result) -> None:
    """What the run did, the judge, the headline table and the findings, and the report's path last (every line
    at most 100 characters: rageval.report.console.say)."""
    from rageval.report.console import echo_headline, echo_holm, say
    from rageval.report.headline import run_summary
    from rageval.rundir.manifest import RunDir

    counts = ", ".join(f"{k}: {v}" for k, v in sorted(result.status_counts.items()))
    say(f"{result.n_records} records ({counts}); {result.computed} computed, {result.reused} reused from cache")
    if result.retried or result.quarantined:
        say(
            f"{result.retried} cached failures (reader_error, judge_error) computed again; "
            f"{result.quarantined} unreadable cache files moved to {result.out_dir / 'cache' / 'quarantine'}"
        )
    for name, c in getattr(result, "over_budget", {}).items():
        say(
            f"over the budget: {name}: {c['records']} record(s), up to {c['max']} tokens over; {c['ok']} of them ok "
            "(a best-effort budget: counted, not budget_check)"
        )
    for name, n in getattr(result, "truncated", {}).items():
        say(f"truncated: {name}: {n} answer(s) cut at the reader's max_tokens (kept, extra.truncated)")
    for name, c in getattr(result, "context_failures", {}).items():
        counts = ", ".join(f"{n} {status}" for status, n in c.items() if n)
        say(f"context too long: {name}: {counts} (out of the common cohort; docs/suites.md#context-limit)")
    for line in _cohort_lines(result.report.get("report_json") if result.report else None):
        say(line)
    report = result.report.get("report_html") if result.report else None
    echo(f"records: {RunDir(result.out_dir).records_shown()}")
    echo(f"summary: {result.out_dir / 'summary.md'}")
    report_json = result.report.get("report_json") if result.report else None
    if report_json:
        echo_holm(report_json)
    if result.n_records:
        echo_headline(run_summary(result.out_dir, report_json))
    if report:
        echo(f"report: {report}")  # the last line (an audit's rebuilt report follows it)


def _fail_if_nothing_scored(result) -> None:
    """Exit 3 (after the summary; records and report kept) when no record is ok or the common cohort is empty."""
    from rageval.errors import NothingScored
    from rageval.report.console import nothing_scored

    report_json = result.report.get("report_json") if result.report else None
    problem = nothing_scored(result.status_counts, Path(report_json) if report_json else None)
    if problem is not None:
        raise NothingScored(problem)


def _cohort_lines(report_json) -> list[str]:
    """The common cohort's size and the settings left out of it (docs/design.md#common-cohort), from report.json."""
    if not report_json:
        return []
    from rageval.report.tables import left_out_line

    an = json.loads(Path(report_json).read_text(encoding="utf-8"))
    c = an["cohort"]
    lines = [f"common cohort: {c['n']} of {c['n_questions']} questions ok in every setting that ran"]
    gone = left_out_line(c)
    if gone:
        lines.append(gone.replace("`", ""))
    return lines
