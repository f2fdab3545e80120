"""Certified exact worst case of shuffled binary randomized response (k = 2) by branch and bound.

Setting. ``n`` users apply binary randomized response with local privacy ``eps0``: a user reports
its bit with probability ``p = e^eps0 / (e^eps0 + 1)`` and the other bit with probability
``pbar = 1 - p``; equivalently it reports a uniform bit with probability ``gamma = 2 pbar`` and
its true bit otherwise. The shuffled release is ``S``, the number of reported ones (for ``k = 2``
the histogram is ``S``). The target holds 0 in ``D`` and 1 in ``D'``; the other ``n - 1`` users
are arbitrary, and by exchangeability a dataset is fixed by ``c`` = the number of them at value 0
(the rest, ``n - 1 - c``, at value 1). With ``E = e^eps``, ``P_c`` / ``Q_c`` the law of ``S`` under
``D`` / ``D'`` and ``H_E(P || Q) = sum_s (P(s) - E Q(s))_+``:

    delta_c(eps) = max(h_c, h'_c),   h_c = H_E(P_c || Q_c),   h'_c = H_E(Q_c || P_c).

Facts used (each proved here):

(F1) *Mirror.* Relabelling the bits 0 <-> 1 maps ``S -> n - S`` and dataset ``c`` with the target
at 0 (at 1) to dataset ``n - 1 - c`` with the target at 1 (at 0), so ``h'_c = h_{n-1-c}``, hence
``delta_c = delta_{n-1-c}`` and **sup_c delta_c = max_{0 <= c <= n-1} h_c**. The branch and bound
therefore covers ``c in [0, n - 1]`` with bounds on the single direction ``h_c``.

(F2) *Threshold form.* Write ``S = T + Y`` with ``T`` the target's report and ``Y`` the others'
count, ``Y ~ Bin(c, pbar) + Bin(n - 1 - c, p)`` (independent). Then
``P(s) = p Y(s) + pbar Y(s-1)``, ``Q(s) = pbar Y(s) + p Y(s-1)`` and
``P(s)/Q(s) = (p r + pbar)/(pbar r + p)`` with ``r = Y(s)/Y(s-1)``, increasing in ``r``
because ``p > pbar``. ``Y`` is a sum of independent Bernoulli variables, hence log-concave, so
``r`` (and ``P/Q``) is non-increasing in ``s``: ``{P > E Q}`` is a lower set ``{s <= t*}`` and

    H_E(P || Q) = max_t D(t),   D(t) = P(S <= t) - E Q(S <= t) = a Y(t) - b F(t - 1),

``a = p - E pbar = -p expm1(eps - eps0)``, ``b = E - 1 = expm1(eps)``, ``F`` the CDF of ``Y``
(and ``D(-1) = 0``). Every ``D(t)`` is a lower bound on ``H``; the max is ``H``. The same holds
for any ``Y`` that is a sum of independent Bernoullis, in particular for ``Y_B`` below.

(F3) *Interval bound.* Fix ``0 <= c1 <= c2 <= n - 1``, ``m = c2 - c1``. Every dataset
``c in [c1, c2]`` has ``c1`` users at 0 and ``n - 1 - c2`` at 1 in common ("fixed"); the other
``m`` ("free") hold ``c - c1`` zeros and ``c2 - c`` ones. Give the adversary, for each free user,
its coin (uniform or not) and, when not uniform, its report. This view ``V`` = (coins, revealed
reports, ``S``) contains ``S``, so by post-processing ``H_E(P_c || Q_c) <= H_E(P_V || Q_V)``. The
coins and the revealed reports do not depend on the target's value, so with ``W`` = (coins,
revealed reports) having the same law under ``D`` and ``D'``,
``H_E(P_V || Q_V) = E_W H_E(P_{S|W} || Q_{S|W})`` (the hockey-stick sum splits over the values
of ``W``; this is the equality case of joint convexity). Given ``W`` with ``B`` uniform coins,
``S = T + Bin(c1, pbar) + Bin(n-1-c2, p) + Bin(B, 1/2) + (known shift)``, and ``H_E`` is
invariant under a common known shift, so with ``B ~ Bin(m, gamma)`` and
``g(b) = H_E(T + Y_b)``, ``Y_b = Bin(c1, pbar) + Bin(n-1-c2, p) + Bin(b, 1/2)``:

    h_c <= U(c1, c2) = E_B g(B)   for every c in [c1, c2],

independently of ``c``. For ``c1 = c2`` (``m = 0``) this is ``g(0) = h_{c1}`` exactly; for
``[0, n-1]`` it is the privacy-blanket divergence (Balle, Bell, Gascón, Nissim, CRYPTO 2019)
for ``k = 2``. The two-direction bound ``max(U(c1, c2), U(n-1-c2, n-1-c1)) >= delta_c`` follows by
(F1).

(F4) *Monotone in B.* ``Y_{b+1} = Y_b + (independent fair bit)``: adding independent noise to
both ``P`` and ``Q`` is post-processing, so ``g`` is non-increasing. For cells
``0 = s_0 < s_1 < ... < s_J <= m`` (``s_{J+1} = m + 1``),
``E_B g(B) <= sum_j P(s_j <= B < s_{j+1}) g(s_j)`` with no truncation error: tails of ``B``
are cells of their own (the lowest cell ``[0, s_1)`` is bounded by ``g <= 1``).

Computation and rounding (all outward):

* Each binomial is held on a window ``mean +- z sd`` (Loader's log-pmf from
  :mod:`~shuffle_accounting.shuffled_krr.blanket`, relative error ~1e-13, counted as 1e-10); the
  mass outside, bounded by the (upper-bounded) exact binomial tails, plus entries flushed below
  ``e^-700`` of the window's maximum, is a *dropped mass* ``d`` carried with each distribution.
  Windows widen until ``d`` is below ``e^-25`` of the level of interest (a current delta), so the
  truncation only affects the bound at relative ``1e-11``; it is always added.
* Convolutions are direct sums of non-negative scaled terms (``numpy.convolve``, never FFT):
  relative error ``<= L u`` for ``L`` terms; products below the normal range are bounded by
  ``2.3e-308`` each and added to ``d``; the dropped mass of a sum is at most the sum of the
  dropped masses.
* With ``Y~`` the computed window values (relative error ``rho``) and ``F~`` their prefix sums:
  ``Y(t) <= Y~(t)(1 + rho) + d``, ``F(t-1) >= F~(t-1)(1 - rho')`` (dropping mass only lowers
  ``F``); for ``t`` below the window ``D(t) <= P(Y < lo) <= d`` and for ``t`` above it
  ``D(t) <= D(hi + 1) + P(Y > hi) <= D(hi + 1) + d`` (the increments beyond ``t*`` are negative).
  So ``H <= max(0, max_window (a (Y~(1+rho) + d) - b F~ (1 - rho'))) + d``, plus ``8u`` of the
  magnitudes for the arithmetic. Lower bounds (the exhibited values) use the opposite
  directions: ``D(t) >= a Y~(1-rho) - b (F~(1+rho') + d)``.
* Cell weights ``P(s_j <= B < s_{j+1})`` are Loader pmf sums inflated by ``1e-9``, and exact
  binomial tail bounds for the end cells.

Branch and bound. Intervals sit in a priority queue by their bound; the worst one is split at
its midpoint; one-point intervals are exact leaves (bound ``h_c`` rounded up, exhibited value
``h_c`` rounded down). For ``delta(eps)`` it stops when the largest bound is within ``(1 + tol)``
of the best exhibited leaf; for ``epsilon(delta)`` it keeps ``eps_up = (1 + tol) eps_low``
(``eps_low`` the largest exhibited leaf epsilon) and splits until every interval's bound at some
``eps' <= eps_up`` is ``<= delta`` (``h_c`` is non-increasing in ``eps``, so a bound proved at
``eps'`` holds at ``eps_up``). The final intervals with their bounds form a
:class:`WorstCaseCertificate` that :func:`verify` re-checks from scratch.

Example:
    >>> cert = certify(2.0, 1000, delta=1e-6)
    >>> round(cert.epsilon_lower, 8), cert.worst_c in (2, 997)
    (0.32332355, True)
    >>> bool(cert.epsilon_lower <= cert.epsilon <= cert.epsilon_lower * (1 + 1e-6))
    True
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from .._binomial import log_binom_cdf as _log_binom_cdf
from .._binomial import log_binom_pmf as _log_binom_pmf
from .._binomial import log_binom_sf as _log_binom_sf
from .._binomial import logsumexp
from .._logmath import UNIT_ROUNDOFF, bisect_bracket
from .._validation import ParameterError, check_delta, check_int, check_real

__all__ = [
    "CoverInterval",
    "WorstCaseCertificate",
    "WorkBudgetExceeded",
    "certify",
    "verify",
    "interval_log_bound",
    "leaf_log_delta",
    "MAX_CONV_WORK",
]

_U = 2.0 * UNIT_ROUNDOFF  # machine epsilon 2^-52: the error budgets below are in units of 2u
#: Relative error counted for each Loader log-pmf / tail (measured ~1e-13).
_REL_PMF = 1e-10
#: Bound on one product that fell below the normal range (as in ``lower``).
_TINY = 2.3e-308
#: Entries below ``e^-700`` of a window's maximum are moved into the dropped mass.
_FLUSH = -700.0
#: Windows are widened until the dropped mass is below ``e^-_DROP_MARGIN`` times the level.
_DROP_MARGIN = 25.0
#: Up to this many free users, every value of ``B`` is its own cell (exact expectation).
_EXACT_CELLS = 32
#: Number of cells of ``B`` inside its window for wider intervals.
_CELLS = 12
#: Up to this many multiply-adds a law is convolved in full (then every eps is one vector pass).
_DIRECT_WORK = 2e6
#: Largest multiply-add count of one convolution; above it :class:`WorkBudgetExceeded` is raised.
MAX_CONV_WORK = 4e8


class WorkBudgetExceeded(RuntimeError):
    """The branch and bound would exceed its work budget (no certified value was produced)."""


# ---------------------------------------------------------------------------------------------
# windowed distributions with rigorous error terms
# ---------------------------------------------------------------------------------------------


class _Dist:
    """A lattice distribution on a window: ``true(lo + i) in [arr_i (1 - rel), arr_i (1 + rel) + d]``.

    ``arr`` is scaled by ``e^scale`` (true value = ``arr * e^scale``), entries non-negative;
    ``log_drop`` is the log of ``d`` (unscaled), an upper bound on the total mass the window
    misses (outside mass, flushed entries and flushed products).
    """

    __slots__ = ("lo", "arr", "scale", "log_drop", "rel")

    def __init__(self, lo: int, arr: np.ndarray, scale: float, log_drop: float, rel: float) -> None:
        self.lo, self.arr, self.scale, self.log_drop, self.rel = lo, arr, scale, log_drop, rel


def _binom(N: int, log_pi: float, log_1mpi: float, log_tol: float) -> _Dist:
    """``Bin(N, pi)`` on a window whose dropped mass is at most about ``e^log_tol``.

    Given in logs (``pi`` may round to 0 or 1 in double precision, e.g. ``p`` at ``eps0 = 300``);
    for ``pi > 1/2`` the law is the reflection ``N - Bin(N, 1 - pi)``, so every computation
    works with the smaller probability. Tail bounds are doubled (covers their rounding).
    """
    if N == 0:
        return _Dist(0, np.ones(1), 0.0, -math.inf, 0.0)
    if log_pi > log_1mpi:
        d = _binom(N, log_1mpi, log_pi, log_tol)
        return _Dist(N - (d.lo + d.arr.size - 1), d.arr[::-1].copy(), d.scale, d.log_drop, d.rel)
    pi = math.exp(log_pi)
    mean, sd = N * pi, math.sqrt(N * pi * (1.0 - pi))
    z = max(8.0, math.sqrt(2.0 * max(0.0, -log_tol)) + 2.0)
    while True:
        lo = max(0, int(math.floor(mean - z * sd)) - 2)
        hi = min(N, int(math.ceil(mean + z * sd)) + 2)
        tails = []
        if lo > 0:
            tails.append(float(_log_binom_cdf(lo - 1, N, pi)))
        if hi < N:
            tails.append(float(_log_binom_sf(hi + 1, N, pi)))
        ltail = float(logsumexp(tails)) + math.log(2.0) if tails else -math.inf
        if ltail <= log_tol or (lo == 0 and hi == N):
            break
        z *= 1.5
    x = np.arange(lo, hi + 1, dtype=float)
    lp = _log_binom_pmf(x, float(N), log_pi, log_1mpi)
    mx = float(np.max(lp))
    keep = lp - mx > _FLUSH
    flushed = float(logsumexp(lp[~keep])) + math.log1p(_REL_PMF) if not np.all(keep) else -math.inf
    with np.errstate(under="ignore"):
        arr = np.where(keep, np.exp(lp - mx), 0.0)
    return _Dist(lo, arr, mx, float(np.logaddexp(ltail, flushed)), _REL_PMF + 4.0 * _U)


def _conv(a: _Dist, b: _Dist) -> _Dist:
    """Law of the sum of two independent windowed distributions (direct convolution)."""
    if a.arr.size == 1 and a.lo == 0 and a.log_drop == -math.inf and a.scale == 0.0 and a.arr[0] == 1.0:
        return b
    if b.arr.size == 1 and b.lo == 0 and b.log_drop == -math.inf and b.scale == 0.0 and b.arr[0] == 1.0:
        return a
    work = float(a.arr.size) * float(b.arr.size)
    if work > MAX_CONV_WORK:
        raise WorkBudgetExceeded(
            f"a convolution of {a.arr.size} x {b.arr.size} terms exceeds {MAX_CONV_WORK:.3g}"
        )
    arr = np.convolve(a.arr, b.arr)
    L = min(a.arr.size, b.arr.size)
    scale = a.scale + b.scale
    # relative: both factors (a.rel + b.rel + their product) and the summation of L terms;
    # absolute: each input's dropped mass (the other is a probability law, total <= 1) and
    # flushed products
    rel = a.rel + b.rel + a.rel * b.rel + (L + 2) * _U
    log_drop = float(logsumexp([a.log_drop, b.log_drop, math.log(work * _TINY) + scale]))
    return _Dist(a.lo + b.lo, arr, scale, log_drop, rel)


def _hockey(Y: _Dist, eps: float, p: float, eps0: float) -> tuple[float, float]:
    """``(log upper, log lower)`` bounds on ``H_E(T + Y || T' + Y)`` by (F2) (module docstring)."""
    if eps >= eps0:
        return -math.inf, -math.inf
    a = -p * math.expm1(eps - eps0)  # p - E pbar > 0
    b = math.expm1(eps)  # E - 1
    mag_a = p * (1.0 + math.exp(eps - eps0))  # |p| + E pbar, for the rounding of a
    ys = np.append(Y.arr, 0.0)  # t = lo .. hi + 1
    cs = np.cumsum(Y.arr)
    fs = np.concatenate(([0.0], cs))  # F~(t - 1)
    L = Y.arr.size
    rel_y = 2.0 * Y.rel + 4.0 * _U
    rel_f = rel_y + (L + 2) * _U
    ld = Y.log_drop - Y.scale
    d = math.exp(ld) if ld < 700.0 else math.inf
    y_up = ys * (1.0 + rel_y) + d
    err = 8.0 * _U * (mag_a * y_up + (b + 2.0) * fs)
    with np.errstate(invalid="ignore", over="ignore"):
        up_t = a * y_up - b * fs * (1.0 - rel_f) + err
        low_t = a * ys * (1.0 - rel_y) - b * (fs * (1.0 + rel_f) + d) - err
    up = float(np.max(up_t))
    log_up = float(np.logaddexp(math.log(up) + Y.scale if up > 0 else -math.inf, Y.log_drop))
    low = float(np.max(low_t))
    log_low = math.log(low) + Y.scale if low > 0 and math.isfinite(low) else -math.inf
    return min(log_up, 0.0), min(log_low, log_up)


def _pair_values(x: _Dist, y: _Dist, ts: np.ndarray, cum_y: np.ndarray, cum_x: np.ndarray):
    """Computed ``(Y~(t), F~(t - 1))`` of the law of ``X + Y`` at integer points ``ts``.

    ``Y(t) = sum_s x(s) y(t - s)`` and ``F(t - 1) = sum_s x(s) F_y(t - 1 - s)``: dot products over
    the (shorter) overlap, so one point costs O(window) instead of a full convolution. ``cum_y`` /
    ``cum_x`` are the prefix sums of ``y.arr`` / ``x.arr``. Both are sums of non-negative terms.
    """
    ly, Ly = y.lo, y.arr.size
    lx, Lx = x.lo, x.arr.size
    ytot = float(cum_y[-1])
    yv = np.empty(ts.size)
    fv = np.empty(ts.size)
    for i, t in enumerate(ts.tolist()):
        # Y(t): s with 0 <= s - lx < Lx and 0 <= t - s - ly < Ly
        s0 = max(lx, t - ly - Ly + 1)
        s1 = min(lx + Lx - 1, t - ly)
        if s1 >= s0:
            yv[i] = float(np.dot(x.arr[s0 - lx : s1 - lx + 1], y.arr[t - s1 - ly : t - s0 - ly + 1][::-1]))
        else:
            yv[i] = 0.0
        # F(t-1): x(s) F_y(t-1-s); F_y = ytot for t-1-s >= ly+Ly-1, 0 for t-1-s < ly
        full_hi = min(lx + Lx - 1, t - ly - Ly)  # s <= full_hi: F_y complete
        f = ytot * float(cum_x[full_hi - lx]) if full_hi >= lx else 0.0
        s0 = max(lx, full_hi + 1)
        s1 = min(lx + Lx - 1, t - 1 - ly)
        if s1 >= s0:
            f += float(
                np.dot(x.arr[s0 - lx : s1 - lx + 1], cum_y[t - 1 - s1 - ly : t - 1 - s0 - ly + 1][::-1])
            )
        fv[i] = f
    return yv, fv


def _hockey_pair(x: _Dist, y: _Dist, eps: float, p: float, eps0: float) -> tuple[float, float]:
    """``(log upper, log lower)`` on ``H_E(T + X + Y || T' + X + Y)`` without the full convolution.

    Finds the threshold ``t*`` of (F2) approximately, then *proves* a bracket
    ``t_a <= t* < t_b`` from the signs of the increments ``Delta(t) = a Y(t) - a' Y(t-1)``
    (``a' = E p - pbar``; ``Delta > 0`` exactly on ``{s <= t*}`` by log-concavity) evaluated with
    the rounding and dropped-mass bounds of the module docstring, and maximises the upper bound of
    ``D`` over the bracket only. Falls back to the full convolution (:func:`_hockey`) when no short
    bracket can be proved (e.g. ``t*`` in the flushed deep tail).
    """
    if eps >= eps0:
        return -math.inf, -math.inf
    if x.arr.size > y.arr.size:
        x, y = y, x
    E = math.exp(eps)
    pbar = p * math.exp(-eps0)
    a = -p * math.expm1(eps - eps0)
    a2 = p * E - pbar
    b = math.expm1(eps)
    cum_y = np.cumsum(y.arr)
    cum_x = np.cumsum(x.arr)
    Lsum = x.arr.size + y.arr.size
    # computed = S'(1 + theta), |theta| <= x.rel + y.rel + x.rel y.rel + L u (S' the exact
    # windowed sum), so true <= computed / (1 - rho) + d <= computed (1 + 2 rho) + d: doubled here
    rel = 2.0 * (x.rel + y.rel + x.rel * y.rel + (Lsum + 4) * _U)
    scale = x.scale + y.scale
    log_drop = float(
        logsumexp([x.log_drop, y.log_drop, math.log(float(x.arr.size) * y.arr.size * _TINY) + scale])
    )
    ld = log_drop - scale
    d = math.exp(ld) if ld < 700.0 else math.inf
    lo_t = x.lo + y.lo
    hi_t = lo_t + Lsum - 2
    # normal-approximation guess of t*: r(t) ~ exp(-(t - mu - 1/2) / var)
    w = np.arange(x.arr.size, dtype=float)
    mx_ = float(np.sum(x.arr * w) / cum_x[-1]) + x.lo
    vx = float(np.sum(x.arr * (w - (mx_ - x.lo)) ** 2) / cum_x[-1])
    w = np.arange(y.arr.size, dtype=float)
    my_ = float(np.sum(y.arr * w) / cum_y[-1]) + y.lo
    vy = float(np.sum(y.arr * (w - (my_ - y.lo)) ** 2) / cum_y[-1])
    r_e = a2 / a
    guess = mx_ + my_ + 0.5 - max(vx + vy, 0.25) * math.log(r_e)
    t0 = int(min(max(math.floor(guess), lo_t), hi_t))

    def inc(t: int) -> float:
        yv, _ = _pair_values(x, y, np.array([t - 1, t]), cum_y, cum_x)
        return a * yv[1] - a2 * yv[0]

    # gallop + bisection for the last t with computed increment > 0
    if inc(t0) > 0:
        lo, step = t0, 1
        while lo + step <= hi_t + 1 and inc(lo + step) > 0:
            lo, step = lo + step, step * 2
        hi = min(lo + step, hi_t + 1)
    else:
        hi, step = t0, 1
        while hi - step >= lo_t and inc(hi - step) <= 0:
            hi, step = hi - step, step * 2
        lo = max(hi - step, lo_t)
        if inc(lo) <= 0:
            return _hockey(_conv(x, y), eps, p, eps0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if inc(mid) > 0:
            lo = mid
        else:
            hi = mid
    t_hat = lo
    # prove a bracket: surely positive increment at t_a, surely negative at t_b
    for j in (0, 1, 2, 4, 8, 16):
        t_a, t_b = t_hat - j, t_hat + 1 + j
        if t_a < lo_t or t_b > hi_t + 1:
            break
        ts = np.array([t_a - 1, t_a, t_b - 1, t_b])
        yv, _ = _pair_values(x, y, ts, cum_y, cum_x)
        yl, yu = yv * (1.0 - rel), yv * (1.0 + rel) + d
        err = 8.0 * _U * (a + p * E + pbar) * float(yu.max())  # incl. the rounding of a, a'
        pos = a * yl[1] - a2 * yu[0] > err
        neg = a * yu[3] - a2 * yl[2] < -err
        if pos and neg:
            ts = np.arange(t_a, t_b)
            yv, fv = _pair_values(x, y, ts, cum_y, cum_x)
            rel_f = rel + 2.0 * (Lsum + 4) * _U
            y_up = yv * (1.0 + rel) + d
            e = 8.0 * _U * ((p + E * pbar) * y_up + (b + 2.0) * fv)
            up = float(np.max(a * y_up - b * fv * (1.0 - rel_f) + e))
            low = float(np.max(a * yv * (1.0 - rel) - b * (fv * (1.0 + rel_f) + d) - e))
            log_up = float(np.logaddexp(math.log(up) + scale if up > 0 else -math.inf, log_drop))
            log_low = math.log(low) + scale if low > 0 else -math.inf
            return min(log_up, 0.0), min(log_low, log_up)
    return _hockey(_conv(x, y), eps, p, eps0)


# ---------------------------------------------------------------------------------------------
# the k = 2 problem
# ---------------------------------------------------------------------------------------------


class _Problem:
    """Shared constants and caches for one ``(eps0, n)`` and one truncation level."""

    def __init__(self, eps0: float, n: int, log_level: float) -> None:
        self.eps0, self.n = eps0, n
        self.log_p = -math.log1p(math.exp(-eps0))
        self.log_pbar = self.log_p - eps0
        self.p = math.exp(self.log_p)
        self.pbar = math.exp(self.log_pbar)
        self.gamma = 2.0 * self.pbar
        self.log_g = math.log(2.0) + self.log_pbar
        self.log_1mg = math.log(math.tanh(0.5 * eps0))  # 1 - gamma = (e^eps0 - 1)/(e^eps0 + 1)
        self.log_level = log_level
        self.log_tol = log_level - _DROP_MARGIN
        self._leaf_cache: dict[int, tuple[_Dist, ...]] = {}
        self._half_cache: dict[int, _Dist] = {}  # Bin(s, 1/2): siblings share their cells
        self._cell_cache: dict[int, list[tuple[int, float]]] = {}
        self.evaluations = 0

    def leaf_dist(self, c: int) -> tuple[_Dist, ...]:
        """``Y`` for dataset ``c``: its law, or its two binomials when that convolution is large.

        Cached (a few hundred leaves at most).
        """
        if c not in self._leaf_cache:
            if len(self._leaf_cache) > 256:
                self._leaf_cache.pop(next(iter(self._leaf_cache)))
            t = self.log_tol - math.log(2.0)
            x, y = (
                _binom(c, self.log_pbar, self.log_p, t),
                _binom(self.n - 1 - c, self.log_p, self.log_pbar, t),
            )
            small = float(x.arr.size) * y.arr.size <= _DIRECT_WORK
            self._leaf_cache[c] = (_conv(x, y),) if small else (x, y)
        return self._leaf_cache[c]

    def _h(self, parts: tuple[_Dist, ...], eps: float) -> tuple[float, float]:
        if len(parts) == 1:
            return _hockey(parts[0], eps, self.p, self.eps0)
        return _hockey_pair(parts[0], parts[1], eps, self.p, self.eps0)

    def leaf(self, c: int, eps: float) -> tuple[float, float]:
        """``(log upper, log lower)`` on ``h_c(eps)``."""
        self.evaluations += 1
        return self._h(self.leaf_dist(c), eps)

    def _half(self, s: int, t: float) -> _Dist:
        """``Bin(s, 1/2)`` at truncation ``t`` (cached; intervals of one depth share their cells)."""
        if s not in self._half_cache:
            if len(self._half_cache) > 512:
                self._half_cache.pop(next(iter(self._half_cache)))
            self._half_cache[s] = _binom(s, -math.log(2.0), -math.log(2.0), t)
        return self._half_cache[s]

    def cells(self, m: int) -> list[tuple[int, float]]:
        """Cached :meth:`_cells`."""
        if m not in self._cell_cache:
            if len(self._cell_cache) > 512:
                self._cell_cache.pop(next(iter(self._cell_cache)))
            self._cell_cache[m] = self._cells(m)
        return self._cell_cache[m]

    def _cells(self, m: int) -> list[tuple[int, float]]:
        """Cells of ``B ~ Bin(m, gamma)``: ``(left end, log upper bound on the cell's mass)``.

        A left end of ``-1`` marks the lowest tail cell, bounded by ``g <= 1``.
        """
        g, lg, l1g = self.gamma, self.log_g, self.log_1mg
        if m <= _EXACT_CELLS:
            b = np.arange(m + 1, dtype=float)
            lw = _log_binom_pmf(b, float(m), lg, l1g) + math.log1p(1e-9)
            return [(int(i), float(w)) for i, w in zip(b, lw)]
        dist = _binom(m, lg, l1g, self.log_tol - math.log(4.0))
        lo, hi = dist.lo, dist.lo + dist.arr.size - 1
        out: list[tuple[int, float]] = []
        if lo > 0:
            out.append((-1, float(_log_binom_cdf(lo - 1, m, g)) + math.log(2.0)))
        starts = sorted({int(round(x)) for x in np.linspace(lo, hi, _CELLS + 1)[:-1]})
        xs = np.arange(lo, hi + 1, dtype=float)
        lp = _log_binom_pmf(xs, float(m), lg, l1g)
        for j, s in enumerate(starts):
            if j + 1 < len(starts):
                e = starts[j + 1]
                w = float(logsumexp(lp[s - lo : e - lo])) + math.log1p(1e-9)
            else:
                w = float(_log_binom_sf(s, m, g)) + math.log(2.0)  # top cell [s, m]: tail bound, doubled
            out.append((s, w))
        return out

    def interval(self, c1: int, c2: int, eps: float) -> tuple[float, float]:
        """``(log U(c1, c2), log lower)``; the lower value is exhibited only for a leaf."""
        if c1 == c2:
            return self.leaf(c1, eps)
        self.evaluations += 1
        if eps >= self.eps0:
            return -math.inf, -math.inf
        m = c2 - c1
        t = self.log_tol - math.log(3.0)
        a1, a2 = (
            _binom(c1, self.log_pbar, self.log_p, t),
            _binom(self.n - 1 - c2, self.log_p, self.log_pbar, t),
        )
        small, big = (a1, a2) if a1.arr.size <= a2.arr.size else (a2, a1)
        cells = self.cells(m)
        w_c = 20.0 * math.sqrt(m * 0.25) + 40.0  # rough window of Bin(s, 1/2)
        shared = float(a1.arr.size) * a2.arr.size <= len(cells) * small.arr.size * w_c
        base = _conv(a1, a2) if shared else None
        terms = []
        for s, lw in cells:
            if s < 0:
                terms.append(lw)  # g <= 1 on the lowest tail cell
                continue
            cb = self._half(s, t)
            first = base if base is not None else _conv(small, cb)
            pair: tuple[_Dist, ...] = (first, cb) if shared else (first, big)
            if float(pair[0].arr.size) * pair[1].arr.size <= _DIRECT_WORK:
                pair = (_conv(pair[0], pair[1]),)
            up, _ = self._h(pair, eps)
            terms.append(lw + up)
        return min(float(logsumexp(terms)) + 4.0 * len(terms) * _U, 0.0), -math.inf

    def leaf_epsilon(self, c: int, log_delta: float, upper: bool) -> float:
        """Bisection on ``eps`` for leaf ``c``.

        ``upper=False``: the largest eps (rounded down) with lower ``h_c(eps) > delta`` (0.0 if
        none): an exhibited epsilon. ``upper=True``: an eps with upper ``h_c(eps) <= delta``.
        """
        parts = self.leaf_dist(c)
        idx = 0 if upper else 1

        def above(e: float) -> bool:
            return self._h(parts, e)[idx] > log_delta

        if not above(0.0):
            return 0.0
        lo, hi = bisect_bracket(above, 0.0, self.eps0, rtol=1e-13, max_iter=200)
        return hi if upper else lo


# ---------------------------------------------------------------------------------------------
# certificate
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CoverInterval:
    """One cell of the cover: ``h_c(eps) <= exp(log_bound)`` for every ``c in [c_lo, c_hi]``.

    Attributes:
        c_lo: First dataset (number of other users at value 0).
        c_hi: Last dataset (inclusive).
        eps: The eps at which the bound was evaluated (it also holds at every larger eps).
        log_bound: Natural log of the certified bound ``U(c_lo, c_hi)`` at ``eps``.
    """

    c_lo: int
    c_hi: int
    eps: float
    log_bound: float


@dataclass(frozen=True)
class WorstCaseCertificate:
    """A re-checkable certificate of the worst-case privacy curve of shuffled binary RR.

    The cover partitions ``c in [0, n - 1]``; ``sup_{D ~ D'} delta_D(eps) = max_c h_c(eps)``
    (module docstring, (F1)) is at most ``max`` of the cover's bounds. :func:`verify` recomputes
    every bound and the exhibited value.

    Attributes:
        k: Always 2.
        eps0: Local privacy parameter.
        n: Number of users.
        query: ``"delta"`` (certify ``delta(eps)``) or ``"epsilon"`` (certify ``epsilon(delta)``).
        eps: The eps certified (``query="delta"``: the input; ``"epsilon"``: the certified epsilon).
        delta: The target delta (``query="epsilon"``) or the certified delta (``"delta"``).
        log_delta: Natural log of the certified delta at ``eps`` (for ``"epsilon"``: ``<= log delta``).
        epsilon: Certified epsilon (``"epsilon"``) or ``nan``-free ``eps`` (``"delta"``).
        epsilon_lower: Exhibited epsilon of the worst leaf at ``delta`` (``"epsilon"``), else 0.0.
        worst_c: The exhibited dataset: ``worst_c`` other users at value 0, the rest at 1.
        worst_others: Its counts ``(worst_c, n - 1 - worst_c)`` (target moves 0 -> 1).
        exhibited_log_delta: Exhibited (lower) log delta of ``worst_c`` at ``eps`` (``"delta"``)
            or at ``epsilon_lower`` (``"epsilon"``, then ``> log delta``).
        cover: The intervals with their bounds.
        log_level: Truncation level used (reproduces the windows in :func:`verify`).
        evaluations: Number of bound evaluations spent.
    """

    k: int
    eps0: float
    n: int
    query: str
    eps: float
    delta: float
    log_delta: float
    epsilon: float
    epsilon_lower: float
    worst_c: int
    worst_others: tuple[int, int]
    exhibited_log_delta: float
    cover: tuple[CoverInterval, ...]
    log_level: float
    evaluations: int


def _seeds(n: int) -> list[int]:
    pts = set(range(min(n, 4))) | {n - 1 - j for j in range(min(n, 4))}
    if n > 8:
        pts |= {int(round(x)) for x in np.linspace(0, n - 1, 7)}
    return sorted(c for c in pts if 0 <= c <= n - 1)


def _check(eps0, n):
    eps0 = check_real("eps0", eps0, low=0.0, low_open=True, high=700.0)
    n = check_int("n", n, minimum=2)
    return eps0, n


def _certify_delta(pr: _Problem, eps: float, tol: float, max_evals: int):
    best, best_c = -math.inf, 0
    for c in _seeds(pr.n):
        lo = pr.leaf(c, eps)[1]
        if lo > best:
            best, best_c = lo, c
    up, _ = pr.interval(0, pr.n - 1, eps)
    heap = [(-up, 0, pr.n - 1)]
    done: list[CoverInterval] = []
    ltol = math.log1p(tol)
    while heap:
        neg, c1, c2 = heap[0]
        if -neg <= best + ltol:
            break
        if pr.evaluations > max_evals:
            raise WorkBudgetExceeded(f"branch and bound exceeded {max_evals} evaluations")
        heapq.heappop(heap)
        if c1 == c2:  # an exact leaf: nothing left to split
            done.append(CoverInterval(c1, c2, eps, -neg))
            continue
        mid = (c1 + c2) // 2
        for a, b in ((c1, mid), (mid + 1, c2)):
            u, lo = pr.interval(a, b, eps)
            if lo > best:
                best, best_c = lo, a
            heapq.heappush(heap, (-u, a, b))
    done.extend(CoverInterval(c1, c2, eps, -neg) for neg, c1, c2 in heap)
    return done, best, best_c


def _certify_epsilon(pr: _Problem, log_delta: float, tol: float, max_evals: int):
    eps_low, best_c = 0.0, 0
    for c in _seeds(pr.n):
        e = pr.leaf_epsilon(c, log_delta, upper=False)
        if e > eps_low:
            eps_low, best_c = e, c
    eps_up = min(pr.eps0, max(eps_low * (1.0 + tol), 1e-300))
    if eps_low == 0.0:
        # nothing exhibited above delta: try to certify eps = 0 first
        eps_up = 0.0
    heap = [(0.0, 0, pr.n - 1, -1.0)]  # (-bound, c1, c2, eps at which bound was computed)
    done: list[CoverInterval] = []
    while heap:
        neg, c1, c2, e_at = heapq.heappop(heap)
        if pr.evaluations > max_evals:
            raise WorkBudgetExceeded(f"branch and bound exceeded {max_evals} evaluations")
        if e_at < eps_up:
            u, _ = pr.interval(c1, c2, eps_up)
            e_at = eps_up
        else:
            u = -neg
        if u <= log_delta:
            done.append(CoverInterval(c1, c2, e_at, u))
            continue
        if c1 == c2:
            e = pr.leaf_epsilon(c1, log_delta, upper=False)
            if e > eps_low:
                eps_low, best_c = e, c1
                eps_up = max(eps_up, min(pr.eps0, eps_low * (1.0 + tol)))
            u, _ = pr.leaf(c1, eps_up)
            if u > log_delta:  # rounding band of this leaf: move eps_up past its upper crossing
                eps_up = max(eps_up, pr.leaf_epsilon(c1, log_delta, upper=True))
                u, _ = pr.leaf(c1, eps_up)
            if u > log_delta:  # pragma: no cover - eps0 itself always certifies (h = 0)
                eps_up = pr.eps0
                u = -math.inf
            done.append(CoverInterval(c1, c2, eps_up, u))
            continue
        mid = (c1 + c2) // 2
        for a, b in ((c1, mid), (mid + 1, c2)):
            ua, _ = pr.interval(a, b, eps_up)
            heapq.heappush(heap, (-ua, a, b, eps_up))
    ex = pr.leaf(best_c, eps_low)[1] if eps_low > 0 else -math.inf
    return done, eps_up, eps_low, best_c, ex


def certify(
    eps0, n, *, eps=None, delta=None, tol: float | None = None, max_evals: int = 20000
) -> WorstCaseCertificate:
    """Certify the exact worst case of shuffled binary RR (k = 2) by branch and bound over datasets.

    Exactly one of ``eps`` (certify ``delta(eps)``) and ``delta`` (certify ``epsilon(delta)``)
    is given. The certified value is an upper bound on ``sup_{D ~ D'} delta_D(eps)`` (resp. an
    eps at which that sup is ``<= delta``); the exhibited dataset gives a lower bound. See the
    module docstring for the proof ((F1)-(F4)) and the rounding.

    Args:
        eps0: Local privacy parameter, finite, ``0 < eps0 <= 700``.
        n: Number of users, integer ``>= 2``.
        eps: ``eps >= 0``, to certify ``delta(eps)`` (keyword only).
        delta: ``0 < delta < 1``, to certify ``epsilon(delta)`` (keyword only).
        tol: Stopping tolerance (keyword only): relative gap in delta (``eps`` given) or in
            epsilon (``delta`` given) between the certified and the exhibited value; default
            ``1e-7`` (about the width of one leaf's rounding bracket, so tighter buys nothing;
            the search costs about the same as at ``1e-4``).
        max_evals: Work budget in bound evaluations (keyword only).

    Returns:
        A :class:`WorstCaseCertificate`.

    Raises:
        ParameterError: On invalid inputs (naming the parameter), or if both or neither of
            ``eps`` and ``delta`` are given.
        WorkBudgetExceeded: If the work budget is exhausted before the gap closes, or a single
            convolution exceeds :data:`MAX_CONV_WORK` (very large ``n``).

    Example:
        >>> c = certify(2.0, 1000, eps=0.32332355)
        >>> bool(abs(c.exhibited_log_delta - math.log(1e-6)) < 1e-4), bool(c.log_delta >= c.exhibited_log_delta)
        (True, True)
    """
    eps0, n = _check(eps0, n)
    if (eps is None) == (delta is None):
        raise ParameterError(f"give exactly one of eps= and delta=, got eps={eps!r}, delta={delta!r}")
    max_evals = check_int("max_evals", max_evals, minimum=1)
    if eps is not None:
        eps = check_real("eps", eps, low=0.0)
        tol = 1e-7 if tol is None else check_real("tol", tol, low=0.0, low_open=True, high=1.0)
        # truncation level: the largest leaf value among the seeds (windows reach e^-25 below it)
        level = -60.0
        for _ in range(4):
            pr = _Problem(eps0, n, level)
            top = max(pr.leaf(c, eps)[1] for c in _seeds(n))
            if top == -math.inf or top >= level - 1.0:
                break
            level = top
        pr = _Problem(eps0, n, level)
        cover, best, best_c = _certify_delta(pr, eps, tol, max_evals)
        ld = max(c.log_bound for c in cover)
        return WorstCaseCertificate(
            2,
            eps0,
            n,
            "delta",
            eps,
            math.exp(ld),
            ld,
            eps,
            0.0,
            best_c,
            (best_c, n - 1 - best_c),
            best,
            tuple(sorted(cover, key=lambda c: c.c_lo)),
            level,
            pr.evaluations,
        )
    delta = check_delta("delta", delta)
    tol = 1e-7 if tol is None else check_real("tol", tol, low=0.0, low_open=True, high=1.0)
    pr = _Problem(eps0, n, math.log(delta))
    cover, eps_up, eps_low, best_c, ex = _certify_epsilon(pr, math.log(delta), tol, max_evals)
    ld = max(c.log_bound for c in cover)
    return WorstCaseCertificate(
        2,
        eps0,
        n,
        "epsilon",
        eps_up,
        delta,
        ld,
        eps_up,
        eps_low,
        best_c,
        (best_c, n - 1 - best_c),
        ex,
        tuple(sorted(cover, key=lambda c: c.c_lo)),
        pr.log_level,
        pr.evaluations,
    )


def verify(cert: WorstCaseCertificate) -> bool:
    """Re-check a :class:`WorstCaseCertificate` from scratch.

    Checks that the cover partitions ``[0, n - 1]``; recomputes every interval's bound at its
    ``eps`` (which must be ``<= cert.eps``) and that it does not exceed the recorded one; that the
    recorded certified value is the max of the cover (``query="epsilon"``: ``<= log delta``);
    and recomputes the exhibited leaf's lower value.

    Args:
        cert: The certificate.

    Returns:
        ``True`` if every check passes, else ``False``.

    Example:
        >>> verify(certify(1.0, 50, delta=1e-3))
        True
    """
    if not isinstance(cert, WorstCaseCertificate):
        raise ParameterError(f"cert must be a WorstCaseCertificate, got {type(cert).__name__}")
    pr = _Problem(cert.eps0, cert.n, cert.log_level)
    nxt = 0
    top = -math.inf
    for iv in cert.cover:
        if iv.c_lo != nxt or iv.c_hi < iv.c_lo or iv.eps > cert.eps:
            return False
        nxt = iv.c_hi + 1
        u, _ = pr.interval(iv.c_lo, iv.c_hi, iv.eps)
        if u > iv.log_bound:
            return False
        top = max(top, iv.log_bound)
    if nxt != cert.n:
        return False
    if cert.query == "delta":
        if top > cert.log_delta:
            return False
        ex = pr.leaf(cert.worst_c, cert.eps)[1]
        return bool(ex >= cert.exhibited_log_delta and ex <= cert.log_delta)
    if top > math.log(cert.delta):
        return False
    if cert.epsilon_lower > 0:
        ex = pr.leaf(cert.worst_c, cert.epsilon_lower)[1]
        return bool(ex >= cert.exhibited_log_delta > math.log(cert.delta) and cert.epsilon_lower <= cert.eps)
    return True


def interval_log_bound(eps, eps0, n, c_lo, c_hi, *, log_level: float = -60.0) -> float:
    """Certified ``log U(c_lo, c_hi)``: an upper bound on ``log h_c(eps)`` for ``c_lo <= c <= c_hi``.

    ``h_c = H_{e^eps}(P_c || Q_c)``, ``c`` other users at value 0 and ``n - 1 - c`` at 1, the
    target moving from 0 to 1 (module docstring (F3), (F4)).

    Args:
        eps: ``eps >= 0``.
        eps0: Local privacy parameter.
        n: Number of users (``>= 2``).
        c_lo: First dataset, ``0 <= c_lo <= c_hi``.
        c_hi: Last dataset, ``<= n - 1``.
        log_level: Truncation level (keyword only): windows drop at most ``e^(log_level - 25)``.

    Returns:
        The log bound (``-inf`` for 0).

    Raises:
        ParameterError: On invalid inputs.

    Example:
        >>> bool(interval_log_bound(0.3, 2.0, 100, 0, 99) >= interval_log_bound(0.3, 2.0, 100, 3, 3))
        True
    """
    eps0, n = _check(eps0, n)
    eps = check_real("eps", eps, low=0.0)
    c_lo = check_int("c_lo", c_lo, minimum=0, maximum=n - 1)
    c_hi = check_int("c_hi", c_hi, minimum=c_lo, maximum=n - 1)
    log_level = check_real("log_level", log_level, high=0.0)
    return _Problem(eps0, n, log_level).interval(c_lo, c_hi, eps)[0]


def leaf_log_delta(eps, eps0, n, c, *, log_level: float = -60.0) -> tuple[float, float]:
    """``(upper, lower)`` bounds on ``log h_c(eps)`` for one dataset (exact up to rounding).

    Args:
        eps: ``eps >= 0``.
        eps0: Local privacy parameter.
        n: Number of users (``>= 2``).
        c: Number of other users at value 0, ``0 <= c <= n - 1``.
        log_level: Truncation level (keyword only).

    Returns:
        ``(log upper, log lower)``.

    Raises:
        ParameterError: On invalid inputs.

    Example:
        >>> up, lo = leaf_log_delta(0.32332355, 2.0, 1000, 997)
        >>> round(math.exp(lo), 12), bool(0 <= up - lo < 1e-6)
        (1e-06, True)
    """
    eps0, n = _check(eps0, n)
    eps = check_real("eps", eps, low=0.0)
    c = check_int("c", c, minimum=0, maximum=n - 1)
    log_level = check_real("log_level", log_level, high=0.0)
    return _Problem(eps0, n, log_level).leaf(c, eps)


# Shared with other modules and the tests under public names (issue 13: no module imports
# another module's private name). Internal: not in __all__.
WorstCaseProblem = _Problem  # constants of one (eps0, n) (tests)
binomial_dist = _binom  # windowed binomial distribution (tests)
hockey_pair = _hockey_pair  # hockey stick of a pair without convolving (tests)
hockey_of_dist = _hockey  # hockey stick of a distribution (tests)
convolve_dists = _conv  # convolution of two windowed distributions (tests)
