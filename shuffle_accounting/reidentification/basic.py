"""Exact Bayes-optimal re-identification in the basic setting (one sample from P among n-1 from Q).

Su, Cheng, Wang, *Bayesian Advantage of Re-Identification Attack in the Shuffle Model*, Sec. IV-V.
One sample is drawn from ``P`` and ``n - 1`` from ``Q`` (discrete distributions on the same finite
support), the ``n`` samples are shuffled, and an adversary who knows ``P`` and ``Q`` names the
position of the ``P`` sample (``guesses`` = k attempts allowed, Game 1). The Bayes-optimal adversary
ranks positions by the likelihood ratio ``P(y)/Q(y)`` (eq. (5)); ``beta_n^k(P, Q)`` is its success
probability.

Exact discrete k-guess formula with ties
----------------------------------------
Let ``G(t) = Q[P/Q <= t]``, ``G(t-) = Q[P/Q < t]``, ``f(+inf) = P[Q = 0]`` and, for ``x`` in [0, 1],

    Phi_k(x) = E[(k - B)^+],   B ~ Binomial(n, 1 - x)
             = sum_{i=0}^{k-1} (k - i) C(n, i) (1 - x)^i x^(n - i).

Then, for 1 <= k <= n,

    beta_n^k(P, Q) = f(+inf) + (1/n) * sum_t t * [Phi_k(G(t)) - Phi_k(G(t-))],        (*)

the sum running over the distinct finite ratio values ``t``. For ``k = 1``, ``Phi_1(x) = x^n`` and
(*) is the paper's Theorem 4; for continuous ratios it is Theorem 1 (see :mod:`.continuous`).

*Derivation.* Ties between equal ratios carry equal posterior (eq. (5)), so breaking them uniformly
at random is optimal and does not change the success probability. Uniform tie-breaking is the same
as ranking every sample by the randomized probability-integral transform ``S = G(t-) + U g(t)``
(``t`` its ratio, ``g(t) = G(t) - G(t-)``, ``U ~ Uniform(0, 1)`` independent). Under ``Q`` this score
is exactly ``Uniform(0, 1)``; under ``P`` (finite-ratio part) it has density ``f(t)/g(t) = t`` on
``(G(t-), G(t)]`` by Property 1 (``f = t g``). A ``P`` sample with ratio ``+inf`` is never tied with
a decoy (decoys never produce outputs with ``Q(y) = 0``) and is ranked first: it always wins
(``f(+inf)`` term). Otherwise the target is found within k guesses iff at most ``k - 1`` of the
``n - 1`` i.i.d. uniform decoy scores exceed its score ``s``:

    P[win | s] = sum_{j=1}^{k} C(n-1, j-1) s^(n-j) (1-s)^(j-1),

and ``(1/n) d/ds Phi_k(s)`` equals this sum (both are ``P[Binomial(n-1, 1-s) <= k-1]``), so
integrating against the piecewise-constant density ``t`` gives (*). Checks: ``k = n`` gives
``Phi_n(x) = n x`` and ``beta = f(+inf) + sum_t t g(t) = 1``; ``P = Q`` gives ``k/n``.

Numerics: the ratio levels are sorted once; ``log G`` is taken from the lower cumulative sum where
``G <= 1/2`` and from ``log1p(-upper tail)`` above, so ``G^n`` is accurate for ``n`` up to 1e7 and
beyond; ``k = 1`` uses ``G^n(t) - G^n(t-) = G^n(t) (1 - exp(n log(G(t-)/G(t))))`` without
cancellation. The value (*) is continuous in ``P`` and ``Q``, so ratios that are equal in exact
arithmetic but split by floating-point rounding change the result only at rounding level.
Inputs that sum to one within the validation tolerance (1e-9) are renormalized.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._logmath import log1mexp, log_binom
from .._validation import ParameterError, check_int, check_probability_vector
from ..curves import Interval

__all__ = [
    "success_probability",
    "additive_advantage",
    "multiplicative_advantage",
    "total_variation",
    "AdvantageBounds",
    "advantage_bounds",
]

#: Above this many guesses the binomial sum in Phi_k is restricted to a window around its mean.
FULL_SUM_MAX_K = 2048


def check_dist(name: str, value: Any) -> np.ndarray:
    """``value`` as a validated probability vector (shared with :mod:`.shuffle`; not in ``__all__``).

    Raises:
        ParameterError: Naming ``name`` if ``value`` is not a probability vector.
    """
    try:
        return check_probability_vector(name, value)
    except TypeError as exc:  # not iterable at all (None, a number, ...)
        raise ParameterError(
            f"{name} must be a probability vector (non-negative, summing to 1), got {value!r}"
        ) from exc


def _check_pair(P: Any, Q: Any) -> tuple[np.ndarray, np.ndarray]:
    p = check_dist("P", P)
    q = check_dist("Q", Q)
    if p.shape != q.shape:
        raise ParameterError(
            f"Q must be on the same support as P (same length), got len(P) = {p.size}, len(Q) = {q.size}"
        )
    return p / p.sum(), q / q.sum()


def _check_n_guesses(n: Any, guesses: Any) -> tuple[int, int]:
    n = check_int("n", n, minimum=1, maximum=2**53)
    guesses = check_int("guesses", guesses, minimum=1, maximum=n)
    return n, guesses


def _log_levels(log_x_lo: np.ndarray, log_x_hi_tail: np.ndarray, cum: np.ndarray) -> np.ndarray:
    """log of a cumulative value ``cum`` with an accurate upper-tail form where ``cum > 1/2``."""
    with np.errstate(divide="ignore"):
        return np.where(cum <= 0.5, log_x_lo, log_x_hi_tail)


def log_phi(n: int, k: int, log_x: np.ndarray, log_1mx: np.ndarray) -> np.ndarray:
    """``log Phi_k(x)`` elementwise, ``Phi_k(x) = sum_{i<k} (k - i) C(n, i) (1-x)^i x^(n-i)``.

    ``Phi_k(0) = 0`` (as k <= n) and ``Phi_k(1) = k`` are handled explicitly.
    """
    log_x = np.asarray(log_x, dtype=float)
    log_1mx = np.asarray(log_1mx, dtype=float)
    out = np.full(log_x.shape, -np.inf)
    is_one = log_1mx == -np.inf
    is_zero = log_x == -np.inf
    out[is_one] = math.log(k)
    mid = ~(is_one | is_zero)
    if not np.any(mid):
        return out
    lx = log_x[mid]
    l1 = log_1mx[mid]
    if k <= FULL_SUM_MAX_K:
        i = np.arange(k, dtype=float)
        lw = np.log(k - i) + log_binom(n, i)
        res = np.empty(lx.shape)
        chunk = max(1, 2_000_000 // k)
        for s in range(0, lx.size, chunk):
            terms = (
                lw[None, :]
                + i[None, :] * l1[s : s + chunk, None]
                + (n - i)[None, :] * lx[s : s + chunk, None]
            )
            m = terms.max(axis=1)
            res[s : s + chunk] = m + np.log(np.exp(terms - m[:, None]).sum(axis=1))
        out[mid] = res
        return out
    # Large k: the binomial mass outside mean +- (40 sd + 700) is below e^-500 (Chernoff), far below
    # the 1/n floor of every success probability; sum over that window only.
    q = np.exp(l1)
    mean = n * q
    half = 40.0 * np.sqrt(n * q * np.exp(lx)) + 700.0
    lo = np.maximum(0, np.floor(mean - half)).astype(np.int64)
    hi = np.minimum(k, np.ceil(mean + half) + 1).astype(np.int64)
    res = np.full(lx.shape, -np.inf)
    for idx in range(lx.size):
        if hi[idx] <= lo[idx]:
            # the whole window lies at i >= k: Phi is negligible; keep the exact lowest term instead
            i = np.array([float(k - 1)])
        else:
            i = np.arange(lo[idx], hi[idx], dtype=float)
        terms = np.log(k - i) + log_binom(n, i) + i * l1[idx] + (n - i) * lx[idx]
        m = terms.max()
        res[idx] = m + math.log(float(np.exp(terms - m).sum()))
    out[mid] = res
    return out


def success_core(p: np.ndarray, q: np.ndarray, n: int, k: int) -> float:
    """Formula (*) of the module docstring for mass vectors ``p``, ``q`` (each summing to 1)."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    f_inf = float(p[(q == 0) & (p > 0)].sum())
    keep = q > 0
    pk, qk = p[keep], q[keep]
    if qk.size == 0:
        return min(1.0, f_inf) if f_inf > 0 else 1.0
    qk = qk / qk.sum()
    with np.errstate(divide="ignore"):
        log_t = np.log(pk) - np.log(qk)
    order = np.argsort(log_t, kind="stable")
    log_t = log_t[order]
    qk = qk[order]
    # merge exactly equal ratios into one level
    levels, start = np.unique(log_t, return_index=True)
    g = np.add.reduceat(qk, start)
    cum = np.cumsum(g)  # G(t)
    tail = np.concatenate([np.cumsum(g[::-1])[::-1][1:], [0.0]])  # 1 - G(t) = mass strictly above
    cum_prev = np.concatenate([[0.0], cum[:-1]])  # G(t-)
    tail_prev = tail + g  # 1 - G(t-)
    with np.errstate(divide="ignore"):
        log_G = _log_levels(np.log(cum), np.log1p(-np.minimum(tail, 1.0)), cum)
        log_1mG = _log_levels(np.log1p(-np.minimum(cum, 1.0)), np.log(tail), cum)
        log_Gp = _log_levels(np.log(cum_prev), np.log1p(-np.minimum(tail_prev, 1.0)), cum_prev)
        log_1mGp = _log_levels(np.log1p(-np.minimum(cum_prev, 1.0)), np.log(tail_prev), cum_prev)
    log_G[-1] = 0.0
    log_1mG[-1] = -np.inf
    log_Gp[0] = -np.inf
    log_1mGp[0] = 0.0
    finite = levels > -np.inf  # ratio 0 levels contribute nothing
    if k == 1:
        with np.errstate(invalid="ignore"):
            diff = np.where(np.isneginf(log_Gp), -np.inf, n * (log_Gp - log_G))
        log_dphi = n * log_G + log1mexp(np.minimum(diff, 0.0))
        log_dphi = np.where(np.isneginf(log_Gp), n * log_G, log_dphi)
        total = float(np.exp(levels[finite] + log_dphi[finite]).sum())
    else:
        phi_hi = np.exp(log_phi(n, k, log_G[finite], log_1mG[finite]))
        phi_lo = np.exp(log_phi(n, k, log_Gp[finite], log_1mGp[finite]))
        dphi = np.maximum(phi_hi - phi_lo, 0.0)  # monotone; guards rounding only
        total = float((np.exp(levels[finite]) * dphi).sum())
    return f_inf + total / n


def success_probability(P: Any, Q: Any, n: Any, guesses: Any = 1) -> float:
    """Exact Bayes-optimal re-identification probability ``beta_n^k(P, Q)`` for discrete P, Q.

    One sample from ``P`` is hidden among ``n - 1`` samples from ``Q`` and shuffled; the adversary
    knows ``P`` and ``Q`` and may name ``guesses`` positions (Game 1 of Su, Cheng, Wang, *Bayesian
    Advantage of Re-Identification Attack in the Shuffle Model*). Computes

        beta_n^k = f(+inf) + (1/n) sum_t t [Phi_k(G(t)) - Phi_k(G(t-))],
        Phi_k(x) = E[(k - Binomial(n, 1 - x))^+],

    which is Theorem 4 for ``k = 1`` (``Phi_1(x) = x^n``) and its exact discrete k-guess extension
    with ties derived in the module docstring (Theorem 1 is the continuous-ratio case). Outputs with
    ``Q(y) = 0 < P(y)`` contribute ``f(+inf) = P[Q = 0]`` exactly. Computed in log space; the
    relative rounding error is about 1e-13 for moderate supports (this is an exact value, not a
    bound: no outward rounding is applied).

    Args:
        P: Distribution of the target's sample, a probability vector (entries >= 0, sum 1).
        Q: Distribution of each of the ``n - 1`` decoys, same length as ``P``.
        n: Total number of shuffled samples, integer >= 1.
        guesses: Number of positions the adversary may name, integer in ``[1, n]``.

    Returns:
        ``beta_n^k(P, Q)`` in ``[1/n, 1]`` (``k/n`` when ``P = Q``, Corollary 1).

    Raises:
        ParameterError: If ``P``/``Q`` are not probability vectors of equal length, ``n < 1`` or
            ``guesses`` is outside ``[1, n]`` (or any argument has the wrong type).

    Example:
        >>> round(success_probability([0.5, 0.5], [0.5, 0.5], 4), 12)
        0.25
        >>> round(success_probability([0.3, 0.7], [0.0, 1.0], 5), 12)  # Sec. V-B: p + (1 - p)/n
        0.44
        >>> round(success_probability([0.5, 0.25, 0.25], [0.25, 0.5, 0.25], 10, guesses=3), 6)
        0.514087
    """
    p, q = _check_pair(P, Q)
    n, k = _check_n_guesses(n, guesses)
    return success_core(p, q, n, k)


def total_variation(P: Any, Q: Any) -> float:
    """Total variation distance ``Delta(P, Q) = (1/2) sum_y |P(y) - Q(y)|``.

    Args:
        P: Probability vector.
        Q: Probability vector of the same length.

    Returns:
        ``Delta(P, Q)`` in ``[0, 1]``.

    Raises:
        ParameterError: If ``P``/``Q`` are not probability vectors of equal length.

    Example:
        >>> total_variation([0.5, 0.5], [0.25, 0.75])
        0.25
    """
    p, q = _check_pair(P, Q)
    return float(0.5 * np.abs(p - q).sum())


def additive_advantage(P: Any, Q: Any, n: Any, guesses: Any = 1) -> float:
    """Additive Bayesian advantage ``Adv_n^+ = beta_n^k(P, Q) - k/n``.

    Su, Cheng, Wang define ``Adv_n^+ = beta_n - 1/n`` (single guess); for ``k`` guesses the blind
    baseline is ``k/n``.

    Args:
        P: Target distribution (probability vector).
        Q: Decoy distribution, same length.
        n: Number of shuffled samples, integer >= 1.
        guesses: Number of guesses ``k`` in ``[1, n]``.

    Returns:
        ``beta_n^k(P, Q) - k/n`` (>= 0).

    Raises:
        ParameterError: On invalid inputs (see :func:`success_probability`).

    Example:
        >>> round(additive_advantage([1.0, 0.0], [0.0, 1.0], 10), 12)
        0.9
    """
    p, q = _check_pair(P, Q)
    n, k = _check_n_guesses(n, guesses)
    return success_core(p, q, n, k) - k / n


def multiplicative_advantage(P: Any, Q: Any, n: Any, guesses: Any = 1) -> float:
    """Multiplicative Bayesian advantage ``Adv_n^x = n * beta_n^k(P, Q) / k``.

    Su, Cheng, Wang: ``Adv_n^x = beta_n / (1/n)``; for ``k`` guesses the baseline is ``k/n``.
    Tends to ``M = sup_{Q(y) > 0} P(y)/Q(y)`` when ``P << Q`` (Theorem 3).

    Args:
        P: Target distribution (probability vector).
        Q: Decoy distribution, same length.
        n: Number of shuffled samples, integer >= 1.
        guesses: Number of guesses ``k`` in ``[1, n]``.

    Returns:
        ``n beta_n^k / k`` (>= 1).

    Raises:
        ParameterError: On invalid inputs (see :func:`success_probability`).

    Example:
        >>> round(multiplicative_advantage([0.75, 0.25], [0.25, 0.75], 10**6), 4)  # -> M = 3
        3.0
    """
    p, q = _check_pair(P, Q)
    n, k = _check_n_guesses(n, guesses)
    return n * success_core(p, q, n, k) / k


@dataclass(frozen=True, init=False)
class AdvantageBounds(Interval):
    """Theorem 5 of Su, Cheng, Wang: ``Delta/n <= Adv_n^+ <= Delta`` (lower bound needs n >= 2).

    An :class:`~shuffle_accounting.curves.Interval` ``[lower, upper]`` with ``certified=False``
    (the theorem's ends are evaluated in plain floating point, not rounded outward) and no
    ``estimate``: the exact advantage is the separate field ``advantage``, which :attr:`holds`
    compares with the interval up to rounding.

    Attributes:
        n: Number of shuffled samples.
        total_variation: ``Delta(P, Q)``.
        lower: ``Delta/n`` for ``n >= 2``; ``0.0`` for ``n = 1`` (see :func:`advantage_bounds`).
        advantage: The exact ``Adv_n^+(P, Q)``.
        upper: ``Delta``.
    """

    n: int
    total_variation: float
    advantage: float

    def __init__(self, n: int, total_variation: float, lower: float, advantage: float, upper: float) -> None:
        self._init_interval(
            lower,
            upper,
            certified=False,
            estimate=None,
            n=n,
            total_variation=total_variation,
            advantage=advantage,
        )

    @property
    def holds(self) -> bool:
        """Whether ``lower <= advantage <= upper`` up to a relative 1e-12 rounding slack."""
        slack = 1e-12 * max(1.0, self.upper)
        return self.lower - slack <= self.advantage <= self.upper + slack


def advantage_bounds(P: Any, Q: Any, n: Any) -> AdvantageBounds:
    """The two-sided total-variation bound of Theorem 5 next to the exact additive advantage.

    Su, Cheng, Wang, *Bayesian Advantage of Re-Identification Attack in the Shuffle Model*,
    Theorem 5: ``Delta(P, Q)/n <= Adv_n^+(P, Q) <= Delta(P, Q)``. The paper states it for
    ``n >= 1``, but for ``n = 1`` the target is the only sample, ``beta_1 = 1`` and ``Adv_1^+ = 0``,
    so the lower bound fails whenever ``P != Q`` (its proof guesses among ``[n] \\ {r}``, which is
    empty); here ``lower = 0`` for ``n = 1``.

    Args:
        P: Target distribution (probability vector).
        Q: Decoy distribution, same length.
        n: Number of shuffled samples, integer >= 1.

    Returns:
        An :class:`AdvantageBounds` whose ``holds`` property checks the theorem.

    Raises:
        ParameterError: On invalid inputs.

    Example:
        >>> b = advantage_bounds([0.5, 0.5], [0.25, 0.75], 4)
        >>> b.lower <= b.advantage <= b.upper, b.holds
        (True, True)
    """
    p, q = _check_pair(P, Q)
    n = check_int("n", n, minimum=1, maximum=2**53)
    tv = float(0.5 * np.abs(p - q).sum())
    adv = success_core(p, q, n, 1) - 1.0 / n
    return AdvantageBounds(n=n, total_variation=tv, lower=tv / n if n >= 2 else 0.0, advantage=adv, upper=tv)
