"""Sub-linear certified evaluation of the privacy-blanket divergence of shuffled k-RR.

.. note::
   Fixed defect (issue 12; the regression test is ``tests/test_blanket_fast_adversarial.py``).
   Up to version 0.2.0-dev this module returned ``-inf`` at ``k = 2, eps0 = 13.5, n = 1e6``,
   ``eps = eps0 (1 - 1e-12)`` although the divergence is ``e^-26.4``. Root cause: ``c_t`` below
   (a float close to 1) was rounded to ``1 + 2^-52`` while the true ``1 - c_t = 2 (1 - r)/(1 + E)``
   was ``3.7e-17``, so every ``x = 2h - tD - c_t ttheta`` of the top terms came out negative; the
   group boundaries were placed by those rounded signs and, for ``k = 2`` (``R = 0``), the group
   below the window was dropped with no bound. Two further defects of the same kind: the tail
   group's closed form was a difference of two terms that agree to ``1 - c_t`` (relative), and
   absolute ``1e-300`` error floors in units scaled by ``(u/n)(1 + E)/2 ~ e^1048`` (``eps0 =
   700``) gave ``log delta = +350``. Section 4 says how each is now avoided.

This module computes a certified upper bound (and a certified lower bound, so the gap is known)
on exactly the quantity that :func:`shuffle_accounting.shuffled_krr.blanket.certified_log_delta`
computes: the privacy-blanket divergence of Balle, Bell, Gascón, Nissim (*The Privacy Blanket
of the Shuffle Model*, CRYPTO 2019, Sec. 4.1 decomposition; the adversary also learns who drew
from the blanket). Notation as in ``blanket``: ``p = e^eps0 pbar``, ``pbar = 1/(e^eps0 + k - 1)``,
``gamma = k pbar``, ``u = e^eps0 - 1``, ``E = e^eps``, ``v = E - 1``, ``r = v / u``.

**1. The divergence as one expectation over n i.i.d. users.** In ``blanket`` every outcome
``o = (S, h0, h1)`` has ``P_D(o) = w(o) (pbar S + c h0)`` and ``P_D'(o) = w(o) (pbar S + c h1)``
(``c = p - pbar``) with ``w(o) = P(M = S-1) (S-1)! / (h0! h1! rho!) (k-2)^rho k^-(S-1)``,
``rho = S - h0 - h1``, ``M ~ Bin(n-1, gamma)``. Writing out ``P(M = S-1)`` and comparing with the
multinomial law ``P_n`` of the counts ``(h0, h1, rho)`` of ``x0``, ``x1`` and other values among
``n`` i.i.d. users that each report ``x0`` w.p. ``pbar``, ``x1`` w.p. ``pbar``, a third value w.p.
``(k-2) pbar`` and nothing w.p. ``1 - gamma``, one finds ``w(o) = P_n(h0, h1, rho) / (n pbar)``
(the factors ``pbar^S (k-2)^rho (1-gamma)^(n-S)`` agree and ``(n-1)!/n! = 1/n``). Since
``(P_D - E P_D')_+ = w c (h0 - E h1 - r S)_+`` and ``c / pbar = u``,

    delta(eps) = (u / n) E[Z_+],   Z = h0 - E h1 - r S   under P_n.                        (1)

With ``T = h0 + h1 ~ Bin(n, 2 pbar)``, ``D = h0 - h1`` (given ``T = t``: ``D_t = 2 Bin(t, 1/2) - t``,
a symmetric +-1 walk of ``t`` steps) and ``R = S - T`` (given ``T = t``: ``R_t ~ Bin(n - t, qB)``,
``qB = (k-2) pbar / (1 - 2 pbar)``, independent of ``D``),

    Z = ((1+E)/2) (D - c_t T - c_r R),   c_t = (v + 2r)/(1+E),   c_r = 2r/(1+E)            (2)

(expand: the coefficients of ``h0``, ``h1``, ``R`` are ``1-r``, ``-(E+r)``, ``-r`` on both sides).

**2. One row.** For integers ``tD, ttheta, tR`` let
``row(tD, ttheta, tR) = E[(D_tD - c_t ttheta - c_r R_tR)_+]``; the exact contribution of ``T = t``
is ``P(T=t) ((1+E)/2) row(t, t, t)``. With ``h ~ Bin(tD, 1/2)`` (``D = 2h - tD``),
``beta_h = (2h - tD - c_t ttheta) / c_r`` and ``R ~ Bin(N, q)`` (``N = n - tR``, ``q = qB``),
``row = c_r sum_h b(h) E[(beta_h - R)_+]``, and for every real ``beta`` with ``b = floor(beta)``

    E[(beta - R)_+] = (beta - N q) F_N(b) + N q (1-q) P(Bin(N-1, q) = b)                   (3)

(``E[R; R <= b] = N q F_{N-1}(b-1)`` and ``F_N(b) = F_{N-1}(b-1) + (1-q) P(Bin(N-1,q) = b)``).
The ``h`` are split at the ``R``-window ``[s_lo, s_hi] = Nq -+ z_R sd(R)``:

* middle ``h`` (``beta_h`` in the window): (3) term by term (one incomplete beta, two pmfs),
  written as ``(beta - b) F_N(b) + E[(b - R)_+]`` (the first part is ``>= 0``); the second part
  is exactly ``0`` for ``b = 0``, the positive sum ``sum_{j<b} (b - j) P(R = j)`` for
  ``1 <= b <= 16`` below ``Nq`` (where (3) would cancel by a factor of about ``Nq^2 / b``), and
  ``(b - Nq) F_N(b) + Nq(1-q) P(Bin(N-1,q) = b)`` otherwise;
* tail ``h >= H`` (``beta_h >= Nq + z_R sd(R) / 2``, checked on the computed ``x`` with three
  times its rounding bound as margin): ``E[(beta-R)_+] = beta - Nq + E[(R-beta)_+]``; the first
  part sums in closed form without cancellation, ``sum_{h>=H} b(h) c_r (beta_h - Nq) =
  2 E[(h - H)_+] + c_H P(h >= H)`` with ``c_H = c_r (beta_H - Nq) >= 0`` (``beta_h = beta_H +
  2 (h - H) / c_r``) and ``E[(h - H)_+]`` from :func:`_log_upper_partial` (two non-negative terms
  below the mean of ``h``, a positive sum within 16 of ``tD``, the rearranged closed form
  otherwise); by (3) ``E[(R-beta)_+] = (Nq - beta)(1 - F_N(b)) + Nq(1-q) P(Bin(N-1,q)=b) <=
  Nq(1-q) P(Bin(N-1,q)=b)`` for ``beta >= Nq``; that remainder (times ``P(h >= H)``) is added to
  the upper bound;
* lower ``h < h_a`` (``beta_h < s_lo``): ``E[(beta - R)_+]`` is increasing in ``beta``, and by (3)
  at most ``Nq(1-q) P(Bin(N-1,q) = floor(beta'))`` for ``beta' <= Nq`` (else at most ``beta'_+``,
  the only bound for ``k = 2`` where ``R = 0``), ``beta'`` the rounded-up ``beta_{h_a - 1}``; this
  (times ``P(h < h_a) <= 1``) is added to the upper bound. Any placement of ``h_a`` and ``H`` is
  valid for the middle and lower groups; only the tail group needs ``beta_H >= Nq``.

**3. Blocks of T (the sub-linear step).** For ``t1 <= t <= t2``

    row(t1, t2, t1) <= row(t, t, t) <= row(t2, t1, t2).                                      (4)

Proof: couple ``D_t2 = D_t + D''`` with ``D''`` an independent mean-zero walk; ``x -> (x - y)_+``
is convex, so Jensen (conditionally on the rest) gives ``E f(D_t2 - Y) >= E f(D_t - Y)``; couple
``R_t = R_t2 + B''`` with ``B'' ~ Bin(t2 - t, q) >= 0`` independent, and ``f`` is non-decreasing,
so replacing ``R_t`` by ``R_t2`` and ``c_t t`` by ``c_t t1`` can only increase it. The lower bound
is symmetric. Hence ``sum_{t in [t1,t2]} P(T=t) row(t,t,t)`` lies between ``P(T in [t1,t2])``
times the two outer rows: one row per block instead of one per ``t``. The two outermost blocks
``[0, t_lo-1]`` and ``[t_hi+1, n]`` are bounded the same way, so nothing is dropped without a
bound. Block widths grow like ``w0 exp(x^2/4)`` with ``x`` the standardised ``T``; ``w0`` is
reduced until the certified gap ``(upper - lower) / lower`` is at most ``rtol``. Because both
bounds are certified, the returned upper bound is within ``rtol`` (relative) of the exact
blanket divergence. The block error is first order in the width (relative ``~ w z^2 / n`` for
a ``z``-standard-deviation threshold), so the number of rows is ``O(z^2 / (sqrt(n) rtol))``
(plus the exact central rows while that is below ``sqrt(n)``): it *falls* with ``n`` at fixed
``rtol`` once ``n`` is large; each row costs ``O(z)`` incomplete-beta values.

Every refinement pass yields a certified bracket; the tightest ends seen are returned, starting
from the one-user curve ``pbar (e^eps0 - e^eps)`` (the divergence is non-increasing in ``n``: the
extra users act as a common Markov kernel on both datasets). Work caps (at most 4096 middle
terms per row, i.e. a capped ``R``-window; at most 3e5 rows plus middle terms per pass, checked
before a row set of more than 6e5 middle terms is evaluated, and 1.2e6 in all; at most 2e4 blocks
on either side of the mean of ``T``) bind only in large-deviation regimes (deltas far below
``1e-100``, e.g. ``eps`` next to ``eps0`` at large ``n``, where the mass of ``E[Z_+]`` sits many
standard deviations of ``T`` away from its mean); then the refinement stops, and the upper bound
is still certified but the bracket can be much wider than ``rtol`` (the returned lower bound
shows the achieved gap).

**4. Rounding (outward).** Log-pmfs (Loader) and log-CDFs (incomplete beta) from
:mod:`shuffle_accounting._binomial` (relative error ~1e-13). Positive and negative
terms are summed separately in log space; ``1e-10`` times the sum of their magnitudes is added
to the upper bound (and subtracted from the lower bound); the forms of section 2 keep those
magnitudes close to the value where it matters. ``c_t`` is never used in a value: with
``1 - r = expm1(eps - eps0) / expm1(-eps0)`` (no cancellation) and ``a_t = 1 - c_t =
2 (1 - r) / (1 + E)``, every ``x = c_r beta_h = (2h - tD - ttheta) + a_t ttheta`` is an exact
integer plus a non-negative product (``c_t`` only places the group boundaries). Values are
computed in units of ``x S``, ``S = min((1+E)/2, 2^600)``, where ``S c_r = sigma r`` and
``S a_t = sigma (1 - r)``, ``sigma = min(1, 2^601/(1+E))``: nothing is subnormal and no absolute
error floor is needed (``log S`` is taken out of the prefactor). The computed ``x`` is within
``1e-13 (S a_t ttheta + |x|)`` of the true one (one product and one sum, each 1 ulp, plus the
few-ulp error of ``1 - r``, ``sigma`` and ``S``). ``beta`` is a floating-point number;
(3) is exact for the float value, and the distance to the true ``beta`` (at most that bound
over ``c_r``) moves (3) by at most that distance times
``F_N(b) + P(R = b+1)`` (``E[(beta-R)_+]`` has slope ``F_N``), which is added too;
``P_N(b+1) <= P_{N-1}(b)(1 + rho_+)`` with the pmf ratio ``rho_+``. Block masses are sums of
pmfs (narrow blocks, by exact pmf-ratio recursion from a Loader anchor) or tail differences
(wide outer blocks, where no cancellation occurs).

Numeric helpers (binomial log-pmf, CDF and survival upper bounds, logsumexp) come from the shared
internal module :mod:`shuffle_accounting._binomial` (its CDF uses the rigorous pmf series below
1e-200, where ``betainc`` was found 0.07 % low at ``exp(-624)``).
"""

from __future__ import annotations

import math

import numpy as np

from .._binomial import log_binom_cdf as _log_binom_cdf
from .._binomial import log_binom_pmf as _log_binom_pmf
from .._binomial import log_binom_sf as _log_binom_sf
from .._binomial import logsumexp
from .._logmath import bisect_bracket
from .._validation import check_delta, check_int, check_real, check_real_array
from ..curves import epsilon_from_delta
from ..randomizers import KRR

__all__ = ["DEFAULT_RTOL", "certified_log_delta_grid", "certified_log_delta_bounds", "certified_epsilon"]

#: Default certified relative tolerance of the returned delta versus the exact blanket divergence.
DEFAULT_RTOL = 1e-6
#: Relative inflation of the positive and negative parts (special-function and rounding error).
_REL_INFLATION = 1e-10
#: Required size (relative to the result) of the bounded, not computed, parts.
_TAIL_FRACTION = 1e-11
_LH = math.log(0.5)
#: Work cap on the number of middle terms per row (see :meth:`FastBlanketEvaluator.bounds`).
_MAX_MIDDLE = 4096.0
#: Work budget (rows plus middle terms) of one refinement pass; four times that for all passes.
_MAX_WORK = 300_000
#: Largest number of blocks on either side of the mean of T in one partition.
_MAX_ROWS = 20_000


class _OverBudget(Exception):
    """A partition would exceed :data:`_MAX_ROWS` blocks or a row set ``2 _MAX_WORK`` middle
    terms (internal: ends the refinement; the tightest certified bracket so far is returned)."""


#: Bound on the relative rounding error of ``x = (2h - tD - ttheta) + a_t ttheta`` (section 4).
_X_ERR = 1e-13
#: Partial expectations of a binomial this close to its end are summed term by term.
_SMALL_B = 16.0


def _lse(parts) -> float:
    """``logsumexp`` of a list of 1-d arrays / floats (``-inf`` if empty)."""
    arrs = [np.atleast_1d(np.asarray(p, dtype=float)) for p in parts]
    arrs = [a for a in arrs if a.size]
    if not arrs:
        return -math.inf
    return float(logsumexp(np.concatenate(arrs)))


class FastBlanketEvaluator:
    """Constants and cached block tables for one ``(k, eps0, n)``."""

    def __init__(self, k: int, eps0: float, n: int) -> None:
        self.k, self.eps0, self.n = k, eps0, n
        krr = KRR(k, eps0)
        self.log_p, self.log_pbar = krr.log_p, krr.log_pbar
        self.pbar = math.exp(self.log_pbar)
        self.u = math.expm1(eps0)
        self.qT = 2.0 * self.pbar
        self.qB = krr.other_given_not_pair
        self.mT = n * self.qT
        self.sT = math.sqrt(n * self.qT * (1.0 - self.qT))
        self._parts: dict = {}
        self.trace: list | None = None  # diagnostics (tests and benchmarks only)
        self._last_bnd = -math.inf
        self._w_scale = 1.0  # block-width scale that the last evaluation needed (speed only)
        self._work = 0  # rows plus middle terms evaluated (work budget of :meth:`bounds`)

    # -- blocks of T ---------------------------------------------------------------------
    def _window(self, zT: float) -> tuple[int, int]:
        t_lo = max(0, int(math.floor(self.mT - zT * self.sT)))
        t_hi = min(self.n, int(math.ceil(self.mT + zT * self.sT)))
        return t_lo, t_hi

    def _pmf_table(self) -> tuple[int, np.ndarray]:
        """``(t0, log P(T = t0 + i))`` on ``mT -+ 12 sd(T)``, by exact pmf ratios from Loader anchors.

        Chunks of 256: within a chunk ``log pmf(t+1) - log pmf(t) = log((n-t) q / ((t+1)(1-q)))``
        is summed (at most 256 roundings of small numbers: error far below 1e-13).
        """
        if "pmf" in self._parts:
            return self._parts["pmf"]
        n, q = self.n, self.qT
        lq, l1q = math.log(q), math.log1p(-q)
        t0 = max(0, int(math.floor(self.mT - 12.0 * self.sT)) - 1)
        t1 = min(n, int(math.ceil(self.mT + 12.0 * self.sT)) + 1)
        L = 256
        cnt = t1 - t0 + 1
        nch = -(-cnt // L)
        tt = t0 + np.arange(nch * L, dtype=float).reshape(nch, L)
        with np.errstate(divide="ignore", invalid="ignore"):
            lr = np.log(np.maximum(n - tt, 0.0)) + lq - np.log(tt + 1.0) - l1q
        lr[:, 1:] = lr[:, :-1].copy()
        lr[:, 0] = 0.0
        anchor = _log_binom_pmf(tt[:, 0], np.full(nch, float(n)), lq, l1q)
        with np.errstate(invalid="ignore"):
            table = (anchor[:, None] + np.cumsum(lr, axis=1)).ravel()[:cnt]
        table = np.where(np.isnan(table), -np.inf, table)
        self._parts["pmf"] = (t0, table)
        return t0, table

    def partition(self, t_lo: int, t_hi: int, w0: float):
        """Blocks ``[t1, t2]`` covering ``0..n`` with upper / lower bounds on their log masses."""
        key = (t_lo, t_hi, w0)
        if key in self._parts:
            return self._parts[key]
        s = max(self.sT, 1.0)

        def width(t: int) -> int:
            x = (t - self.mT) / s
            if w0 <= 0:
                return 1
            return max(1, int(min(w0 * math.exp(min(x * x / 4.0, 600.0)), 1e15)))

        # widths are set at the block end nearest to the mean: from the centre outwards
        c = min(max(int(round(self.mT)), t_lo), t_hi)
        left, right = [], []
        t = c
        while t <= t_hi:
            t2 = min(t + width(t) - 1, t_hi)
            right.append((t, t2))
            t = t2 + 1
            if len(right) > _MAX_ROWS:
                raise _OverBudget
        t = c - 1
        while t >= t_lo:
            t1 = max(t - width(t) + 1, t_lo)
            left.append((t1, t))
            t = t1 - 1
            if len(left) > _MAX_ROWS:
                raise _OverBudget
        blocks = left[::-1] + right
        if t_lo > 0:
            blocks.insert(0, (0, t_lo - 1))
        if t_hi < self.n:
            blocks.append((t_hi + 1, self.n))
        t1s = np.array([b[0] for b in blocks], dtype=float)
        t2s = np.array([b[1] for b in blocks], dtype=float)
        lm_up, lm_lo = self._log_masses(t1s, t2s)
        if len(self._parts) > 24:
            pmf = self._parts.get("pmf")
            self._parts.clear()
            if pmf is not None:
                self._parts["pmf"] = pmf
        self._parts[key] = (t1s, t2s, lm_up, lm_lo)
        return self._parts[key]

    def _log_masses(self, t1: np.ndarray, t2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Upper and lower bounds on ``log P(T in [t1, t2])``.

        Blocks inside the pmf table and at most 4096 wide: sum of pmfs (relative error below
        1e-11: Loader anchors 1e-13, at most 255 ratio steps of absolute log error ~1e-14 and
        their cumulative sum; both bounds widened by 1e-10). Others: ``F(t2) - F(t1-1)`` (or the survival
        functions above the mean) with the rounding error ``2e-13 (F(t2) + F(t1-1))`` of the two
        incomplete-beta values made explicit.
        """
        n, q = self.n, self.qT
        up = np.empty(t1.shape)
        lo = np.empty(t1.shape)
        tab0, tab = self._pmf_table()
        w = t2 - t1 + 1
        inside = (t1 >= tab0) & (t2 <= tab0 + tab.size - 1) & (w <= 4096)
        if np.any(inside):
            a = (t1[inside] - tab0).astype(np.int64)
            cnt = (t2[inside] - t1[inside] + 1).astype(np.int64)
            first = np.cumsum(cnt) - cnt
            rows = np.repeat(np.arange(a.size), cnt)
            seg = tab[a[rows] + (np.arange(rows.size) - first[rows])]
            m = np.maximum.reduceat(seg, first)
            with np.errstate(under="ignore", invalid="ignore"):
                sm = np.add.reduceat(np.exp(seg - m[rows]), first)
                res = np.where(np.isfinite(m), m + np.log(sm), -np.inf)
            up[inside] = res + 1e-10
            lo[inside] = res - 1e-10
        out = ~inside
        if np.any(out):
            a, b = t1[out], t2[out]
            nn = np.full(a.shape, float(n))
            below = (a + b) / 2.0 <= self.mT
            big = np.where(below, _log_binom_cdf(b, nn, q), _log_binom_sf(a, nn, q))
            small = np.where(below, _log_binom_cdf(a - 1, nn, q), _log_binom_sf(b + 1, nn, q))
            with np.errstate(invalid="ignore", divide="ignore", under="ignore"):
                ratio = np.exp(np.minimum(small - big, 0.0))  # in [0, 1]
                core = big + np.log1p(-ratio)
                rel = 2e-13 * (1.0 + ratio) / (1.0 - ratio)
                up_v = np.where(ratio < 1.0, core + np.log1p(rel), big)
                lo_v = np.where(rel < 0.5, core + np.log1p(-np.minimum(rel, 0.5)), -np.inf)
            up[out] = np.where(np.isfinite(big), up_v, -np.inf)
            lo[out] = np.where(np.isfinite(big), lo_v, -np.inf)
        return up, lo

    # -- rows ----------------------------------------------------------------------------
    def rows(self, ev: dict, tD: np.ndarray, tth: np.ndarray, tR: np.ndarray, zR: float):
        """Signed log terms of ``row(tD_i, tth_i, tR_i)`` (module docstring, section 2).

        Returns ``(pos, neg, err, bound)``: lists of ``(log-magnitudes, row indices)`` of the
        positive and negative exact terms, of the rounding-error allowances, and of the bounded
        (not computed) remainders (the latter two only count towards the upper bound).
        Every ``x = c_r beta = 2h - tD - c_t ttheta`` is formed as the exact integer
        ``2h - tD - ttheta`` plus ``a_t ttheta`` (``a_t = 1 - c_t`` computed directly), never
        through a rounded ``c_t`` (module docstring, section 4).
        """
        lw = np.zeros(tD.shape)
        q = self.qB
        # placement of the groups in plain units; every value in units of x * S (section 4)
        c_r0, a_t0 = ev["c_r"], ev["a_t"]
        c_r, a_t, S = ev["c_r_s"], ev["a_t_s"], ev["S"]
        lcr = math.log(c_r) if c_r > 0 else -math.inf
        N = self.n - tR
        Nq = N * q
        sdR = np.sqrt(N * q * (1.0 - q))
        at_th = a_t * tth  # >= 0, relative error <= 1e-15
        y0 = tth - a_t0 * tth  # c_t ttheta: only places the group boundaries (any placement is valid)
        pos, neg, err, bnd = [], [], [], []
        lq, l1q = (math.log(q), math.log1p(-q)) if q > 0 else (-math.inf, 0.0)
        with np.errstate(divide="ignore"):
            lNq1q = np.log(Nq * (1.0 - q))

        def xval(h, rows=None):
            """``x = c_r beta_h`` and a bound on its rounding error (both in units of ``x``)."""
            if rows is None:
                i_part, at = 2.0 * h - tD - tth, at_th
            else:
                i_part, at = 2.0 * h - tD[rows] - tth[rows], at_th[rows]
            x = S * i_part + at
            return x, _X_ERR * (at + np.abs(x))

        if c_r > 0:
            s_lo = Nq - zR * sdR
            s_hi = Nq + zR * sdR
            h_a = np.clip(np.ceil((tD + y0 + c_r0 * s_lo) / 2.0), 0.0, tD + 1.0)
            H = np.clip(np.ceil((tD + y0 + c_r0 * s_hi) / 2.0), h_a, tD + 1.0)
        else:  # eps = 0: R does not enter; every h is in the closed-form tail group
            H = np.clip(np.ceil((tD + y0) / 2.0), 0.0, tD + 1.0)
            h_a = H
        # the tail group needs the true beta_H >= Nq (+ half the window): push H up past rounding
        for _ in range(4):
            xH, eH = xval(H)
            with np.errstate(invalid="ignore"):
                bad = (H <= tD) & (xH - c_r * Nq - 3.0 * eH < 0.5 * c_r * zR * sdR)
            if not np.any(bad):
                break
            H = np.where(bad, H + 1.0, H)
        H = np.where(bad, tD + 1.0, H)  # never expected: no closed-form tail group then
        h_a = np.minimum(h_a, H)
        # middle group, formula (3) split as c_r (beta - b) F(b) + c_r E[(b - R)_+]
        cnt = (H - h_a).astype(np.int64)
        if int(cnt.sum()) > 2 * _MAX_WORK:
            raise _OverBudget  # checked before the work, not after (ends the refinement)
        self._work = getattr(self, "_work", 0) + int(cnt.sum()) + tD.size
        if c_r > 0 and cnt.sum() > 0:
            rows = np.repeat(np.arange(tD.size), cnt)
            starts = np.repeat(np.cumsum(cnt) - cnt, cnt)
            h = h_a[rows] + (np.arange(rows.size) - starts)
            tDm, Nm, Nqm = tD[rows], N[rows], Nq[rows]
            x, ex = xval(h, rows)
            with np.errstate(over="ignore"):
                beta = x / c_r
            b = np.floor(beta)
            lF = _log_binom_cdf(b, Nm, q)
            lwm = _log_binom_pmf(h, tDm, _LH, _LH)
            if q > 0:
                lpm = _log_binom_pmf(b, Nm - 1.0, lq, l1q)
                # P(Bin(N, q) = b + 1) = P(Bin(N-1, q) = b) N q / (b + 1), for the slope bound
                with np.errstate(divide="ignore", invalid="ignore"):
                    lpn1 = np.where(b >= 0.0, lpm + np.log(Nm * q / (b + 1.0)), -np.inf)
            else:
                lpm = np.full(b.shape, -np.inf)
                lpn1 = np.full(b.shape, -np.inf)
            live = b >= 0.0
            with np.errstate(divide="ignore", invalid="ignore"):
                # c_r (beta - b) F(b) >= 0: beta - b is exact for the float beta
                pos.append((np.where(live, lwm + lcr + np.log(beta - b) + lF, -np.inf), rows))
                # c_r E[(b - R)_+] = c_r ((b - Nq) F(b) + Nq (1-q) P(Bin(N-1, q) = b)), exactly 0
                # at b = 0; for 1 <= b <= _SMALL_B below Nq the positive sum of (b - j) P(R = j)
                small = (b >= 1.0) & (b <= _SMALL_B) & (b < Nqm)
                cf = live & (b >= 1.0) & ~small
                dm = c_r * (b - Nqm)
                t1 = lwm + np.log(np.abs(dm)) + lF
                pos.append((np.where(cf & (dm > 0), t1, -np.inf), rows))
                neg.append((np.where(cf & (dm < 0), t1, -np.inf), rows))
                pos.append((np.where(cf, lwm + lcr + lNq1q[rows] + lpm, -np.inf), rows))
            if np.any(small):
                si = np.nonzero(small)[0]
                j = np.arange(int(_SMALL_B), dtype=float)[None, :]
                bs = b[si][:, None]
                lpj = _log_binom_pmf(np.broadcast_to(j, (si.size, j.size)), Nm[si][:, None], lq, l1q)
                with np.errstate(divide="ignore", invalid="ignore"):
                    terms = np.where(j < bs, np.log(np.maximum(bs - j, 1.0)) + lpj, -np.inf)
                    mx = np.max(terms, axis=1)
                    lsum = mx + np.log(np.sum(np.exp(terms - mx[:, None]), axis=1))
                pos.append((lwm[si] + lcr + lsum, rows[si]))
            with np.errstate(divide="ignore"):
                err.append((lwm + np.log(ex) + np.logaddexp(lF, lpn1), rows))
        # lower group h < h_a: (P(h < h_a) <= 1) * c_r * E[(beta' - R)_+]
        low = (h_a >= 1.0) & (c_r > 0)
        if np.any(low):
            hb = h_a[low] - 1.0
            xb = S * (2.0 * hb - tD[low] - tth[low]) + at_th[low]
            xb = xb + 2.0 * _X_ERR * (at_th[low] + np.abs(xb))
            with np.errstate(over="ignore", invalid="ignore"):
                beta_b = xb / c_r  # +-inf for a subnormal c_r (eps ~ 1e-308)
                beta_b = np.where(np.isfinite(beta_b), beta_b + 1e-14 * np.abs(beta_b) + 1e-9, beta_b)
            if q > 0:
                ok = beta_b <= Nq[low]
                bb = np.floor(np.minimum(beta_b, Nq[low]))
                lpb = _log_binom_pmf(bb, N[low] - 1.0, lq, l1q)
                val = lw[low] + lcr + lNq1q[low] + lpb
            else:  # R = 0: E[(beta' - R)_+] = beta'_+
                ok = np.zeros(beta_b.shape, dtype=bool)
                val = np.full(beta_b.shape, -np.inf)
            # if beta' lies above Nq (or R = 0), use E[(beta'-R)_+] <= beta'_+
            with np.errstate(divide="ignore", invalid="ignore"):
                val = np.where(ok, val, lw[low] + lcr + np.log(np.maximum(beta_b, 0.0)))
            bnd.append((val, np.nonzero(low)[0]))
        # tail group h >= H: sum_h b(h) (x_h - c_r Nq) = 2 E[(h - H)_+] + c_H P(h >= H)
        m = (H <= tD) & (tD >= 1.0)
        if np.any(m):
            tt, HH = tD[m], H[m]
            im = np.nonzero(m)[0]
            xH, eH = xval(HH, im)
            cH = xH - c_r * Nq[m]  # >= 3 eH by the choice of H
            lsf = _log_binom_sf(HH, tt, 0.5)
            with np.errstate(divide="ignore"):
                pos.append((lw[m] + np.log(cH) + lsf, im))
                err.append((lw[m] + np.log(eH + 1e-13 * c_r * Nq[m]) + lsf, im))
            for p_, n_, idx in _log_upper_partial(tt, HH):
                pos.append((lw[m][idx] + math.log(2.0) + ev["log_S"] + p_, im[idx]))
                neg.append((lw[m][idx] + math.log(2.0) + ev["log_S"] + n_, im[idx]))
            if c_r > 0 and q > 0:
                # E[(R - beta)_+] is non-increasing in beta: evaluate the bound at beta' = the
                # rounded-down beta_H (still >= Nq by the margin of H), so that a floor that
                # rounding moved up cannot pick a smaller pmf; factor 2 kept as slack
                with np.errstate(over="ignore", invalid="ignore"):
                    betaH = np.maximum((xH - eH) / c_r * (1.0 - 1e-15), Nq[m])
                bH = np.floor(betaH)
                lpH = _log_binom_pmf(bH, N[m] - 1.0, lq, l1q)
                bnd.append((lw[m] + lsf + lcr + lNq1q[m] + lpH + math.log(2.0), im))
        # a row with tD = 0 is E[(-y - c_r R)_+] = 0
        return pos, neg, err, bnd

    # -- one eps -------------------------------------------------------------------------
    def _eps_consts(self, eps: float) -> dict:
        E = math.exp(eps)
        v = math.expm1(eps)
        r = v / self.u
        c_r = 2.0 * r / (1.0 + E)
        c_t = (v + 2.0 * r) / (1.0 + E)
        # 1 - r = (e^eps0 - e^eps) / u = expm1(eps - eps0) / expm1(-eps0) (both factors negative),
        # without cancellation; a_t = 1 - c_t = 2 (1 - r) / (1 + E) decides the sign of the top
        # terms when eps is next to eps0, where the rounded c_t can be >= 1 (section 4)
        one_r = math.expm1(eps - self.eps0) / math.expm1(-self.eps0)
        # rows work in units of x * S, S = min((1 + E) / 2, 2^600): then S c_r = sigma r and
        # S a_t = sigma (1 - r) with sigma = min(1, 2^601 / (1 + E)), never subnormal (section 4)
        log_s = min(math.log1p(E) - math.log(2.0), 600.0 * math.log(2.0))
        S = math.exp(log_s) if log_s < 600.0 * math.log(2.0) else 2.0**600
        sigma = 1.0 if S < 2.0**600 else math.exp(601.0 * math.log(2.0) - math.log1p(E))
        # rough standardised threshold of D (only steers window sizes and block widths)
        t = max(self.mT, 1.0)
        kD = c_t * t + c_r * (self.n - t) * self.qB
        zD = kD / math.sqrt(t)
        return {
            "E": E,
            "v": v,
            "c_r": c_r,
            "c_t": c_t,
            "a_t": 2.0 * one_r / (1.0 + E),
            "one_r": one_r,
            "S": S,
            "log_S": log_s,
            "c_r_s": sigma * r,
            "a_t_s": sigma * one_r,
            "zD": zD,
            "log_pref": math.log(self.u / self.n) + math.log1p(E) - math.log(2.0) - log_s,
        }

    def _bounds_at(self, ev: dict, t_lo: int, t_hi: int, w0: float, zR: float):
        """``(log upper, log lower, log outer)`` of ``E[Z_+]`` (without the prefactor)."""
        t1, t2, lm_up, lm_lo = self.partition(t_lo, t_hi, w0)
        live = np.isfinite(lm_up)
        t1, t2, lm_up, lm_lo = t1[live], t2[live], lm_up[live], lm_lo[live]
        outer = (t2 < t_lo) | (t1 > t_hi)
        ex = (t1 == t2) & ~outer
        blk = ~ex
        W = self._weigh
        # exact rows (t1 == t2) serve both bounds, with the upper / lower masses; the lower
        # bound omits the bounded remainders (upper bounds on omitted non-negative terms)
        pe, ne, ee, be = self.rows(ev, t2[ex], t1[ex], t2[ex], zR)
        # block rows, upper and lower (module docstring, eq. (4))
        pu, nu, eu, bu = self.rows(ev, t2[blk], t1[blk], t2[blk], zR)
        pl, nl, el, _ = self.rows(ev, t1[blk], t2[blk], t1[blk], zR)
        self._last_bnd = _lse(W(be, lm_up[ex]) + W(bu, lm_up[blk]))
        up = self._combine(
            W(pe, lm_up[ex]) + W(pu, lm_up[blk]),
            W(ne, lm_up[ex]) + W(nu, lm_up[blk]),
            W(ee, lm_up[ex]) + W(eu, lm_up[blk]),
            W(be, lm_up[ex]) + W(bu, lm_up[blk]),
            upper=True,
        )
        lo = self._combine(
            W(pe, lm_lo[ex]) + W(pl, lm_lo[blk]),
            W(ne, lm_lo[ex]) + W(nl, lm_lo[blk]),
            W(ee, lm_lo[ex]) + W(el, lm_lo[blk]),
            [],
            upper=False,
        )
        # the outer blocks' share of the upper bound, to check that it is negligible
        ob = np.nonzero(outer[blk])[0]
        sel = lambda g: [(a[np.isin(r, ob)], r[np.isin(r, ob)]) for a, r in g]  # noqa: E731
        l_outer = _lse(W(sel(pu), lm_up[blk]) + W(sel(eu), lm_up[blk]) + W(sel(bu), lm_up[blk]))
        return up, lo, l_outer

    @staticmethod
    def _weigh(groups, lw: np.ndarray) -> list:
        """Add the per-row log weights ``lw`` to ``(log terms, row indices)`` pairs."""
        return [a + lw[r] for a, r in groups]

    @staticmethod
    def _combine(pos, neg, err, bnd, upper: bool) -> float:
        lp, ln = _lse(pos), _lse(neg)
        M = max(lp, ln)
        if M == -math.inf:
            core = -math.inf
            lmag = -math.inf
        else:
            with np.errstate(under="ignore"):
                diff = math.exp(lp - M) - (math.exp(ln - M) if ln > -math.inf else 0.0)
            core = M + math.log(diff) if diff > 0 else -math.inf
            count = sum(np.size(a) for a in pos) + sum(np.size(a) for a in neg)
            # relative inflation plus 1e-300 per term for underflow in the scaled sums
            lmag = float(
                np.logaddexp(
                    math.log(_REL_INFLATION) + float(np.logaddexp(lp, ln)), M + math.log(1e-300 * count)
                )
            )
        lerr = float(np.logaddexp(lmag, _lse(err)))
        if upper:
            return _lse([core, lerr, _lse(bnd)])
        if core == -math.inf or lerr >= core:
            return -math.inf
        return core + math.log1p(-math.exp(lerr - core))

    def bounds(self, eps: float, rtol: float) -> tuple[float, float]:
        """Certified ``(log upper, log lower)`` of delta(eps), ``0 <= eps < eps0``."""
        ev = self._eps_consts(eps)
        zD = ev["zD"]
        zR = max(8.0, math.sqrt(zD * zD + 2.0 * math.log(1.0 / _TAIL_FRACTION) + 10.0))
        zT = 2.0 * math.ceil(zR / 2.0)  # quantised, so that block tables are reused across eps
        # first-order block error rate per unit of T (heuristic; the loop below certifies)
        t = max(self.mT, 1.0)
        e1 = (zD * zD + 1.0) / (2.0 * t) + (ev["c_t"] + ev["c_r"] * self.qB) * (zD + 1.0) / math.sqrt(t)
        # start from the model, scaled by what the previous evaluation of this instance needed
        w_model = _model_w0(rtol, e1)
        w0 = max(2.0**-30, w_model * self._w_scale)
        # work cap: at most _MAX_MIDDLE middle terms per row (binds only for deltas far below
        # 1e-100); past it the result stays certified but may be looser than rtol
        cap = max(8.0, _MAX_MIDDLE / max(ev["c_r"] * math.sqrt(self.n * self.qB * (1.0 - self.qB)), 1e-300))
        zR = min(zR, cap)
        # every pass gives a certified bracket: keep the tightest ends seen; stop refining when the
        # work (rows plus middle terms) of one pass or of all passes exceeds its budget (only in
        # large-deviation regimes, deltas far below 1e-100): the bracket then shows the gap
        # start from the certified bound of one user: the divergence is non-increasing in n (a
        # common Markov kernel, see blanket.py's _within_budget), and for n = 1 it is the exact
        # k-RR curve pbar (e^eps0 - e^eps) = pbar u (1 - r); inflated by 1e-10 for rounding
        best_up = (
            self.log_pbar + math.log(self.u) + math.log(ev["one_r"]) + math.log1p(1e-10) - ev["log_pref"]
        )
        best_lo = -math.inf
        self._work = 0
        total = 0
        learnt = False
        for _ in range(60):
            t_lo, t_hi = self._window(zT)
            before = self._work
            try:
                up, lo, l_out = self._bounds_at(ev, t_lo, t_hi, w0, zR)
            except _OverBudget:
                break
            best_up, best_lo = min(best_up, up), max(best_lo, lo)
            step_work = self._work - before
            total += step_work
            if self.trace is not None:
                self.trace.append((eps, zT, zR, w0, len(self.partition(t_lo, t_hi, w0)[0]), up, lo, l_out))
            if step_work > _MAX_WORK or total > 4 * _MAX_WORK:
                break
            if l_out > math.log(_TAIL_FRACTION) + up and (t_lo > 0 or t_hi < self.n):
                zT = 2.0 * math.ceil(0.65 * zT)  # the crude outer blocks matter: widen (x1.3)
                continue
            if self._last_bnd > math.log(0.1 * rtol) + up and zR < cap:
                # the bounded remainders of the rows matter (a large-deviation regime that the
                # normal-scale window misses): widen the R-window, up to the work cap
                zR = min(cap, 1.3 * zR + 1.0)
                zT = max(zT, 2.0 * math.ceil(zR / 2.0))
                continue
            gap_ok = lo > -math.inf and up - lo <= math.log1p(rtol)
            if gap_ok or w0 == 0.0:
                learnt = gap_ok
                break
            if self._last_bnd > math.log(0.5 * rtol) + up:
                break  # the bounded remainders (capped windows), not the blocks, dominate
            if lo == -math.inf:
                w0 = w0 / 8.0
            else:
                ratio = math.expm1(min(up - lo, 50.0)) / rtol  # > 1
                w0 = w0 / max(2.0, 2.0 ** math.ceil(math.log2(1.2 * ratio)))
            if w0 < 2.0**-30:
                w0 = 0.0
        if learnt and w0 > 0.0:  # only a converged evaluation teaches the next one its widths
            self._w_scale = w0 / w_model
            if up - lo < math.log1p(rtol / 16.0):
                self._w_scale *= 4.0  # far inside the tolerance: try wider blocks next time
        up, lo = best_up, best_lo
        lp = ev["log_pref"]
        # every delta is at most 1 (a difference of probabilities): cap both ends at log 1 = 0
        return min(up + lp, 0.0), (min(lo + lp, 0.0) if lo > -math.inf else -math.inf)


def _log_upper_partial(t: np.ndarray, H: np.ndarray) -> list:
    """``log E[(h - H)_+]`` for ``h ~ Bin(t, 1/2)``, ``0 <= H <= t`` integers, without cancellation.

    Returns a list of ``(log positive part, log negative part, indices)``; the value is
    ``exp(pos) - exp(neg)`` and ``neg`` is ``-inf`` except in the closed form of case 3. With
    ``B ~ Bin(t - 1, 1/2)`` (``E[h; h >= H] = (t/2) P(B >= H - 1)``, ``P(h >= H) = P(B >= H - 1) -
    P(B = H - 1)/2``):

    1. ``2H <= t``: ``(t/2 - H) P(B >= H - 1) + (H/2) P(B = H - 1)`` (two non-negative terms);
    2. ``t - H <= _SMALL_B``: ``sum_{j=1}^{t-H} j P(h = H + j)`` (non-negative terms);
    3. else ``((t-H)/2) P(B = H) - (H - t/2) P(B >= H + 1)`` (the same identity rearranged with
       ``P(B = H - 1) = P(B = H) H / (t - H)``); it cancels by a factor of about
       ``min(t - H, 2 z^2)`` (``z`` the standardised ``H``), covered by the relative inflation.
    """
    out = []
    lh = _LH
    t1 = t - 1.0
    c1 = 2.0 * H <= t
    if np.any(c1):
        i = np.nonzero(c1)[0]
        tt, hh = t[i], H[i]
        with np.errstate(divide="ignore"):
            a = np.log(tt / 2.0 - hh) + _log_binom_sf(hh - 1.0, t1[i], 0.5)
            b = np.log(hh / 2.0) + _log_binom_pmf(hh - 1.0, t1[i], lh, lh)
        out.append((np.logaddexp(a, b), np.full(i.size, -np.inf), i))
    c2 = ~c1 & (t - H <= _SMALL_B)
    if np.any(c2):
        i = np.nonzero(c2)[0]
        j = np.arange(1.0, _SMALL_B + 1.0)[None, :]
        hj = H[i][:, None] + j
        lp = _log_binom_pmf(hj, np.broadcast_to(t[i][:, None], hj.shape), lh, lh)
        with np.errstate(divide="ignore"):
            terms = np.where(hj <= t[i][:, None], np.log(j) + lp, -np.inf)
        mx = np.max(terms, axis=1)
        with np.errstate(invalid="ignore", under="ignore"):
            val = np.where(np.isfinite(mx), mx + np.log(np.sum(np.exp(terms - mx[:, None]), axis=1)), -np.inf)
        out.append((val, np.full(i.size, -np.inf), i))
    c3 = ~c1 & ~c2
    if np.any(c3):
        i = np.nonzero(c3)[0]
        tt, hh = t[i], H[i]
        a = np.log((tt - hh) / 2.0) + _log_binom_pmf(hh, t1[i], lh, lh)
        b = np.log(hh - tt / 2.0) + _log_binom_sf(hh + 1.0, t1[i], 0.5)
        out.append((a, b, i))
    return out


def _model_w0(rtol: float, e1: float) -> float:
    """Block-width scale ``w0`` (a power of 2) whose predicted relative gap is about ``rtol``.

    Predicted gap ``e1 sum_blocks P(block) (w_block - 1)`` with ``w(x) = w0 e^(x^2/4)`` rounded
    down: ``e1 w0 sqrt(2) erfc(x1 / 2)``, ``x1 = 2 sqrt(ln(2 / w0))`` the edge of the exact rows
    (``x1 = 0`` for ``w0 >= 2``). A heuristic for speed only: the caller certifies the gap.
    """

    def gap(w0: float) -> float:
        x1 = 2.0 * math.sqrt(math.log(2.0 / w0)) if w0 < 2.0 else 0.0
        return e1 * w0 * math.sqrt(2.0) * math.erfc(x1 / 2.0)

    w0 = 2.0**40
    while w0 > 2.0**-30 and gap(w0) > rtol:
        w0 /= 2.0
    return w0


def _check_common(k, eps0, n, rtol):
    k = check_int("k", k, minimum=2)
    eps0 = check_real("eps0", eps0, low=0.0, low_open=True)
    n = check_int("n", n, minimum=1)
    rtol = check_real("rtol", rtol, low=1e-9, high=1.0)
    return k, eps0, n, rtol


def certified_log_delta_bounds(
    eps, k, eps0, n, *, rtol: float = DEFAULT_RTOL, evaluator: FastBlanketEvaluator | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Certified bracket ``(log upper, log lower)`` of the privacy-blanket divergence of shuffled k-RR.

    The divergence is the one of :func:`shuffle_accounting.shuffled_krr.blanket.certified_log_delta`
    (Balle, Bell, Gascón, Nissim, CRYPTO 2019, Sec. 4.1 blanket decomposition, exact on the
    sufficient statistic), evaluated by one row per block of ``T`` (module docstring, eq. (4)).
    Both ends are certified: ``lower <= exact <= upper``, and ``upper <= exact (1 + rtol)``
    (the blocks are refined until ``upper - lower <= rtol * lower``). The gap can stay wider only
    past the work cap of the module docstring (deltas far below 1e-100) or where the rounding
    budget alone exceeds ``rtol`` (heavy cancellation, e.g. ``eps`` within a few percent of
    ``eps0`` with ``rtol`` below 1e-7); the returned bracket always shows the achieved gap. For ``n = 1`` both are the
    exact k-RR curve ``pbar (e^eps0 - e^eps)`` (inflated / deflated by 1e-10 relative); for
    ``eps >= eps0`` both are ``-inf`` (delta = 0).

    Args:
        eps: Scalar or array of ``eps >= 0`` (finite).
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite > 0.
        n: Number of users, integer >= 1.
        rtol: Certified relative tolerance of the upper bound (keyword only), in ``[1e-9, 1]``.
        evaluator: A :data:`FastBlanketEvaluator` of the same ``(k, eps0, n)`` to use (keyword
            only; internal): successive calls then share its pmf and block tables and its learnt
            block widths (the values are certified either way).

    Returns:
        Two arrays of the shape of ``eps``: log upper bound and log lower bound of delta.

    Raises:
        ParameterError: If an argument is out of range, NaN, infinite, boolean or non-integer.

    Example:
        >>> up, lo = certified_log_delta_bounds(0.5, 4, 1.0, 7)
        >>> round(float(np.exp(up)), 8), bool(up - lo < 1e-9)
        (0.02053451, True)
    """
    e = check_real_array("eps", eps, low=0.0)
    k, eps0, n, rtol = _check_common(k, eps0, n, rtol)
    flat = e.ravel()
    up = np.full(flat.shape, -np.inf)
    lo = np.full(flat.shape, -np.inf)
    live = flat < eps0
    if n == 1:
        log_pbar = KRR(k, eps0).log_pbar
        x = flat[live]
        val = log_pbar + eps0 + np.log(-np.expm1(x - eps0))
        up[live] = val + math.log1p(_REL_INFLATION)
        lo[live] = val + math.log1p(-_REL_INFLATION)
        return up.reshape(e.shape), lo.reshape(e.shape)
    if np.any(live):
        fb = evaluator
        if fb is None or (fb.k, fb.eps0, fb.n) != (k, eps0, n):
            fb = FastBlanketEvaluator(k, eps0, n)
        for i in np.nonzero(live)[0]:
            up[i], lo[i] = fb.bounds(float(flat[i]), rtol)
    return up.reshape(e.shape), lo.reshape(e.shape)


def certified_log_delta_grid(
    eps, k, eps0, n, *, rtol: float = DEFAULT_RTOL, evaluator: FastBlanketEvaluator | None = None
) -> np.ndarray:
    """Certified upper bound on log delta(eps) of shuffled k-RR for a whole grid of eps at once.

    Same quantity and guarantees as the upper end of :func:`certified_log_delta_bounds` (never
    below the exact privacy-blanket divergence, at most ``rtol`` above it, relatively, except
    past the work cap for deltas far below 1e-100); the block tables (pmf of ``T``, block masses)
    and the learnt block widths are shared by all eps of the grid, but every eps needs its own
    rows, so the cost grows linearly with the number of eps.

    Args:
        eps: Scalar or array of ``eps >= 0`` (finite).
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite > 0.
        n: Number of users, integer >= 1.
        rtol: Certified relative tolerance (keyword only), in ``[1e-9, 1]``.
        evaluator: A shared :data:`FastBlanketEvaluator` (keyword only; see
            :func:`certified_log_delta_bounds`).

    Returns:
        ``np.ndarray`` of the shape of ``eps`` (0-d for a scalar); ``-inf`` where delta is 0.

    Raises:
        ParameterError: If an argument is out of range, NaN, infinite, boolean or non-integer.

    Example:
        >>> d = np.exp(certified_log_delta_grid([0.0, 0.5, 1.0], 4, 1.0, 7))
        >>> [round(float(x), 8) for x in d]
        [0.14794626, 0.02053451, 0.0]
    """
    return certified_log_delta_bounds(eps, k, eps0, n, rtol=rtol, evaluator=evaluator)[0]


def certified_epsilon(delta: float, k: int, eps0: float, n: int, *, rtol: float = DEFAULT_RTOL) -> float:
    """Smallest eps (rounded up) whose certified upper delta (``rtol``-tight) is ``<= delta``.

    Root finding on ``log upper(eps)`` (decreasing in eps) of :func:`certified_log_delta_bounds`:
    secant steps in a bracket by the library's one root finder
    (:func:`shuffle_accounting.curves.epsilon_from_delta`, ``method="newton"`` without
    derivative), first with cheap evaluations (tolerance ``max(rtol, 1e-4)``, still certified upper
    bounds) to 1e-6, then with ``rtol`` from the first phase's prediction and slope. The returned eps is certified by its own
    evaluation (``delta(eps) <= delta``); it is the smallest such eps to about 1e-9 relative
    (the last secant prediction). Returns 0 when ``delta(0) <= delta``; never more than ``eps0``.

    Args:
        delta: Target in ``(0, 1)``.
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite > 0.
        n: Number of users, integer >= 1.
        rtol: Tolerance of the final delta evaluations (keyword only).

    Returns:
        The certified epsilon.

    Raises:
        ParameterError: If an argument is out of range.

    Example:
        >>> e = certified_epsilon(1e-4, 4, math.log(13), 1000)
        >>> round(e, 4)
        0.3891
    """
    delta = check_delta("delta", delta)
    k, eps0, n, rtol = _check_common(k, eps0, n, rtol)
    lt = math.log(delta)
    fb = FastBlanketEvaluator(k, eps0, n) if n > 1 else None

    def f(e: float, tol: float) -> float:
        if e >= eps0:
            return -math.inf
        if fb is None:
            return float(certified_log_delta_bounds(e, k, eps0, 1, rtol=tol)[0])
        return fb.bounds(e, tol)[0]

    if f(0.0, rtol) <= lt:
        return 0.0
    approx = _approx_log_delta(k, eps0, n)
    x = _guess(approx, eps0, lt)
    hh = 1e-4 * x
    slope = (approx(x + hh) - approx(x - hh)) / (2.0 * hh)  # only steers the steps
    # the one root finder (secant steps in the bracket [0, eps0], eps0 vouched: eps0-DP; 0 was
    # evaluated above). Phase 1: cheap evaluations (still certified upper bounds) to ~1e-6
    first = epsilon_from_delta(
        lambda e: f(e, max(rtol, 1e-4)),
        delta,
        bound="upper",
        lo=0.0,
        hi=eps0,
        rtol=1e-6,
        atol=0.0,
        max_iter=60,
        method="newton",
        log=True,
        guess=x,
        slope=slope,
        settle=False,
        check_lo=False,
        full_output=True,
    )
    hi_cert = first.epsilon  # certified by a cheap evaluation (or eps0)
    # phase 2: rtol-tight evaluations from just above the phase-1 prediction, to 1e-9
    return epsilon_from_delta(
        lambda e: f(e, rtol),
        delta,
        bound="upper",
        lo=0.0,
        hi=hi_cert,
        rtol=1e-9,
        atol=0.0,
        max_iter=40,
        method="newton",
        log=True,
        guess=min(first.estimate * (1.0 + 1e-7), hi_cert),
        slope=first.slope if math.isfinite(first.slope) else slope,
        aim=3e-10,
        check_lo=False,
    )


def _approx_log_delta(k: int, eps0: float, n: int):
    """Normal approximation of ``log delta(eps)`` via (1) (speed only: starting point, slope)."""
    pbar = KRR(k, eps0).pbar
    u = math.expm1(eps0)
    pr = (pbar, pbar, (k - 2) * pbar)

    def approx(e: float) -> float:
        E = math.exp(e)
        r = math.expm1(e) / u
        w = (1 - r, -E - r, -r)
        m1 = sum(a * b for a, b in zip(w, pr))
        mu = n * m1
        s = math.sqrt(max(n * (sum(a * a * b for a, b in zip(w, pr)) - m1 * m1), 1e-300))
        a = mu / s
        val = s * math.exp(-a * a / 2) / math.sqrt(2 * math.pi) + mu * 0.5 * math.erfc(-a / math.sqrt(2))
        return math.log(max(val, 1e-300)) + math.log(u / n)

    return approx


def _guess(approx, eps0: float, lt: float) -> float:
    """eps where the approximation crosses ``lt`` (bisection; speed only)."""
    return bisect_bracket(lambda e: approx(e) > lt, 0.0, eps0)[1]
