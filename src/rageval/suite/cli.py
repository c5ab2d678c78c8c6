"""``rageval suite | validate | rescore``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from rageval.suite.config import SuiteError, load_suite
from rageval.suite.rescore import rescore


def _overrides(judge: str | None, reader: str | None, limit: int | None) -> dict:
    out = {}
    if judge:
        out["judge.spec"] = judge
    if reader:
        out["reader.backend"] = reader
        out["reader.params"] = {}
    if limit:
        out["dataset.limit"] = limit
    return out


@click.command("validate")
@click.argument("suite_file", type=click.Path(dir_okay=False))
def validate_cmd(suite_file: str) -> None:
    """Check a suite YAML without running it."""
    try:
        suite = load_suite(suite_file)
    except SuiteError as err:
        raise click.ClickException(str(err)) from None
    names = suite.setting_names()
    click.echo(f"{suite_file}: ok — suite {suite.name!r}, dataset {suite.dataset.name}, {len(names)} settings:")
    for n in names:
        click.echo(f"  {n}")
    for line in _plan_lines(suite):
        click.echo(line)


def _plan_lines(suite) -> list[str]:
    """The contrast plan per family as the suite declares it (metrics named, or the default set)."""
    from rageval.report.contrasts import expand_plan

    placeholder = "(default metrics)"
    settings = [{"name": n, "compressor": c, "budget": b} for n, c, b, _ in suite.expand_settings()]
    plan = expand_plan(suite.contrasts, settings, default_metrics=(placeholder,))
    if not plan.rows:
        return ["contrasts: none declared"]
    lines = [f"contrasts (Holm scope: {plan.holm}):"]
    for fam in plan.families:
        rows = [r for r in plan.rows if r.family == fam]
        named = sum(r.metric_a != placeholder for r in rows)
        default = len(rows) - named
        parts = ([f"{named} rows"] if named else []) + (
            [f"{default} pairs x the default metrics (every metric with a direction the records carry)"]
            if default
            else []
        )
        lines.append(f"  {fam}: {' + '.join(parts)}")
    return lines


@click.command("suite")
@click.argument("suite_file", type=click.Path(dir_okay=False))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Output directory (default: the suite's output_dir).",
)
@click.option("--judge", default=None, help="Override the judge (e.g. 'lexical', a local model path).")
@click.option("--reader", default=None, help="Override the reader backend (e.g. 'extractive').")
@click.option("--limit", type=int, default=None, help="Override dataset.limit (first N questions).")
@click.option(
    "--allow-unavailable",
    is_flag=True,
    help="Mark settings whose model weights are missing as 'unavailable' instead of aborting.",
)
@click.option(
    "--retry-failed/--no-retry-failed",
    default=True,
    show_default=True,
    help="Compute cached records that failed transiently (reader_error, judge_error) again.",
)
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def suite_cmd(suite_file, out_dir, judge, reader, limit, allow_unavailable, retry_failed, no_progress) -> None:
    """Run a suite YAML: every question x setting, cached and resumable."""
    from rageval.suite.runner import RunDirError, run_suite

    try:
        suite = load_suite(suite_file, **_overrides(judge, reader, limit))
    except SuiteError as err:
        raise click.ClickException(str(err)) from None
    try:
        result = run_suite(
            suite,
            out_dir,
            allow_unavailable=allow_unavailable,
            progress=not no_progress,
            retry_failed=retry_failed,
        )
    except (RunDirError, ValueError, FileNotFoundError) as err:
        raise click.ClickException(str(err)) from None
    except Exception as err:
        from rageval.data import DataUnavailable
        from rageval.errors import ModelUnavailable

        if isinstance(err, (ModelUnavailable, DataUnavailable)):
            raise click.ClickException(
                f"{err}\nTo run without those weights: --judge lexical --reader extractive, and "
                "--allow-unavailable to mark compressors whose weights are missing as 'unavailable'."
            ) from None
        raise
    _summary(result)


def _summary(result) -> None:
    counts = ", ".join(f"{k}: {v}" for k, v in sorted(result.status_counts.items()))
    click.echo(f"{result.n_records} records ({counts}); {result.computed} computed, {result.reused} reused from cache")
    if result.retried or result.quarantined:
        click.echo(
            f"{result.retried} cached failures (reader_error, judge_error) computed again; "
            f"{result.quarantined} unreadable cache files moved to {result.out_dir / 'cache' / 'quarantine'}"
        )
    report = result.report.get("report_html") if result.report else None
    click.echo(f"records: {result.out_dir / 'records.jsonl'}")
    if report:
        click.echo(f"report: {report}")
    else:
        click.echo(f"summary: {result.out_dir / 'summary.md'}")
    report_json = result.report.get("report_json") if result.report else None
    if report_json:
        from rageval.report.cli import echo_holm

        echo_holm(report_json)


@click.command("rescore")
@click.argument("run_dir", type=click.Path(file_okay=False, exists=True))
@click.option("--judge", default=None, help="Rescore with another judge (default: the run's).")
def rescore_cmd(run_dir: str, judge: str | None) -> None:
    """Recompute every metric of a run directory from its saved records (no generation)."""
    from rageval.errors import ModelUnavailable

    try:
        n = rescore(Path(run_dir), judge=judge)
    except (ValueError, FileNotFoundError, ModelUnavailable) as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"rescored {n} records in {run_dir}")
