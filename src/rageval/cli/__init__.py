"""The ``rageval`` command line: :mod:`rageval.cli.app` (the group, the error policy, the lazy sub-commands) and
:mod:`rageval.cli.options` (the options and console lines every front-end's ``cli.py`` shares).

Each front-end (``rageval.suite``, ``score``, ``rescore``, ``audit``, ``calibrate``, ``report``) keeps its command in
its own ``cli.py``; ``main`` imports it on first use, so ``rageval --help`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["USER_ERRORS", "main", "user_message"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("rageval.cli.app"), name)
    raise AttributeError(f"module 'rageval.cli' has no attribute {name!r}")
