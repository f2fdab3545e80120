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
* :mod:`shuffle_accounting.accuracy` — accuracy of the shuffle+INV frequency estimates.
* :mod:`shuffle_accounting.presentation` — report, figures, the command line and the local web
  planner (``shuffle-accounting serve``); the mathematics never imports it.

The public names below are imported on first use (PEP 562 module ``__getattr__``), so
``import shuffle_accounting`` and ``shuffle-accounting --help`` stay fast; ``from
shuffle_accounting import ShuffledKRR`` works as usual.

Example:
    >>> from shuffle_accounting import ShuffledKRR
    >>> m = ShuffledKRR(k=10, eps0=2.0, n=10_000)
    >>> eps = m.epsilon(1e-6)
    >>> bool(m.epsilon_lower(1e-6) <= eps < 2.0)
    True
"""

from __future__ import annotations

from ._lazy import lazy_attributes

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

#: Where each lazily imported public name lives (module, attribute; attribute None = the module).
_LAZY: dict[str, tuple[str, str | None]] = {
    "ParameterError": ("._validation", "ParameterError"),
    "KRR": (".randomizers", "KRR"),
    "FiniteRandomizer": (".randomizers", "FiniteRandomizer"),
    "ShuffledKRR": (".shuffled_krr", "ShuffledKRR"),
    "dataset_delta": (".shuffled_krr", "dataset_delta"),
    "ShuffleAccountant": (".shuffled_krr", "ShuffleAccountant"),
    "ShuffledKRRDpEvent": (".shuffled_krr", "ShuffledKRRDpEvent"),
    "calibrate_eps0": (".shuffled_krr", "calibrate_eps0"),
    "min_users": (".shuffled_krr", "min_users"),
    "literature": (".literature", None),
    "reidentification": (".reidentification", None),
    "qif": (".qif", None),
}


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals(), __all__)
