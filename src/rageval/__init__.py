"""rageval: metrics for retrieval-augmented generation under context compression.

Importing the package is cheap: nothing heavy (torch, transformers, evaluate) is
imported until a feature that needs it is used.
"""

__version__ = "0.1.0"
