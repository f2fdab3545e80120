"""Certified evaluation of the hockey-stick divergence of the clone pair (internal engine).

The pair (Feldman, McMillan, Talwar 2021, Section 3; FMT 2023 for stronger clones): with
``alpha = e^eps0/(e^eps0 + 1)``, ``C ~ Bin(m, q)`` (``m = n - 1`` other users, ``q`` the clone
probability) and ``A | C ~ Bin(C, 1/2)``::

    P = (A + 1, C - A) w.p. alpha,      (A, C - A + 1) w.p. 1 - alpha,
    Q = (A + 1, C - A) w.p. 1 - alpha,  (A, C - A + 1) w.p. alpha.

``C`` is a function of the output (coordinate sum minus one), so
``D_{e^eps}(P||Q) = sum_c Bin(m, q)(c) f(c)`` with ``f(c)`` the divergence given ``C = c``. Writing
``b`` for the first coordinate minus one and ``B_c = Bin(c, 1/2)``::

    f(c) = sum_{b=0}^{c} [kappa1 B_c(b) - kappa2 B_c(b + 1)]_+
         = kappa2 sum_b B_c(b) [s - (c - b)/(b + 1)]_+,     s = kappa1/kappa2,

with ``kappa1 = alpha - e^eps (1 - alpha)`` and ``kappa2 = e^eps alpha - (1 - alpha)``. Only
non-negative terms are summed (no cancellation).

Three facts make the evaluation fast *and* keep it an upper bound:

1. **f is non-increasing in c.** The pair with ``c + 1`` clones is the pair with ``c`` clones
   post-processed by the Markov kernel "add 1 to a uniformly chosen coordinate" (``A + Bern(1/2) ~
   Bin(c + 1, 1/2)``, applied identically to ``P`` and ``Q``), so by the data-processing inequality
   ``f(c + 1) <= f(c)``. Hence for a block ``[c_j, c_{j+1})`` of clone counts,
   ``sum_{c in block} w(c) f(c) <= W_j f(c_j)`` with ``W_j`` the exact block mass, and
   ``>= W_j f(c_{j+1})``. Blocks are refined until the two differ by a relative ``rel_slack``; only the
   upper sum is returned. The same fact makes the divergence non-increasing in ``q``
   (``Bin(m, q)`` is stochastically increasing), so ``q`` is rounded *down* by a few ulps before use.
2. **Truncated sums are bounded and added.** Clone counts outside a window ``[lo, hi]`` have
   Chernoff-KL-bounded mass (``f <= 1`` below the window, ``f <= f(hi)`` above it). The inner sum is
   cut at ``b_end`` and its tail bounded by the geometric series
   ``kappa2 s B_c(b_end + 1) / (1 - rho)``, ``rho = (c - b_end - 1)/(b_end + 2)`` (the ratio
   ``B_c(b+1)/B_c(b)`` decreases in ``b``).
3. **Floating-point error is bounded per term.** ``log B_c(b)`` and ``log Bin(m, q)(c)`` are sums of
   three ``gammaln`` values of integers plus ``c log``-terms. ``scipy.special.gammaln`` (Cephes
   ``lgam``) documents a peak error of 3.5e-16 relative (absolute where ``|lgam| < 1``) over
   ``[2.7, 2.5e305]`` and 5.4e-16 on ``[0, 3]``; we allow ``_RHO_LGAMMA = 64`` ulps relative (absolute
   below 1), a 40x margin, checked against mpmath in the test suite. Each floating-point addition
   and product contributes at most one unit roundoff ``u = 2^-53`` of its magnitude; we add
   ``4u`` times the sum of the magnitudes of everything that entered a log term (a 2x margin on
   ``2u`` per operation for at most two chained operations per magnitude). The ratio factor
   ``s - t`` gets ``16u (s + t)`` (``s`` is computed from ``expm1`` values with at most ~6 roundings).
   The final log-sum-exp adds ``u`` per summand plus the rounding of the subtraction of the
   maximum and of the final ``log`` (see :func:`_lse_up`). All allowances are *added* to the logs,
   so every summed term is an upper bound of its exact value.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from .._logmath import UNIT_ROUNDOFF
from .._validation import check_max_work, check_work
from ..curves import epsilon_from_delta, step_up_until
from ..curves import log_target as curve_log_target

_U = 2.0 * UNIT_ROUNDOFF  # machine epsilon 2^-52 (2 units of roundoff: already a 2x margin on u)
_RHO_LGAMMA = 64.0 * _U
_INNER_L = 20.0  # inner cut: Hoeffding tail exp(-20) relative to the bulk (the tail is still added)
EXACT_MAX = 1024  # windows with at most this many clone counts are summed at every c (no blocks)
_CHUNK = 4_000_000  # max grid cells per vectorised chunk
LN2 = math.log(2.0)


def log_factorial_with_error(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``log(x!)`` for integer-valued float arrays, and an upper bound on its absolute error."""
    v = gammaln(x + 1.0)
    return v, _RHO_LGAMMA * np.maximum(np.abs(v), 1.0)


def _lse_up(x: np.ndarray) -> float:
    """Upper bound on ``log(sum(exp(x)))`` given the float array ``x`` (entries -inf allowed).

    Error terms (``u`` = unit roundoff): ``x - max`` is rounded by ``u |x - max|``; ``exp`` is within
    1 ulp; a sum of ``N`` non-negative terms is within ``N u`` relative; ``log`` of the sum and the
    final addition are within ``u`` of their magnitudes. Each is doubled.
    """
    x = np.asarray(x, dtype=float).ravel()
    x = x[np.isfinite(x)]
    if x.size == 0:
        return -math.inf
    mx = float(x.max())
    d = x - mx
    s = float(np.sum(np.exp(d)))
    ls = math.log(s)
    slack = _U * (float(np.max(-d)) + 2.0 + x.size + abs(ls) + abs(mx) + abs(ls))
    return mx + ls + slack


class ClonePair:
    """Certified upper bounds for the clone pair of ``n`` users, local ``eps0``, clone prob. ``q``."""

    def __init__(self, eps0: float, n: int, q: float, *, max_work: int | None = None):
        self.max_work = check_max_work(max_work)
        self.eps0 = float(eps0)
        self.m = int(n) - 1
        q_dn = float(q) * (1.0 - 8.0 * _U)  # round down: the divergence is non-increasing in q
        self.q = q_dn
        self.logq = math.log(q_dn)
        self.log1mq = math.log1p(-q_dn) if q_dn < 1.0 else -math.inf
        m = self.m
        self.mean = m * q_dn
        self.sd = math.sqrt(max(m * q_dn * (1.0 - q_dn), 0.0))
        self._lgm = float(gammaln(m + 1.0))
        # work of the first estimate: ~80 rows of the inner sum, each ~sqrt(5 c) wide
        self._width = math.sqrt(5.0 * (self.mean + 40.0 * self.sd) + 1.0) + 3.0
        self._check_work(80.0 * self._width)

    def _check_work(self, work: float) -> None:
        check_work(
            f"the clone-pair divergence for n = {self.m + 1}, clone probability {self.q:.6g}",
            work,
            max_work=self.max_work,
            alternative="use the closed form (fmt2021_closed_form_* / fmt2023_krr_closed_form_*), "
            "which is O(1)",
        )

    # ------------------------------------------------------------------ constants for one eps
    def _consts(self, eps: float) -> tuple[float, float]:
        """``s = kappa1/kappa2`` and ``log kappa2`` (both within a few ulps)."""
        e0 = self.eps0
        num = -math.expm1(eps - e0)  # 1 - e^(eps - eps0) > 0
        den = math.expm1(eps) + (-math.expm1(-e0))  # e^eps - e^-eps0 > 0
        s = num / den
        # log kappa2 = log(e^(eps+eps0) - 1) - log(e^eps0 + 1)
        t = eps + e0
        log_k2 = t + math.log(-math.expm1(-t)) - (e0 + math.log1p(math.exp(-e0)))
        return s, log_k2 + 8.0 * _U * (abs(log_k2) + t + 1.0)

    # ------------------------------------------------------------------ log f(c), certified
    def log_f(self, eps: float, c: np.ndarray) -> np.ndarray:
        """Upper bounds on ``log f(c)`` for an integer array ``c`` (requires ``0 <= eps < eps0``)."""
        c = np.asarray(c, dtype=float)
        s, log_k2 = self._consts(eps)
        # first b with (c - b)/(b + 1) < s is the smallest integer > (c - s)/(1 + s); start 2 below
        b_first = np.clip(np.floor((c - s) / (1.0 + s)) - 2.0, 0.0, c)
        half = c / 2.0
        d0 = np.maximum(b_first - half, 0.0)
        b_end = np.minimum(c, np.ceil(half + np.sqrt(d0 * d0 + c * _INNER_L / 2.0)) + 1.0)
        width = (b_end - b_first + 1.0).astype(np.int64)
        out = np.empty(c.shape)
        order = np.argsort(width)
        start = 0
        while start < len(order):  # chunk rows so that rows * max_width stays bounded
            stop = start + 1
            while stop < len(order) and (stop - start + 1) * int(width[order[stop]]) <= _CHUNK:
                stop += 1
            idx = order[start:stop]
            out[idx] = self._log_f_rows(c[idx], b_first[idx], b_end[idx], s, log_k2)
            start = stop
        return out

    def _log_f_rows(self, c, b_first, b_end, s, log_k2):
        W = int(np.max(b_end - b_first)) + 1
        # every row gets the full width W (extra terms are exact terms of the sum), capped at c
        b_end = np.minimum(c, b_first + (W - 1))
        j = np.arange(W, dtype=np.int64)
        bf = b_first.astype(np.int64)
        ci = c.astype(np.int64)
        Bi = bf[:, None] + j[None, :]
        capped = bool(np.any(b_end < b_first + (W - 1)))
        if capped:
            Bi = np.minimum(Bi, ci[:, None])
        CBi = ci[:, None] - Bi
        t_lo = int(min(bf.min(), (ci - b_end.astype(np.int64)).min()))
        t_hi = int(max(b_end.max(), (ci - bf).max()))
        if t_hi - t_lo + 1 < Bi.size:  # tabulate log-factorials once, then look them up
            tab = gammaln(np.arange(t_lo, t_hi + 1, dtype=float) + 1.0)
            gb = tab[Bi - t_lo]
            gcb = tab[CBi - t_lo]
        else:
            gb = gammaln(Bi + 1.0)
            gcb = gammaln(CBi + 1.0)
        gc, ec = log_factorial_with_error(c)
        # per-row error of log B_c(b): log(x!) is increasing in integer x >= 1, so the largest
        # |log b!| in a row is at b_end and the largest |log (c-b)!| at c - b_first
        g1, e1 = log_factorial_with_error(b_end)
        g2, e2 = log_factorial_with_error(c - b_first)
        mag = np.abs(gc) + g1 + g2 + c * LN2
        row_const = gc - c * LN2
        logB = row_const[:, None] - gb - gcb
        t = CBi / (Bi + 1.0)
        # g = s - t, error <= 16u (s + t)
        g_up = s * (1.0 + 16.0 * _U) - t * (1.0 - 16.0 * _U)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_g = np.log(g_up)  # -inf / nan where g_up <= 0
        terms = logB + np.where(g_up > 0.0, log_g, -np.inf)
        if capped:
            terms = np.where(Bi == (bf[:, None] + j[None, :]), terms, -np.inf)
        # |log g_up| <= |log(16 u s)| (g_up >= 16u s when positive, and <= s(1 + 16u) <= 2)
        row_err = ec + e1 + e2 + 4.0 * _U * (mag + 45.0 + abs(math.log(s)) + np.abs(row_const))
        # geometric tail bound beyond b_end: sum_{b > b_end} B_c(b)(s - t_b) <= s B_c(bt)/(1 - rho)
        has_tail = b_end < c
        bt = np.minimum(b_end + 1.0, c)
        gt, et = log_factorial_with_error(bt)
        gct, ect = log_factorial_with_error(c - bt)
        logBt = gc - gt - gct - c * LN2
        errBt = ec + et + ect + 4.0 * _U * (np.abs(gc) + np.abs(gt) + np.abs(gct) + c * LN2)
        rho = np.minimum((c - bt) / (bt + 1.0) * (1.0 + 4.0 * _U), 1.0)  # < 1 since bt > c/2
        with np.errstate(divide="ignore", invalid="ignore"):
            log_tail = (
                math.log(s)
                + logBt
                + errBt
                - np.log1p(-rho) * (1.0 + 4.0 * _U)
                + 8.0 * _U * (np.abs(logBt) + 4.0)
            )
        log_tail = np.where(has_tail, log_tail, -np.inf)
        # row-wise certified log-sum-exp: d = terms - max is rounded by <= u|d| <= 745u where
        # exp(d) does not underflow; each underflowed term is < 1e-300 relative to the max term
        mx = np.max(terms, axis=1)
        has = np.isfinite(mx)
        mxs = np.where(has, mx, 0.0)
        ssum = np.sum(np.exp(terms - mxs[:, None]), axis=1) + W * 1e-300
        ls = np.log(ssum)
        main = mxs + ls + row_err + _U * (750.0 + W + 2.0 * np.abs(ls) + np.abs(mxs))
        main = np.where(has, main, -np.inf)
        tot = np.logaddexp(main, log_tail)
        tot_f = np.where(np.isfinite(tot), tot, 0.0)
        res = np.where(
            np.isfinite(tot), tot + log_k2 + 4.0 * _U * (np.abs(tot_f) + abs(log_k2) + 2.0), -np.inf
        )
        return np.minimum(res, 0.0)  # f <= TV <= 1

    # ------------------------------------------------------------------ binomial weights
    def log_w(self, c: np.ndarray) -> np.ndarray:
        """Upper bounds on ``log P[C = c]`` (``C ~ Bin(m, q)``) for an integer array ``c``."""
        c = np.asarray(c, dtype=float)
        m = self.m
        gc, ec = log_factorial_with_error(c)
        gmc, emc = log_factorial_with_error(m - c)
        em = _RHO_LGAMMA * max(abs(self._lgm), 1.0)
        a = c * self.logq
        b = np.where(m - c > 0, (m - c) * self.log1mq, 0.0)
        val = self._lgm - gc - gmc + a + b
        err = em + ec + emc + 4.0 * _U * (abs(self._lgm) + np.abs(gc) + np.abs(gmc) + np.abs(a) + np.abs(b))
        return val + err

    def _kl_exponent(self, x: np.ndarray) -> np.ndarray:
        """``-m KL(x || q)`` (Chernoff exponent), inflated by a relative 1e-9 (covers rounding)."""
        q = self.q
        with np.errstate(divide="ignore", invalid="ignore"):
            t1 = np.where(x > 0, x * (np.log(x) - self.logq), 0.0)
            t2 = np.where(x < 1, (1 - x) * (np.log1p(-x) - self.log1mq), 0.0)
        e = -self.m * (t1 + t2)
        return e * (1.0 - 1e-9) + 1e-12 if q < 1 else e

    def window(self, log_tol: float) -> tuple[int, int, float, float]:
        """``[lo, hi]`` and upper bounds on ``log P[C < lo]``, ``log P[C > hi]`` (each ``<= log_tol``)."""
        m, q = self.m, self.q
        if self.sd == 0.0:
            return 0, m, -math.inf, -math.inf
        # lower: P[C <= lo - 1] <= exp(-m KL((lo-1)/m || q)) for (lo - 1) < m q
        z = np.concatenate(
            [np.arange(0.0, 10.0, 0.25), np.geomspace(10.0, max(11.0, (self.mean + 2) / self.sd), 400)]
        )
        lo_c = np.floor(self.mean - z * self.sd)
        ex_lo = np.where(lo_c >= 1, self._kl_exponent(np.clip((lo_c - 1) / m, 0, q)), -np.inf)
        ok = np.nonzero(ex_lo <= log_tol)[0]
        if ok.size and lo_c[ok[0]] >= 1:
            lo, log_lo = int(lo_c[ok[0]]), float(ex_lo[ok[0]])
        else:
            lo, log_lo = 0, -math.inf
        z2 = np.concatenate(
            [np.arange(0.0, 10.0, 0.25), np.geomspace(10.0, max(11.0, (m - self.mean + 2) / self.sd), 400)]
        )
        hi_c = np.ceil(self.mean + z2 * self.sd)
        ex_hi = np.where(hi_c <= m - 1, self._kl_exponent(np.clip((hi_c + 1) / m, q, 1)), -np.inf)
        ok = np.nonzero(ex_hi <= log_tol)[0]
        if ok.size and hi_c[ok[0]] <= m - 1:
            hi, log_hi = int(hi_c[ok[0]]), float(ex_hi[ok[0]])
        else:
            hi, log_hi = m, -math.inf
        lo = max(0, min(lo, int(math.floor(self.mean))))
        hi = min(m, max(hi, lo))
        return lo, hi, log_lo, log_hi

    # ------------------------------------------------------------------ epsilon
    def certified_epsilon(self, delta: float) -> float:
        """Certified epsilon at ``delta`` by the one root finder (``curves.epsilon_from_delta``), 3 phases.

        1. Illinois false position on the *coarse* certified ``log delta`` (blocks refined to a
           relative 1e-2: cheap, still an upper bound), bracket ``[0, eps0]`` (``eps0`` vouched:
           the pair is ``eps0``-DP), first points 0 and ``eps0 (1 - 1e-12)``; values below the
           target minus 60 are clamped there (the sign, all the bracket uses, is unchanged), to
           ``1e-9`` relative.
        2. At most 4 secant steps on the *fine* bound (slack 1e-3) from the coarse answer, downwards.
        3. The answer is checked with exactly the evaluation of :meth:`log_delta` with its default
           arguments (what ``clone_pair_log_delta`` performs) and stepped up until it holds, so
           ``delta(epsilon(d)) <= d`` holds for the public functions.

        Every answer of every phase is a point where a certified upper bound was evaluated and
        found ``<= delta`` (or ``eps0``). ``delta`` must already be validated (in ``(0, 1)``).
        (Was a scipy Brent root on the coarse bound plus hand-written secant and step-up loops;
        13-20 evaluations instead of 16-26 at FMT's benchmark points, see
        ``benchmarks/bench_root_finder.py``.)
        """
        eps0 = self.eps0
        log_target = curve_log_target(delta)
        log_tol = log_target + math.log(1e-7)  # each truncated tail costs <= 1e-7 delta

        def coarse(e: float) -> float:
            return max(self.log_delta(e, log_tol=log_tol, rel_slack=1e-2)[0], log_target - 60.0)

        def fine(e: float) -> float:
            return self.log_delta(e, log_tol=log_tol, rel_slack=1e-3)[0]

        first = epsilon_from_delta(
            coarse,
            delta,
            bound="upper",
            lo=0.0,
            hi=eps0,
            rtol=1e-9,
            atol=0.0,
            max_iter=200,
            method="illinois",
            log=True,
            guess=eps0 * (1.0 - 1e-12),
            full_output=True,
        )
        if first.epsilon == 0.0 or first.epsilon >= eps0:
            return first.epsilon
        best = epsilon_from_delta(
            fine,
            delta,
            bound="upper",
            lo=0.0,
            hi=first.epsilon,
            rtol=1e-7,
            atol=0.0,
            max_iter=4,
            method="newton",
            log=True,
            guess=first.epsilon,
            slope=first.slope if math.isfinite(first.slope) and first.slope < 0 else None,
            aim=1e-7,
            check_lo=False,
        )
        # final check with exactly the public evaluation; step up if needed
        return step_up_until(lambda e: self.log_delta(e)[0] <= log_target, best, cap=eps0, step=1e-7)

    # ------------------------------------------------------------------ log delta
    def estimate(self, eps: float) -> float:
        """A rough value of ``log D`` (max of ``log w(c) + log f(c)`` over a coarse grid); used only
        to set truncation budgets, never as the answer."""
        m = self.m
        z = np.arange(-40.0, 40.5, 2.0)
        c = np.clip(np.round(self.mean + z * self.sd), 0, m)
        c = np.unique(np.concatenate([c, np.round(self.mean * 0.5 ** np.arange(1, 30)), [0.0, float(m)]]))
        return float(np.max(self.log_w(c) + self.log_f(eps, c)))

    def log_delta(
        self, eps: float, *, log_tol: float | None = None, rel_slack: float = 1e-4, max_rounds: int = 12
    ) -> tuple[float, float]:
        """``(upper, lower_estimate)`` of ``log D_{e^eps}(P||Q)``; ``upper`` is certified.

        ``lower_estimate`` is the block lower sum (not inflated for rounding; for diagnostics).
        ``log_tol`` is the log of the mass budget of each truncated tail (default: a 1e-7 fraction of
        a first estimate of the divergence).
        """
        if eps >= self.eps0:
            return -math.inf, -math.inf
        if log_tol is None:
            log_tol = self.estimate(eps) + math.log(1e-7)
        lo, hi, log_lo, log_hi = self.window(log_tol)
        # work: the window's weights plus at most ~256 evaluated block edges of the inner sum
        self._check_work((hi - lo + 1) + min(hi - lo + 1, 256) * self._width)
        cs = np.arange(lo, hi + 1, dtype=float)
        lw = self.log_w(cs)
        if hi - lo + 1 <= EXACT_MAX:
            lf = self.log_f(eps, cs)
            main = _lse_up(lw + lf)
            lower = main
            f_hi = float(lf[-1])
        else:
            main, lower, f_hi = self._blocks(eps, lo, hi, lw, rel_slack, max_rounds)
        up = _lse_up(np.array([main, log_lo, log_hi + f_hi]))
        return min(up, 0.0), lower

    def _blocks(self, eps, lo, hi, lw, rel_slack, max_rounds):
        n_c = hi - lo + 1
        edges = np.unique(np.round(np.linspace(0, n_c, 33)).astype(np.int64))  # offsets; last = n_c
        cache: dict[int, float] = {}

        def f_at(offsets: np.ndarray) -> np.ndarray:
            need = [int(o) for o in offsets if int(o) not in cache]
            if need:
                vals = self.log_f(eps, lo + np.array(need, dtype=float))
                for o, v in zip(need, vals):
                    cache[o] = float(v)
            return np.array([cache[int(o)] for o in offsets])

        mx = float(np.max(lw))
        v = np.exp(lw - mx)  # each within 1 ulp (+ the subtraction's rounding, see below)
        rounding = _U * (float(np.max(mx - lw)) + 4.0)
        for rnd in range(max_rounds):
            starts = edges[:-1]
            ends = edges[1:]
            Wsum = np.add.reduceat(v, starts)
            with np.errstate(divide="ignore"):
                lWs = np.log(Wsum)
            lWs_f = np.where(np.isfinite(lWs), lWs, 0.0)
            logW = lWs + mx + rounding + _U * (ends - starts + 4.0 + 2.0 * np.abs(lWs_f) + abs(mx))
            f_left = f_at(starts)
            # lower sum: f at the next block's first c (a singleton block is exact)
            f_right = np.where(ends - starts == 1, f_left, f_at(np.minimum(ends, n_c - 1)))
            up_terms = logW + f_left
            lo_terms = logW + f_right
            up = _lse_up(up_terms)
            lower = float(np.logaddexp.reduce(lo_terms))
            if not np.isfinite(up):
                return up, lower, f_at(np.array([n_c - 1]))[0]
            gap = np.exp(up_terms - up) - np.exp(lo_terms - up)
            total_gap = float(np.sum(gap))
            if total_gap <= rel_slack or rnd == max_rounds - 1:
                break
            sg = np.sqrt(np.maximum(gap, 0.0))
            S = float(np.sum(sg))
            parts = np.minimum(np.minimum(np.ceil(sg * S / rel_slack * 1.05), 8), ends - starts).astype(
                np.int64
            )
            new = [edges]
            for a, b, p in zip(starts, ends, parts):
                if p > 1:
                    new.append(np.round(np.linspace(a, b, p + 1)[1:-1]).astype(np.int64))
            edges = np.unique(np.concatenate(new))
        return up, lower, f_at(np.array([n_c - 1]))[0]
