"""rageval.stats."""
