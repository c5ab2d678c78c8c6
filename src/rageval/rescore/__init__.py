"""``rageval rescore``: any run directory's saved records scored again (:mod:`rageval.rescore.run`; the command in
:mod:`rageval.rescore.cli`)."""
