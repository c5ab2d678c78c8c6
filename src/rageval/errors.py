"""Errors shared across rageval's parts."""

from __future__ import annotations

__all__ = ["ConfigError", "ModelUnavailable", "ReaderError", "RunFailure"]


class ConfigError(ValueError):
    """A user error in a command's arguments, a suite or an input file: the CLI prints it and exits with 2.

    The message names what is wrong, where, and the fix (docs/suites.md#errors-and-exit-codes).
    """


class RunFailure(RuntimeError):
    """A run that cannot go on for a reason outside its configuration (the output directory is in use, a
    cache changed under it, ...): the CLI prints the message and exits with 1."""


class ModelUnavailable(RuntimeError):
    """Model weights (or an optional package) named by the user cannot be loaded here.

    Raised by compressors, readers and judges alike.  The message says how to point
    at a local checkpoint or run with the offline defaults; the suite runner records
    compressor settings that raise it as ``unavailable`` when asked to
    (``--allow-unavailable``) and otherwise stops with that message.
    """


class ReaderError(RuntimeError):
    """A reader backend that fails as a whole (not one request): every record of the batch gets ``reader_error``."""
