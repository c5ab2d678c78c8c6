"""nltk's Punkt and Porter modules without the rest of nltk.

``import nltk.tokenize.punkt`` runs ``nltk/__init__.py`` first, which imports nearly all of nltk and, through it,
scipy.stats, scikit-learn and pandas: about 1.2 CPU-seconds, two thirds of ``rageval score --format alce``'s
imports, for two modules (Punkt's sentence splitter, Porter's stemmer) that need four small nltk modules between
them (``bench/bench_alce_functions.py``, its start-up step).  :func:`nltk_modules` imports them from the installed
nltk, as they are, with nltk's package ``__init__`` files standing aside: for the length of the import (and of
whatever the caller builds with them: the Punkt tokenizer may read nltk's data folders) ``nltk`` and its
subpackages are empty placeholder packages over nltk's own folders; afterwards every nltk module the import added is
taken out of ``sys.modules`` again, so a later ``import nltk`` (by the user, by rouge-score) runs nltk's
``__init__`` as ever and gets modules of its own.  The modules returned keep working: their code and globals are
nltk's, only their names are no longer registered.

When nltk is already imported in the process, its modules are used as they are (the same objects).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

__all__ = ["nltk_modules"]

_LOCK = threading.RLock()


@contextlib.contextmanager
def nltk_modules(*names: str) -> Iterator[list[Any]]:
    """``with nltk_modules("nltk.tokenize.punkt") as (punkt,):`` the named nltk modules (see the module doc); build
    what needs nltk inside the ``with`` block."""
    with _LOCK:
        if "nltk" in sys.modules:  # nltk itself (or a caller's) is loaded: use it as it is
            yield [importlib.import_module(n) for n in names]
            return
        spec = importlib.util.find_spec("nltk")
        if spec is None or not spec.submodule_search_locations:
            raise ModuleNotFoundError("No module named 'nltk'", name="nltk")
        root = next(iter(spec.submodule_search_locations))
        before = set(sys.modules)
        try:
            for name in names:  # the packages above each module, as empty packages over nltk's folders
                parts = name.split(".")
                for k in range(1, len(parts)):
                    pkg = ".".join(parts[:k])
                    if pkg not in sys.modules:
                        stub = types.ModuleType(pkg)
                        stub.__path__ = [os.path.join(root, *parts[1:k])]
                        sys.modules[pkg] = stub
            yield [importlib.import_module(n) for n in names]
        finally:
            for added in set(sys.modules) - before:
                if added == "nltk" or added.startswith("nltk."):
                    del sys.modules[added]
