"""``python -m rageval.cli``: the same command line as ``rageval`` and ``python -m rageval``."""

from rageval.cli.app import main

if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess in the tests
    main(prog_name="rageval")
