"""Planning a run: inputs, the diagnostics to score, resolved options and the input hash of every record.

Nothing here runs a model.  :func:`load_inputs` reads the dataset and
retrieves; :func:`select_diagnostics` resolves ``diagnostics: auto`` through
the catalog; :func:`scoring_options` turns the suite into the typed
:class:`~rageval.diagnostics.inputs.ScoringOptions`; :func:`setting_key` and
:func:`record_hash` give the input hash that decides whether a cached record
can be reused (everything that can change a record is in it, including each
selected diagnostic's version).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rageval import __version__
from rageval.suite.config import Suite

__all__ = [
    "RunDirError",
    "PlannedSetting",
    "sha",
    "check_out_dir",
    "resolve_dataset_path",
    "load_inputs",
    "select_diagnostics",
    "scoring_options",
    "planned_settings",
    "setting_key",
    "record_hash",
]


class RunDirError(ValueError):
    """An output directory that belongs to another suite, or is unreadable."""


@dataclass(frozen=True)
class PlannedSetting:
    name: str
    compressor: str
    budget: Any
    params: dict[str, Any]
    reader: Any = None  # the ReaderSpec that reads this setting (its own, else the suite's)


def sha(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def planned_settings(suite: Suite) -> list[PlannedSetting]:
    readers = suite.setting_readers()
    return [PlannedSetting(n, c, b, p, readers[n]) for n, c, b, p in suite.expand_settings()]


def check_out_dir(out_dir: Path, suite: Suite) -> None:
    """Refuse an output directory that holds a run of another suite."""
    for path in (out_dir / "cache" / "suite.json", out_dir / "manifest.json"):
        if path.is_file():
            fix = "delete the output directory or choose another --out"
            try:
                data = json.loads(path.read_bytes().decode("utf-8"))
            except (ValueError, RecursionError) as err:  # not UTF-8, not JSON
                raise RunDirError(f"{path}: not valid JSON ({str(err)[:100]}); {fix}") from None
            try:
                found = data["suite"]["name"]
            except (KeyError, TypeError, IndexError):
                raise RunDirError(f"{path}: names no suite, so the run it holds is unknown; {fix}") from None
            if found != suite.name:
                raise RunDirError(
                    f"output directory {out_dir} holds a run of suite {found!r}, not {suite.name!r}; "
                    "choose another --out (or delete it)"
                )
            return


def resolve_dataset_path(suite: Suite) -> Path | None:
    """The dataset file: ``path`` (relative to the suite file, else the cwd), a shipped sample, or None (hub)."""
    from rageval.data import LOADERS, sample_path

    ds = suite.dataset
    if ds.hub_id is not None:
        return None
    if ds.path is None:  # the dataset's own sample, under its canonical name (`hotpot` is `hotpotqa`)
        return sample_path(ds.sample or LOADERS.canonical(ds.name))
    p = Path(ds.path).expanduser()
    if not p.is_absolute() and suite.source:
        beside = Path(suite.source).resolve().parent / p
        if beside.exists():
            return beside
    if not p.exists():
        raise FileNotFoundError(f"dataset.path {ds.path!r} not found (looked beside the suite file and in the cwd)")
    return p


def load_inputs(suite: Suite):
    """Examples and their retrieval, as the suite describes."""
    from rageval.data import load_corpus, load_examples
    from rageval.retrieval import retrieve_all

    ds = suite.dataset
    path = resolve_dataset_path(suite)
    if ds.format is not None:  # a file `rageval score` reads (docs/score.md#suites-that-read-the-same-files)
        from rageval.score.suite_data import read_examples

        source = str(path) if path is not None else f"hf:{ds.hub_id}"
        examples = read_examples(source, ds.format, split=ds.split, limit=ds.limit)
    else:
        examples = load_examples(
            ds.name, path, hub_id=ds.hub_id, hub_config=ds.hub_config, split=ds.split, limit=ds.limit
        )
    corpus = None
    if suite.retrieval.method == "bm25" and suite.retrieval.corpus == "dataset":
        if ds.format is not None:
            raise ValueError(
                f"retrieval.corpus: dataset has no corpus for dataset.format {ds.format!r} (a file of outputs); "
                "use corpus: example (each question's own sources)"
            )
        corpus = load_corpus(ds.name, path, hub_id=ds.hub_id, hub_config=ds.hub_config, split=ds.split)
    retrieved = retrieve_all(examples, method=suite.retrieval.method, k=suite.retrieval.k, corpus=corpus)
    return examples, retrieved


def select_diagnostics(suite: Suite, examples: Sequence[Any]) -> list[str]:
    """The suite's diagnostics; ``auto``: every catalog entry whose gold some example carries."""
    from rageval.diagnostics import applicable

    return applicable(suite.diagnostics, lambda field: any(getattr(e, field, None) for e in examples))


def scoring_options(suite: Suite):
    """The suite's scoring options, typed and validated."""
    from rageval.diagnostics.attribution import AttributionOptions
    from rageval.diagnostics.inputs import ScoringOptions

    attribution = AttributionOptions(
        **suite.attribution.model_dump(),
        threshold=suite.judge.threshold,
        max_citations=suite.citations.max_citations,
        alce_compat=suite.citations.mode == "alce",
    )
    return ScoringOptions(attribution=attribution, retrieval_k=suite.retrieval.k)


def setting_key(
    suite: Suite,
    setting: Any,
    params: dict[str, Any],
    compressor: Any,
    models: dict[str, Any],
    diagnostics: Sequence[str],
    reader: Any = None,
) -> dict[str, Any]:
    """Everything of the suite and the setting that can change a record of it (``reader``: the setting's
    ReaderSpec when it has its own, its id in ``models["reader:<setting>"]``)."""
    from rageval.diagnostics import CATALOG

    return {
        "rageval": __version__,
        "setting": setting.to_dict(),
        "params": params,
        "compressor": getattr(compressor, "config", None) if compressor is not None else None,
        "tokenizer": suite.tokenizer,
        "reader": _reader_key(reader or suite.reader),
        "reader_id": models[f"reader:{setting.name}"] if reader is not None else models["reader"],
        "judge": suite.judge.model_dump(mode="json"),
        "judge_id": models["judge"],
        "citations": suite.citations.model_dump(mode="json"),
        "attribution": suite.attribution.model_dump(mode="json"),
        "diagnostics": {d: CATALOG[d].version for d in diagnostics},
        "retrieval": suite.retrieval.model_dump(mode="json"),
    }


def _reader_key(spec: Any) -> dict[str, Any]:
    """The reader spec without its transport options (endpoints, concurrency, timeouts: they do not change an
    answer; ``rageval.readers.transport_params``), so one endpoint or two of the same model share records."""
    from rageval.readers import transport_params

    d = spec.model_dump(mode="json")
    drop = transport_params(spec.backend)
    if drop:
        d["params"] = {k: v for k, v in d["params"].items() if k not in drop}
    return d


def record_hash(key: dict[str, Any], example: Any, retrieved: Any) -> str:
    """The input hash of one (setting, question) record."""
    return sha(
        {
            **key,
            "question": example.id,
            "q": example.question,
            "gold": example.to_dict() if hasattr(example, "to_dict") else example.id,
            "sources": [[s.id, s.text, s.title] for s in retrieved.snippets],
            "retrieved": list(retrieved.doc_ids),
        }
    )[:32]
