"""Validation of public inputs, shared by every module.

Every public constructor and function validates its arguments with these helpers, so that the
error for a bad value always has the same shape: a :class:`ParameterError` (a ``ValueError``)
whose message names the parameter, the allowed range and the value received. Booleans are never
accepted as numbers, NaN and infinities are rejected unless a helper is told otherwise, and
nothing is silently clipped.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = [
    "ParameterError",
    "check_int",
    "check_real",
    "check_probability",
    "check_delta",
    "check_real_array",
    "check_int_array",
    "check_probability_vector",
    "check_stochastic_matrix",
    "check_choice",
    "check_bool",
    "check_max_work",
    "check_work",
    "WorkBudgetExceeded",
    "DEFAULT_MAX_WORK",
]

#: Default work budget of every exponential or size-proportional public computation (about a
#: second or two of numpy work). Functions that enumerate take a ``max_work=`` keyword; see
#: :func:`check_work`.
DEFAULT_MAX_WORK = 10**8


class ParameterError(ValueError):
    """A public input is outside its allowed range or of the wrong type.

    The message always names the parameter, the allowed range or type, and the value received.

    Example:
        >>> check_int("n", -1, minimum=1)
        Traceback (most recent call last):
        ...
        shuffle_accounting._validation.ParameterError: n must be an integer >= 1, got -1
    """


class WorkBudgetExceeded(ParameterError, RuntimeError):
    """A computation would exceed, or has exhausted, its work budget (see :attr:`partial`).

    The one budget error of the library (issue 13: there used to be two classes of this name).
    Two situations raise it:

    * *up front*, by :func:`check_work` (the ``max_work=`` keyword of an O(n) or exponential
      computation): raised *before* the work starts, the message names the estimated work, the
      budget and a cheaper alternative;
    * *mid-search*, by a search whose cost is not known in advance (the k = 2 worst-case branch
      and bound of :mod:`shuffle_accounting.shuffled_krr.worst_case`, a convolution above its
      size cap): the budget ran out before the requested tolerance was reached. Where the
      search has a sound value at that point, :attr:`partial` holds it (the k = 2 branch and
      bound: a :class:`~shuffle_accounting.shuffled_krr.worst_case.WorstCaseCertificate` whose
      cover is complete and re-checkable, only looser than asked); else it is ``None``.

    It derives from both :class:`ParameterError` (hence ``ValueError``: the inputs are valid
    numbers but too large for the requested method) and ``RuntimeError`` (what the worst-case
    module's former class derived from), so code written against either former class —
    ``except ParameterError``, ``except ValueError``, ``except RuntimeError`` or
    ``except worst_case.WorkBudgetExceeded`` — still catches it.
    ``shuffle_accounting.shuffled_krr.worst_case.WorkBudgetExceeded`` is this same class (an
    alias kept for the users of that name).

    Example:
        >>> check_work("histograms(k=3, n=30)", 500, max_work=100, alternative="use a smaller n")
        Traceback (most recent call last):
        ...
        shuffle_accounting._validation.WorkBudgetExceeded: histograms(k=3, n=30) needs about 500 units of work, above max_work = 100; use a smaller n, or raise max_work

    Attributes:
        partial: A sound partial result, or ``None`` (not kept when the exception is pickled).
    """

    def __init__(self, *args: object, partial: Any = None) -> None:
        super().__init__(*args)
        self.partial = partial


def _fmt(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def check_int(name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as a Python ``int`` after checking it is an integer in range.

    Integer-valued finite floats (``1e6``) are accepted, since users write populations that way;
    booleans, NaN, infinities, fractional values and non-numbers are rejected.

    Args:
        name: Parameter name used in the error message.
        value: The value to check.
        minimum: Smallest allowed value (inclusive), or ``None``.
        maximum: Largest allowed value (inclusive), or ``None``.

    Returns:
        The value as an ``int``.

    Raises:
        ParameterError: If the value is not an integer in ``[minimum, maximum]``.

    Example:
        >>> check_int("k", 3, minimum=2)
        3
        >>> check_int("n", 1e4, minimum=1)
        10000
    """
    rng = _int_range_text(minimum, maximum)
    if _is_bool(value):
        raise ParameterError(f"{name} must be an integer{rng}, got a boolean {_fmt(value)}")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif isinstance(value, numbers.Real):
        try:
            f = float(value)
        except (OverflowError, ValueError, TypeError):
            raise ParameterError(f"{name} must be an integer{rng}, got {_fmt(value)}") from None
        if not math.isfinite(f) or not f.is_integer():
            raise ParameterError(f"{name} must be an integer{rng}, got {_fmt(value)}")
        out = int(f)
    else:
        raise ParameterError(f"{name} must be an integer{rng}, got {_fmt(value)}")
    if (minimum is not None and out < minimum) or (maximum is not None and out > maximum):
        raise ParameterError(f"{name} must be an integer{rng}, got {_fmt(value)}")
    return out


def _int_text(x: int) -> str:
    """An integer bound for a message: ``10**300`` / ``2**63`` rather than 300 digits."""
    if abs(x) < 10**15:
        return str(x)
    sign = "-" if x < 0 else ""
    a = abs(x)
    if a & (a - 1) == 0:
        return f"{sign}2**{a.bit_length() - 1}"
    e = len(str(a)) - 1
    if a == 10**e:
        return f"{sign}10**{e}"
    return str(x)


def _int_range_text(minimum: int | None, maximum: int | None) -> str:
    minimum = None if minimum is None else _int_text(minimum)  # type: ignore[assignment]
    maximum = None if maximum is None else _int_text(maximum)  # type: ignore[assignment]
    if minimum is not None and maximum is not None:
        return f" in [{minimum}, {maximum}]"
    if minimum is not None:
        return f" >= {minimum}"
    if maximum is not None:
        return f" <= {maximum}"
    return ""


def _real_range_text(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    lo = "-inf" if low is None else repr(low)
    hi = "inf" if high is None else repr(high)
    left = "(" if (low_open or low is None) else "["
    right = ")" if (high_open or high is None) else "]"
    return f" in {left}{lo}, {hi}{right}"


def check_real(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    allow_inf: bool = False,
) -> float:
    """Return ``value`` as a ``float`` after checking it is a real number in range.

    Args:
        name: Parameter name used in the error message.
        value: The value to check (int, float, numpy scalar or ``Fraction``).
        low: Lower end of the allowed interval, or ``None`` for unbounded.
        high: Upper end of the allowed interval, or ``None`` for unbounded.
        low_open: Exclude ``low`` itself.
        high_open: Exclude ``high`` itself.
        allow_inf: Accept ``+inf``/``-inf`` if they are inside the interval.

    Returns:
        The value as a ``float``.

    Raises:
        ParameterError: If the value is not a real number in the interval, is NaN, is infinite
            (unless allowed) or is a boolean.

    Example:
        >>> check_real("eps0", 1, low=0.0, low_open=True)
        1.0
        >>> check_real("eps0", float("nan"), low=0.0, low_open=True)
        Traceback (most recent call last):
        ...
        shuffle_accounting._validation.ParameterError: eps0 must be a finite real number in (0.0, inf), got nan
    """
    kind = "a real number" if allow_inf else "a finite real number"
    rng = _real_range_text(low, high, low_open, high_open)
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise ParameterError(f"{name} must be {kind}{rng}, got {_fmt(value)}")
    try:
        f = float(value)
    except (OverflowError, ValueError, TypeError):
        # an int or Fraction beyond the float range (e.g. 10**400): not representable
        raise ParameterError(
            f"{name} must be {kind}{rng} representable as a float (|x| < 1.8e308), got {_fmt(value)}"
        ) from None
    if math.isnan(f) or (math.isinf(f) and not allow_inf):
        raise ParameterError(f"{name} must be {kind}{rng}, got {_fmt(value)}")
    if low is not None and (f < low or (low_open and f == low)):
        raise ParameterError(f"{name} must be {kind}{rng}, got {_fmt(value)}")
    if high is not None and (f > high or (high_open and f == high)):
        raise ParameterError(f"{name} must be {kind}{rng}, got {_fmt(value)}")
    return f


def check_probability(name: str, value: Any, *, open_low: bool = False, open_high: bool = False) -> float:
    """Check a probability in ``[0, 1]`` (ends optionally excluded) and return it as ``float``.

    Example:
        >>> check_probability("p", 0.25)
        0.25
    """
    return check_real(name, value, low=0.0, high=1.0, low_open=open_low, high_open=open_high)


def check_delta(name: str, value: Any) -> float:
    """Check a DP ``delta`` in the open interval ``(0, 1)`` and return it as ``float``.

    Example:
        >>> check_delta("delta", 1e-6)
        1e-06
        >>> check_delta("delta", 0)
        Traceback (most recent call last):
        ...
        shuffle_accounting._validation.ParameterError: delta must be a finite real number in (0.0, 1.0), got 0
    """
    return check_real(name, value, low=0.0, high=1.0, low_open=True, high_open=True)


def check_real_array(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    allow_inf: bool = False,
) -> np.ndarray:
    """Check an array-like of real numbers elementwise; return a float64 ``ndarray``.

    Scalars are returned as 0-d arrays. Boolean arrays and object arrays of non-numbers are
    rejected.

    Raises:
        ParameterError: If any element is NaN, infinite (unless allowed), outside the interval, or
            the input is not numeric.

    Example:
        >>> check_real_array("eps", [0.1, 0.5], low=0.0)
        array([0.1, 0.5])
    """
    kind = "real numbers" if allow_inf else "finite real numbers"
    rng = _real_range_text(low, high, low_open, high_open)
    arr = _numeric_array(name, value, f"{name} must be {kind}{rng}", "iuf")
    with np.errstate(over="ignore"):
        arr = arr.astype(float, copy=False)
    bad = np.isnan(arr)
    if not allow_inf:
        bad |= np.isinf(arr)
    if low is not None:
        bad |= (arr <= low) if low_open else (arr < low)
    if high is not None:
        bad |= (arr >= high) if high_open else (arr > high)
    if np.any(bad):
        first = float(arr[bad].ravel()[0])
        raise ParameterError(f"{name} must be {kind}{rng}, got {_fmt(first)}")
    return arr


def _numeric_array(name: str, value: Any, message: str, kinds: str) -> np.ndarray:
    """``value`` as a numeric ndarray, rejecting booleans anywhere (also inside lists), strings,
    ``None``, ragged (nested) sequences and integers beyond the float range; ``message`` is the
    error's text without the ``got ...`` part."""
    if _is_bool(value) or isinstance(value, (str, bytes)) or value is None:
        raise ParameterError(f"{message}, got {_fmt(value)}")
    if isinstance(value, np.ndarray):
        arr = value
    else:
        try:
            obj = np.array(value, dtype=object)
        except Exception:  # ragged nesting and the like; numpy raises several types
            raise ParameterError(f"{message} (a rectangular array), got {_fmt(value)}") from None
        flat = obj.ravel()
        for v in flat:
            if _is_bool(v) or not isinstance(v, (numbers.Real, np.number)) or isinstance(v, np.bool_):
                raise ParameterError(f"{message}, got {_fmt(value)} (element {_fmt(v)})")
        try:
            arr = np.asarray(value)
        except Exception:  # pragma: no cover - the object conversion above already succeeded
            raise ParameterError(f"{message}, got {_fmt(value)}") from None
        if arr.dtype.kind == "O":  # ints beyond int64, Fractions, mixed numeric types
            try:
                arr = np.array([float(v) for v in flat], dtype=float).reshape(obj.shape)
            except (OverflowError, ValueError, TypeError):
                raise ParameterError(f"{message} representable as floats, got {_fmt(value)}") from None
    if arr.dtype == bool or arr.dtype.kind not in kinds:
        raise ParameterError(f"{message}, got {_fmt(value)}")
    return arr


def check_int_array(
    name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None
) -> np.ndarray:
    """Check an array-like of integers (no booleans, no fractional values); return ``int64``.

    Integer-valued floats are accepted. Scalars come back as 0-d arrays.

    Raises:
        ParameterError: If an element is not an integer in ``[minimum, maximum]``, or the input is
            boolean, ragged, or not numeric.

    Example:
        >>> check_int_array("counts", [2, 0, 1], minimum=0)
        array([2, 0, 1])
    """
    rng = _int_range_text(minimum, maximum)
    message = f"{name} must be integers{rng}"
    arr = _numeric_array(name, value, message, "iuf")
    if arr.dtype.kind == "f":
        finite = np.isfinite(arr)
        if not np.all(finite) or not np.all(arr == np.floor(arr)) or np.any(np.abs(arr) >= 2.0**63):
            raise ParameterError(f"{message}, got {_fmt(value)}")
    elif arr.dtype.kind == "u" and arr.size and int(arr.max()) >= 2**63:
        raise ParameterError(f"{message}, got {_fmt(value)}")
    out = arr.astype(np.int64)
    bad = np.zeros(out.shape, dtype=bool)
    if minimum is not None:
        bad |= out < minimum
    if maximum is not None:
        bad |= out > maximum
    if np.any(bad):
        raise ParameterError(f"{message}, got {_fmt(int(out[bad].ravel()[0]))}")
    return out


def check_probability_vector(name: str, value: Any, *, atol: float = 1e-9) -> np.ndarray:
    """Check a 1-D probability vector (non-negative, finite, sums to 1 within ``atol``).

    ``Fraction`` entries are accepted and checked exactly, then converted to ``float``.

    Raises:
        ParameterError: If the vector is empty, not 1-D, has a negative/NaN/inf entry, or does not
            sum to one.

    Example:
        >>> check_probability_vector("P", [0.5, 0.5])
        array([0.5, 0.5])
    """
    if isinstance(value, np.ndarray):
        seq = None
    else:
        try:
            seq = list(value)
        except TypeError:
            raise ParameterError(
                f"{name} must be a probability vector (non-negative, summing to 1), got {_fmt(value)}"
            ) from None
    if seq is not None and seq and all(isinstance(v, Fraction) for v in seq):
        if any(v < 0 for v in seq) or sum(seq) != 1:
            raise ParameterError(
                f"{name} must be a probability vector (non-negative, summing to 1), got {_fmt(value)}"
            )
        return np.array([float(v) for v in seq])
    arr = check_real_array(name, value, low=0.0)
    if arr.ndim != 1 or arr.size == 0:
        raise ParameterError(f"{name} must be a non-empty 1-D probability vector, got shape {arr.shape}")
    total = float(arr.sum())
    if abs(total - 1.0) > atol:
        raise ParameterError(
            f"{name} must be a probability vector summing to 1 (tolerance {atol}), got sum {total!r}"
        )
    return arr


def check_stochastic_matrix(name: str, value: Any, *, atol: float = 1e-9) -> np.ndarray:
    """Check a row-stochastic matrix (2-D, non-negative, finite, every row sums to 1).

    Raises:
        ParameterError: If the matrix is not 2-D, is empty, has a negative/NaN/inf entry, or a
            row does not sum to one within ``atol``.

    Example:
        >>> check_stochastic_matrix("matrix", [[0.75, 0.25], [0.25, 0.75]])
        array([[0.75, 0.25],
               [0.25, 0.75]])
    """
    arr = check_real_array(name, value, low=0.0)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ParameterError(f"{name} must be a non-empty 2-D row-stochastic matrix, got shape {arr.shape}")
    sums = arr.sum(axis=1)
    bad = np.abs(sums - 1.0) > atol
    if np.any(bad):
        row = int(np.argmax(bad))
        raise ParameterError(
            f"{name} must be row-stochastic (each row sums to 1, tolerance {atol}), "
            f"got row {row} summing to {float(sums[row])!r}"
        )
    return arr


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """Check that ``value`` is one of the allowed strings.

    Example:
        >>> check_choice("output", "count", ("histogram", "count"))
        'count'
    """
    if not isinstance(value, str) or value not in choices:
        raise ParameterError(f"{name} must be one of {choices}, got {_fmt(value)}")
    return value


def check_max_work(value: Any) -> int:
    """Check a ``max_work=`` keyword: an integer >= 1 (``None`` means :data:`DEFAULT_MAX_WORK`).

    Example:
        >>> check_max_work(None) == DEFAULT_MAX_WORK
        True
    """
    if value is None:
        return DEFAULT_MAX_WORK
    return check_int("max_work", value, minimum=1)


def check_work(what: str, work: float, *, max_work: Any, alternative: str) -> None:
    """Raise :class:`WorkBudgetExceeded` if the estimated ``work`` exceeds ``max_work``.

    Args:
        what: The computation, as the user called it (e.g. ``"histograms(k=3, n=23)"``).
        work: The estimated number of elementary steps (any non-negative number, may be huge or
            ``inf``; compute it without doing the work).
        max_work: The caller's budget (validated by :func:`check_max_work`; ``None`` = default).
        alternative: What to do instead (a cheaper method or a smaller input).

    Raises:
        WorkBudgetExceeded: If ``work > max_work``.

    Example:
        >>> check_work("enumeration", 10, max_work=100, alternative="none needed")
    """
    budget = check_max_work(max_work)
    if not work <= budget:
        if len(what) > 160:  # e.g. a 300-digit size
            what = what[:157] + "..."
        if work >= 1e300:
            shown = "more than 1e300"
        elif isinstance(work, int) and work <= 10**12:
            shown = str(work)
        else:
            shown = f"{float(work):.3g}"
        raise WorkBudgetExceeded(
            f"{what} needs about {shown} units of work, above max_work = {budget}; "
            f"{alternative}, or raise max_work"
        )


def check_bool(name: str, value: Any) -> bool:
    """Check a flag: ``True``/``False`` (or a numpy bool) only, never a truthy string or number.

    Example:
        >>> check_bool("exact", True)
        True
        >>> check_bool("exact", "no")
        Traceback (most recent call last):
        ...
        shuffle_accounting._validation.ParameterError: exact must be True or False, got 'no'
    """
    if not _is_bool(value):
        raise ParameterError(f"{name} must be True or False, got {_fmt(value)}")
    return bool(value)
