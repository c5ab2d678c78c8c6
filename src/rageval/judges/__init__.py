"""rageval.judges."""
