"""Compressors: question + source snippets + budget -> Context (registered by name)."""
