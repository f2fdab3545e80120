"""Feldman, McMillan, Talwar, *Hiding Among the Clones: A Simple and Nearly Optimal Analysis of
Privacy Amplification by Shuffling* (FOCS 2021; arXiv:2012.12803).

Two bounds for ``n`` shuffled reports of any ``eps0``-LDP randomizer (neighbouring = replace one
user's input):

* the closed form of their Theorem 3.1 (:func:`fmt2021_closed_form_epsilon` /
  :func:`fmt2021_closed_form_delta`);
* the *numerical clone bound* (their Section 3 reduction, Lemma 3.3 and Theorem 3.2): the shuffled
  output is post-processing of the pair ``P``/``Q`` below, so ``delta(eps) <= D_{e^eps}(P || Q)``.
  We compute that hockey-stick divergence exactly in log space with rigorous truncation bounds
  (:func:`fmt2021_clone_delta`), not with the bisection bracket of the authors' reference code.

The clone pair, with ``alpha = e^eps0 / (e^eps0 + 1)`` and a clone probability ``q``::

    C ~ Bin(n - 1, q),   A | C ~ Bin(C, 1/2),
    P = (A + 1, C - A) w.p. alpha,      (A, C - A + 1) w.p. 1 - alpha,
    Q = (A + 1, C - A) w.p. 1 - alpha,  (A, C - A + 1) w.p. alpha.

FMT 2021 use the generic ``q = e^-eps0`` (each other user is a clone of ``x0`` or ``x1`` with
probability ``e^-eps0 / 2`` each, their Lemma 3.3). :mod:`.feldman2023` reuses the same engine with
the larger k-RR clone probability.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import betainc, gammaln, logsumexp

from .._validation import check_real

from ._common import BoundNotApplicable, _delta, _eps, _eps0, _n, log_clip_to_prob, smallest_eps

__all__ = [
    "fmt2021_closed_form_epsilon",
    "fmt2021_closed_form_delta",
    "fmt2021_clone_delta",
    "fmt2021_clone_epsilon",
    "clone_pair_delta",
    "clone_pair_epsilon",
]

_U = 2.0**-52  # unit roundoff of float64


# --------------------------------------------------------------------------- closed form


def _fmt_closed_condition(name: str, eps0: float, n: int, delta: float, q: float) -> None:
    # n q >= 16 log(2/delta); for q = e^-eps0 this is eps0 <= log(n / (16 log(2/delta))).
    need = 16.0 * math.log(2.0 / delta)
    if n * q < need:
        raise BoundNotApplicable(
            f"{name} requires n * q >= 16 log(2/delta) (q = clone probability; for FMT 2021 q = "
            f"e^-eps0, i.e. eps0 <= log(n / (16 log(2/delta)))), got n = {n}, eps0 = {eps0}, "
            f"delta = {delta}, n * q = {n * q:.6g} < {need:.6g}"
        )


def _closed_eps(eps0: float, n: int, delta: float, q: float, name: str) -> float:
    _fmt_closed_condition(name, eps0, n, delta, q)
    shrink = math.tanh(eps0 / 2.0)  # (e^eps0 - 1) / (e^eps0 + 1)
    inner = 8.0 * math.sqrt(math.log(4.0 / delta) / (q * n)) + 8.0 / (q * n)
    return math.log1p(shrink * inner)


def _closed_delta(eps: float, eps0: float, n: int, q: float, name: str) -> float:
    shrink = math.tanh(eps0 / 2.0)
    x = math.expm1(eps) / shrink - 8.0 / (q * n)  # = 8 sqrt(log(4/delta) / (q n))
    if x <= 0.0:
        raise BoundNotApplicable(
            f"{name}: eps = {eps} is below the additive term of the closed form "
            f"(needs (e^eps - 1)(e^eps0 + 1)/(e^eps0 - 1) > 8/(q n) = {8.0 / (q * n):.6g})"
        )
    log4_over_delta = q * n * (x / 8.0) ** 2
    log_delta = math.log(4.0) - log4_over_delta
    delta = log_clip_to_prob(log_delta)
    if delta < 1.0:
        _fmt_closed_condition(name, eps0, n, delta, q)
    return delta


def fmt2021_closed_form_epsilon(eps0: float, n: int, delta: float) -> float:
    """Closed-form amplification bound of FMT 2021, Theorem 3.1.

    ``eps = log(1 + (e^eps0 - 1)/(e^eps0 + 1) * (8 sqrt(e^eps0 log(4/delta) / n) + 8 e^eps0 / n))``,
    valid for any ``eps0``-LDP randomizer when ``eps0 <= log(n / (16 log(2/delta)))``.

    Args:
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.
        delta: Target delta in (0, 1).

    Returns:
        An upper bound on the shuffled epsilon at ``delta``.

    Raises:
        ParameterError: On invalid numbers.
        BoundNotApplicable: If ``eps0 > log(n / (16 log(2/delta)))``.

    Example:
        >>> round(fmt2021_closed_form_epsilon(eps0=4.0, n=100_000, delta=1e-6), 4)
        0.5346
    """
    eps0, n, delta = _eps0(eps0), _n(n), _delta(delta)
    return _closed_eps(eps0, n, delta, math.exp(-eps0), "FMT 2021 Theorem 3.1")


def fmt2021_closed_form_delta(eps: float, eps0: float, n: int) -> float:
    """FMT 2021, Theorem 3.1 solved for delta (a direct inversion of the closed form).

    ``delta = 4 exp(-(n e^-eps0 / 64) ((e^eps - 1)(e^eps0 + 1)/(e^eps0 - 1) - 8 e^eps0 / n)^2)``,
    capped at 1 (trivially valid); the theorem's condition is checked at the resulting delta.

    Args:
        eps: Target epsilon, finite and >= 0.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.

    Returns:
        An upper bound on delta at ``eps``.

    Raises:
        ParameterError: On invalid numbers.
        BoundNotApplicable: If ``eps`` is below the closed form's additive term or the resulting
            delta violates ``eps0 <= log(n / (16 log(2/delta)))``.

    Example:
        >>> d = fmt2021_closed_form_delta(0.5346, eps0=4.0, n=100_000)
        >>> 9e-7 < d < 1.1e-6
        True
    """
    eps, eps0, n = _eps(eps), _eps0(eps0), _n(n)
    return _closed_delta(eps, eps0, n, math.exp(-eps0), "FMT 2021 Theorem 3.1")


# --------------------------------------------------------------------------- clone pair (exact)


def _log_binom_pmf(n, k, logp, log1mp):
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    g = (gammaln(n + 1.0), gammaln(k + 1.0), gammaln(n - k + 1.0))
    val = g[0] - g[1] - g[2] + k * logp + (n - k) * log1mp
    # floating-point allowance: a few ulps of every magnitude that entered the sum
    mag = np.abs(g[0]) + np.abs(g[1]) + np.abs(g[2]) + np.abs(k * logp) + np.abs((n - k) * log1mp)
    return val, 16.0 * _U * mag + 1e-15


def _kl(a: np.ndarray, q: float) -> np.ndarray:
    """KL(Bern(a) || Bern(q)), with 0 log 0 = 0."""
    a = np.asarray(a, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(a > 0, a * (np.log(a) - math.log(q)), 0.0)
        t2 = np.where(a < 1, (1 - a) * (np.log1p(-a) - math.log1p(-q)), 0.0)
    return t1 + t2


def _binom_window(m: int, q: float, log_tol: float) -> tuple[int, int, float]:
    """[lo, hi] with P[Bin(m, q) outside] <= exp(log_tail) (Chernoff-KL bound); returns log_tail."""
    if m == 0:
        return 0, 0, -math.inf
    mean = m * q
    sd = math.sqrt(max(m * q * (1 - q), 1e-300))
    z = np.arange(0.0, 60.0, 0.25)
    hi_c = np.minimum(np.ceil(mean + z * sd), m)
    lo_c = np.maximum(np.floor(mean - z * sd), 0)
    # P[X >= hi+1] <= exp(-m KL((hi+1)/m || q)), P[X <= lo-1] <= exp(-m KL((lo-1)/m || q))
    up = np.where(hi_c >= m, -np.inf, -m * _kl(np.minimum((hi_c + 1) / m, 1.0), q))
    dn = np.where(lo_c <= 0, -np.inf, -m * _kl(np.maximum((lo_c - 1) / m, 0.0), q))
    log_tail = np.logaddexp(up, dn)
    ok = np.nonzero(log_tail <= log_tol)[0]
    i = int(ok[0]) if ok.size else len(z) - 1
    return int(lo_c[i]), int(hi_c[i]), float(log_tail[i])


def _clone_setup(eps: float, eps0: float):
    alpha = 1.0 / (1.0 + math.exp(-eps0))  # e^eps0 / (e^eps0 + 1)
    beta = 1.0 - alpha
    ee = math.exp(eps) if eps < 700 else math.inf
    k1 = alpha - ee * beta  # coefficient of B(a - 1)
    k2 = ee * alpha - beta  # coefficient of B(a)
    return alpha, k1, k2


def _approx_clone_delta(eps: float, eps0: float, n: int, q: float, log_tol: float = -690.0) -> float:
    """Fast O(sqrt n) evaluation through regularised incomplete betas (used only to aim the root
    finder; every returned epsilon is verified with :func:`clone_pair_delta`)."""
    _, k1, k2 = _clone_setup(eps, eps0)
    if eps >= eps0 or k1 <= 0.0:
        return 0.0
    lo, hi, log_tail = _binom_window(n - 1, q, log_tol)
    c = np.arange(lo, hi + 1, dtype=float)
    logw, _ = _log_binom_pmf(n - 1, c, math.log(q), math.log1p(-q))
    r = k2 / k1
    a0 = np.floor(r * (c + 1) / (1 + r)) + 1

    def sf(j):  # P[Bin(c, 1/2) >= j]
        jj = np.clip(j, 1, None)
        val = betainc(jj, np.maximum(c - jj + 1, 1e-300), 0.5)
        return np.where(j <= 0, 1.0, np.where(j > c, 0.0, val))

    inner = np.maximum(k1 * sf(a0 - 1) - k2 * sf(a0), 0.0)
    return float(np.sum(np.exp(logw) * inner) + math.exp(log_tail))


def clone_pair_delta(eps: float, eps0: float, n: int, clone_prob: float, *, rel_tol: float = 1e-6) -> float:
    """Certified upper bound on ``D_{e^eps}(P || Q)`` for the clone pair with clone probability ``q``.

    ``D(P||Q) = sum_c Bin(n-1, q)(c) sum_{a >= a0(c)} [kappa1 B_c(a-1) - kappa2 B_c(a)]`` with
    ``B_c = Bin(c, 1/2)``, ``kappa1 = alpha - e^eps (1 - alpha)``, ``kappa2 = e^eps alpha - (1 - alpha)``
    and ``a0(c)`` the first ``a`` whose term is positive (the likelihood ratio ``P/Q`` is increasing
    in ``a / (c + 1 - a)``). The pair is symmetric (``a -> c + 1 - a`` swaps ``P`` and ``Q``), so
    ``D(Q||P) = D(P||Q)``. Every term is computed in log space (``log B_c(a)`` by exact ratio
    recursion from one log-gamma evaluation per ``c``); added back are: the Chernoff-KL bound on the
    ``Bin(n-1, q)`` mass outside the summed window (each inner sum is <= 1), the Chernoff bound
    ``kappa1 exp(-c KL(a_max/c || 1/2))`` on each truncated inner tail, and a floating-point
    allowance (a few ulps of every log-magnitude, plus the summation error). ``delta = 0`` exactly
    when ``eps >= eps0`` (then ``kappa1 <= 0``). Work is O(sqrt(n q) * sqrt(n q)) = O(n q).

    Args:
        eps: Target epsilon, finite and >= 0.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.
        clone_prob: ``q`` in (0, 1]: probability that another user is a clone of ``x0`` or ``x1``.
        rel_tol: Truncation budget relative to a first estimate of delta (it is added, not dropped).

    Returns:
        An upper bound on the hockey-stick divergence (capped at 1).

    Raises:
        ParameterError: On invalid numbers.

    Example:
        >>> d = clone_pair_delta(0.5, eps0=2.0, n=1000, clone_prob=math.exp(-2.0))
        >>> 1e-7 < d < 1e-4
        True
    """
    eps, eps0, n = _eps(eps), _eps0(eps0), _n(n)
    q = check_real("clone_prob", clone_prob, low=0.0, high=1.0, low_open=True)
    rel_tol = check_real("rel_tol", rel_tol, low=0.0, high=1.0, low_open=True)
    alpha, k1, k2 = _clone_setup(eps, eps0)
    if eps >= eps0 or k1 <= 0.0:  # then P <= e^eps Q pointwise: delta is exactly 0
        return 0.0
    approx = _approx_clone_delta(eps, eps0, n, q)
    log_tol = math.log(max(rel_tol * approx, 1e-300))
    m = n - 1
    if q >= 1.0:
        lo, hi, log_tail_c = m, m, -math.inf
    else:
        lo, hi, log_tail_c = _binom_window(m, q, log_tol - math.log(2.0))
    c = np.arange(lo, hi + 1, dtype=float)
    if q >= 1.0:
        logw, errw = np.zeros(1), np.full(1, 1e-15)
    else:
        logw, errw = _log_binom_pmf(m, c, math.log(q), math.log1p(-q))
    r = k2 / k1
    a0 = np.floor(r * (c + 1) / (1 + r)) + 1  # first a with a/(c+1-a) > r (up to rounding)
    start = np.maximum(a0 - 1, 1)  # one extra term below: safe against rounding of a0
    # inner truncation at a_max with P[Bin(c,1/2) >= a_max] <= tol (Chernoff/Hoeffding)
    half_width = np.sqrt(np.maximum(c, 1) * max(-(log_tol - math.log(2.0)), 1.0) / 2.0)
    a_max = np.minimum(np.maximum(np.ceil(c / 2 + half_width), start), c + 1)
    width = int(np.max(a_max - start)) + 1
    j = np.arange(width, dtype=float)
    A = start[:, None] + j[None, :]  # (c, j) grid of a values
    C = c[:, None]
    valid = A <= a_max[:, None]
    is_top = A >= C + 1
    # log B_c(a) for a <= c by recursion: log B_c(a+1) - log B_c(a) = log((c - a)/(a + 1))
    s0 = np.minimum(start, c)
    logB0, errB0 = _log_binom_pmf(c, s0, math.log(0.5), math.log(0.5))
    with np.errstate(divide="ignore", invalid="ignore"):
        step = np.log(np.maximum(C - A, 0.0) / (A + 1.0))  # from a to a+1 (-inf past c)
    step = np.where(valid[:, :-1] if width > 1 else valid[:, :0], step[:, :-1], 0.0) if width > 1 else step[:, :0]
    cums = np.concatenate([np.zeros((len(c), 1)), np.cumsum(step, axis=1)], axis=1)
    abs_cums = np.concatenate([np.zeros((len(c), 1)), np.cumsum(np.abs(np.where(np.isfinite(step), step, 0.0)), axis=1)], axis=1)
    logB = logB0[:, None] + cums
    errB = errB0[:, None] + 8.0 * _U * (abs_cums + np.arange(width)[None, :] + 1.0)
    # at a = c + 1 the term is kappa1 * B_c(c): use log B_c(c) = -c log 2
    logB = np.where(is_top, -C * math.log(2.0), logB)
    errB = np.where(is_top, 4.0 * _U * (C * math.log(2.0) + 1.0), errB)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(is_top, 0.0, A / np.maximum(C + 1 - A, 1.0))
        g = np.where(is_top, k1, k1 * ratio - k2)
        g_err = 4.0 * _U * np.where(is_top, abs(k1), abs(k1) * ratio + abs(k2))
        g_up = np.maximum(g + g_err, 0.0)
        log_g = np.where(g_up > 0, np.log(g_up), -np.inf)
        log_terms = logw[:, None] + errw[:, None] + logB + errB + log_g + 4.0 * _U
    log_terms = np.where(valid & np.isfinite(logB), log_terms, -np.inf)
    log_sum = float(logsumexp(log_terms)) if np.isfinite(log_terms).any() else -math.inf
    n_terms = int(valid.sum())
    log_sum += math.log1p(4.0 * _U * (n_terms + 10))
    # truncated inner tails: sum_{a > a_max} T(a) <= kappa1 P[Bin(c,1/2) >= a_max]
    frac = np.where(c > 0, a_max / np.maximum(c, 1), 1.0)
    has_tail = a_max < c + 1
    log_inner_tail = np.where(
        has_tail & (frac > 0.5), math.log(k1) - c * _kl(np.minimum(frac, 1.0), 0.5), -np.inf
    )
    log_inner_tail = np.where(has_tail & (frac <= 0.5), math.log(k1), log_inner_tail)
    if np.isfinite(log_inner_tail).any():
        log_tail_a = float(logsumexp(logw + errw + log_inner_tail))
    else:
        log_tail_a = -math.inf
    total = float(logsumexp([log_sum, log_tail_a, log_tail_c]))
    return log_clip_to_prob(total)


def clone_pair_epsilon(eps0: float, n: int, delta: float, clone_prob: float) -> float:
    """Smallest epsilon (to about 1e-10 relative) whose certified clone-pair delta is <= ``delta``.

    A monotone root find (``delta`` decreases in ``eps``): aimed with a fast betainc evaluation,
    then confirmed with :func:`clone_pair_delta`; the returned epsilon is always one at which the
    certified delta was evaluated and found ``<= delta``. Never exceeds ``eps0`` (delta is 0 there).

    Example:
        >>> e = clone_pair_epsilon(eps0=2.0, n=10_000, delta=1e-6, clone_prob=math.exp(-2.0))
        >>> 0.1 < e < 0.5
        True
    """
    eps0, n, delta = _eps0(eps0), _n(n), _delta(delta)
    q = check_real("clone_prob", clone_prob, low=0.0, high=1.0, low_open=True)
    aim = delta * (1.0 - 1e-5)
    log_tol = math.log(1e-9 * delta)

    def f(e: float) -> float:
        d = _approx_clone_delta(e, eps0, n, q, log_tol)
        return (math.log(d) if d > 0 else -800.0) - math.log(aim)

    if f(0.0) <= 0.0:
        guess = 0.0
    else:
        hi = eps0 * (1.0 - 1e-12)
        guess = brentq(f, 0.0, hi, xtol=1e-13, rtol=1e-11) if f(hi) < 0 else eps0
    if guess >= eps0:
        return eps0
    if clone_pair_delta(guess, eps0, n, q) <= delta:
        return guess
    lo, hi = guess, eps0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if clone_pair_delta(mid, eps0, n, q) <= delta:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-10 * max(hi, 1.0):
            break
    return hi


def fmt2021_clone_delta(eps: float, eps0: float, n: int) -> float:
    """FMT 2021 numerical clone bound: exact ``D_{e^eps}(P||Q)`` with ``q = e^-eps0`` (Lemma 3.3,
    Theorem 3.2), certified upward (see :func:`clone_pair_delta`). Valid for every ``eps0``-LDP
    randomizer, any ``n >= 2`` and ``eps >= 0``.

    Args:
        eps: Target epsilon, finite and >= 0.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.

    Returns:
        Upper bound on the shuffled delta at ``eps``.

    Raises:
        ParameterError: On invalid numbers.

    Example:
        >>> fmt2021_clone_delta(4.0, eps0=4.0, n=1000)
        0.0
    """
    eps, eps0, n = _eps(eps), _eps0(eps0), _n(n)
    return clone_pair_delta(eps, eps0, n, math.exp(-eps0))


def fmt2021_clone_epsilon(eps0: float, n: int, delta: float) -> float:
    """FMT 2021 numerical clone bound as epsilon(delta), by a certified monotone root find.

    The authors' reference example (``n = 1e5, eps0 = 4, delta = 1e-6``) brackets this value in
    ``[0.16754, 0.17279]``; here it is computed to 1e-10 instead of bracketed.

    Args:
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.
        delta: Target delta in (0, 1).

    Returns:
        An epsilon at which the certified clone delta is ``<= delta`` (at most ``eps0``).

    Raises:
        ParameterError: On invalid numbers.

    Example:
        >>> e = fmt2021_clone_epsilon(eps0=4.0, n=100_000, delta=1e-6)
        >>> 0.16754 <= e <= 0.17279
        True
    """
    eps0, n, delta = _eps0(eps0), _n(n), _delta(delta)
    return clone_pair_epsilon(eps0, n, delta, math.exp(-eps0))
