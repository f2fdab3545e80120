"""Bayesian re-identification risk in the shuffle model (Su, Cheng, Wang).

Su, Cheng, Wang, *Bayesian Advantage of Re-Identification Attack in the Shuffle Model*:

* :mod:`.basic` — exact ``beta_n^k(P, Q)`` for discrete ``P``, ``Q`` (Theorem 4 and its exact
  k-guess form with ties), advantages, total variation, the Theorem 5 bounds;
* :mod:`.continuous` — Theorems 1-2 for a continuous likelihood-ratio law, with an error estimate;
* :mod:`.shuffle` — :class:`ReidentificationRisk` for k-RR or any finite randomizer: blanket,
  clone and limit bounds (Theorems 7-10), exact small-``n`` worst case (the report section is
  :mod:`shuffle_accounting.presentation.reidentification_report`);
* :mod:`.examples` — Examples IV.1 and IV.2 (exact Zipf values and the Beta approximation).

Example:
    >>> import math
    >>> from shuffle_accounting import KRR
    >>> risk = ReidentificationRisk(KRR(k=2, eps0=math.log(3)), n=10)
    >>> risk.lower_bound() <= risk.bound() <= risk.bound(method="clone") <= 3 / 10
    True
"""

from .._deprecation import moved_names
from .basic import (
    AdvantageBounds,
    additive_advantage,
    advantage_bounds,
    multiplicative_advantage,
    success_probability,
    total_variation,
)
from .continuous import ContinuousEstimate, success_probability_continuous
from .examples import (
    ZipfClaims,
    example_iv1_success,
    zipf_beta_approximation,
    zipf_claims,
    zipf_distribution,
    zipf_uniform_success,
)
from .shuffle import (
    ReidentificationRisk,
    WorstCase,
    clone_bound,
    game2_success_probability,
)

__all__ = [
    "success_probability",
    "additive_advantage",
    "multiplicative_advantage",
    "total_variation",
    "AdvantageBounds",
    "advantage_bounds",
    "ContinuousEstimate",
    "success_probability_continuous",
    "ReidentificationRisk",
    "WorstCase",
    "clone_bound",
    "game2_success_probability",
    "example_iv1_success",
    "zipf_distribution",
    "zipf_uniform_success",
    "zipf_beta_approximation",
    "ZipfClaims",
    "zipf_claims",
]

#: Presentation names that moved to :mod:`shuffle_accounting.presentation` (deprecated aliases).
__getattr__ = moved_names(
    __name__, {"report_section": "shuffle_accounting.presentation.reidentification_report"}
)
