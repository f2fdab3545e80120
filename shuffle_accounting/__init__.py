"""shuffle_accounting: privacy accounting for the shuffle model of differential privacy.

Subpackages, one per paper/concept:

* :mod:`shuffle_accounting.shuffled_krr` — certified and exact (eps, delta) for shuffled k-RR
  (privacy blanket of Balle et al. 2019; per-dataset curves of Biswas, Jung, Palamidessi),
  exhibited lower bounds, composition and calibration.
* :mod:`shuffle_accounting.literature` — published amplification bounds, side by side.
* :mod:`shuffle_accounting.reidentification` — Bayesian re-identification (Su, Cheng, Wang).
* :mod:`shuffle_accounting.qif` — QIF leakage (Jurado, Gonze, Alvim, Palamidessi).
* :mod:`shuffle_accounting.dsigma` — d_sigma-privacy and the Mallows shuffler (Meehan et al.).
* :mod:`shuffle_accounting.runtime` — randomizer, shufflers, analyzer, simulation.
* :mod:`shuffle_accounting.adapters` — OpenDP, diffprivlib and dp_accounting glue.

Example:
    >>> from shuffle_accounting import ShuffledKRR
    >>> m = ShuffledKRR(k=10, eps0=2.0, n=10_000)
    >>> eps = m.epsilon(1e-6)
    >>> bool(m.epsilon_lower(1e-6) <= eps < 2.0)
    True
"""

from . import literature, qif, reidentification
from ._validation import ParameterError
from .randomizers import KRR, FiniteRandomizer
from .shuffled_krr import (
    ShuffleAccountant,
    ShuffledKRR,
    ShuffledKRRDpEvent,
    calibrate_eps0,
    dataset_delta,
    min_users,
)

__all__ = [
    "ParameterError",
    "KRR",
    "FiniteRandomizer",
    "ShuffledKRR",
    "dataset_delta",
    "ShuffleAccountant",
    "ShuffledKRRDpEvent",
    "calibrate_eps0",
    "min_users",
    "literature",
    "reidentification",
    "qif",
]
__version__ = "0.1.0"
