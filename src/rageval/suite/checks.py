"""Everything a run checks about its configuration, checked before anything runs (docs/suites.md#validation).

Two levels:

* :func:`config_problems` — cheap, run by every :func:`~rageval.suite.load.load_suite`
  (beside its checks of compressors, parameters, diagnostics and contrasts): the
  dataset (name, shipped sample, local path, hub-only keys), the tokenizer name,
  the reader (backend, parameter names and values, template fields) and the judge
  (spec, parameter names and values).  Nothing is downloaded and no model is loaded.
* :func:`check_suite` — what ``rageval validate`` adds: the tokenizer is loaded,
  the dataset is read and retrieved exactly as the run reads it, the contrasts are
  checked against the metrics the applicable diagnostics write, and every model the
  suite names (judge, reader, compressors) is looked up locally
  (:func:`model_availability`).  The runner runs the same contrast check
  (:func:`contrast_problems`) right after it selects the diagnostics, before any
  record is computed.

Each problem is one line ``  <field>: <what is wrong>; <the fix>``.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rageval.compressors import CompressorConfigError
from rageval.compressors import get as get_compressor
from rageval.data import LOADERS, SAMPLES, DataLoadError, DataUnavailable, sample_path
from rageval.diagnostics import CATALOG, DERIVED, contrasted_by_default
from rageval.errors import ModelUnavailable, install_hint
from rageval.judges import JUDGES
from rageval.judges.checks import judge_problems
from rageval.judges.spec import (
    JUDGE_PARAMS,  # the options of judge.params (re-exported)
    judge_param_problem,
    parse_judge_spec,
)
from rageval.lm import NAMED_MODELS
from rageval.lm import resolve as resolve_model
from rageval.readers.spec import reader_problems
from rageval.registry import closest, did_you_mean
from rageval.stats.contrasts import expand_plan
from rageval.suite.config import Suite
from rageval.suite.inputs import load_inputs, resolve_dataset_path, select_diagnostics
from rageval.text import get_tokenizer
from rageval.text.tokenize import is_gguf_spec
from rageval.token_counts import CONTEXT_METRICS

__all__ = [
    "JUDGE_PARAMS",
    "Availability",
    "SuiteCheck",
    "check_suite",
    "config_problems",
    "contrast_problems",
    "metric_names_of",
    "model_availability",
    "run_problems",
]


# -- cheap checks (every load_suite) ---------------------------------------------------------------


def config_problems(suite: Suite) -> list[str]:
    """The configuration problems of ``suite`` that need no data and no model (one line each)."""
    return [
        *_dataset_problems(suite),
        *_tokenizer_problems(suite),
        *_reader_problems(suite),
        *_judge_problems(suite),
        *_diagnostics_problems(suite),
    ]


def _dataset_problems(suite: Suite) -> list[str]:
    ds = suite.dataset
    out = []
    if getattr(ds, "format", None) is None and ds.name not in LOADERS:  # format: a rageval score file (docs/score.md)
        hint = did_you_mean(ds.name, LOADERS.spellings(), cutoff=0.5) or f" Known: {', '.join(LOADERS.names())}."
        out.append(f"  dataset.name: unknown dataset {ds.name!r}.{hint}")
    if ds.sample is not None or (ds.path is None and ds.hub_id is None and ds.name in LOADERS):
        try:
            sample_path(ds.sample or LOADERS.canonical(ds.name))
        except KeyError:
            if ds.sample is None:  # a dataset that ships no sample (ragbench): its rows come from a file or the hub
                out.append(
                    f"  dataset: {ds.name!r} ships no sample: give dataset.path (--dataset-path) or dataset.hub_id"
                )
            else:
                hint = (
                    did_you_mean(ds.sample, SAMPLES, cutoff=0.5) or f" Shipped samples: {', '.join(sorted(SAMPLES))}."
                )
                out.append(f"  dataset.sample: no shipped sample {ds.sample!r}.{hint}")
    if ds.path is not None:
        try:
            p = resolve_dataset_path(suite)
        except FileNotFoundError:
            out.append(
                f"  dataset.path: {ds.path!r} not found (looked beside the suite file and in the current "
                "directory); give an existing .json/.jsonl file (--dataset-path FILE, or dataset.path)"
            )
        else:
            if p is not None and p.is_dir():
                out.append(f"  dataset.path: {ds.path!r} is a directory; give a .json/.jsonl file")
    if ds.hub_id is None:
        for key in ("hub_config", "split"):
            if getattr(ds, key) is not None:
                out.append(f"  dataset.{key}: applies to dataset.hub_id only (it would be ignored); remove it")
    return out


def _output_problems(suite: Suite) -> list[str]:
    out = Path(suite.output_dir).expanduser()
    if out.exists() and not out.is_dir():
        return [f"  output_dir: {suite.output_dir!r} is a file; give a folder (or --out DIR)"]
    return []


def _tokenizer_problems(suite: Suite) -> list[str]:
    spec = suite.tokenizer
    if spec in ("regex", "whitespace") or is_gguf_spec(spec) or Path(spec).expanduser().exists() or "/" in spec:
        return []
    close = closest(spec, ["regex", "whitespace"])
    if close is not None:
        return [
            (
                f"  tokenizer: {spec!r} is neither a built-in tokenizer nor a local folder. Did you mean {close!r}? "
                "(regex | whitespace | smollm2 | a .gguf file | a Hugging Face tokenizer folder or id)"
            )
        ]
    return []  # a hub id: loaded by check_suite / the run


def _reader_problems(suite: Suite) -> list[str]:
    """The suite's reader and each setting's own reader (``settings[i].reader``)."""
    specs = [("reader", suite.reader)]
    specs += [(f"settings[{i}].reader", s.reader) for i, s in enumerate(suite.settings) if s.reader is not None]
    return [p for where, spec in specs for p in reader_problems(spec, where)]


def _judge_problems(suite: Suite) -> list[str]:
    return judge_problems(suite.judge.spec, suite.judge.params)


def _judge_param_problem(key: str, value: Any, own: Sequence[str] = ()) -> str | None:
    return judge_param_problem(key, value, own)


def _diagnostics_problems(suite: Suite) -> list[str]:
    if suite.diagnostics != "auto" and not suite.diagnostics:
        return ["  diagnostics: the list is empty; name at least one diagnostic, or write 'auto'"]
    return []


def metric_names_of(diagnostics: Sequence[str] | None = None) -> list[str]:
    """The record metrics ``diagnostics`` write (every diagnostic when None), plus the derived gaps they allow."""
    names = list(CATALOG) if diagnostics is None else list(diagnostics)
    keys = list(dict.fromkeys(o.key for n in names for o in CATALOG[n].outputs))
    keys += [g for g, (a, b, _) in DERIVED.items() if a in keys and b in keys]
    return keys


def run_problems(suite: Suite, examples: Sequence[Any], diagnostics: Sequence[str]) -> list[str]:
    """What the run checks once it has read the data: questions to run, and the contrasts (:func:`contrast_problems`)."""
    out = []
    if not examples:
        where = suite.dataset.path or suite.dataset.hub_id or suite.dataset.sample or suite.dataset.name
        out.append(f"  dataset: {where!s} holds no question to run; check dataset.path (an empty file?)")
    return out + contrast_problems(suite, diagnostics)


def contrast_problems(suite: Suite, diagnostics: Sequence[str]) -> list[str]:
    """The contrasts of ``suite`` checked against the metrics the selected ``diagnostics`` write.

    ``load_suite`` checks them against every metric the catalog knows; this is the
    check the runner makes once it knows which diagnostics apply to the dataset (a
    contrast on ``evidence_f1`` of a dataset without evidence fails here, before any
    record is computed, not after the run).
    """
    if suite.contrasts is None:
        return []
    settings = suite.setting_refs()
    try:
        # the context's achieved_tokens / achieved_ratio: every record carries them; contrasted only when named
        names = [*metric_names_of(diagnostics), *CONTEXT_METRICS]
        expand_plan(suite.contrasts, settings, metric_names=names, contrasted=contrasted_by_default)
    except (ValueError, TypeError) as err:
        msg = " ".join(str(err).split())
        return [f"  contrasts: {msg} (the diagnostics that apply to this dataset: {', '.join(diagnostics)})"]
    return []


# -- what `rageval validate` adds: the data, the tokenizer, the models ------------------------------


@dataclass(frozen=True)
class Availability:
    """One model the suite names, and whether it can be loaded here."""

    where: str  # the suite field, e.g. "judge.spec" or "settings[2] (abstractive@0.5)"
    ref: str  # the model reference as written
    problem: str | None  # None: found locally (or not checkable, see note)
    note: str = ""
    compressor: bool = False  # compressors missing weights can become 'unavailable' records


@dataclass
class SuiteCheck:
    """What :func:`check_suite` found."""

    problems: list[str] = field(default_factory=list)  # configuration errors: the run would stop
    models: list[Availability] = field(default_factory=list)
    questions: int | None = None
    diagnostics: list[str] = field(default_factory=list)

    def unavailable(self, allow_unavailable: bool = False) -> list[Availability]:
        """Models that cannot be loaded here and would stop the run."""
        return [m for m in self.models if m.problem and not (allow_unavailable and m.compressor)]


def _gguf_available(ref: str) -> str | None:
    """None when ``ref`` — a named model (smollm2) or a .gguf file (:mod:`rageval.lm`) — is here, else why not."""
    try:
        resolve_model(ref)
    except ModelUnavailable as err:
        return str(err)
    return None


def _hf_available(ref: str, revision: str | None = None) -> str | None:
    """None when ``ref`` is a local folder, a hub id present in the local Hugging Face cache, a .gguf file or a
    named model (:mod:`rageval.lm`), else why not."""
    if ref in NAMED_MODELS or ref.lower().endswith(".gguf"):
        return _gguf_available(ref)
    p = Path(ref).expanduser()
    if p.exists():
        return None if p.is_dir() else "a file; give a model folder (config.json, weights, tokenizer)"
    if ref.startswith(("/", ".", "~")) or ref.count("/") > 1:
        return "no such folder"
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - a dependency of transformers
        return "not a local folder (huggingface_hub is not installed to look in the hub cache)"
    try:
        found = try_to_load_from_cache(ref, "config.json", revision=revision)
    except ValueError:
        return "neither a local folder nor a valid hub id"
    if isinstance(found, str):
        return None
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False"):
        return "not a local folder and not in the Hugging Face cache (HF_HUB_OFFLINE is set)"
    return None  # online: the run downloads it


def _minilm_available() -> str | None:
    try:
        from rageval.compressors.similarity import minilm_path  # imports numpy: not on `rageval suite --help`'s path

        minilm_path()
    except ModelUnavailable as err:
        return str(err)
    return None


def _model_ref(ref: str, revision: str | None = None) -> str | None:
    if ref == "minilm":
        return _minilm_available()
    for prefix in ("cross-encoder:", "embedding:", "nli:", "seq2seq:"):
        ref = ref.removeprefix(prefix)
    return _hf_available(ref, revision)


def model_availability(suite: Suite) -> list[Availability]:
    """Every model the suite names (judge, reader, compressors, a dense retriever), looked up locally; nothing is
    loaded."""
    return [
        *_judge_availability(suite),
        *_reader_availability(suite),
        *_compressor_availability(suite),
        *_retrieval_availability(suite),
    ]


def _retrieval_availability(suite: Suite) -> list[Availability]:
    """A dense retriever's model (default: the minilm extra's all-MiniLM-L6-v2) and a FAISS index's package."""
    out = []
    own = [(f"setting {n}.retrieval", r) for n, r in suite.setting_retrievals().items() if r is not None]
    for where, spec in [("retrieval", suite.retrieval), *own]:
        if spec.method != "dense":
            continue
        problem = _minilm_available() if spec.model is None else _hf_available(spec.model, None)
        out.append(Availability(f"{where}.model", spec.model or "minilm", problem))
        if spec.index == "faiss" and importlib.util.find_spec("faiss") is None:
            out.append(Availability(f"{where}.index", "faiss", f"faiss-cpu is not installed: {install_hint('faiss')}"))
    return out


def _judge_availability(suite: Suite) -> list[Availability]:
    spec = suite.judge.spec
    ref = parse_judge_spec(spec)
    revision = suite.judge.params.get("revision")
    if ref.problem is not None:
        return []  # reported by load_suite
    if ref.name == "minilm":
        return [Availability("judge.spec", spec, _minilm_available())]
    if ref.name is not None and JUDGES.meta(ref.name).endpoint:
        url = str(suite.judge.params.get("base_url") or ref.base_url or "?")
        return [Availability("judge.spec", url, None, "an endpoint: not contacted here")]
    if ref.runs_model and ref.model is not None:
        return [Availability("judge.spec", spec, _hf_available(ref.model, revision))]
    if ref.name == "llm" and ref.arg is not None:
        return [Availability("judge.spec", spec, _hf_available(ref.arg, revision))]
    return []


def _reader_availability(suite: Suite) -> list[Availability]:
    out = []
    readers = [("reader", suite.reader)]
    readers += [(f"settings[{i}].reader", s.reader) for i, s in enumerate(suite.settings) if s.reader is not None]
    for where, reader in readers:
        if reader.backend in ("transformers", "llamacpp") and isinstance(reader.params.get("model"), str):
            ref = reader.params["model"]
            out.append(Availability(f"{where}.params.model", ref, _hf_available(ref, reader.params.get("revision"))))
        elif reader.backend == "openai":
            urls = reader.params.get("base_url")
            url = ", ".join(map(str, urls)) if isinstance(urls, (list, tuple)) else str(urls)
            what = "endpoints" if isinstance(urls, (list, tuple)) and len(urls) > 1 else "an endpoint"
            out.append(Availability(f"{where}.params.base_url", url, None, f"{what}: not contacted here"))
    return out


def _compressor_availability(suite: Suite) -> list[Availability]:
    out = []
    for sname, comp, _, params in suite.expand_settings():
        try:
            c = get_compressor(comp, **params)
        except (CompressorConfigError, ValueError, TypeError):
            continue  # a configuration problem, reported by load_suite
        if not getattr(c, "needs_model", False):
            continue
        where = f"setting {sname}"
        if getattr(c, "params", {}).get("backend") == "llmlingua2" and importlib.util.find_spec("llmlingua") is None:
            out.append(Availability(where, "llmlingua2", "the llmlingua package is not installed", compressor=True))
            continue
        ref = c.model_id
        if ref:
            out.append(Availability(where, ref, _model_ref(ref), compressor=True))
    return out


def check_suite(suite: Suite) -> SuiteCheck:
    """What the run would find wrong with ``suite`` before computing anything (see the module doc)."""
    res = SuiteCheck()
    res.problems += _output_problems(suite)
    tok_problem = tokenizer_problem(suite.tokenizer)
    if tok_problem:
        res.problems.append(f"  tokenizer: {tok_problem}")
    else:
        get_tokenizer(suite.tokenizer)
    try:
        examples, _ = load_inputs(suite)
    except (DataLoadError, FileNotFoundError, KeyError) as err:
        res.problems.append(f"  dataset: {' '.join(str(err).strip(chr(34) + chr(39)).split())}")
    except DataUnavailable as err:
        res.models.append(Availability("dataset.hub_id", str(suite.dataset.hub_id), str(err)))
    else:
        res.questions = len(examples)
        res.diagnostics = select_diagnostics(suite, examples)
        res.problems += run_problems(suite, examples, res.diagnostics)
    res.models += model_availability(suite)
    return res


def tokenizer_problem(spec: str) -> str | None:
    """None when the suite tokenizer ``spec`` loads here, else why not (one line, with the fix)."""
    if spec in ("regex", "whitespace"):
        return None
    try:
        get_tokenizer(spec)
    except ModelUnavailable as err:  # no transformers here: the install hint, whole
        return str(err)
    except (OSError, ValueError, ImportError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        return (
            f"{spec!r} cannot be loaded ({first[:160]}); give 'regex', 'whitespace', 'smollm2', a .gguf file or a "
            "local Hugging Face tokenizer folder"
        )
    return None
