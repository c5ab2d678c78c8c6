"""Building and closing the parts a plan names: the judge, readers, compressors, the tokenizer.

Every command builds its parts here, the same way: :func:`load_judge` wraps the
judge a spec names in one :class:`~rageval.judges.base.JudgeRunner` with its
sqlite cache, :func:`make_reader` builds a reader spec's backend with the run's
tokenizer, :func:`make_compressor` a compressor.  :class:`Parts` keeps what was
opened and closes it however the run ends (the judge's sqlite, readers'
connections).  No model library is imported here: a part imports its own.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rageval import __version__
from rageval.compressors import get
from rageval.errors import ModelUnavailable, redact_urls
from rageval.scoring import JudgeConfig

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["Parts", "load_judge", "make_compressor", "make_reader", "package_versions", "reader_id"]


def package_versions() -> dict[str, str]:
    """The versions the manifest records: rageval, Python and the numeric and model libraries installed."""

    out = {"rageval": __version__, "python": platform.python_version()}
    for pkg in ("numpy", "scipy", "torch", "transformers", "bm25s", "nupunkt", "nltk"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def load_judge(judge: JudgeConfig, cache_dir: Path | None, tokenizer: Any):
    """The :class:`~rageval.judges.base.JudgeRunner` of ``judge`` (its spec and params) with its cache."""
    from rageval.judges import get_judge

    try:
        return get_judge(judge.spec, cache_dir=cache_dir, tokenizer=tokenizer, **dict(judge.params))
    except (ValueError, OSError) as err:
        raise ModelUnavailable(redact_urls(f"judge {judge.spec!r} cannot be loaded: {err}")) from err


def make_reader(spec: Any, tokenizer: Any):
    """The reader backend of ``spec`` (a ReaderSpec), on the run's ``tokenizer`` unless its params name one."""
    from rageval.readers import get_reader

    params = dict(spec.params)
    if spec.template is not None:
        params["template"] = spec.template
    params.setdefault("tokenizer", tokenizer)
    return get_reader(spec.backend, **params)


def reader_id(reader: Any, spec: Any) -> Any:
    """What the manifest and the record key name a reader by: its ``info()``, else its backend."""
    info = getattr(reader, "info", None)
    return info() if callable(info) else spec.backend


def make_compressor(name: str, params: Mapping[str, Any]):
    return get(name, **dict(params))


class Parts:
    """The parts a run opened, closed together (``with Parts() as parts:``)."""

    def __init__(self) -> None:
        self.opened: list[Any] = []

    def add(self, part: Any) -> Any:
        if part is not None:
            self.opened.append(part)
        return part

    def close(self) -> None:
        while self.opened:
            close = getattr(self.opened.pop(), "close", None)
            if callable(close):
                close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
