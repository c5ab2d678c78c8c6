"""How many replicates a family of tests needs, and the smallest Holm-adjusted p it can reach.

The sign-flip test's Monte-Carlo p-value is add-one, ``(1 + #{T_b >= T_obs}) / (B + 1)``,
so its smallest value is ``1 / (B + 1)``, and Holm multiplies the smallest p of a
family of ``m`` contrasts by ``m``: no row can reach a Holm-adjusted p below the
**floor** ``m / (B + 1)`` (docs/statistics.md#resolution).  With the paper's fixed
``B = 10,000`` a family of 500 contrasts has a floor of 0.05: nothing can be
significant at alpha = 0.05, however large the effect.

The replicate setting (``--resamples`` of ``rageval report``, ``score`` and
``audit``; ``statistics.resamples`` of a suite):

* ``auto`` (the default): the bootstrap keeps :data:`PAPER_RESAMPLES` replicates
  (its percentiles do not depend on the family size) and the test draws
  ``B = max(10,000, 10 m / alpha)`` rounded up to a whole chunk of 1,000, so the
  floor ``m / (B + 1)`` is below ``alpha / 10``; at most :data:`MAX_TEST_RESAMPLES`
  (from ``m > 5,000`` at alpha = 0.05 the floor rises above alpha / 10 and the
  report says so).  A family of at most 50 contrasts gets 10,000: the paper's numbers.
* ``paper`` or ``10000``: the paper's protocol, 10,000 replicates for both (add-one).
* any other positive integer: that many replicates for both.

Where ``2**K <= B`` (``K`` questions or clusters) every sign vector is enumerated and
the p-value is exact; its floor is then ``m * 2 / 2**K`` (the two all-one-sign vectors
reach the observed statistic), which no replicate count can lower.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AUTO",
    "PAPER",
    "PAPER_RESAMPLES",
    "MAX_TEST_RESAMPLES",
    "FLOOR_MARGIN",
    "Replicates",
    "parse_resamples",
    "auto_test_resamples",
    "replicates_for",
    "holm_floor",
    "resolution",
    "with_family_size",
]

AUTO = "auto"
PAPER = "paper"
#: the paper's replicate count (bootstrap and sign-flip test, add-one p-values)
PAPER_RESAMPLES = 10_000
#: the most sign-flip replicates ``auto`` draws (a family of 5,000 contrasts at alpha = 0.05)
MAX_TEST_RESAMPLES = 1_000_000
#: ``auto`` keeps the floor at or below alpha / FLOOR_MARGIN; the report warns from that point on
FLOOR_MARGIN = 10
#: ``auto`` rounds B up to a whole number of the engine's chunks (rageval.stats.resample)
_ROUND = 1000


def parse_resamples(value: Any) -> int | str:
    """``"auto"``, or a replicate count from 1 to :data:`MAX_TEST_RESAMPLES` (``"paper"`` is 10,000); raises
    ValueError otherwise (a count past the cap would run for hours and is no more exact than the add-one floor says).

    >>> parse_resamples("auto"), parse_resamples("paper"), parse_resamples("2000"), parse_resamples(500)
    ('auto', 10000, 2000, 500)
    """
    if isinstance(value, str):
        v = value.strip().lower()
        if v == AUTO:
            return AUTO
        if v == PAPER:
            return PAPER_RESAMPLES
        digits = v.replace("_", "")
        if digits.isascii() and digits.isdigit():
            if len(digits) > 12:  # never int() a 5,000-digit string
                raise ValueError(f"resamples must be at most {MAX_TEST_RESAMPLES:,} (got a {len(digits)}-digit number)")
            value = int(digits)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"resamples must be 'auto', 'paper' or a positive integer, got {value!r}")
    if value > MAX_TEST_RESAMPLES:
        raise ValueError(
            f"resamples must be at most {MAX_TEST_RESAMPLES:,} (got {value:,}); 'auto' sizes the test for the family"
        )
    return value


def auto_test_resamples(m: int, alpha: float = 0.05) -> int:
    """Sign-flip replicates for a Holm family of ``m``: the floor ``m / (B + 1)`` at most ``alpha / 10``.

    ``max(10,000, 10 m / alpha)`` rounded up to a multiple of 1,000, at most 1,000,000.

    >>> auto_test_resamples(12), auto_test_resamples(50), auto_test_resamples(51), auto_test_resamples(504)
    (10000, 10000, 11000, 101000)
    >>> auto_test_resamples(10**5)
    1000000
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    need = math.ceil(round(FLOOR_MARGIN * max(int(m), 0) / alpha, 9) / _ROUND) * _ROUND
    return min(max(PAPER_RESAMPLES, need), MAX_TEST_RESAMPLES)


@dataclass(frozen=True)
class Replicates:
    """The replicate counts of one engine call: ``bootstrap`` (the intervals) and ``test`` (the sign-flip test)."""

    bootstrap: int
    test: int
    setting: str  # "auto" or "fixed"


def replicates_for(setting: int | str, m: int, alpha: float = 0.05) -> Replicates:
    """The replicates of a family of ``m`` Holm-adjusted tests under ``setting`` (see the module doc).

    >>> replicates_for("auto", 504)
    Replicates(bootstrap=10000, test=101000, setting='auto')
    >>> replicates_for(10_000, 504)
    Replicates(bootstrap=10000, test=10000, setting='fixed')
    """
    s = parse_resamples(setting)
    if s == AUTO:
        return Replicates(PAPER_RESAMPLES, auto_test_resamples(m, alpha), AUTO)
    assert isinstance(s, int)
    return Replicates(s, s, "fixed")


def holm_floor(m: int, n_resamples: int, exact: bool = False, n_blocks: int = 0) -> float:
    """The smallest Holm-adjusted p a family of ``m`` can reach: ``m / (B + 1)`` (Monte Carlo, add-one) or
    ``m * 2 / 2**K`` (exact enumeration over ``K`` blocks), at most 1.

    >>> holm_floor(252, 10_000), holm_floor(504, 10_000), holm_floor(10, 0, exact=True, n_blocks=10)
    (0.025197480251974803, 0.05039496050394961, 0.01953125)
    """
    if m <= 0:
        return 0.0
    low = 2.0 / 2.0**n_blocks if exact else 1.0 / (n_resamples + 1.0)
    return min(1.0, m * low)


def resolution(
    m: int, reps: Replicates, *, exact: bool = False, n_blocks: int = 0, alpha: float = 0.05
) -> dict[str, Any]:
    """What the report says about a Holm family's resolution: method, B, m, the floor and, when the floor is
    at or above ``alpha / 10``, a warning naming them."""
    floor = holm_floor(m, reps.test, exact, n_blocks)
    method = f"sign-flip, exact (all 2^{n_blocks} sign vectors)" if exact else "sign-flip, Monte Carlo (add-one)"
    warning = None
    if m > 0 and floor >= alpha / FLOOR_MARGIN:
        why = (
            f"the smallest exact p over {n_blocks} blocks is 2/2^{n_blocks}"
            if exact
            else f"the smallest add-one p is 1/(B+1) with B = {reps.test:,}"
        )
        verdict = "no contrast can reach" if floor >= alpha else f"within a factor {FLOOR_MARGIN} of"
        fix = "" if exact or reps.setting == AUTO else "; --resamples auto sizes B for the family"
        warning = (
            f"Holm floor {floor:.4g} = the smallest attainable Holm-adjusted p for a family of m = {m} "
            f"({why}): {verdict} alpha = {alpha:g}{fix}."
        )
    return {
        "method": method,
        "exact": exact,
        "n_blocks": n_blocks,
        "setting": reps.setting,
        "n_resamples": reps.test,
        "n_bootstrap": reps.bootstrap,
        "m": m,
        "floor": floor,
        "alpha": alpha,
        "warning": warning,
    }


def with_family_size(res: dict[str, Any], m: int) -> dict[str, Any]:
    """``res`` (a :func:`resolution`) for a family of ``m`` instead (the union of several runs)."""
    reps = Replicates(int(res["n_bootstrap"]), int(res["n_resamples"]), str(res["setting"]))
    return resolution(m, reps, exact=bool(res["exact"]), n_blocks=int(res["n_blocks"]), alpha=float(res["alpha"]))
