"""Shared validation and result types of :mod:`shuffle_accounting.qif` (private module)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .._validation import ParameterError, check_int, check_real
from ..curves import Interval
from ..randomizers import KRR

__all__ = ["Estimate", "check_p", "check_nk", "krr_keep_probability", "old_nkp_call", "old_np_call"]


@dataclass(frozen=True, init=False)
class Estimate(Interval):
    """A computed quantity with a stated absolute error bound: a **certified**
    :class:`~shuffle_accounting.curves.Interval` (``certified=True``, ``estimate = value``).

    The true value lies in ``[lower, upper] = [value - error, value + error]`` (intersected with the
    quantity's natural range where the producer says so).

    Args:
        value: The point estimate (midpoint of the certified interval).
        error: Absolute error bound (finite, >= 0).
        lower: Certified lower end.
        upper: Certified upper end.

    Raises:
        ParameterError: If a number is NaN or infinite, ``error < 0`` or not
            ``lower <= value <= upper``.

    Example:
        >>> e = Estimate(0.5, 1e-12, 0.5 - 1e-12, 0.5 + 1e-12)
        >>> e.lower <= e.value <= e.upper, e.certified, e.estimate == e.value
        (True, True, True)
        >>> float(e)
        0.5
    """

    error: float

    def __init__(self, value: float, error: float, lower: float, upper: float) -> None:
        vals = {
            name: check_real(name, v)
            for name, v in (("value", value), ("error", error), ("lower", lower), ("upper", upper))
        }
        if vals["error"] < 0:
            raise ParameterError(f"error must be >= 0, got {error!r}")
        if not vals["lower"] <= vals["value"] <= vals["upper"]:
            raise ParameterError(f"lower <= value <= upper must hold, got {lower!r}, {value!r}, {upper!r}")
        self._init_interval(
            vals["lower"], vals["upper"], certified=True, estimate=vals["value"], error=vals["error"]
        )

    @property
    def value(self) -> float:
        """The point estimate (``estimate``)."""
        return float(self.estimate)  # type: ignore[arg-type]

    def __float__(self) -> float:
        return float(self.value)


def _number(value: Any) -> float | None:
    """``value`` as a float if it is a real number (not a bool), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value)


def old_nkp_call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether a call of a ``(k, p, n)`` function is in the former order ``(n, k, p)``.

    Unambiguous: the second positional argument is ``p`` (a probability, ``<= 1``) in the new
    order and ``k`` (an integer ``>= 2``) in the old one, so an integer ``>= 2`` there is read as
    the old ``k``; a third argument strictly between 0 and 1 can only be the old ``p`` (the new
    ``n`` is an integer ``>= 1``); a single positional argument with ``k=`` given as a keyword is the old
    ``n``. Every valid call is read in its one possible order; an invalid one is reported in the
    order it resembles (its error names a parameter of that order).
    """
    if len(args) >= 2:
        second = _number(args[1])
        # an integer >= 2 can only be the old k (an invalid p such as 1.5 stays a p: its error names p)
        if second is not None and second >= 2.0 and second == math.floor(second):
            return True
        # a fraction strictly between 0 and 1 in third place can only be the old p (the new n is
        # an integer >= 1)
        third = _number(args[2]) if len(args) >= 3 else None
        return third is not None and 0.0 < third < 1.0
    return len(args) == 1 and "k" in kwargs


def old_np_call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether a call of a ``(p, n)`` function is in the former order ``(n, p)``.

    Unambiguous: in the new order the second positional argument is ``n`` (an integer ``>= 1``),
    in the old one ``p`` (in ``[1/2, 1]``); a second argument ``< 1`` is the old ``p``, and so is
    ``1`` after a first argument above 1 (``p = 5`` is invalid); ``f(p, 1)`` with ``p <= 1`` is the
    new order (``f(1, 1)`` means the same in both). A single positional argument with ``p=`` given as a keyword is the old ``n``.
    """
    if len(args) >= 2:
        first, second = _number(args[0]), _number(args[1])
        if first is None or second is None:
            return False
        return second < 1.0 or (second == 1.0 and first > 1.0)
    return len(args) == 1 and "p" in kwargs


def check_nk(n: Any, k: Any) -> tuple[int, int]:
    """Validate the number of users ``n >= 1`` and of values ``k >= 2``."""
    return check_int("n", n, minimum=1, maximum=2**53), check_int("k", k, minimum=2, maximum=2**53)


def check_p(p: Any, k: int, *, exact: bool = False) -> float | Fraction:
    """Validate the k-RR keep probability ``p`` in ``[1/k, 1]``.

    With ``exact=True`` a ``Fraction`` (or int) is returned unchanged so that channel matrices
    can be built in exact rational arithmetic.
    """
    if exact and isinstance(p, (Fraction, numbers.Integral)) and not isinstance(p, bool):
        fp = Fraction(p)
        if not Fraction(1, k) <= fp <= 1:
            raise ParameterError(f"p must be a real number in [1/k, 1] = [1/{k}, 1], got {p!r}")
        return fp
    low = 1.0 / k
    val = check_real("p", p, low=0.0, high=1.0)
    # Accept p == 1/k up to the rounding of 1/k itself.
    if val < low and not math.isclose(val, low, rel_tol=4e-16, abs_tol=0.0):
        raise ParameterError(f"p must be a real number in [1/k, 1] = [{low!r}, 1.0], got {p!r}")
    return max(val, low)


def krr_keep_probability(k: Any, eps0: Any) -> float:
    """The k-RR probability of reporting the true value, ``p = e^eps0 / (e^eps0 + k - 1)``.

    Jurado et al., *Analyzing the Shuffle Model through the Lens of Quantitative Information
    Flow*, eq. (3).

    Args:
        k: Number of values (integer >= 2).
        eps0: Local privacy parameter (finite, >= 0).

    Returns:
        ``p`` in ``[1/k, 1)``.

    Raises:
        ParameterError: On an invalid ``k`` or ``eps0``.

    Example:
        >>> round(krr_keep_probability(2, math.log(4)), 6)
        0.8
    """
    k = check_int("k", k, minimum=2, maximum=2**53)
    eps0 = check_real("eps0", eps0, low=0.0)
    return 1.0 / k if eps0 == 0.0 else KRR(k, eps0).p  # KRR requires eps0 > 0
