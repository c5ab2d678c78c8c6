"""``rageval calibrate [FILE]``: a judge against human labels (WiCE support; ALCE's human citation judgments).

The command only; :mod:`rageval.calibrate.run` builds the judge and scores the file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import click

from rageval.cli.options import threshold_option
from rageval.errors import ConfigError, ModelUnavailable
from rageval.escape import echo
from rageval.io import json_text, write_text_atomic
from rageval.scoring import DEFAULT_JUDGE, DEFAULT_THRESHOLD

__all__ = ["calibrate_cmd", "parse_judge_params"]


@click.command("calibrate")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["wice", "alce-human"]),
    default="wice",
    show_default=True,
    help="wice: claim-level support labels (JSON lines); alce-human: ALCE's human citation evaluation (JSON).",
)
@click.option(
    "--judge",
    "judge",
    default=DEFAULT_JUDGE,
    show_default=True,
    help="Judge spec: lexical, minilm, replay:<path>, a model folder or hub id (nli:/seq2seq: prefixes), "
    "openai:<model>@<base_url> (an OpenAI-compatible server).",
)
@click.option(
    "--data",
    "data",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="WiCE-format JSON lines (default: the shipped WiCE claim dev sample).",
)
@threshold_option(default=DEFAULT_THRESHOLD)
@click.option(
    "--premise",
    default="bm25",
    show_default=True,
    type=click.Choice(["bm25", "full"]),
    help="bm25: top-k evidence sentences for the claim; full: the whole page.",
)
@click.option(
    "--k", "k", default=5, show_default=True, type=click.IntRange(1), help="Evidence sentences for --premise bm25."
)
@click.option("--limit", default=None, type=click.IntRange(1), help="Score only the first N rows.")
@click.option(
    "--dtype",
    default=None,
    type=click.Choice(["float32", "bfloat16", "float16"]),
    help="Weights dtype of a model judge (bfloat16: opt-in, faster on CPUs/GPUs with bf16 units).",
)
@click.option(
    "--max-length",
    default=512,
    show_default=True,
    type=click.IntRange(8),
    help="Truncation of a model judge's input, in tokens (truncated pairs are counted).",
)
@click.option(
    "--judge-param",
    "judge_param",
    multiple=True,
    metavar="KEY=VALUE",
    help="A judge's own option, repeatable (openai: --judge-param model=M --judge-param base_url=URL; "
    "numbers, true/false and null are read as such).",
)
@click.option("--cache-dir", default=None, type=click.Path(file_okay=False), help="Judge cache folder.")
@click.option(
    "--json", "json_out", default=None, type=click.Path(dir_okay=False), help="Also write the figures as JSON."
)
def calibrate_cmd(
    file, fmt, judge, data, threshold, premise, k, limit, dtype, max_length, judge_param, cache_dir, json_out
):
    """Score a judge against human labels: WiCE support (accuracy, balanced accuracy, AUROC), or, with
    --format alce-human FILE, ALCE's human citation judgments (agreement and Cohen's kappa of the citation gate).
    """
    from rageval.calibrate.run import run_calibration  # the implementation (numpy, scipy, the judge)

    if file and data:
        raise click.ClickException("give the data file once: as FILE or with --data, not both")
    params = parse_judge_params(judge_param)
    with _input_errors():
        text, result = run_calibration(
            fmt,
            file or data,
            judge=judge,
            threshold=threshold,
            premise=premise,
            k=k,
            limit=limit,
            dtype=dtype,
            max_length=max_length,
            cache_dir=cache_dir,
            judge_params=params,
        )
    _emit(text, result, json_out)


@contextlib.contextmanager
def _input_errors() -> Iterator[None]:
    """A bad data file or judge option is the command's one-line error; an input file rageval cannot read
    (a :class:`~rageval.errors.ConfigError`) keeps the CLI's own line and exit 2."""
    try:
        yield
    except ConfigError:
        raise
    except (ValueError, FileNotFoundError, ModelUnavailable) as err:  # a judge that cannot be loaded: exit 1
        raise click.ClickException(str(err)) from err


def _emit(text: str, result: dict[str, Any], json_out: str | None) -> None:
    """Print the report; with ``--json``, also write the figures (atomically, through :mod:`rageval.io`)."""
    echo(text)
    if json_out:
        write_text_atomic(json_out, json_text(result, sort_keys=False, indent=2))


def parse_judge_params(items: Sequence[str]) -> dict[str, Any]:
    """``--judge-param KEY=VALUE`` options as a dict (:func:`rageval.judges.spec.parse_judge_params`).

    >>> parse_judge_params(["model=llama3:8b", "base_url=http://127.0.0.1:8000/v1", "concurrency=4", "logprobs=false"])
    {'model': 'llama3:8b', 'base_url': 'http://127.0.0.1:8000/v1', 'concurrency': 4, 'logprobs': False}
    """
    from rageval.judges.spec import parse_judge_params as parse

    try:
        return parse(items)
    except ValueError as err:
        raise click.BadParameter(
            str(err).removeprefix("--judge-param").lstrip(": "), param_hint="--judge-param"
        ) from None
