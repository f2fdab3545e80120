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
* Mergeable counts (:mod:`~shuffle_accounting.runtime.counts`) — :func:`randomize_partition`
  turns a partition into exact integer counts, :class:`CountsMerger` merges each partition key
  once, :meth:`CollectionSession.release_counts` releases the merged batch (same checks and
  accounting as :meth:`CollectionSession.release`); :func:`collect_partitions` is the
  single-process (streamed) reference.
* Distributed backends, imported on use: :mod:`shuffle_accounting.runtime.dask` (extra ``dask``:
  a dask Series/DataFrame/Bag or CSV files on a LocalCluster or any cluster, and a uniform
  distributed shuffle) and :mod:`shuffle_accounting.runtime.spark` (extra ``spark``: a Spark
  DataFrame column or RDD, ``local[*]`` by default).
* :func:`gaussian_histogram` — central baseline with diffprivlib's ``GaussianAnalytic``.
* :func:`simulate` — utility of shuffle, shuffle+INV and the Gaussian baseline across ``n``
  (simulation mode, NOT private); :func:`shuffle_accounting.presentation.simulation_plot.plot_simulation`
  draws it (``runtime.plot_simulation`` is a deprecated alias).

Randomness follows the package's one policy (:mod:`shuffle_accounting._rng`): ``rng=None`` is
private mode (OS CSPRNG, exact sampling); a seed or numpy Generator selects simulation mode
everywhere — reproducible, NOT private, warned with :class:`PrivacyLeakWarning`, and releases say
``simulated=True``; anything else raises. A :class:`CollectionSession` is safe to share between
threads.
"""

from .._deprecation import moved_names
from ._rng import PrivacyLeakWarning
from .analyzer import estimate_frequencies, histogram, project_simplex, total_variation
from .baseline import HISTOGRAM_L2_SENSITIVITY, gaussian_histogram, gaussian_sigma
from .counts import CountsMerger, PartitionCounts, collect_partitions, randomize_partition
from .randomizer import EncodedReports, KRRRandomizer, RejectedReport, exact_log_upper
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
    "PartitionCounts",
    "CountsMerger",
    "randomize_partition",
    "collect_partitions",
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
]

#: Presentation names that moved to :mod:`shuffle_accounting.presentation` (deprecated aliases).
__getattr__ = moved_names(__name__, {"plot_simulation": "shuffle_accounting.presentation.simulation_plot"})
