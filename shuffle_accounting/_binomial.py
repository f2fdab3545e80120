"""Binomial numerics shared by the certified engines (internal numerics layer).

One home for the log-space binomial helpers that the privacy-blanket evaluators
(:mod:`shuffle_accounting.shuffled_krr.blanket`, :mod:`~shuffle_accounting.shuffled_krr.blanket_fast`),
the k = 2 worst case (:mod:`~shuffle_accounting.shuffled_krr.worst_case`) and the exhibited lower
bounds (:mod:`~shuffle_accounting.shuffled_krr.lower`) use:

* :func:`stirlerr`, :func:`bd0` — Loader's two helpers;
* :func:`log_poisson_pmf` — the Poisson log-pmf in the same form (used by
  :mod:`shuffle_accounting.qif.vulnerability`);
* :func:`log_binom_pmf` — Loader's saddle-point form (C. Loader, *Fast and accurate computation of
  binomial probabilities*, 2000), relative error ~1e-13 for every ``n``;
* :func:`log_binom_cdf` / :func:`log_binom_sf` — **upper bounds** (relative excess <= 1e-13) on the
  binomial CDF / survival function: the regularised incomplete beta function where the value is
  above 1e-200, the rigorous pmf-ratio series with a bounded remainder below it;
* :func:`log_lower_tail_series` — that series;
* :func:`logsumexp` — a light 1-d ``log(sum(exp(a)))`` for hot paths;
* :func:`log_binom_chernoff` — the Chernoff tail bound ``exp(-N KL(k/N || pi))``, rounded up;
* :func:`binom_window_range` — the concentration window ``mean +- z sd`` of a binomial, widened
  until a rigorous bound on the mass outside it is small enough (one loop for the k = 2 worst case
  and the k = 3 grids; Chernoff or the exact tails above; ``tight=True`` starts from the Chernoff
  edges themselves, by Newton steps on ``N KL(k/N || pi)``).

Accounting code only: no randomness, no presentation imports.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import betainc, gammaln

__all__ = [
    "logsumexp",
    "stirlerr",
    "bd0",
    "log_binom_pmf",
    "log_poisson_pmf",
    "log_binom_cdf",
    "log_binom_sf",
    "log_lower_tail_series",
    "log_binom_chernoff",
    "binom_window_range",
]

_LOG_2PI = math.log(2.0 * math.pi)


def logsumexp(a) -> float:
    """``log(sum(exp(a)))`` of a 1-d array-like (``-inf`` if empty or all ``-inf``).

    A light replacement for ``scipy.special.logsumexp`` on the hot path (same accuracy: the
    maximum is factored out, so the sum of the scaled terms lies in ``[1, size]``).
    """
    x = np.asarray(a, dtype=float).ravel()
    if x.size == 0:
        return -math.inf
    m = float(np.max(x))
    if m == -math.inf or m == math.inf:
        return m
    with np.errstate(under="ignore"):
        return m + math.log(float(np.sum(np.exp(x - m))))


# ---------------------------------------------------------------------------------------------
# Accurate log binomial pmf (Loader, "Fast and accurate computation of binomial probabilities").
# ---------------------------------------------------------------------------------------------

_SFE = None  # lazily built table of stirlerr(0..15)


def stirlerr(x: np.ndarray | float) -> np.ndarray:
    """``log(x!) - log(sqrt(2 pi x) (x/e)^x)`` for integer-valued ``x >= 0`` (0 at ``x = 0``).

    Table for ``x <= 15``, Stirling's series (5 terms, error below 1e-16 relative) above.

    Example:
        >>> abs(float(stirlerr(20.0)) - 1 / 240) < 1e-6  # ~ 1/(12 x)
        True
        >>> float(stirlerr(0.0))
        0.0
    """
    global _SFE
    if _SFE is None:
        m = np.arange(16, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = gammaln(m + 1.0) - (m + 0.5) * np.log(m) + m - 0.5 * _LOG_2PI
        t[0] = 0.0
        _SFE = t
    x = np.asarray(x, dtype=float)
    xs = np.maximum(x, 16.0)
    x2 = xs * xs
    s0, s1, s2, s3, s4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
    big = (s0 - (s1 - (s2 - (s3 - s4 / x2) / x2) / x2) / x2) / xs
    return np.where(x <= 15, _SFE[np.clip(x, 0, 15).astype(np.int64)], big)


def bd0(x: np.ndarray | float, m: np.ndarray | float) -> np.ndarray:
    """``x log(x/m) + m - x`` without cancellation (``x > 0``, ``m > 0``; arrays broadcast).

    A series in ``v = (x - m) / (x + m)`` where ``|v| < 0.1``, the direct formula elsewhere.

    Example:
        >>> float(bd0(3.0, 3.0)), round(float(bd0(2.0, 1.0)), 12)
        (0.0, 0.38629436112)
    """
    x = np.asarray(x, float)
    m = np.asarray(m, float)
    d = x - m
    v = d / (x + m)
    close = np.abs(v) < 0.1
    vc = np.where(close, v, 0.0)
    s = d * vc
    ej = 2.0 * x * vc
    v2 = vc * vc
    for j in range(1, 10):  # |v| < 0.1: each step gains two decimal digits
        ej = ej * v2
        s = s + ej / (2 * j + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        far = x * np.log(x / m) - d
    return np.where(close, s, far)


def log_binom_pmf(x, n, log_p: float, log_q: float) -> np.ndarray:
    """log P(Bin(n, p) = x), elementwise; ``-inf`` outside ``0..n``. ``q = 1 - p``, ``0 < p < 1``.

    Loader's saddle-point form ``stirlerr(n) - stirlerr(x) - stirlerr(n-x) - bd0(x, np) -
    bd0(n-x, nq) - log(2 pi x (n-x) / n) / 2``: relative error ~1e-13 for every ``n``.
    """
    x, n = np.broadcast_arrays(np.asarray(x, float), np.asarray(n, float))
    mid = (x > 0) & (x < n)
    xm = np.where(mid, x, 1.0)
    nm = np.where(mid, n, 2.0)
    p, q = math.exp(log_p), math.exp(log_q)
    lc = stirlerr(nm) - stirlerr(xm) - stirlerr(nm - xm) - bd0(xm, nm * p) - bd0(nm - xm, nm * q)
    lf = _LOG_2PI + np.log(xm) + np.log1p(-xm / nm)
    out = np.where(mid, lc - 0.5 * lf, -np.inf)
    out = np.where((x == 0) & (n >= 0), n * log_q, out)
    out = np.where((x == n) & (n > 0), n * log_p, out)
    return out


def log_poisson_pmf(x, mu: float) -> np.ndarray:
    """log Poisson(mu) pmf at integers ``x >= 0``, accurate for large ``x`` and ``mu`` (Loader's form).

    ``-(log(2 pi x))/2 - stirlerr(x) - bd0(x, mu)`` for ``x >= 1`` and ``-mu`` at ``x = 0``.

    Example:
        >>> import math
        >>> round(float(log_poisson_pmf(3.0, 2.0)), 12) == round(3 * math.log(2.0) - 2.0 - math.log(6.0), 12)
        True
    """
    x = np.asarray(x, dtype=float)
    pos = x >= 1
    xp = np.where(pos, x, 1.0)
    val = -0.5 * (_LOG_2PI + np.log(xp)) - stirlerr(xp) - bd0(xp, mu)
    return np.where(pos, val, -mu)


def log_binom_cdf(b, n, q: float) -> np.ndarray:
    """Upper bound (relative excess <= 1e-13) on log P(Bin(n, q) <= b), elementwise.

    Uses the regularised incomplete beta function where the value is above 1e-200 and, in the
    underflowing lower tail, ``pmf(b) * sum_i prod_j r(b - j)`` with the ratios
    ``r(x) = pmf(x-1)/pmf(x)`` (decreasing as ``x`` decreases) summed until the geometric bound
    on the remainder is below 1e-14 of the sum; the remainder bound is added.
    """
    return _log_cdf(
        b, n, q, 1.0 - q, math.log(q) if q > 0 else -math.inf, math.log1p(-q) if q < 1 else -math.inf
    )


def _log_cdf(b, n, q: float, qc: float, log_q: float, log_qc: float) -> np.ndarray:
    """:func:`log_binom_cdf` with the complement ``qc = 1 - q`` and both logs given by the caller.

    The mirror :func:`log_binom_sf` passes its ``q`` as ``qc`` exactly: forming ``1 - q`` there
    would round a tiny ``q`` away (``1 - 1e-17 == 1``) and the tail would come back as ``-inf``.
    Only ``qc``, ``log_q`` and ``log_qc`` enter the computation (``q`` is not used).
    """
    b, n = np.broadcast_arrays(np.asarray(b, float), np.asarray(n, float))
    out = np.full(b.shape, -np.inf)
    if qc >= 1.0:  # q = 0: the count is 0
        out[b >= 0] = 0.0
        return out
    if qc <= 0.0:  # q = 1: the count is n
        out[b >= n] = 0.0
        return out
    out[b >= n] = 0.0
    mid = (b >= 0) & (b < n)
    if not np.any(mid):
        return out
    bm, nm = b[mid], n[mid]
    with np.errstate(divide="ignore"):
        val = betainc(nm - bm, bm + 1.0, qc)
        res = np.log(val)
    # below 1e-200 scipy's betainc is not trusted: its power prefix x^a (1-x)^b can be subnormal
    # while the result is not, e.g. P(Bin(359, 0.897) <= 36) = exp(-623.823684) came back as
    # exp(-623.824371) (0.07 % low, which made the certified delta 1.3 % too small at k = 20,
    # eps0 = 1.1183, n = 592, eps = 1.0232). Such values lie in the lower tail, where the series
    # below converges geometrically and is rigorous.
    bad = ~(val > 1e-200)
    if np.any(bad):
        res[bad] = _lower_tail_series(bm[bad], nm[bad], log_q, log_qc)
    out[mid] = res
    return out


def log_lower_tail_series(b: np.ndarray, n: np.ndarray, q: float) -> np.ndarray:
    """Upper bound on log P(Bin(n, q) <= b) by summing pmf ratios (for deep lower tails)."""
    return _lower_tail_series(b, n, math.log(q), math.log1p(-q))


def _lower_tail_series(b: np.ndarray, n: np.ndarray, log_q: float, log_1q: float) -> np.ndarray:
    """:func:`log_lower_tail_series` from ``log q`` and ``log(1 - q)`` (both given exactly)."""
    base = log_binom_pmf(b, n, log_q, log_1q)
    total = np.ones_like(b)
    term = np.ones_like(b)
    x = b.copy()
    active = np.ones(b.shape, dtype=bool)
    ratio_q = math.exp(log_1q - log_q)  # (1 - q) / q
    for _ in range(200000):
        idx = np.nonzero(active)[0]
        if idx.size == 0:
            break
        xi = x[idx]
        r = xi * ratio_q / (n[idx] - xi + 1.0)  # pmf(x-1)/pmf(x); 0 when x == 0
        t = term[idx] * r
        term[idx] = t
        total[idx] += t
        x[idx] = xi - 1.0
        r_next = np.where(xi - 1.0 > 0, (xi - 1.0) * ratio_q / (n[idx] - xi + 2.0), 0.0)
        with np.errstate(divide="ignore"):
            rem = np.where(r_next < 1.0, t * r_next / (1.0 - r_next), np.inf)
        done = (rem <= 1e-14 * total[idx]) | (xi - 1.0 <= 0)
        total[idx[done]] += rem[done] * (xi[done] - 1.0 > 0)
        active[idx[done]] = False
    else:  # pragma: no cover - only for astronomically wide tails
        idx = np.nonzero(active)[0]
        r = np.minimum(x[idx] * ratio_q / (n[idx] - x[idx] + 1.0), 1.0 - 1e-16)
        total[idx] += term[idx] * r / (1.0 - r)
    return base + np.log(total)


def log_binom_sf(j, n, q: float) -> np.ndarray:
    """Upper bound on log P(Bin(n, q) >= j) (through the mirrored lower tail).

    ``P(Bin(n, q) >= j) = P(Bin(n, 1 - q) <= n - j)``, evaluated with ``q`` itself as the
    mirror's complement probability (never the rounded ``1 - (1 - q)``), so a tiny ``q`` keeps
    its digits: ``log_binom_sf(1, 5, 1e-17)`` is ``log(5e-17)``, not ``-inf``.

    Example:
        >>> round(float(log_binom_sf(1, 5, 1e-17)), 4)
        -37.5345
    """
    j, n = np.broadcast_arrays(np.asarray(j, float), np.asarray(n, float))
    log_q = math.log(q) if q > 0 else -math.inf
    log_1q = math.log1p(-q) if q < 1 else -math.inf
    return _log_cdf(n - j, n, 1.0 - q, q, log_1q, log_q)


def log_binom_chernoff(k: int, N: int, log_pi: float, log_1mpi: float) -> float:
    """Upper bound on ``log P(X <= k)`` (``k < N pi``) or ``log P(X >= k)`` (``k > N pi``), ``X ~ Bin(N, pi)``.

    Chernoff: ``P <= exp(-N KL(k/N || pi))``. The KL terms are computed with a rounding margin of
    ``16 u`` of their magnitudes, so the returned value is an upper bound. ``pi`` is given in logs
    (``log_pi``, ``log_1mpi = log(1 - pi)``).

    Example:
        >>> import math
        >>> b = log_binom_chernoff(10, 100, math.log(0.5), math.log(0.5))
        >>> bool(float(log_binom_cdf(10, 100, 0.5)) <= b < 0)
        True
    """
    u2 = 2.0 * 2.0**-53
    a = k / N
    t1 = a * (math.log(a) - log_pi) if a > 0 else 0.0
    t2 = (1.0 - a) * (math.log1p(-a) - log_1mpi) if a < 1 else 0.0
    mag = (a * (abs(math.log(a)) + abs(log_pi)) if a > 0 else 0.0) + (
        (1.0 - a) * (abs(math.log1p(-a)) + abs(log_1mpi)) if a < 1 else 0.0
    )
    kl = max(0.0, t1 + t2 - 16.0 * u2 * (mag + 1.0))
    return -N * kl * (1.0 - 4.0 * u2)


def _chernoff_edge(N: int, log_pi: float, log_1mpi: float, target: float, sign: int) -> float:
    """Real ``k`` on the side ``sign`` (``-1`` below, ``+1`` above) of the mean ``N pi`` where
    ``N KL(k/N || pi) = target``, by Newton steps from the Gaussian edge (a guess only: callers
    check the tail bound at the integer window they take; ``nan`` if the steps fail)."""
    pi = math.exp(log_pi)
    mean, sd = N * pi, math.sqrt(N * pi * (1.0 - pi))
    k = mean + sign * math.sqrt(2.0 * target) * sd
    for _ in range(12):
        a = min(max(k / N, 1e-300), 1.0 - 1e-16)
        kl = a * (math.log(a) - log_pi) + (1.0 - a) * (math.log1p(-a) - log_1mpi)
        slope = math.log(a) - log_pi - math.log1p(-a) + log_1mpi  # d KL / d a
        if slope == 0.0 or not math.isfinite(slope):
            break
        step = (N * kl - target) / slope
        new = max(k - step, mean) if sign > 0 else min(k - step, mean)
        if new > N or new < 0:  # past the support: halve the way to its end instead
            new = 0.5 * (k + (N if sign > 0 else 0.0))
        k, moved = new, abs(new - k)
        if moved < 0.25:
            break
    return k if math.isfinite(k) else math.nan


def binom_window_range(
    N: int, log_pi: float, log_1mpi: float, log_tol: float, *, chernoff: bool = False, tight: bool = False
) -> tuple[int, int, float]:
    """Concentration window ``[lo, hi]`` of ``Bin(N, pi)`` and a bound on the log mass outside it.

    The window is ``mean +- z sd`` (plus 2), ``z`` starting at ``max(8, sqrt(2 |log_tol|) + 2)`` and
    growing x1.5 until the bound on the outside mass is ``<= log_tol`` (or the window is all of
    ``[0, N]``). The bound is the sum of the two tails' upper bounds: Chernoff
    (:func:`log_binom_chernoff`, cheap) with ``chernoff=True``, else the upper-bounding tails
    :func:`log_binom_cdf` / :func:`log_binom_sf` doubled. Requires ``pi <= 1/2``
    (``log_pi <= log_1mpi``; callers reflect ``N - Bin(N, 1 - pi)`` otherwise) and ``N >= 1``.

    Args:
        N: Number of trials, ``>= 1``.
        log_pi: ``log pi``.
        log_1mpi: ``log(1 - pi)``, ``>= log_pi``.
        log_tol: Target log bound on the outside mass.
        chernoff: Chernoff tails (keyword only) instead of the exact ones doubled.
        tight: With ``chernoff`` (keyword only): start from the window whose two Chernoff tails are
            each about ``log_tol - log 2`` (the edges where ``N KL(k/N || pi) = log 2 - log_tol``,
            by Newton steps; the tails start just past them), widened by ``0.05 sd`` steps until the checked
            bound holds; about 17 % narrower than the ``z`` rule at ``log_tol ~ -40``. The
            returned bound is the same rigorous sum of Chernoff tails, checked at the returned
            window, so the guarantee is unchanged.

    Returns:
        ``(lo, hi, log_outside)``: the window (inclusive) and the log upper bound on
        ``P(X < lo) + P(X > hi)`` (``-inf`` when the window is everything).

    Example:
        >>> import math
        >>> lo, hi, lt = binom_window_range(1000, math.log(0.1), math.log(0.9), -40.0)
        >>> lo < 100 < hi, lt <= -40.0
        (True, True)
    """
    pi = math.exp(log_pi)
    mean, sd = N * pi, math.sqrt(N * pi * (1.0 - pi))
    if tight and chernoff and log_tol < -math.log(2.0):
        target = math.log(2.0) - log_tol
        k_lo = _chernoff_edge(N, log_pi, log_1mpi, target, -1)
        k_hi = _chernoff_edge(N, log_pi, log_1mpi, target, 1)
        if k_lo < 1.0:  # no lower tail: the upper one may take the whole budget
            k_hi = _chernoff_edge(N, log_pi, log_1mpi, -log_tol, 1)
        elif k_hi > N - 1.0:
            k_lo = _chernoff_edge(N, log_pi, log_1mpi, -log_tol, -1)
        if math.isfinite(k_lo) and math.isfinite(k_hi):
            # the tails checked are P(X <= lo - 1) and P(X >= hi + 1): edges just past the window
            lo = max(0, min(int(math.floor(k_lo)) + 1, int(math.floor(mean))))
            hi = min(N, max(int(math.ceil(k_hi)) - 1, int(math.ceil(mean))))
            step = max(1, int(0.05 * sd))
            while True:
                tails = []
                if lo > 0:
                    tails.append(log_binom_chernoff(lo - 1, N, log_pi, log_1mpi))
                if hi < N:
                    tails.append(log_binom_chernoff(hi + 1, N, log_pi, log_1mpi))
                if tails:  # the two tails' sum (max factored out, as in logsumexp)
                    top = max(tails)
                    ltail = top + math.log(sum(math.exp(t - top) for t in tails)) if top > -math.inf else top
                else:
                    ltail = -math.inf
                if ltail <= log_tol or (lo == 0 and hi == N):
                    return lo, hi, ltail
                lo, hi = max(0, lo - step), min(N, hi + step)
    z = max(8.0, math.sqrt(2.0 * max(0.0, -log_tol)) + 2.0)
    while True:
        lo = max(0, int(math.floor(mean - z * sd)) - 2)
        hi = min(N, int(math.ceil(mean + z * sd)) + 2)
        tails = []
        if chernoff:
            if lo > 0:
                tails.append(log_binom_chernoff(lo - 1, N, log_pi, log_1mpi))
            if hi < N:
                tails.append(log_binom_chernoff(hi + 1, N, log_pi, log_1mpi))
            ltail = float(logsumexp(tails)) if tails else -math.inf
        else:
            if lo > 0:
                tails.append(float(log_binom_cdf(lo - 1, N, pi)))
            if hi < N:
                tails.append(float(log_binom_sf(hi + 1, N, pi)))
            ltail = float(logsumexp(tails)) + math.log(2.0) if tails else -math.inf
        if ltail <= log_tol or (lo == 0 and hi == N):
            return lo, hi, ltail
        z *= 1.5
