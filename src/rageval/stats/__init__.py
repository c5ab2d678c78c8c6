"""rageval.stats: paired statistics for compression studies (docs/statistics.md;
docs/design.md#statistics).

Pure, seeded (``np.random.default_rng(seed)``) and vectorized:

* :func:`cohort_of`: questions ``ok`` in every setting, with what each setting lost (from a question x setting
  table; records are read into one by :mod:`rageval.rundir.columns`);
* :func:`paired_tests`: paired (optionally cluster) bootstrap CIs and sign-flip
  p-values for a whole family of contrasts in a few matrix products;
* :func:`holm`: Holm adjustment over the family;
* :func:`validity_analysis`: answer-in-context vs recall as predictors of answer F1 (cluster-bootstrap
  intervals with ``clusters``);
* :func:`mediation_analysis`: recall -> answer-in-context -> quality, the indirect and direct effects
  (linear models) with cluster-bootstrap intervals.
* :func:`gain_decomposition`: a contrast's mean difference split by answer-in-context (new, lost, both,
  neither, undefined), with paired (cluster) bootstrap intervals (:func:`gain_decompositions`: several contrasts
  of one cohort at once).
"""

from rageval.stats.cohort import Cohort, cohort_of
from rageval.stats.gain import GAIN_GROUPS, GainDecomposition, gain_decomposition, gain_decompositions
from rageval.stats.holm import holm
from rageval.stats.mediation import mediation_analysis, mediation_stats
from rageval.stats.resample import PairedResults, paired_tests
from rageval.stats.validity import validity_analysis, validity_stats

__all__ = [
    "Cohort",
    "cohort_of",
    "GAIN_GROUPS",
    "GainDecomposition",
    "gain_decomposition",
    "gain_decompositions",
    "holm",
    "mediation_analysis",
    "mediation_stats",
    "PairedResults",
    "paired_tests",
    "validity_analysis",
    "validity_stats",
]
