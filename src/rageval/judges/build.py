"""Resolving a judge spec: :func:`build_judge` (the backend) and :func:`get_judge` (wrapped once in a
:class:`~rageval.judges.base.JudgeRunner`); the table of specs is in :mod:`rageval.judges`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from rageval.judges.base import CallableJudge, Judge, JudgeRunner
from rageval.judges.factories import model_judge
from rageval.judges.lexical import LexicalJudge
from rageval.judges.paths import requested
from rageval.judges.registry import JUDGES, BuildOptions
from rageval.judges.windowed import WindowedJudge, parse_window

__all__ = ["build_judge", "get_judge"]


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
            opts = BuildOptions(
                batch_size, dtype, max_length, device, revision, params, _requested(execution, ref.name)
            )
            return JUDGES.get(ref.name)(ref.arg, opts)
        return model_judge(s, revision, max_length, batch_size or 8, dtype, device, _requested(execution, None))
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
