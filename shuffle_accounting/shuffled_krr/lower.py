"""Lower bounds on the worst-case delta(eps) of shuffled k-RR, exhibited by concrete datasets.

The certified accountant gives an *upper* bound on ``sup_D delta_D(eps)`` (sup over neighbouring
datasets). This module gives a *lower* bound: the largest exact ``delta_D(eps)`` (see
:mod:`shuffle_accounting.shuffled_krr.exact`) over a searched family of concrete datasets, each
with the target moving from value 0 to value 1 and the other ``n - 1`` users at

* ``all at x2`` (``k >= 3``), ``all at x0`` (the target's value), ``all at x1`` (the alternative
  value);
* two-value mixtures ``j`` users at ``u`` and ``n - 1 - j`` at ``v`` for ``(u, v)`` in
  ``(x0, x2), (x0, x1)``, with ``j`` found by a 1-D search (a coarse grid refined around the
  best split at each eps; exhaustive when ``n <= 26``). ``(x1, x2)`` mixtures and ``all at x1``
  are mirror images of ``(x0, x2)`` mixtures and ``all at x0`` (relabel 0 <-> 1: ``P`` and ``Q``
  swap and delta is the max of both directions), so they give the same numbers.

For ``k = 2`` the seed datasets of the certified branch and bound are added
(:func:`~shuffle_accounting.shuffled_krr.worst_case.seed_log_delta_lower` and
:func:`~shuffle_accounting.shuffled_krr.worst_case.seed_epsilon_lower`: ``c`` in ``{0..3,
n-4..n-1}``, 7 evenly spaced, the total-variation candidates), each by the certified lower value
of its windowed leaf. At large ``n`` they beat the family's fixed-width statistic (``n = 1e7``,
``eps0 = 0.5``, ``eps = 1e-4``: ``log delta`` higher by ``0.047``; just below ``delta(0)``:
epsilon 77 % higher at ``eps0 = 2``), at about 0.1 s per call at ``n = 2e6`` and 0.5-1 s at
``1e7``. Within auto's range :class:`~shuffle_accounting.shuffled_krr.mechanism.ShuffledKRR`
uses the certificate's witness instead, which cannot miss the worst dataset.

No single dataset is assumed worst: the worst one changes with eps (e.g. ``k = 3, n = 5``:
``(x0, x2, x2, x2)`` beats ``(x2, x2, x2, x2)`` at large eps).

Which statistic. Each candidate's delta is the exact hockey-stick divergence of the two
distributions of a statistic of the shuffled histogram: the full histogram (exact sufficient
statistic) when that is cheap, else the ``(h0, h1)`` marginal (counts of values 0 and 1; ``h0``
alone, which *is* the full histogram, for ``k = 2``). A marginal is a post-processing of the
histogram, so its divergence is still a valid lower bound (for ``k >= 4`` it can be strictly
smaller: ``(h0, h1)`` is not sufficient). For "all at x2" the marginal is computed for every
``n`` in O(n): given ``T = h0 + h1`` the optimal region is a tail in ``h0``, whose masses are
binomial tails (:class:`SplitCandidate`); this is the worst family member at large ``n`` and
brings the exhibited epsilon within ~1e-6 relative of the certified one up to ``n = 1e7``. For the
other members, at large ``n`` the marginal is evaluated on a window of
``mean +- w sd`` around each class's counts; the pmf values inside are exact, the mass outside
is bounded by the Chernoff bound ``exp(-c KL(x/c || pi))`` and *subtracted* (times ``e^eps``),
so the result stays a lower bound. Mixtures whose exact convolution is too large are skipped
(only the splits near the ends are searched then).

Rounding: every returned delta is deflated by a bound on the floating-point error of the log
probabilities (``log P`` lowered, privacy loss evaluated at ``eps + err``), and every returned
epsilon is rounded down, so the numbers stay *lower* bounds on the true worst case.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import gammaln

from .._binomial import log_binom_pmf as _log_binom_pmf  # accurate (Loader) pmf
from .._binomial import log_binom_sf as _log_binom_sf  # binomial tails (upper bounds)
from .._logmath import UNIT_ROUNDOFF, convolve2d_direct, log_sub
from .._validation import check_delta, check_int, check_real, check_real_array
from ..curves import epsilon_from_delta
from ..randomizers import KRR
from . import exact as _exact
from .worst_case import seed_epsilon_lower, seed_log_delta_lower

__all__ = ["WorstDataset", "worst_dataset", "lower_log_delta", "lower_delta", "lower_epsilon"]

#: Exact-histogram work (see :data:`exact.MAX_HISTOGRAM_WORK`) up to which a candidate uses it.
HISTOGRAM_BUDGET: int = 4_000_000
#: Largest direct-convolution work (multiply-adds) spent on one marginal candidate.
CONVOLUTION_BUDGET: int = 3_000_000
#: Largest number of window cells for one ``(h0, h1)`` class; above it ``h0`` alone is used.
MARGINAL_CELLS: int = 4_000_000
#: Default window half-width in standard deviations for the windowed marginals.
DEFAULT_WINDOW_SD: float = 12.0
#: Largest full-support window (points); wider requests use :data:`WIDE_WINDOW_SD` instead.
MAX_WINDOW: int = 1_000_000
#: Window half-width (standard deviations) used in place of a full support above MAX_WINDOW.
WIDE_WINDOW_SD: float = 40.0
#: Above this many users only the pure datasets (all others at one value) are searched: each
#: mixture costs O(sqrt(n)) memory and time, and at this size the pure "all at x2" marginal is
#: already within ~1e-6 of the certified value for k >= 3 (a weaker but valid lower bound for k = 2).
LARGE_N: int = 10_000_000

_U = 2.0 * UNIT_ROUNDOFF  # machine epsilon 2^-52: the error budgets below are in units of 2u
_TINY = 2.3e-308  # bound on a flushed-to-zero product of two scaled values <= 1


@dataclass(frozen=True)
class WorstDataset:
    """The searched dataset with the largest exact delta at one eps.

    Attributes:
        eps: The eps at which the family was searched.
        others: Counts of the other ``n - 1`` users' values (length ``k``); the target moves
            from value 0 to value 1.
        log_delta: Natural log of the certified-lower delta of this dataset (``-inf`` for 0).
        delta: ``exp(log_delta)`` (0.0 on underflow; use ``log_delta``).
        family: Which family member, e.g. ``"all at x2"`` or ``"mix x0/x2 (j=1 at x0)"``.
        statistic: What the delta was computed on: ``"histogram"``, ``"(h0,h1) marginal"`` or
            ``"h0 count"`` (``"histogram"`` for ``k = 2``, where ``h0`` is the histogram).

    Example:
        >>> w = worst_dataset(0.3, 3, 2.0, 5)
        >>> w.others, w.family, w.statistic, round(w.delta, 6)
        ((0, 0, 4), 'all at x2', 'histogram', 0.417896)
    """

    eps: float
    others: tuple[int, ...]
    log_delta: float
    delta: float
    family: str
    statistic: str


# ---------------------------------------------------------------------------------------------
# one candidate: its privacy-loss states and a sound lower evaluation of its delta
# ---------------------------------------------------------------------------------------------


class _Direction:
    """Sorted privacy-loss states of one direction, with scaled prefix sums for fast evaluation.

    ``H(e) = sum_{L > e} P (1 - e^(e - L)) = A(e) - e^e B(e)`` with prefix sums ``A`` of ``P`` and
    ``B`` of ``Q = P e^-L``. Recursive summation of ``m`` non-negative terms has relative error
    at most ``m u`` per prefix sum (Higham, *Accuracy and Stability of Numerical Algorithms*, eq.
    4.4), so ``A - e^e B - 2 m u (A + e^e B)`` (minus underflow slack) is a lower bound; when
    that slack is not negligible the exact term-by-term sum is used instead.
    """

    def __init__(self, loss: np.ndarray, logw: np.ndarray) -> None:
        self.loss = loss
        self.logw = logw
        self.neg = -loss
        self.scale = float(logw.max()) if logw.size else 0.0
        with np.errstate(under="ignore"):
            self.cum_p = np.cumsum(np.exp(logw - self.scale))
            self.cum_q = np.cumsum(np.exp(logw - loss - self.scale))

    def log_hockey(self, eps: np.ndarray) -> np.ndarray:
        out = np.full(eps.shape, -np.inf)
        if self.loss.size == 0:
            return out
        m = np.searchsorted(self.neg, -eps, side="left")
        for i in range(eps.size):
            mi = int(m[i])
            if mi == 0:
                continue
            a = float(self.cum_p[mi - 1])
            b = math.exp(eps[i]) * float(self.cum_q[mi - 1])
            slack = 2.0 * mi * _U * (a + b) + mi * math.exp(eps[i]) * 5e-324
            if a - b - slack > 0.999 * (a - b) > 0:
                out[i] = self.scale + math.log(a - b - slack)
            else:
                out[i] = float(_exact.log_hockey_sorted(self.loss[:mi], self.logw[:mi], eps[i : i + 1])[0])
        return out


@dataclass(frozen=True)
class _Candidate:
    others: tuple[int, ...]
    family: str
    statistic: str
    plds: tuple[_Direction, ...]
    log_drop: float  # log of an upper bound on the mass dropped by windowing (-inf if none)
    log_err: float  # bound on the absolute error of the computed log-probabilities

    def log_delta(self, eps: np.ndarray) -> np.ndarray:
        """Sound lower bound on this dataset's ``log delta`` at each eps (see module doc)."""
        e = np.atleast_1d(np.asarray(eps, dtype=float)).ravel() + 2.0 * self.log_err
        best = np.full(e.shape, -np.inf)
        for d in self.plds:
            h = d.log_hockey(e) - self.log_err
            if np.isfinite(self.log_drop):
                corr = e + self.log_drop
                h = np.where(h > corr, log_sub(h, np.minimum(corr, h)), -np.inf)
            best = np.maximum(best, h)
        return best.reshape(np.shape(eps))


def _log_err_bound(n: int) -> float:
    # gammaln(x) for x <= n + 1 has absolute error of a few ulps of its value; a pmf sums a
    # handful of them (Loader's binomial log-pmf: ~1e-13 absolute); log-space convolutions add
    # O(n u). Generous bound:
    return 1e-12 + 64.0 * _U * (n + 2.0) * math.log(n + 2.0)


def _from_log_pq(others, family, statistic, log_p, log_q, log_drop, n, eps0) -> _Candidate:
    plds = (
        _Direction(*_exact.pld_atoms(log_p, log_q, eps0)),
        _Direction(*_exact.pld_atoms(log_q, log_p, eps0)),
    )
    # rounding of the log-probabilities themselves scales with their magnitude
    finite = np.concatenate([np.abs(x[np.isfinite(x)]).ravel() for x in (log_p, log_q)])
    mag = float(finite.max()) if finite.size else 0.0
    log_err = _log_err_bound(n) + 16.0 * _U * mag
    return _Candidate(tuple(others), family, statistic, plds, log_drop, log_err)


def _log_chernoff_tail(c: int, pi: float, x: float, upper: bool) -> float:
    """log of a bound on P(X >= x) (upper) or P(X <= x) (lower), X ~ Bin(c, pi)."""
    if upper and x > c:
        return -np.inf
    if not upper and x < 0:
        return -np.inf
    q = x / c
    if (upper and q <= pi) or (not upper and q >= pi):
        return 0.0
    # here q lies strictly on the far side of pi, so pi = 1 (q < 1) or pi = 0 (q > 0) means the
    # tail event is impossible (p rounds to 1 for k = 2 at eps0 >~ 37): the KL divergence is infinite
    if (q > 0 and pi <= 0.0) or (q < 1 and pi >= 1.0):
        return -np.inf
    kl = 0.0
    if q > 0:
        kl += q * math.log(q / pi)
    if q < 1:
        kl += (1 - q) * math.log((1 - q) / (1 - pi))
    return -c * kl


def binomial_window(c: int, pi: float, w: float) -> tuple[int, int, float]:
    """Window ``[lo, hi]`` of ``Bin(c, pi)`` and log of a bound on its outside mass.

    ``w = inf`` asks for the full support; above :data:`MAX_WINDOW` points the window is
    :data:`WIDE_WINDOW_SD` standard deviations instead (the outside mass is bounded and
    subtracted by the caller, so the result stays a lower bound; memory and time stay bounded).
    """
    if not math.isfinite(w):
        if c + 1 <= MAX_WINDOW:
            return 0, c, -np.inf
        w = WIDE_WINDOW_SD
    mean = c * pi
    sd = math.sqrt(c * pi * (1 - pi))
    half = min(w * sd, MAX_WINDOW / 2 - 2)  # bounded memory; the outside mass is subtracted
    lo = max(0, int(math.floor(mean - half)) - 1)
    hi = min(c, int(math.ceil(mean + half)) + 1)
    tails = [_log_chernoff_tail(c, pi, lo - 1, False), _log_chernoff_tail(c, pi, hi + 1, True)]
    return lo, hi, float(np.logaddexp(*tails))


# ---- (h0, h1) marginal, k >= 3 --------------------------------------------------------------


def _tri_cells(c: int, p0: float, p1: float, w: float) -> int:
    a_lo, a_hi, _ = binomial_window(c, p0, w)
    b_lo, b_hi, _ = binomial_window(c, p1, w)
    return (a_hi - a_lo + 1) * (b_hi - b_lo + 1)


def _tri_component(c, lp0, lp1, w):
    """Window of the trinomial of ``(h0, h1)`` for ``c`` users with per-user log probs."""
    p0, p1 = math.exp(lp0), math.exp(lp1)
    lrest = math.log1p(-(p0 + p1))
    a_lo, a_hi, ta = binomial_window(c, p0, w)
    b_lo, b_hi, tb = binomial_window(c, p1, w)
    a1 = np.arange(a_lo, a_hi + 1, dtype=float)
    b1 = np.arange(b_lo, b_hi + 1, dtype=float)
    ga = gammaln(c + 1.0) - gammaln(a1 + 1.0) + a1 * lp0
    gb = -gammaln(b1 + 1.0) + b1 * lp1
    r1 = c - (a_lo + b_lo) - np.arange(a1.size + b1.size - 1, dtype=float)  # r for a + b
    gr = np.where(r1 >= 0, -gammaln(np.maximum(r1, 0) + 1.0) + r1 * lrest, -np.inf)
    idx = np.arange(a1.size)[:, None] + np.arange(b1.size)[None, :]
    lg = ga[:, None] + gb[None, :] + gr[idx]
    return (a_lo, b_lo), lg, float(np.logaddexp(ta, tb))


def h01_candidate(k, eps0, others, family, w) -> _Candidate | None:
    """Exhibited candidate from the ``(h0, h1)`` marginal of one compact dataset (``k >= 3``).

    The marginal is a post-processing of the histogram, so its hockey-stick divergence (a sound
    lower value, truncated windows of ``w`` standard deviations) is a lower bound on the
    dataset's delta. ``None`` when the direct convolution would exceed its work budget.
    """
    krr = KRR(k, eps0)
    lp, lq = krr.log_p, krr.log_pbar
    n = sum(others) + 1
    c0, c1 = others[0], others[1]
    crest = n - 1 - c0 - c1
    classes = [(c, l0, l1) for c, l0, l1 in ((c0, lp, lq), (c1, lq, lp), (crest, lq, lq)) if c > 0]
    sizes = [_tri_cells(c, math.exp(l0), math.exp(l1), w) for c, l0, l1 in classes]
    if max(sizes) > MARGINAL_CELLS or (len(sizes) > 1 and np.prod(sizes, dtype=float) > CONVOLUTION_BUDGET):
        return None
    comps = [_tri_component(c, l0, l1, w) for c, l0, l1 in classes]
    log_drop = -np.inf
    if len(comps) == 1:
        (_off, lg, tail) = comps[0]
        log_s = lg
        log_drop = tail
    else:
        work = int(np.prod([cp[1].size for cp in comps], dtype=float))
        acc = None
        scale = 0.0
        for cp in comps:
            mx = float(np.max(cp[1]))
            arr = np.exp(cp[1] - mx)
            scale += mx
            acc = arr if acc is None else convolve2d_direct(acc, arr)
            log_drop = np.logaddexp(log_drop, cp[2])
        with np.errstate(divide="ignore"):
            log_s = np.log(acc) + scale
        # flushed products: at most (number of products) * _TINY * e^scale
        log_drop = float(np.logaddexp(log_drop, math.log(work * _TINY) + scale))
    # target: +e0 w.p. p (D) / pbar (D'), +e1 w.p. pbar / p, nothing otherwise
    lr = math.log1p(-(krr.p + krr.pbar))
    pad = np.full((log_s.shape[0] + 1, log_s.shape[1] + 1), -np.inf)
    s00 = pad.copy()
    s00[:-1, :-1] = log_s  # S(a, b)
    s10 = pad.copy()
    s10[1:, :-1] = log_s  # S(a - 1, b)
    s01 = pad.copy()
    s01[:-1, 1:] = log_s  # S(a, b - 1)
    log_p = np.logaddexp(np.logaddexp(lp + s10, lq + s01), lr + s00)
    log_q = np.logaddexp(np.logaddexp(lq + s10, lp + s01), lr + s00)
    return _from_log_pq(others, family, "(h0,h1) marginal", log_p, log_q, log_drop, n, eps0)


# ---- (h0, h1) marginal of "all at x2" in O(n): one pair of binomial tails per T --------------


#: Half-width (standard deviations of ``T``) of the ``T`` range summed by the O(n) marginal.
_T_WINDOW_SD: float = 25.0
#: At most this many ``T`` values on each side of the mean (bounds the work at n ~ 1e9, where
#: it is 1.3 standard deviations, 13 at n = 1e7; dropping ``T`` values only lowers the value).
_T_MAX_HALF: float = 20_000.0
#: Relative error allowed for each log binomial tail / pmf (incomplete beta, Loader's pmf).
_TAIL_REL: float = 1e-10


@dataclass(frozen=True)
class SplitCandidate:
    """``(h0, h1)`` marginal of the dataset "others all at x2" (k >= 3), evaluated in O(n).

    With ``T = h0 + h1`` the others contribute ``T_o ~ Bin(n - 1, 2 pbar)`` outputs in
    ``{x0, x1}``, split ``Bin(T_o, 1/2)``. Writing ``B(t) = P(T_o = t)``, ``b_t`` the
    ``Bin(t, 1/2)`` pmf, ``r = (k - 2) pbar`` and ``E = e^eps``, the target's report gives

        P_D(T, h)  = B(T-1) [p b_{T-1}(h-1) + pbar b_{T-1}(h)] + r B(T) b_T(h)
        P_D'(T, h) = B(T-1) [pbar b_{T-1}(h-1) + p b_{T-1}(h)] + r B(T) b_T(h).

    Both share the factor ``b_T(h)`` (``b_{T-1}(h-1) = b_T(h) 2h/T``, ``b_{T-1}(h) = b_T(h)
    2(T-h)/T``), so ``P_D - E P_D'`` has the sign of a linear function of ``h`` with slope
    ``(p - pbar)(1 + E) > 0``: the optimal region is ``h >= h*(T)``, and its masses are binomial
    tails, ``sum_{h >= h*} P_D = B(T-1) [p SF_{T-1}(h*-1) + pbar SF_{T-1}(h*)] + r B(T) SF_T(h*)``
    (likewise for ``P_D'``). Summing ``P_D - E P_D'`` over *any* region is at most the
    hockey-stick divergence, so a ``T`` window (``+-`` :data:`_T_WINDOW_SD` sd) and any rounding
    of ``h*`` only lower the value; the tails are deflated / inflated by :data:`_TAIL_REL` so the
    difference is a lower bound. By the 0 <-> 1 relabelling the reverse direction is identical.
    """

    others: tuple[int, ...]
    family: str
    statistic: str
    k: int
    eps0: float
    n: int
    log_drop: float = -math.inf  # nothing is subtracted: omitted T only shrink the region

    @functools.cached_property
    def _t_terms(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The eps-independent part, computed once: ``T`` window, ``log B(T-1)``, ``log B(T)`` and
        ``(N - T + 1) q / (2 (1 - q)) = T B(T) / (2 B(T-1))``."""
        N = self.n - 1
        q = 2.0 * KRR(self.k, self.eps0).pbar
        mean, sd = N * q, math.sqrt(N * q * (1.0 - q))
        half = min(_T_WINDOW_SD * sd, _T_MAX_HALF)  # any T subset is valid (see class doc)
        t_lo = max(1, int(math.floor(mean - half)))
        t_hi = min(self.n, int(math.ceil(mean + half)) + 1)
        T = np.arange(t_lo, t_hi + 1, dtype=float)
        lB1 = _log_binom_pmf(T - 1.0, float(N), math.log(q), math.log1p(-q))
        lB0 = np.where(
            T <= N, _log_binom_pmf(np.minimum(T, N), float(N), math.log(q), math.log1p(-q)), -np.inf
        )
        ratio = (N - T + 1.0) * q / (2.0 * (1.0 - q))
        return T, lB1, lB0, ratio

    def log_delta(self, eps: np.ndarray) -> np.ndarray:
        """Sound lower bound on this dataset's marginal ``log delta`` at each eps."""
        e_arr = np.atleast_1d(np.asarray(eps, dtype=float)).ravel()
        krr = KRR(self.k, self.eps0)
        p, pbar = krr.p, krr.pbar
        lp, lq = krr.log_p, krr.log_pbar
        lr = math.log(self.k - 2) + lq
        T, lB1, lB0, ratio = self._t_terms
        out = np.full(e_arr.shape, -np.inf)
        for i, e in enumerate(e_arr):
            E = math.exp(e)
            if E >= p / pbar:
                continue  # the loss never exceeds eps0
            # g(h) T / (2 B(T-1)) = (p - pbar)(1 + E) h + T (pbar - E p) + r (1 - E) ratio
            root = -(T * (pbar - E * p) + (self.k - 2) * pbar * (1.0 - E) * ratio) / ((p - pbar) * (1.0 + E))
            h = np.clip(np.floor(root) + 1.0, 0.0, T + 1.0)
            s1m = _log_binom_sf(h - 1.0, T - 1.0, 0.5)  # P(Bin(T-1, 1/2) >= h - 1)
            s1 = _log_binom_sf(h, T - 1.0, 0.5)
            s0 = _log_binom_sf(h, T, 0.5)
            with np.errstate(divide="ignore", invalid="ignore"):
                log_a = np.logaddexp(np.logaddexp(lB1 + lp + s1m, lB1 + lq + s1), lB0 + lr + s0)
                log_b = np.logaddexp(np.logaddexp(lB1 + lq + s1m, lB1 + lp + s1), lB0 + lr + s0)
            # each term carries relative error <= _TAIL_REL (products of a few accurate factors);
            # a sum of positive terms keeps that, plus a few ulps per sequential logaddexp step
            rel = _TAIL_REL + 8.0 * _U * (T.size + 4)
            a = float(np.logaddexp.reduce(log_a)) + math.log1p(-rel)
            b = float(np.logaddexp.reduce(log_b)) + math.log1p(rel) + e
            if a > b:
                out[i] = float(log_sub(a, b))
        return out.reshape(np.shape(eps))


# ---- h0 (the histogram for k = 2) -----------------------------------------------------------


def h0_candidate(k, eps0, others, family, w) -> _Candidate | None:
    """Exhibited candidate from the ``h0`` marginal alone (the full histogram for ``k = 2``).

    A post-processing of the histogram, hence a sound lower bound on the dataset's delta; used
    where the ``(h0, h1)`` marginal is too large. ``None`` when it is too large as well.
    """
    krr = KRR(k, eps0)
    lp, lq = krr.log_p, krr.log_pbar
    l1mp = math.log(k - 1) + lq
    l1mq = math.log1p(-krr.pbar)
    n = sum(others) + 1
    c0 = others[0]
    comps = []
    for c, pi, l0, l1 in ((c0, krr.p, lp, l1mp), (n - 1 - c0, krr.pbar, lq, l1mq)):
        if c > 0:
            lo, hi, tail = binomial_window(c, pi, w)
            comps.append((lo, _log_binom_pmf(np.arange(lo, hi + 1, dtype=float), float(c), l0, l1), tail))
    if len(comps) == 1:
        _off, log_s, log_drop = comps[0]
    else:
        work = comps[0][1].size * comps[1][1].size
        if work > CONVOLUTION_BUDGET:
            return None
        m0, m1 = float(comps[0][1].max()), float(comps[1][1].max())
        acc = np.convolve(np.exp(comps[0][1] - m0), np.exp(comps[1][1] - m1))
        with np.errstate(divide="ignore"):
            log_s = np.log(acc) + m0 + m1
        log_drop = float(np.logaddexp.reduce([comps[0][2], comps[1][2], math.log(work * _TINY) + m0 + m1]))
    sh = np.concatenate(([-np.inf], log_s))
    un = np.concatenate((log_s, [-np.inf]))
    log_p = np.logaddexp(lp + sh, l1mp + un)
    log_q = np.logaddexp(lq + sh, l1mq + un)
    stat = "histogram" if k == 2 else "h0 count"
    return _from_log_pq(others, family, stat, log_p, log_q, log_drop, n, eps0)


def compact_bins(k: int, others: tuple[int, ...]) -> int:
    """:func:`exact.histogram_bins` of compact counts (no per-candidate work in ``k``).

    ``others`` holds the counts of values ``0 .. len(others) - 1`` (every searched dataset puts
    the other users on values 0, 1, 2 only; the rest of the ``k`` counts are 0). Validating or
    scanning all ``k`` counts per candidate cost ~0.1 - 0.5 s per candidate at ``k = 1e5 - 1e6``
    (issue 12: ``report --k 1000000`` stuck in this search).
    """
    held = sum(1 for c in others[2:] if c > 0)
    return 2 + held + (1 if k - 2 - held > 0 else 0)


def expand_counts(k: int, others: tuple[int, ...]) -> tuple[int, ...]:
    """The length-``k`` count vector of compact counts (values beyond ``len(others)`` are 0)."""
    return tuple(others) + (0,) * (k - len(others))


def _candidate(k, eps0, others, family, w, cache) -> _Candidate | None:
    key = tuple(others)
    if key in cache:
        return cache[key]
    n = sum(others) + 1
    cand = None
    nb = compact_bins(k, others)
    if k >= 3 and _exact.histogram_work(n, nb) <= HISTOGRAM_BUDGET:
        lpp, lqq = _exact.histogram_log_pq(k, eps0, expand_counts(k, others))
        cand = _from_log_pq(others, family, "histogram", lpp, lqq, -np.inf, n, eps0)
    elif k == 2:
        cand = h0_candidate(k, eps0, others, family, w)
    elif others[2] == n - 1 and n > 1:  # "all at x2": the (h0, h1) marginal in O(n)
        cand = SplitCandidate(tuple(others), family, "(h0,h1) marginal", k, eps0, n)
    else:
        cand = h01_candidate(k, eps0, others, family, w)
        if cand is None and sum(1 for c in (others[0], n - 1 - others[0]) if c > 0) == 1:
            cand = h0_candidate(k, eps0, others, family, w)  # too large for (h0, h1)
    cache[key] = cand
    return cand


# ---------------------------------------------------------------------------------------------
# the searched family
# ---------------------------------------------------------------------------------------------


def _counts(k: int, spec: dict[int, int]) -> tuple[int, ...]:
    """Compact counts of values ``0 .. min(k, 3) - 1`` (see :func:`compact_bins`, :func:`expand_counts`)."""
    out = [0] * min(k, 3)
    for v, c in spec.items():
        out[v] += c
    return tuple(out)


def _pure(k: int, n: int):
    vals = [0, 1] + ([2] if k >= 3 else [])
    return [(_counts(k, {v: n - 1}), f"all at x{v}") for v in vals]


def _pairs(k: int):
    # (x1, x2) mixtures are mirror images of (x0, x2) ones: swapping the labels 0 and 1 swaps
    # P and Q, and delta is the max over both directions; so they are not searched twice.
    return [(0, 2), (0, 1)] if k >= 3 else [(0, 1)]


def _mix(k: int, n: int, u: int, v: int, j: int):
    return _counts(k, {u: j, v: n - 1 - j}), f"mix x{u}/x{v} ({j} at x{u})"


def search_candidates(k, eps0, n, eps, w) -> list[_Candidate]:
    """Evaluate the family at the eps grid; returns all evaluated candidates."""
    cache: dict = {}
    cands = []
    for others, fam in _pure(k, n):
        c = _candidate(k, eps0, others, fam, w, cache)
        if c is not None:
            cands.append(c)
    if n < 3 or n > LARGE_N:
        return cands
    js_all = range(1, n - 1)
    for u, v in _pairs(k):
        if n - 2 <= 24:
            grid = list(js_all)
        else:
            geo = {int(round(x)) for x in np.geomspace(1, n - 2, 10)}
            lin = {int(round(x)) for x in np.linspace(1, n - 2, 9)}
            grid = sorted(geo | lin | {n - 1 - g for g in geo})
        vals = {}

        def ev(j, vals=vals, u=u, v=v):  # this iteration's values, bound explicitly
            if j in vals or not (1 <= j <= n - 2):
                return
            others, fam = _mix(k, n, u, v, j)
            c = _candidate(k, eps0, others, fam, w, cache)
            vals[j] = (c, None if c is None else c.log_delta(eps))
            if c is not None:
                cands.append(c)

        for j in grid:
            ev(j)
        if n - 2 > 24:
            # local refinement around the best split at each eps
            frontier = set()
            for _ in range(40):
                ok = {j: lv for j, (c, lv) in vals.items() if c is not None}
                if not ok:
                    break
                js = sorted(ok)
                mat = np.array([np.atleast_1d(ok[j]) for j in js])
                best = {js[i] for i in np.argmax(mat, axis=0)}
                new = set()
                for b in best:
                    i = js.index(b)
                    left = js[i - 1] if i > 0 else 0
                    right = js[i + 1] if i + 1 < len(js) else n - 1
                    for t in ((b + left) // 2, (b + right + 1) // 2, b - 1, b + 1):
                        if 1 <= t <= n - 2 and t not in vals:
                            new.add(t)
                if not new or new <= frontier:
                    break
                frontier |= new
                for t in sorted(new):
                    ev(t)
    return cands


def _evaluate(k, eps0, n, eps: np.ndarray, w: float):
    """Best log delta and its candidate at each eps (1-D array), widening windows as needed.

    A pass with window ``w`` loses up to ``e^eps * drop`` to truncation; where the answer is not
    far above that, the family is searched again with ``2.5 w`` and then with the full support
    (no truncation; ``(h0, h1)`` may fall back to ``h0`` there for cost).
    """
    best = np.full(eps.shape, -np.inf)
    who: list = [None] * eps.size
    who_val = np.full(eps.shape, -np.inf)
    todo = np.ones(eps.shape, dtype=bool)
    for width in (w, 2.5 * w, math.inf):
        cands = search_candidates(k, eps0, n, eps[todo], width)
        for c in cands:
            v = c.log_delta(eps)
            best = np.where(todo, np.maximum(best, v), best)
            # the reported dataset changes only on a clear improvement, so that ties within
            # rounding (e.g. mirror images) keep the first in family order
            tol = 1e-9 * np.maximum(1.0, np.abs(np.where(np.isfinite(who_val), who_val, 0.0)))
            clear = todo & ((v > who_val + tol) | (np.isneginf(who_val) & np.isfinite(v)))
            for i in np.flatnonzero(clear | np.array([x is None for x in who])):
                who[i] = c
                who_val[i] = v[i]
        drops = [c.log_drop for c in cands if np.isfinite(c.log_drop)]
        if not drops:
            break
        todo = best < eps + max(drops) + 30.0
        if not np.any(todo):
            break
    return best, who, who_val


def _check(k, eps0, n):
    k = check_int("k", k, minimum=2)
    eps0 = check_real("eps0", eps0, low=0.0, low_open=True)
    n = check_int("n", n, minimum=2)
    return k, eps0, n


def lower_log_delta(eps: Any, k: Any, eps0: Any, n: Any) -> np.ndarray:
    """Log of the largest exact delta over the searched family of datasets, at each eps.

    ``max_{D in family} log delta_D(eps)``, a *lower* bound on the worst-case
    ``log delta(eps)`` of shuffled k-RR with ``n`` users (module docstring: family, statistic,
    rounding).

    Args:
        eps: Scalar or array of ``eps >= 0``.
        k: Number of categories (integer >= 2).
        eps0: Local privacy of k-RR (finite, > 0).
        n: Number of users (integer >= 2).

    Returns:
        Float array of ``eps``'s shape (``-inf`` where every searched delta is 0).

    Raises:
        ParameterError: On invalid inputs, naming the parameter.

    Example:
        >>> import numpy as np
        >>> np.round(np.exp(lower_log_delta([0.0, 0.5], 3, 1.0, 5)), 6)
        array([0.192688, 0.052222])
    """
    eps_arr = check_real_array("eps", eps, low=0.0)
    k, eps0, n = _check(k, eps0, n)
    best, _, _ = _evaluate(k, eps0, n, eps_arr.ravel(), DEFAULT_WINDOW_SD)
    if k == 2:
        best = np.maximum(best, seed_log_delta_lower(eps_arr.ravel(), eps0, n)[0])
    return best.reshape(eps_arr.shape)


def lower_delta(eps: Any, k: Any, eps0: Any, n: Any) -> np.ndarray:
    """Largest exact delta over the searched datasets: ``exp`` of :func:`lower_log_delta`.

    A *lower* bound on the worst-case ``delta(eps)`` (rounded down); underflows to 0 below
    ``1e-308`` (use :func:`lower_log_delta` there).

    Args:
        eps: Scalar or array of ``eps >= 0``.
        k: Number of categories (integer >= 2).
        eps0: Local privacy of k-RR (finite, > 0).
        n: Number of users (integer >= 2).

    Returns:
        Float array of ``eps``'s shape.

    Raises:
        ParameterError: On invalid inputs, naming the parameter.

    Example:
        >>> float(lower_delta(3.0, 3, 1.0, 5))
        0.0
    """
    out = lower_log_delta(eps, k, eps0, n)
    with np.errstate(under="ignore"):
        return np.exp(out)


def worst_dataset(eps: Any, k: Any, eps0: Any, n: Any) -> WorstDataset:
    """The searched dataset with the largest exact delta at a scalar ``eps``.

    Args:
        eps: Scalar ``eps >= 0``.
        k: Number of categories (integer >= 2).
        eps0: Local privacy of k-RR (finite, > 0).
        n: Number of users (integer >= 2).

    Returns:
        A :class:`WorstDataset` (ties: the first in family order: pure datasets first).

    Raises:
        ParameterError: On invalid inputs, naming the parameter.

    Example:
        >>> wd = worst_dataset(1.5, 3, 2.0, 5)
        >>> wd.others, wd.family, wd.statistic, round(wd.delta, 6)
        ((3, 0, 1), 'mix x0/x2 (3 at x0)', 'histogram', 0.122132)
    """
    e = check_real("eps", eps, low=0.0)
    k, eps0, n = _check(k, eps0, n)
    _, who, who_val = _evaluate(k, eps0, n, np.array([e]), DEFAULT_WINDOW_SD)
    c, ld = who[0], float(who_val[0])
    others, family, statistic = expand_counts(k, c.others), c.family, c.statistic
    if k == 2:
        # the certified search's seeds (windowed leaves): where one is clearly above the
        # family's best (at large n, whose fixed-width statistic loses up to 5 % of log delta)
        sv, sc = seed_log_delta_lower([e], eps0, n)
        if sv[0] > ld + 1e-9 * max(1.0, abs(ld)) or (ld == -math.inf and sv[0] > -math.inf):
            ld, s_c = float(sv[0]), int(sc[0])
            others, family, statistic = (
                (s_c, n - 1 - s_c),
                f"seed of the certified search ({s_c} at x0)",
                "histogram",
            )
    return WorstDataset(
        eps=e,
        others=others,
        log_delta=ld,
        delta=math.exp(ld) if ld > -745 else 0.0,
        family=family,
        statistic=statistic,
    )


def lower_epsilon(delta: Any, k: Any, eps0: Any, n: Any) -> float:
    """A lower bound on the worst-case ``epsilon(delta)`` of shuffled k-RR, rounded down.

    For every searched dataset ``D``, ``delta_D(eps) > delta`` proves that no mechanism-level
    ``(eps, delta)`` guarantee holds, so ``epsilon(delta) >= sup{eps : delta_D(eps) > delta}``.
    This returns the largest such ``eps`` over the family, found by bisection that keeps only
    points where the certified-lower ``delta_D`` is strictly above ``delta`` (so the answer is
    never above the true root), and ``0.0`` if no searched dataset exceeds ``delta`` at eps 0.
    For ``k = 2`` the seed datasets of the certified search are added, by their windowed leaves
    (:func:`~shuffle_accounting.shuffled_krr.worst_case.seed_epsilon_lower`, rounding ~1e-10):
    at large ``n`` they are what keeps this within ~1e-7 of the worst case just below
    ``delta(0)``, where the family's fixed-width statistic loses up to 77 % (n = 1e7).

    Args:
        delta: Target delta in (0, 1).
        k: Number of categories (integer >= 2).
        eps0: Local privacy of k-RR (finite, > 0).
        n: Number of users (integer >= 2).

    Returns:
        The lower bound on epsilon (float, ``0 <= value < eps0``).

    Raises:
        ParameterError: On invalid inputs, naming the parameter.

    Example:
        >>> round(lower_epsilon(1e-3, 3, 1.0, 5), 4)
        0.9...
    """
    delta = check_delta("delta", delta)
    k, eps0, n = _check(k, eps0, n)
    w = max(6.0, math.sqrt(2.0 * math.log(1e6 / delta)) + 2.0)
    log_d = math.log(delta)
    grid = np.linspace(0.0, eps0, 9)[:-1]
    cands = search_candidates(k, eps0, n, grid, w)
    best = 0.0
    for c in cands:

        def log_delta_at(e: float, c=c) -> float:
            return float(c.log_delta(np.array([e]))[0])

        if not log_delta_at(best) > log_d:
            continue
        # the one root finder on this dataset's exhibited curve, kept on its lower side; the
        # caller vouches for both ends: delta_D(best) > delta was just evaluated, and
        # delta_D(eps0) = 0 <= delta (the release is eps0-LDP post-processing)
        lo = epsilon_from_delta(
            log_delta_at, delta, bound="lower", lo=best, hi=eps0, log=True, method="illinois",
            rtol=1e-10, atol=0.0, check_lo=False, max_iter=100,
        )  # fmt: skip
        best = max(best, lo)
    if k == 2:
        # the k = 2 search's seed datasets by its windowed leaves (rounding ~1e-10 relative):
        # the statistic above, windowed at a fixed number of standard deviations, loses more at
        # large n (n = 1e7, eps0 = 2: 0.2 % of epsilon at delta = 1e-4 delta(0), 77 % just below
        # delta(0), where every dataset is within 1e-7 of the others)
        best = max(best, seed_epsilon_lower(delta, eps0, n)[0])
    return float(np.nextafter(best, 0.0)) if best > 0 else 0.0
