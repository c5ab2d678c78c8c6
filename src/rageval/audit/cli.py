"""``rageval audit RUN_DIR --judge SPEC``: a second-evaluator audit of a run's citation scores."""

from __future__ import annotations

from pathlib import Path

import click

from rageval.cli.options import accept_edits_option, resamples_option, seed_option, threshold_option
from rageval.escape import echo

__all__ = ["audit_cmd", "audit_defaults", "echo_summary"]


def audit_defaults(run_dir: Path) -> dict:
    """The ``audit:`` section of the run's suite (from its manifest), or {} (a score run, an unreadable manifest:
    the audit itself then says what is wrong)."""
    from rageval.rundir.manifest import RunDir, RunDirError

    try:
        manifest = RunDir(run_dir).read_manifest()
    except RunDirError:
        return {}
    audit = manifest.suite.config.get("audit") if manifest.origin.kind == "suite" else None
    return dict(audit) if isinstance(audit, dict) else {}


def echo_summary(result: dict) -> None:
    echo(
        f"audit of {result['run']}: {len(result['questions'])} questions x {len(result['settings'])} settings "
        f"= {result['n_records']} records; second judge {result['second_judge']['spec']} "
        f"({', '.join(result['modes'])})"
    )
    for r in result["scores"]:
        if r["abstentions"] == "as_unsupported" and r["setting"] == "all audited settings":
            echo(
                f"  {r['evaluator']:<28} emitted P {_f(r['emitted_precision'])} R {_f(r['emitted_recall'])}   "
                f"grounded P {_f(r['grounded_precision'])} R {_f(r['grounded_recall'])}"
            )
    for r in result["agreement"]:
        if r["setting"] == "all audited settings" or len(result["settings"]) == 1:
            echo(f"  agreement {r['premise']}, {r['decision']}: {_f(r['rate'])} (kappa {_f(r['kappa'])}, n {r['n']})")
    holm = result.get("gaps_holm") or {}
    if holm:
        size = (holm.get("family_size") or {}).get("as_unsupported", 0)
        over = f" of {len(holm['runs'])} runs together" if holm.get("scope") == "runs" else ""
        n_sig = sum(
            1
            for r in result["gaps"]
            if r.get("planned")
            and r["abstentions"] == "as_unsupported"
            and r.get("p_holm") is not None
            and r["p_holm"] < 0.05
        )
        echo(f"  planned gaps: Holm over {size}{over}; {n_sig} with Holm p < 0.05 (abstentions as unsupported)")
    warning = (result.get("resolution") or {}).get("warning")
    if warning:
        echo(f"WARNING: {warning}")
    echo(f"tables: {result['files']['audit_md']}")


def _f(x) -> str:
    return "undefined" if x is None else f"{x:.3f}"


@click.command("audit")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--judge", default=None, help="The second judge (e.g. minilm, a model folder); default: the suite's audit.judge."
)
@click.option("--n", "n", type=click.IntRange(min=1), default=None, help="Questions in the subsample (default 100).")
@click.option(
    "--settings",
    default=None,
    help="Comma-separated settings to audit (default: the suite's audit.settings, else every setting).",
)
@click.option(
    "--mode",
    "modes",
    multiple=True,
    type=click.Choice(["fixed", "rerecover"]),
    help="fixed mappings and/or re-recovery (repeat; default: both).",
)
@seed_option(what="Subsample and resampling seed", default_help="the suite's seed")
@threshold_option(what="The second judge's threshold (default: the run's)")
@click.option(
    "--max-length",
    type=click.IntRange(min=8),
    default=None,
    help="Truncation of a model judge's input, in tokens (default: the suite's audit.params, else 512; "
    "the paper's TRUE audit: 4096).",
)
@click.option(
    "--judge-param",
    "judge_param",
    multiple=True,
    metavar="KEY=VALUE",
    help="Another option of the second judge, repeatable (batch_size=4, dtype=bfloat16, ...; as judge.params).",
)
@resamples_option()
@accept_edits_option()
def audit_cmd(
    run_dirs, judge, n, settings, modes, seed, threshold, max_length, judge_param, n_resamples, accept_edits
) -> None:
    """Rescore a seeded subsample's saved answers with a second judge (fixed mappings and re-recovery).

    Writes RUN_DIR/audit-<judge>/ (audit.md, audit.json, CSVs); the run's own records are only read. With several
    RUN_DIRs (rageval audit runs/asqa runs/qasper), the planned emitted - grounded gaps are Holm-adjusted over
    every run's together.
    """
    from rageval.audit.run import AuditError, AuditRequest, audit_runs
    from rageval.errors import ModelUnavailable
    from rageval.judges.spec import parse_judge_params

    try:
        given = parse_judge_params(judge_param)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--judge-param") from None
    if max_length is not None:
        given["max_length"] = max_length
    requests = []
    for run_dir in run_dirs:
        spec = audit_defaults(run_dir)
        chosen_judge = judge or spec.get("judge")
        if not chosen_judge:
            raise click.ClickException(
                f"no second judge: pass --judge (e.g. --judge minilm) or add audit: {{judge: ...}} to the suite of "
                f"{run_dir}"
            )
        chosen = [s.strip() for s in settings.split(",") if s.strip()] if settings else spec.get("settings")
        requests.append(
            AuditRequest(
                run_dir,
                chosen_judge,
                n=n or spec.get("n") or 100,
                settings=chosen,
                modes=tuple(modes) or tuple(spec.get("modes") or ("fixed", "rerecover")),
                seed=seed if seed is not None else spec.get("seed"),
                threshold=threshold if threshold is not None else spec.get("threshold"),
                # the suite's audit params are its audit judge's: another --judge starts from none of them
                judge_options={
                    **(dict(spec.get("params") or {}) if chosen_judge == spec.get("judge") else {}),
                    **given,
                },
                accept_edits=accept_edits,
            )
        )
    try:
        results = audit_runs(requests, n_resamples=n_resamples)
    except (AuditError, ModelUnavailable) as err:
        raise click.ClickException(str(err)) from None
    for result in results:
        echo_summary(result)
