"""``python -m rageval``: the ``rageval`` command line (:mod:`rageval.cli`)."""

from rageval.cli.app import main

if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess in the tests
    main(prog_name="rageval")
