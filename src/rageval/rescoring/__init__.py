"""``rageval rescore``: any run directory's saved records scored again (:mod:`rageval.rescoring.run`; the command in
:mod:`rageval.rescoring.cli`)."""
