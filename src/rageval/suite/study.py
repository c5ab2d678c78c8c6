"""The study sections of a suite: ``audit:`` (a second-evaluator audit) and ``frontier:`` (Pareto axes),
and the load-time check of the whole study (contrast plan, audit settings, frontier axes).

::

    audit:
      judge: google/t5_xxl_true_nli_mixture   # the second judge (a judge spec, see docs/judges.md)
      n: 100                                   # questions, a seeded subsample of the audit's cohort
      settings: [identity, extractive@0.25]    # default: every setting
      modes: [fixed, rerecover]                # fixed mappings and re-recovery (default: both)
      params: {max_length: 4096}               # the second judge's options, as judge.params (default: none)
    frontier:
      axes:                                    # [x, y] pairs; default: the two below
        - [achieved_ratio, grounded_precision]
        - [achieved_ratio, answer_in_context]
      alpha: 0.05                              # level of the Holm-adjusted dominance tests
      min_defined: 0.5                         # a setting with less of the cohort defined on both axes is sparse
      sparse: exclude                          # a sparse setting is marked, never on the frontier (include: ranked)

Neither section changes a record, so neither enters the suite hash.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rageval.diagnostics import CATALOG
from rageval.judges.checks import params_problems
from rageval.registry import did_you_mean
from rageval.report.axes import AXIS_KEYS, DEFAULT_AXES, axis_direction
from rageval.stats.contrasts import expand_plan

__all__ = ["AuditSpec", "FrontierSpec", "AXIS_KEYS", "DEFAULT_AXES", "study_problems", "axis_direction"]

#: axes read from each record's context rather than its metrics (lower is better: less context)


def _both_modes() -> list[Literal["fixed", "rerecover"]]:
    return ["fixed", "rerecover"]


def _default_axes() -> list[tuple[str, str]]:
    return [(x, y) for x, y in DEFAULT_AXES]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AuditSpec(_Strict):
    judge: str = Field(description="the second judge's spec (lexical, minilm, a model folder or hub id, ...)")
    n: int = Field(100, ge=1, description="questions in the seeded subsample")
    settings: list[str] | None = Field(None, description="settings to audit (default: every setting)")
    modes: list[Literal["fixed", "rerecover"]] = Field(
        default_factory=_both_modes, description="fixed mappings and/or re-recovery"
    )
    seed: int | None = Field(None, description="subsample seed (default: the suite's seed)")
    threshold: float | None = Field(None, ge=0.0, le=1.0, description="the second judge's threshold")
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="the second judge's options, as judge.params (max_length: 4096 for the paper's TRUE audit)",
    )

    @field_validator("modes")
    @classmethod
    def _modes(cls, v):
        if not v:
            raise ValueError("modes must list at least one of fixed, rerecover")
        if len(set(v)) != len(v):
            raise ValueError(f"modes lists a mode twice: {v}")
        return v


class FrontierSpec(_Strict):
    axes: list[tuple[str, str]] = Field(default_factory=_default_axes)
    alpha: float = Field(0.05, gt=0.0, lt=1.0, description="level of the Holm-adjusted dominance tests")
    min_defined: float = Field(
        0.5, ge=0.0, le=1.0, description="a setting with a smaller share of the cohort defined on both axes is sparse"
    )
    sparse: Literal["exclude", "include"] = Field(
        "exclude", description="exclude: a sparse setting is marked and never on the frontier; include: ranked"
    )

    @field_validator("axes")
    @classmethod
    def _axes(cls, v):
        if not v:
            raise ValueError("axes must list at least one [x, y] pair")
        for x, y in v:
            if x == y:
                raise ValueError(f"axes pair [{x}, {y}] names one metric twice")
        return v


def _known_metrics() -> list[str]:
    keys = [o.key for s in CATALOG.values() for o in s.outputs + s.module_keys]
    return list(dict.fromkeys(keys))


def study_problems(suite: Any) -> list[str]:
    """Every problem of the contrast plan, the audit and the frontier axes of ``suite`` (one line each)."""

    problems = []
    settings = suite.setting_refs()
    names = [s["name"] for s in settings]
    known = _known_metrics()
    try:
        expand_plan(suite.contrasts, settings, default_metrics=("(default metrics)",), known_metrics=known)
    except (ValueError, TypeError) as err:
        problems.append(f"  {err}")
    audit = getattr(suite, "audit", None)
    if audit is not None:
        problems += params_problems(audit.judge, audit.params, "audit")
        for i, s in enumerate(audit.settings or []):
            if s not in names:
                hint = did_you_mean(s, names) or f" Known: {', '.join(names)}."
                problems.append(f"  audit.settings[{i}]: unknown setting {s!r}.{hint}")
    frontier = getattr(suite, "frontier", None)
    if frontier is not None:
        for i, pair in enumerate(frontier.axes):
            for j, key in enumerate(pair):
                if key not in AXIS_KEYS and key not in known:
                    hint = did_you_mean(key, list(AXIS_KEYS) + known) or ""
                    problems.append(f"  frontier.axes[{i}][{j}]: unknown metric {key!r}.{hint}")
                elif axis_direction(key) == "none":
                    problems.append(
                        f"  frontier.axes[{i}][{j}]: {key!r} has no direction (neither higher nor lower is better): "
                        "a frontier needs one on both axes"
                    )
    return problems
