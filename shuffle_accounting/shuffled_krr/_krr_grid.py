"""Internal numerics: windowed lattice laws of shuffled 3-RR histograms with rigorous error terms.

Shared by :mod:`~shuffle_accounting.shuffled_krr.worst_case_k` (the certified worst case for
``k = 3``) and :mod:`~shuffle_accounting.shuffled_krr.exact` (per-dataset deltas at scale). Not a
public API: the names here may change without notice.

Coordinates. For ``k = 3`` the shuffled release is the histogram ``(h0, h1, h2)`` with
``h0 + h1 + h2 = n``. Pick one value ``v`` (the *pivot*) and order the other two as ``d``
("designated") and ``o``; the histogram is in bijection with ``(N, j)``, ``N`` the number of
reports different from ``v`` and ``j`` the number of reports equal to ``d``. A report ``v`` moves
``(N, j)`` by ``(0, 0)``, a report ``d`` by ``(1, 1)``, a report ``o`` by ``(1, 0)``.

Pivot class plus uniform pool. ``c`` users holding ``v`` report ``v`` with probability ``p`` and
each other value with probability ``pbar``; ``b`` users reporting uniformly report each value
with probability ``1/3``. For both kinds a report different from ``v`` is ``d`` or ``o`` with
probability ``1/2`` each, independently of everything else, so their joint law is

    R(N, j) = P(N_o = N) * Bin(N, 1/2)(j),   N_o ~ Bin(c, 2 pbar) + Bin(b, 2/3)  (independent).

Other classes (users holding ``d`` or ``o``) are added by direct 2-D convolution with their
trinomial laws.

Error model (every quantity is an upper or lower bound, never an estimate):

* A :class:`Grid` holds non-negative numbers ``arr`` scaled by ``e^scale`` on a rectangle of
  ``(N, j)``; the true law ``R`` satisfies ``R(x) >= arr(x) e^scale (1 - rel)`` on the rectangle
  and ``sum_x (R(x) - arr(x) e^scale (1 + rel))_+ <= e^log_drop`` over the whole lattice (the
  *dropped mass*: binomial tails outside the windows, bounded by the upper-bounding tails of
  :mod:`~shuffle_accounting._binomial` and doubled, entries flushed below ``e^-700`` of the
  maximum, products that underflowed).
* Binomial log-pmfs are Loader's (:func:`~shuffle_accounting._binomial.log_binom_pmf`, relative
  error ~1e-13), counted as ``1e-10``.
* Convolutions are direct sums of non-negative products (``numpy.convolve`` /
  ``scipy.signal.convolve2d``, never FFT): relative error at most ``(L + 2) u`` for ``L`` terms,
  and the dropped mass of a sum of independent variables is at most the sum of the dropped masses
  (each law has total mass ``<= 1``) plus the underflowed products.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.signal import convolve2d

from .._binomial import log_binom_cdf, log_binom_pmf, log_binom_sf, logsumexp

__all__ = ["Law1D", "Grid", "binom_window", "conv1d", "pivot_grid", "class_grid", "conv2d", "Hockey"]

_U = 2.0**-52
#: Relative error counted for each Loader log-pmf (measured ~1e-13).
REL_PMF = 1e-10
#: Bound on one product that fell below the normal range.
_TINY = 2.3e-308
#: Entries below ``e^-700`` of a window's maximum are moved into the dropped mass.
_FLUSH = -700.0
_LOG_HALF = -math.log(2.0)


class Law1D:
    """A 1-D windowed law: ``true(lo + i)`` in ``[arr_i e^scale (1 - rel), arr_i e^scale (1 + rel)]``
    up to a total dropped mass ``e^log_drop``."""

    __slots__ = ("lo", "arr", "scale", "log_drop", "rel")

    def __init__(self, lo: int, arr: np.ndarray, scale: float, log_drop: float, rel: float) -> None:
        self.lo, self.arr, self.scale, self.log_drop, self.rel = lo, arr, scale, log_drop, rel


class Grid:
    """A 2-D windowed law on ``N in [n_lo, n_lo + rows)``, ``j in [j_lo, j_lo + cols)`` (module doc)."""

    __slots__ = ("n_lo", "j_lo", "arr", "scale", "log_drop", "rel")

    def __init__(self, n_lo: int, j_lo: int, arr: np.ndarray, scale: float, log_drop: float, rel: float):
        self.n_lo, self.j_lo, self.arr, self.scale, self.log_drop, self.rel = n_lo, j_lo, arr, scale, log_drop, rel


def _flush(lp: np.ndarray) -> tuple[np.ndarray, float, float]:
    """``(scaled values, scale, log of the flushed mass)`` of a log-pmf array."""
    mx = float(np.max(lp))
    keep = lp - mx > _FLUSH
    flushed = -math.inf
    if not np.all(keep):
        flushed = float(logsumexp(lp[~keep & np.isfinite(lp)])) + math.log1p(REL_PMF)
    with np.errstate(under="ignore"):
        arr = np.where(keep, np.exp(np.where(keep, lp - mx, 0.0)), 0.0)
    return arr, mx, flushed


def binom_window(N: int, log_pi: float, log_1mpi: float, log_tol: float) -> tuple[int, np.ndarray, float]:
    """``Bin(N, pi)`` on a window ``[lo, lo + len)``: ``(lo, log-pmf, log of the mass outside)``.

    The window ``mean +- z sd`` widens until the (doubled, upper-bounding) tail mass is at most
    ``e^log_tol``. Given in logs; for ``pi > 1/2`` the reflection ``N - Bin(N, 1 - pi)`` is used so
    every tail is computed on the smaller probability.
    """
    if N == 0:
        return 0, np.zeros(1), -math.inf
    if log_pi > log_1mpi:
        lo, lp, lt = binom_window(N, log_1mpi, log_pi, log_tol)
        return N - (lo + lp.size - 1), lp[::-1].copy(), lt
    pi = math.exp(log_pi)
    mean, sd = N * pi, math.sqrt(N * pi * (1.0 - pi))
    z = max(8.0, math.sqrt(2.0 * max(0.0, -log_tol)) + 2.0)
    while True:
        lo = max(0, int(math.floor(mean - z * sd)) - 2)
        hi = min(N, int(math.ceil(mean + z * sd)) + 2)
        tails = []
        if lo > 0:
            tails.append(float(log_binom_cdf(lo - 1, N, pi)))
        if hi < N:
            tails.append(float(log_binom_sf(hi + 1, N, pi)))
        ltail = float(logsumexp(tails)) + math.log(2.0) if tails else -math.inf
        if ltail <= log_tol or (lo == 0 and hi == N):
            break
        z *= 1.5
    x = np.arange(lo, hi + 1, dtype=float)
    return lo, log_binom_pmf(x, float(N), log_pi, log_1mpi), ltail


def law_from_binom(N: int, log_pi: float, log_1mpi: float, log_tol: float) -> Law1D:
    """:func:`binom_window` as a scaled :class:`Law1D`."""
    lo, lp, lt = binom_window(N, log_pi, log_1mpi, log_tol)
    arr, mx, fl = _flush(lp)
    return Law1D(lo, arr, mx, float(np.logaddexp(lt, fl)), REL_PMF + 4.0 * _U)


def conv1d(a: Law1D, b: Law1D) -> Law1D:
    """Law of the sum of two independent :class:`Law1D` (direct convolution)."""
    if a.arr.size == 1 and a.lo == 0 and a.log_drop == -math.inf and a.scale == 0.0 and a.arr[0] == 1.0:
        return b
    if b.arr.size == 1 and b.lo == 0 and b.log_drop == -math.inf and b.scale == 0.0 and b.arr[0] == 1.0:
        return a
    work = float(a.arr.size) * float(b.arr.size)
    arr = np.convolve(a.arr, b.arr)
    L = min(a.arr.size, b.arr.size)
    scale = a.scale + b.scale
    rel = a.rel + b.rel + a.rel * b.rel + (L + 2) * _U
    log_drop = float(logsumexp([a.log_drop, b.log_drop, math.log(work * _TINY) + scale]))
    return Law1D(a.lo + b.lo, arr, scale, log_drop, rel)


def pivot_grid(no_law: Law1D, log_tol: float, log_r: float = _LOG_HALF, log_1mr: float = _LOG_HALF) -> Grid:
    """``R(N, j) = P(N_o = N) Bin(N, r)(j)`` on a rectangle (module docstring; ``r = 1/2`` by default).

    ``no_law`` is the law of ``N_o``; the ``j`` window covers ``N r +- z sqrt(N r (1 - r))`` for every
    ``N`` of that law's window, and the mass of ``Bin(N, r)`` outside it (doubled tail bounds, per
    ``N``, weighted by ``P(N_o = N)`` rounded up) is added to the dropped mass. Any class of
    users whose reports different from ``v`` are ``d`` with a fixed probability ``r`` has this form
    (a class holding ``d``: ``N_o ~ Bin(c, p + pbar)``, ``r = p / (p + pbar)``).
    """
    n_lo = no_law.lo
    n_hi = n_lo + no_law.arr.size - 1
    z = max(8.0, math.sqrt(2.0 * max(0.0, -log_tol)) + 2.0)
    Ns = np.arange(n_lo, n_hi + 1, dtype=float)
    with np.errstate(divide="ignore"):
        lpn = np.log(no_law.arr) + no_law.scale + math.log1p(no_law.rel)
    r = math.exp(log_r)
    sdr = math.sqrt(max(n_hi, 1) * r * (1.0 - r))
    while True:
        j_lo = max(0, int(math.floor(n_lo * r - z * sdr)) - 2)
        j_hi = min(n_hi, int(math.ceil(n_hi * r + z * sdr)) + 2)
        with np.errstate(divide="ignore"):
            lt_lo = np.where(j_lo > 0, log_binom_cdf(np.full(Ns.shape, j_lo - 1.0), Ns, r), -np.inf)
            lt_hi = np.where(Ns > j_hi, log_binom_sf(np.full(Ns.shape, j_hi + 1.0), Ns, r), -np.inf)
        tails = np.logaddexp(lt_lo, lt_hi) + math.log(2.0)
        ltail = float(logsumexp(lpn + tails))
        if ltail <= log_tol or (j_lo == 0 and j_hi == n_hi):
            break
        z *= 1.5
    J = np.arange(j_lo, j_hi + 1, dtype=float)
    NN, JJ = np.meshgrid(Ns, J, indexing="ij")
    valid = JJ <= NN
    lb = np.where(valid, log_binom_pmf(np.where(valid, JJ, 0.0), NN, log_r, log_1mr), -np.inf)
    with np.errstate(divide="ignore"):
        lr = np.log(no_law.arr)[:, None] + lb
    arr, mx, fl = _flush(lr)
    log_drop = float(logsumexp([no_law.log_drop, ltail, fl + no_law.scale]))
    return Grid(n_lo, j_lo, arr, mx + no_law.scale, log_drop, no_law.rel + REL_PMF + 4.0 * _U)


def class_grid(c: int, log_v: float, log_d: float, log_o: float, log_tol: float) -> Grid:
    """Windowed trinomial law in ``(N, j)`` of ``c`` users reporting ``v, d, o`` w.p. ``e^log_v, e^log_d, e^log_o``.

    ``N ~ Bin(c, pi_d + pi_o)`` and, given ``N``, ``j ~ Bin(N, pi_d / (pi_d + pi_o))``: the form of
    :func:`pivot_grid`, windowed the same way (dropped mass at most about ``2 e^log_tol``).
    """
    l_do = float(np.logaddexp(log_d, log_o))
    no = law_from_binom(c, l_do, log_v, log_tol)
    return pivot_grid(no, log_tol, log_d - l_do, log_o - l_do)


def conv2d(a: Grid, b: Grid) -> Grid:
    """Law of the sum of two independent :class:`Grid` laws (direct 2-D convolution)."""
    if b.arr.size > a.arr.size:
        a, b = b, a
    work = float(a.arr.size) * float(b.arr.size)
    arr = convolve2d(a.arr, b.arr, mode="full")
    scale = a.scale + b.scale
    rel = a.rel + b.rel + a.rel * b.rel + (b.arr.size + 2) * _U
    log_drop = float(logsumexp([a.log_drop, b.log_drop, math.log(work * _TINY) + scale]))
    return Grid(a.n_lo + b.n_lo, a.j_lo + b.j_lo, arr, scale, log_drop, rel)


class Hockey:
    """``H_E(P || Q)`` for ``P`` / ``Q`` = (target's report) + (others' law ``R``), with bounds.

    ``pi_p`` / ``pi_q`` are the log-probabilities of the target's report being ``(v, d, o)`` under
    the two datasets. ``P(N, j) = sum_y pi_p(y) R((N, j) - shift(y))`` (``shift(v) = (0, 0)``,
    ``shift(d) = (1, 1)``, ``shift(o) = (1, 0)``). With ``rho`` the relative error of the
    computed ``P~, Q~`` and ``d`` the dropped mass of ``R`` (hence of ``P`` and ``Q``):

        H <= sum_x (P~(1 + rho) - E Q~(1 - rho))_+ + d,
        H >= sum_x (P~(1 - rho) - E Q~(1 + rho))_+ - E d,

    since ``sum_x (P(x) - E Q(x))_+`` is monotone in ``P(x)`` and ``-Q(x)``, the mass ``P`` loses
    to the window is at most ``d`` (inside or outside it), and ``Q`` exceeds its window values
    by at most ``d`` in total. Each cell's arithmetic adds ``4u (P + E Q)``; the sum of ``M``
    non-negative terms adds ``M u`` relative.
    """

    __slots__ = ("P", "Q", "scale", "log_drop", "rho", "size")

    def __init__(self, R: Grid, pi_p: tuple[float, float, float], pi_q: tuple[float, float, float]) -> None:
        rows, cols = R.arr.shape
        z = np.zeros((rows + 1, cols + 1))
        s00, s11, s10 = z.copy(), z.copy(), z.copy()
        s00[:-1, :-1] = R.arr
        s11[1:, 1:] = R.arr
        s10[1:, :-1] = R.arr
        cp = [math.exp(x) for x in pi_p]
        cq = [math.exp(x) for x in pi_q]
        self.P = cp[0] * s00 + cp[1] * s11 + cp[2] * s10
        self.Q = cq[0] * s00 + cq[1] * s11 + cq[2] * s10
        self.scale = R.scale
        self.log_drop = R.log_drop
        self.rho = R.rel + 8.0 * _U
        self.size = self.P.size

    def bounds(self, eps: float) -> tuple[float, float]:
        """``(log upper, log lower)`` bounds on ``H_{e^eps}(P || Q)`` (upper capped at 0)."""
        E = math.exp(eps)
        P, Q, rho = self.P, self.Q, self.rho
        EQ = E * Q
        err = 4.0 * _U * (P + EQ)
        up = float(np.sum(np.maximum(P * (1.0 + rho) - EQ * (1.0 - rho) + err, 0.0)))
        up *= 1.0 + (self.size + 4) * _U
        low = float(np.sum(np.maximum(P * (1.0 - rho) - EQ * (1.0 + rho) - err, 0.0)))
        low *= 1.0 - (self.size + 4) * _U
        log_up = float(np.logaddexp(math.log(up) + self.scale if up > 0 else -math.inf, self.log_drop))
        log_low = -math.inf
        if low > 0:
            ll = math.log(low) + self.scale
            corr = eps + self.log_drop
            if corr < ll:
                log_low = ll + math.log(-math.expm1(corr - ll))
        return min(log_up, 0.0), min(log_low, log_up)
