"""Bayes-optimal re-identification for continuous likelihood ratios (Theorems 1 and 2).

Su, Cheng, Wang, *Bayesian Advantage of Re-Identification Attack in the Shuffle Model*, Sec. IV-B.
The input is the distribution of the likelihood ratio ``L = P(y)/Q(y)`` under ``y ~ Q``, i.e. the
CDF ``G`` of eq. (6b). With ``Phi_k(x) = E[(k - Binomial(n, 1 - x))^+]`` (``Phi_1(x) = x^n``) and
integration by parts of Theorem 1 (eq. (8)) using Property 1 (``f = t g``) and ``Phi_k(1) = k``:

    beta_n^k(P, Q) = f(+inf) + (1/n) * integral_0^M [k - Phi_k(G(t))] dt,

which for ``k = 1`` is Theorem 2, eq. (10): ``f(+inf) + (M - integral_0^M G^n(t) dt)/n``. The
integrand vanishes above ``M = sup L``, so ``M = inf`` is allowed when the integral converges.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import ParameterError, check_int, check_real
from ..curves import Interval
from .basic import log_phi

__all__ = ["ContinuousEstimate", "success_probability_continuous"]


@dataclass(frozen=True, init=False)
class ContinuousEstimate(Interval):
    """A numerically integrated success probability with its error *estimate*: an
    :class:`~shuffle_accounting.curves.Interval` with ``certified=False`` (the quadrature's error
    estimate is not a proven bound), ``estimate = value``, ``lower = value - error``,
    ``upper = value + error``.

    Attributes:
        value: The quadrature value of ``beta_n^k`` (also ``estimate``).
        error: Absolute error estimate (quadrature estimate plus a 1e-12 relative floor).

    Raises:
        ParameterError: If ``value`` is not finite or ``error`` is negative or not finite.

    Example:
        >>> e = ContinuousEstimate(value=0.5, error=1e-9)
        >>> e.lower < e.value < e.upper, e.certified
        (True, False)
    """

    error: float

    def __init__(self, value: float, error: float) -> None:
        value = check_real("value", value)
        error = check_real("error", error, low=0.0)
        self._init_interval(value - error, value + error, certified=False, estimate=value, error=error)

    @property
    def value(self) -> float:
        """The quadrature value (``estimate``)."""
        return float(self.estimate)  # type: ignore[arg-type]


def _cdf_pair(ratio: Any) -> tuple[Callable[[float], float], Callable[[float], float], float]:
    """(cdf, sf, upper end of support) of a ratio description."""
    if hasattr(ratio, "cdf") and hasattr(ratio, "sf") and hasattr(ratio, "support"):
        lo, hi = (float(v) for v in ratio.support())
        if lo < 0 or math.isnan(lo) or math.isnan(hi):
            raise ParameterError(f"ratio must be supported on [0, inf), got support ({lo}, {hi})")
        return (lambda t: float(ratio.cdf(t))), (lambda t: float(ratio.sf(t))), hi
    if callable(ratio):

        def cdf(t: float) -> float:
            v = float(ratio(t))
            if not (0.0 <= v <= 1.0):
                raise ParameterError(f"ratio must be a CDF with values in [0, 1], got ratio({t!r}) = {v!r}")
            return v

        return cdf, (lambda t: 1.0 - cdf(t)), math.inf
    raise ParameterError(
        "ratio must be a callable CDF G(t) or a frozen scipy.stats distribution of the likelihood "
        f"ratio under Q, got {type(ratio).__name__}"
    )


def _solve_level(cdf: Callable[[float], float], level: float, hi: float) -> float:
    """Smallest-ish t with cdf(t) >= level by bisection (hi finite)."""
    a, b = 0.0, hi
    for _ in range(60):
        mid = 0.5 * (a + b)
        if cdf(mid) >= level:
            b = mid
        else:
            a = mid
    return b


def success_probability_continuous(
    ratio: Any,
    n: Any,
    guesses: Any = 1,
    *,
    f_inf: Any = 0.0,
    upper: Any = None,
) -> ContinuousEstimate:
    """``beta_n^k(P, Q)`` from the likelihood-ratio distribution under ``Q`` (Theorems 1-2).

    Integrates ``beta_n^k = f(+inf) + (1/n) int_0^M [k - Phi_k(G(t))] dt`` (Su, Cheng, Wang,
    Theorem 2, eq. (10) for one guess; Theorem 1, eq. (8) integrated by parts for ``k`` guesses)
    with adaptive quadrature split at the quantiles where ``G^n`` changes fastest. Before
    integrating, the description is checked against Property 1: ``E_Q[L] = int (1 - G) = 1 - f(+inf)``.

    Args:
        ratio: The law of ``L = P(y)/Q(y)``, ``y ~ Q``: a frozen ``scipy.stats`` distribution (its
            ``cdf``/``sf``/``support`` are used) or a callable ``G(t)`` (then ``upper`` is required).
        n: Number of shuffled samples, integer >= 1.
        guesses: Number of guesses ``k`` in ``[1, n]``.
        f_inf: ``P[Q = 0]``, the mass of the target that no decoy can produce, in ``[0, 1)``.
        upper: ``M = sup L`` (finite); defaults to the upper end of the distribution's support.

    Returns:
        A :class:`ContinuousEstimate` (value and absolute error estimate).

    Raises:
        ParameterError: If ``n``/``guesses``/``f_inf``/``upper`` are invalid, the description is
            not a CDF on ``[0, inf)``, or its mean differs from ``1 - f_inf`` by more than 1e-6.

    Example:
        Example IV.1: the ratio ``x + 1/2`` under ``Q = U[0, 1]`` is ``U[1/2, 3/2]``
        (``scipy.stats.uniform(0.5, 1.0)`` works the same way).

        >>> est = success_probability_continuous(lambda t: min(1.0, max(0.0, t - 0.5)), 20, upper=1.5)
        >>> round(est.value, 10), round(1.5 / 20 - 1 / (20 * 21), 10)
        (0.0726190476, 0.0726190476)
    """
    n = check_int("n", n, minimum=1, maximum=2**53)
    k = check_int("guesses", guesses, minimum=1, maximum=n)
    f_inf = check_real("f_inf", f_inf, low=0.0, high=1.0, high_open=True)
    cdf, sf, hi = _cdf_pair(ratio)
    if upper is not None:
        hi = check_real("upper", upper, low=0.0, low_open=True)
    if not math.isfinite(hi):
        raise ParameterError(
            f"upper must be a finite M = sup P/Q (the ratio's support is unbounded), got {hi!r}"
        )

    from scipy import integrate  # noqa: PLC0415 - ~0.5 s of imports (scipy.optimize) every report paid

    mean, mean_err = integrate.quad(sf, 0.0, hi, limit=200)
    if abs(mean - (1.0 - f_inf)) > 1e-6 + mean_err:
        raise ParameterError(
            f"ratio must satisfy Property 1, E_Q[P/Q] = 1 - f_inf: got mean {mean!r} for f_inf = {f_inf!r}"
        )

    def integrand(t: float) -> float:
        x = cdf(t)
        if x <= 0.0:
            return float(k)
        s = sf(t)
        log_x = math.log(x) if x <= 0.5 else math.log1p(-s)
        log_1mx = math.log1p(-x) if x <= 0.5 else (math.log(s) if s > 0 else -math.inf)
        if k == 1:
            return -math.expm1(n * log_x)  # 1 - G^n without cancellation
        phi = float(np.exp(log_phi(n, k, np.array([log_x]), np.array([log_1mx]))[0]))
        return k - phi

    # Break points where Phi_k(G) moves: Binomial(n, 1 - x) has mean c = n (1 - x) near k, so
    # split at the levels x = 1 - c/n for c on a geometric grid up to k + 40 sqrt(k) + 60.
    c_max = k + 40.0 * math.sqrt(k) + 60.0
    cs = [0.01 * 2.0**j for j in range(int(math.log2(c_max / 0.01)) + 2)]
    levels = sorted({1.0 - c / n for c in cs if c < n})
    pts = sorted({min(hi, max(0.0, _solve_level(cdf, lv, hi))) for lv in levels} | {0.0, hi})
    total = 0.0
    err = 0.0
    for a, b in zip(pts[:-1], pts[1:]):
        if b > a:
            v, e = integrate.quad(integrand, a, b, limit=200, epsabs=1e-14, epsrel=1e-12)
            total += v
            err += e
    value = f_inf + total / n
    return ContinuousEstimate(value=value, error=err / n + 1e-12 * value)
