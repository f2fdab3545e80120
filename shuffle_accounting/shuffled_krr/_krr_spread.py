"""Internal numerics: certified brackets on the exact delta of *any* shuffled k-RR dataset at scale.

Used by :func:`~shuffle_accounting.shuffled_krr.exact.dataset_log_delta_bounds` when no exact
path applies (the other users spread over three or more values, or over two values ``>= 2``, or
an exact path over its budget). Not a public API: the names here may change without notice.

Setting (:mod:`~shuffle_accounting.shuffled_krr.exact`): ``k``-RR with ``p = e^eps0 pbar``,
``p + (k - 1) pbar = 1``; the other ``n - 1`` users hold counts ``c_0, ..., c_{k-1}``; the
target holds 0 (``P``) or 1 (``Q``); the release is the full histogram;
``delta = max(H_E(P || Q), H_E(Q || P))``, ``E = e^eps``. Write ``c_r = c_2 + ... + c_{k-1}``
and ``gamma = k pbar`` (k-RR is ``(1 - gamma)`` truth plus ``gamma`` uniform on all ``k``
values; ``1 - gamma = p - pbar``).

Lower bounds (post-processing; Balle et al. 2019, data processing for the hockey-stick
divergence, an f-divergence):

* **L2, merged output.** Replace every report in ``{2, ..., k - 1}`` by one symbol ``r``: a
  function of the histogram, applied alike under ``P`` and ``Q``, so the divergence of
  ``(h0, h1, h_r)`` is at most that of the histogram, in both directions. Its law is exactly
  three-category: a user at 0 reports ``(0, 1, r)`` w.p. ``(p, pbar, (k - 2) pbar)``, a user at
  1 ``(pbar, p, (k - 2) pbar)``, a user at ``v >= 2`` ``(pbar, pbar, 1 - 2 pbar)``, the three
  classes independent; it is computed on the windowed ``(N, j)`` grid of
  :mod:`~shuffle_accounting.shuffled_krr._krr_grid` (pivot = largest class, the other two added
  by direct convolution or one user at a time) and bracketed by :class:`_krr_grid.Hockey`.
* **L1, a linear statistic.** ``T = a h0 - b h1`` for small integers ``a, b >= 0`` is a further
  function of the histogram; its law is the convolution of the three classes' laws, each the
  ``c``-fold sum of the one-user law on ``{a, -b, 0}`` (:func:`_krr_grid.iid_sum_law`), and the
  target shifts it by ``a``, ``-b`` or 0. Cheap at any ``n``; ``(a, b)`` is ``(1, 1)`` and the
  small-integer ratio nearest the Gaussian discriminant ``Sigma^-1 (1, -1)`` of the others'
  ``(h0, h1)`` (optimal in the normal limit, where the divergence depends on ``(h0, h1)`` only
  through that projection).

Upper bounds (revealing information; joint convexity of the hockey-stick divergence):

* **U2, reveal the coins of the users at values >= 2.** Each such user draws a coin: truth
  (probability ``1 - gamma``) or a uniform report on all ``k`` values (``gamma``). Give the
  adversary every such coin and, for the truthful ones, the report (it is their own value).
  (i) The extra view can only increase the divergence: the histogram is a function of (coins,
  truthful reports, histogram), and by data processing ``H_E(P_hist || Q_hist) <= H_E(P_view ||
  Q_view)``. (ii) The coins do not depend on the target, so ``H_E(P_view || Q_view) =
  E_coins H_E(P_hist|coins || Q_hist|coins)`` (the joint law factors as ``P(coins) P(h |
  coins)``, the same ``P(coins)`` under both hypotheses). (iii) Given the coins, the truthful
  reports are a known vector subtracted from the histogram (a bijection, divergence unchanged);
  what remains is the histogram of the ``c_0`` users at 0, the ``c_1`` at 1, the target and the
  ``B`` uniform users (``B`` = number of uniform coins, a function of the coins). (iv) In that
  histogram nobody holds a value ``>= 2``, so those values are exchangeable: given their total,
  the split is uniform multinomial under both hypotheses and sums out
  (:mod:`~shuffle_accounting.shuffled_krr.exact`, merged ``Z``), leaving the three-category law
  of ``c_0`` users at 0, ``c_1`` at 1 and ``B`` uniform users ``(1/k, 1/k, (k - 2)/k)``: a
  function ``D(B)`` of ``B ~ Bin(c_r, gamma)`` only. Hence, per direction,
  ``H <= E_B D(B)``, and ``delta <= max(E_B D_fwd(B), E_B D_rev(B))``. (v) ``D(B)`` is
  non-increasing in ``B``: the law with ``B + 1`` uniform users is that with ``B`` users plus one
  independent uniform report, a Markov kernel applied alike to both hypotheses. So a cell
  ``[b_i, b_{i+1})`` of ``B`` is bounded by ``D(b_i)`` times its mass, the cells above the
  last stop by the last stop's value, and the mass of ``B`` below the window (at most the
  binomial tail bound) by 1. With ``c_r = 0`` it is exact (``B = 0``).
* **U1, keep one class, reveal every other coin.** The same argument with the coins of *every*
  other user not at ``v`` (``v = 0``, or ``v = 1`` by relabelling 0 <-> 1, which swaps the two
  directions) revealed: ``B ~ Bin(n - 1 - c_v, gamma)``, and given ``B`` every other user's
  report different from ``v`` is uniform on the other ``k - 1`` values (true for the class at
  ``v`` and for uniform users), which is the single-class structure of
  :func:`_krr_grid.single_class_log_hockey` with ``N_o ~ Bin(c_v, 1 - p) + Bin(B, (k - 1)/k)``
  (:func:`pivot0_law_upper`): one dimension, two binomial tails per ``N``, so it runs at any
  ``n``. Looser than U2 (the revealed coins of the other class remove part of its variance).

Each bound is evaluated with the error model of :mod:`~shuffle_accounting.shuffled_krr._krr_grid`
(windowed laws, dropped mass bounded and added to upper ends, relative errors pushed outward),
and the final bracket is ``[max of the lower ends, min per direction of the upper ends]``.

Limits. The laws are scaled arrays whose entries below ``e^-700`` of their maximum are moved
into the dropped mass, so deltas far in the tail (below about ``e^-600``, e.g. ``eps`` near
``eps0`` at large ``n``) get a lower end of ``-inf`` and an upper end near ``e^-700``: sound,
not informative (the exact families work in log space and have no such floor). The
two-dimensional routes (L2, U2) run only within the caller's work budget, which at the default
budget means up to a few thousand users in the classes at 0 and 1; beyond, U1 is the upper end
(about 9 % larger normal-limit distance than the truth at ``k = 10``, ``eps0 = 2``: widths of
about 2 in log at ``delta ~ e^-22``; ``benchmarks/README.md``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._binomial import logsumexp
from .._logmath import UNIT_ROUNDOFF
from . import _krr_grid as G

__all__ = [
    "log_rows",
    "merged_lower",
    "linear_lower",
    "reveal2d_upper",
    "reveal1d_upper",
    "pivot0_law_upper",
    "b_stops",
    "spread_log_bounds",
    "spread_work",
    "directions",
    "merged_work",
]

_U = 2.0 * UNIT_ROUNDOFF
_NEG = -math.inf


def log_rows(k: int, eps0: float) -> dict[object, tuple[float, float, float]]:
    """Log-probabilities of a report in ``(0, 1, r)``, ``r = {2, ..., k - 1}``, by holder.

    Keys 0 and 1 (:func:`_krr_grid.rest_rows`), 2 (a user at any ``v >= 2``: ``(pbar, pbar,
    1 - 2 pbar)``, ``1 - 2 pbar = p + (k - 3) pbar``) and ``"u"`` (a uniform report: ``(1/k, 1/k,
    (k - 2)/k)``). ``k >= 3``.
    """
    rows: dict[object, tuple[float, float, float]] = {}
    rows.update(G.rest_rows(k, eps0).items())
    lp, lq, _ = rows[0]
    rows[2] = (lq, lq, lp + math.log1p((k - 3) * math.exp(-eps0)))
    rows["u"] = (-math.log(k), -math.log(k), math.log((k - 2) / k))
    return rows


def _coords(row: tuple[float, float, float], v: int) -> tuple[float, float, float]:
    d, o = G.PIVOT_COORDS[v]
    return row[v], row[d], row[o]


def _gamma(k: int, eps0: float) -> tuple[float, float]:
    """``(log gamma, log(1 - gamma))``, ``gamma = k pbar``, ``1 - gamma = pbar (e^eps0 - 1)``."""
    lq = -math.log1p((k - 1) * math.exp(-eps0)) - eps0
    return math.log(k) + lq, lq + math.log(math.expm1(eps0))


def _z(t: float) -> float:
    return max(8.0, math.sqrt(2.0 * max(0.0, -t)) + 2.0)


def _grid_cells(c: float, q: float, r: float, t: float) -> float:
    """Estimated cells of a :func:`_krr_grid.pivot_grid` of ``c`` users, ``N ~ Bin(c, q)``, ``j | N ~ Bin(N, r)``."""
    z = _z(t)
    rows = 2.0 * z * math.sqrt(c * q * (1.0 - q)) + 5.0
    cols = rows * r + 2.0 * z * math.sqrt(c * q * r * (1.0 - r)) + 5.0
    return rows * min(cols, rows + 1.0)


def _sum_cells(parts: Sequence[tuple[float, float, float]], t: float) -> float:
    """Estimated cells of the law of several independent classes ``(c, q, r)`` (side lengths add
    in quadrature)."""
    z = _z(t)
    vr = sum(c * q * (1.0 - q) for c, q, _ in parts)
    vc = sum(c * q * r * (1.0 - r) + c * q * (1.0 - q) * r * r for c, q, r in parts)
    return (2.0 * z * math.sqrt(vr) + 5.0) * (2.0 * z * math.sqrt(vc) + 5.0)


# ---------------------------------------------------------------------------------------------
# L2: the merged-output three-category law (exact divergence of (h0, h1, h_r))
# ---------------------------------------------------------------------------------------------


def _merged_setup(k: int, eps0: float, c3: tuple[int, int, int], t: float):
    rows = log_rows(k, eps0)
    v = max((2, 0, 1), key=lambda x: c3[x])
    R = G.class_grid(c3[v], *_coords(rows[v], v), t)
    rest = [x for x in G.PIVOT_COORDS[v] if c3[x] > 0]
    classes = [(c3[x], _coords(rows[x], v)) for x in rest]
    grids = [G.class_grid(c3[x], *_coords(rows[x], v), t) for x in rest]
    return rows, v, R, classes, grids


def _add_work(R: G.Grid, classes, grids, t: float) -> float:
    """Estimated work of :func:`_add` (the cheaper of its two ways)."""
    if not classes:
        return 0.0
    direct, seq = G.add_classes_work(R, classes, grids, t)
    return 3.0 * min(direct, seq)


def _add(R: G.Grid, classes, grids, t: float) -> G.Grid:
    """``R`` plus the classes: direct 2-D convolution or one user at a time
    (:func:`_krr_grid.add_users`), whichever :func:`_add_work` estimates cheaper (a product of
    the direct sums and a cell update both cost about 3 units), without the fixed budgets of
    :func:`_krr_grid.add_classes` (the caller checks :func:`_add_work` against its own)."""
    if not classes:
        return R
    direct, seq = G.add_classes_work(R, classes, grids, t)
    if direct <= seq:
        small = grids[0]
        for g in grids[1:]:
            small = G.conv2d(small, g)
        return G.conv2d(R, small)
    for c, w in classes:
        R = G.add_users(R, c, w, t - math.log(2.0))
    return R


def merged_work(k: int, eps0: float, c3: tuple[int, int, int], n_eps: int, t: float) -> tuple[float, float]:
    """``(estimated cells, estimated work)`` of :func:`merged_lower`, before building anything."""
    rows = log_rows(k, eps0)
    parts = []
    v = max((2, 0, 1), key=lambda x: c3[x])
    for x in (0, 1, 2):
        pv, pd = (math.exp(y) for y in _coords(rows[x], v)[:2])
        parts.append((c3[x], 1.0 - pv, pd / (1.0 - pv)))
    guess = _sum_cells(parts, t)
    others = [parts[x] for x in (0, 1, 2) if x != v]
    add = 3.0 * min(sum(c for c, _, _ in others) * guess, guess * _sum_cells(others, t))
    return guess, add + 30.0 * guess * n_eps


def merged_lower(
    k: int, eps0: float, c3: tuple[int, int, int], eps: Sequence[float], t: float, budget: float
):
    """L2: ``(log lower bounds on delta per eps, work)``, or ``(None, work)`` over ``budget``.

    ``c3 = (c_0, c_1, c_r)``. The merged law (module docstring) on the ``(N, j)`` grid with the
    largest class as pivot, bracketed by :class:`_krr_grid.Hockey` in both directions; the
    returned value is the larger lower end (a lower bound on ``delta``).
    """
    guess, est = merged_work(k, eps0, c3, len(eps), t)
    if est > budget:
        return None, est  # over (estimated): do not even build the grids
    rows, v, R, classes, grids = _merged_setup(k, eps0, c3, t)
    work = _add_work(R, classes, grids, t) + 30.0 * guess * len(eps)
    if work > budget:
        return None, work
    R = _add(R, classes, grids, t)
    pi0, pi1 = _coords(rows[0], v), _coords(rows[1], v)
    hf, hr = G.Hockey(R, pi0, pi1), G.Hockey(R, pi1, pi0)
    out = np.array([max(hf.bounds(e)[1], hr.bounds(e)[1]) for e in eps])
    return out, work


# ---------------------------------------------------------------------------------------------
# L1: a linear statistic T = a h0 - b h1
# ---------------------------------------------------------------------------------------------


def directions(k: int, eps0: float, c3: tuple[int, int, int]) -> list[tuple[int, int]]:
    """``(1, 1)``, the ratio ``a : b`` nearest the Gaussian discriminant, and the counts ``h0``, ``h1``.

    ``Sigma`` is the covariance of the others' ``(h0, h1)`` (three-category counts), and the
    normal-limit log-likelihood ratio of the target's shift ``(1, -1)`` is linear along
    ``Sigma^-1 (1, -1) = (V1 + C, -(V0 + C)) / det``; the ratio is chosen among coprime
    ``a + b <= 7`` and ``1 : m``, ``m : 1`` (``m <= 64``). ``(1, 0)`` and ``(0, 1)`` (the counts
    of 0s and of 1s) are cheap and help where one count is small.
    """
    rows = log_rows(k, eps0)
    V0 = V1 = C = 0.0
    for x in (0, 1, 2):
        a, b = math.exp(rows[x][0]), math.exp(rows[x][1])
        V0 += c3[x] * a * (1 - a)
        V1 += c3[x] * b * (1 - b)
        C -= c3[x] * a * b
    out = [(1, 1)]
    wa, wb = V1 + C, V0 + C
    if wa > 0 and wb > 0:
        target = wa / wb
        cands = {(a, b) for a in range(1, 7) for b in range(1, 7) if a + b <= 7 and math.gcd(a, b) == 1}
        cands |= {(1, m) for m in range(1, 65)} | {(m, 1) for m in range(1, 65)}
        best = min(sorted(cands), key=lambda ab: abs(math.log(ab[0] / ab[1] / target)))
        if best != (1, 1):
            out.append(best)
    return out + [(1, 0), (0, 1)]


def _linear_work(k: int, eps0: float, c3: tuple[int, int, int], a: int, b: int, t: float) -> float:
    rows = log_rows(k, eps0)
    z = _z(t)
    work = 0.0
    for x in (0, 1, 2):
        pa, pb = math.exp(rows[x][0]), math.exp(rows[x][1])
        var = a * a * pa + b * b * pb - (a * pa - b * pb) ** 2
        L = 2.0 * z * math.sqrt(c3[x] * max(var, 0.0)) + a + b + 4.0
        work += 3.0 * L * L
    return work


def linear_lower(
    k: int, eps0: float, c3: tuple[int, int, int], a: int, b: int, eps: Sequence[float], t: float
):
    """L1: log lower bounds on ``delta`` per eps from the statistic ``T = a h0 - b h1``."""
    rows = log_rows(k, eps0)
    law = None
    for x in (0, 1, 2):
        lx = G.iid_sum_law(c3[x], (a, -b, 0), rows[x], t - math.log(3.0))
        law = lx if law is None else G.conv1d(law, lx)
    assert law is not None
    L = law.arr.size
    base = b  # index offset: shifts -b, 0, a
    P = np.zeros(L + a + b)
    Q = np.zeros(L + a + b)
    shifts = (a, -b, 0)
    cp = [math.exp(x) for x in rows[0]]
    cq = [math.exp(x) for x in rows[1]]
    for y in range(3):
        s = base + shifts[y]
        P[s : s + L] += cp[y] * law.arr
        Q[s : s + L] += cq[y] * law.arr
    rho = law.rel + 8.0 * _U  # as Hockey: exp of the rows, three products, two sums
    out = []
    for e in eps:
        f = G.hockey_bounds(P, Q, law.scale, law.log_drop, rho, e)[1]
        r = G.hockey_bounds(Q, P, law.scale, law.log_drop, rho, e)[1]
        out.append(max(f, r))
    return np.array(out)


# ---------------------------------------------------------------------------------------------
# cells of B and the mixture over them
# ---------------------------------------------------------------------------------------------


def b_stops(m: int, k: int, eps0: float, t: float, max_stops: int):
    """``(stops, log cell masses, log tail)`` for ``B ~ Bin(m, gamma)``.

    The window of :func:`_krr_grid.binom_window` (outside mass at most ``e^log tail``) is cut into
    cells ``[stop_i, stop_{i+1})`` (the last one ends at the window's top): every value when the
    window has at most ``max_stops`` of them, else cells of width ``max(1, 10 sd / max_stops)``
    within three standard deviations of the mean (where the mass is) and wider outside, about
    ``max_stops`` in all. Each cell's log mass is the log-sum of its pmfs rounded up by
    ``REL_PMF`` and the summation.
    """
    if m == 0:
        return np.array([0]), np.array([0.0]), _NEG
    lg, l1mg = _gamma(k, eps0)
    lo, lp, ltail = G.binom_window(m, lg, l1mg, t)
    width = lp.size
    if width <= max_stops:
        starts = np.arange(width)
    else:
        g = math.exp(lg)
        mean, sd = m * g - lo, math.sqrt(m * g * (1.0 - g))
        fine = max(1.0, 6.0 * sd / (0.6 * max_stops))
        coarse = max(fine, sd, (width - 6.0 * sd) / (0.4 * max_stops))
        pts = [0.0]
        while pts[-1] < width - 1:
            x = pts[-1]
            pts.append(x + (fine if abs(x - mean) < 3.0 * sd else coarse))
        starts = np.unique(np.clip(np.round(pts), 0, width - 1).astype(np.int64))
    ends = np.append(starts[1:], width)
    masses = []
    for s0, s1 in zip(starts, ends):
        seg = lp[s0:s1]
        masses.append(float(logsumexp(seg)) + math.log1p(G.REL_PMF) + (seg.size + 4) * 2.0 * _U)
    return lo + starts, np.array(masses), ltail


def _mix(lw: np.ndarray, terms: np.ndarray, ltail: float) -> np.ndarray:
    """``log(sum_i e^lw_i e^terms_i,e + e^ltail)`` per column ``e``, rounded up."""
    out = []
    for col in terms.T:
        s = float(logsumexp(lw + col)) + (lw.size + 4) * 2.0 * _U
        out.append(min(float(np.logaddexp(s, ltail)), 0.0))
    return np.array(out)


# ---------------------------------------------------------------------------------------------
# U2: reveal the coins of the users at values >= 2
# ---------------------------------------------------------------------------------------------


def _reveal2d_setup(k: int, eps0: float, c0: int, c1: int, b0: int, t: float):
    rows = log_rows(k, eps0)
    v = 0 if c0 >= c1 else 1
    d = 1 - v
    lp = -math.log1p((k - 1) * math.exp(-eps0))
    lq = lp - eps0
    no = G.law_from_binom(c0 if v == 0 else c1, math.log(k - 1) + lq, lp, t)
    if b0 > 0:
        no = G.conv1d(no, G.law_from_binom(b0, math.log((k - 1) / k), -math.log(k), t))
    R = G.pivot_grid(no, t, -math.log(k - 1), math.log((k - 2) / (k - 1)))
    cd = c1 if v == 0 else c0
    classes = [(cd, _coords(rows[d], v))] if cd > 0 else []
    grids = [G.class_grid(cd, *_coords(rows[d], v), t)] if cd > 0 else []
    return rows, v, R, classes, grids


def reveal2d_upper(
    k: int,
    eps0: float,
    c3: tuple[int, int, int],
    eps: Sequence[float],
    t: float,
    budget: float,
    max_stops: int,
):
    """U2: ``((log upper fwd, log upper rev) per eps, work)``, or ``(None, work)`` over ``budget``.

    ``B``'s cells from :func:`b_stops`; the law of the users at 0 and 1 plus ``b_0`` uniform users
    (merged into the pivot's ``N_o``: a uniform report different from the pivot value is the other
    of 0 and 1 w.p. ``1 / (k - 1)``, like the pivot class's), then uniform users added one at a
    time (:func:`_krr_grid.sweep_users`) up to each stop, :func:`_krr_grid.hockey_upper` there.
    """
    c0, c1, cr = c3
    stops, lw, ltail = b_stops(cr, k, eps0, t, max_stops)
    lq = -math.log1p((k - 1) * math.exp(-eps0)) - eps0
    pbar, q_u, r0 = math.exp(lq), (k - 1) / k, 1.0 / (k - 1)
    cv, cd = (c0, c1) if c0 >= c1 else (c1, c0)
    p = 1.0 - (k - 1) * pbar
    parts = [(cv, 1.0 - p, r0), (int(stops[-1]), q_u, r0), (cd, 1.0 - pbar, p / (1.0 - pbar))]
    guess = _sum_cells(parts, t)
    span = float(stops[-1] - stops[0])
    if (span + 6.0 * stops.size * len(eps)) * guess > budget:
        return None, math.inf  # clearly over: do not even build the grids
    rows, v, R, classes, grids = _reveal2d_setup(k, eps0, c0, c1, int(stops[0]), t)
    base_work = _add_work(R, classes, grids, t)
    z = _z(t)
    span = float(stops[-1] - stops[0])
    grow = 2.0 * z * math.sqrt(0.25 * (c0 + c1 + stops[-1])) + 4.0
    cells = (R.arr.shape[0] + grow) * (R.arr.shape[1] + grow)
    work = base_work + span * cells + 6.0 * cells * stops.size * len(eps)
    if work > budget:
        return None, work
    R = _add(R, classes, grids, t)
    pi0, pi1 = _coords(rows[0], v), _coords(rows[1], v)
    fu = np.empty((stops.size, len(eps)))
    ru = np.empty((stops.size, len(eps)))
    rel = [int(s - stops[0]) for s in stops]
    for i, (_, g) in enumerate(G.sweep_users(R, rel, _coords(rows["u"], v), t)):
        for j, e in enumerate(eps):
            fu[i, j] = G.hockey_upper(g, pi0, pi1, e)
            ru[i, j] = G.hockey_upper(g, pi1, pi0, e)
    return (_mix(lw, fu, ltail), _mix(lw, ru, ltail)), work


# ---------------------------------------------------------------------------------------------
# U1: keep one class, reveal every other coin (one dimension)
# ---------------------------------------------------------------------------------------------


def pivot0_law_upper(
    k: int, eps0: float, law: G.Law1D, n_top: int, eps: float, log_skip: float = _NEG
) -> tuple[float, float]:
    """``(log upper H(P || Q), log upper H(Q || P))`` for the pivot-0 structure with ``N_o ~ law``.

    Every other user's report different from 0 is uniform on the other ``k - 1`` values and
    ``N_o`` (their number, at most ``n_top``) has the windowed law ``law``
    (:class:`_krr_grid.Law1D`: values within relative ``rel`` up to the dropped mass); the
    target holds 0 / 1. The cells ``N`` whose ``w = P(N_o = N)`` and ``U = (k - 1) P(N_o = N -
    1)`` are both in the window get :func:`_krr_grid.pivot0_terms` (upper ends: ``w, U`` pushed
    to the unfavourable ends of ``[1 - rho, 1 + rho]``, ``rho = rel + 16 * 2u``); the others (the
    window's edges, entries flushed to 0) are bounded by their mass ``P(N_o = N) + P(N_o = N -
    1)`` rounded up; the dropped mass is added once (each unit of ``N_o``'s mass feeds two cells
    with weights summing to 1, and raises a term by at most its own size). ``N = 0``: only
    ``(p - E pbar) w(0)`` in the forward direction. Cells whose mass bounds sum to at most
    ``e^log_skip`` are not evaluated; that sum is added to both upper ends.
    """
    if eps >= eps0:
        return _NEG, _NEG
    lq = -math.log1p((k - 1) * math.exp(-eps0)) - eps0
    arr, lo = law.arr, law.lo
    hi = lo + arr.size - 1
    rho = law.rel + 16.0 * _U
    with np.errstate(divide="ignore"):
        la = np.log(arr)
    top = hi + 1 if hi == n_top else hi
    N = np.arange(lo + 1, top + 1, dtype=float)
    lw = np.concatenate([la[1:], [_NEG] * (top - hi)])
    lU = math.log(k - 1) + la[: N.size]
    wa = np.concatenate([arr[1:], [0.0] * (top - hi)])
    edge = 0.0
    if lo > 0:
        edge += float(arr[0])
    if hi < n_top:
        edge += float(arr[-1])
    ok = np.isfinite(lU)
    edge += float(np.sum(wa[~ok]))  # U flushed to 0 there: bound the cell by its w mass
    edge *= (1.0 + rho) * (1.0 + (arr.size + 4) * _U)
    drop = float(np.logaddexp(law.log_drop, math.log(edge) + law.scale if edge > 0 else _NEG))
    N, lw, lU = N[ok], lw[ok], lU[ok]
    # negligible cells skip their tails: a cell's term (either direction) is at most its mass
    # w + U / (k - 1) <= w + U; the smallest such caps summing to <= e^log_skip are replaced by
    # their sum (rounded up), added to the upper ends like the dropped mass
    if math.isfinite(log_skip) and N.size > 1:
        with np.errstate(under="ignore"):
            cap = (np.exp(lw) + np.exp(lU)) * (1.0 + rho) * (1.0 + 4.0 * _U)
        order = np.argsort(cap, kind="stable")
        cs = np.cumsum(cap[order]) * (1.0 + (cap.size + 4) * _U)
        n_skip = int(np.searchsorted(cs, math.exp(min(log_skip - law.scale, 700.0)), side="right"))
        n_skip = min(n_skip, N.size - 1)
        if n_skip > 0:
            drop = float(np.logaddexp(drop, math.log(float(cs[n_skip - 1])) + law.scale))
            keep = np.sort(order[n_skip:])
            N, lw, lU = N[keep], lw[keep], lU[keep]
    mx = np.maximum(lw, lU)
    with np.errstate(under="ignore"):
        w = np.exp(lw - mx)
        U = np.exp(lU - mx)
    fu, _, ru, _ = G.pivot0_terms(
        k, eps0, eps, N, (w * (1 - rho), w * (1 + rho)), (U * (1 - rho), U * (1 + rho))
    )
    extra = []
    if lo == 0 and arr[0] > 0:
        extra.append(float(la[0]) + lq + eps + math.log(math.expm1(eps0 - eps)) + math.log1p(rho))

    def fin(terms: np.ndarray, ex: list[float]) -> float:
        allt = np.concatenate([terms + mx, np.array(ex)])
        s = float(logsumexp(allt)) + law.scale + 4.0 * _U * (allt.size + 4) if allt.size else _NEG
        return min(float(np.logaddexp(s, drop)), 0.0)

    return fin(fu, extra), fin(ru, [])


def _reveal1d_work(k: int, eps0: float, cv: int, m: int, n_stops: int, n_eps: int, t: float) -> float:
    lq = -math.log1p((k - 1) * math.exp(-eps0)) - eps0
    q = (k - 1) * math.exp(lq)
    z = _z(t)
    L1 = 2.0 * z * math.sqrt(cv * q * (1 - q)) + 4.0
    L2 = 2.0 * z * math.sqrt(m * (k - 1) / k / k) + 4.0
    return n_stops * (L1 * L2 + 60.0 * n_eps * (L1 + L2))


def reveal1d_upper(k: int, eps0: float, cv: int, m: int, eps: Sequence[float], t: float, max_stops: int):
    """U1 with the class at 0 kept (``cv`` users), ``m`` other users' coins revealed.

    Returns ``(log upper fwd, log upper rev)`` arrays over ``eps``. For the class at 1, call it
    with ``cv = c_1`` and swap the two directions (relabel 0 <-> 1).
    """
    lp = -math.log1p((k - 1) * math.exp(-eps0))
    lq = lp - eps0
    stops, lw, ltail = b_stops(m, k, eps0, t, max_stops)
    base = G.law_from_binom(cv, math.log(k - 1) + lq, lp, t - 1.0)
    fu = np.empty((stops.size, len(eps)))
    ru = np.empty((stops.size, len(eps)))
    for i, b in enumerate(stops):
        law = base
        if b > 0:
            law = G.conv1d(base, G.law_from_binom(int(b), math.log((k - 1) / k), -math.log(k), t - 1.0))
        for j, e in enumerate(eps):
            fu[i, j], ru[i, j] = pivot0_law_upper(k, eps0, law, cv + int(b), e, t)
    return _mix(lw, fu, ltail), _mix(lw, ru, ltail)


# ---------------------------------------------------------------------------------------------
# the bracket
# ---------------------------------------------------------------------------------------------


def spread_work(k: int, eps0: float, counts: tuple[int, ...], n_eps: int, log_tol: float) -> float:
    """Work estimate of the one-dimensional routes (L1 with ``(1, 1)``, U1 both ways): the least work."""
    c3 = (counts[0], counts[1], sum(counts[2:]))
    n1 = sum(c3)
    w = _linear_work(k, eps0, c3, 1, 1, log_tol)
    w += _reveal1d_work(k, eps0, c3[0], n1 - c3[0], 40, n_eps, log_tol)
    w += _reveal1d_work(k, eps0, c3[1], n1 - c3[1], 40, n_eps, log_tol)
    return w


def _deepen(run, t: float, tries: int = 4):
    """``run(t)`` re-run with a deeper truncation level while its smallest value is within
    ``e^10`` of ``e^t`` (the dropped mass would dominate it); returns ``(values, t)``."""
    val = run(t)
    for _ in range(tries - 1):
        worst = float(np.min(val))
        if worst > t + 10.0:
            break
        t = worst - 30.0 if math.isfinite(worst) else 2.0 * t - 20.0
        val = run(t)
    return val, t


def spread_log_bounds(
    k: int, eps0: float, counts: tuple[int, ...], eps: Sequence[float], log_tol: float, budget: float
) -> tuple[np.ndarray, np.ndarray, dict]:
    """``(lower, upper, info)`` on ``log delta`` per eps for any dataset (module docstring).

    Runs L1 and U1 (always; their work is :func:`spread_work`, checked by the caller) and L2 and
    U2 when their estimated work fits what is left of ``budget``. The truncation level starts at
    ``log_tol`` and is lowered (re-run) where a value comes within ``e^10`` of it. ``info``
    names the routes run and which gave each end. ``k >= 3``; every ``eps < eps0``.
    """
    c0, c1 = counts[0], counts[1]
    cr = sum(counts[2:])
    c3 = (c0, c1, cr)
    n1 = c0 + c1 + cr
    eps = [float(e) for e in eps]
    used = spread_work(k, eps0, counts, len(eps), log_tol)
    info: dict = {"routes": []}
    # lower ends: L1 (1, 1) first; its value sets the truncation level of everything else
    low, t = _deepen(lambda tt: linear_lower(k, eps0, c3, 1, 1, eps, tt), log_tol)
    info["routes"].append("L1(T = h0 - h1)")
    low_src = ["L1(1,1)"] * len(eps)
    if np.all(np.isfinite(low)):
        t = min(t, float(np.min(low)) - 30.0)

    # upper ends, per direction (keep 1: relabel 0 <-> 1, the directions swap)
    def u1(tt: float) -> np.ndarray:
        f0, r0 = reveal1d_upper(k, eps0, c0, n1 - c0, eps, tt, 40)
        f1, r1 = reveal1d_upper(k, eps0, c1, n1 - c1, eps, tt, 40)
        return np.stack([np.minimum(f0, r1), np.minimum(r0, f1)])

    pair, t_u = _deepen(u1, t)
    info["routes"] += ["U1(keep 0)", "U1(keep 1)"]
    upf, upr = pair
    up_src = ["U1"] * len(eps)
    # U2 with the finest cells of B that fit, keeping room for L2 when L2 fits half of what is left
    rem = budget - used
    l2 = merged_work(k, eps0, c3, len(eps), t)[1]
    share = rem - l2 if l2 <= rem / 2 else rem
    pair2, w = None, 0.0
    for ms in (4096, 1024, 256, 64):
        pair2, w = reveal2d_upper(k, eps0, c3, eps, t_u, share, ms)
        if pair2 is not None:
            break
    if pair2 is not None:
        used += w
        info["routes"].append("U2(reveal coins at values >= 2)")
        f2, r2 = pair2
        for i in range(len(eps)):
            if max(f2[i], r2[i]) < max(upf[i], upr[i]):
                up_src[i] = "U2"
        upf, upr = np.minimum(upf, f2), np.minimum(upr, r2)
    # more lower ends with what is left of the budget
    for a, b in directions(k, eps0, c3)[1:]:
        w = _linear_work(k, eps0, c3, a, b, t)
        if used + w > budget:
            continue
        used += w
        val = linear_lower(k, eps0, c3, a, b, eps, t)
        info["routes"].append(f"L1(T = {a} h0 - {b} h1)")
        for i, x in enumerate(val):
            if x > low[i]:
                low[i], low_src[i] = x, f"L1({a},{b})"
    val, w = merged_lower(k, eps0, c3, eps, t, budget - used)
    if val is not None:
        used += w
        info["routes"].append("L2(merged output)")
        for i, x in enumerate(val):
            if x > low[i]:
                low[i], low_src[i] = x, "L2"
    up = np.maximum(upf, upr)
    low = np.minimum(low, up)
    info["work"] = used
    info["lower_from"], info["upper_from"] = low_src, up_src
    return low, up, info
