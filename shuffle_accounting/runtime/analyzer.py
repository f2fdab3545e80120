"""Analyzer side of a shuffled k-RR collection: histogram, matrix inversion, simplex projection, TV.

Together these are the "shuffle+INV" pipeline of Biswas, Jung, Palamidessi, *Tight Differential
Privacy Guarantees for the Shuffle Model with k-Randomized Response* (Sec. V): count the shuffled
reports, invert the k-RR channel (eq. (7), unbiased), project the result onto the probability
simplex (Wang and Carreira-Perpiñán, *Projection onto the probability simplex: an efficient
algorithm with a simple proof, and an application*, 2013, Algorithm 1), and measure utility by the
total variation distance to the true distribution. All of it is post-processing of the released
histogram, so it costs no privacy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import ParameterError, check_int, check_real, check_real_array
from ..randomizers import KRR

__all__ = ["histogram", "estimate_frequencies", "project_simplex", "total_variation"]


def histogram(codes: Any, k: int) -> np.ndarray:
    """Count the reports of each category code ``0..k-1``.

    Args:
        codes: 1-D integer array of category codes in ``[0, k)``.
        k: Number of categories, integer ``>= 2``.

    Returns:
        ``int64`` array of length ``k``.

    Raises:
        ParameterError: If ``k`` is invalid or a code is not an integer in range.

    Example:
        >>> histogram([0, 2, 2, 1, 2], 3).tolist()
        [1, 1, 3]
    """
    k = check_int("k", k, minimum=2)
    c = np.asarray(codes)
    if c.ndim != 1 or (c.size and c.dtype.kind not in "iu"):
        raise ParameterError(f"codes must be a 1-D array of integer category codes, got {codes!r}")
    if c.size and (c.min() < 0 or c.max() >= k):
        bad = c[(c < 0) | (c >= k)][0]
        raise ParameterError(f"codes must be integers in [0, {k - 1}], got {int(bad)}")
    return np.bincount(c.astype(np.int64, copy=False), minlength=k).astype(np.int64)


def _check_counts(counts: Any, k: int) -> np.ndarray:
    arr = check_real_array("counts", counts, low=0.0)
    if arr.ndim not in (1, 2) or arr.shape[-1] != k:
        raise ParameterError(f"counts must have length k = {k} (or shape (m, {k})), got shape {arr.shape}")
    if np.any(arr != np.floor(arr)):
        raise ParameterError("counts must be non-negative integers")
    if np.any(arr.sum(axis=-1) <= 0):
        raise ParameterError("counts must have a positive total (at least one report)")
    return arr


def invert_counts(counts: Any, k: int, pbar: float, q: float) -> np.ndarray:
    """``(counts/n - pbar) / q`` with ``q = p - pbar``; rows of a 2-D input are separate batches."""
    arr = _check_counts(counts, k)
    n = arr.sum(axis=-1, keepdims=True)
    return (arr / n - pbar) / q


def estimate_frequencies(counts: Any, k: int, eps0: float) -> np.ndarray:
    """Unbiased estimate of the true category frequencies from a k-RR histogram (matrix inversion).

    With ``p = e^eps0 / (e^eps0 + k - 1)`` and ``pbar = 1 / (e^eps0 + k - 1)``,
    ``E[counts_y / n] = pbar + (p - pbar) pi_y``, so the inverse channel gives
    ``pi_hat_y = (counts_y / n - pbar) / (p - pbar)`` with ``E[pi_hat] = pi`` (Biswas, Jung,
    Palamidessi, eq. (7)). Entries may be negative and sum to exactly 1 in exact arithmetic;
    use :func:`project_simplex` to get a distribution ("shuffle+INV").

    For the mechanism of a :class:`~shuffle_accounting.runtime.KRRRandomizer` pass its
    ``effective_eps0`` (or call its ``estimate``, which uses the exact ``p'``, ``pbar'``).

    Args:
        counts: Non-negative integer counts, length ``k`` (or shape ``(m, k)`` for ``m`` batches).
        k: Number of categories, integer ``>= 2``.
        eps0: Local privacy parameter of the k-RR that produced the counts, finite ``> 0``.

    Returns:
        Float array of the same shape as ``counts``.

    Raises:
        ParameterError: If an argument is invalid or a batch has no reports.

    Example:
        >>> import math
        >>> estimate_frequencies([50, 25, 25], 3, math.log(2)).round(12).tolist()
        [1.0, 0.0, 0.0]
    """
    k = check_int("k", k, minimum=2)
    eps0 = check_real("eps0", eps0, low=0.0, low_open=True)
    r = KRR(k, eps0)
    return invert_counts(counts, k, r.pbar, r.p_minus_pbar)


def project_simplex(v: Any) -> np.ndarray:
    """Euclidean projection onto the probability simplex ``{x >= 0, sum x = 1}``.

    Wang and Carreira-Perpiñán (2013), Algorithm 1: sort ``u`` decreasingly, take the largest
    ``rho`` with ``u_rho + (1 - sum_{j<=rho} u_j) / rho > 0``, set
    ``lambda = (1 - sum_{j<=rho} u_j) / rho`` and return ``max(v + lambda, 0)``. ``O(k log k)``.

    Args:
        v: Finite real vector (1-D), or a 2-D array whose rows are projected independently.

    Returns:
        The projection, same shape, non-negative, rows summing to 1 (up to rounding).

    Raises:
        ParameterError: If ``v`` is empty, not 1-D/2-D, or has NaN/inf entries.

    Example:
        >>> project_simplex([0.5, 0.7, -0.2]).round(12).tolist()
        [0.4, 0.6, 0.0]
    """
    x = check_real_array("v", v)
    if x.ndim not in (1, 2) or x.shape[-1] == 0:
        raise ParameterError(f"v must be a non-empty 1-D vector or 2-D array of rows, got shape {x.shape}")
    x2 = np.atleast_2d(x)
    u = -np.sort(-x2, axis=1)
    css = np.cumsum(u, axis=1)
    j = np.arange(1, x2.shape[1] + 1)
    cond = u + (1.0 - css) / j > 0
    rho = x2.shape[1] - np.argmax(cond[:, ::-1], axis=1)  # largest j with cond true (j=1 always is)
    lam = (1.0 - css[np.arange(x2.shape[0]), rho - 1]) / rho
    out = np.maximum(x2 + lam[:, None], 0.0)
    return out[0] if x.ndim == 1 else out


def total_variation(p: Any, q: Any) -> np.ndarray | float:
    """Total variation distance ``0.5 * sum_y |p_y - q_y|`` (along the last axis).

    Defined here for any finite real vectors of equal length, so that an unprojected estimate
    (e.g. a Gaussian-noised histogram divided by ``n``) can be scored as in Biswas, Jung,
    Palamidessi, eqs. (8)-(9); for probability vectors it is the usual TV distance in ``[0, 1]``.

    Args:
        p: Finite real array.
        q: Finite real array of the same shape (or broadcastable along leading axes).

    Returns:
        A float for 1-D inputs, else an array over the leading axes.

    Raises:
        ParameterError: If an input has NaN/inf entries or the last axes differ.

    Example:
        >>> total_variation([0.5, 0.5, 0.0], [0.25, 0.25, 0.5])
        0.5
    """
    a = check_real_array("p", p)
    b = check_real_array("q", q)
    if a.ndim == 0 or b.ndim == 0 or a.shape[-1] != b.shape[-1]:
        raise ParameterError(f"p and q must be vectors of equal length, got shapes {a.shape} and {b.shape}")
    try:
        tv = 0.5 * np.abs(a - b).sum(axis=-1)
    except ValueError:
        raise ParameterError(f"p and q shapes {a.shape} and {b.shape} do not broadcast") from None
    return float(tv) if tv.ndim == 0 else tv
