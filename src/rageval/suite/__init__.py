"""rageval.suite."""
