"""TEMPORARY until the spec branch lands."""

from rageval.suite.config import ReaderSpec  # noqa: F401
