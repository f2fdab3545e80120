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
  ``[b_i, b_{i+1})`` of ``B`` is bounded by ``D(b_i)`` times its mass, any run of consecutive
  cells by ``D`` at its lowest value times their total mass (the cells above the core
  ``E B - 4 sd .. E B + 3 sd`` share the value at its top; when building the law twice is
  cheaper than sweeping up to the core, the cells below it share the value at the window's
  bottom, unless that share would be too large: :func:`reveal2d_upper`), and the mass of
  ``B`` below the window (at most the binomial tail bound) by 1. With ``c_r = 0`` it is exact
  (``B = 0``). *Computing ``D``*: the law of the larger of the classes at 0 and 1 (the pivot
  ``v``) with ``b`` uniform users has the closed form of :func:`_krr_grid.pivot_grid`; the
  smaller class (at ``d``) joins it either by convolution or by its own coins
  (:func:`_krr_grid.pivot_coins_grid`: its users are truthful, moving ``(N, j)`` by ``(1, 1)``,
  w.p. ``1 - gamma``, else uniform users of the pool, so the law is a mixture over
  ``F ~ Bin(c_d, 1 - gamma)`` of pivot structures, in ``W_F W_m W_x`` products instead of
  ``c_d`` user steps); every other uniform user is then added one at a time.
* **U1, keep one class, reveal every other coin.** The same argument with the coins of *every*
  other user not at ``v`` (``v = 0``, or ``v = 1`` by relabelling 0 <-> 1, which swaps the two
  directions) revealed: ``B ~ Bin(n - 1 - c_v, gamma)``, and given ``B`` every other user's
  report different from ``v`` is uniform on the other ``k - 1`` values (true for the class at
  ``v`` and for uniform users), which is the single-class structure of
  :func:`_krr_grid.single_class_log_hockey` with ``N_o ~ Bin(c_v, 1 - p) + Bin(B, (k - 1)/k)``
  (:func:`pivot0_law_upper`): one dimension, two binomial tails per ``N``, so it runs at any
  ``n``. Looser than U2 (the revealed coins of the other class remove part of its variance).

* **UP, pair the users at 0 with the users at 1, reveal the other coins.** Write ``d = p - pbar
  = 1 - gamma``, ``q = p + pbar``, ``m = min(c_0, c_1)``, ``e = |c_0 - c_1|``. (i) *Pairs.* Match
  ``m`` users at 0 with ``m`` users at 1. A pair reports ``(0, 1)`` with probability
  ``p^2 >= d^2``, so its law is ``d^2 delta_(0,1) + (1 - d^2) S`` with ``S`` a probability law
  (the pair's law minus ``d^2`` at ``(0, 1)``, renormalised): draw a latent *fixed* flag ``W``
  with ``P(W) = d^2`` and the reports from ``delta_(0,1)`` or ``S``. Counting reports in
  ``{0, 1}`` (``s``) and ``h0`` (0s): ``S`` puts ``(1 - q)^2``, ``2 q (1 - q)``, ``q^2 - d^2 =
  4 p pbar`` (over ``1 - d^2``) on ``s = 0, 1, 2``; given ``s = 1`` the report is 0 or 1 with
  the same weight ``(k - 2) pbar (p + pbar)``, given ``s = 2`` the split ``(2, 0), (1, 1), (0, 2)`` has
  weights ``p pbar, p^2 + pbar^2 - d^2 = 2 p pbar, p pbar``: so ``h0 | s ~ Bin(s, 1/2)``.
  The polynomial ``(1 - q)^2 + 2 q (1 - q) x + (q^2 - d^2) x^2 = (1 - q + 2 p x)(1 - q + 2 pbar
  x)`` gives ``s ~ Bern(a) + Bern(b)``, ``a = 2 p / (1 + d)``, ``b = 2 pbar / (1 - d)``
  (:func:`pair_logs`). A report in ``R`` is uniform on ``R`` given that it is in ``R`` (each
  user's is). (ii) *Other coins.* The ``e`` unpaired users and the users at values ``>= 2`` draw
  their coins as in U2 (truthful w.p. ``1 - gamma``, else uniform on all ``k`` values); a
  uniform report is 0 or 1 w.p. ``1/k`` each and uniform on ``R`` given ``R``. (iii) *The
  view*: the flags ``W``, the coins and the truthful users' reports. As in U2 (i)-(iii) it
  contains the release (data processing), its revealed part does not involve the target, so
  ``H <= E D(F, B')`` with ``F ~ Bin(m, d^2)`` the fixed pairs and ``B' ~ Bin(c_r + e, gamma)``
  the uniform users (independent), ``D(F, B')`` the divergence of the histogram of ``m - F``
  ``S``-pairs, ``B'`` uniform users and the target (the fixed pairs and truthful users are a
  known shift: a bijection). (iv) In that histogram every report in ``R`` (the target's too) is
  uniform on ``R`` given its number: the split of ``R`` is ancillary and sums out, leaving
  ``(h0, h1, h_R)``, i.e. ``(N, h0)`` with ``N = h0 + h1``. The others' ``N_o ~ Bin(m - F, a) +
  Bin(m - F, b) + Bin(B', 2/k)`` and given ``N_o`` their ``h0 ~ Bin(N_o, 1/2)`` (a sum of
  independent ``Bin(s_i, 1/2)``); the target reports ``(0, 1, R)`` w.p. ``(p, pbar, (k - 2)
  pbar)`` or ``(pbar, p, (k - 2) pbar)``. This is the *symmetric rest-pivot structure* of
  :func:`_krr_grid.rest_terms`, whose hockey sum per ``N`` is a binomial tail (one dimension,
  both directions equal). (v) *Monotone cells.* ``D`` is non-increasing in ``B'`` (U2 (v)) and
  non-decreasing in ``F``: the law with ``F`` fixed pairs is that with ``F + 1`` after the
  kernel "remove the known ``(1, 1)`` of one fixed pair, add an independent ``S``-pair",
  applied alike under both hypotheses. So a cell ``[f_i, f_{i+1}) x [b_j, b_{j+1})`` is
  bounded by ``D(f_{i+1} - 1, b_j)`` times its mass, and the mass outside the two windows by
  1. Checked in exact rationals (tests/test_shuffled_krr_spread_pairs.py). *Tightness*: the
  flags and the coins of the users at ``>= 2`` move the others' ``(N, h0)`` along ``h0 = N /
  2`` (no information on ``h0 - h1``), so for ``c_0 = c_1`` the normal-limit distance of the
  view is that of the histogram to 6e-5 relative (``k = 10``, ``eps0 = 2``); the coins of the
  ``e`` unpaired users do carry ``h0 - h1`` information (``+8 %`` with counts proportional to
  ``1 / (j + 1)``), and no decomposition "known shift plus this symmetric structure" avoids it:
  for ``n`` reports in ``{0, 1}`` that are 0 w.p. ``theta > 1/2``, matching the first two
  derivatives of the generating functions at 1 forces the shift's ``h0 - h1`` variance to be
  at least ``n beta (1 - beta)``, ``beta = 2 theta - 1``. The cells' corner bounds add about
  ``1e-2`` in log at ``n = 1e5 - 1e6`` with :data:`MAX_PAIR_CELLS` cells.

Each bound is evaluated with the error model of :mod:`~shuffle_accounting.shuffled_krr._krr_grid`
(windowed laws, dropped mass bounded and added to upper ends, relative errors pushed outward),
and the final bracket is ``[max of the lower ends, min per direction of the upper ends]``.

Limits. The laws are scaled arrays whose entries below ``e^-700`` of their maximum are moved
into the dropped mass, so deltas far in the tail (below about ``e^-600``, e.g. ``eps`` near
``eps0`` at large ``n``) get a lower end of ``-inf`` and an upper end near ``e^-700``: sound,
not informative (the exact families work in log space and have no such floor). The
two-dimensional routes (L2, U2) run only within the caller's work budget, which at the default
budget means U2 up to about ``n = 3e4`` (its smaller class added by its coins, ``B`` swept over
its core only; L2 up to a few thousand users in the classes at 0 and 1); beyond, UP is the
upper end (widths of about 1e-2 in log at ``delta ~ e^-22 .. e^-31``, ``n = 1e5 - 1e6``, the
others spread evenly) or, when it is smaller, U1 (its normal-limit distance is 9 % larger than
the truth at ``k = 10``, ``eps0 = 2``: widths of about 2 in log). With ``c_0`` and ``c_1`` far
apart both lose (UP by the unpaired users' coins): counts proportional to ``1 / (j + 1)`` at
``k = 10``: width 1.6e-3 at ``n = 1e4``, 2.6e-3 at ``2e4`` and 3.8e-3 at ``3e4`` (U2 above,
L1 with ``T = 7 h0 - 10 h1`` below), 6.1e-3 at ``5e4``; where no sweep fits, U2 runs without
one (the law built at 4 and, as the budget allows, 1 standard deviations below ``B``'s mean,
each cell bounded at the build below it, the cells below the first build by the pair reveal
given ``B`` at the window's bottom: :func:`reveal2d_upper`): 2.8e-2 at ``7e4``, 4.0e-2 at
``1e5`` within a budget of 8e9 (UP gave 2.8 there). The caller's ``wide_budget``
(:data:`~shuffle_accounting.shuffled_krr.exact.MAX_SPREAD_WORK_WIDE` by default) pays for U2
where it is expected to beat both 1-D routes and no sweep fits the budget: a sweep where one
fits it (5.4e-3 at ``7e4``, 7.4e-3 at ``1e5``, 8.4e-3 at ``2e5``; 15-37 s), else the builds
(2.4e-2 at ``1e6``, two builds, about 40 s and 5 GB; UP alone gives 3.1). ``max_work = 3e12``
lets U2 sweep at ``1e6`` (1.2e-2, about 12 minutes and 7 GB of memory: its estimate is about
1.6e12 units, the sweep of ``B``'s core growing like ``n^1.5``; ``benchmarks/README.md``).
The gate: the ratios of :func:`normal_limit_ratios` above :data:`UP_NEAR_EXACT`, or the 1-D
routes' expected excess over U2 in log above :data:`BUILDS_EXCESS` (k = 3, eps0 = 0.1, counts
60 / 30 / 10 % at ``1e6``: 2.8e-3 instead of UP's 0.19). Of the 1-D views with the structure "known shift plus
``h0 | N ~ Bin(N, theta)``" (pairs, singles or triples of users, any ``theta``), none found
comes within 8 % of the histogram's normal-limit distance there: UP at ``theta = 1/2`` is the best of them.
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
    "rest_law_upper",
    "pairs_upper",
    "pairs_work",
    "MAX_PAIR_CELLS",
    "CORE_SD",
    "CORE_SHARE",
    "core_range",
    "U2_DEPTH",
    "BUILD_SDS",
    "BOTTOM_PAIR_CELLS",
    "UP_NEAR_EXACT",
    "BUILDS_EXCESS",
    "normal_limit_ratios",
    "pair_logs",
    "count_stops",
    "count_cells",
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


def _grid_cells(c: float, q: float, r: float, t: float) -> float:
    """Estimated cells of a :func:`_krr_grid.pivot_grid` of ``c`` users, ``N ~ Bin(c, q)``, ``j | N ~ Bin(N, r)``."""
    z = G.window_z(t)
    rows = 2.0 * z * math.sqrt(c * q * (1.0 - q)) + 5.0
    cols = rows * r + 2.0 * z * math.sqrt(c * q * r * (1.0 - r)) + 5.0
    return rows * min(cols, rows + 1.0)


def _sum_cells(parts: Sequence[tuple[float, float, float]], t: float) -> float:
    """Estimated cells of the law of several independent classes ``(c, q, r)`` (side lengths add
    in quadrature)."""
    z = G.window_z(t)
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
    ``a + b <= 7`` and ``1 : m``, ``m : 1`` (``m <= 64``), then, when they differ from it, the
    nearest with ``a + b <= 17`` and ``<= 29`` (finer directions, dearer statistics: the law of
    ``T`` spans ``a + b`` times as many values; measured, k = 10, counts proportional to
    ``1 / (j + 1)``, n = 1e4 and 3e4: ``7 : 10`` and ``9 : 13`` raise the lower end by 2.5e-3
    and 4.2e-3 in log over ``2 : 3``, halving the bracket). ``(1, 0)`` and ``(0, 1)`` (the
    counts of 0s and of 1s) are cheap and help where one count is small.
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
        ends = {(1, m) for m in range(1, 65)} | {(m, 1) for m in range(1, 65)}
        for limit in (7, 17, 29):
            cands = {(a, b) for a in range(1, limit) for b in range(1, limit - a + 1) if math.gcd(a, b) == 1}
            best = min(sorted(cands | ends), key=lambda ab: abs(math.log(ab[0] / ab[1] / target)))
            if best not in out:
                out.append(best)
    return out + [(1, 0), (0, 1)]


def _linear_work(k: int, eps0: float, c3: tuple[int, int, int], a: int, b: int, t: float) -> float:
    """Estimated work of :func:`linear_lower` (units of about a nanosecond): per class, ``0.3 L^2``
    for the direct convolutions of laws of ``L`` values, plus ``1e6`` (calibrated on the 2-core
    development machine: 4 ms to 0.5 s against 3.4e6 to 5.6e8 units, k = 10, n = 1e4 - 1e5,
    ``(a, b)`` from ``(1, 1)`` to ``(9, 13)``)."""
    rows = log_rows(k, eps0)
    z = G.window_z(t)
    work = 0.0
    for x in (0, 1, 2):
        pa, pb = math.exp(rows[x][0]), math.exp(rows[x][1])
        var = a * a * pa + b * b * pb - (a * pa - b * pb) ** 2
        L = 2.0 * z * math.sqrt(c3[x] * max(var, 0.0)) + a + b + 4.0
        work += 0.3 * L * L + 1e6
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
    """``(stops, log cell masses, log tail)`` for ``B ~ Bin(m, gamma)`` (:func:`count_stops`)."""
    return count_stops(m, *_gamma(k, eps0), t, max_stops)


def count_stops(m: int, lg: float, l1mg: float, t: float, max_stops: int):
    """``(stops, log cell masses, log tail)`` for a count ``~ Bin(m, g)`` (:func:`count_cells`)."""
    starts, _, masses, ltail = count_cells(m, lg, l1mg, t, max_stops)
    return starts, masses, ltail


def count_cells(m: int, lg: float, l1mg: float, t: float, max_stops: int):
    """``(starts, tops, log cell masses, log tail)`` for a count ``~ Bin(m, g)``, ``g = e^lg``, ``1 - g = e^l1mg``.

    The window of :func:`_krr_grid.binom_window` (outside mass at most ``e^log tail``) is cut into
    cells ``[stop_i, stop_{i+1})`` (the last one ends at the window's top): every value when the
    window has at most ``max_stops`` of them, else cells of width ``max(1, 10 sd / max_stops)``
    within three standard deviations of the mean (where the mass is) and wider outside, about
    ``max_stops`` in all. Each cell's log mass is the log-sum of its pmfs rounded up by
    ``REL_PMF`` and the summation.
    """
    if m == 0:
        return np.array([0]), np.array([0]), np.array([0.0]), _NEG
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
    return lo + starts, lo + ends - 1, np.array(masses), ltail


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


#: U2 truncates at ``e^-U2_DEPTH`` below the smallest lower end (:func:`spread_log_bounds`).
U2_DEPTH = 15.0

#: Plan of U2's sweep over ``B`` (:func:`reveal2d_upper`): the cells of ``B`` from ``CORE_SD[0]``
#: standard deviations below its mean to ``CORE_SD[1]`` above (the *core*) are each bounded at
#: their own start; the cells above the core share the bound at the core's top (their mass, at
#: most 1.4e-3, times ``D``'s small decrease over them), and, when a second build costs less than
#: sweeping up to the core, the cells below it share the bound at the window's bottom (their
#: mass, at most 3.2e-5, times ``D``'s growth down to the bottom).
CORE_SD = (4.0, 3.0)
#: ... unless their share exceeds this fraction of the core's part (then the sweep starts there).
CORE_SHARE = 1e-4


#: Where the plan without a sweep (``"builds"``, :func:`reveal2d_upper`) builds the law of ``B``'s
#: conditional view, in standard deviations below ``B``'s mean: the first always, the others as
#: the budget allows. A cell is bounded by ``D`` at the nearest build below it (U2 (v)); the cells
#: below the first build (mass at most 3.2e-5) by the pair reveal at the window's bottom
#: (:func:`pairs_upper` with ``b_fixed``: ``D(b) <= D(b_0) <= UP(b_0)`` for ``b >= b_0``).
BUILD_SDS = (4.0, 1.0)
#: Cells of ``(F, B')`` of that pair reveal (1-D: a small share of one build's cost).
BOTTOM_PAIR_CELLS = 256.0


def _log_mass(lw: np.ndarray) -> float:
    """Log of the summed cell masses ``e^lw`` (each already rounded up), rounded up."""
    return float(logsumexp(lw)) + (lw.size + 4) * 2.0 * _U


def core_range(stops: np.ndarray, m: int, lg: float, sds: tuple[float, float] = CORE_SD) -> tuple[int, int]:
    """``(i_lo, i_hi)``: the first and last stop from ``sds[0]`` standard deviations below the mean
    of ``Bin(m, e^lg)`` to ``sds[1]`` above (by default the core, :data:`CORE_SD`; ``i_lo <=
    i_hi``; the nearest stops when none is in that range)."""
    g = math.exp(lg)
    mean, sd = m * g, math.sqrt(m * g * (1.0 - g))
    i_lo = min(int(np.searchsorted(stops, mean - sds[0] * sd, side="left")), stops.size - 1)
    i_hi = max(int(np.searchsorted(stops, mean + sds[1] * sd, side="right")) - 1, i_lo)
    return i_lo, i_hi


def _reveal2d_pivot(k: int, eps0: float, c0: int, c1: int, b0: int, t: float) -> G.Grid:
    """The pivot's law (the larger of the classes at 0 and 1) plus ``b0`` uniform users."""
    lp = -math.log1p((k - 1) * math.exp(-eps0))
    lq = lp - eps0
    no = G.law_from_binom(max(c0, c1), math.log(k - 1) + lq, lp, t)
    if b0 > 0:
        no = G.conv1d(no, G.law_from_binom(b0, math.log((k - 1) / k), -math.log(k), t))
    return G.pivot_grid(no, t, -math.log(k - 1), math.log((k - 2) / (k - 1)))


def _reveal2d_setup(k: int, eps0: float, c0: int, c1: int, b0: int, t: float):
    rows = log_rows(k, eps0)
    v = 0 if c0 >= c1 else 1
    d = 1 - v
    R = _reveal2d_pivot(k, eps0, c0, c1, b0, t)
    cd = c1 if v == 0 else c0
    classes = [(cd, _coords(rows[d], v))] if cd > 0 else []
    grids = [G.class_grid(cd, *_coords(rows[d], v), t)] if cd > 0 else []
    return rows, v, R, classes, grids


class _U2Plan:
    """The chosen plan of one :func:`reveal2d_upper` call, with what running it needs.

    Built by :func:`_u2_plan` (the setup, the cells of ``B``, the cost model, the plan and its
    estimated ``work``), run by :func:`_u2_run`. ``best`` is ``"full"`` (sweep every stop from the
    window's bottom), ``"one"`` (from the bottom to the core's top), ``"two"`` (a second build
    at the core's bottom) or ``"builds"`` (no sweep: the law built at the stops ``builds`` only,
    see :data:`BUILD_SDS`); ``coins`` whether the smaller class joins by its coins.
    """

    # set by setup() (once per call) and by _u2_plan (per cell count tried)
    rows: dict
    v: int
    R0: G.Grid
    classes: list
    grids: list
    base_work: float
    cv_law: G.Law1D | None
    guess: float
    cells: float
    stops: np.ndarray
    lw: np.ndarray
    ltail: float
    i_lo: int
    i_hi: int
    budget: float  # what the chosen plan must fit and its run may use (builds_budget where that paid)

    def __init__(
        self, k: int, eps0: float, c3: tuple[int, int, int], n_eps: int, t: float, build: str
    ) -> None:
        self.k, self.eps0, self.t, self.n_eps, self.build = k, eps0, t, n_eps, build
        self.c0, self.c1, self.cr = c3
        self.lq = -math.log1p((k - 1) * math.exp(-eps0)) - eps0
        pbar = math.exp(self.lq)
        self.q_u, self.r0 = (k - 1) / k, 1.0 / (k - 1)
        self.cv, self.cd = (self.c0, self.c1) if self.c0 >= self.c1 else (self.c1, self.c0)
        self.p = 1.0 - (k - 1) * pbar
        self.pbar = pbar
        self.lg, self.l1mg = _gamma(k, eps0)
        self.setup_done = False
        self.best, self.coins, self.work = "one", False, math.inf
        self.builds: list[int] = []
        self.bottom_pairs = False

    def setup(self, b0: int) -> None:
        """The pivot's law at the window's bottom ``b0`` and the smaller class (once per call)."""
        if self.setup_done:
            return
        self.setup_done = True
        k, t = self.k, self.t
        self.rows, self.v, self.R0, self.classes, self.grids = _reveal2d_setup(
            k, self.eps0, self.c0, self.c1, b0, t
        )
        self.base_work = _add_work(self.R0, self.classes, self.grids, t)
        self.cv_law = None
        if self.classes and self.build != "add":
            self.cv_law = self.pivot_law()

    def guess_cells(self, top: int) -> float:
        """Cells of the final law with up to ``top`` uniform users (:func:`_sum_cells`, no grid)."""
        parts = [
            (self.cv, 1.0 - self.p, self.r0),
            (top, self.q_u, self.r0),
            (self.cd, 1.0 - self.pbar, self.p / (1.0 - self.pbar)),
        ]
        return _sum_cells(parts, self.t)

    def grid_cells(self, top: int) -> float:
        """Cells of the swept grid with up to ``top`` uniform users (after :meth:`setup`)."""
        grow = 2.0 * G.window_z(self.t) * math.sqrt(0.25 * (self.c0 + self.c1 + top)) + 4.0
        return (self.R0.arr.shape[0] + grow) * (self.R0.arr.shape[1] + grow)

    def pivot_law(self) -> G.Law1D:
        """The law of the pivot class's reports different from its value (``X`` of the coins build)."""
        return G.law_from_binom(self.cv, math.log(self.k - 1) + self.lq, self.lq + self.eps0, self.t)

    def sweep_cost(self, span: float, n_eval: int, by_coins: bool) -> float:
        """Estimated work of ``span`` user steps and ``n_eval`` stops' hockey sums."""
        if by_coins:  # the coins' grid is trimmed to the law's mass: about `guess` cells
            # (calibrated: about 4 units per cell and user step, and per cell and hockey sum)
            return 4.0 * self.guess * (span + 2.0 * n_eval * self.n_eps)
        return span * self.cells + 6.0 * self.cells * n_eval * self.n_eps

    def build_cost(self, b0: int, by_coins: bool) -> float:
        """Estimated work of building the law at ``B = b0``."""
        if by_coins and self.cv_law is not None:
            return G.pivot_coins_work(
                self.cv_law, b0, self.cd, self.l1mg, math.log(self.q_u), math.log(self.r0), self.t
            )
        return self.base_work

    def cost(self, starts: list[int], span: float, n_eval: int) -> tuple[float, bool]:
        """``(work, by coins)`` of a plan: builds at ``starts``, ``span`` steps, ``n_eval`` stops."""
        add = sum(self.build_cost(b0, False) for b0 in starts) + self.sweep_cost(span, n_eval, False)
        if self.cv_law is None:
            return add, False
        by_coins = sum(self.build_cost(b0, True) for b0 in starts) + self.sweep_cost(span, n_eval, True)
        if self.build == "coins" or by_coins < add:
            return by_coins, True
        return add, False

    def grid_at(self, b0: int) -> G.Grid:
        """The law of the users at 0 and 1 plus ``b0`` uniform users (a build)."""
        k, t = self.k, self.t
        if self.coins and self.cv_law is not None:
            return G.pivot_coins_grid(
                self.cv_law,
                b0,
                self.cd,
                self.l1mg,
                self.lg,
                math.log(self.q_u),
                -math.log(k),
                math.log(self.r0),
                math.log1p(-self.r0),
                t,
            )
        R = self.R0 if b0 == int(self.stops[0]) else _reveal2d_pivot(k, self.eps0, self.c0, self.c1, b0, t)
        return _add(R, self.classes, self.grids, t)


def _u2_plan(
    k: int,
    eps0: float,
    c3: tuple[int, int, int],
    n_eps: int,
    t: float,
    budget: float,
    tries: list[int],
    build: str,
    sweep: str,
    builds: bool = True,
    builds_budget: float | None = None,
) -> _U2Plan:
    """Choose the cells of ``B`` and the plan of :func:`reveal2d_upper` (see there): the first
    cell count of ``tries`` whose cheapest plan fits ``budget``; ``work`` is ``inf`` or over the
    budget when none does."""
    pl = _U2Plan(k, eps0, c3, n_eps, t, build)
    pl.budget = budget
    # a sweep within the budget; else (where the builds may run on builds_budget) a sweep within
    # builds_budget, which is tighter than the builds; else the builds
    levels = [budget]
    if builds and builds_budget is not None and builds_budget > budget and sweep == "auto":
        levels.append(builds_budget)
    for level in [] if sweep == "builds" else levels:
        _sweep_plan(pl, level, tries, sweep)
        if pl.work <= level:
            pl.budget = level
            break
    if (pl.work > pl.budget and builds) or sweep == "builds":
        if builds_budget is not None:
            pl.budget = max(budget, builds_budget)
        _builds_plan(pl, pl.budget, tries[-1], sweep == "builds")
    return pl


def _sweep_plan(pl: _U2Plan, budget: float, tries: list[int], sweep: str) -> None:
    """The first cell count of ``tries`` whose cheapest sweep plan fits ``budget`` (sets
    ``pl.best``, ``pl.work``, ``pl.coins`` and the stops; ``pl.work`` is ``inf`` or over
    ``budget`` when none does)."""
    k, eps0, t, n_eps = pl.k, pl.eps0, pl.t, pl.n_eps
    for ms in tries:
        stops, lw, ltail = b_stops(pl.cr, k, eps0, t, ms)
        i_lo, i_hi = core_range(stops, pl.cr, pl.lg)
        guess = pl.guess_cells(int(stops[i_hi]))
        if (float(stops[i_hi] - stops[i_lo]) + 6.0 * (i_hi - i_lo + 1) * n_eps) * guess > budget:
            pl.work = math.inf
            continue  # clearly over: do not even build the grids
        pl.setup(int(stops[0]))  # the same for every try (the window's bottom does not depend on ms)
        # the plans' work: builds, then cell steps of the sweep and hockey sums at the stops
        pl.guess, pl.cells = guess, pl.grid_cells(int(stops[i_hi]))
        pl.stops, pl.lw, pl.ltail, pl.i_lo, pl.i_hi = stops, lw, ltail, i_lo, i_hi
        lo_s, hi_s = int(stops[i_lo]), int(stops[i_hi])
        plans = {
            "full": ([int(stops[0])], float(stops[-1] - stops[0]), stops.size),
            "one": ([int(stops[0])], float(hi_s - stops[0]), i_hi + 1),
            "two": ([int(stops[0]), lo_s], float(hi_s - lo_s), i_hi - i_lo + 2),
        }
        if sweep == "full":
            names = ["full"]
        elif sweep == "core" and i_lo > 0:
            names = ["two"]
        else:
            names = ["one", "two"] if (sweep == "auto" and i_lo > 0) else ["one"]
        # (two builds only when clearly cheaper: their lower cells share one bound)
        pl.best = min(
            names, key=lambda x: pl.cost(*plans[x])[0] * (1.25 if x == "two" and sweep == "auto" else 1.0)
        )
        pl.work, pl.coins = pl.cost(*plans[pl.best])
        if pl.work <= budget:
            break


def _builds_plan(pl: _U2Plan, budget: float, ms: int, forced: bool) -> None:
    """The plan without a sweep: the law built at the stops :data:`BUILD_SDS` standard deviations
    below ``B``'s mean, the first always and the others while the budget allows (all of them when
    ``forced``), and the cells below the first build bounded by the pair reveal at the window's
    bottom (:func:`pairs_upper` with ``b_fixed``; :data:`BOTTOM_PAIR_CELLS` cells). Sets
    ``pl.best = "builds"``, ``pl.builds``, ``pl.bottom_pairs`` and ``pl.work`` (over the budget
    when not even the first build fits)."""
    stops, lw, ltail = b_stops(pl.cr, pl.k, pl.eps0, pl.t, ms)
    i_lo, i_hi = core_range(stops, pl.cr, pl.lg)
    pl.stops, pl.lw, pl.ltail, pl.i_lo, pl.i_hi = stops, lw, ltail, i_lo, i_hi
    idxs = sorted({core_range(stops, pl.cr, pl.lg, (sd, CORE_SD[1]))[0] for sd in BUILD_SDS})
    pl.guess = pl.guess_cells(int(stops[-1]))
    if not forced and pl.cd > 0 and pl.build != "add" and not pl.setup_done:
        # clearly over (the first build by coins, and adding the class, at least one cell step
        # per user, both over the budget): stop before the setup builds any grid
        pl.cv_law = pl.pivot_law()
        est = pl.build_cost(int(stops[idxs[0]]), True)
        if est > budget and pl.guess * pl.cd > budget:
            pl.best, pl.builds, pl.work = "builds", [idxs[0]], est
            return
    pl.setup(int(stops[0]))
    pl.cells = pl.grid_cells(int(stops[-1]))

    def one(i: int, by_coins: bool) -> float:
        return pl.build_cost(int(stops[i]), by_coins) + pl.sweep_cost(0.0, 1, by_coins)

    pl.coins = pl.cv_law is not None and (
        pl.build == "coins" or (pl.build == "auto" and one(idxs[0], True) < one(idxs[0], False))
    )
    pl.bottom_pairs = idxs[0] > 0
    bottom = pairs_work(pl.k, pl.eps0, (pl.c0, pl.c1, 0), pl.n_eps, pl.t, BOTTOM_PAIR_CELLS)
    pl.best, pl.builds = "builds", [idxs[0]]
    pl.work = one(idxs[0], pl.coins) + (bottom if pl.bottom_pairs else 0.0)
    for i in idxs[1:]:
        w = one(i, pl.coins)
        if not forced and pl.work + w > budget:
            break
        pl.builds.append(i)
        pl.work += w


def _u2_run(pl: _U2Plan, eps: Sequence[float], trace: list | None):
    """Run the plan of :func:`_u2_plan`: ``((log upper fwd, log upper rev) per eps, work)``."""
    stops, lw, i_lo, i_hi, best = pl.stops, pl.lw, pl.i_lo, pl.i_hi, pl.best
    rows, v, t, work = pl.rows, pl.v, pl.t, pl.work
    pi0, pi1 = _coords(rows[0], v), _coords(rows[1], v)
    n_all = stops.size if best in ("full", "builds") else i_hi + 1
    fu = np.full((n_all, pl.n_eps), np.nan)  # D at stop i, per eps (rows never evaluated stay unused)
    ru = np.full((n_all, pl.n_eps), np.nan)

    ws = G.Workspace()  # the hockey sums' scratch memory, reused at every stop

    def run(g: G.Grid, first: int, last: int) -> None:
        """Sweep from ``g`` (the law at ``stops[first]``) and evaluate D at stops first..last."""
        rel = [int(s) - int(stops[first]) for s in stops[first : last + 1]]
        for i, (_, gi) in enumerate(G.sweep_users(g, rel, _coords(rows["u"], v), t, fresh=False)):
            both = G.hockey_upper_many(gi, [(pi0, pi1, e) for e in eps] + [(pi1, pi0, e) for e in eps], ws)
            fu[first + i], ru[first + i] = both[: len(eps)], both[len(eps) :]

    # each evaluated stop with the log mass of the cells it bounds (U2 (v))
    if best == "builds":  # no sweep: each build bounds the cells up to the next build
        for i in pl.builds:
            run(pl.grid_at(int(stops[i])), i, i)
        ev = list(pl.builds)
        if pl.bottom_pairs:  # the cells below the first build: D(b) <= D(stops[0]) <= UP there
            up0, _ = pairs_upper(
                pl.k, pl.eps0, (pl.c0, pl.c1, 0), eps, t, BOTTOM_PAIR_CELLS, b_fixed=int(stops[0])
            )
            fu[0], ru[0] = up0, up0
            ev = [0] + ev
        ev_lw = [_log_mass(lw[a:b]) for a, b in zip(ev, ev[1:] + [stops.size])]
    elif best == "full":
        run(pl.grid_at(int(stops[0])), 0, stops.size - 1)
        ev, ev_lw = list(range(stops.size)), list(lw)
    else:
        ev = list(range(i_hi + 1))
        ev_lw = list(lw[:i_hi]) + [_log_mass(lw[i_hi:])]
        if best == "one":
            run(pl.grid_at(int(stops[0])), 0, i_hi)
        else:
            run(pl.grid_at(int(stops[i_lo])), i_lo, i_hi)
            core_part = np.array(
                [_mix(lw[i_lo:i_hi], x[i_lo:i_hi], _NEG) if i_hi > i_lo else x[i_hi] for x in (fu, ru)]
            )
            core_max = np.max(core_part, axis=0)  # per eps; delta's bound is the larger direction
            lim = math.log(0.5 * CORE_SHARE)

            def steep(a: int, b: int) -> bool:
                """Do cells a..b-1, bounded by D at stop a, exceed CORE_SHARE / 2 of the core's part?"""
                return bool(np.any(_log_mass(lw[a:b]) + np.maximum(fu[a], ru[a]) - core_max > lim))

            # the cells below the core share D at the window's bottom; where that share is too
            # large (D steep in B: small n, eps near eps0) they are split once more at
            # CORE_SD[0] + 2 standard deviations below the mean (one more build), and a group
            # still too large is swept stop by stop from its own law, within the budget
            g_bot = pl.grid_at(int(stops[0]))
            run(g_bot, 0, 0)
            groups = [(0, i_lo, g_bot)]
            if steep(0, i_lo):
                i_mid = core_range(stops, pl.cr, pl.lg, (CORE_SD[0] + 2.0, CORE_SD[1]))[0]
                w_mid = pl.build_cost(int(stops[i_mid]), pl.coins) + pl.sweep_cost(0.0, 1, pl.coins)
                if 0 < i_mid < i_lo and work + w_mid <= pl.budget:
                    work += w_mid
                    g_mid = pl.grid_at(int(stops[i_mid]))
                    run(g_mid, i_mid, i_mid)
                    groups = [(0, i_mid, g_bot), (i_mid, i_lo, g_mid)]
            lower: list[tuple[int, float]] = []
            for a, b, ga in groups:
                extra = pl.sweep_cost(float(stops[b - 1] - stops[a]), b - a - 1, pl.coins)
                if b - a > 1 and steep(a, b) and work + extra <= pl.budget:
                    work += extra
                    run(ga, a, b - 1)
                    lower += [(i, float(lw[i])) for i in range(a, b)]
                else:
                    lower.append((a, _log_mass(lw[a:b])))
            if trace is not None:
                trace.append([(i, stops[i]) for i, _ in lower])
            ev = [i for i, _ in lower] + list(range(i_lo, i_hi + 1))
            ev_lw = [x for _, x in lower] + list(lw[i_lo:i_hi]) + [_log_mass(lw[i_hi:])]
    lws = np.array(ev_lw)
    if np.isnan(fu[ev]).any() or np.isnan(ru[ev]).any():  # pragma: no cover - every plan fills its stops
        raise RuntimeError("internal: a U2 stop used as a bound was never evaluated")
    return (_mix(lws, fu[ev], pl.ltail), _mix(lws, ru[ev], pl.ltail)), work


def reveal2d_upper(
    k: int,
    eps0: float,
    c3: tuple[int, int, int],
    eps: Sequence[float],
    t: float,
    budget: float,
    max_stops: int | Sequence[int],
    *,
    build: str = "auto",
    sweep: str = "auto",
    trace: list | None = None,
    info: dict | None = None,
    builds: bool = True,
    builds_budget: float | None = None,
):
    """U2: ``((log upper fwd, log upper rev) per eps, work)``, or ``(None, work)`` over ``budget``.

    ``B``'s cells from :func:`b_stops` (``max_stops``: one number, or several tried in order, the
    first whose estimated work fits is run; the grids' sizes are estimated once). The law of the
    users at 0 and 1 plus ``b`` uniform users is *built* for one or two values of ``b`` (merged
    into the pivot's ``N_o``: a uniform report different from the pivot value is the other of 0
    and 1 w.p. ``1 / (k - 1)``, like the pivot class's), then uniform users are added one at a
    time (:func:`_krr_grid.sweep_users`) up to each stop, where :func:`_krr_grid.hockey_upper`
    gives ``D``. By U2 (v) (``D`` non-increasing in ``B``) a run of consecutive cells may share
    the bound at its lowest value:

    * the cells above the core (:data:`CORE_SD`) share the value at the core's top (their mass
      is at most 1.4e-3 and ``D`` decreases little over them);
    * with ``sweep="core"`` the cells below the core share the value at the window's bottom,
      built directly so that the sweep starts at the core (their mass, at most 3.2e-5, times
      ``D``'s growth down to the bottom). Where that share exceeds half of :data:`CORE_SHARE`
      of the core's part (for any eps, against the larger direction's: delta is the larger),
      the law is built once more at ``CORE_SD[0] + 2`` standard deviations below the mean, the
      cells from there to the core sharing its value, and a group still over that share is
      swept stop by stop from its own law, when the budget allows (measured: the cells just
      below the core are so swept at n = 3e4 with counts proportional to ``1 / (j + 1)``, k =
      10, and at n = 300 - 2500 for k = 4 and 10); ``trace`` (a list, for tests) receives the
      ``(index, value)`` of the stops whose bounds the cells below the core use;
    * ``sweep="full"`` evaluates every stop from the bottom up; ``"auto"`` sweeps from the bottom
      to the core's top, or builds twice when that is estimated at most 0.8 of the cost;
    * where no sweep fits ``budget`` (with every cell count of ``max_stops``; ``sweep="builds"``
      forces it, with every build), the plan ``"builds"`` runs no sweep: the law is built at
      :data:`BUILD_SDS` standard deviations below ``B``'s mean (the first always, the others as
      the budget allows), every cell is bounded by ``D`` at the nearest build below it (U2
      (v)), and the cells below the first build (mass at most 3.2e-5) by the pair reveal given
      ``B`` at the window's bottom ``b_0`` (:func:`pairs_upper` with ``c_r = 0`` and
      ``b_fixed = b_0``: ``D(b) <= D(b_0) <= UP(b_0)``; about 20 times ``D`` there, so about
      6e-4 of the value). Looser than a sweep by about ``D``'s decrease from each build to the
      cells above it (measured, k = 10, counts proportional to ``1 / (j + 1)``, n = 1e5,
      eps = 0.03: ``log D`` falls by 0.0176 per standard deviation of ``B``), but one build
      costs about as much as a sweep over ``z sd(F)`` users (``F`` the truthful users of the
      smaller class): e.g. n = 1e5 within a budget of 8e9 (width 4.0e-2, where the pair
      reveal UP leaves 2.8; ``benchmarks/README.md``). ``builds=False`` (keyword only) leaves
      it out (the answer is then ``None`` where no sweep fits); ``builds_budget`` (keyword
      only), when larger than ``budget``, is first tried by the sweeps (``sweep="auto"``: a
      sweep over ``builds_budget`` is tighter than the builds) and then is this plan's budget;
      ``info`` (a dict) receives the plan's name (``"plan"``), whether ``builds_budget`` paid
      for it (``"wide"``) and, for this plan, the values of ``B`` built at (``"builds"``) and
      whether the pair reveal bounds the cells below them (``"bottom_pairs"``).

    Measured (k = 10, counts proportional to ``1 / (j + 1)``, n = 1e4 - 3e4): 3x faster, the
    value at most 1e-5 higher in log. The smaller class (at ``d``, the other of 0 and 1) joins the
    pivot's law either by direct 2-D convolution or one user at a time (:func:`_add`), or by its
    coins (:func:`_krr_grid.pivot_coins_grid`: each of its users is truthful, reporting ``d``,
    w.p. ``1 - gamma``, else one more uniform user of the pool), whichever is estimated cheaper;
    ``build`` (keyword only; ``"auto"``, ``"add"`` or ``"coins"``) forces one, for tests.
    """
    if build not in ("auto", "add", "coins"):
        raise ValueError(f"build must be 'auto', 'add' or 'coins', got {build!r}")
    if sweep not in ("auto", "full", "core", "builds"):
        raise ValueError(f"sweep must be 'auto', 'full', 'core' or 'builds', got {sweep!r}")
    tries = [int(max_stops)] if isinstance(max_stops, (int, np.integer)) else [int(x) for x in max_stops]
    plan = _u2_plan(k, eps0, c3, len(eps), t, budget, tries, build, sweep, builds, builds_budget)
    if info is not None:
        info["plan"] = plan.best
        info["wide"] = plan.budget > budget and plan.work <= plan.budget  # paid by builds_budget
        if plan.best == "builds":
            info["builds"] = [int(plan.stops[i]) for i in plan.builds]
            info["bottom_pairs"] = plan.bottom_pairs
    if plan.work > plan.budget and sweep != "builds":
        return None, plan.work
    return _u2_run(plan, eps, trace)


# ---------------------------------------------------------------------------------------------
# U1: keep one class, reveal every other coin (one dimension)
# ---------------------------------------------------------------------------------------------


def _law_cells(law: G.Law1D, n_top: int, log_ufac: float, log_skip: float):
    """The cells ``N`` of a view built on ``N_o ~ law`` (``w = P(N_o = N)``, ``U = e^log_ufac
    P(N_o = N - 1)``), shared by :func:`pivot0_law_upper` and :func:`rest_law_upper`.

    Returns ``(N, lw, lU, log_drop, rho)``: the cells ``N`` whose ``w`` and ``U`` are both in the
    window (``w`` at ``N = n_top + 1`` is exactly 0), their log values in the law's scale, and the
    log of a bound on everything else, to be added once to an upper end: the law's dropped mass,
    the window's edge cells and the cells whose ``U`` flushed to 0 (each bounded by its mass
    ``P(N_o = N) + P(N_o = N - 1)``: every unit of ``N_o``'s mass feeds two cells with weights
    summing to at most 1 and raises a hockey term by at most its own size), rounded up, and the
    cells whose mass caps ``w + U`` (``U`` counts ``P(N_o = N - 1)`` at least once:
    ``e^log_ufac >= 1``) sum to at most ``e^log_skip`` (skipped: not evaluated). ``rho``:
    relative error of ``w`` and ``U`` (``law.rel + 16 * 2u``).
    """
    arr, lo = law.arr, law.lo
    hi = lo + arr.size - 1
    rho = law.rel + 16.0 * _U
    with np.errstate(divide="ignore"):
        la = np.log(arr)
    top = hi + 1 if hi == n_top else hi
    N = np.arange(lo + 1, top + 1, dtype=float)
    lw = np.concatenate([la[1:], [_NEG] * (top - hi)])
    lU = log_ufac + la[: N.size]
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
    return N, lw, lU, drop, rho


def _law_fin(terms: np.ndarray, mx: np.ndarray, extra: list[float], scale: float, drop: float) -> float:
    """``log(sum e^(terms + mx) + sum e^extra) + scale``, rounded up, plus ``e^drop``, capped at 0."""
    allt = np.concatenate([terms + mx, np.array(extra)])
    s = float(logsumexp(allt)) + scale + 4.0 * _U * (allt.size + 4) if allt.size else _NEG
    return min(float(np.logaddexp(s, drop)), 0.0)


def pivot0_law_upper(
    k: int, eps0: float, law: G.Law1D, n_top: int, eps: float, log_skip: float = _NEG
) -> tuple[float, float]:
    """``(log upper H(P || Q), log upper H(Q || P))`` for the pivot-0 structure with ``N_o ~ law``.

    Every other user's report different from 0 is uniform on the other ``k - 1`` values and
    ``N_o`` (their number, at most ``n_top``) has the windowed law ``law``
    (:class:`_krr_grid.Law1D`: values within relative ``rel`` up to the dropped mass); the
    target holds 0 / 1. The cells ``N`` whose ``w = P(N_o = N)`` and ``U = (k - 1) P(N_o = N -
    1)`` are both in the window get :func:`_krr_grid.pivot0_terms` (upper ends: ``w, U`` pushed
    to the unfavourable ends of ``[1 - rho, 1 + rho]``, ``rho = rel + 16 * 2u``); the others
    (:func:`_law_cells`: the window's edges, entries flushed to 0, the skipped cells whose mass
    bounds sum to at most ``e^log_skip``) are bounded by their mass and added once with the
    dropped mass. ``N = 0``: only ``(p - E pbar) w(0)`` in the forward direction.
    """
    if eps >= eps0:
        return _NEG, _NEG
    lq = -math.log1p((k - 1) * math.exp(-eps0)) - eps0
    N, lw, lU, drop, rho = _law_cells(law, n_top, math.log(k - 1), log_skip)
    mx = np.maximum(lw, lU)
    with np.errstate(under="ignore"):
        w = np.exp(lw - mx)
        U = np.exp(lU - mx)
    fu, _, ru, _ = G.pivot0_terms(
        k, eps0, eps, N, (w * (1 - rho), w * (1 + rho)), (U * (1 - rho), U * (1 + rho))
    )
    extra = []
    if law.lo == 0 and law.arr[0] > 0:
        la0 = math.log(float(law.arr[0]))
        extra.append(la0 + lq + eps + math.log(math.expm1(eps0 - eps)) + math.log1p(rho))
    return _law_fin(fu, mx, extra, law.scale, drop), _law_fin(ru, mx, [], law.scale, drop)


def rest_law_upper(
    k: int,
    eps0: float,
    law: G.Law1D,
    n_top: int,
    eps: float,
    log_skip: float = _NEG,
    tails: G.HalfTails | None = None,
) -> float:
    """Log upper bound on ``H(P || Q) = H(Q || P)`` for the symmetric rest-pivot structure.

    The structure of :func:`_krr_grid.rest_terms`: the others' number ``N_o`` of reports in
    ``{0, 1}`` (at most ``n_top``) has the windowed law ``law`` and given it their ``h0`` is
    ``Bin(N_o, 1/2)``; the values ``>= 2`` are merged (their split is ancillary). The cells
    ``N`` of :func:`_law_cells` (``w = P(N_o = N)``, ``V = P(N_o = N - 1)``) get the upper terms
    of :func:`_krr_grid.rest_terms` with ``w``, ``V`` in ``[1 - rho, 1 + rho]`` times their
    computed values; the rest of the lattice is bounded by its mass (:func:`_law_cells`). The
    cell ``N = 0`` (target and others all in ``R``) has ``P = Q``: term 0.
    """
    if eps >= eps0:
        return _NEG
    N, lw, lV, drop, rho = _law_cells(law, n_top, 0.0, log_skip)
    mx = np.maximum(lw, lV)
    with np.errstate(under="ignore"):
        w = np.exp(lw - mx)
        V = np.exp(lV - mx)
    up, _ = G.rest_terms(
        k, eps0, eps, N, (w * (1 - rho), w * (1 + rho)), (V * (1 - rho), V * (1 + rho)), tails
    )
    return _law_fin(up, mx, [], law.scale, drop)


def pair_logs(k: int, eps0: float) -> tuple[float, float, float, float, float, float]:
    """``(log a, log(1 - a), log b, log(1 - b), log d^2, log(1 - d^2))`` of the pair reveal (UP).

    ``d = p - pbar = 1 - gamma``; a symmetric pair's count of reports in ``{0, 1}`` is
    ``Bern(a) + Bern(b)``, ``a = 2 p / (1 + d)``, ``b = 2 pbar / (1 - d)``, ``1 - a = (k - 2)
    pbar / (1 + d)``, ``1 - b = (k - 2) pbar / (1 - d)`` (module docstring, UP), and a pair is
    fixed w.p. ``d^2``; ``1 - d^2 = gamma (2 - gamma)``.
    """
    lp = -math.log1p((k - 1) * math.exp(-eps0))
    lq = lp - eps0
    d = math.exp(lq) * math.expm1(eps0)
    l1p, l1m = math.log1p(d), math.log1p(-d)
    lr = math.log(k - 2) + lq
    lg, _ = _gamma(k, eps0)
    return (
        math.log(2.0) + lp - l1p,
        lr - l1p,
        math.log(2.0) + lq - l1m,
        lr - l1m,
        2.0 * math.log(d),
        lg + math.log1p(d),
    )


def _binom_law(c: int, lpi: float, l1mpi: float, t: float) -> G.Law1D:
    """:func:`_krr_grid.law_from_binom` with the parameters' own rounding counted.

    ``lpi``, ``l1mpi`` are sums of a few correctly rounded logs: each within ``8u (1 + |x|)`` of
    the exact value, so every log-pmf ``x lpi + (c - x) l1mpi`` is within ``c * 8u * (2 + |lpi| +
    |l1mpi|)`` of the exact one; that relative error is added to the law's ``rel``.
    """
    law = G.law_from_binom(c, lpi, l1mpi, t)
    law.rel += math.expm1(c * 8.0 * _U * (2.0 + abs(lpi) + abs(l1mpi)))
    return law


def _pair_setup(k: int, eps0: float, c3: tuple[int, int, int], t: float, n_eval: float):
    """Cells of ``F`` and ``B'`` for :func:`pairs_upper`: about ``n_eval`` cells in all, split in
    proportion to how far each count moves the mean of ``N_o`` (``(a + b) sd(F)`` and ``(2 / k)
    sd(B')``: the corner bounds lose in proportion to the cells' widths in that mean)."""
    c0, c1, cr = c3
    m, e = min(c0, c1), abs(c0 - c1)
    la, _, lb, _, lf, l1f = pair_logs(k, eps0)
    lg, l1mg = _gamma(k, eps0)
    sf = (math.exp(la) + math.exp(lb)) * math.sqrt(m * math.exp(lf + l1f))
    sb = 2.0 / k * math.sqrt((cr + e) * math.exp(lg + l1mg))
    n_eval = max(n_eval, 4.0)
    if sf <= 0.0 or sb <= 0.0:
        nf = nb = int(n_eval)
    else:
        nf = int(min(max(math.sqrt(n_eval * sf / sb), 2.0), n_eval / 2.0))
        nb = int(max(n_eval / nf, 2.0))
    return count_cells(m, lf, l1f, t, nf), count_cells(cr + e, lg, l1mg, t, nb)


#: Most cells of ``(F, B')`` :func:`spread_log_bounds` gives the pair reveal (a few seconds at
#: ``n = 1e6``; its corner bounds lose about ``1e-2`` in log there, ``benchmarks/README.md``).
MAX_PAIR_CELLS = 2048.0


def pairs_work(k: int, eps0: float, c3: tuple[int, int, int], n_eps: int, t: float, n_eval: float) -> float:
    """Estimated work of :func:`pairs_upper` with about ``n_eval`` cells (units of about a nanosecond)."""
    c0, c1, cr = c3
    m, e = min(c0, c1), abs(c0 - c1)
    la, _, lb, _, _, _ = pair_logs(k, eps0)
    a, b = math.exp(la), math.exp(lb)
    var = m * (a * (1 - a) + b * (1 - b)) + (cr + e) * (2.0 / k) * (1 - 2.0 / k)
    L = 2.0 * G.window_z(t) * math.sqrt(var) + 10.0
    return max(n_eval, 1.0) * (300.0 * n_eps + 150.0) * L


def _half_tails(k: int, eps0: float, eps: float, laws: Sequence[G.Law1D]) -> G.HalfTails:
    """A :class:`_krr_grid.HalfTails` table covering the thresholds of :func:`_krr_grid.rest_coefs`
    for every law between the two given ones (only a cache: a threshold it misses is computed
    from the tails directly). Its rows span the laws' windows; per row the ratio ``w / V`` of
    the two laws (the smallest and the largest in likelihood-ratio order, module docstring) is
    widened by 2 % and mapped to thresholds."""
    E = math.exp(eps)
    den = (1.0 + E) * math.expm1(eps0)
    c1, c2 = math.expm1(eps + eps0) / den, math.expm1(eps) * (k - 2) / (2.0 * den)
    lo = max(1, min(law.lo for law in laws) + 1)
    hi = max(law.lo + law.arr.size for law in laws)
    N = np.arange(lo, hi + 1, dtype=float)
    rmin = np.full(N.shape, np.inf)
    rmax = np.full(N.shape, -np.inf)
    count = np.zeros(N.shape, dtype=np.int64)
    for law in laws:
        a = law.arr
        with np.errstate(divide="ignore", invalid="ignore"):
            r = a[1:] / a[:-1]
        idx = np.arange(law.lo + 1, law.lo + a.size) - lo
        ok = np.isfinite(r) & (idx >= 0) & (idx < N.size) & (a[:-1] > 0)
        rmin[idx[ok]] = np.minimum(rmin[idx[ok]], r[ok])
        rmax[idx[ok]] = np.maximum(rmax[idx[ok]], r[ok])
        count[idx[ok]] += 1
    have = np.isfinite(rmin)
    both = count == len(laws)  # rows outside a law's window: the laws between may be far off
    rmin = np.where(have, rmin * np.where(both, 0.98, 0.7), 1.0)
    rmax = np.where(have, rmax * np.where(both, 1.02, 1.4), 1.0)
    j_lo = np.maximum(np.floor(N * (c1 + c2 * rmin)) - 1.0, 0.0)
    need = np.ceil(N * (c1 + c2 * rmax)) - j_lo + 1.0
    width = int(min(max(float(np.max(np.where(have, need, 1.0))), 1.0), 256.0))
    return G.HalfTails(lo, j_lo, width)


def pairs_upper(
    k: int,
    eps0: float,
    c3: tuple[int, int, int],
    eps: Sequence[float],
    t: float,
    n_eval: float,
    *,
    b_fixed: int = 0,
) -> tuple[np.ndarray, int]:
    """UP: ``(log upper on delta per eps, cells evaluated)`` by the pair reveal (module docstring).

    ``m = min(c_0, c_1)`` pairs, ``F ~ Bin(m, d^2)`` fixed; ``B' ~ b_fixed + Bin(c_r + |c_0 -
    c_1|, gamma)`` uniform users. ``b_fixed`` (keyword only, default 0) adds that many users
    whose reports are uniform on all ``k`` values (users at values ``>= 2`` whose revealed coin
    said "uniform"): with ``c_r = 0`` this bounds U2's ``D(b_fixed)``, the same argument (i)-(v)
    applied to the view of the users at 0 and 1 and ``b_fixed`` uniform users. Per cell of ``F`` (bounded by its top value: ``D`` is non-decreasing
    in ``F``) and of ``B'`` (by its bottom value: non-increasing in ``B'``), about ``n_eval``
    cells in all (:func:`_pair_setup`): ``N_o ~ Bin(m - F, a) + Bin(m - F, b) + Bin(B', 2/k)``
    (direct convolutions of windowed laws; along ``B'`` the law of the previous stop is
    convolved with ``Bin(B'_j - B'_{j-1}, 2/k)``, the sum of independent binomials with the same
    ``p`` being binomial, and trimmed) and :func:`rest_law_upper` (binomial excesses from one
    :func:`_half_tails` table per ``eps``); the cells' masses multiply (``F`` and ``B'`` are
    independent) and the mass outside either window is bounded by 1. Both directions are equal.
    """
    m = min(c3[0], c3[1])
    la, l1a, lb, l1b, _, _ = pair_logs(k, eps0)
    (fs, ftop, fw, ftail), (bs, _, bw, btail) = _pair_setup(k, eps0, c3, t, n_eval)
    bs = bs + int(b_fixed)
    # the cells' masses with the parameters' own rounding (as _binom_law)
    _, _, _, _, lf, l1f = pair_logs(k, eps0)
    lg, l1mg = _gamma(k, eps0)
    fw = fw + m * 8.0 * _U * (2.0 + abs(lf) + abs(l1f))
    bw = bw + (sum(c3) - 2 * m) * 8.0 * _U * (2.0 + abs(lg) + abs(l1mg))
    lu, l1u = math.log(2.0 / k), math.log((k - 2) / k)
    t_law = t - math.log(2.0 * bs.size + 2.0)  # the laws' dropped masses add along a sweep

    def pair_law(f: int) -> G.Law1D:
        M = m - f
        return G.conv1d(_binom_law(M, la, l1a, t_law), _binom_law(M, lb, l1b, t_law))

    def add_uniform(law: G.Law1D, b: int) -> G.Law1D:
        return G.trim_law(G.conv1d(law, _binom_law(b, lu, l1u, t_law)), t_law) if b > 0 else law

    # the extreme laws in likelihood-ratio order (fewest / most sym pairs and uniform users)
    corners = [
        add_uniform(pair_law(int(ftop[-1])), int(bs[0])),
        add_uniform(pair_law(int(ftop[0])), int(bs[-1])),
    ]
    tables = [_half_tails(k, eps0, ep, corners) for ep in eps]
    terms = np.empty((fs.size * bs.size, len(eps)))
    lw = np.empty(fs.size * bs.size)
    row = 0
    for i, f in enumerate(ftop):
        M = m - int(f)
        law = pair_law(int(f))
        prev = 0
        for j, b in enumerate(bs):
            law = add_uniform(law, int(b) - prev)
            prev = int(b)
            for q, ep in enumerate(eps):
                terms[row, q] = rest_law_upper(k, eps0, law, 2 * M + int(b), ep, t, tables[q])
            lw[row] = fw[i] + bw[j]
            row += 1
    return _mix(lw, terms, float(np.logaddexp(ftail, btail))), row


def _reveal1d_work(k: int, eps0: float, cv: int, m: int, n_stops: int, n_eps: int, t: float) -> float:
    lq = -math.log1p((k - 1) * math.exp(-eps0)) - eps0
    q = (k - 1) * math.exp(lq)
    z = G.window_z(t)
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


def _u1_work(k: int, eps0: float, c3: tuple[int, int, int], n_eps: int, log_tol: float) -> float:
    n1 = sum(c3)
    w = _reveal1d_work(k, eps0, c3[0], n1 - c3[0], 40, n_eps, log_tol)
    return w + _reveal1d_work(k, eps0, c3[1], n1 - c3[1], 40, n_eps, log_tol)


def normal_limit_ratios(
    k: int, eps0: float, c3: tuple[int, int, int], *, u2: bool = False
) -> tuple[float, ...]:
    """``(U1, UP)``, or ``(U1, UP, U2)`` with ``u2=True``: each route's normal-limit distance
    over the histogram's (``>= 1``; ``inf`` where a covariance is singular). Only used to choose
    routes, never in a bound.

    ``D^2 = Delta^T Sigma^-1 Delta`` with ``Delta = (d, -d)`` (the target's shift of the mean of
    ``(h0, h1)``) and ``Sigma`` the covariance of the others' ``(h0, h1)`` in the view: a user's
    multinomial covariance ``diag(pi) - pi pi^T``; a revealed coin keeps ``gamma`` times a
    uniform user's (law of total covariance, the revealed mean being known); a pair keeps
    ``(1 - d^2)`` times the symmetric pair's (``Var h0 = (E S + Var S) / 4``, ``Cov(h0, h1) =
    (Var S - E S) / 4``, ``S ~ Bern(a) + Bern(b)``). U1: the better of keeping 0 or 1.
    """
    c0, c1, cr = c3
    lp = -math.log1p((k - 1) * math.exp(-eps0))
    p, pb = math.exp(lp), math.exp(lp - eps0)
    d, g = p - pb, k * pb

    def cov(a: float, b: float) -> np.ndarray:
        return np.array([[a * (1 - a), -a * b], [-a * b, b * (1 - b)]])

    la, _, lb, _, _, _ = pair_logs(k, eps0)
    a, b = math.exp(la), math.exp(lb)
    es, vs = a + b, a * (1 - a) + b * (1 - b)
    sym = np.array([[es + vs, vs - es], [vs - es, es + vs]]) / 4.0
    uni = g * cov(1.0 / k, 1.0 / k)
    m, e = min(c0, c1), abs(c0 - c1)
    full = c0 * cov(p, pb) + c1 * cov(pb, p) + cr * cov(pb, pb)
    views = {
        "keep0": c0 * cov(p, pb) + (c1 + cr) * uni,
        "keep1": c1 * cov(pb, p) + (c0 + cr) * uni,
        "UP": m * (1.0 - d * d) * sym + (e + cr) * uni,
        "U2": c0 * cov(p, pb) + c1 * cov(pb, p) + cr * uni,
    }
    delta = np.array([d, -d])
    try:
        base = float(delta @ np.linalg.solve(full, delta))
        r = {key: math.sqrt(float(delta @ np.linalg.solve(v, delta)) / base) for key, v in views.items()}
    except (np.linalg.LinAlgError, ValueError, ZeroDivisionError):
        return (math.inf,) * (3 if u2 else 2)
    out = (min(r["keep0"], r["keep1"]), r["UP"])
    return out + (r["U2"],) if u2 else out


#: The better of UP's and U1's normal-limit distance over the histogram's
#: (:func:`normal_limit_ratios`) up to which :func:`spread_log_bounds` neither runs U2 without a
#: sweep nor takes its ``wide_budget``: the even spreads' UP (about ``1 + 6e-5``) and, with nobody
#: at 1, U1 (about ``1 + 4e-3``) are tighter than the builds' (a few 1e-2 in log at n = 1e5);
#: with the counts at 0 and 1 far apart the better is UP's ``1.08`` (k = 10, counts
#: proportional to ``1 / (j + 1)``; U1 ``1.17``) and the builds win (width 4.0e-2 against 2.8
#: at n = 1e5).
UP_NEAR_EXACT = 1.01

#: Expected excess, in log, of the better one-dimensional upper route over U2 above which
#: :func:`spread_log_bounds` also lets U2 run without a sweep (and take its ``wide_budget``)
#: where the ratios are within :data:`UP_NEAR_EXACT`: ``2 (min(r_U1, r_UP) - r_U2) |L|`` with
#: ``L`` the smallest lower end (:func:`normal_limit_ratios`; in the normal limit ``log delta``
#: scales like ``-D^2 / 2``, so a distance ``r`` times larger changes it by about
#: ``2 (r - 1) |log delta|``). E.g. k = 3, eps0 = 0.1, counts 60 / 30 / 10 % at n = 1e5: the
#: ratios are 1.0073 (UP) and 1.0001 (U2) at ``log delta ~ -24.9``, an expected excess of 0.36;
#: UP's width was 0.20 and the builds' 4.6e-3. The builds' own widths are about 1e-2 - 2e-1.
BUILDS_EXCESS = 0.05

#: Fewest cells of ``(F, B')`` the pair reveal runs with.
MIN_PAIR_CELLS = 4.0


def spread_work(k: int, eps0: float, counts: tuple[int, ...], n_eps: int, log_tol: float) -> float:
    """Work estimate of the least that :func:`spread_log_bounds` runs: L1 with ``(1, 1)`` and one
    upper route, U1 both ways or UP with :data:`MIN_PAIR_CELLS` cells, whichever is cheaper."""
    c3 = (counts[0], counts[1], sum(counts[2:]))
    w = _linear_work(k, eps0, c3, 1, 1, log_tol)
    up = pairs_work(k, eps0, c3, n_eps, log_tol, MIN_PAIR_CELLS)
    return w + min(_u1_work(k, eps0, c3, n_eps, log_tol), up)


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
    k: int,
    eps0: float,
    counts: tuple[int, ...],
    eps: Sequence[float],
    log_tol: float,
    budget: float,
    *,
    wide_budget: float | None = None,
) -> tuple[np.ndarray, np.ndarray, dict]:
    """``(lower, upper, info)`` on ``log delta`` per eps for any dataset (module docstring).

    Runs L1 (always), U1 when it fits with room for the pair reveal UP's fewest cells (or costs
    less than them) unless UP is expected tighter (:func:`normal_limit_ratios`), U2 when its estimated work fits what is left of ``budget``, else UP with up
    to half of what is left (at most :data:`MAX_PAIR_CELLS` cells; always when neither U1 nor
    U2 ran: :func:`spread_work`, checked by the caller, counts the cheaper of U1 and UP), then
    more L1 directions and L2 as they fit; each end is the best of the routes run (per
    direction for the upper ends; a direction no upper route bounds stays at ``log 1 = 0``). The truncation level starts at
    ``log_tol`` and is lowered (re-run) where a value comes within ``e^10`` of it. ``info``
    names the routes run and which gave each end. ``k >= 3``; every ``eps < eps0``.
    ``wide_budget`` (keyword only): where U1 and UP are both expected loose (ratios above
    :data:`UP_NEAR_EXACT`, or an expected excess over U2 above :data:`BUILDS_EXCESS`) and no
    sweep of U2 fits, U2 may use up to this much on its own (a sweep where one fits it, else
    its builds), on top of ``budget`` for the other routes, and UP is then not run after it
    (``info["wide_budget"]`` is then set; ``info["work"]`` counts everything); U1 then waits
    for U2 and runs after it only where U2 did not run on the wide budget.
    """
    c0, c1 = counts[0], counts[1]
    cr = sum(counts[2:])
    c3 = (c0, c1, cr)
    n1 = c0 + c1 + cr
    eps = [float(e) for e in eps]
    info: dict = {"routes": []}
    # lower ends: L1 (1, 1) first; its value sets the truncation level of everything else
    low, t = _deepen(lambda tt: linear_lower(k, eps0, c3, 1, 1, eps, tt), log_tol)
    info["routes"].append("L1(T = h0 - h1)")
    low_src = ["L1(1,1)"] * len(eps)
    if np.all(np.isfinite(low)):
        t = min(t, float(np.min(low)) - 30.0)

    # upper ends, per direction (keep 1: relabel 0 <-> 1, the directions swap): U1 when it fits
    # with room for the pair reveal's fewest cells (or when it is the cheaper of the two), then
    # UP with up to half of what is left (at most MAX_PAIR_CELLS cells)
    used = _linear_work(k, eps0, c3, 1, 1, log_tol)
    u1w = _u1_work(k, eps0, c3, len(eps), log_tol)
    per = pairs_work(k, eps0, c3, len(eps), log_tol, 1.0)
    upf = upr = np.zeros(len(eps))
    up_src = ["none"] * len(eps)
    t_u = t
    # U1 is skipped where UP is expected tighter (normal limit) and UP's fewest cells fit
    r_u1, r_up, r_u2 = normal_limit_ratios(k, eps0, c3, u2=True)
    # where both one-dimensional routes are expected loose (the counts at 0 and 1 far apart, or
    # an excess over U2 that the depth of the lower end makes large), U2 may run without its
    # sweep, and with the caller's wide budget (if any) for a sweep or its builds
    depth = -float(np.min(low)) if np.all(np.isfinite(low)) else 0.0
    excess = 2.0 * (min(r_u1, r_up) - r_u2) * depth
    loose_1d = min(r_u1, r_up) > UP_NEAR_EXACT or excess > BUILDS_EXCESS
    up_first = min(c0, c1) > 0 and r_up <= r_u1 and used + MIN_PAIR_CELLS * per <= budget
    fits = used + u1w + MIN_PAIR_CELLS * per <= budget or u1w <= MIN_PAIR_CELLS * per
    have_u1 = fits and not up_first

    def run_u1() -> None:
        """U1 both ways, merged into the upper ends (per eps, the tighter of what is there)."""
        nonlocal used, t_u, upf, upr

        def u1(tt: float) -> np.ndarray:
            f0, r0 = reveal1d_upper(k, eps0, c0, n1 - c0, eps, tt, 40)
            f1, r1 = reveal1d_upper(k, eps0, c1, n1 - c1, eps, tt, 40)
            return np.stack([np.minimum(f0, r1), np.minimum(r0, f1)])

        (f_1, r_1), t_u = _deepen(u1, t)
        used += u1w
        info["routes"] += ["U1(keep 0)", "U1(keep 1)"]
        for i in range(len(eps)):
            if up_src[i] == "none" or max(f_1[i], r_1[i]) < max(upf[i], upr[i]):
                up_src[i] = "U1"
        upf, upr = np.minimum(upf, f_1), np.minimum(upr, r_1)

    # where the caller's wide budget may pay for U2 (expected tighter than both 1-D routes), U1
    # waits for U2: it runs after it only where U2 did not run on the wide budget (its work,
    # about 7e9 of the default 8e9 at n = 1e6, would otherwise leave no room for the lower ends)
    defer_u1 = have_u1 and wide_budget is not None and loose_1d
    if have_u1 and not defer_u1:
        run_u1()
    # the other lower-end directions are cheap next to U2: their work is set aside first (up to a
    # tenth of what is left), so that U2 does not crowd them out
    rem = budget - used
    more_l1 = [(a, b, _linear_work(k, eps0, c3, a, b, t)) for a, b in directions(k, eps0, c3)[1:]]
    aside = 0.0
    for _, _, w in more_l1:
        if aside + w <= 0.1 * rem:
            aside += w
    # U2 with the finest cells of B that fit, keeping room for L2 when L2 fits half of what is left
    rem -= aside
    l2 = merged_work(k, eps0, c3, len(eps), t)[1]
    share = rem - l2 if l2 <= rem / 2 else rem
    # U2's truncation: e^-15 below the smallest lower end is enough (its dropped mass, a few
    # e^t2, is added to the upper end: about 1e-6 of the value, in log, against widths of 1e-3 or
    # more); a shallower level means narrower windows (z ~ sqrt(2 |t2|)), so U2 fits the budget
    # at larger n (measured: 1.8x faster than at e^-30, the value 3e-7 higher in log)
    t2 = t_u
    if np.all(np.isfinite(low)):
        t2 = max(t_u, float(np.min(low)) - U2_DEPTH)
    # U2 without a sweep (builds only) where no sweep fits, unless UP or U1 is expected within
    # UP_NEAR_EXACT of the histogram's normal-limit distance and within BUILDS_EXCESS of U2 in
    # log (even spreads, or nobody at one of 0 and 1: that route's cells, which the builds would
    # take budget from, are the tighter use)
    u2_info: dict = {}
    wide, wide_extra = None, 0.0
    if wide_budget is not None and loose_1d and wide_budget > share:
        wide = float(wide_budget)
    pair2, w = reveal2d_upper(
        k, eps0, c3, eps, t2, share, (4096, 1024, 256, 64), info=u2_info, builds=loose_1d, builds_budget=wide
    )
    if wide is not None and pair2 is not None and u2_info.get("wide"):
        info["wide_budget"] = wide
        wide_extra, w = w, 0.0  # the builds are the wide budget's: the other routes keep theirs
    coarse = u2_info.get("plan") == "builds"  # no sweep: UP may still be tighter
    if pair2 is not None:
        used += w
        info["routes"].append("U2(reveal coins at values >= 2)" + (", builds only" if coarse else ""))
        f2, r2 = pair2
        for i in range(len(eps)):
            if max(f2[i], r2[i]) < max(upf[i], upr[i]):
                up_src[i] = "U2"
        upf, upr = np.minimum(upf, f2), np.minimum(upr, r2)
    if defer_u1:
        have_u1 = pair2 is None or ("wide_budget" not in info and used + u1w <= budget)
        if have_u1:
            run_u1()
    # UP (pairs) where U2 did not fit or ran without a sweep (U2's view is a function of UP's,
    # so U2 swept is at least as tight; its builds alone may not be), with up to half of what is
    # left, at most MAX_PAIR_CELLS cells of (F, B')
    n_eval = min(MAX_PAIR_CELLS, 0.5 * (budget - used) / per)
    if not have_u1:  # the caller's check (spread_work) leaves room for the fewest cells
        n_eval = max(n_eval, MIN_PAIR_CELLS)
    # (with nobody to pair, UP reveals every coin: never tighter than U1)
    # (after U2 paid by the wide budget UP is skipped: its room goes to the lower ends)
    up_after = pair2 is None or (coarse and "wide_budget" not in info)
    if up_after and n_eval >= MIN_PAIR_CELLS and (min(c0, c1) > 0 or not have_u1):
        cells = [0]

        def up_pairs(tt: float) -> np.ndarray:
            val, cells[0] = pairs_upper(k, eps0, c3, eps, tt, n_eval)
            return val

        val, t_p = _deepen(up_pairs, t_u, tries=2)
        used += pairs_work(k, eps0, c3, len(eps), t_p, float(cells[0]))
        info["routes"].append("UP(pairs of users at 0 and 1, other coins revealed)")
        for i in range(len(eps)):
            if up_src[i] == "none" or val[i] < max(upf[i], upr[i]):
                up_src[i] = "UP"
        upf, upr = np.minimum(upf, val), np.minimum(upr, val)
    # more lower ends with what is left of the budget
    for a, b, w in more_l1:
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
    info["work"] = used + wide_extra
    info["lower_from"], info["upper_from"] = low_src, up_src
    return low, up, info
