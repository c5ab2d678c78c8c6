"""One registry helper: names -> lazily imported objects of one kind, typed metadata, one "did you mean".

Every pluggable family (compressors, readers, judges, dataset loaders, retrieval
methods, the diagnostics' functions) is a :class:`Registry`, filled the same way:
one :meth:`Registry.register` call per member, ``register(name, "module:attr",
Meta(...))``.  The target is imported on the first :meth:`Registry.get`, never when
it is registered, so listing or validating names stays cheap (no torch, no model
code); when it is imported it is checked against the registry's ``base`` (a class
must subclass it; without a base, the target must be callable).  Metadata is one
object of the registry's ``meta`` type (a frozen dataclass), so a misspelt field is
an error where it is registered, not a silent ``None`` where it is read.

Unknown names fail the same way everywhere, through :func:`unknown_name`:

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Colour:
...     hex: str = ""
>>> r = Registry("colour", meta=Colour)
>>> r.register("red", "json:dumps", Colour(hex="#f00"))
>>> r.register("green", len, aliases=("vert",))
>>> r.names(), "vert" in r, len(r)
(['red', 'green'], True, 2)
>>> r.get("vert") is len, r.canonical("vert"), r.aliases("green")
(True, 'green', ('vert',))
>>> r.meta("red").hex, r.meta("green")
('#f00', Colour(hex=''))
>>> r.get("greem")
Traceback (most recent call last):
...
rageval.registry.UnknownNameError: Unknown colour 'greem'. Did you mean 'green'?
>>> print(unknown_name("colour", "blue", r, where="palette[0]"))
Unknown colour 'blue' in palette[0]. Known: red, green.
>>> did_you_mean("submodluar", ["mmr", "submodular"])
" Did you mean 'submodular'?"
>>> did_you_mean("xyz", ["mmr", "submodular"])
''
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["NoMeta", "Registry", "UnknownNameError", "closest", "did_you_mean", "import_target", "unknown_name"]

T = TypeVar("T")
M = TypeVar("M")


def closest(name: Any, known: Iterable[Any], *, cutoff: float = 0.6) -> str | None:
    """The known name closest to ``name`` (``difflib`` ratio >= ``cutoff``, ignoring case), else None.

    >>> closest("lexcal", ["lexical", "minilm"]), closest("MiniLM", ["lexical", "minilm"]), closest("zzz", ["lexical"])
    ('lexical', 'minilm', None)
    """
    by_lower: dict[str, str] = {}
    for k in known:
        by_lower.setdefault(str(k).lower(), str(k))
    close = difflib.get_close_matches(str(name).lower(), list(by_lower), n=1, cutoff=cutoff)
    return by_lower[close[0]] if close else None


def did_you_mean(name: Any, known: Iterable[Any], *, cutoff: float = 0.6) -> str:
    """``" Did you mean 'x'?"`` (with a leading space) for the closest known name, else ``""``."""
    close = closest(name, known, cutoff=cutoff)
    return f" Did you mean {close!r}?" if close is not None else ""


def import_target(target: str) -> Any:
    """The object a ``"module:attr"`` string names, imported now.

    >>> import_target("json:dumps")([1])
    '[1]'
    """
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)


class UnknownNameError(ValueError):
    """A name that is not registered; ``kind``, ``name`` and ``known`` say which, what and what exists."""

    def __init__(self, message: str, *, kind: str, name: Any, known: Iterable[Any]):
        super().__init__(message)
        self.kind, self.name, self.known = kind, name, tuple(known)


def unknown_name(
    kind: str,
    name: Any,
    known: Iterable[Any],
    *,
    where: str | None = None,
    cutoff: float = 0.6,
    spellings: Iterable[Any] | None = None,
    error: type[UnknownNameError] = UnknownNameError,
) -> UnknownNameError:
    """The error for an unknown ``name`` of ``kind`` (returned, for the caller to raise).

    The message is ``Unknown {kind} {name!r}[ in {where}].`` followed by the
    closest known name (``Did you mean 'x'?``) or, when none is close, the list
    of known names.  ``spellings`` (default ``known``) are the names a hint may
    suggest, e.g. aliases as well; ``error`` a subclass of
    :class:`UnknownNameError` to raise instead.

    >>> print(unknown_name("reader", "extractiv", ["extractive", "saved"]))
    Unknown reader 'extractiv'. Did you mean 'extractive'?
    >>> e = unknown_name("reader", "zzz", [], where="reader.backend")
    >>> str(e), e.kind, e.name, e.known
    ("Unknown reader 'zzz' in reader.backend. Known: (none).", 'reader', 'zzz', ())
    """
    known = [str(k) for k in known]
    hint = did_you_mean(name, known if spellings is None else spellings, cutoff=cutoff)
    if not hint:
        hint = f" Known: {', '.join(known) if known else '(none)'}."
    at = f" in {where}" if where else ""
    return error(f"Unknown {kind} {name!r}{at}.{hint}", kind=kind, name=name, known=known)


@dataclass(frozen=True)
class NoMeta:
    """The metadata of a family that has none."""


class Registry(Generic[T, M]):
    """Names of one ``kind`` -> objects of type ``T`` with metadata of type ``M``, in registration order.

    ``register(name, target, meta)``: ``target`` is the object itself or a
    ``"module:attr"`` string imported on the first :meth:`get` (registering never
    imports it); ``meta`` an instance of the registry's ``meta`` type (default: that
    type built without arguments); ``aliases`` other spellings that :meth:`get` and
    ``in`` accept.  ``base``: the class every target must subclass (checked when it is
    registered as an object, or imported); without one a target must be callable.
    Unknown names raise :func:`unknown_name` (``error=`` picks the exception class,
    ``cutoff=`` how close a suggestion must be).
    """

    def __init__(
        self,
        kind: str,
        *,
        base: type | None = None,
        meta: type[M] = NoMeta,  # type: ignore[assignment]
        error: type[UnknownNameError] = UnknownNameError,
        cutoff: float = 0.6,
    ):
        self.kind = kind
        self.base = base
        self.meta_type = meta
        self.error = error
        self.cutoff = cutoff
        self._targets: dict[str, str | T] = {}
        self._meta: dict[str, M] = {}
        self._aliases: dict[str, str] = {}
        self._loaded: dict[str, T] = {}

    def register(self, name: str, target: str | T, meta: M | None = None, *, aliases: Sequence[str] = ()) -> None:
        """Add ``name`` (a new, non-empty string) -> ``target`` with ``meta``."""
        for n in (name, *aliases):
            if not isinstance(n, str) or not n:
                raise TypeError(f"{self.kind} names must be non-empty strings, got {n!r}")
            if n in self._targets or n in self._aliases:
                raise ValueError(f"{self.kind} {n!r} is already registered")
        if isinstance(target, str):
            if target.count(":") != 1 or not all(target.split(":")):
                raise ValueError(f"{self.kind} {name!r}: a string target must be 'module:attr', got {target!r}")
        else:
            self._check(name, target)
        if meta is None:
            meta = self.meta_type()
        elif not isinstance(meta, self.meta_type):
            raise TypeError(
                f"{self.kind} {name!r}: metadata must be a {self.meta_type.__name__}, got {type(meta).__name__}"
            )
        self._targets[name] = target
        self._meta[name] = meta
        for a in aliases:
            self._aliases[a] = name

    def _check(self, name: str, target: Any) -> None:
        if self.base is None:
            if not callable(target):
                raise TypeError(f"{self.kind} {name!r}: the target must be callable, got {type(target).__name__}")
        elif not (isinstance(target, type) and issubclass(target, self.base)):
            raise TypeError(f"{self.kind} {name!r}: {target!r} is not a subclass of {self.base.__name__}")

    def unregister(self, name: str) -> None:
        """Remove ``name`` and its aliases (a name that is not registered is ignored)."""
        self._targets.pop(name, None)
        self._meta.pop(name, None)
        self._loaded.pop(name, None)
        for a in [a for a, n in self._aliases.items() if n == name]:
            del self._aliases[a]

    def canonical(self, name: Any) -> str:
        """The registered name of ``name`` or of its alias (unknown names raise)."""
        if isinstance(name, str):
            if name in self._targets:
                return name
            if name in self._aliases:
                return self._aliases[name]
        raise unknown_name(
            self.kind, name, self.names(), cutoff=self.cutoff, spellings=self.spellings(), error=self.error
        )

    def get(self, name: Any) -> T:
        """The object registered as ``name`` (imported and checked now if it was given as ``"module:attr"``)."""
        key = self.canonical(name)
        if key not in self._loaded:
            target = self._targets[key]
            if isinstance(target, str):
                loaded = import_target(target)
                self._check(key, loaded)
                target = loaded
            self._loaded[key] = target
        return self._loaded[key]

    def names(self) -> list[str]:
        """Registered names (not aliases), in registration order."""
        return list(self._targets)

    def spellings(self) -> list[str]:
        """Registered names and their aliases."""
        return [*self._targets, *self._aliases]

    def aliases(self, name: Any) -> tuple[str, ...]:
        """The other spellings of ``name``."""
        key = self.canonical(name)
        return tuple(a for a, n in self._aliases.items() if n == key)

    def meta(self, name: Any) -> M:
        """The metadata given at registration (frozen)."""
        return self._meta[self.canonical(name)]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._targets or name in self._aliases)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._targets)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._targets)})"
