"""Run and rehearse a shuffled k-RR collection.

* :class:`KRRRandomizer` — client-side k-RR over declared categories with exact rational output
  probabilities; private mode (``rng=None``) draws from the OS CSPRNG, and ``effective_eps0``
  (rounded up) is what the accountant must be given.
* :class:`Shuffler` — uniform shuffle that refuses batches smaller than ``min_batch``; any object
  with ``shuffle(reports, *, rng=None)`` (:class:`ShufflerLike`) can replace it.
* Analyzer — :func:`histogram`, :func:`estimate_frequencies` (matrix inversion),
  :func:`project_simplex`, :func:`total_variation`: the shuffle+INV pipeline of Biswas, Jung,
  Palamidessi.
* :class:`CollectionSession` — randomize, queue, shuffle and release rounds, certifying the
  cumulative ``(eps, delta)`` with the ShuffleAccountant and refusing rounds over budget.
* :func:`gaussian_histogram` — central baseline with diffprivlib's ``GaussianAnalytic``.
* :func:`simulate` — utility of shuffle, shuffle+INV and the Gaussian baseline across ``n``
  (simulation mode, NOT private); :func:`plot_simulation` draws it.

A seed or numpy Generator passed as ``rng`` selects simulation mode everywhere: reproducible and
NOT private.
"""

from .analyzer import estimate_frequencies, histogram, project_simplex, total_variation
from .baseline import HISTOGRAM_L2_SENSITIVITY, gaussian_histogram, gaussian_sigma
from .plot import plot_simulation
from .randomizer import EncodedReports, KRRRandomizer, RejectedReport, exact_log_upper
from ._rng import PrivacyLeakWarning
from .session import (
    AccountingError,
    BudgetExceededError,
    CollectionSession,
    MalformedReportsError,
    PrivacySpent,
    Release,
)
from .shuffler import BatchTooSmallError, Shuffler, ShufflerLike, secure_permutation
from .simulation import (
    GENERATORS,
    METHODS,
    CategoricalData,
    SimulationResult,
    load_csv,
    normal_binned_distribution,
    simulate,
    uniform_distribution,
    zipf_distribution,
)

__all__ = [
    "KRRRandomizer",
    "RejectedReport",
    "EncodedReports",
    "exact_log_upper",
    "Shuffler",
    "ShufflerLike",
    "BatchTooSmallError",
    "secure_permutation",
    "histogram",
    "estimate_frequencies",
    "project_simplex",
    "total_variation",
    "CollectionSession",
    "Release",
    "PrivacySpent",
    "BudgetExceededError",
    "MalformedReportsError",
    "AccountingError",
    "PrivacyLeakWarning",
    "gaussian_histogram",
    "gaussian_sigma",
    "HISTOGRAM_L2_SENSITIVITY",
    "simulate",
    "SimulationResult",
    "CategoricalData",
    "load_csv",
    "GENERATORS",
    "METHODS",
    "normal_binned_distribution",
    "zipf_distribution",
    "uniform_distribution",
    "plot_simulation",
]
