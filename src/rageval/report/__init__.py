"""rageval.report."""
