"""Balle, Bell, Gascon, Nissim, *The Privacy Blanket of the Shuffle Model* (CRYPTO 2019;
arXiv:1903.02837), bounds for shuffled k-ary randomized response.

k-RR with local ``eps0`` is the blanket randomizer with ``gamma = k / (e^eps0 + k - 1)``: with
probability ``gamma`` a user reports a uniform value, otherwise the truth.

* Closed form, their Theorem 3.1 (k-RR in the shuffle model): the protocol is ``(eps, delta)``-DP for
  ``eps <= 1`` when ``gamma >= max{14 k log(2/delta) / ((n-1) eps^2), 27 k / ((n-1) eps)}``. (Their
  statement sets ``gamma`` equal to the max; a larger ``gamma`` is post-processing of a smaller one —
  re-draw each report uniformly with probability ``(gamma' - gamma)/(1 - gamma)`` — so it is at
  least as private.) With ``k/gamma = e^eps0 + k - 1``:
  ``eps = max(sqrt(14 log(2/delta)(e^eps0 + k - 1)/(n - 1)), 27 (e^eps0 + k - 1)/(n - 1))``, valid
  when that is ``<= 1``.
* Numerical bounds of their Section 5 (privacy amplification random variable
  ``L = (mu_x(W) - e^eps mu_x'(W)) / omega(W)``, ``W ~ omega`` uniform; ``E L = 1 - e^eps``):
  ``delta <= (1/(gamma n)) E_{M ~ Bin(n, gamma)} E[(L_1 + ... + L_M)_+]``, bounded with Hoeffding's
  inequality (range of ``L``) or Bennett's inequality (max and second moment of ``L``). The
  binomial expectation is evaluated in closed form here
  (``E[x^M] = (1 - gamma + gamma x)^n``), so no numerical series is truncated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._common import BoundNotApplicable, LiteratureCurve
from ._common import delta_arg as _delta
from ._common import eps0_arg as _eps0
from ._common import eps_arg as _eps
from ._common import k_arg as _k
from ._common import n_arg as _n

__all__ = [
    "Balle2019KRRCurve",
    "Balle2019HoeffdingCurve",
    "Balle2019BennettCurve",
    "balle2019_krr_epsilon",
    "balle2019_krr_delta",
    "balle2019_krr_log_delta",
    "balle2019_hoeffding_log_delta",
    "balle2019_bennett_log_delta",
    "balle2019_hoeffding_delta",
    "balle2019_hoeffding_epsilon",
    "balle2019_bennett_delta",
    "balle2019_bennett_epsilon",
]

_NAME = "Balle et al. 2019 Theorem 3.1"


def _scale(k: int, eps0: float) -> float:
    """``k / gamma = e^eps0 + k - 1`` (``inf`` when ``e^eps0`` leaves the float range)."""
    return math.exp(eps0) + k - 1.0 if eps0 < 709.0 else math.inf


#: Largest eps0 at which the numerical (Hoeffding/Bennett) bounds are evaluated: they use
#: ``e^(2 eps)`` for ``eps < eps0``, which must stay a finite float.
_MAX_NUMERIC_EPS0 = 300.0


def _guarded(fn, eps: float, k: int, eps0: float, n: int) -> float:
    """Evaluate a numerical bound; a float overflow/underflow that makes the formula meaningless
    raises :class:`BoundNotApplicable` (never NaN, never an unrelated exception)."""
    if eps >= eps0:
        return -math.inf  # shuffled eps0-LDP reports are eps0-DP: delta = 0 exactly
    if eps0 > _MAX_NUMERIC_EPS0:
        raise BoundNotApplicable(
            f"the numerical bounds of Balle et al. 2019 are evaluated for eps0 <= {_MAX_NUMERIC_EPS0} "
            f"(e^(2 eps) must be a finite float), got eps0 = {eps0}; eps0 itself is a valid epsilon"
        )
    try:
        out = fn(eps, k, eps0, n)
    except (ArithmeticError, ValueError) as exc:
        if isinstance(exc, BoundNotApplicable):
            raise
        out = math.nan
    if math.isnan(out) or out == math.inf:
        raise BoundNotApplicable(
            f"the numerical bounds of Balle et al. 2019 cannot be evaluated in floating point at "
            f"eps = {eps}, k = {k}, eps0 = {eps0}, n = {n} (an intermediate leaves the float range)"
        )
    return out


class _KRRCurve(LiteratureCurve):
    """Shared construction of the Balle et al. 2019 curves: ``(k, eps0, n)`` validated."""

    k: int
    eps0: float
    n: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", _k(self.k))
        object.__setattr__(self, "eps0", _eps0(self.eps0))
        object.__setattr__(self, "n", _n(self.n))


@dataclass(frozen=True)
class Balle2019KRRCurve(_KRRCurve):
    """Balle et al. 2019, Theorem 3.1 (closed form for k-RR) as a certified curve (``bound="upper"``).

    ``log delta(eps) = log 2 - eps^2 (n-1) / (14 (e^eps0+k-1))`` for
    ``27 (e^eps0+k-1)/(n-1) <= eps <= 1`` (rounded up; 0 for ``eps >= eps0``); ``epsilon(delta)`` is
    the closed form ``max(sqrt(14 log(2/delta)(e^eps0+k-1)/(n-1)), 27 (e^eps0+k-1)/(n-1))``.

    Args:
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.

    Raises:
        ParameterError: On invalid numbers.
        BoundNotApplicable: At an ``eps`` (or resulting ``eps``) outside the theorem's regime.

    Example:
        >>> c = Balle2019KRRCurve(k=10, eps0=2.0, n=100_000)
        >>> round(c.epsilon(1e-6), 4), 0.9e-6 < c.delta(0.1825) < 1.1e-6
        (0.1825, True)
    """

    k: int
    eps0: float
    n: int
    name = "BBGN19 k-RR"
    citation = "Balle et al., The privacy blanket of the shuffle model (CRYPTO 2019), Thm 3.1"

    def _log_delta(self, eps: float) -> float:
        return _krr_log_delta(eps, self.k, self.eps0, self.n)

    def epsilon(self, delta: float) -> float:
        """The closed form (rounded up, at most ``eps0``); raises outside ``eps <= 1``."""
        delta = _delta(delta)
        k, eps0, n = self.k, self.eps0, self.n
        s = _scale(k, eps0)
        # -log(delta) rather than log(1/delta): 1/delta overflows for subnormal delta
        eps = max(math.sqrt(14.0 * (math.log(2.0) - math.log(delta)) * s / (n - 1)), 27.0 * s / (n - 1))
        if eps > 1.0:
            raise BoundNotApplicable(f"{_NAME} requires eps <= 1, but the bound gives eps = {eps:.6g}")
        # round outward (relative 1e-12, at least one float); eps0 is always valid on its own
        return min(math.nextafter(eps * (1.0 + 1e-12), math.inf), eps0)


class _NumericCurve(_KRRCurve):
    """The numerical (Section 5) bounds: undefined at ``eps = 0``, searched from there with the
    trivial ``delta(0) <= 1``."""

    _label = ""
    _fn = staticmethod(lambda eps, k, eps0, n: math.nan)

    def _log_delta(self, eps: float) -> float:
        if eps == 0.0:
            raise BoundNotApplicable(
                f"the {self._label} bound of Balle et al. 2019 needs eps > 0, got eps = 0.0"
            )
        return _guarded(self._fn, eps, self.k, self.eps0, self.n)

    def _search_delta(self, eps: float) -> float:
        # eps0 is always a valid answer by itself (the shuffled output of eps0-LDP reports is
        # (eps0, 0)-DP), so the search runs on (0, eps0]; delta(0) <= 1 trivially
        return 1.0 if eps <= 0.0 else self._delta(eps)


@dataclass(frozen=True)
class Balle2019HoeffdingCurve(_NumericCurve):
    """Balle et al. 2019, Section 5, Hoeffding bound for shuffled k-RR as a certified curve.

    See :func:`balle2019_hoeffding_log_delta` for the formula; ``epsilon`` is the one root finder
    :func:`shuffle_accounting.curves.epsilon_from_delta` on ``(0, eps0]`` (verified side).

    Args:
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.

    Example:
        >>> c = Balle2019HoeffdingCurve(10, 2.0, 100_000)
        >>> round(c.epsilon(1e-6), 3), c.bound
        (0.064, 'upper')
    """

    k: int
    eps0: float
    n: int
    name = "BBGN19 Hoeffding"
    citation = "Balle et al. (CRYPTO 2019), Sec. 5, Hoeffding bound"
    _label = "Hoeffding"
    _fn = staticmethod(lambda eps, k, eps0, n: _hoeffding(eps, k, eps0, n))


@dataclass(frozen=True)
class Balle2019BennettCurve(_NumericCurve):
    """Balle et al. 2019, Section 5, Bennett bound for shuffled k-RR as a certified curve.

    See :func:`balle2019_bennett_log_delta` for the formula; ``epsilon`` as
    :class:`Balle2019HoeffdingCurve`.

    Args:
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.

    Example:
        >>> c = Balle2019BennettCurve(10, 2.0, 100_000)
        >>> round(c.epsilon(1e-6), 3), c.delta(0.2) <= Balle2019HoeffdingCurve(10, 2.0, 100_000).delta(0.2)
        (0.028, True)
    """

    k: int
    eps0: float
    n: int
    name = "BBGN19 Bennett"
    citation = "Balle et al. (CRYPTO 2019), Sec. 5, Bennett bound"
    _label = "Bennett"
    _fn = staticmethod(lambda eps, k, eps0, n: _bennett(eps, k, eps0, n))


def balle2019_krr_epsilon(k: int, eps0: float, n: int, delta: float) -> float:
    """Closed-form k-RR bound (Balle et al. 2019, Theorem 3.1) as epsilon(delta).

    Args:
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.
        delta: Target delta in (0, 1).

    Returns:
        ``max(sqrt(14 log(2/delta)(e^eps0+k-1)/(n-1)), 27 (e^eps0+k-1)/(n-1))``.

    Raises:
        ParameterError: On invalid numbers.
        BoundNotApplicable: If that value exceeds 1 (the theorem needs ``eps <= 1``).

    Example:
        >>> round(balle2019_krr_epsilon(10, 2.0, 100_000, 1e-6), 4)
        0.1825
    """
    k, eps0, n, delta = _k(k), _eps0(eps0), _n(n), _delta(delta)
    return Balle2019KRRCurve(k, eps0, n).epsilon(delta)


def balle2019_krr_delta(eps: float, k: int, eps0: float, n: int) -> float:
    """Closed-form k-RR bound solved for delta: ``delta = 2 exp(-eps^2 (n-1) / (14 (e^eps0+k-1)))``.

    Capped at 1 (trivially valid).

    Args:
        eps: Target epsilon in ``[27 (e^eps0+k-1)/(n-1), 1]``.
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.

    Returns:
        Upper bound on delta at ``eps``.

    Raises:
        ParameterError: On invalid numbers.
        BoundNotApplicable: If ``eps > 1`` or ``eps < 27 (e^eps0 + k - 1)/(n - 1)``.

    Example:
        >>> d = balle2019_krr_delta(0.1825, 10, 2.0, 100_000)
        >>> 0.9e-6 < d < 1.1e-6
        True
    """
    eps = _eps(eps)
    return Balle2019KRRCurve(k, eps0, n).delta(eps)


def _krr_log_delta(eps: float, k: int, eps0: float, n: int) -> float:
    if eps >= eps0:
        return -math.inf  # shuffled eps0-LDP reports are eps0-DP: delta = 0 exactly
    s = _scale(k, eps0)
    if eps > 1.0:
        raise BoundNotApplicable(f"{_NAME} requires eps <= 1, got eps = {eps}")
    if eps < 27.0 * s / (n - 1):
        raise BoundNotApplicable(
            f"{_NAME} requires gamma >= 27k/((n-1) eps), i.e. eps >= 27(e^eps0+k-1)/(n-1) = "
            f"{27.0 * s / (n - 1):.6g}, got eps = {eps}"
        )
    v = math.log(2.0) - eps * eps * (n - 1) / (14.0 * s)
    return min(v + 1e-12 * (abs(v) + 1.0), 0.0)


def balle2019_krr_log_delta(eps: float, k: int, eps0: float, n: int) -> float:
    """Natural log of :func:`balle2019_krr_delta`: ``log 2 - eps^2 (n-1) / (14 (e^eps0+k-1))``.

    Args:
        eps: Target epsilon in ``[27 (e^eps0+k-1)/(n-1), 1]``.
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.

    Returns:
        ``log`` of the upper bound on delta (``<= 0``), rounded up by a relative 1e-12.

    Raises:
        ParameterError: On invalid numbers.
        BoundNotApplicable: If ``eps > 1`` or ``eps < 27 (e^eps0 + k - 1)/(n - 1)``.

    Example:
        >>> round(balle2019_krr_log_delta(1.0, 10, 2.0, 10**8), 0)
        -435830.0
    """
    eps = _eps(eps)
    return Balle2019KRRCurve(k, eps0, n).log_delta(eps)


def _one_minus_gamma(k: int, eps0: float) -> float:
    """``1 - gamma = (e^eps0 - 1)/(e^eps0 + k - 1)`` without cancellation (``1.0 - gamma`` loses
    all digits for small eps0)."""
    return math.expm1(eps0) / _scale(k, eps0)


def krr_l_stats(eps: float, k: int, eps0: float) -> tuple[float, float, float, float, float]:
    """gamma, a = e^eps - 1 (= -E L), max L, range of L, E[L^2] for k-RR (uniform blanket)."""
    s = _scale(k, eps0)
    gamma = k / s
    om = _one_minus_gamma(k, eps0)
    a = math.expm1(eps)
    w = k * om  # k (1 - gamma)
    # max L = k (1 - gamma) - gamma a = gamma (e^eps0 - e^eps) (k (1 - gamma) = gamma (e^eps0 - 1)),
    # written without cancellation: exactly 0 at eps = eps0, negative beyond, a few ulp relative error
    b_max = gamma * math.exp(eps) * math.expm1(eps0 - eps)
    rng = w * (math.exp(eps) + 1.0)
    second = gamma * (1.0 + om) * a * a + om**2 * k * (math.exp(2 * eps) + 1.0)
    return gamma, a, b_max, rng, second


def _hoeffding(eps: float, k: int, eps0: float, n: int) -> float:
    gamma, a, _, rng, _ = krr_l_stats(eps, k, eps0)
    om = _one_minus_gamma(k, eps0)
    ratio = a / rng
    x = 2.0 * ratio * ratio  # an underflow to 0 only enlarges the bound (it decreases in x)
    # log(1 - gamma (1 - e^-x)) = log((1 - gamma) + gamma e^-x), no cancellation
    log_base = math.log(om + gamma * math.exp(-x)) if x < 700.0 else math.log(om)
    log_d = 2.0 * math.log(rng) - (math.log(4.0) + math.log(a) + math.log(gamma) + math.log(n)) + n * log_base
    return log_d + 1e-12 * (abs(log_d) + 1.0)


def _bennett_phi_lower(u: float) -> float:
    """A lower bound on ``phi(u) = (1+u) log(1+u) - u`` for ``u >= 0``, accurate in relative terms.

    For ``u < 1e-2`` the direct form cancels; there ``phi(u) = sum_{j>=2} (-1)^j u^j / (j (j-1))``
    is alternating with terms decreasing in magnitude, so stopping after the negative ``u^3`` term
    gives a lower bound (``u^2/2 - u^3/6``), rounded down by a relative ``1e-15``. A smaller ``phi``
    only makes the Bennett bound larger, so the result stays an upper bound on delta.
    """
    if u < 1e-2:
        return max(0.0, (u * u / 2.0 - u * u * u / 6.0) * (1.0 - 1e-15))
    return max(0.0, ((1.0 + u) * math.log1p(u) - u) * (1.0 - 1e-12))


def _bennett(eps: float, k: int, eps0: float, n: int) -> float:
    gamma, a, b, _, v = krr_l_stats(eps, k, eps0)
    om = _one_minus_gamma(k, eps0)
    if b <= 0.0:  # max L <= 0 (eps >= eps0): the privacy loss never exceeds eps, delta = 0
        return -math.inf
    alpha = v / (b * b)
    beta = a * b / v
    phi = _bennett_phi_lower(beta)
    x = alpha * phi
    log_first = n * math.log(om + gamma * math.exp(-x)) if x < 700.0 else n * math.log(om)
    log_second = n * math.log(om)
    if log_second >= log_first:
        return -math.inf
    diff = log_first + math.log1p(-math.exp(log_second - log_first))
    log_d = math.log(b) - (math.log(gamma) + math.log(n)) - math.log(math.log1p(beta)) + diff
    return log_d + 1e-12 * (abs(log_d) + 1.0)


def balle2019_hoeffding_log_delta(eps: float, k: int, eps0: float, n: int) -> float:
    """Natural log of the Hoeffding numerical bound (Balle et al. 2019, Section 5) for shuffled k-RR.

    ``E[(S_m)_+] <= (R^2/(4a)) exp(-2 m a^2 / R^2)`` for ``S_m`` a sum of ``m`` copies of ``L``
    (range ``R = k (1 - gamma)(e^eps + 1)``, mean ``-a``), hence
    ``delta <= R^2 / (4 a gamma n) * (1 - gamma (1 - exp(-2 a^2 / R^2)))^n``, capped at 1.

    Args:
        eps: Target epsilon, finite and > 0.
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.

    Returns:
        ``log`` of the upper bound on delta at ``eps`` (not capped; rounded up by a relative 1e-12).

    Raises:
        ParameterError: On invalid numbers (including ``eps = 0``, where the bound is undefined).

    Example:
        >>> balle2019_hoeffding_log_delta(0.2, 10, 2.0, 10**8) < math.log(1e-300)
        True
    """
    eps = _eps(eps)
    return Balle2019HoeffdingCurve(k, eps0, n).log_delta(eps)


def balle2019_hoeffding_delta(eps: float, k: int, eps0: float, n: int) -> float:
    """Hoeffding numerical bound (Balle et al. 2019, Section 5) for shuffled k-RR, capped at 1.

    ``exp`` of :func:`balle2019_hoeffding_log_delta` (see there for the formula).

    Args:
        eps: Target epsilon, finite and > 0.
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.

    Returns:
        Upper bound on delta at ``eps``.

    Raises:
        ParameterError: On invalid numbers (including ``eps = 0``).

    Example:
        >>> d = balle2019_hoeffding_delta(0.2, 10, 2.0, 100_000)
        >>> 0 < d < 1e-3
        True
    """
    eps = _eps(eps)
    return Balle2019HoeffdingCurve(k, eps0, n).delta(eps)


def balle2019_bennett_log_delta(eps: float, k: int, eps0: float, n: int) -> float:
    """Natural log of the Bennett numerical bound (Balle et al. 2019, Section 5) for shuffled k-RR.

    With ``b = max L``, ``v = E[L^2]``, ``alpha = v/b^2``, ``beta = a b / v`` and
    ``phi(u) = (1+u) log(1+u) - u``, Bennett's inequality gives
    ``E[(S_m)_+] <= exp(-m alpha phi(beta)) * b / log(1 + beta)``, hence
    ``delta <= b / (gamma n log(1+beta)) * [(1 - gamma(1 - e^{-alpha phi(beta)}))^n - (1-gamma)^n]``
    (the ``m = 0`` term is exactly 0 and is removed). If ``b <= 0`` then ``L <= 0`` and delta = 0.

    Args:
        eps: Target epsilon, finite and > 0.
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.

    Returns:
        ``log`` of the upper bound on delta at ``eps`` (not capped; ``-inf`` when it is 0).

    Raises:
        ParameterError: On invalid numbers (including ``eps = 0``).

    Example:
        >>> balle2019_bennett_log_delta(0.2, 10, 2.0, 10**8) < math.log(1e-300)
        True
    """
    eps = _eps(eps)
    return Balle2019BennettCurve(k, eps0, n).log_delta(eps)


def balle2019_bennett_delta(eps: float, k: int, eps0: float, n: int) -> float:
    """Bennett numerical bound (Balle et al. 2019, Section 5) for shuffled k-RR, capped at 1.

    ``exp`` of :func:`balle2019_bennett_log_delta` (see there for the formula).

    Args:
        eps: Target epsilon, finite and > 0.
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.

    Returns:
        Upper bound on delta at ``eps``.

    Raises:
        ParameterError: On invalid numbers (including ``eps = 0``).

    Example:
        >>> balle2019_bennett_delta(0.2, 10, 2.0, 100_000) <= balle2019_hoeffding_delta(0.2, 10, 2.0, 100_000)
        True
    """
    eps = _eps(eps)
    return Balle2019BennettCurve(k, eps0, n).delta(eps)


def balle2019_hoeffding_epsilon(k: int, eps0: float, n: int, delta: float) -> float:
    """Hoeffding bound as epsilon(delta): the one root finder
    (:func:`shuffle_accounting.curves.epsilon_from_delta`) on ``(0, eps0]``, keeping the verified side.

    Returns ``eps0`` (the local guarantee, always valid) if the bound never reaches ``delta`` below it.

    Example:
        >>> round(balle2019_hoeffding_epsilon(10, 2.0, 100_000, 1e-6), 3)
        0.064
    """
    k, eps0, n, delta = _k(k), _eps0(eps0), _n(n), _delta(delta)
    return Balle2019HoeffdingCurve(k, eps0, n).epsilon(delta)


def balle2019_bennett_epsilon(k: int, eps0: float, n: int, delta: float) -> float:
    """Bennett bound as epsilon(delta): the one root finder on ``(0, eps0]``, keeping the verified side.

    Example:
        >>> round(balle2019_bennett_epsilon(10, 2.0, 100_000, 1e-6), 3)
        0.028
    """
    k, eps0, n, delta = _k(k), _eps0(eps0), _n(n), _delta(delta)
    return Balle2019BennettCurve(k, eps0, n).epsilon(delta)
