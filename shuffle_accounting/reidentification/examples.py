"""The worked examples of Su, Cheng, Wang, Sec. IV-C (exact values and the paper's approximation).

*Bayesian Advantage of Re-Identification Attack in the Shuffle Model*:

* Example IV.1: ``P(x) = x + 1/2`` vs ``Q = Uniform[0, 1]``; the likelihood ratio under ``Q`` is
  ``Uniform[1/2, 3/2]`` and ``beta_n^k = ((3n + 2) k - k^2) / (2 n (n + 1))``.
* Example IV.2 (honeywords): ``P = Zipf(alpha)`` on ``[m]`` vs ``Q = Uniform([m])``. The exact
  value is Theorem 4 (:func:`zipf_uniform_success`); the paper's Riemann-sum/Beta-function
  approximation ``(1 - alpha) B(1 - alpha, n)`` (k guesses: ``sum_{j<=k} (1 - alpha) C(n-1, j-1)
  B(j - alpha, n + 1 - j)``) is the ``m -> inf`` limit (:func:`zipf_beta_approximation`).

The paper's numerical claims for ``alpha = 0.7`` ("``beta_n < 0.2`` only once ``n >= 150``" and
"``beta_20^3 > 0.5``") hold for the Beta-function limit, not for small password spaces: with
``m = 1000`` exactly, ``beta_n < 0.2`` already from ``n = 50``, and ``beta_20^3 > 0.5`` needs
``m >= 1207`` (:func:`zipf_claims` computes both for any ``m``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import betaln, gammaln

from .._validation import check_int, check_real
from .basic import success_core

__all__ = [
    "example_iv1_success",
    "zipf_distribution",
    "zipf_uniform_success",
    "zipf_beta_approximation",
    "ZipfClaims",
    "zipf_claims",
]


def example_iv1_success(n: Any, guesses: Any = 1) -> float:
    """Closed form of Example IV.1: ``beta_n^k = ((3n + 2) k - k^2) / (2 n (n + 1))``.

    ``P(x) = x + 1/2`` and ``Q = Uniform[0, 1]`` on ``[0, 1]`` (Su, Cheng, Wang, Example IV.1;
    ``k = 1``: ``1.5/n - 1/(n (n + 1))``).

    Args:
        n: Number of samples, integer >= 1.
        guesses: Number of guesses ``k`` in ``[1, n]``.

    Returns:
        ``beta_n^k``.

    Raises:
        ParameterError: On invalid ``n`` or ``guesses``.

    Example:
        >>> round(example_iv1_success(20), 10)
        0.0726190476
    """
    n = check_int("n", n, minimum=1, maximum=2**53)
    k = check_int("guesses", guesses, minimum=1, maximum=n)
    return ((3 * n + 2) * k - k * k) / (2 * n * (n + 1))


def zipf_distribution(m: Any, alpha: Any) -> np.ndarray:
    """``P(r) = r^-alpha / sum_{i<=m} i^-alpha`` for ranks ``r = 1..m`` (Example IV.2).

    Args:
        m: Size of the password space, integer >= 1.
        alpha: Zipf exponent, finite and >= 0.

    Returns:
        The probability vector (length ``m``).

    Raises:
        ParameterError: On invalid ``m`` or ``alpha``.

    Example:
        >>> zipf_distribution(2, 1.0).round(6)
        array([0.666667, 0.333333])
    """
    m = check_int("m", m, minimum=1)
    alpha = check_real("alpha", alpha, low=0.0)
    logw = -alpha * np.log(np.arange(1, m + 1, dtype=float))
    w = np.exp(logw - logw.max())
    return w / w.sum()


def zipf_uniform_success(m: Any, alpha: Any, n: Any, guesses: Any = 1) -> float:
    """Exact ``beta_n^k(Zipf(alpha), Uniform([m]))`` (Example IV.2 via Theorem 4 / its k-guess form).

    Args:
        m: Size of the password space, integer >= 1.
        alpha: Zipf exponent, finite and >= 0.
        n: Number of candidates (1 real + ``n - 1`` honeywords), integer >= 1.
        guesses: Number of guesses ``k`` in ``[1, n]``.

    Returns:
        The exact success probability.

    Raises:
        ParameterError: On invalid inputs.

    Example:
        >>> round(zipf_uniform_success(1000, 0.7, 20), 6)
        0.296155
    """
    p = zipf_distribution(m, alpha)
    n = check_int("n", n, minimum=1, maximum=2**53)
    k = check_int("guesses", guesses, minimum=1, maximum=n)
    return success_core(p, np.full(p.size, 1.0 / p.size), n, k)


def zipf_beta_approximation(alpha: Any, n: Any, guesses: Any = 1) -> float:
    """The paper's ``m -> inf`` approximation ``sum_{j<=k} (1-alpha) C(n-1, j-1) B(j-alpha, n+1-j)``.

    Su, Cheng, Wang, Example IV.2 (``k = 1``: ``(1 - alpha) B(1 - alpha, n)``). This is an
    approximation (the limit of the exact value as the password space grows), not a bound: for
    finite ``m`` the exact :func:`zipf_uniform_success` can be smaller or larger.

    Args:
        alpha: Zipf exponent in ``(0, 1)``.
        n: Number of candidates, integer >= 1.
        guesses: Number of guesses ``k`` in ``[1, n]``.

    Returns:
        The approximate success probability.

    Raises:
        ParameterError: On invalid inputs.

    Example:
        >>> round(zipf_beta_approximation(0.7, 20), 6)
        0.367281
    """
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    n = check_int("n", n, minimum=1, maximum=2**53)
    k = check_int("guesses", guesses, minimum=1, maximum=n)
    j = np.arange(1, k + 1, dtype=float)
    log_c = gammaln(n) - gammaln(j) - gammaln(n - j + 1)
    terms = math.log1p(-alpha) + log_c + betaln(j - alpha, n + 1 - j)
    return float(np.exp(terms).sum())


@dataclass(frozen=True)
class ZipfClaims:
    """The two numerical claims of Example IV.2, evaluated for one password-space size.

    Attributes:
        m: Password-space size (``None``: the Beta-function limit).
        alpha: Zipf exponent.
        first_n_below: Smallest ``n`` with ``beta_n < threshold`` (paper: 150 for 0.2).
        beta_20_3: ``beta_20^3`` (paper: above 0.5).
    """

    m: int | None
    alpha: float
    first_n_below: int
    beta_20_3: float


def zipf_claims(m: Any = None, alpha: Any = 0.7, threshold: Any = 0.2, n_max: Any = 100_000) -> ZipfClaims:
    """Evaluate Example IV.2's claims exactly (finite ``m``) or for the Beta limit (``m=None``).

    ``beta_n`` is non-increasing in ``n`` (an adversary facing ``n`` samples can insert a fresh
    ``Q`` sample at a random position and run an ``(n + 1)``-sample adversary), so the first ``n``
    below ``threshold`` is found by doubling and bisection.

    Args:
        m: Password-space size (integer >= 1) or ``None`` for the paper's Beta-function limit.
        alpha: Zipf exponent in ``(0, 1)``.
        threshold: Success level in ``(0, 1)`` (paper: 0.2).
        n_max: Largest ``n`` searched.

    Returns:
        A :class:`ZipfClaims`.

    Raises:
        ParameterError: On invalid inputs or if no ``n <= n_max`` goes below ``threshold``.

    Example:
        >>> zipf_claims().first_n_below, zipf_claims(1000).first_n_below
        (150, 50)
    """
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    threshold = check_real("threshold", threshold, low=0.0, high=1.0, low_open=True, high_open=True)
    n_max = check_int("n_max", n_max, minimum=20)
    if m is None:

        def beta(n: int, k: int = 1) -> float:
            return zipf_beta_approximation(alpha, n, k)
    else:
        m = check_int("m", m, minimum=1)
        p = zipf_distribution(m, alpha)
        q = np.full(m, 1.0 / m)

        def beta(n: int, k: int = 1) -> float:
            return success_core(p, q, n, k)

    if beta(n_max) >= threshold:
        from .._validation import ParameterError

        raise ParameterError(f"n_max must be large enough for beta_n < threshold = {threshold}, got {n_max}")
    lo, hi = 1, 1
    while beta(hi) >= threshold:
        lo, hi = hi, min(2 * hi, n_max)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if beta(mid) >= threshold:
            lo = mid
        else:
            hi = mid
    first = hi if beta(lo) >= threshold else lo
    return ZipfClaims(m=m, alpha=alpha, first_n_below=first, beta_20_3=beta(20, 3))
