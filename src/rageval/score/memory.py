"""``rageval.evaluate(data, ...)``: score rows held in memory — a ``datasets.Dataset``, a pandas ``DataFrame`` or a
list of dicts, in any layout ``rageval score`` reads — and get the run back as tables (docs/score.md#in-memory).

It is ``rageval score`` on those rows: each input is written, as it is, to a temporary JSON Lines file (an ALCE or
RAGChecker document, or rows given with ``format="alce"``/``"ragchecker"``, to a JSON file in that peer's layout),
and the command's own body (:func:`rageval.score.cli.score_inputs`) scores the files, with the keywords parsed
by the command's own option declarations (the same defaults, the same checks).  So the records, ``summary.csv``
and ``contrasts.csv`` are those ``rageval score`` writes for the same rows in a file, and the run directory is
one that ``rageval report``, ``rescore`` and ``audit`` read.

A Dataset or a DataFrame cannot leave a field out of one row (Arrow fills it with None, pandas with NaN), so in
every in-memory input a field whose value is None or NaN is absent, in any object of a row; numpy values are
written as the Python values they hold.

>>> import rageval
>>> rows = [{"id": "q1", "question": "Who wrote Hamlet?", "answer": "Shakespeare.", "answers": ["Shakespeare"]}]
>>> result = rageval.evaluate(rows)
>>> float(result.summary.loc["data", "answer_em"]), result.scores["data"]["q1"]["answer_em"]
(1.0, 1.0)
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sys
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rageval.data.formats.layout import ScoreInputError
from rageval.data.formats.registry import Peek, detection_order, sniffer
from rageval.score.cli import score_cmd, score_inputs
from rageval.score.run import ScoreResult

if TYPE_CHECKING:  # pragma: no cover - types only: pandas is imported when a table is asked for
    import pandas as pd

__all__ = ["DEFAULT_NAME", "Evaluation", "evaluate"]

#: the setting name of one unnamed in-memory input whose rows carry no ``system``
DEFAULT_NAME = "data"

#: ``rageval score``'s option declarations, by parameter name
_PARAMS: dict[str, click.Parameter] = {p.name: p for p in score_cmd.params if p.name}
#: evaluate's keyword -> the parameter of ``rageval score`` it is (flags that invert: ``report``, ``progress``)
_KEYWORDS = {
    "format": "fmt",
    "map": "mapping",
    "split": "split",
    "judge": "judge",
    "threshold": "threshold",
    "citations": "citations",
    "max_citations": "max_citations",
    "diagnostics": "diagnostics",
    "baseline": "baseline",
    "all_pairs": "all_pairs",
    "tokenizer": "tokenizer",
    "grounding": "grounding",
    "k": "retrieval_k",
    "seed": "seed",
    "resamples": "n_resamples",
}
#: the options of ``rageval score`` evaluate has no keyword for (a console's, or its inputs' and output's own)
CLI_ONLY = (
    "files", "out_dir", "no_report", "figures", "no_progress", "schema", "as_json", "example", "human_labels",
    "records_file",
)  # fmt: skip


def _default(param: str) -> Any:
    """The default ``rageval score`` declares for ``param``."""
    return _PARAMS[param].get_default(click.Context(score_cmd))


def _parsed(values: Mapping[str, Any]) -> dict[str, Any]:
    """evaluate's keywords as ``rageval score``'s parameters, each parsed and checked by its option declaration."""
    ctx = click.Context(score_cmd)
    out: dict[str, Any] = {}
    for kw, value in values.items():
        param = _PARAMS[_KEYWORDS[kw]]
        if kw == "map" and isinstance(value, Mapping):
            value = tuple(f"{k}={v}" for k, v in value.items())
        elif kw == "map" and isinstance(value, str):
            value = (value,)
        elif kw == "diagnostics" and not isinstance(value, str):
            value = ",".join(value)
        try:
            out[param.name or kw] = param.process_value(ctx, value)
        except click.BadParameter as err:
            raise ScoreInputError(f"evaluate({kw}={value!r}): {err.message}") from None
    return out


# ---------------------------------------------------------------------------------------------------- the inputs


def _plain(value: Any) -> Any:
    """``value`` with numpy arrays and scalars as Python values, and every None or NaN value of an object left
    out (module doc)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items() if not _absent(v)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if np is not None and isinstance(value, np.generic):
        return value.item()
    return value


def _absent(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _of_type(value: Any, module: str, name: str) -> bool:
    """Whether ``value`` is a ``module.name`` — only when ``module`` is imported already (nothing is imported)."""
    mod = sys.modules.get(module)
    cls = getattr(mod, name, None) if mod is not None else None
    return cls is not None and isinstance(value, cls)


def _rows(data: Any, split: str | None, where: str) -> list[Any] | Mapping[str, Any]:
    """The rows of one in-memory input (or the peer's document it is), as Python values."""
    if _of_type(data, "datasets", "DatasetDict"):
        if split is not None:
            if split not in data:
                raise ScoreInputError(f"{where}: has splits {sorted(data)}, not {split!r}")
            data = data[split]
        elif len(data) == 1:
            data = next(iter(data.values()))
        else:
            raise ScoreInputError(f"{where}: has splits {sorted(data)}; choose one with split=")
    elif split is not None and not isinstance(data, (str, os.PathLike)):
        raise ScoreInputError(f"{where}: split= chooses a split of a DatasetDict or of an hf:<id> source")
    if _of_type(data, "datasets", "Dataset"):
        return [_plain(r) for r in data.to_list()]
    if _of_type(data, "pandas", "DataFrame"):
        return [_plain(r) for r in data.to_dict(orient="records")]
    if isinstance(data, Mapping):
        return _plain(data)
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        rows = [_plain(r) for r in data]
        bad = next((i for i, r in enumerate(rows) if not isinstance(r, Mapping)), None)
        if bad is not None:
            raise ScoreInputError(f"{where} row {bad + 1}: expected a dict, got {type(data[bad]).__name__}")
        return rows
    raise ScoreInputError(
        f"{where}: expected a datasets.Dataset, a pandas DataFrame, a list of dicts or a file's path, "
        f"got {type(data).__name__}"
    )


def _is_document(value: Any) -> bool:
    """Whether a dict is one input (a peer's document: an ALCE result, a RAGChecker file, one row) rather than
    named inputs: a registered format's sniffer recognises it, as ``--format auto`` would the file."""
    peek = Peek("<memory>", Path("<memory>"), value)
    return any((sniff := sniffer(name)) is not None and sniff(peek) for name in detection_order())


#: the formats whose file is one JSON document holding the rows under a key (rows given alone are wrapped)
_DOCUMENT_KEY = {"alce": "data", "ragchecker": "results"}


#: a setting name that is the written file's name too (else ``input-<k>``)
_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\- ]{0,99}")


def _write(rows: list[Any] | Mapping[str, Any], fmt: str, folder: Path, k: int, label: str | None, where: str) -> Path:
    """One input's file, in the layout ``rageval score`` reads: JSON lines for rows, a JSON document for a peer's
    document (or rows of ``alce``/``ragchecker``, put under its key)."""

    def dumps(value: Any) -> str:
        try:
            return json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise ScoreInputError(f"{where}: a value that cannot be written as JSON ({err})") from None

    if isinstance(rows, list) and fmt in _DOCUMENT_KEY:
        rows = {_DOCUMENT_KEY[fmt]: rows}
    stem = label if label and _FILE_NAME.fullmatch(label) else f"input-{k}"  # the notes name the file
    if isinstance(rows, Mapping):
        path = folder / f"{stem}.json"
        path.write_text(dumps(rows) + "\n", encoding="utf-8")
    else:
        if not rows:
            raise ScoreInputError(f"{where}: no rows")
        path = folder / f"{stem}.jsonl"
        path.write_text("".join(dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _is_file(data: Any) -> bool:
    return isinstance(data, (str, os.PathLike))


def _inputs(data: Any, name: str | None, fmt: str, split: str | None, folder: Path) -> list[str]:
    """``rageval score``'s inputs (``NAME=FILE``) for ``data``, each in-memory input written into ``folder``."""
    named: list[tuple[str | None, Any]]
    if isinstance(data, Mapping) and not _of_type(data, "datasets", "DatasetDict") and not _is_document(data):
        if name is not None:
            raise ScoreInputError("name= names one input; a dict of inputs is named by its keys")
        if not data:
            raise ScoreInputError("evaluate: an empty dict: give rows, or a dict of setting name -> rows")
        named = [(str(k), v) for k, v in data.items()]
    else:
        named = [(name if name is not None or _is_file(data) else DEFAULT_NAME, data)]
    out = []
    for k, (label, value) in enumerate(named, start=1):
        if label is not None and (not label.strip() or "/" in label or "=" in label):
            raise ScoreInputError(f"setting name {label!r}: give a non-blank name without '/' or '='")
        where = f"input {label!r}" if label is not None else "the input"
        if _is_file(value):  # a file, or hf:<id>, read by rageval score itself
            src = os.fspath(value)
        else:
            src = str(_write(_rows(value, split, where), fmt, folder, k, label, where))
        out.append(f"{label}={src}" if label is not None else src)
    return out


# ---------------------------------------------------------------------------------------------------- the result


@dataclass
class Evaluation:
    """What :func:`evaluate` returns: the run directory ``rageval score`` wrote (:attr:`out_dir`; a temporary one,
    removed with this object, unless ``out=`` was given — :meth:`save` keeps it) and its tables.

    :attr:`summary` (``summary.csv``: one row per setting) and :attr:`contrasts` (``contrasts.csv``; None with one
    setting) are pandas DataFrames, None when ``report=False``; :attr:`records` is one row per record (setting,
    question id, status, then every metric), :attr:`scores` the same as ``{setting: {id: {metric: value}}}``,
    keyed by the ids of the rows (lines without an id: ``#1``, ``#2``, ...; docs/score.md#settings-and-matching).
    """

    out_dir: Path
    settings: list[str]
    notes: list[str]
    status_counts: dict[str, int]
    report: dict[str, Any]
    result: ScoreResult = field(repr=False)
    _rerun: Any = field(default=None, repr=False)  # score the same inputs into another folder (save)

    def _table(self, name: str) -> pd.DataFrame | None:
        path = self.out_dir / name
        if not self.report or not path.is_file():
            return None
        import pandas as pd

        frame = pd.read_csv(path, na_values=["NA"], keep_default_na=False, dtype={"setting": str})
        return frame.set_index("setting") if "setting" in frame.columns else frame

    @property
    def summary(self) -> pd.DataFrame | None:
        """``summary.csv`` indexed by setting (NA: NaN), None without a report."""
        return self._table("summary.csv")

    @property
    def contrasts(self) -> pd.DataFrame | None:
        """``contrasts.csv`` (one row per contrast), None with one setting or without a report."""
        return self._table("contrasts.csv") if len(self.settings) > 1 else None

    def _records(self) -> list[dict[str, Any]]:
        from rageval.report.load import load_run

        return list(load_run(self.out_dir, slim=True, command="rageval.evaluate").records)

    @property
    def scores(self) -> dict[str, dict[str, dict[str, Any]]]:
        """``{setting: {question id: {metric: value}}}`` (None: undefined), in the run's order."""
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for rec in self._records():
            out.setdefault(_setting_name(rec), {})[str(rec["question_id"])] = dict(rec.get("metrics") or {})
        return out

    @property
    def records(self) -> pd.DataFrame:
        """One row per record: ``setting``, ``id``, ``status``, then each metric (undefined: NaN)."""
        import pandas as pd

        rows = [
            {"setting": _setting_name(r), "id": str(r["question_id"]), "status": r.get("status"), **r["metrics"]}
            for r in self._records()
        ]
        return pd.DataFrame(rows).set_index(["setting", "id"])

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the run directory (records, manifest, cache and, unless ``report=False``, the report) to
        ``path``: the same inputs scored there by ``rageval score``'s path, every record reused from this run's
        cache (nothing is scored again) when ``path`` is new or empty.  Returns ``path``."""
        dest = Path(path)
        if dest.exists() and self.out_dir.exists() and dest.resolve() == self.out_dir.resolve():
            return dest
        if not dest.exists() or (dest.is_dir() and not any(dest.iterdir())):  # a user's folder is never marked
            shutil.copytree(self.out_dir / "cache", dest / "cache", dirs_exist_ok=True)
        self._rerun(dest)
        return dest


def _setting_name(rec: Mapping[str, Any]) -> str:
    setting = rec.get("setting")
    return str(setting.get("name") if isinstance(setting, Mapping) else setting)


# ---------------------------------------------------------------------------------------------------- evaluate


def evaluate(
    data: Any,
    *,
    name: str | None = None,
    out: str | os.PathLike[str] | None = None,
    format: str = _default("fmt"),  # rageval score --format
    map: Mapping[str, str] | Sequence[str] = (),  # rageval score --map
    split: str | None = _default("split"),
    judge: str = _default("judge"),
    threshold: float = _default("threshold"),
    citations: str = _default("citations"),
    max_citations: int = _default("max_citations"),
    diagnostics: str | Sequence[str] = _default("diagnostics"),
    baseline: str | None = _default("baseline"),
    all_pairs: bool = _default("all_pairs"),
    tokenizer: str = _default("tokenizer"),
    grounding: str = _default("grounding"),
    k: int | None = _default("retrieval_k"),
    seed: int = _default("seed"),
    resamples: int | str = _default("n_resamples"),
    report: bool = True,
    progress: bool = False,
) -> Evaluation:
    """Score ``data`` as ``rageval score`` scores files, and return the run as tables (:class:`Evaluation`).

    ``data``: a ``datasets.Dataset`` (or a ``DatasetDict`` of one split, or ``split=``), a pandas DataFrame or a
    list of dicts, in any layout ``rageval score`` reads (detected as ``--format auto`` does; rows of ALCE or
    RAGChecker items need ``format="alce"``/``"ragchecker"``, or pass the whole document as a dict); a file's path
    or ``hf:<id>`` as ``rageval score`` takes it; or a dict ``{setting name: one of those}`` to compare inputs.
    Rows with a ``system`` field give one setting per system, as in a file; two or more settings are compared
    (``contrasts``).  ``name``: the setting name of one input whose rows name no system (default ``"data"``).
    ``out``: the run directory to write (default: a temporary one; :meth:`Evaluation.save` writes it anywhere).
    ``report``: build the report (summary, contrasts, figures, ``report.html``); ``progress``: a progress bar.
    Row ``n`` of an input is line ``n`` of ``<name>.jsonl``, as the notes and errors name it.

    Every other keyword is ``rageval score``'s option of that name, with its default and its checks
    (``rageval score --help``; ``map`` takes ``{"answer": "response"}`` or ``["answer=response"]``,
    ``diagnostics`` a comma-separated string or a list, ``k`` is ``--k``).  Input that cannot be scored raises
    :class:`~rageval.data.formats.layout.ScoreInputError` (a ``ValueError``) naming the input, row and field.
    """
    params = _parsed(
        {
            "format": format,
            "map": map,
            "split": split,
            "judge": judge,
            "threshold": threshold,
            "citations": citations,
            "max_citations": max_citations,
            "diagnostics": diagnostics,
            "baseline": baseline,
            "all_pairs": all_pairs,
            "tokenizer": tokenizer,
            "grounding": grounding,
            "k": k,
            "seed": seed,
            "resamples": resamples,
        }
    )
    folders = [Path(tempfile.mkdtemp(prefix="rageval-evaluate-"))]  # the inputs' files, kept for save()
    try:
        files = _inputs(data, name, params["fmt"], split, folders[0])
        if not any(f.partition("=")[2].startswith("hf:") or f.startswith("hf:") for f in files):
            params["split"] = None  # an in-memory DatasetDict's split is chosen above; a file has none
        if out is None:
            folders.append(Path(tempfile.mkdtemp(prefix="rageval-evaluate-run-")))
        run_dir = Path(out) if out is not None else folders[-1]

        def rerun(dest: Path) -> ScoreResult:
            return score_inputs(files, out_dir=dest, no_report=not report, no_progress=not progress, **params)

        result = rerun(run_dir)
    except BaseException as err:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
        if isinstance(err, ScoreInputError):  # a row is named as a line of its input's file, without the folder
            raise ScoreInputError(str(err).replace(f"{folders[0]}{os.sep}", "")) from None
        raise
    evaluation = Evaluation(
        out_dir=Path(result.out_dir),
        settings=list(result.settings),
        notes=list(result.notes),
        status_counts=dict(result.status_counts),
        report=dict(result.report or {}),
        result=result,
        _rerun=rerun,
    )
    for folder in folders:  # removed with the result (or at exit)
        weakref.finalize(evaluation, shutil.rmtree, folder, ignore_errors=True)
    return evaluation
