"""(eta, delta)-preservation of the Mallows shuffler.

Paper: Meehan, Roy-Chowdhury, Chaudhuri, Jha, *Privacy Implications of Shuffling* (ICLR 2022),
Def. A.4 and Thm A.4. A shuffle is (eta, delta)-preserving for a set ``S`` of positions if
``Pr[|delta(S) cap S| >= eta |S|] >= 1 - delta``. With ``l = |S|`` and ``j`` the number of elements
of ``S`` sent outside ``S``, preservation fails iff ``j >= k + 1`` with
``k = floor((1 - eta) l)`` -- the **floor**, computed exactly in rationals from the float ``eta``
(the paper prints a ceiling, which understates delta: ``n=7, |S|=4``, ``eta=0.6``, theta=0.5 gives
0.0694 instead of the true 0.5139).

Hamming (exact): counting permutations by ``j`` and by their fixed points,

    delta * psi = sum_{j=k+1}^{min(l, n-l)} C(l, j) C(n-l, j) x^{2j} P(l-j, j) P(n-l-j, j),
    P(L, j) = sum_{t=0}^{L} C(L, t) x^{L-t} (1-x)^t (L+j-t)!,    x = e^{-theta},
    psi = sum_{t=0}^{n} C(n, t) x^{n-t} (1-x)^t (n-t)!,

(``P(L, j)`` weights the arrangements of ``L`` items with home positions and ``j`` foreign items
by ``x^{#items away from home}``; all terms are positive, so log-space sums are stable). This
is the count of Thm A.4 regrouped. Kendall: Monte-Carlo with a Clopper-Pearson interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.special import gammaln
from scipy.stats import beta as beta_dist

from .._logmath import UNIT_ROUNDOFF, log1mexp, logsumexp
from .._validation import ParameterError, check_int, check_real, check_work
from ..curves import Interval
from .mallows import MAX_ITEMS
from .mallows import RandomBits as _Bits
from .mallows import sample_kendall_rows as _sample_kendall_rows

__all__ = [
    "preservation_k",
    "hamming_preservation_delta",
    "hamming_preservation_log_delta",
    "PreservationEstimate",
    "kendall_preservation_delta_mc",
]


def preservation_k(subset_size: int, eta: float) -> int:
    """``k = floor((1 - eta) |S|)``, computed exactly from the float ``eta`` (Thm A.4, floor fixed).

    Example:
        >>> preservation_k(4, 0.6), preservation_k(10, 0.7), preservation_k(4, 0.75)
        (1, 3, 1)
    """
    l = check_int("subset_size", subset_size, minimum=1)
    eta = check_real("eta", eta, low=0.0, high=1.0)
    return math.floor((1 - Fraction(eta)) * l)


def _log_P(L: int, j: int, lx: float, l1x: float) -> float:
    t = np.arange(L + 1, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        terms = (
            gammaln(L + 1.0)
            - gammaln(t + 1)
            - gammaln(L - t + 1)
            + np.where(L - t > 0, (L - t) * lx, 0.0)
            + np.where(t > 0, t * l1x, 0.0)
            + gammaln(L + j - t + 1)
        )
    return float(logsumexp(terms))


def _log_fail_and_norm(n: int, l: int, k: int, theta: float) -> tuple[float, float, float]:
    lx = -theta
    l1x = float(log1mexp(-theta)) if theta > 0 else -math.inf
    log_norm = _log_P(n, 0, lx, l1x)
    jmax = min(l, n - l)
    terms = []
    mag = abs(log_norm)
    for j in range(k + 1, jmax + 1):
        v = (
            gammaln(l + 1.0)
            - gammaln(j + 1.0)
            - gammaln(l - j + 1.0)
            + gammaln(n - l + 1.0)
            - gammaln(j + 1.0)
            - gammaln(n - l - j + 1.0)
            + 2 * j * lx
            + _log_P(l - j, j, lx, l1x)
            + _log_P(n - l - j, j, lx, l1x)
        )
        terms.append(v)
        mag = max(mag, abs(v))
    log_fail = float(logsumexp(terms)) if terms else -math.inf
    return log_fail, log_norm, mag


def hamming_failure_probability(n: int, l: int, k: int, theta: float) -> float:
    """P(more than k elements of a fixed l-set leave it) under Hamming-Mallows(theta); no rounding."""
    if math.isinf(theta):
        return 0.0
    log_fail, log_norm, _ = _log_fail_and_norm(n, l, k, theta)
    return math.exp(log_fail - log_norm) if math.isfinite(log_fail) else 0.0


def hamming_preservation_log_delta(
    n: int, subset_size: int, eta: float, theta: float, *, max_work: int | None = None
) -> float:
    """Natural log of the exact delta of (eta, delta)-preservation for Hamming-Mallows (Thm A.4,
    floor fixed), rounded up; representable far below the float range of delta itself.

    ``delta = Pr[|delta(S) cap S| < eta |S|]`` depends only on ``|S|``; formula in the module
    docstring. The log-space value is inflated by a bound on its floating-point error (relative
    ``1e-12 + 64 eps M`` with ``M`` the largest log-term magnitude), capped at 0.

    Args:
        n: Number of users (integer >= 1).
        subset_size: ``|S|`` in ``[1, n]``.
        eta: Preserved fraction in ``[0, 1]``.
        theta: Mallows dispersion in ``[0, inf]``.
        max_work: Work budget (``None``: ``DEFAULT_MAX_WORK`` = 1e8); the work is
            ``(min(|S|, n - |S|) - k) (n + 1)`` (one O(n) sum per failure count).

    Returns:
        ``log`` of the upper bound on delta (``<= 0``; ``-inf`` exactly when delta is 0:
        ``theta = inf`` or no failure is possible).

    Raises:
        ParameterError: On invalid arguments.
        WorkBudgetExceeded: If the work exceeds ``max_work``.

    Example:
        >>> round(hamming_preservation_log_delta(7, 4, 0.6, 0.5), 10)
        -0.6657268816
        >>> hamming_preservation_log_delta(2000, 1000, 0.5, 30.0) < -20000  # delta < 1e-8600
        True
    """
    n = check_int("n", n, minimum=1, maximum=2**53)
    l = check_int("subset_size", subset_size, minimum=1, maximum=n)
    k = preservation_k(l, eta)
    theta = check_real("theta", theta, low=0.0, allow_inf=True)
    jmax = min(l, n - l)
    check_work(
        f"hamming_preservation_delta(n={n}, subset_size={l})",
        max(jmax - k, 0) * (n + 1),
        max_work=max_work,
        alternative="use a smaller subset or population, or kendall_preservation_delta_mc",
    )
    if math.isinf(theta):
        return -math.inf
    log_fail, log_norm, mag = _log_fail_and_norm(n, l, k, theta)
    if not math.isfinite(log_fail):
        return -math.inf
    rel = 1e-12 + 64 * (2.0 * UNIT_ROUNDOFF) * (mag + 1.0)
    return min(0.0, log_fail - log_norm + math.log1p(rel))


def hamming_preservation_delta(
    n: int, subset_size: int, eta: float, theta: float, *, max_work: int | None = None
) -> float:
    """Exact delta of (eta, delta)-preservation for Hamming-Mallows (Thm A.4, floor fixed).

    ``exp`` of :func:`hamming_preservation_log_delta`, capped at 1. It is an upper bound and stays
    one in floating point: a positive delta below ~2.2e-308 is returned rounded *up* (at least
    the smallest positive float 5e-324, never 0.0); use the log variant for its actual size.

    Args:
        n: Number of users (integer >= 1).
        subset_size: ``|S|`` in ``[1, n]``.
        eta: Preserved fraction in ``[0, 1]``.
        theta: Mallows dispersion in ``[0, inf]``.
        max_work: Work budget (see :func:`hamming_preservation_log_delta`).

    Returns:
        Upper bound on delta (0.0 only when delta is exactly 0: ``theta = inf`` or no failure is
        possible).

    Raises:
        ParameterError: On invalid arguments.
        WorkBudgetExceeded: If the work exceeds ``max_work``.

    Example:
        >>> round(hamming_preservation_delta(7, 4, 0.6, 0.5), 10)
        0.5138998476
        >>> hamming_preservation_delta(2000, 1000, 0.5, 30.0) > 0.0  # true value ~1e-8600
        True
    """
    log_delta = hamming_preservation_log_delta(n, subset_size, eta, theta, max_work=max_work)
    if log_delta == -math.inf:
        return 0.0
    value = math.exp(log_delta)
    if value < 2.3e-308:  # subnormal or underflowed: exp is exact only to 5e-324 absolute
        value += 5e-324
    return min(1.0, value)


@dataclass(frozen=True, init=False)
class PreservationEstimate(Interval):
    """Monte-Carlo estimate of delta with a two-sided Clopper-Pearson interval: an
    :class:`~shuffle_accounting.curves.Interval` with ``certified=False`` (a confidence interval,
    not a proven bound) and ``estimate = failures / trials``.

    Attributes:
        estimate: failures / trials.
        lower: Lower confidence limit.
        upper: Upper confidence limit (use this as the conservative delta).
        failures: Number of failed trials.
        trials: Number of trials.
        confidence: Confidence level of ``[lower, upper]``.
    """

    failures: int
    trials: int
    confidence: float

    def __init__(
        self, estimate: float, lower: float, upper: float, failures: int, trials: int, confidence: float
    ) -> None:
        self._init_interval(
            lower,
            upper,
            certified=False,
            estimate=estimate,
            failures=failures,
            trials=trials,
            confidence=confidence,
        )


def kendall_preservation_delta_mc(
    n: int,
    subset: Any,
    eta: float,
    theta: float,
    trials: int = 1000,
    confidence: float = 0.95,
    *,
    rng: Any = None,
) -> PreservationEstimate:
    """Monte-Carlo delta of (eta, delta)-preservation under Kendall-Mallows (Def. A.4).

    Draws ``trials`` permutations ``delta`` of the BFS positions and counts those with
    ``|delta(S) cap S| < eta |S|`` (i.e. more than ``k = floor((1 - eta)|S|)`` leave ``S``).

    Args:
        n: Number of positions (integer >= 1).
        subset: Positions ``S`` (distinct integers in ``[0, n)``), e.g. ``shuffler.pos[group]``.
        eta: Preserved fraction in ``[0, 1]``.
        theta: Mallows dispersion in ``[0, inf]``.
        trials: Number of samples (integer >= 1).
        confidence: Confidence level in ``(0, 1)``.
        rng: ``None`` = secure bits (OS CSPRNG); a seed/Generator makes the estimate
            reproducible (the package's one RNG policy: it emits a ``PrivacyLeakWarning``, though
            the estimate is not a release; anything else raises).

    Returns:
        :class:`PreservationEstimate`.

    Raises:
        ParameterError: On invalid arguments.

    Example:
        >>> est = kendall_preservation_delta_mc(50, range(20, 30), 0.8, 1.0, trials=200, rng=0)
        >>> est.lower <= est.estimate <= est.upper
        True
    """
    n = check_int("n", n, minimum=1, maximum=MAX_ITEMS)
    items = list(subset) if not isinstance(subset, np.ndarray) else subset.ravel().tolist()
    for v in items:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise ParameterError(f"subset must hold integer positions in [0, {n}), got {v!r}")
    S = np.asarray(items, dtype=np.int64)
    if S.size == 0 or S.min() < 0 or S.max() >= n or np.unique(S).size != S.size:
        raise ParameterError(f"subset must be non-empty distinct positions in [0, {n}), got {items[:20]}")
    k = preservation_k(S.size, eta)
    theta = check_real("theta", theta, low=0.0, allow_inf=True)
    trials = check_int("trials", trials, minimum=1)
    confidence = check_real("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    bits = _Bits(rng)
    inside = np.zeros(n, dtype=bool)
    inside[S] = True
    failures = 0
    chunk = max(1, 2_000_000 // n)
    for start in range(0, trials, chunk):
        d = _sample_kendall_rows(n, theta, bits, min(chunk, trials - start))
        out = S.size - np.count_nonzero(inside[d[:, S]], axis=1)
        failures += int(np.count_nonzero(out >= k + 1))
    a = 1 - confidence
    lo = 0.0 if failures == 0 else float(beta_dist.ppf(a / 2, failures, trials - failures + 1))
    hi = 1.0 if failures == trials else float(beta_dist.ppf(1 - a / 2, failures + 1, trials - failures))
    return PreservationEstimate(failures / trials, lo, hi, failures, trials, confidence)
