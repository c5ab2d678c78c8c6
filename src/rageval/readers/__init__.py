"""rageval.readers."""
