"""Shared pieces of :mod:`shuffle_accounting.literature`: the error type, validation, root finding.

Every published bound in this subpackage is a function of plain numbers. Validity conditions of the
cited theorems are enforced by raising :class:`BoundNotApplicable` (a
:class:`~shuffle_accounting._validation.ParameterError`), never by printing or returning NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .._validation import ParameterError, check_delta, check_int, check_real

__all__ = ["BoundNotApplicable"]


class BoundNotApplicable(ParameterError):
    """The parameters are valid numbers but outside the regime in which the cited theorem holds.

    The message names the violated condition and the values involved.

    Example:
        >>> from shuffle_accounting.literature import erlingsson2019_epsilon
        >>> erlingsson2019_epsilon(eps0=1.0, n=10_000, delta=1e-6)
        Traceback (most recent call last):
        ...
        shuffle_accounting.literature._common.BoundNotApplicable: Erlingsson et al. 2019 requires eps0 < 1/2, got eps0 = 1.0
    """


def _eps0(value: object) -> float:
    return check_real("eps0", value, low=0.0, low_open=True)


def _eps(value: object) -> float:
    return check_real("eps", value, low=0.0)


#: Largest ``n`` of the numerical bounds: every count must be exact in float64 (2**53 ~ 9e15).
MAX_N = 2**53


def _n(value: object, minimum: int = 2) -> int:
    return check_int("n", value, minimum=minimum, maximum=MAX_N)


def _k(value: object) -> int:
    return check_int("k", value, minimum=2, maximum=MAX_N)


def _delta(value: object) -> float:
    return check_delta("delta", value)


def smallest_eps(
    delta_of_eps: Callable[[float], float], delta: float, hi: float, *, iters: int = 80
) -> float:
    """Smallest ``eps`` in ``[0, hi]`` (up to bisection resolution) with ``delta_of_eps(eps) <= delta``.

    Bisection keeps the invariant ``delta_of_eps(right) <= delta``, so the returned value is always
    one at which the bound was *evaluated* and found ``<= delta``: it is sound even where
    ``delta_of_eps`` is not monotone (then it may just not be the smallest). ``hi`` itself must
    satisfy the condition; callers pass ``eps0`` (the trivial local guarantee) or a checked value.
    """
    if delta_of_eps(0.0) <= delta:
        return 0.0
    lo, right = 0.0, hi
    for _ in range(iters):
        mid = 0.5 * (lo + right)
        if mid <= lo or mid >= right:
            break
        if delta_of_eps(mid) <= delta:
            right = mid
        else:
            lo = mid
        if right - lo <= 1e-12 * max(1.0, right):
            break
    return right


def log_clip_to_prob(log_value: float) -> float:
    """``exp(log_value)`` capped at 1 (a delta >= 1 is trivially valid, so capping is sound).

    An upper bound stays an upper bound: where ``exp`` lands in the subnormal range (below
    ~2.2e-308, where it is accurate only to 5e-324 absolute) one subnormal step is added, so a
    finite log (a positive bound) never comes back as 0.0. Only ``-inf`` (an exact zero) gives 0.
    """
    if log_value >= 0.0:
        return 1.0
    if log_value == -math.inf:
        return 0.0
    value = math.exp(log_value)
    if value < 2.3e-308:
        value += 5e-324
    return value


# Shared with other modules and the tests under public names (issue 13: no module imports
# another module's private name). Internal: not in __all__.
eps0_arg = _eps0  # validated eps0 (every literature module)
eps_arg = _eps  # validated eps
n_arg = _n  # validated n
k_arg = _k  # validated k
delta_arg = _delta  # validated delta
