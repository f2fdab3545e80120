"""Certified privacy-blanket curve of shuffled k-RR on a whole grid of eps in one pass.

The accountant's PLD needs the certified curve ``delta(eps)`` at hundreds of points; evaluating
them one at a time (:mod:`~shuffle_accounting.shuffled_krr.blanket`,
:mod:`~shuffle_accounting.shuffled_krr.blanket_fast`) repeats the same tables for every point.
This module computes the same quantity -- the privacy-blanket divergence of Balle, Bell, Gascón,
Nissim, *The Privacy Blanket of the Shuffle Model* (CRYPTO 2019, Sec. 4.1; the adversary also
learns who drew from the blanket) -- as an upper bound at every point of an eps grid from tables
built once, so that a whole grid costs about as much as a few single evaluations.

Notation: ``pbar = 1/(e^eps0 + k - 1)``, ``p = e^eps0 pbar``, ``u = e^eps0 - 1``,
``c = (u + 2)/2 = (e^eps0 + 1)/2``, ``q = (k-2) pbar / (1 - 2 pbar)``; at a point ``eps``:
``E = e^eps``, ``v = E - 1``, ``t = tanh(eps/2) = v/(E + 1)`` and ``a = (e^eps0 - E)/v``
(so ``a + c = u/(2t)``).

**1. The divergence as a sum of non-negative terms.** Let ``P_n`` be the multinomial law of the
counts ``(h0, h1, R)`` of ``n`` i.i.d. users that report ``x0`` w.p. ``pbar``, ``x1`` w.p.
``pbar``, another value w.p. ``(k-2) pbar`` and nothing w.p. ``1 - k pbar``. Module
``blanket_fast``, eq. (1), shows ``delta(eps) = (u/n) E[(h0 - E h1 - r S)_+]`` (``r = v/u``,
``S = h0 + h1 + R``). With ``T = h0 + h1`` and ``D = h0 - h1`` this is
``h0 - E h1 - r S = ((1+E)/(2u)) (u D - t (2c T + 2R))`` (expand both sides), hence

    delta(eps) = (v/n) E[(beta - R)_+],   beta = u D/(2t) - c T = a D - c (T - D).            (1)

Under ``P_n``: ``T ~ Bin(n, 2 pbar)``; given ``T``, ``D = 2h - T`` with ``h ~ Bin(T, 1/2)``, and
``R ~ Bin(n - T, q)`` independent of ``h``. Write ``psi_N(x) = E[(x - R)_+]`` for
``R ~ Bin(N, q)`` (convex, non-decreasing, piecewise linear with slope ``F_N(floor x)``, the
CDF, and ``psi = 0`` for ``x <= 0``). Then

    delta(eps) = (v/n) sum_T P(T) sum_{h > T/2} b_T(h) psi_{n-T}(beta(T, h)),                 (2)

a sum of non-negative terms (``d = 2h - T <= 0`` gives ``beta < 0``). There is no cancellation
between ``P_D`` and ``e^eps P_D'``: the only subtraction is inside ``beta`` and is handled in
section 5.

**2. Blocks of T.** For ``t1 <= T <= t2``,
``E[(beta(T) - R_{n-T})_+] <= E[(a D_{t2} - c (t1 - D_{t2}) - R_{n-t2})_+]``, where ``D_m`` is
``2 Bin(m, 1/2) - m``: couple ``D_{t2} = D_T + D'`` with ``D'`` an independent symmetric walk of
``t2 - T`` steps and use Jensen (``y -> (y)_+`` is convex, ``E D' = 0``, and
``a D - c(T - D) = (a + c) D - c T`` is affine in ``D``); replace ``c T`` by ``c t1 <= c T``
(``(y)_+`` is non-decreasing); couple ``R_{n-T} = R_{n-t2} + Bin(t2 - T, q)`` (independent,
``>= 0``) and drop the second part. So one *row* ``(tD, ttheta, tR) = (t2, t1, t2)`` with weight
``P(t1 <= T <= t2)`` bounds the whole block from above; ``(t1, t2, t1)`` bounds it from below
(the same three steps reversed), which gives a certified bracket (``side="lower"``). A row with
``t1 = t2 = T`` is exact. Block widths grow like ``w0 exp(x^2/4)`` with the standardised ``T``
(``w0`` from ``block_rtol``: the bracket's relative width in the bulk is about
``w (z^2/(2T) + t c z/(u sqrt T))`` at a ``z``-sd threshold); they only affect tightness.

**3. One row at many eps.** In a row, ``beta(d) = (a + c) d - c ttheta`` (``d = 2h - tD``) is
increasing in ``d``; ``R ~ Bin(N, q)`` (``N = n - tR``, ``m = N q``) lives on a table
``[R_lo, R_hi]`` (``R_hi = m + 7 sd``; ``R_lo`` at least 8.5 sd and at least as far as the
Chernoff exponent 36 below ``m``, or 0 when that costs little) holding ``F(b)`` and ``psi(b)``
(``psi(b + 1) = psi(b) + F(b)``, ``F(R_lo - 1)`` and ``psi(R_lo) <= R_lo P(R < R_lo)`` from
rigorous CDF upper bounds). For every point the ``h`` of the row fall into four zones, whose
integer boundaries come from real thresholds computed with a relative margin (``RHO``) on the
safe side, so that each zone's bound holds for every ``h`` put in it:

* ``h < h_0`` (``beta`` certainly ``<= 0``): the term is exactly 0;
* ``h_0 <= h < h_lo`` (lower zone, ``beta`` certainly ``< R_lo``): levels
  ``R_lo = L_0 > L_1 > ... > L_6 >= 0`` (Chernoff exponents 50 ... 300), ``psi(L_i) <= L_i
  P(R < L_i)``; every ``h`` certainly below ``L_i`` has ``psi(beta) <= psi(L_i)``, so the band
  between the first ``h`` not certainly below ``L_{i+1}`` and the first not certainly below
  ``L_i`` adds ``psi(L_i)`` times its weight (a difference of suffix sums ``S0``, plus its
  rounding);
* ``h_lo <= h < h_up`` (middle zone): the table, ``psi(x) = psi(b) + (x - b) F(b)``,
  ``b = floor(x)``, at ``x = beta`` rounded up (``psi`` is non-decreasing); below the table
  ``psi(R_lo)``, above it ``psi(R_hi + 1) + (x - R_hi - 1)`` (slope ``<= 1``). A cell (row,
  point) whose crude bound ``S_cell max(beta_top, 0)`` (``psi(x) <= x_+``) is below ``PRUNE``
  times a lower estimate of the point's total is counted by that bound instead;
* ``h >= h_up`` (upper zone, ``beta`` certainly ``>= R_hi``):
  ``psi(beta) = beta - m + E[(R - beta)_+] <= beta - m + tau``,
  ``tau = E[(R - R_hi)_+] <= N q (1 - q) P(Bin(N - 1, q) = R_hi)`` (``R_hi >= m``; eq. (3) of
  ``blanket_fast``), so the zone sums in closed form from the suffix sums ``S0 = sum w``,
  ``S1 = sum w d``: ``(a + c) S1 - (c ttheta + m - tau) S0``. Each summand is at least
  ``(R_hi - m) w > 0``.

The middle zone holds about ``t (R_hi - R_lo)/u`` values of ``h`` per row and point, so a grid
of ``J`` points costs ``O(rows (W_h + W_R) + rows J + sum of the middle zones)`` instead of
``J`` full evaluations. ``k = 2`` is the case ``q = 0`` (``R = 0``, ``psi(x) = x_+``): a one-entry
table, and the upper zone is everything above ``beta = 0``.

**4. Windows (every dropped part bounded and added).** Each dropped term is at most
``(v/n) P(T) b_T(h) beta_+`` and ``beta_+ <= u d/(2t)`` (since ``c T >= 0``), with
``(v/n) u/(2t) = (E + 1) u/(2n)``:

* ``T`` outside ``[T_lo, T_hi]``: ``E[(u D_T/(2t))_+] <= (u/(2t)) sqrt(T)/2 <= (u/(2t)) sqrt(n)/2``
  (``E|D_T| <= sqrt(T)``), so the rows outside add at most
  ``(E + 1) u P(T not in window)/(4 sqrt n)`` (binomial tails from :mod:`~shuffle_accounting._binomial`,
  upper bounds);
* ``h >= hB`` in a row (weight ``W``): ``E[D 1{h >= hB}] <= 2 E[h 1{h >= hB}] = tD P(Bin(tD - 1,
  1/2) >= hB - 1)``, at most ``tD exp(-2 s^2/(tD - 1))`` with ``s = hB - 1 - (tD - 1)/2 >= 0``
  (Hoeffding), times ``(E + 1) u W/(2n)``.

Windows are chosen so that these are below ``1e-10 e^log_floor``; any choice is sound. The
``R`` table, the levels, the block widths and the pruning only affect tightness (each bound
above holds for any choice). Measured tightness (tests): exact rows are within ``1e-9`` of the
exact divergence (40-digit brute force at small ``n``, the certified lower bound elsewhere);
blocks of ``T`` within about ``block_rtol`` in the bulk; below ``e^-30`` the lower-zone levels
can loosen the bound to ``1e-6`` relative, and below ``e^log_floor`` the dropped parts dominate.

**5. Rounding (outward).** The pmfs are formed by exact-ratio products from a Loader anchor
(:func:`~shuffle_accounting._binomial.log_binom_pmf`, relative error ~1e-13), one rounding per
step; every table, suffix sum and product of positive numbers carries a relative error below
``KAPPA_UNIT`` times its length (plus ``1e-12`` for the anchors), and the sum of the
non-negative parts is multiplied by ``1 + kappa`` with ``kappa`` that bound. ``beta`` is
computed per term as ``a d - c (ttheta - d)`` with ``a = E expm1(eps0 - eps)/expm1(eps)`` (no
cancellation in ``a``; close to ``eps0`` the two parts cancel, which is why no running sum is
used); its absolute error is at most ``RHO (a |d| + c |ttheta - d|)`` and it is rounded up by
that. The upper-zone closed form is a difference of two positive sums; its rounding error (at
most ``(kappa + 4u)((a + c) S1 + (c ttheta + m + tau) S0)``, which also covers the ``RHO``
error of ``c``) is added. Terms that underflow are covered by an absolute ``TINY`` added to
every value. Below ``eps = 1e-200`` (where ``a`` overflows) the value at ``eps = 0`` is used:
``delta`` is non-increasing, and ``delta(eps) >= delta(0) - (e^eps - 1)`` for the lower side.
The result is an upper bound on the exact blanket divergence at every point; with
``side="lower"`` (block rows reversed, the lower zone and every dropped part counted as 0,
``tau = 0``, rounding inward) a lower bound, so the pair brackets it.

Supported: ``n >= 2``, ``eps0 <= EPS0_GRID_MAX`` (larger ``eps0``, ``n = 1`` and the degenerate
blanket keep the one-point evaluators) and ``0 <= eps``; ``delta = 0`` from ``eps0`` on.
Cost (k = 10, eps0 = 2, one PLD grid of 300-430 points, unloaded): about 0.2 s at
``n = 1e4``, 0.1 s at ``1e6`` and ``1e9`` (``benchmarks/README.md``).

Example:
    >>> import numpy as np
    >>> g = BlanketTables(10, 2.0, 10_000)
    >>> v = g.log_delta(np.array([0.05, 0.1, 0.2]))
    >>> bool(v[0] > v[1] > v[2])
    True
"""

from __future__ import annotations

import math

import numpy as np

from .._binomial import binom_window_range, log_binom_cdf, log_binom_pmf, logsumexp
from .._validation import check_real, check_real_array
from ..randomizers import KRR
from .blanket import check_krr_parameters

__all__ = ["BlanketTables", "EPS0_GRID_MAX", "certified_log_delta_tables"]

#: Largest ``eps0`` the grid evaluator takes (``u/(2t)`` and the tables stay far from overflow);
#: callers use the one-point evaluators above it.
EPS0_GRID_MAX: float = 40.0
#: Relative margin on every computed zone threshold and on ``beta`` (covers the few-ulp error of
#: ``a``, ``c``, ``E`` and one product and one sum).
RHO: float = 1e-13
#: Relative error per summed or multiplied term of the recursions and prefix sums (4 ulp).
KAPPA_UNIT: float = 4.0 * 2.0**-53
#: Absolute term added to every value: covers terms that underflow (each below 1e-300; far fewer
#: than 1e10 of them, each multiplied by at most 1e10).
TINY: float = 1e-270
_UPPER_Z = 7.0  # R-table: sd above the mean (upper-zone tau is below 1e-12 of the zone's value)
_LOWER_Z = 8.5  # R-table: sd below the mean; below it the lower-zone levels
_LOWER_LOG_CDF = -36.0  # ... and at least this far into the lower tail (log CDF)
_LEVEL_EXPONENTS = (50.0, 70.0, 100.0, 140.0, 200.0, 300.0)  # lower-zone levels: Chernoff exponents
_DROP_FRACTION = 1e-10  # dropped parts below this fraction of e^log_floor
_TINY_EPS = 1e-200  # below: bounded through eps = 0 (a would overflow)
_WIDTH_CAP = 0.004  # block width at most this fraction of T
_MIDDLE_CHUNK = 2_000_000
#: A middle-zone cell is bounded crudely when that bound is below this fraction of the point's total.
PRUNE: float = 1e-13  # middle-zone terms per vectorised chunk (memory)


def _kl_point(N: np.ndarray, q: float, lam: float) -> np.ndarray:
    """Per row, ``floor(N x)`` with ``x < q`` solving ``N KL(x || q) = lam`` (0 where none exists).

    ``KL(x || q) = x log(x/q) + (1 - x) log((1 - x)/(1 - q))`` decreases on ``[0, q]``; 60 bisection
    steps. Only places table ends and levels (tightness), so no rounding control is needed.
    """
    lo = np.zeros(N.shape)
    hi = np.full(N.shape, q)
    lq, lq1 = math.log(q), math.log1p(-q)

    def kl(x: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(x > 0, x * (np.log(x) - lq), 0.0)
            b = np.where(x < 1, (1.0 - x) * (np.log1p(-x) - lq1), 0.0)
        return a + b

    at_zero = N * kl(lo) <= lam  # even R = 0 is not that unlikely: no point
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        deep = N * kl(mid) > lam
        lo = np.where(deep, mid, lo)
        hi = np.where(deep, hi, mid)
    return np.where(at_zero, 0.0, np.floor(N * lo))


class BlanketTables:
    """Tables of one ``(k, eps0, n)`` from which the blanket curve is bounded at any eps grid.

    Args:
        k: Number of categories, an integer ``>= 2``.
        eps0: Local privacy parameter, in ``(0, EPS0_GRID_MAX]``.
        n: Number of users, an integer ``>= 2``.
        block_rtol: Target relative width of the block bracket in the bulk (keyword only; any
            value is sound, smaller is tighter and slower).
        log_floor: Values above ``e^log_floor`` are resolved to about ``1e-10`` relative (the
            dropped parts stay below ``1e-10 e^log_floor``); below it the value is still an
            upper bound (keyword only).
        side: ``"upper"`` (certified upper bound, default) or ``"lower"`` (certified lower bound:
            block rows reversed, nothing dropped is added).

    Raises:
        ParameterError: If a parameter is out of range (see :func:`check_krr_parameters`), ``n < 2``
            or ``eps0 > EPS0_GRID_MAX``, or the options are invalid.
    """

    def __init__(
        self,
        k: int,
        eps0: float,
        n: int,
        *,
        block_rtol: float = 2e-4,
        log_floor: float = -120.0,
        side: str = "upper",
    ) -> None:
        from .._validation import ParameterError

        k, eps0, n = check_krr_parameters(k, eps0, n)
        if n < 2:
            raise ParameterError(f"n must be an integer >= 2 for the grid evaluator, got {n}")
        if eps0 > EPS0_GRID_MAX:
            raise ParameterError(f"eps0 must be in (0, {EPS0_GRID_MAX}] for the grid evaluator, got {eps0}")
        block_rtol = check_real("block_rtol", block_rtol, low=1e-9, high=1.0)
        log_floor = check_real("log_floor", log_floor, low=-700.0, high=0.0)
        if side not in ("upper", "lower"):
            raise ParameterError(f"side must be 'upper' or 'lower', got {side!r}")
        self.k, self.eps0, self.n, self.side = k, eps0, n, side
        krr = KRR(k, eps0)
        self.pbar = math.exp(krr.log_pbar)
        self.u = math.expm1(eps0)
        self.c = 0.5 * (self.u + 2.0)
        self.q = float(krr.other_given_not_pair) if k > 2 else 0.0
        self.log_target = log_floor + math.log(_DROP_FRACTION)
        self._build_rows(block_rtol)
        self._build_tables()

    # -- rows (blocks of T) ------------------------------------------------------------------
    def _build_rows(self, block_rtol: float) -> None:
        n, pbar, u = self.n, self.pbar, self.u
        q2 = 2.0 * pbar
        upper = self.side == "upper"
        # T window: the dropped rows add at most (E + 1) u P(T outside) / (4 sqrt n) (section 4)
        log_scale = math.log(u * (math.exp(self.eps0) + 1.0) / (4.0 * math.sqrt(n)))
        tol = self.log_target - log_scale
        if q2 <= 0.5:
            t_lo, t_hi, l_out = binom_window_range(n, math.log(q2), math.log1p(-q2), tol)
        else:  # reflect: n - T ~ Bin(n, 1 - 2 pbar)
            lo, hi, l_out = binom_window_range(n, math.log1p(-q2), math.log(q2), tol)
            t_lo, t_hi = n - hi, n - lo
        t_lo = max(t_lo, 1)  # T = 0 has no h with d >= 1: it contributes exactly 0
        self.log_t_drop = l_out + math.log(u / (4.0 * math.sqrt(n))) if upper else -math.inf
        # pmf of T on the window: exact ratios P(T+1)/P(T) = (n - T) q2 / ((T + 1)(1 - q2)) multiplied
        # out (linear, one rounding per step) from a Loader anchor at the mode
        T = np.arange(t_lo, t_hi + 1, dtype=float)
        mean = n * q2
        anchor = int(min(max(math.floor((n + 1) * q2), t_lo), t_hi))
        la = float(log_binom_pmf(float(anchor), float(n), math.log(q2), math.log1p(-q2)))
        odds = q2 / (1.0 - q2)
        pmf = np.empty(T.size)
        ia = anchor - t_lo
        pmf[ia] = math.exp(la)
        if ia + 1 < T.size:
            tt = T[ia:-1]
            pmf[ia + 1 :] = pmf[ia] * np.cumprod((n - tt) / (tt + 1.0) * odds)
        if ia > 0:
            tt = T[:ia][::-1]  # P(T)/P(T+1) for T = anchor - 1 down to t_lo
            pmf[:ia] = (pmf[ia] * np.cumprod((tt + 1.0) / ((n - tt) * odds)))[::-1]
        self._kappa_t = KAPPA_UNIT * (T.size + 8) + 1e-12
        # block widths: w0 exp(x^2/4), x the standardised T (tightness only)
        sd = math.sqrt(n * q2 * (1.0 - q2))
        w0 = block_rtol * max(mean, 1.0) / 16.0
        # blocks grow outward from the mean; a block's width is set by its end nearest the mean
        centre = int(min(max(math.floor(mean), t_lo), t_hi))

        def width(i: int) -> int:
            # w0 exp(x^2/4) (bulk precision), capped at a fraction of T (deep tails: a wide block's
            # row has the spread of its largest T and the threshold of its smallest)
            x = (i - mean) / sd if sd > 0 else 0.0
            w = min(w0 * math.exp(min(x * x, 400.0) / 4.0), _WIDTH_CAP * i)
            return int(max(1.0, math.floor(w)))

        starts, ends = [], []
        i = centre + 1
        while i <= t_hi:  # above the mean: [i, i + w - 1]
            j = min(i + width(i) - 1, t_hi)
            starts.append(i)
            ends.append(j)
            i = j + 1
        i = centre
        while i >= t_lo:  # at and below the mean: [i - w + 1, i]
            j = max(i - width(i) + 1, t_lo)
            starts.append(j)
            ends.append(i)
            i = j - 1
        order = np.argsort(starts)
        starts = [starts[o] for o in order]
        ends = [ends[o] for o in order]
        s = np.asarray(starts, dtype=np.int64)
        e = np.asarray(ends, dtype=np.int64)
        wsum = np.add.reduceat(pmf, s - t_lo)
        infl = (1.0 + self._kappa_t) if upper else (1.0 - self._kappa_t)
        self.row_w = wsum * infl
        if upper:
            self.tD, self.tth, self.tR = e.astype(float), s.astype(float), e.astype(float)
        else:
            self.tD, self.tth, self.tR = s.astype(float), e.astype(float), s.astype(float)

    # -- per-row tables -----------------------------------------------------------------------
    def _build_tables(self) -> None:
        n, q, u = self.n, self.q, self.u
        upper = self.side == "upper"
        rows = self.tD.size
        E_max = math.exp(self.eps0)
        tD = self.tD
        # h windows (section 4, Hoeffding): each row gets an equal share of the drop target
        h_a = np.floor(tD / 2.0) + 1.0
        scale = (E_max + 1.0) * u / (2.0 * n)
        budget = self.log_target - math.log(max(rows, 1)) - math.log(scale)
        lw = np.log(self.row_w)  # row weights are >= e^-400 (window)
        need = budget - lw - np.log(np.maximum(tD, 1.0))
        # exp(-2 s^2/(tD - 1)) <= e^need  <=>  s >= sqrt((tD - 1) (-need) / 2)
        s = np.sqrt(np.maximum(tD - 1.0, 0.0) * np.maximum(-need, 0.0) / 2.0)
        h_b = np.minimum(np.ceil((tD - 1.0) / 2.0 + s + 1.0), tD + 1.0)
        h_b = np.where(tD <= 1.0, tD + 1.0, h_b)  # Hoeffding needs tD >= 2: keep all
        h_b = np.maximum(h_b, h_a)
        s_act = h_b - 1.0 - (tD - 1.0) / 2.0
        cut = (h_b <= tD) & (tD >= 2.0)
        lh = np.where(
            cut, lw + np.log(np.maximum(tD, 1.0)) - 2.0 * s_act**2 / np.maximum(tD - 1.0, 1.0), -np.inf
        )
        # (E + 1) * e^log_h_drop is the h-window drop at a point
        self.log_h_drop = (float(logsumexp(lh)) + math.log(u / (2.0 * n))) if upper else -math.inf
        nh = (h_b - h_a).astype(np.int64)
        self.h_a, self.h_b = h_a, h_b
        self.h_off = np.concatenate([[0], np.cumsum(nh)[:-1]]).astype(np.int64)
        log_half = math.log(0.5)
        l_anchor = log_binom_pmf(h_a, tD, log_half, log_half) + lw  # w(h_a): the largest in the row
        # R tables (section 3): [m - _LOWER_Z sd, m + _UPPER_Z sd] of Bin(N, q), N = n - tR
        if q > 0.0:
            lq, lq1 = math.log(q), math.log1p(-q)
            N = n - self.tR
            m = N * q
            sdR = np.sqrt(N * q * (1.0 - q))
            r_hi = np.minimum(N, np.ceil(m + _UPPER_Z * sdR + 1.0))
            # table end and lower-zone levels placed in the lower tail by the Chernoff exponent:
            # x_lam solves N KL(x/N || q) = lam below the mean (placement only affects tightness; the
            # values used at these points are rigorous); the end is also at least _LOWER_Z sd down
            r_lo = np.maximum(0.0, np.minimum(np.floor(m - _LOWER_Z * sdR), _kl_point(N, q, -_LOWER_LOG_CDF)))
            # a short way down to 0 (small N, skewed laws): the whole lower range in the table
            r_lo = np.where(r_lo <= np.maximum(512.0, 3.0 * (r_hi - r_lo)), 0.0, r_lo)
            mode = np.clip(np.floor((N + 1.0) * q), r_lo, r_hi)
            l_mode = log_binom_pmf(mode, N, lq, lq1)
            has_tail = r_hi < N
            l_tau = np.where(has_tail, log_binom_pmf(r_hi, np.maximum(N - 1.0, 0.0), lq, lq1), -np.inf)
            tau = (
                np.where(has_tail, N * q * (1.0 - q) * np.exp(l_tau) * (1.0 + 1e-11), 0.0)
                if upper
                else np.zeros(rows)
            )
            # lower-zone levels below the table: L_0 = R_lo, then deeper Chernoff points, then 0;
            # psi(L) <= L P(R < L) (rigorous CDF upper bound); on the lower side the zone counts 0
            lev = [r_lo] + [np.minimum(r_lo, _kl_point(N, q, lam)) for lam in _LEVEL_EXPONENTS]
            lev_psi = []
            for L in lev:
                lf = np.where(L > 0, log_binom_cdf(L - 1.0, N, q), -np.inf)
                lev_psi.append(
                    np.where(L > 0, L * np.exp(lf) * (1.0 + 1e-12), 0.0) if upper else np.zeros(rows)
                )
            f_lo = np.exp(log_binom_cdf(r_lo - 1.0, N, q)) * (1.0 + 1e-12) if upper else np.zeros(rows)
            f_lo = np.where(r_lo > 0, f_lo, 0.0)
            ratio_up = q / (1.0 - q)
        else:
            N = np.zeros(rows)
            m = np.zeros(rows)
            r_lo = np.zeros(rows)
            r_hi = np.zeros(rows)
            tau = np.zeros(rows)
            lev = [r_lo]
            lev_psi = [np.zeros(rows)]
        nR = (r_hi - r_lo + 1.0).astype(np.int64)
        r_off = np.concatenate([[0], np.cumsum(nR)[:-1]]).astype(np.int64)
        w = np.zeros(int(nh.sum()))
        S0 = np.zeros(w.size + 1)
        S1 = np.zeros(w.size + 1)
        F = np.ones(int(nR.sum()))
        psi = np.zeros(int(nR.sum()))
        kap = 0.0
        for r in range(rows):
            # h part: w(h) = P(block) b_tD(h), h in [h_a, h_b), by the ratio (tD - h)/(h + 1) < 1
            a, b = int(h_a[r]), int(h_b[r])
            o = int(self.h_off[r])
            if b > a:
                t = int(tD[r])
                hh = np.arange(a, b - 1, dtype=float)
                wr = np.empty(b - a)
                wr[0] = math.exp(float(l_anchor[r]))
                wr[1:] = wr[0] * np.cumprod((t - hh) / (hh + 1.0))
                w[o : o + wr.size] = wr
                d = 2.0 * np.arange(a, b, dtype=float) - t
                S0[o : o + wr.size] = np.cumsum(wr[::-1])[::-1]
                S1[o : o + wr.size] = np.cumsum((wr * d)[::-1])[::-1]
                kap = max(kap, KAPPA_UNIT * (3 * wr.size + 8))
            if q > 0.0:
                Nr, lo, hi, md = float(N[r]), int(r_lo[r]), int(r_hi[r]), int(mode[r])
                ro = int(r_off[r])
                pr = np.empty(hi - lo + 1)
                im = md - lo
                pr[im] = math.exp(float(l_mode[r]))
                if md < hi:  # P(r+1)/P(r) = (N - r) q / ((r + 1)(1 - q))
                    rr = np.arange(md, hi, dtype=float)
                    pr[im + 1 :] = pr[im] * np.cumprod((Nr - rr) / (rr + 1.0) * ratio_up)
                if md > lo:  # P(r)/P(r+1), r = md - 1 down to lo
                    rr = np.arange(md - 1, lo - 1, -1, dtype=float)
                    pr[:im] = (pr[im] * np.cumprod((rr + 1.0) / ((Nr - rr) * ratio_up)))[::-1]
                Fr = f_lo[r] + np.cumsum(pr)
                ps = np.empty(pr.size)
                ps[0] = lev_psi[0][r]
                ps[1:] = ps[0] + np.cumsum(Fr[:-1])
                F[ro : ro + pr.size] = Fr
                psi[ro : ro + pr.size] = ps
                kap = max(kap, KAPPA_UNIT * (3 * pr.size + 8))
        self.w, self.S0, self.S1 = w, S0, S1
        self.tables = {"r_lo": r_lo, "r_hi": r_hi, "r_off": r_off, "F": F, "psi": psi, "m": m, "tau": tau}
        self.levels = np.array(lev)  # (levels, rows), descending in the level index
        self.level_psi = np.array(lev_psi)
        # anchors (Loader, ~1e-13) and the recursions/prefix sums (<= 3 ulp a term, per table length)
        self.kappa = kap + self._kappa_t + 1e-11

    # -- evaluation ---------------------------------------------------------------------------
    def log_delta(self, eps) -> np.ndarray:
        """Bound on ``log delta(eps)`` at every point of ``eps`` (upper, or lower with ``side="lower"``).

        Args:
            eps: Array of ``eps >= 0`` (any order).

        Returns:
            Array of the same shape: ``-inf`` where ``eps >= eps0``.

        Raises:
            ParameterError: If an ``eps`` is negative, NaN or infinite.
        """
        e = check_real_array("eps", eps, low=0.0)
        flat = e.ravel()
        out = np.full(flat.shape, -np.inf)
        live = np.nonzero(flat < self.eps0)[0]
        if live.size:
            out[live] = self._log_delta_live(flat[live])
        return out.reshape(e.shape)

    def _log_delta_live(self, eps: np.ndarray) -> np.ndarray:
        upper = self.side == "upper"
        u, n = self.u, self.n
        infl = (1.0 + self.kappa) if upper else (1.0 - self.kappa)
        J = eps.size
        tot = np.zeros(J)
        err = np.zeros(J)
        # below _TINY_EPS the point is bounded through eps = 0: delta(eps) <= delta(0) (delta is
        # non-increasing) and delta(eps) >= delta(0) - (e^eps - 1) (the hockey-stick sum moves by at
        # most (e^eps - 1) sum Q); above it, a = E (e^eps0 - E)/(e^eps - 1) is finite
        pos = np.nonzero(eps >= _TINY_EPS)[0]
        zero = np.nonzero(eps < _TINY_EPS)[0]
        if pos.size and self.tD.size:
            tot[pos], err[pos] = self._rows_sum(eps[pos], upper)
        v = np.expm1(eps)
        val = v / n * (tot * infl + (err if upper else -err))
        if zero.size and self.tD.size:
            # eps = 0 (t = 0): v psi(beta) -> u d, so delta(0) = (u/n) E[D_+] = (u/n) sum_rows S1(h_a)
            s1a = np.where(self.h_b > self.h_a, self.S1[self.h_off], 0.0)
            d0 = u / n * float(np.sum(s1a)) * infl
            val[zero] = d0 if upper else np.maximum(d0 - v[zero], 0.0)
        if upper:
            drop = (np.exp(eps) + 1.0) * (math.exp(self.log_t_drop) + math.exp(self.log_h_drop))
            return np.log(np.minimum(val + drop + TINY, 1.0))
        with np.errstate(divide="ignore"):
            return np.log(np.maximum(val, 0.0))

    def _rows_sum(self, eps: np.ndarray, upper: bool) -> tuple[np.ndarray, np.ndarray]:
        """``(sum, rounding bound)`` of the row terms of (2) at ``eps > 0`` (before the ``v/n`` factor)."""
        c = self.c
        tb = self.tables
        a = np.exp(eps) * np.expm1(self.eps0 - eps) / np.expm1(eps)
        ac = a + c  # u / (2t)
        tD = self.tD[:, None]
        tth = self.tth[:, None]
        h_a = self.h_a[:, None]
        h_b = self.h_b[:, None]
        off = self.h_off[:, None]
        acj = ac[None, :]
        D0 = c * tth / acj
        Dlo = (tb["r_lo"][:, None] + c * tth) / acj
        Dup = (tb["r_hi"][:, None] + c * tth) / acj
        # h = (d + tD)/2; integer zone boundaries with a relative margin (section 3)
        h0 = np.clip(np.floor((D0 * (1.0 - RHO) + tD) / 2.0), h_a, h_b)
        hlo = np.clip(np.floor((Dlo * (1.0 - RHO) + tD) / 2.0), h0, h_b)
        hup = np.clip(np.ceil((Dup * (1.0 + RHO) + tD) / 2.0) + 1.0, hlo, h_b)
        has_up = hup < h_b
        iup = np.where(has_up, off + (hup - h_a), 0).astype(np.int64)
        s0_up = np.where(has_up, self.S0[iup], 0.0)
        s1_up = np.where(has_up, self.S1[iup], 0.0)
        m = tb["m"][:, None]
        tau = tb["tau"][:, None]
        ac_r = acj * ((1.0 + RHO) if upper else (1.0 - RHO))
        # upper zone: (a + c) S1 - (c ttheta + m - tau) S0, each summand >= (R_hi - m) w > 0
        up = np.where(has_up, ac_r * s1_up - (c * tth + m - tau) * s0_up, 0.0)
        gross = ac_r * s1_up + (c * tth + m + tau) * s0_up
        err = np.sum((self.kappa + 4.0 * 2.0**-53) * gross, axis=0)
        tot = np.sum(up, axis=0)
        if upper:
            # lower zone (x < R_lo = L_0): levels L_0 > L_1 > ... > L_m > 0; every h of the band
            # between the first h not certainly below L_{i+1} (b_{i+1}) and the first not certainly
            # below L_i (b_i; b_0 = h_lo) has psi <= psi(L_i); the band weight is S0(b_{i+1}) - S0(b_i)
            # (+ 4 ulp of S0(b_{i+1}) for the subtraction); the last band ends at h_0 (x <= 0 below)
            ends = (
                [hlo]
                + [
                    np.clip(np.floor(((L[:, None] + c * tth) / acj * (1.0 - RHO) + tD) / 2.0), h0, hlo)
                    for L in self.levels[1:]
                ]
                + [h0]
            )
            for i, psi_l in enumerate(self.level_psi):
                hi_b, lo_b = ends[i], ends[i + 1]
                lo_b = np.minimum(lo_b, hi_b)
                has = lo_b < hi_b
                i_lo = np.where(has, off + (lo_b - h_a), 0).astype(np.int64)
                i_hi = np.where(has & (hi_b < h_b), off + (hi_b - h_a), 0).astype(np.int64)
                s_lo = np.where(has, self.S0[i_lo], 0.0)
                s_hi = np.where(has & (hi_b < h_b), self.S0[i_hi], 0.0)
                band = np.maximum(s_lo - s_hi, 0.0) + 4.0 * 2.0**-53 * s_lo
                tot += np.sum(psi_l[:, None] * band, axis=0)
        tot += self._middle(hlo, hup, a, tot, upper)
        return tot, err

    def _middle(
        self, hlo: np.ndarray, hup: np.ndarray, a: np.ndarray, base: np.ndarray, upper: bool
    ) -> np.ndarray:
        """Sum over the middle zones of ``w(h) psi(beta)`` per point (section 3).

        Per cell (row, point) ``beta`` is affine in ``h`` (step ``2 (a + c)``); its rounding
        margin is the cell's largest. A cell whose crude bound ``S_cell max(beta_top, 0)``
        (``psi(x) <= x_+``) is below ``PRUNE`` times a lower estimate of the point's total is
        counted by that bound instead of term by term (tightness only: the bound is added).
        """
        J = a.size
        out = np.zeros(J)
        c = self.c
        tb = self.tables
        cnt = (hup - hlo).astype(np.int64)
        r_idx, j_idx = np.nonzero(cnt > 0)
        if r_idx.size == 0:
            return out
        cc = cnt[r_idx, j_idx]
        h_s = hlo[r_idx, j_idx]
        h_e = hup[r_idx, j_idx]
        tD = self.tD[r_idx]
        tth = self.tth[r_idx]
        aj = a[j_idx]
        d_lo = 2.0 * h_s - tD
        d_hi = 2.0 * (h_e - 1.0) - tD
        thd_lo = tth - d_lo  # ttheta - d at the cell's first h (falls by 2 per h)
        woff = (self.h_off[r_idx] + (h_s - self.h_a[r_idx])).astype(np.int64)
        if upper:
            # prune: cell weight <= S0(h_lo) - S0(h_up) (+ 4 ulp); psi(x) <= x_+ <= beta at h_up - 1
            end = self.h_off[r_idx] + (h_e - self.h_a[r_idx])
            s_hi = np.where(h_e < self.h_b[r_idx], self.S0[end.astype(np.int64)], 0.0)
            s_lo = self.S0[woff]
            wc = np.maximum(s_lo - s_hi, 0.0) + (self.kappa + 4.0 * 2.0**-53) * s_lo
            ex_top = RHO * (aj * np.abs(d_hi) + c * np.abs(tth - d_hi))
            x_top = aj * d_hi - c * (tth - d_hi) + ex_top
            x_bot = aj * d_lo - c * thd_lo - RHO * (aj * np.abs(d_lo) + c * np.abs(thd_lo))
            crude = wc * np.maximum(x_top, 0.0)
            low = wc * np.maximum(x_bot - tb["m"][r_idx], 0.0) * (1.0 - 1e-9)  # psi >= x - m
            est = base.copy()
            np.maximum.at(est, j_idx, low)
            prune = crude <= PRUNE * est[j_idx]
            if np.any(prune):
                out += np.bincount(j_idx[prune], weights=crude[prune], minlength=J)
                keep = ~prune
                r_idx, j_idx, cc, aj, d_lo, thd_lo, woff = (
                    r_idx[keep],
                    j_idx[keep],
                    cc[keep],
                    aj[keep],
                    d_lo[keep],
                    thd_lo[keep],
                    woff[keep],
                )
        if r_idx.size == 0:
            return out
        # cells sorted by their number of terms, longest first: the k-th term of every cell with
        # more than k terms is then a prefix of the arrays (views, no repeats)
        order = np.argsort(-cc, kind="stable")
        cc, j_idx, aj, d_lo, thd_lo, woff, r_idx = (
            cc[order],
            j_idx[order],
            aj[order],
            d_lo[order],
            thd_lo[order],
            woff[order],
            r_idx[order],
        )
        r_lo = tb["r_lo"][r_idx]
        r_hi = tb["r_hi"][r_idx]
        roff0 = tb["r_off"][r_idx] - r_lo.astype(np.int64)
        m_c = tb["m"][r_idx]
        F, psi, w = tb["F"], tb["psi"], self.w
        c_ex = c * RHO
        a_ex = aj * RHO
        acc = np.zeros(cc.size)
        active = np.searchsorted(-cc, -np.arange(1, int(cc[0]) + 1), side="right")  # cells with > k terms
        for k, A in enumerate(active):
            # beta = a d - c (ttheta - d) per term (no running sum: near eps0 it cancels), rounded
            # outward by RHO times the magnitudes of its two parts
            d = d_lo[:A] + 2.0 * k
            thd = thd_lo[:A] - 2.0 * k
            ad = aj[:A] * d
            ex = a_ex[:A] * np.abs(d) + c_ex * np.abs(thd)
            x = ad - c * thd
            x = x + ex if upper else x - ex
            wt = w[woff[:A] + k]
            rl, rh = r_lo[:A], r_hi[:A]
            if upper:
                # exact on [R_lo, R_hi + 1); psi(R_lo) below; slope <= 1 above
                xc = np.clip(x, rl, rh + 1.0)
                b = np.minimum(np.floor(xc), rh)
                idx = roff0[:A] + b.astype(np.int64)
                val = psi[idx] + (xc - b) * F[idx] + np.maximum(x - xc, 0.0)
            else:
                # exact inside; beyond R_hi the larger of the chord (below psi: convex) and x - m
                # (psi(x) = x - m + E[(R - x)_+]); 0 below R_lo
                b = np.clip(np.floor(x), rl, rh)
                idx = roff0[:A] + b.astype(np.int64)
                chord = psi[idx] + (x - b) * F[idx]
                val = np.where(x < rl, 0.0, np.maximum(chord, x - m_c[:A]))
            acc[:A] += wt * val
        out += np.bincount(j_idx, weights=acc, minlength=J)
        return out


def certified_log_delta_tables(eps, k: int, eps0: float, n: int, *, block_rtol: float = 2e-4) -> np.ndarray:
    """Certified upper bound on the blanket ``log delta`` at every point of ``eps`` (one pass).

    Args:
        eps: Array of ``eps >= 0``.
        k: Number of categories.
        eps0: Local privacy parameter, ``<= EPS0_GRID_MAX``.
        n: Number of users, ``>= 2``.
        block_rtol: See :class:`BlanketTables` (keyword only).

    Returns:
        ``log delta`` upper bounds, same shape as ``eps``.

    Raises:
        ParameterError: As :class:`BlanketTables`.

    Example:
        >>> import numpy as np
        >>> float(certified_log_delta_tables(np.array([2.0]), 10, 2.0, 1000)[0])
        -inf
    """
    return BlanketTables(k, eps0, n, block_rtol=block_rtol).log_delta(eps)
