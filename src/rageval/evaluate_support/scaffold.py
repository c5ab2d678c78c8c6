"""``rageval new-metric NAME``: the files of a new diagnostic, ready for its definition (docs/architecture.md#add-a-diagnostic).

In a checkout (``--root``, default the current folder) it writes

* ``src/rageval/diagnostics/NAME.py`` — the pure function over ``predictions`` and ``references`` (the gold
  answers), undefined for a question without gold, and its scorer; one question's value is a stub
  (``_value``) to write;
* ``metrics/NAME/`` — the evaluate module (``NAME.py``, a :class:`~rageval.evaluate_support.modules.RagevalMetric`),
  its card ``README.md`` (definition, inputs, direction and range, degenerate cases, versions) completed as
  ``rageval export-metrics`` completes it, ``app.py`` and ``requirements.txt``;

and adds the two entries: the :class:`~rageval.diagnostics.specs.DiagnosticSpec` at the end of the catalog
(``src/rageval/diagnostics/catalog.py``; its output declares ``bounds=(0.0, 1.0)``) and the common-test case
in ``tests/test_common_modules.py`` (``CASES``), each above the line that marks the place.  Nothing is
overwritten: an existing name or file is an error, before anything is written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import click

from rageval.diagnostics.catalog import CATALOG, DiagnosticSpec, Output
from rageval.evaluate_support.export import render_folder

__all__ = ["CATALOG_MARK", "CASES_MARK", "new_metric", "new_metric_cmd", "spec_of"]

#: the line of the catalog above which an entry is added, and that of the common tests' cases
CATALOG_MARK = "    # `rageval new-metric NAME` adds its entry above this line"
CASES_MARK = "# `rageval new-metric NAME` adds its case above this line"
_NAME = re.compile(r"^[a-z][a-z0-9_]{1,40}$")
_BOUNDS = (0.0, 1.0)


def spec_of(name: str, summary: str) -> DiagnosticSpec:
    """The catalog entry the scaffold writes (an answer diagnostic over the gold answers, higher is better)."""
    return DiagnosticSpec(
        name=name,
        version="1.0.0",
        summary=summary,
        family="answer",
        function=f"rageval.diagnostics.{name}:{name}",
        outputs=(Output(name, "higher", bounds=_BOUNDS),),
        needs=("answers",),
        scorer=f"rageval.diagnostics.{name}:score_{name}",
    )


def _catalog_entry(spec: DiagnosticSpec) -> str:
    """:func:`spec_of`'s entry as the catalog's source writes it."""
    q = json.dumps
    return f"""\
    DiagnosticSpec(
        name={q(spec.name)},
        version={q(spec.version)},
        summary={q(spec.summary, ensure_ascii=False)},
        family={q(spec.family)},
        function={q(spec.function)},
        outputs=(Output({q(spec.name)}, "higher", bounds={_BOUNDS!r}),),
        needs=("answers",),
        scorer={q(spec.scorer)},
    ),
"""


def _case(name: str) -> str:
    return f"""\
# {name}: a question without gold answers is undefined; the values its definition implies go in its own tests
CASES["{name}"] = (
    {{"predictions": ["Paris", "Rome", "x", "the Nile"], "references": [["Paris"], ["Lyon"], [], ["Nile", "Amazon"]]}},
    {{}},
)
"""


def _function(name: str, summary: str) -> str:
    return f'''"""{name}: {summary}

Per question, :func:`_value` of the answer and its gold answers, in [0, 1] (the catalog declares the bounds);
undefined (None, counted in ``n_undefined``) for a question without gold answers; the mean is over the defined
questions.  Written by ``rageval new-metric``: write :func:`_value`, the definition in docs/design.md, and the
card (metrics/{name}/README.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rageval.diagnostics._common import check_list, check_same_length, check_str, check_str_list, summarize

__all__ = ["{name}", "score_{name}"]


def _value(prediction: str, references: list[str]) -> float | None:
    """{name} of one question: ``prediction`` against ``references`` (its gold answers, at least one), in [0, 1]."""
    raise NotImplementedError("{name}: write the value of one question (rageval new-metric wrote a stub)")


def {name}(predictions: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, Any]:
    """{summary}

    ``predictions``: one answer per question; ``references``: the gold answers per question.  A question without
    gold answers is undefined (None).
    """
    predictions = check_list(predictions, "predictions")
    references = check_list(references, "references")
    check_same_length(predictions=predictions, references=references)
    per_question: list[dict[str, Any]] = []
    for q, (prediction, gold) in enumerate(zip(predictions, references)):
        prediction = check_str(prediction, "predictions", q)
        gold = check_str_list(gold, "references", q)
        per_question.append({{"{name}": _value(prediction, gold) if gold else None}})
    return summarize(per_question, "{name}")


def score_{name}(inputs, options) -> dict[str, Any]:
    """The catalog's scorer: each record's answer against its gold answers."""
    return {name}([x.answer for x in inputs], [list(x.gold.answers) for x in inputs])
'''


def _module(name: str, summary: str) -> str:
    cls = "".join(part.capitalize() for part in name.split("_"))
    return f'''"""{name}: {summary}

A thin ``evaluate`` wrapper over :func:`rageval.diagnostics.{name}.{name}`.
"""

from typing import Any

import datasets
import evaluate

from rageval.evaluate_support import modules as _am

_DESCRIPTION = """\\
{summary}
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[str], one answer per question.
    references: list[list[str]], the gold answers per question.
Returns:
    {name}: the mean over the questions with gold answers, in [0, 1] (higher is better);
    n, n_undefined (questions without gold answers); per_question.
Examples:
    >>> m = evaluate.load("{name}")
    >>> r = m.compute(predictions=["Paris"], references=[[]])
    >>> r["{name}"], r["n"], r["n_undefined"]
    (None, 0, 1)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class {cls}(_am.RagevalMetric):
    NAME = "{name}"
    DESCRIPTION = _DESCRIPTION
    KWARGS = _KWARGS_DESCRIPTION
    REFERENCE_URLS = ()

    @staticmethod
    def FEATURES():
        return datasets.Features(
            {{
                "predictions": datasets.Value("string"),
                "references": datasets.List(datasets.Value("string")),
            }}
        )

    def _compute(self, predictions: list[str], references: list[list[str]]) -> dict[str, Any]:
        return self._score(locals())
'''


def _card(name: str, summary: str) -> str:
    return f"""\
# Metric card: {name}

version: 1.0.0 · direction: **higher is better** · range: [0, 1]

## Definition
{summary} Per question, a value in [0, 1] of the answer against its gold answers; the mean over the questions
with gold answers. (Write the definition here and in [design.md](../../docs/design.md#diagnostics).)

## Inputs
`predictions: list[str]` (one answer per question), `references: list[list[str]]` (the gold answers per
question).

## Degenerate cases
- A question without gold answers: undefined (None, counted in `n_undefined`), never 0.

## Versions
- 1.0.0 — first release.
"""


def _insert(path: Path, mark: str, text: str) -> str:
    source = path.read_text(encoding="utf-8")
    if source.count(mark + "\n") != 1:
        raise click.UsageError(f"{path}: the line {mark.strip()!r} (where new-metric adds its entry) is not there once")
    return source.replace(mark + "\n", text + mark + "\n")


def new_metric(name: str, root: Path, summary: str | None = None) -> list[Path]:
    """Write the new diagnostic ``name``'s files under the checkout ``root``; return the paths written or changed."""
    if not _NAME.match(name):
        raise click.UsageError(f"{name!r}: a diagnostic's name is lower-case letters, digits and _ (e.g. demo_metric)")
    if name in CATALOG:
        raise click.UsageError(f"{name!r} is already a diagnostic")
    summary = summary or f"{name} of the answer against the gold answers (to be defined)."
    function, folder = root / "src" / "rageval" / "diagnostics" / f"{name}.py", root / "metrics" / name
    catalog, cases = root / "src" / "rageval" / "diagnostics" / "catalog.py", root / "tests" / "test_common_modules.py"
    for path in (catalog, cases):
        if not path.is_file():
            raise click.UsageError(
                f"{root} is not a rageval checkout (no {path.relative_to(root)}): new-metric writes into a clone of "
                "rageval's repository; run it there or give --root the clone"
            )
    for path in (function, folder):
        if path.exists():
            raise click.UsageError(f"{path} exists: new-metric writes no file over another")
    spec = spec_of(name, summary)
    changed = {
        catalog: _insert(catalog, CATALOG_MARK, _catalog_entry(spec)),
        cases: _insert(cases, CASES_MARK, _case(name)),
    }
    folder.mkdir(parents=True)
    (folder / f"{name}.py").write_text(_module(name, summary), encoding="utf-8")
    (folder / "README.md").write_text(_card(name, summary), encoding="utf-8")
    CATALOG.add(spec)  # the card's generated parts (front matter, how to use, citation) read the entry
    try:
        files = render_folder(name, source=folder)
    finally:
        CATALOG.remove(name)
    for fname, text in files.items():
        (folder / fname).write_text(text, encoding="utf-8")
    function.write_text(_function(name, summary), encoding="utf-8")
    for path, text in changed.items():
        path.write_text(text, encoding="utf-8")
    return [function, *(folder / f for f in files), catalog, cases]


@click.command("new-metric")
@click.argument("name")
@click.option(
    "--root",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=".",
    show_default=True,
    help="The rageval checkout to write into.",
)
@click.option("--summary", default=None, help="One line saying what it measures (the catalog's summary).")
def new_metric_cmd(name: str, root: Path, summary: str | None) -> None:
    """Scaffold a diagnostic: its pure function, evaluate module, card, catalog entry and common-test case."""
    for path in new_metric(name, root, summary):
        click.echo(f"wrote {path}")
    click.echo(
        f"next: write _value in src/rageval/diagnostics/{name}.py, its definition in docs/design.md#diagnostics "
        "and its card, its sources in rageval/evaluate_support/bibtex.py (SOURCES); then run "
        "tests/test_common_modules.py and tests/test_module_contract.py"
    )
