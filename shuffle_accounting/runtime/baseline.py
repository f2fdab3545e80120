"""Central-model baseline: the histogram released with the analytic Gaussian mechanism.

Biswas, Jung, Palamidessi, *Tight Differential Privacy Guarantees for the Shuffle Model with
k-Randomized Response* (Sec. V, Def. V.1 and the "optimal Gaussian mechanism") compare shuffled
k-RR with a trusted curator that adds Gaussian noise to every bin count, calibrated by the
analytic Gaussian mechanism of Balle and Wang (*Improving the Gaussian Mechanism for Differential
Privacy: Analytical Calibration and Optimal Denoising*, ICML 2018, Theorem 8) at the same
``(eps, delta)``. Under replace-one neighbouring datasets a histogram changes in two bins by one,
so its L2 sensitivity is ``sqrt(2)``.

The mechanism is diffprivlib's ``GaussianAnalytic`` (optional dependency, extra ``diffprivlib``).
This baseline is meant for utility comparisons; it is not a hardened central release.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import ParameterError, check_delta, check_real, check_real_array
from ._rng import check_rng

__all__ = ["gaussian_histogram", "gaussian_sigma", "HISTOGRAM_L2_SENSITIVITY"]

#: L2 sensitivity of a histogram under replace-one neighbours (two bins change by one).
HISTOGRAM_L2_SENSITIVITY = math.sqrt(2.0)


def _gaussian_analytic() -> Any:
    try:
        from diffprivlib.mechanisms import GaussianAnalytic  # noqa: PLC0415 - optional dependency
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "the central Gaussian baseline needs diffprivlib; install it with "
            "`pip install 'shuffle-accounting[diffprivlib]'`"
        ) from exc
    return GaussianAnalytic


def _mechanism(epsilon: float, delta: float, sensitivity: float, random_state: Any) -> Any:
    epsilon = check_real("epsilon", epsilon, low=0.0, low_open=True)
    delta = check_delta("delta", delta)
    sensitivity = check_real("sensitivity", sensitivity, low=0.0, low_open=True)
    return _gaussian_analytic()(
        epsilon=epsilon, delta=delta, sensitivity=sensitivity, random_state=random_state
    )


def gaussian_sigma(epsilon: float, delta: float, *, sensitivity: float = HISTOGRAM_L2_SENSITIVITY) -> float:
    """Noise standard deviation of diffprivlib's ``GaussianAnalytic`` at ``(epsilon, delta)``.

    Args:
        epsilon: Finite ``> 0``.
        delta: In ``(0, 1)``.
        sensitivity: L2 sensitivity, finite ``> 0`` (default ``sqrt(2)``, a replace-one histogram).

    Returns:
        The standard deviation ``sigma`` of the per-bin Gaussian noise.

    Raises:
        ParameterError: If an argument is invalid.
        ImportError: If diffprivlib is not installed (extra ``diffprivlib``).

    Example:
        >>> s1 = gaussian_sigma(1.0, 1e-6)
        >>> s2 = gaussian_sigma(2.0, 1e-6)
        >>> 0 < s2 < s1
        True
    """
    return float(_mechanism(epsilon, delta, sensitivity, None)._scale)


def gaussian_histogram(
    counts: Any,
    epsilon: float,
    delta: float,
    *,
    sensitivity: float = HISTOGRAM_L2_SENSITIVITY,
    rng: Any = None,
) -> np.ndarray:
    """Release ``counts + N(0, sigma^2)`` per bin with diffprivlib's ``GaussianAnalytic``.

    Args:
        counts: True histogram (finite non-negative numbers), 1-D.
        epsilon: Finite ``> 0``.
        delta: In ``(0, 1)``.
        sensitivity: L2 sensitivity (default ``sqrt(2)``).
        rng: ``None`` (diffprivlib's ``secrets``-based sampler) or a seed / numpy Generator
            (simulation mode, NOT private).

    Returns:
        Float array of noisy counts (may be negative; it is not post-processed).

    Raises:
        ParameterError: If an argument is invalid.
        ImportError: If diffprivlib is not installed.

    Example:
        >>> noisy = gaussian_histogram([100, 50, 0], 1.0, 1e-6, rng=0)  # simulation: NOT private
        >>> noisy.shape
        (3,)
    """
    arr = check_real_array("counts", counts, low=0.0)
    if arr.ndim != 1 or arr.size == 0:
        raise ParameterError(f"counts must be a non-empty 1-D histogram, got shape {arr.shape}")
    gen = check_rng(rng)
    state = None if gen is None else np.random.RandomState(int(gen.integers(0, 2**32)))
    mech = _mechanism(epsilon, delta, sensitivity, state)
    return np.array([mech.randomise(float(c)) for c in arr])
