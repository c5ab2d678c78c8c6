"""The run directory: one on-disk format, written by the engine and read by every command (docs/architecture.md).

* :mod:`rageval.rundir.manifest` — :class:`~rageval.rundir.manifest.RunDir` and the
  :class:`~rageval.rundir.manifest.Manifest` (0.1.0's migrated), reading ``records.jsonl`` line by line;
* :mod:`rageval.rundir.records` — ``records.jsonl`` written as a run goes, in the run's order; each record's digest
  and the one check of a record read back (digest, declared bounds);
* :mod:`rageval.rundir.columns` — records as typed columns (question, setting, status, metrics): what the
  statistics read, so that :mod:`rageval.stats` takes arrays and knows no record format;
* :mod:`rageval.rundir.claim` — whose directory it is and which names rageval writes (refused before a write);
* :mod:`rageval.rundir.lock` — one writer per run directory.

A record's digest (a check that a saved record was not edited) lives in :mod:`rageval.rundir.records`, beside the
writer: written there, checked there by every reader (the report, ``rescore``, ``audit``, the record cache).  The engine (:mod:`rageval.run`) writes through this package; the report, ``rescore`` and ``audit`` read
through it and import from :mod:`rageval.run` only the plan, the engine and the parts.
"""
