"""Quantitative information flow (QIF) view of shuffled k-RR.

Jurado, Gonze, Alvim, Palamidessi, *Analyzing the Shuffle Model through the Lens of Quantitative
Information Flow* (CSF 2023). Vulnerability = probability that an optimal adversary guesses a
single target's value; larger is worse, so ``upper`` ends of intervals are pessimistic.

* :mod:`~shuffle_accounting.qif.channels` — generic QIF core: channels, cascade,
  g-/Bayes vulnerability, additive/multiplicative leakage, reduction, equivalence, refinement
  (exact with ``fractions.Fraction``).
* :mod:`~shuffle_accounting.qif.shuffle_channels` — the paper's ``N``, ``S``, ``S^r``, ``N^r``
  on ``K^n`` (small ``n``) and the single-target gain.
* :mod:`~shuffle_accounting.qif.vulnerability` — closed forms (Prop. 14, 15, 20, 21; Thm. 17,
  19; eq. (15)-(17)) and the fast certified ``V[S]`` (expected maximum load).
* :mod:`~shuffle_accounting.qif.strong_adversary` — all-but-one adversary, eq. (10).

The leakage report (``LeakageReport``, ``leakage_report``, ``report_section``) and the Fig. 2/4-style
curves moved to :mod:`shuffle_accounting.presentation.qif_report` and
:mod:`shuffle_accounting.presentation.qif_plot`; the old names here are deprecated aliases.

Example:
    >>> from shuffle_accounting import qif
    >>> round(qif.shuffle_vulnerability(k=2, n=200), 6), round(qif.krr_shuffle_vulnerability(2, 0.9, 200), 5)
    (0.528174, 0.52254)
"""

from .._deprecation import moved_names
from ._common import Estimate, krr_keep_probability
from .channels import (
    additive_leakage,
    as_channel,
    cascade,
    equivalent,
    identity_gain,
    multiplicative_leakage,
    posterior_bayes_vulnerability,
    posterior_distributions,
    posterior_g_vulnerability,
    prior_bayes_vulnerability,
    prior_g_vulnerability,
    reduce_channel,
    refines,
    uniform_prior,
)
from .shuffle_channels import (
    all_but_one_prior,
    datasets,
    histograms,
    krr_channel,
    reduced_krr_channel,
    reduced_shuffle_channel,
    shuffle_channel,
    single_target_gain,
)
from .strong_adversary import all_but_one_vulnerability, all_but_one_vulnerability_bounds
from .vulnerability import (
    expected_max_load,
    krr_shuffle_vulnerability,
    krr_shuffle_vulnerability_asymptotic,
    krr_shuffle_vulnerability_binary,
    krr_shuffle_vulnerability_bounds,
    krr_shuffle_vulnerability_exact,
    krr_vulnerability,
    prior_vulnerability,
    shuffle_vulnerability,
    shuffle_vulnerability_asymptotic,
    shuffle_vulnerability_binary,
    shuffle_vulnerability_bounds,
    shuffle_vulnerability_exact,
)

__all__ = [
    "Estimate",
    "krr_keep_probability",
    "additive_leakage",
    "as_channel",
    "cascade",
    "equivalent",
    "identity_gain",
    "multiplicative_leakage",
    "posterior_bayes_vulnerability",
    "posterior_distributions",
    "posterior_g_vulnerability",
    "prior_bayes_vulnerability",
    "prior_g_vulnerability",
    "reduce_channel",
    "refines",
    "uniform_prior",
    "all_but_one_prior",
    "datasets",
    "histograms",
    "krr_channel",
    "reduced_krr_channel",
    "reduced_shuffle_channel",
    "shuffle_channel",
    "single_target_gain",
    "all_but_one_vulnerability",
    "all_but_one_vulnerability_bounds",
    "expected_max_load",
    "krr_shuffle_vulnerability",
    "krr_shuffle_vulnerability_asymptotic",
    "krr_shuffle_vulnerability_binary",
    "krr_shuffle_vulnerability_bounds",
    "krr_shuffle_vulnerability_exact",
    "krr_vulnerability",
    "prior_vulnerability",
    "shuffle_vulnerability",
    "shuffle_vulnerability_asymptotic",
    "shuffle_vulnerability_binary",
    "shuffle_vulnerability_bounds",
    "shuffle_vulnerability_exact",
]

#: Presentation names that moved to :mod:`shuffle_accounting.presentation` (deprecated aliases).
__getattr__ = moved_names(
    __name__,
    {
        "LeakageReport": "shuffle_accounting.presentation.qif_report",
        "leakage_report": "shuffle_accounting.presentation.qif_report",
        "report_section": "shuffle_accounting.presentation.qif_report",
        "plot_vulnerability_curves": "shuffle_accounting.presentation.qif_plot",
        "vulnerability_curves": "shuffle_accounting.presentation.qif_plot",
    },
)
