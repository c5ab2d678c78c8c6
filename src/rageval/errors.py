"""Errors shared across rageval's parts."""

from __future__ import annotations

__all__ = ["ModelUnavailable", "ReaderError"]


class ModelUnavailable(RuntimeError):
    """Model weights (or an optional package) named by the user cannot be loaded here.

    Raised by compressors, readers and judges alike.  The message says how to point
    at a local checkpoint or run with the offline defaults; the suite runner records
    compressor settings that raise it as ``unavailable`` when asked to
    (``--allow-unavailable``) and otherwise stops with that message.
    """


class ReaderError(RuntimeError):
    """A reader backend that fails as a whole (not one request): every record of the batch gets ``reader_error``."""
