"""rageval.data."""
