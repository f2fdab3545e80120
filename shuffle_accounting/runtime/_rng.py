"""Re-export of the package's randomness policy (:mod:`shuffle_accounting._rng`) for the runtime.

The policy and the exact samplers live once, in the numerics layer, so that ``dsigma`` and the
runtime share them; see :mod:`shuffle_accounting._rng`.
"""

from __future__ import annotations

from .._rng import (
    PrivacyLeakWarning,
    RngLike,
    below_threshold,
    check_rng,
    is_simulation,
    random_uint64,
    uniform_below,
)

__all__ = [
    "PrivacyLeakWarning",
    "RngLike",
    "check_rng",
    "is_simulation",
    "random_uint64",
    "below_threshold",
    "uniform_below",
]
