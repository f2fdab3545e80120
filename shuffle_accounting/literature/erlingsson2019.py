"""Erlingsson, Feldman, Mironov, Raghunathan, Talwar, Thakurta, *Amplification by Shuffling: From
Local to Central Differential Privacy via Anonymity* (SODA 2019; arXiv:1811.12469).

Their amplification-by-shuffling theorem (Theorem 7 in the arXiv version): for ``eps0``-LDP local
randomizers with ``eps0 < 1/2``, ``n >= 1000`` and ``delta < 1/100``, the shuffled output is
``(eps, delta)``-DP with ``eps = 12 eps0 sqrt(log(1/delta) / n)``. Equivalently
``delta = exp(-n eps^2 / (144 eps0^2))``. The curve is :class:`Erlingsson2019Curve`; the
functions are its aliases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._common import BoundNotApplicable, LiteratureCurve
from ._common import delta_arg as _delta
from ._common import eps0_arg as _eps0
from ._common import eps_arg as _eps
from ._common import n_arg as _n

__all__ = [
    "Erlingsson2019Curve",
    "erlingsson2019_epsilon",
    "erlingsson2019_delta",
    "erlingsson2019_log_delta",
]

_NAME = "Erlingsson et al. 2019"


def _check(eps0: float, n: int) -> None:
    if not eps0 < 0.5:
        raise BoundNotApplicable(f"{_NAME} requires eps0 < 1/2, got eps0 = {eps0}")
    if n < 1000:
        raise BoundNotApplicable(f"{_NAME} requires n >= 1000, got n = {n}")


@dataclass(frozen=True)
class Erlingsson2019Curve(LiteratureCurve):
    """Erlingsson et al. 2019's amplification theorem as a certified privacy curve (``bound="upper"``).

    ``log delta(eps) = -n eps^2 / (144 eps0^2)`` (rounded up), ``epsilon(delta) =
    12 eps0 sqrt(log(1/delta) / n)`` (closed form, rounded up, at most ``eps0``).

    Args:
        eps0: Local privacy parameter, finite, in (0, 1/2).
        n: Number of users, integer >= 1000.

    Raises:
        ParameterError: On invalid numbers.
        BoundNotApplicable: Unless ``eps0 < 1/2`` and ``n >= 1000``; the curve's values also need
            ``delta < 1/100``.

    Example:
        >>> c = Erlingsson2019Curve(eps0=0.25, n=10_000)
        >>> c.bound, round(c.epsilon(1e-6), 6), c.epsilon(1e-6) == erlingsson2019_epsilon(0.25, 10_000, 1e-6)
        ('upper', 0.111508, True)
    """

    eps0: float
    n: int
    name = "EFMRTT19"
    citation = "Erlingsson et al., Amplification by shuffling (SODA 2019), Thm 7"

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps0", _eps0(self.eps0))
        object.__setattr__(self, "n", _n(self.n))
        _check(self.eps0, self.n)

    def _log_delta(self, eps: float) -> float:
        ratio = eps / self.eps0  # no underflow of eps^2 / eps0^2 for tiny eps0
        v = max(-self.n * (ratio * ratio) / 144.0, -1.7e308)  # beyond the float range: an upper bound
        v += 1e-12 * (abs(v) + 1.0)
        if not v < math.log(0.01):
            raise BoundNotApplicable(
                f"{_NAME} requires delta < 1/100; at eps = {eps} the formula gives delta = {math.exp(v):.6g}"
            )
        return v

    def epsilon(self, delta: float) -> float:
        """``12 eps0 sqrt(log(1/delta) / n)`` rounded up, at most ``eps0`` (needs ``delta < 1/100``)."""
        delta = _delta(delta)
        if not delta < 0.01:
            raise BoundNotApplicable(f"{_NAME} requires delta < 1/100, got delta = {delta}")
        eps = 12.0 * self.eps0 * math.sqrt(-math.log(delta) / self.n)  # -log(delta): 1/delta may overflow
        # round outward; eps0 itself is always valid (shuffled eps0-LDP reports are eps0-DP)
        return min(math.nextafter(eps * (1.0 + 1e-12), math.inf), self.eps0)


def erlingsson2019_epsilon(eps0: float, n: int, delta: float) -> float:
    """``eps = 12 eps0 sqrt(log(1/delta) / n)`` (Erlingsson et al. 2019, amplification theorem).

    Args:
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.
        delta: Target delta in (0, 1).

    Returns:
        Upper bound on the shuffled epsilon (rounded up, at most ``eps0``).

    Raises:
        ParameterError: On invalid numbers.
        BoundNotApplicable: Unless ``eps0 < 1/2``, ``n >= 1000`` and ``delta < 1/100``.

    Example:
        >>> round(erlingsson2019_epsilon(0.25, 10_000, 1e-6), 6)
        0.111508
    """
    eps0, n, delta = _eps0(eps0), _n(n), _delta(delta)
    return Erlingsson2019Curve(eps0, n).epsilon(delta)


def erlingsson2019_delta(eps: float, eps0: float, n: int) -> float:
    """``delta = exp(-n eps^2 / (144 eps0^2))`` — the same theorem solved for delta (direct formula).

    Args:
        eps: Target epsilon, finite and >= 0.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.

    Returns:
        Upper bound on the shuffled delta at ``eps`` (``exp`` of the outward-rounded log, rounded
        up: a bound below the float range gives the smallest subnormal, never 0.0; use the log
        variant there).

    Raises:
        ParameterError: On invalid numbers.
        BoundNotApplicable: Unless ``eps0 < 1/2``, ``n >= 1000`` and the resulting delta is < 1/100.

    Example:
        >>> d = erlingsson2019_delta(0.111508, 0.25, 10_000)
        >>> 0.99e-6 < d < 1.01e-6
        True
    """
    eps = _eps(eps)
    return Erlingsson2019Curve(eps0, n).delta(eps)


def erlingsson2019_log_delta(eps: float, eps0: float, n: int) -> float:
    """``log delta = -n eps^2 / (144 eps0^2)`` (natural log of :func:`erlingsson2019_delta`).

    Args:
        eps: Target epsilon, finite and >= 0.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.

    Returns:
        ``log`` of the upper bound on delta, rounded up by a relative 1e-12 (at least -1.7e308,
        an upper bound where the formula's value is below the float range).

    Raises:
        ParameterError: On invalid numbers.
        BoundNotApplicable: Unless ``eps0 < 1/2``, ``n >= 1000`` and the resulting delta is < 1/100.

    Example:
        >>> round(erlingsson2019_log_delta(1.0, 0.25, 10**6), 1)
        -111111.1
    """
    eps = _eps(eps)
    return Erlingsson2019Curve(eps0, n).log_delta(eps)
