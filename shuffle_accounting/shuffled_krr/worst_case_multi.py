"""Certified worst case of shuffled k-RR for ``k >= 4``: the largest class kept exact, the rest blanketed.

Setting. ``n`` users apply k-ary randomized response with local privacy ``eps0``: a user holding
``x`` reports ``x`` with probability ``p = e^eps0 pbar`` and each other value with probability
``pbar = 1 / (e^eps0 + k - 1)``; equivalently it reports a uniform value with probability
``gamma = k pbar`` and its own value otherwise. The release is the histogram of the ``n`` reports
(users are exchangeable, so the histogram is sufficient for the shuffled sequence under both
datasets). The target holds ``x0`` in ``D`` and ``x1`` in ``D'``; with ``E = e^eps`` and ``P`` /
``Q`` the laws of the release, ``delta_D(eps) = max(H_E(P || Q), H_E(Q || P))``,
``H_E(P || Q) = sum_h (P(h) - E Q(h))_+``.

Proof of the certified bound (every step is post-processing or an exact identity):

(M1) *Pigeonhole and symmetry.* Relabel the values so that the target moves ``0 -> 1``. The other
``n - 1`` users hold ``k`` values, so some value ``v*`` is held by at least
``a* = ceil((n - 1) / k)`` of them. Up to the relabelling of ``{2, ..., k - 1}`` (which fixes the
target's two values, so preserves both divergences) ``v*`` is ``0``, ``1`` or ``2``, and relabelling
``0 <-> 1`` maps "``v* = 1``, direction ``P || Q``" to "``v* = 0``, direction ``Q || P``". So every
dataset and direction is one of three *types*: (``v* = 2``, ``P || Q``; the direction ``Q || P`` is
the same number after relabelling ``0 <-> 1``), (``v* = 0``, ``P || Q``), (``v* = 0``, ``Q || P``).

(M2) *Reveal the coins of everyone outside one class.* Keep ``a`` users at ``v*`` (any ``a <=`` the
class size) and give the adversary, for each of the other ``m = n - 1 - a`` users, its coin
(uniform or not) and, when not uniform, its report. That view contains the histogram, so the
divergence can only grow (data processing). The coins and revealed reports do not involve the
target, so the divergence of the view is the expectation over them of the divergence given them
(the hockey-stick sum splits over their values), and given ``B = b`` uniform coins the release is
the target's report + ``a`` reports of users at ``v*`` + ``b`` uniform reports + a known vector,
whose divergence does not depend on the known vector. With ``B ~ Bin(m, gamma)``:

    delta_type <= U_v(a) = E_B g_v(a, B),   g_v(a, b) = H_E(T + a at v + Mult(b) || T' + a at v + Mult(b)).

The bound does not depend on what the other ``m`` users hold. ``U_v(a)`` is non-increasing in
``a`` (keeping fewer users is revealing more coins), so **for every dataset**
``delta_D(eps) <= max(U_2(a*), U_0(a*) forward, U_0(a*) reverse)``: the certified value. For
``a = n - 1`` it is exact (the dataset with every other user at ``v``); for ``a = 0`` it is the
privacy-blanket bound (:mod:`~shuffle_accounting.shuffled_krr.blanket`).

(M3) *Monotone in b.* ``g_v(a, b + 1)`` is ``g_v(a, b)`` after one more independent uniform report
is added to both laws (a Markov kernel), so ``g_v`` is non-increasing in ``b`` and for cells
``s_0 < s_1 < ... < s_J`` of ``B``'s window ``E_B g <= sum_j P(s_j <= B < s_{j+1}) g(s_j) +
P(B outside the window)`` (``g <= 1``), with no truncation error. The cells are refined where
``P(cell) (g(s_j) - g(s_{j+1}))`` is largest (soundness does not depend on the refinement).

(M4) *Closed form of g (pivot + uniform users).* A user at ``v`` reports ``v`` with probability
``p`` and a uniform user with ``1/k``; given that a report differs from ``v`` it is uniform over
the ``k - 1`` other values for both kinds. So the others' histogram has law
``R(h) = P(N_o = N) Mult_N(h)``, ``N`` the number of reports different from ``v``,
``N_o ~ Bin(a, (k - 1) pbar) + Bin(b, (k - 1) / k)`` and ``Mult_N`` uniform over the ``k - 1`` other
values. With ``w = P(N_o = N)`` and ``U = (k - 1) P(N_o = N - 1)``,
``R(h - e_y) = U (h_y / N) Mult_N(h)`` for ``y != v`` and ``R(h - e_v) = w Mult_N(h)``, so
``P(h) - E Q(h)`` is ``Mult_N(h)`` times a function linear in ``(h0, h1)`` given ``N``
(``d = p - pbar``):

* ``v = 2``: ``(U / N) d (h0 - E h1) - (E - 1) pbar (w + U)``; given ``N`` and ``h1``,
  ``h0 ~ Bin(N - h1, 1 / (k - 2))`` and ``h1 ~ Bin(N, 1 / (k - 1))``;
* ``v = 0``: forward ``(p - E pbar) w + (1 - E) pbar U - E (U / N) d h1``, reverse
  ``(pbar - E p) w + (1 - E) pbar U + (U / N) d h1``, ``h1 ~ Bin(N, 1 / (k - 1))`` given ``N``.

Each positive part is ``coef * E[(X - t)_+]`` (or ``E[(t - X)_+]``) of a binomial ``X``, from two
binomial tails: the method of
:func:`~shuffle_accounting.shuffled_krr._krr_grid.single_class_log_hockey` (the case ``b = 0``,
used here for the exact exhibited values), with the law of ``N_o`` a convolution.

Rounding (all outward, upper bounds only; the exhibited values are
:func:`~shuffle_accounting.shuffled_krr._krr_grid.single_class_log_hockey` lower bounds).
``N_o``'s law is computed on the sum of the two binomials' windows by an exact log-space
convolution (Loader log-pmfs at ``1e-10`` relative each, ``(L + 2) u`` for the sums); the
truncated law ``R_in <= R`` has the closed form of (M4) exactly, and
``(P - E Q)_+ <= (P_in - E Q_in)_+ + (P - P_in)``, so the mass outside the windows (the doubled
binomial tails) is added once. Cells of ``N`` whose ``U`` or ``w`` is outside the window are
charged their whole mass. The ``h1`` window (``k >= 4``, ``v = 2``) comes from the marginal
``Bin(a, pbar) + Bin(b, 1 / k)`` of the others' reports ``1``, its tails added. Coefficients go to
their unfavourable ends and thresholds move by ``8 u (|t| + 1)``; binomial tails carry ``1e-10``
relative; cell weights of ``B`` are inflated by ``1e-9``.

Scope and tightness: ``4 <= k``. The certified value lies between the exact value of the dataset
"all others at one value" and the blanket; the gap is that of ``U(a*)`` with ``a* = (n - 1) / k``
(measured in benchmarks/README.md). Nothing here proves that the concentrated dataset is the worst
one; the certificate covers every dataset through (M1)-(M2). Where this misses ``tol``,
:func:`certify_multi` runs the branch and bound over boxes of datasets of
:mod:`~shuffle_accounting.shuffled_krr.worst_case_boxes` (a collapse of the users outside the
target's two values, proved there) and keeps the smaller certificate.

Example:
    >>> cert = certify_multi(4, 1.0, 20, eps=0.5)
    >>> bool(cert.exhibited_log_delta <= cert.log_delta), verify(cert)
    (True, True)
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np

from .._binomial import log_binom_pmf, log_binom_sf, logsumexp
from .._logmath import UNIT_ROUNDOFF, exp_up
from .._validation import ParameterError, check_delta, check_int, check_real
from . import _krr_grid as G
from .blanket import certified_log_delta as _blanket_log_delta
from .worst_case_k import certificate_gap

__all__ = [
    "MultiTypeBound",
    "WorstCaseMultiCertificate",
    "certify_multi",
    "verify",
    "pivot_log_hockey",
]

_U = 2.0 * UNIT_ROUNDOFF
#: Relative error counted for each Loader log-pmf and each binomial tail.
_REL = 1e-10
#: Windows are widened until the dropped mass is below ``e^-_DROP_MARGIN`` times the level.
_DROP_MARGIN = 25.0
#: Largest number of ``(N, h1)`` tail pairs for one evaluation of ``g``.
MAX_PAIRS = 20_000_000
#: Where the type bounds and the exhibited values are evaluated: ``VALID_EPS0[0] <= eps0 <=
#: VALID_EPS0[1]``, ``eps = 0`` or ``eps >= VALID_MARGIN`` and ``eps <= eps0 - VALID_MARGIN``. Outside
#: it (extreme eps0, eps next to 0 or to eps0) the certificate is the blanket bound, which handles
#: those ranges itself, and no exhibited value is claimed.
VALID_EPS0: tuple[float, float] = (1e-4, 40.0)
VALID_MARGIN: float = 1e-4
#: The three types of (M1): (pivot value, direction index 0 = forward / 1 = reverse).
_TYPES = ((2, 0), (0, 0), (0, 1))


def _illinois(f, lo: float, hi: float, f_lo: float, f_hi: float, rtol: float, max_iter: int = 100):
    """Bracket ``(lo, hi)`` with ``f(lo) > 0 >= f(hi)`` and ``hi - lo <= rtol * hi`` for a decreasing ``f``.

    Illinois (regula falsi) steps, kept strictly inside the bracket, bisection when a value is
    infinite; each step keeps the invariant, so the ends are exact certificates of their side.
    """
    side = 0
    for _ in range(max_iter):
        if hi - lo <= rtol * hi:
            break
        if math.isfinite(f_lo) and math.isfinite(f_hi) and f_lo > f_hi:
            x = hi - f_hi * (hi - lo) / (f_hi - f_lo)
            x = min(max(x, lo + 0.25 * rtol * hi), hi - 0.25 * rtol * hi)
        else:
            x = 0.5 * (lo + hi)
        if not lo < x < hi:
            x = 0.5 * (lo + hi)
            if not lo < x < hi:
                break
        fx = f(x)
        if fx > 0:
            lo, f_lo = x, fx
            if side == 1:
                f_hi *= 0.5
            side = 1
        else:
            hi, f_hi = x, fx
            if side == -1:
                f_lo *= 0.5
            side = -1
    return lo, hi


def _log_upper_excess(M: np.ndarray, log_pi: float, t: np.ndarray) -> np.ndarray:
    """Log upper bound on ``E[(X - t)_+]``, ``X ~ Bin(M, pi)`` (elementwise; ``-inf`` for 0).

    ``E[(X - t)_+] = M pi P(Bin(M - 1, pi) >= j - 1) - t P(Bin(M, pi) >= j)`` with
    ``j = floor(t) + 1`` for ``0 <= t < M``; ``M pi - t`` for ``t < 0``; 0 for ``t >= M``. The first
    tail is rounded up and the second down by :data:`_REL`.
    """
    pi = math.exp(log_pi)
    M = np.asarray(M, dtype=float)
    t = np.asarray(t, dtype=float)
    up = np.full(np.broadcast(M, t).shape, -np.inf)
    M, t = np.broadcast_arrays(M, t)
    neg = (t < 0) & (M >= 0)
    if np.any(neg):
        up[neg] = np.log(M[neg] * pi - t[neg]) + 1e-14
    pos = (t >= 0) & (M >= 1) & (np.floor(t) + 1 <= M)
    if np.any(pos):
        Mm, tt = M[pos], t[pos]
        j = np.floor(tt) + 1.0
        with np.errstate(divide="ignore"):
            la = np.log(Mm) + log_pi + log_binom_sf(j - 1.0, Mm - 1.0, pi) + math.log1p(_REL)
            lb = np.log(tt) + log_binom_sf(j, Mm, pi) + math.log1p(-_REL)
        with np.errstate(invalid="ignore", divide="ignore"):
            u = np.where(la > lb, la + np.log(-np.expm1(np.minimum(lb - la, 0.0))), -np.inf)
        up[pos] = u
    return up


def _up(t: np.ndarray) -> np.ndarray:
    return t + 8.0 * _U * (np.abs(t) + 1.0)


def _down(t: np.ndarray) -> np.ndarray:
    return t - 8.0 * _U * (np.abs(t) + 1.0)


def _no_law(a: int, b: int, l1mp: float, lp: float, k: int, log_tol: float):
    """Truncated law of ``N_o = Bin(a, 1 - p) + Bin(b, (k-1)/k)``: ``(lo, log-pmf, rel, log dropped mass)``."""
    lo1, lp1, t1 = G.binom_window(a, l1mp, lp, log_tol)
    lo2, lp2, t2 = G.binom_window(b, math.log((k - 1) / k), -math.log(k), log_tol)
    L = min(lp1.size, lp2.size)
    size = lp1.size + lp2.size - 1
    out = np.full(size, -np.inf)
    if lp1.size <= lp2.size:
        short, long_ = lp1, lp2
    else:
        short, long_ = lp2, lp1
    # out[i + j] = logsumexp_i(short[i] + long[j]): one shifted add per entry of the short law
    stack = np.full((short.size, size), -np.inf)
    for i in range(short.size):
        stack[i, i : i + long_.size] = short[i] + long_
    mx = np.max(stack, axis=0)
    with np.errstate(invalid="ignore"):
        out = mx + np.log(np.sum(np.exp(stack - mx[None, :]), axis=0))
    rel = 2.0 * _REL + (L + 4) * _U
    drop = float(np.logaddexp(t1, t2))
    return lo1 + lo2, out, rel, drop


def pivot_log_hockey(
    k: int, eps0: float, v: int, a: int, b: int, eps: float, log_tol: float
) -> tuple[float, float]:
    """Log upper bounds ``(forward, reverse)`` on ``g_v(a, b)`` (module docstring (M4)).

    ``forward = H_E(P || Q)``, ``reverse = H_E(Q || P)`` for the target moving ``0 -> 1`` among
    ``a`` users at ``v`` (``0`` or ``2``) and ``b`` uniform users (``v = 2``: both are equal).
    Internal (no input validation): callers pass ``k >= 4``, ``a, b >= 0``, ``a + b >= 1``.
    Returns ``(+inf, +inf)``-free values capped at 0; where the ``(N, h1)`` work would exceed
    :data:`MAX_PAIRS` both are 0 (``g <= 1``).
    """
    lp = -math.log1p((k - 1) * math.exp(-eps0))
    lq = lp - eps0
    p, pbar = math.exp(lp), math.exp(lq)
    if eps >= eps0:
        return -math.inf, -math.inf
    E = math.exp(eps)
    # the differences below without cancellation (relative error a few u each; near eps0 and for
    # tiny eps0 or eps the plain differences would lose every digit)
    d = pbar * math.expm1(eps0)  # p - pbar
    pmEq = p * -math.expm1(eps - eps0)  # p - E pbar >= 0 (eps < eps0)
    Epmq = pbar * math.expm1(eps + eps0)  # E p - pbar >= 0
    Em1 = math.expm1(eps)  # E - 1
    l1mp = math.log(k - 1) + lq
    t = log_tol - math.log(8.0)
    lo, lpn, rel, drop = _no_law(a, b, l1mp, lp, k, t)
    rho = rel + 16.0 * _U
    hi = lo + lpn.size - 1
    # cells N in [lo + 1, hi + 1]: U = (k - 1) P_in(N_o = N - 1) is inside the window; w = 0 at hi + 1
    N = np.arange(lo + 1, hi + 2, dtype=float)
    lw = np.concatenate([lpn[1:], [-np.inf]])
    lU = math.log(k - 1) + lpn
    edge = [drop]
    if lo > 0:
        edge.append(float(lpn[0]) + math.log1p(rho))  # cells with N = lo: their whole mass
    mx = np.maximum(lw, lU)
    lw, lU = lw - mx, lU - mx
    w_hi, w_lo = np.exp(lw) * (1 + rho), np.exp(lw) * (1 - rho)
    U_hi, U_lo = np.exp(lU) * (1 + rho), np.exp(lU) * (1 - rho)
    extra = []
    if lo == 0 and v == 0 and pmEq > 0:
        extra.append(float(lpn[0]) + math.log1p(rho) + math.log(pmEq) + 4 * _U)  # N = 0, forward only
    base = float(logsumexp(np.array(edge)))

    def fin(terms: np.ndarray, ex: list) -> float:
        terms = np.ravel(terms)
        val = (
            float(logsumexp(np.concatenate([terms, np.array(ex, dtype=float)])))
            if terms.size or ex
            else -math.inf
        )
        val = float(np.logaddexp(val, base)) + 4.0 * _U * (terms.size + 8)
        return min(val, 0.0)

    if v == 2:
        h_lo1, h_lp1, ht1 = G.binom_window(a, lq, math.log1p(-pbar), t)
        h_lo2, h_lp2, ht2 = G.binom_window(b, -math.log(k), math.log((k - 1) / k), t)
        H1 = np.arange(h_lo1 + h_lo2, h_lo1 + h_lo2 + h_lp1.size + h_lp2.size, dtype=float)  # + target's 1
        if float(N.size) * H1.size > MAX_PAIRS:
            return 0.0, 0.0
        base = float(logsumexp(np.array([base, ht1, ht2])))
        NN, HH = np.meshgrid(N, H1, indexing="ij")
        ok = HH <= NN
        lwt = np.where(
            ok,
            log_binom_pmf(np.where(ok, HH, 0.0), NN, -math.log(k - 1), math.log((k - 2) / (k - 1))),
            -np.inf,
        )
        a_up = (U_hi / N * d)[:, None]
        b_lo = (U_lo / N * d * E)[:, None]
        g_lo = (Em1 * pbar * (w_lo + U_lo))[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            t_up = _down((b_lo * HH + g_lo) / a_up)
        Mx = np.where(ok, NN - HH, 0.0)
        xu = _log_upper_excess(Mx, -math.log(k - 2), t_up)
        with np.errstate(divide="ignore"):
            tu = np.where(
                ok & (a_up > 0), lwt + math.log1p(rho) + 1e-14 + np.log(a_up) + xu + mx[:, None], -np.inf
            )
        r = fin(tu, extra)
        return r, r
    # v = 0: h1 ~ Bin(N, 1/(k - 1)) given N
    l1 = -math.log(k - 1)
    # forward: (p - E pbar) w + (1 - E) pbar U - E (U/N) d h1 = Bu (s - h1), positive for h1 < s
    Bu = E * U_lo / N * d
    A_up = pmEq * w_hi * (1 + 4 * _U) - Em1 * pbar * U_lo * (1 - 4 * _U)
    with np.errstate(divide="ignore", invalid="ignore"):
        s_up = _up(A_up / Bu)
    # E[(s - X)_+] = E[(X' - (N - s))_+] with X' = N - X ~ Bin(N, (k - 2)/(k - 1)) (the mirror)
    with np.errstate(invalid="ignore"):
        xu = _log_upper_excess(N, math.log((k - 2) / (k - 1)), _down(N - s_up))
    with np.errstate(divide="ignore"):
        fwd_terms = np.where(Bu > 0, np.log(Bu) + 1e-14 + xu + mx, -np.inf)
    fwd = fin(fwd_terms, extra)
    # reverse: (pbar - E p) w + (1 - E) pbar U + (U/N) d h1 = Cu (h1 - S), positive for h1 > S
    Cu = U_hi / N * d
    with np.errstate(divide="ignore", invalid="ignore"):
        S_up = _down((Epmq * w_lo * (1 - 4 * _U) + Em1 * pbar * U_lo * (1 - 4 * _U)) / Cu)
    xu = _log_upper_excess(N, l1, S_up)
    with np.errstate(divide="ignore"):
        rev_terms = np.where(Cu > 0, np.log(Cu) + 1e-14 + xu + mx, -np.inf)
    rev = fin(rev_terms, [])
    return fwd, rev


# ---------------------------------------------------------------------------------------------
# the expectation over B (M3)
# ---------------------------------------------------------------------------------------------


class _Problem:
    """Constants and caches for one ``(k, eps0, n)`` and one truncation level."""

    def __init__(self, k: int, eps0: float, n: int, log_level: float) -> None:
        self.k, self.eps0, self.n = k, eps0, n
        self.lp = -math.log1p((k - 1) * math.exp(-eps0))
        self.lq = self.lp - eps0
        self.log_g = math.log(k) + self.lq  # log gamma
        self.log_1mg = self.lp + math.log(-math.expm1(-eps0))  # log(1 - gamma) = log(p - pbar)
        self.log_level = log_level
        self.log_tol = log_level - _DROP_MARGIN
        self.a_star = -(-(n - 1) // k)
        self.evaluations = 0
        self._g: dict[tuple, tuple[float, float]] = {}

    def g(self, v: int, a: int, b: int, eps: float) -> tuple[float, float]:
        key = (v, a, b, eps)
        r = self._g.get(key)
        if r is None:
            self.evaluations += 1
            r = pivot_log_hockey(self.k, self.eps0, v, a, b, eps, self.log_tol)
            self._g[key] = r
        return r

    def window(self, m: int) -> tuple[int, np.ndarray, float]:
        """``B ~ Bin(m, gamma)``: window start, log-pmf on it, log of the (doubled) mass outside."""
        return G.binom_window(m, self.log_g, self.log_1mg, self.log_tol - math.log(4.0))

    def cell_bound(self, v: int, direction: int, a: int, eps: float, starts: list[int]) -> float:
        """``log sum_j P(cell j) g(s_j) + P(outside)`` for the cells starting at ``starts`` (M3)."""
        m = self.n - 1 - a
        if m == 0:
            return self.g(v, a, 0, eps)[direction]
        lo, lpb, ltail = self.window(m)
        terms = [ltail]
        for j, s in enumerate(starts):
            e = starts[j + 1] if j + 1 < len(starts) else lo + lpb.size
            wgt = float(logsumexp(lpb[s - lo : e - lo])) + math.log1p(1e-9)
            terms.append(wgt + self.g(v, a, s, eps)[direction])
        return min(float(logsumexp(np.array(terms))) + 4.0 * len(terms) * _U, 0.0)

    def type_bound(
        self, v: int, direction: int, eps: float, rtol: float, max_cells: int
    ) -> tuple[float, tuple[int, ...]]:
        """Adaptive cells (M3) for one type at ``a*``: ``(log bound, cell starts)``."""
        a = self.a_star
        m = self.n - 1 - a
        if m == 0:
            return self.g(v, a, 0, eps)[direction], ()
        lo, lpb, _ = self.window(m)
        hi = lo + lpb.size - 1
        starts = sorted({min(hi, int(round(x))) for x in np.linspace(lo, hi + 1, 9)[:-1]})
        while True:
            ends = starts[1:] + [hi + 1]
            gains = []
            for s, e in zip(starts, ends):
                if e - s <= 1:
                    continue
                wgt = float(logsumexp(lpb[s - lo : e - lo]))
                gs, ge = self.g(v, a, s, eps)[direction], self.g(v, a, min(e, hi), eps)[direction]
                gap = math.exp(wgt + gs) - math.exp(wgt + ge) if gs > -math.inf else 0.0
                gains.append((gap, s, e))
            total = self.cell_bound(v, direction, a, eps, starts)
            if not gains or len(starts) >= max_cells:
                return total, tuple(starts)
            gains.sort(reverse=True)
            if total == -math.inf or sum(x[0] for x in gains) <= rtol * math.exp(total):
                return total, tuple(starts)
            for _gap, s, e in gains[: max(1, len(gains) // 3)]:
                bisect.insort(starts, (s + e) // 2)
            starts = sorted(set(starts))

    def valid(self, eps: float) -> bool:
        """Whether ``eps`` is in the validated zone (:data:`VALID_EPS0`, :data:`VALID_MARGIN`)."""
        return (
            VALID_EPS0[0] <= self.eps0 <= VALID_EPS0[1]
            and (eps == 0.0 or eps >= VALID_MARGIN)
            and eps <= self.eps0 - VALID_MARGIN
        )

    def certified(self, eps: float, rtol: float, max_cells: int) -> tuple[float, tuple]:
        """``(log certified delta, per-type (v, direction, log bound, cell starts))`` at ``eps``.

        Outside the validated zone (and below ``eps0``) the trivial bound ``log 1 = 0`` is returned,
        so that the callers take the blanket.
        """
        if eps >= self.eps0:
            return -math.inf, tuple((v, dr, -math.inf, ()) for v, dr in _TYPES)
        if not self.valid(eps):
            return 0.0, tuple((v, dr, 0.0, ()) for v, dr in _TYPES)
        recs: list[tuple[int, int, float, tuple]] = []
        for v, dr in _TYPES:
            u, starts = self.type_bound(v, dr, eps, rtol, max_cells)
            recs.append((v, dr, u, starts))
        return max(r[2] for r in recs), tuple(recs)

    def exhibited(self, eps: float) -> tuple[float, tuple[int, ...]]:
        """Best exact lower value among the datasets "all others at one value": ``(log, counts)``."""
        k, n = self.k, self.n
        best, others = -math.inf, None
        if not self.valid(eps):  # eps >= eps0: delta = 0 exactly; else nothing is claimed here
            return -math.inf, tuple([0, 0, n - 1] + [0] * (k - 3))
        for v in (2, 0):
            r = G.single_class_log_hockey(k, self.eps0, n, v, eps, self.log_tol)
            if r is None:
                continue
            for dr in (0, 1):
                low = r[dr][1]
                if low > best or others is None:
                    best = low
                    cnt = [0] * k
                    cnt[v if not (v == 0 and dr == 1) else 1] = n - 1
                    others = tuple(cnt)
        if others is None:  # pragma: no cover - the v = 0 evaluation is always within budget
            others = tuple([0, 0, n - 1] + [0] * (k - 3))
        return best, others

    def exhibited_epsilon(self, log_delta: float, hi: float) -> tuple[float, float, tuple[int, ...]]:
        """Largest eps (rounded down) at which an exhibited dataset has log delta above ``log_delta``.

        ``hi``: an eps where every exhibited value is ``<= log_delta`` (e.g. a certified epsilon).
        """

        def f(e: float) -> float:
            return self.exhibited(e)[0] - log_delta

        f0 = f(0.0)
        if not f0 > 0:
            return 0.0, self.exhibited(0.0)[0], self.exhibited(0.0)[1]
        lo, _ = _illinois(f, 0.0, hi, f0, f(hi), 1e-11)
        ld, others = self.exhibited(lo)
        return lo, ld, others


# ---------------------------------------------------------------------------------------------
# certificate
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MultiTypeBound:
    """The bound of one type of (M1): ``delta <= exp(log_bound)`` for every dataset of that type.

    Attributes:
        pivot: ``2`` (largest class at a value other than the target's two) or ``0`` (at the
            target's value in ``D``; direction ``1`` covers the largest class at ``x1``).
        direction: ``0`` for ``H_E(P || Q)``, ``1`` for ``H_E(Q || P)``.
        a: Users kept at the pivot (``a* = ceil((n - 1) / k)``).
        cells: Left ends of the cells of ``B`` (module docstring (M3)); empty when ``a = n - 1``.
        log_bound: Natural log of the bound ``U_v(a)`` at the certificate's ``eps``.
    """

    pivot: int
    direction: int
    a: int
    cells: tuple[int, ...]
    log_bound: float


@dataclass(frozen=True)
class WorstCaseMultiCertificate:
    """A re-checkable certificate of the worst-case privacy curve of shuffled k-RR, ``k >= 4``.

    ``sup_{D ~ D'} delta_D(eps) <= exp(log_delta)`` by the module docstring (M1)-(M4): the three
    type bounds cover every dataset and direction. :func:`verify` recomputes them.

    Attributes:
        k: Number of categories (``>= 4``).
        eps0: Local privacy parameter.
        n: Number of users.
        query: ``"delta"`` (certify ``delta(eps)``) or ``"epsilon"`` (certify ``epsilon(delta)``).
        eps: The eps certified (``"delta"``: the input; ``"epsilon"``: the certified epsilon).
        delta: The target delta (``"epsilon"``) or the certified delta (``"delta"``).
        log_delta: Natural log of the certified delta at ``eps``.
        epsilon: Certified epsilon (``"epsilon"``) or ``eps`` (``"delta"``).
        epsilon_lower: Exhibited epsilon of the witness at ``delta`` (``"epsilon"``), else 0.0.
        worst_others: The witness dataset (counts of the other users per value, target ``0 -> 1``).
        exhibited_log_delta: Exhibited (lower) log delta of the witness at ``eps`` (``"delta"``) or
            at ``epsilon_lower`` (``"epsilon"``).
        bounds: The three :class:`MultiTypeBound`.
        log_level: Truncation level (reproduces the windows in :func:`verify`).
        evaluations: Evaluations of ``g`` spent.
        converged: Whether the gap is within ``tol`` (the certificate is sound either way).
        used_blanket: Whether the blanket bound is the certified value: it was smaller than the
            type bounds (then ``bounds`` records them for reference only), or already within
            ``tol`` of the exhibited value (then they were not computed and ``bounds`` is empty).
        boxes: The cover of :mod:`~shuffle_accounting.shuffled_krr.worst_case_boxes` (a tuple of
            its ``Box``) when that branch and bound gave the certified value, else ``()``.
        box_exhibited: Whether the witness is a leaf of that search (``c0`` users at 0, ``c1`` at 1,
            the rest at 2: its exact value is recomputed there) rather than "all others at one value".
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
    worst_others: tuple[int, ...]
    exhibited_log_delta: float
    bounds: tuple[MultiTypeBound, ...]
    log_level: float
    evaluations: int
    converged: bool
    used_blanket: bool
    boxes: tuple = ()
    box_exhibited: bool = False

    @property
    def gap(self) -> float:
        """``certified / exhibited - 1`` in delta (``"delta"``) or epsilon (``"epsilon"``)."""
        return certificate_gap(
            self.query, self.log_delta, self.exhibited_log_delta, self.epsilon, self.epsilon_lower
        )


def _check(k, eps0, n):
    k = check_int("k", k, minimum=4)
    eps0 = check_real("eps0", eps0, low=0.0, low_open=True, high=700.0)
    n = check_int("n", n, minimum=2)
    return k, eps0, n


def _blanket(eps: float, k: int, eps0: float, n: int) -> float:
    return float(_blanket_log_delta(eps, k, eps0, n))


#: Largest ``n`` for which :func:`certify_multi` runs the box branch and bound
#: (:mod:`~shuffle_accounting.shuffled_krr.worst_case_boxes`) when the type bounds and the blanket
#: miss ``tol`` (its 3-D laws grow like ``n^1.5``; measured in benchmarks/README.md).
BOX_MAX_N = 2000


def certify_multi(
    k,
    eps0,
    n,
    *,
    eps=None,
    delta=None,
    tol: float | None = None,
    max_cells: int = 400,
    boxes: bool = True,
    max_seconds: float = 60.0,
) -> WorstCaseMultiCertificate:
    """Certify the worst case of shuffled k-RR for ``k >= 4``: the type bounds and the box search.

    First the type bounds (module docstring (M1)-(M4)) and the blanket; where their value misses
    ``tol`` (and ``boxes``, ``n <= BOX_MAX_N``, ``eps0`` and the query in the validated zone), the
    branch and bound of :mod:`~shuffle_accounting.shuffled_krr.worst_case_boxes` runs with the
    budget ``max_seconds`` and its certificate is returned when it is smaller (both are
    certified; the smaller one is kept). Its witness (``c0`` users at 0, ``c1`` at 1, the rest at
    2, exact) replaces the "all at one value" witness when it is worse.

    Args:
        k: Number of categories, integer ``>= 4``.
        eps0: Local privacy parameter, finite, ``0 < eps0 <= 700``.
        n: Number of users, integer ``>= 2``.
        eps: ``eps >= 0``, to certify ``delta(eps)`` (keyword only).
        delta: ``0 < delta < 1``, to certify ``epsilon(delta)`` (keyword only).
        tol: Target relative gap (keyword only; default ``1e-3``).
        max_cells: Work budget of the type bounds (keyword only).
        boxes: Whether to run the box search where the type bounds miss ``tol`` (keyword only).
        max_seconds: Time budget of the box search (keyword only; a certified answer is returned
            in every case).

    Returns:
        A :class:`WorstCaseMultiCertificate`.

    Raises:
        ParameterError: On invalid inputs (naming the parameter), ``k < 4``, or if both or
            neither of ``eps`` and ``delta`` are given.

    Example:
        >>> c = certify_multi(4, 1.0, 20, eps=0.5)
        >>> bool(c.gap <= 1e-3 and c.exhibited_log_delta <= c.log_delta), len(c.boxes) > 0, verify(c)
        (True, True, True)
    """
    from . import worst_case_boxes as _wcb

    c = _certify_types(k, eps0, n, eps=eps, delta=delta, tol=tol, max_cells=max_cells)
    tol_ = 1e-3 if tol is None else float(tol)
    max_seconds = check_real("max_seconds", max_seconds, low=0.0)
    if not boxes or c.gap <= tol_ or c.n > BOX_MAX_N or not VALID_EPS0[0] <= c.eps0 <= VALID_EPS0[1]:
        return c
    if c.query == "delta":
        if not _Problem(c.k, c.eps0, c.n, -60.0).valid(c.eps):
            return c
        r = _wcb.certify_boxes(c.k, c.eps0, c.n, eps=c.eps, tol=tol_ / 2.0, max_seconds=max_seconds)
        if not r.boxes or r.log_delta >= c.log_delta:
            return c
        better = r.exhibited_log_delta > c.exhibited_log_delta
        ex = max(r.exhibited_log_delta, c.exhibited_log_delta)
        gap = certificate_gap("delta", r.log_delta, ex, c.eps, 0.0)
        return WorstCaseMultiCertificate(
            c.k, c.eps0, c.n, "delta", c.eps, exp_up(r.log_delta), r.log_delta, c.eps, 0.0,
            r.witness if better else c.worst_others, ex, (), r.log_level, c.evaluations + r.evaluations,
            bool(gap <= tol_), False, r.boxes, better,
        )  # fmt: skip
    r = _wcb.certify_boxes(
        c.k,
        c.eps0,
        c.n,
        log_delta=math.log(c.delta),
        tol=tol_,
        max_seconds=max_seconds,
        e_hint=c.epsilon_lower,
    )
    if not r.ok or r.eps >= c.epsilon or not _Problem(c.k, c.eps0, c.n, -60.0).valid(r.eps):
        return c
    better = r.epsilon_lower > c.epsilon_lower
    e_low = max(r.epsilon_lower, c.epsilon_lower)
    ex = r.exhibited_log_delta if better else c.exhibited_log_delta
    return WorstCaseMultiCertificate(
        c.k, c.eps0, c.n, "epsilon", r.eps, c.delta, r.log_delta, r.eps, e_low,
        r.witness if better else c.worst_others, ex, (), r.log_level, c.evaluations + r.evaluations,
        bool(e_low > 0 and r.eps <= e_low * (1.0 + tol_)), False, r.boxes, better,
    )  # fmt: skip


def _certify_types(
    k, eps0, n, *, eps=None, delta=None, tol: float | None = None, max_cells: int = 400
) -> WorstCaseMultiCertificate:
    """Certify the worst case of shuffled k-RR for ``k >= 4`` by the type bounds (module docstring (M1)-(M4)).

    Exactly one of ``eps`` (certify ``delta(eps)``) and ``delta`` (certify ``epsilon(delta)``) is
    given. The certified value is the largest of three type bounds ``U_v(a*)`` (every dataset has
    a class of at least ``a* = ceil((n - 1) / k)`` users), or the privacy-blanket bound where that is
    smaller or already within ``tol`` of the exhibited value (then the type bounds are skipped);
    the witness (the best dataset "all others at one value", exact) gives the lower value.

    Args:
        k: Number of categories, integer ``>= 4``.
        eps0: Local privacy parameter, finite, ``0 < eps0 <= 700``.
        n: Number of users, integer ``>= 2``.
        eps: ``eps >= 0``, to certify ``delta(eps)`` (keyword only).
        delta: ``0 < delta < 1``, to certify ``epsilon(delta)`` (keyword only).
        tol: Target relative gap between the certified and the exhibited value (keyword only;
            default ``1e-3``); also steers the refinement of the cells of ``B`` and the bisection
            on eps. Not reaching it only sets ``converged=False``.
        max_cells: Work budget: largest number of cells of ``B`` per type (keyword only).

    Returns:
        A :class:`WorstCaseMultiCertificate`.

    Raises:
        ParameterError: On invalid inputs (naming the parameter), ``k < 4``, or if both or
            neither of ``eps`` and ``delta`` are given.

    Example:
        >>> c = certify_multi(5, 2.0, 12, delta=1e-3)
        >>> bool(c.epsilon_lower <= c.epsilon), verify(c)
        (True, True)
    """
    k, eps0, n = _check(k, eps0, n)
    if (eps is None) == (delta is None):
        raise ParameterError(f"give exactly one of eps= and delta=, got eps={eps!r}, delta={delta!r}")
    max_cells = check_int("max_cells", max_cells, minimum=1)
    tol = 1e-3 if tol is None else check_real("tol", tol, low=0.0, low_open=True, high=1.0)
    rtol = tol / 8.0
    if eps is not None:
        eps = check_real("eps", eps, low=0.0)
        pr = _Problem(k, eps0, n, -60.0)
        ex, _ = pr.exhibited(eps)
        level = min(-1.0, ex) if ex > -math.inf else -60.0
        pr = _Problem(k, eps0, n, level)
        ex, others = pr.exhibited(eps)
        bl = _blanket(eps, k, eps0, n)
        recs: tuple[tuple[int, int, float, tuple], ...]
        if not pr.valid(eps) or (ex > -math.inf and bl <= ex + math.log1p(tol)):  # blanket: see above
            ld, recs = bl, ()
        else:
            ld, recs = pr.certified(eps, rtol, max_cells)
        used_bl = bl <= ld
        ld = min(ld, bl)
        gap = certificate_gap("delta", ld, ex, eps, 0.0)
        return WorstCaseMultiCertificate(
            k, eps0, n, "delta", eps, exp_up(ld), ld, eps, 0.0, others, ex,
            tuple(MultiTypeBound(v, dr, pr.a_star, st, u) for v, dr, u, st in recs),
            level, pr.evaluations, bool(gap <= tol), used_bl,
        )  # fmt: skip
    delta = check_delta("delta", delta)
    log_delta = math.log(delta)
    pr = _Problem(k, eps0, n, log_delta)
    recs_of = lambda e, recs: tuple(MultiTypeBound(v, dr, pr.a_star, st, u) for v, dr, u, st in recs)  # noqa: E731

    def f_bl(e: float) -> float:
        return _blanket(e, k, eps0, n) - log_delta

    # the blanket's epsilon (rounded up): the upper end of every bracket below
    f_0 = f_bl(0.0)
    e_bl = 0.0 if f_0 <= 0 else _illinois(f_bl, 0.0, eps0, f_0, -math.inf, 1e-11)[1]
    eps_low, ex, others = pr.exhibited_epsilon(log_delta, e_bl)
    if e_bl <= eps_low * (1.0 + tol) or not VALID_EPS0[0] <= eps0 <= VALID_EPS0[1]:  # blanket, as above
        return WorstCaseMultiCertificate(
            k, eps0, n, "epsilon", e_bl, delta, _blanket(e_bl, k, eps0, n), e_bl, eps_low, others, ex,
            (), pr.log_level, pr.evaluations, True, True,
        )  # fmt: skip
    # delta-precision of the cells for an epsilon query: a relative change r of eps moves log delta
    # by about r * el, el = eps |d log delta / d eps| (measured on the witness, typically 5 - 50), so
    # cells within tol * el / 4 in delta cost at most about tol / 4 in eps (tightness only)
    rtol = tol / 2.0
    if eps_low > 0.0:
        e2 = min(eps_low * (1.0 + 1e-3), 0.5 * (eps_low + eps0))
        ex2 = pr.exhibited(e2)[0]
        if ex2 > -math.inf and ex > -math.inf:
            el = (ex - ex2) / ((e2 - eps_low) / eps_low)
            rtol = min(0.05, max(rtol, tol * el / 4.0))
    lo_e, f_lo = eps_low, math.inf
    e1 = min(eps_low * (1.0 + tol / 2.0), 0.5 * (eps_low + e_bl))
    if 0.0 < e1 < e_bl:  # first try: just above the exhibited epsilon
        ld1, rec1 = pr.certified(e1, rtol, max_cells)
        if ld1 <= log_delta:
            return WorstCaseMultiCertificate(
                k, eps0, n, "epsilon", e1, delta, ld1, e1, eps_low, others, ex, recs_of(e1, rec1),
                pr.log_level, pr.evaluations, bool(e1 <= eps_low * (1.0 + tol)), False,
            )  # fmt: skip
        lo_e, f_lo = e1, ld1 - log_delta
    ld_hi, recs_hi = pr.certified(e_bl, rtol, max_cells)
    if ld_hi > log_delta or e_bl <= eps_low:  # the type bounds do not beat the blanket here
        return WorstCaseMultiCertificate(
            k, eps0, n, "epsilon", e_bl, delta, _blanket(e_bl, k, eps0, n), e_bl, eps_low, others, ex,
            recs_of(e_bl, recs_hi), pr.log_level, pr.evaluations,
            bool(e_bl == 0.0 or (eps_low > 0 and e_bl <= eps_low * (1.0 + tol))), True,
        )  # fmt: skip
    # Illinois (regula falsi) on f(e) = log certified(e) - log delta between the exhibited epsilon
    # (f > 0 there: certified >= exhibited > delta) and the blanket's (f <= 0); the returned eps is
    # always one where f <= 0 was computed, so the search only affects tightness and speed
    hi_e, best = e_bl, (e_bl, ld_hi, recs_hi)
    f_hi = ld_hi - log_delta
    step = max(tol / 16.0, 1e-7) * max(eps_low, 1e-300)
    side = 0
    for _ in range(40):
        if hi_e - lo_e <= step or hi_e <= eps_low * (1.0 + tol / 4.0):
            break
        if math.isfinite(f_lo) and math.isfinite(f_hi) and f_lo > f_hi:
            mid = hi_e - f_hi * (hi_e - lo_e) / (f_hi - f_lo)
            mid = min(max(mid, lo_e + 0.5 * step), hi_e - 0.5 * step)
        else:
            mid = 0.5 * (lo_e + hi_e)
        ldm, recm = pr.certified(mid, rtol, max_cells)
        fm = ldm - log_delta
        if fm <= 0:
            hi_e, f_hi, best = mid, fm, (mid, ldm, recm)
            if side == -1:
                f_lo *= 0.5
            side = -1
        else:
            lo_e, f_lo = mid, fm
            if side == 1:
                f_hi *= 0.5
            side = 1
    e_c, ld, recs = best
    conv = bool(e_c == 0.0 or (eps_low > 0 and e_c <= eps_low * (1.0 + tol)))
    return WorstCaseMultiCertificate(
        k, eps0, n, "epsilon", e_c, delta, ld, e_c, eps_low, others, ex, recs_of(e_c, recs),
        pr.log_level, pr.evaluations, conv, False,
    )  # fmt: skip


def verify(cert: WorstCaseMultiCertificate) -> bool:
    """Re-check a :class:`WorstCaseMultiCertificate` from scratch.

    Recomputes every type bound from its recorded cells at the certificate's ``eps`` (or the
    blanket bound where the certificate used it), checks that the three types of (M1) are all
    present with ``a = ceil((n - 1) / k)``, that the certified value is their maximum (``"epsilon"``:
    at most ``log delta``), and recomputes the witness's exact lower value (``"epsilon"``: above
    ``log delta`` at ``epsilon_lower`` when that is positive, so that it is exhibited).

    Args:
        cert: The certificate.

    Returns:
        ``True`` if every check passes, else ``False``.

    Raises:
        ParameterError: If ``cert`` is not a :class:`WorstCaseMultiCertificate`.

    Example:
        >>> verify(certify_multi(4, 1.0, 8, eps=0.4))
        True
    """
    if not isinstance(cert, WorstCaseMultiCertificate):
        raise ParameterError(f"cert must be a WorstCaseMultiCertificate, got {type(cert).__name__}")
    k, n = cert.k, cert.n
    if cert.boxes:
        return _verify_boxes(cert)
    pr = _Problem(k, cert.eps0, n, cert.log_level)
    if cert.used_blanket:
        top = _blanket(cert.eps, k, cert.eps0, n)
    else:
        if sorted((b.pivot, b.direction) for b in cert.bounds) != sorted(_TYPES):
            return False
        top = -math.inf
        for b in cert.bounds:
            if b.a != pr.a_star:
                return False
            m = n - 1 - b.a
            if cert.eps >= cert.eps0:  # every divergence is 0 there (eps0-DP): no cells needed
                u = -math.inf
            elif m > 0:
                lo, lpb, _ = pr.window(m)
                cells = list(b.cells)
                if (
                    not cells
                    or cells[0] != lo
                    or cells != sorted(set(cells))
                    or cells[-1] > lo + lpb.size - 1
                ):
                    return False
                u = pr.cell_bound(b.pivot, b.direction, b.a, cert.eps, cells)
            else:
                u = pr.g(b.pivot, b.a, 0, cert.eps)[b.direction]
            if u > b.log_bound:
                return False
            top = max(top, b.log_bound)
    if top > cert.log_delta:
        return False
    if cert.query == "epsilon" and cert.log_delta > math.log(cert.delta):
        return False
    others = cert.worst_others
    if len(others) != k or sum(others) != n - 1 or sorted(others)[:-1] != [0] * (k - 1):
        return False
    v = others.index(n - 1)
    e_ex = cert.eps if cert.query == "delta" else cert.epsilon_lower
    r = G.single_class_log_hockey(k, cert.eps0, n, 2 if v >= 2 else 0, e_ex, pr.log_tol)
    if r is None:
        return False
    ex = r[1][1] if v == 1 else r[0][1]
    if ex < cert.exhibited_log_delta:
        return False
    if cert.query == "delta":
        return bool(cert.exhibited_log_delta <= cert.log_delta)
    # epsilon_lower is exhibited only if the witness is above delta there
    if cert.epsilon_lower > 0 and not cert.exhibited_log_delta > math.log(cert.delta):
        return False
    return bool(cert.epsilon_lower <= cert.eps)


def _verify_boxes(cert: WorstCaseMultiCertificate) -> bool:
    """:func:`verify` for a certificate of the box search: the cover, every bound, the witness."""
    from . import worst_case_boxes as _wcb

    boxes = cert.boxes
    if not _wcb.covers(cert.n, boxes):
        return False
    eng = _wcb.Engine(cert.k, cert.eps0, cert.n, cert.log_level)
    for b in boxes:
        val, _, _ = eng.box_bound(b.a0, b.b0, b.a1, b.b1, cert.eps, b.cells if b.cells else None)
        if (
            val > cert.log_delta
        ):  # recomputed at the certificate's eps (recorded bounds may be at a smaller eps)
            return False
    if cert.query == "epsilon" and cert.log_delta > math.log(cert.delta):
        return False
    e_ex = cert.eps if cert.query == "delta" else cert.epsilon_lower
    o = cert.worst_others
    if len(o) != cert.k or sum(o) != cert.n - 1:
        return False
    if cert.box_exhibited:
        if any(o[3:]):
            return False
        d = 0 if o[0] >= o[1] else 1
        c0, c1 = (o[0], o[1]) if d == 0 else (o[1], o[0])
        ex = _wcb.exact_leaf_log_delta(eng, c0, c1, d, e_ex)
    else:
        if sorted(o)[:-1] != [0] * (cert.k - 1):
            return False
        v = o.index(cert.n - 1)
        r = G.single_class_log_hockey(
            cert.k, cert.eps0, cert.n, 2 if v >= 2 else 0, e_ex, cert.log_level - _DROP_MARGIN
        )
        if r is None:
            return False
        ex = r[1][1] if v == 1 else r[0][1]
    if ex < cert.exhibited_log_delta - 1e-8:  # recomputed lower bound (its truncation may differ by ~1e-9)
        return False
    if cert.query == "delta":
        return bool(cert.exhibited_log_delta <= cert.log_delta)
    # epsilon_lower is exhibited only if the witness is above delta there
    if cert.epsilon_lower > 0 and not cert.exhibited_log_delta > math.log(cert.delta):
        return False
    return bool(cert.epsilon_lower <= cert.eps)
