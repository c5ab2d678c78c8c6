"""The shape of a catalog entry: :class:`DiagnosticSpec` and the :class:`Output` s it writes
(:mod:`rageval.diagnostics.catalog` holds the entries and the :class:`~rageval.diagnostics.catalog.Catalog`)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = ["COUNT", "RATE", "Bounds", "DiagnosticSpec", "Direction", "Family", "Output", "record_bounds"]

#: a closed range ``(low, high)`` of values; ``math.inf`` for no upper end (a count)
Bounds = tuple[float, float]
#: the bounds of a rate, a share or a score, and of a count (tokens, items, calls): every record value of a catalog
#: output lies in its declared bounds (refused outside when a run is read back: docs/security.md)
RATE: Bounds = (0.0, 1.0)
COUNT: Bounds = (0.0, math.inf)
Direction = Literal["higher", "lower", "none"]
Family = Literal["answer", "retrieval", "attribution", "cost"]


@dataclass(frozen=True)
class Output:
    """One record metric a diagnostic writes, and which way is better."""

    key: str
    direction: Direction
    description: str = ""
    view: bool = False  # a secondary view of another output (e.g. ``_excl_abstain``): shown, not contrasted by default
    # the range every value (per question and mean) lies in, e.g. (0.0, 1.0) for a rate, (0.0, inf) for a count:
    # checked by the common tests, and on every read of a run's records (a finite number outside, or an
    # infinity, is refused; None/NaN is undefined and allowed); None: not declared (nothing checked)
    bounds: Bounds | None = None


@dataclass(frozen=True, kw_only=True)
class DiagnosticSpec:
    """Everything about one diagnostic (see the module doc); built by keyword."""

    name: str
    version: str
    summary: str
    family: Family
    function: str  # "module:function" of the pure function
    outputs: tuple[Output, ...]  # the record metrics it writes
    needs: tuple[str, ...] = ()  # gold fields; applicable when an example has any of them ("auto")
    scorer: str | None = None  # "module:function" (inputs, options) -> result dict with per_question
    engine_parts: tuple[str, ...] = ()  # scored by the attribution engine, with these parts
    module_keys: tuple[Output, ...] = ()  # further aggregates its evaluate module returns (and owns)
    # an engine diagnostic's record metrics from the engine row: "module:function" (row, input) -> values;
    # None: its declared output keys read from the row
    record_values: str | None = None
    # what it adds to each record's ``extra`` beyond the engine row: "module:function" (inputs, options,
    # judge) -> {input index: {key: value}}; None: nothing
    record_extra: str | None = None
    judged: bool = False  # its scorer takes the run's judge too: (inputs, options, judge) (e.g. claims_recall)

    @property
    def direction(self) -> Direction:
        """The direction of the headline output (the first)."""
        return self.outputs[0].direction

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(o.key for o in self.outputs)

    @property
    def also(self) -> tuple[str, ...]:
        """The other keys (record outputs and module aggregates) besides the name."""
        return tuple(k for k in dict.fromkeys(self.keys + tuple(o.key for o in self.module_keys)) if k != self.name)

    @property
    def uses_judge(self) -> bool:
        return bool(self.engine_parts) or self.judged


def record_bounds(specs: Iterable[DiagnosticSpec]) -> dict[str, Bounds]:
    """Each record output's declared bounds (outputs without any left out; a key two diagnostics write: the
    narrower range both declare)."""
    out: dict[str, Bounds] = {}
    for spec in specs:
        for o in spec.outputs:
            if o.bounds is not None:
                lo, hi = out.get(o.key, (-math.inf, math.inf))
                out[o.key] = (max(lo, o.bounds[0]), min(hi, o.bounds[1]))
    return out
