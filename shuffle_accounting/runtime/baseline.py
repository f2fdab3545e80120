"""Central-model baseline: the histogram released with the analytic Gaussian mechanism.

Biswas, Jung, Palamidessi, *Tight Differential Privacy Guarantees for the Shuffle Model with
k-Randomized Response* (Sec. V, Def. V.1 and the "optimal Gaussian mechanism") compare shuffled
k-RR with a trusted curator that adds Gaussian noise to every bin count, calibrated by the
analytic Gaussian mechanism of Balle and Wang (*Improving the Gaussian Mechanism for Differential
Privacy: Analytical Calibration and Optimal Denoising*, ICML 2018, Theorem 8) at the same
``(eps, delta)``. Under replace-one neighbouring datasets a histogram changes in two bins by one,
so its L2 sensitivity is ``sqrt(2)``.

The noise level :func:`gaussian_sigma` is computed here, without diffprivlib (a report that only
quotes the baseline's accuracy does not import it): by Balle and Wang's Theorem 8 the Gaussian
mechanism ``f(D) + N(0, sigma^2 I)`` with L2 sensitivity ``s`` is ``(eps, delta)``-DP if and only if

    delta(sigma) = Phi(s / (2 sigma) - eps sigma / s) - e^eps Phi(-s / (2 sigma) - eps sigma / s) <= delta,

and ``delta(sigma)`` is decreasing in ``sigma`` (it is the hockey-stick divergence of two Gaussians
at distance ``s / sigma``, which decreases with that distance's inverse), so the smallest admissible
``sigma`` is found by bisection and returned from the admissible side. The sampler
:func:`gaussian_histogram` is diffprivlib's ``GaussianAnalytic`` (optional dependency, extra
``diffprivlib``), whose own calibration (with ``erf``, not in log space) agrees with
:func:`gaussian_sigma` to 1e-6 relative where it is well conditioned (``eps <= 2``,
``delta >= 1e-9``; tested) and loses precision beyond, sometimes on the inadmissible side. This baseline is meant for utility comparisons; it is not a hardened central release.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import log_ndtr

from .._logmath import UNIT_ROUNDOFF
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


def _log_gaussian_delta(sigma: float, epsilon: float, sensitivity: float) -> float:
    """Upper bound on ``log delta(sigma)`` of Balle and Wang's Theorem 8 (module docstring).

    ``log(e^hi - e^lo) = hi + log(-expm1(lo - hi))``; an absolute error ``r`` of ``lo - hi`` (a few
    units of rounding of ``|hi| + |lo|``) moves it by at most ``r / -expm1(lo - hi)``, added.
    """
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    hi, lo = float(log_ndtr(a - b)), epsilon + float(log_ndtr(-a - b))
    if lo >= hi:
        return -math.inf
    gap = -math.expm1(lo - hi)
    err = 8.0 * UNIT_ROUNDOFF * (abs(hi) + abs(lo) + 1.0)
    return hi + math.log(gap) + err / gap


def gaussian_sigma(epsilon: float, delta: float, *, sensitivity: float = HISTOGRAM_L2_SENSITIVITY) -> float:
    """Smallest noise standard deviation of the analytic Gaussian mechanism at ``(epsilon, delta)``.

    Balle and Wang (ICML 2018), Theorem 8: ``N(0, sigma^2)`` noise on an L2-sensitivity-``s`` query
    is ``(eps, delta)``-DP iff ``Phi(s/(2 sigma) - eps sigma/s) - e^eps Phi(-s/(2 sigma) - eps
    sigma/s) <= delta``. The left side decreases in ``sigma``; bisection on ``log sigma`` (to
    relative width ``1e-13``) returns the end of the final bracket where the condition holds, so
    the returned ``sigma`` is admissible (rounded up, never below the exact calibration by more than
    the bracket). No diffprivlib import (see the module docstring for its agreement with
    diffprivlib's ``GaussianAnalytic``).

    Args:
        epsilon: Finite ``> 0``.
        delta: In ``(0, 1)``.
        sensitivity: L2 sensitivity, finite ``> 0`` (default ``sqrt(2)``, a replace-one histogram).

    Returns:
        The standard deviation ``sigma`` of the per-bin Gaussian noise.

    Raises:
        ParameterError: If an argument is invalid.

    Example:
        >>> s1 = gaussian_sigma(1.0, 1e-6)
        >>> s2 = gaussian_sigma(2.0, 1e-6)
        >>> 0 < s2 < s1
        True
        >>> round(gaussian_sigma(1.0, 1e-5, sensitivity=1.0), 4)
        3.7306
    """
    epsilon = check_real("epsilon", epsilon, low=0.0, low_open=True)
    delta = check_delta("delta", delta)
    sensitivity = check_real("sensitivity", sensitivity, low=0.0, low_open=True)
    log_target = math.log(delta)
    # bracket [lo, hi] in units of the sensitivity: delta(lo) > target >= delta(hi)
    lo, hi = 1.0, 1.0
    while _log_gaussian_delta(hi * sensitivity, epsilon, sensitivity) > log_target:
        hi *= 2.0
    while _log_gaussian_delta(lo * sensitivity, epsilon, sensitivity) <= log_target and lo > 1e-300:
        lo /= 2.0
    while hi - lo > 1e-13 * hi:
        mid = math.sqrt(lo * hi) if hi / lo > 2.0 else 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _log_gaussian_delta(mid * sensitivity, epsilon, sensitivity) <= log_target:
            hi = mid
        else:
            lo = mid
    return float(hi * sensitivity)


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
