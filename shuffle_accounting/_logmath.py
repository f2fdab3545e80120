"""Log-space numerical helpers shared by the accountants.

All functions are vectorised over numpy arrays. Probabilities that may underflow are carried as
natural logarithms; ``-inf`` stands for an exact zero.

:data:`UNIT_ROUNDOFF` is the one rounding constant of the error budgets: modules whose budgets
are written in units of the machine epsilon ``2^-52`` use ``2 * UNIT_ROUNDOFF`` (a 2x margin).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln, logsumexp

__all__ = [
    "UNIT_ROUNDOFF",
    "logsumexp",
    "log_binom",
    "log_sub",
    "log1mexp",
    "log_add",
    "exp_or_zero",
    "exp_up",
    "bisect_bracket",
    "BLAS_CHUNK",
    "convolve_chunked",
    "convolve2d_direct",
]

#: Unit roundoff of IEEE-754 double precision, ``u = 2^-53``: every correctly rounded operation
#: (``+ - * /``, ``sqrt``) returns ``x (1 + e)`` with ``|e| <= u``; ``exp``/``log``/``log1p`` of numpy
#: and libm are within 1 ulp (``<= 2u`` relative). The machine epsilon (spacing of doubles at 1)
#: is ``2u = 2^-52``.
UNIT_ROUNDOFF = 2.0**-53


def log_binom(n: ArrayLike, k: ArrayLike) -> np.ndarray:
    """Natural log of the binomial coefficient C(n, k) = n! / (k! (n-k)!).

    Returns ``-inf`` where ``k < 0`` or ``k > n``.

    Example:
        >>> round(float(np.exp(log_binom(10, 3))), 6)
        120.0
    """
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    valid = (k >= 0) & (k <= n)
    with np.errstate(invalid="ignore"):
        out = gammaln(n + 1) - gammaln(np.where(valid, k, 0) + 1) - gammaln(np.where(valid, n - k, 0) + 1)
    return np.where(valid, out, -np.inf)


def log1mexp(x: ArrayLike) -> np.ndarray:
    """Compute log(1 - exp(x)) for x <= 0 accurately (Maechler's switch at -ln 2).

    Returns ``-inf`` at ``x == 0``.

    Example:
        >>> float(np.round(log1mexp(np.log(0.25)), 12)) == float(np.round(np.log(0.75), 12))
        True
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(x > -0.6931471805599453, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))
    return np.where(x == 0, -np.inf, out)


def log_sub(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Compute log(exp(a) - exp(b)) for a >= b; ``-inf`` when a == b.

    Example:
        >>> float(np.round(log_sub(np.log(3.0), np.log(1.0)), 12)) == float(np.round(np.log(2.0), 12))
        True
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore"):
        diff = np.where(np.isneginf(b), -np.inf, b - a)
    return np.where(np.isneginf(b), a, a + log1mexp(np.minimum(diff, 0.0)))


def log_add(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Compute log(exp(a) + exp(b)) elementwise.

    Example:
        >>> float(np.round(log_add(np.log(1.0), np.log(2.0)), 12)) == float(np.round(np.log(3.0), 12))
        True
    """
    return np.asarray(np.logaddexp(a, b))


def exp_or_zero(x: ArrayLike) -> np.ndarray:
    """exp(x) with ``-inf`` mapped to exactly 0.0 (underflow stays 0, never NaN).

    Example:
        >>> float(exp_or_zero(-np.inf))
        0.0
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(under="ignore"):
        return np.asarray(np.exp(x))


def exp_up(x: float) -> float:
    """An upper bound on ``e^x``: ``math.exp(x)`` moved one ulp up (``inf`` where it overflows).

    ``math.exp`` is within 1 ulp of the exact value (:data:`UNIT_ROUNDOFF`), so the next double
    above it is never below ``e^x``. Used where a certified ``log_delta`` is stated as a headline
    ``delta`` (the certificates of the worst-case searches), which must not be 1 ulp low.
    ``-inf`` gives ``0.0`` (an exact zero).

    Example:
        >>> import math
        >>> exp_up(0.0) > 1.0, exp_up(-math.inf), exp_up(1000.0)
        (True, 0.0, inf)
    """
    if x == -math.inf:
        return 0.0
    try:
        value = math.exp(x)
    except OverflowError:
        return math.inf
    return float(np.nextafter(value, math.inf))


def bisect_bracket(
    above: Callable[[float], bool],
    lo: float,
    hi: float,
    *,
    rtol: float = 0.0,
    atol: float = 0.0,
    max_iter: int = 60,
) -> tuple[float, float]:
    """Bisection on a monotone predicate: the bracket ``(lo, hi)`` around its switch point.

    ``above(x)`` must be true below the switch point and false above it (e.g. "delta(x) > target"
    for a non-increasing curve). Each step evaluates the midpoint and moves ``lo`` up where it is
    true, ``hi`` down where it is false; it stops after ``max_iter`` steps or once
    ``hi - lo <= max(rtol * hi, atol)``. Callers choose the side that is sound for them (``hi`` for a
    certified epsilon, ``lo`` for an exhibited one). Pure floating-point search: no randomness.

    Example:
        >>> lo, hi = bisect_bracket(lambda x: x * x < 2.0, 0.0, 2.0, rtol=1e-12)
        >>> lo < 2.0 ** 0.5 <= hi and hi - lo <= 1e-12 * hi
        True
    """
    for _ in range(max_iter):
        if hi - lo <= max(rtol * hi, atol):
            break
        mid = 0.5 * (lo + hi)
        if above(mid):
            lo = mid
        else:
            hi = mid
    return lo, hi


#: Longest run of terms one numpy convolution call sums per output (:func:`convolve_chunked`).
#: numpy's ``convolve`` / ``dot`` hand each output to OpenBLAS ``ddot``, which goes multi-threaded
#: above about 10000 terms; on a loaded shared machine such a call took 0.8-1.7 s instead of
#: 0.1 ms (benchmarks/README.md, "k = 2 at scale"), and a k = 3 law of ~20000-entry flattened
#: grids 22 s instead of 0.8 s (benchmarks/README.md, k = 3 budget section).
BLAS_CHUNK = 8192


def convolve_chunked(a: ArrayLike, b: ArrayLike, chunk: int | None = None) -> np.ndarray:
    """``numpy.convolve(a, b)`` (full), by chunks of the shorter input of at most ``chunk`` terms.

    The same products, summed in another order (each chunk's full convolution added at its
    offset): a sum of ``L`` non-negative products keeps its ``(L + 1) u`` relative bound in any
    order, so callers' rounding bounds are unchanged. Inputs of at most ``chunk`` terms go to
    numpy unchanged.

    Args:
        a: 1-D array.
        b: 1-D array.
        chunk: Largest chunk (``>= 1``; default: :data:`BLAS_CHUNK` at call time).

    Returns:
        The full convolution, length ``len(a) + len(b) - 1``.

    Example:
        >>> convolve_chunked([1.0, 2.0, 3.0], [1.0, 1.0], chunk=1).tolist()
        [1.0, 3.0, 5.0, 3.0]
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if chunk is None:
        chunk = BLAS_CHUNK
    if x.size > y.size:
        x, y = y, x
    if x.size <= chunk:
        return np.convolve(x, y)
    out = np.zeros(x.size + y.size - 1)
    for i0 in range(0, x.size, chunk):
        i1 = min(i0 + chunk, x.size)
        out[i0 : i1 + y.size - 1] += np.convolve(x[i0:i1], y)
    return out


def convolve2d_direct(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Full 2-D convolution ``out[i, j] = sum_{r, s} a[r, s] b[i - r, j - s]`` by direct sums.

    The same numbers as ``scipy.signal.convolve2d(a, b, mode="full")`` (direct, never FFT),
    without importing ``scipy.signal`` (about 1 s of start-up). Every output cell is a sum of
    products of the inputs in some order, so for non-negative inputs its relative error is at
    most ``(L + 1) u`` with ``L`` the number of non-zero products in that cell (any summation
    order; exact zeros add no rounding) -- the bound the accountants' budgets use.

    Two exact schedules, whichever does fewer multiply-adds: (i) rows padded to the output width
    ``W`` and flattened, one ``numpy.convolve`` (a 1-D direct convolution: the padding keeps
    the columns from wrapping, ``a[r, s]`` and ``b[t, v]`` meet at ``(r + t) W + (s + v)`` with
    ``s + v < W``; by :func:`convolve_chunked`, so no numpy call sums more than
    :data:`BLAS_CHUNK` terms); (ii) one scaled shifted add of the larger array per entry of the
    smaller.

    Args:
        a: 2-D array (1-D is read as one row).
        b: 2-D array (1-D is read as one row).

    Returns:
        Array of shape ``(a0 + b0 - 1, a1 + b1 - 1)``.

    Example:
        >>> convolve2d_direct([[1.0, 2.0]], [[1.0], [3.0]]).tolist()
        [[1.0, 2.0], [3.0, 6.0]]
    """
    x = np.atleast_2d(np.asarray(a, dtype=float))
    y = np.atleast_2d(np.asarray(b, dtype=float))
    rows = x.shape[0] + y.shape[0] - 1
    width = x.shape[1] + y.shape[1] - 1
    flat_work = float(x.shape[0] * width) * float(y.shape[0] * width)
    if x.size < y.size:
        x, y = y, x
    if flat_work <= 4.0 * float(x.size) * float(y.size) or y.size > 4096:
        xp = np.zeros((x.shape[0], width))
        xp[:, : x.shape[1]] = x
        yp = np.zeros((y.shape[0], width))
        yp[:, : y.shape[1]] = y
        return convolve_chunked(xp.ravel(), yp.ravel())[: rows * width].reshape(rows, width)
    out = np.zeros((rows, width))
    r0, c0 = x.shape
    for (i, j), w in np.ndenumerate(y):
        if w != 0.0:
            out[i : i + r0, j : j + c0] += w * x
    return out
