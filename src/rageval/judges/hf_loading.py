"""Loading the weights of a transformers judge: the id's revision, the dtype, the model kind.

* :func:`weights_fingerprint` / :func:`revision_of`: the revision a judge id names
  (a sha256 over the files of a local folder, else the hub commit), so two sets of
  weights never share a judge cache;
* :func:`resolve_dtype` and :func:`from_pretrained`: the weights loaded in the
  target dtype directly;
* :func:`detect_kind`: whether a model folder or hub id is an NLI classifier or a
  TRUE-style seq2seq judge, from its config.

Used by the model judges (:mod:`rageval.judges.hf`) and the embedding judge.
torch and transformers are imported inside the functions that need them.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from rageval.errors import require

__all__ = ["weights_fingerprint", "revision_of", "resolve_dtype", "from_pretrained", "detect_kind"]


def weights_fingerprint(model_dir: str | os.PathLike) -> str | None:
    """sha256 (first 16 hex) over the names and bytes of every file of a local model folder.

    Weights, config and tokenizer files all change what a judge answers, so all
    of them are hashed (hidden files and READMEs excepted).  None for a hub id.
    """
    root = Path(model_dir)
    if not root.is_dir():
        return None
    files = sorted(
        p
        for p in root.iterdir()
        if p.is_file() and not p.name.startswith(".") and p.suffix.lower() not in (".md", ".txt", ".lock")
    )
    if not files:
        return None
    h = hashlib.sha256()
    for p in files:
        h.update(p.name.encode())
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:16]


def revision_of(name_or_path: str, model: Any, revision: str | None) -> str:
    fp = weights_fingerprint(name_or_path)
    if fp is not None:
        return f"sha256:{fp}"
    commit = getattr(getattr(model, "config", None), "_commit_hash", None)
    return commit or revision or "unknown"


def resolve_dtype(dtype: Any):
    import torch

    if dtype is None or dtype in ("float32", "fp32"):
        return torch.float32
    if dtype in ("bfloat16", "bf16"):
        return torch.bfloat16
    if dtype in ("float16", "fp16"):
        return torch.float16
    if isinstance(dtype, torch.dtype):
        return dtype
    raise ValueError(f"dtype must be 'float32' (default), 'bfloat16' or 'float16', got {dtype!r}")


def from_pretrained(auto_cls, name_or_path: str, revision: str | None, torch_dtype):
    """Load in the target dtype directly (a bf16 T5-XXL must not pass through fp32 in memory)."""
    import transformers

    major = int(transformers.__version__.split(".")[0])
    key = "dtype" if major >= 5 else "torch_dtype"
    return auto_cls.from_pretrained(name_or_path, revision=revision, **{key: torch_dtype})


def detect_kind(name_or_path: str, *, revision: str | None = None) -> str:
    """``"nli"`` (sequence classifier) or ``"seq2seq"`` (encoder-decoder) from the model config."""
    require("transformers", what=f"the model judge {name_or_path!r}")
    from transformers import AutoConfig

    cfg = AutoConfig.from_pretrained(name_or_path, revision=revision)
    if getattr(cfg, "is_encoder_decoder", False):
        return "seq2seq"
    archs = getattr(cfg, "architectures", None) or []
    if any(a.endswith("ForSequenceClassification") for a in archs) or any(
        "entail" in str(v).lower() for v in (getattr(cfg, "id2label", None) or {}).values()
    ):
        return "nli"
    raise ValueError(
        f"cannot tell what kind of judge {name_or_path!r} is: its config is neither encoder-decoder (TRUE-style "
        f"seq2seq) nor a sequence classifier with an entailment label (architectures={archs})"
    )
