"""The named judges' factories (registered in :mod:`rageval.judges.registry`): ``factory(arg, options)``
builds the backend; model judges are loaded once per process and spec."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from rageval.errors import ModelUnavailable, install_hint
from rageval.judges.lexical import LexicalJudge
from rageval.judges.registry import BUILTIN, JUDGES, BuildOptions
from rageval.judges.replay import ReplayJudge
from rageval.judges.spec import parse_judge_spec
from rageval.registry import did_you_mean

__all__ = [
    "embedding",
    "embedding_judge",
    "lexical",
    "lexical_strict",
    "llm",
    "llm_judge",
    "minilm",
    "model_judge",
    "nli",
    "openai",
    "replay",
    "seq2seq",
]


@functools.lru_cache(maxsize=2)
def embedding_judge(path, batch_size, device, dtype, execution="auto"):
    from rageval.judges.embedding import EmbeddingJudge

    return EmbeddingJudge(path, batch_size=batch_size, device=device, dtype=dtype, execution=execution)


@functools.lru_cache(maxsize=4)
def model_judge(s: str, revision, max_length, batch_size, dtype, device, execution="auto"):
    """Model judges are loaded once per process and spec (evaluate modules called one after another share it)."""

    ref = parse_judge_spec(s)
    if ref.name in ("nli", "seq2seq") and ref.model is not None:
        kind, target = ref.name, ref.model
    else:
        target = s

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


def lexical(arg: Any, o: BuildOptions) -> Any:
    return LexicalJudge()


def lexical_strict(arg: Any, o: BuildOptions) -> Any:
    from rageval.judges.strict import StrictLexicalJudge

    return StrictLexicalJudge()


def minilm(arg: Any, o: BuildOptions) -> Any:
    return embedding_judge(None, o.batch_size or 16, o.device, o.dtype, o.execution)


def replay(arg: Any, o: BuildOptions) -> Any:
    return ReplayJudge(arg)


def embedding(arg: Any, o: BuildOptions) -> Any:
    return embedding_judge(arg, o.batch_size or 16, o.device, o.dtype, o.execution)


def nli(arg: Any, o: BuildOptions) -> Any:
    return model_judge(f"nli:{arg}", o.revision, o.max_length, o.batch_size or 8, o.dtype, o.device, o.execution)


def seq2seq(arg: Any, o: BuildOptions) -> Any:
    return model_judge(f"seq2seq:{arg}", o.revision, o.max_length, o.batch_size or 8, o.dtype, o.device, o.execution)


def openai(arg: str | None, o: BuildOptions) -> Any:
    from rageval.judges.openai_compat import build

    return build(arg, o.params or {}, batch_size=o.batch_size)


@functools.lru_cache(maxsize=2)
def llm_judge(model: str, params: tuple[tuple[str, Any], ...], dtype, device, batch_size):
    """The in-process LLM judge, loaded once per process and spec."""
    from rageval.judges.causal import CausalLMJudge

    return CausalLMJudge(model, **dict(params), dtype=dtype, device=device, batch_size=batch_size)


def llm(arg: str, o: BuildOptions) -> Any:
    return llm_judge(arg, tuple(sorted((o.params or {}).items())), o.dtype, o.device, o.batch_size)
