"""Human labels for a run\x27s judge decisions: export, apply, plan (docs/score.md#human-labels)."""
