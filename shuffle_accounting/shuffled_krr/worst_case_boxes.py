"""Certified worst case of shuffled k-RR for ``k >= 4`` by branch and bound over ``(c0, c1)``.

Setting (as in :mod:`~shuffle_accounting.shuffled_krr.worst_case_multi`). ``n`` users apply k-RR
with local privacy ``eps0``: a user holding ``x`` reports ``x`` w.p. ``p = e^eps0 pbar`` and each
other value w.p. ``pbar = 1 / (e^eps0 + k - 1)``. The release is the full histogram. The target
holds ``x0 = 0`` in ``D`` and ``x1 = 1`` in ``D'``; ``P`` / ``Q`` are the laws of the release,
``H(P || Q) = sum_h (P(h) - E Q(h))_+`` with ``E = e^eps``. Of the other users, ``c0`` hold 0,
``c1`` hold 1 and ``m = n - 1 - c0 - c1`` hold values of ``R = {2, ..., k - 1}`` (the
*configuration*, arbitrary). A *block* is a value of ``(h0, h1)``; ``N = n - h0 - h1`` is the
number of reports in ``R``. ``D_c`` is the dataset with the same ``c0, c1`` and all ``m`` users of
``R`` at 2.

Proof of the certified bound (the collapse lemma and the leaf bound are the wck4b analysis of
benchmarks/README.md, "k >= 4 at n = 200 and 500"; every step is an identity or data processing):

(B1) *Symmetry.* Relabelling ``0 <-> 1`` maps the dataset ``(c0, c1)`` and the direction
``H(Q || P)`` to ``(c1, c0)`` and ``H(P || Q)``; relabelling ``R`` changes nothing. So the
supremum over all datasets and both directions is the supremum over the half-triangle
``c1 <= c0, c0 + c1 <= n - 1`` of ``max(H(P || Q), H(Q || P))``: the search covers that
half-triangle with both directions.

(B2) *Structure and collapse.* A user of ``R`` (whatever its value ``y``) reports 0, 1, "in ``R``"
w.p. ``pbar, pbar, 1 - 2 pbar``, and given "in ``R``" reports ``y`` w.p. ``p / (1 - 2 pbar)``, else
uniformly on ``R \\ {y}`` (law ``Bias_y``); every other user (at 0 or 1, the target in ``D`` and in
``D'``, and the uniform users of (B4)) reports in ``R`` w.p. independent of the configuration and
then *uniformly* on ``R``. So given a block, ``P`` and ``Q`` of the ``R``-part are mixtures over
``M`` (users of ``R`` reporting in ``R``) of ``G_M`` = the ``Bias`` reports of a uniformly random
``M``-subset of the configuration plus ``N - M`` uniform reports, with block-and-``M`` weights
that do not depend on the configuration. For ``N <= m`` the kernel "order the ``N`` reports at
random, order the configuration ``y_1..y_m`` at random, apply the transposition ``(2 y_i)`` of
``R`` to the ``i``-th report" maps ``M Bias_2 + (N - M)`` uniform reports (the law under ``D_c``)
to ``G_M`` for every ``M <= N`` at once (the ``Bias_2`` reports sit on a uniformly random position
set independent of the ``y``'s, ``(2 y) Bias_2 = Bias_y``, a uniform report stays uniform). It
does not depend on ``M`` nor on ``P`` / ``Q``, so by data processing, on every block with
``N <= m`` the block's share ``sum_{h in block} (P_D(h) - E Q_D(h))_+`` is at most that of
``D_c``. On the block ``N = n`` (``h0 = h1 = 0``) ``P = Q`` (the target reports in ``R`` w.p.
``(k - 2) pbar`` in both datasets, then uniformly): its share is 0.

(B3) *Per-block bounds (the leaf bound).* ``H(P_D || Q_D) = sum_blocks share(block)``, and for
any view ``V`` of which the block is a function, ``share(block) <= sum_{v: block(v) = block}
(P_V(v) - E Q_V(v))_+`` (``P(h) - E Q(h)`` is the sum of ``P_V - E Q_V`` over the ``v`` that map
to ``h``). Per block the smallest of these bounds is used (CR only with ``use_cr``: once REX
was in, it never improved a measured certificate):

* *body* (blocks with ``N <= m``, and every block when ``m = 0``: then ``D = D_c``): the share of
  ``D_c`` (B2), from the exact 3-D law of ``(h0, h1, h2)`` of ``D_c`` (the values ``3..k-1`` are
  held by nobody there, their split is ancillary, as in :mod:`~shuffle_accounting.shuffled_krr.exact`);
* *coin reveal* (CR): every user of ``R`` reveals its blanket coin (uniform w.p. ``gamma = k pbar``)
  and, when not uniform, its report, which is its own value, in ``R``: the block is unchanged by
  these known reports, the coins and values do not involve the target, and given ``B`` uniform
  coins the rest is the target, the ``c0`` and ``c1`` users and ``B`` uniform users, all of whom
  report in ``R`` uniformly: their ``R``-part is ancillary, so the share is
  ``sum_B Bin(m, gamma)(B) (P_B(block) - E Q_B(block))_+`` with ``P_B`` / ``Q_B`` 2-D laws of
  ``(h0, h1)``;
* *excess reveal* (REX, blocks with ``N > m`` only): the ``N`` reports in ``R`` are ``M <= m``
  ``Bias`` reports and ``N - M >= N - m`` reports that are uniform on ``R`` (from the users at 0
  and 1, the uniform users of (B4) and the target: iid uniform given that they fall in ``R``).
  Reveal ``N - m`` of the latter, chosen uniformly at random (their values are iid uniform,
  independent of the rest: ancillary). The release is a function of this view; given the block
  and ``M`` what stays is ``M`` ``Bias`` reports plus ``m - M`` uniform ones, exactly ``m``
  reports, so the kernel of (B2) (with ``m`` in place of ``N``) maps the configuration "all at 2"
  onto any other, and the share is at most that of "all at 2" in the view (block, ``h2'``), the
  2-count of the ``m`` remaining reports: with ``s = m - M`` (users of ``R`` reporting 0 or 1,
  ``Bin(m, 2 pbar)``, independent of the others), ``h2' ~ Bin(m - s, p / (1 - 2 pbar)) +
  Bin(s, 1/(k - 2))`` (:func:`rex_blocks`). This is the bound that keeps the leaves with many
  users at 0 tight (at ``n = 100``, ``k = 4``, ``eps0 = 2``, ``delta = 1e-9``, leaf ``(73, 0)``:
  1.03 x its exact value, where CR gave 2.1 x);
* the block's probability ``P(block)`` (``share <= P(block)``), the same for every configuration
  (B2).

Summing the minimum over blocks gives ``F(c0, c1) >= H(P_D || Q_D)`` for *every* configuration;
likewise for ``H(Q || P)`` (the roles of the target rows swapped; the probability bound is ``Q(block)``).
``F(0, 0)`` is the exact value of "all others at 2". Tested against brute force over every
dataset (tests/test_shuffled_krr_worst_case_boxes.py).

(B4) *Uniform users.* The same holds with ``b`` extra users reporting uniformly on all ``k``
values (the *reduced problem* of a box): they report 0, 1 w.p. ``1/k`` and in ``R`` uniformly, so
they join the users of (B2) whose ``R``-reports are uniform; the body is then the blocks with
``N <= m``, i.e. ``h0 + h1 >= 1 + c0 + c1 + b``, REX counts them among the uniform ``R``-reports
and CR has ``b + B`` uniform users.

(B5) *Boxes.* A box is ``a0 <= c0 <= b0``, ``a1 <= c1 <= b1`` (with ``c0 + c1 <= n - 1``). Every
dataset in it has at least ``a0`` users at 0, ``a1`` at 1 and ``m_lo = n - 1 - min(b0 + b1, n - 1)``
in ``R``; the other ``f = n - 1 - a0 - a1 - m_lo`` users are *free*. Give the adversary each free
user's coin and, when not uniform, its report (a known shift of the histogram): the view contains
the release (data processing), the coins and shifts do not involve the target, so the divergence
is the expectation over ``B ~ Bin(f, gamma)`` uniform free users of that of the reduced problem
``(a0, a1, m_lo, b = B)`` (joint convexity; the shift is a bijection of histograms), bounded by
(B3)-(B4) for every configuration. The reduced problem's true divergence is non-increasing in
``b`` (one more independent uniform report is the same Markov kernel applied to ``P`` and
``Q``), so for cells ``s_0 < s_1 < ...`` of ``B``'s window ``E_B g(B) <= sum_j P(s_j <= B <
s_{j+1}) F_b(s_j) + P(B outside the window)`` (``g <= 1``). A box with ``f = 0`` is a leaf:
its bound is ``F(c0, c1)`` and its lower value the exact divergence of ``D_c`` (a concrete
dataset: the exhibited value).

(B6) *Search.* Best first: the box with the largest bound is split in half along its longer
side. The boxes always cover the half-triangle, so their largest bound is certified at any stop
(budget included). ``delta(eps)``: stop when every bound is within ``tol`` of the best leaf's
exact value (a loose leaf raises the certified value to its own bound). ``epsilon(delta)``: find
an ``eps`` at which every bound is ``<= delta``, starting at ``tol / 2`` above the exhibited
epsilon; when a leaf's bound stays above, ``eps`` moves to where that leaf's bound (non-increasing
in ``eps``: every term ``(a - E b)_+`` is) drops below ``delta``, the closed boxes are kept (the
true divergence is non-increasing in ``eps``, so a bound at a smaller ``eps`` stays valid) and the
open ones re-evaluated. A leaf whose exact value exceeds the target becomes the witness.

(B7) *Numerics.* Laws are scaled non-negative arrays with the error model of
:mod:`~shuffle_accounting.shuffled_krr._krr_grid` (``true >= arr e^scale (1 - rel)`` on the box,
``sum (true - arr e^scale (1 + rel))_+ <= e^log_drop``). The largest class is the pivot, in closed
form (:func:`_pivot3`: ``N_o`` non-pivot reports ``Bin(c, (k - 1) pbar) + Bin(b, (k - 1)/k)``
(:func:`~shuffle_accounting.shuffled_krr._krr_grid.law_from_binom`,
:func:`~shuffle_accounting.shuffled_krr._krr_grid.conv1d`), then ``Bin(N_o, 2/(k - 1))(x + y)
Bin(x + y, 1/2)(x)`` by Loader log-pmfs counted at ``1e-10`` relative each; the mass outside
the box is bounded by the doubled upper-bounding binomial tails of
:mod:`~shuffle_accounting._binomial`). The other two classes are added one user at a time
(:func:`_add_users`; the trimmed slabs' mass is measured and dropped, underflowed products
counted). The per-block positive parts use coefficients moved to their unfavourable ends
(:func:`_coefs`, the argument of :func:`~shuffle_accounting.shuffled_krr._krr_grid.hockey_upper`),
sums are rounded up, the minimum over the bounds is taken per block in logs (no underflow), and
the dropped masses of every method used are added once (each bounds the sum over blocks of that
method's truncation). The lower (exhibited) value is the
:class:`~shuffle_accounting.shuffled_krr._krr_grid.Hockey` lower bound of ``D_c``'s 3-D law.

Cost and scope: a leaf or a cell of ``B`` is one 3-D law, ``O(window^3)`` cells times the users of
the two smaller classes; the search is used by
:func:`~shuffle_accounting.shuffled_krr.worst_case_multi.certify_multi` up to
:data:`~shuffle_accounting.shuffled_krr.worst_case_multi.BOX_MAX_N` users where the type bounds
miss ``tol`` (measured in benchmarks/README.md, "k >= 4 by boxes").

Example:
    >>> import math
    >>> r = certify_boxes(4, 1.0, 20, eps=0.5, tol=1e-3)
    >>> bool(r.ok and r.exhibited_log_delta <= r.log_delta <= r.exhibited_log_delta + math.log1p(1e-3))
    True
"""

from __future__ import annotations

import functools
import heapq
import math
import time
from dataclasses import dataclass

import numpy as np

from .._binomial import log_binom_cdf, log_binom_pmf, log_binom_sf, logsumexp
from .._logmath import UNIT_ROUNDOFF
from .._validation import ParameterError, check_int, check_real
from . import _krr_grid as G

__all__ = [
    "Box",
    "BoxSearch",
    "Engine",
    "Search",
    "certify_boxes",
    "covers",
    "exact_leaf_log_delta",
    "reduced_bounds",
    "others_law3",
    "blocks3",
    "rex_blocks",
    "cr_blocks",
]

_U = 2.0 * UNIT_ROUNDOFF
#: Relative error counted for each Loader log-pmf (as in ``_krr_grid``).
_REL = G.REL_PMF
#: Bound on one product that fell below the normal range.
_TINY = 2.3e-308
#: Relative error added per user added one at a time (4 products, 3 sums, weights, rescale).
_STEP = 10.0 * _U
#: Cells of ``B`` of a box's first evaluation (refined to ``max_cells`` before it is split).
COARSE_CELLS = 3
#: Entries below ``e^-700`` of an array's maximum are moved into the dropped mass.
_FLUSH = -700.0


# ---------------------------------------------------------------------------------------------
# windowed laws with a measured dropped mass
# ---------------------------------------------------------------------------------------------


class Law:
    """A windowed non-negative law on a box of ``Z^d`` (``d = 2`` or ``3``).

    ``true(lo + i) >= arr[i] e^scale (1 - rel)`` on the box and ``sum_x (true(x) - arr(x) e^scale
    (1 + rel))_+ <= e^log_drop`` over the whole lattice (the error model of
    :mod:`~shuffle_accounting.shuffled_krr._krr_grid`).
    """

    __slots__ = ("lo", "arr", "scale", "log_drop", "rel", "products")

    def __init__(self, lo, arr, scale, log_drop, rel, products=0.0):
        self.lo, self.arr, self.scale, self.log_drop, self.rel = tuple(lo), arr, scale, log_drop, rel
        self.products = products


def _probs(k: int, eps0: float) -> tuple[float, float, float, float]:
    """``(log p, log pbar, p, pbar)`` of k-RR."""
    lp = -math.log1p((k - 1) * math.exp(-eps0))
    lq = lp - eps0
    return lp, lq, math.exp(lp), math.exp(lq)


def _rows(k: int, eps0: float) -> dict:
    """Report probabilities over ``(0, 1, 2, Z)`` (3-D) of a user at 0, 1, 2 or uniform ``"u"``."""
    _, _, p, q = _probs(k, eps0)
    z = (k - 3) * q
    return {
        0: (p, q, q, z),
        1: (q, p, q, z),
        2: (q, q, p, z),
        "u": (1.0 / k, 1.0 / k, 1.0 / k, (k - 3) / k),
    }


def _add_drop(drops: list, mass: float, scale: float, rel: float, cells: int) -> None:
    if mass > 0.0:
        drops.append(math.log(mass * (1.0 + rel) * (1.0 + (cells + 4) * _U)) + scale)


def _window(means: list[float], vars_: list[float], total: int, z: float) -> tuple[int, int]:
    mu, sd = sum(means), math.sqrt(sum(vars_))
    lo = max(0, int(math.floor(mu - z * sd)) - 2)
    hi = min(total, int(math.ceil(mu + z * sd)) + 2)
    return lo, hi


def _pivot3(k, eps0, v, c, b, lo, hi, log_tol) -> Law:
    """Law over ``(h0, h1, h2)`` of ``c`` users at ``v`` and ``b`` uniform users on the box ``[lo, hi]``.

    Pivot form: ``N_o``, the reports different from ``v``, is ``Bin(c, (k - 1) pbar) + Bin(b, (k -
    1)/k)``; given ``N_o`` the two other tracked coordinates ``(x, y)`` are trinomial with
    probabilities ``1/(k - 1)`` each (the rest in ``Z``), i.e. ``Bin(N_o, 2/(k - 1))(x + y)
    Bin(x + y, 1/2)(x)``. Dropped: ``N_o``'s own window tails, ``N_o`` outside the box, and per
    ``N_o`` the binomial tails ``P(x < lo_x) + P(x > hi_x) + P(y < lo_y) + P(y > hi_y)`` (upper
    bounds of :mod:`~shuffle_accounting._binomial`, doubled) weighted by ``P(N_o)``.
    """
    lp, lq, _, _ = _probs(k, eps0)
    t = log_tol - math.log(8.0)
    no = G.conv1d(
        G.law_from_binom(c, math.log(k - 1) + lq, lp, t),
        G.law_from_binom(b, math.log((k - 1) / k), -math.log(k), t),
    )
    ax = [a for a in (0, 1, 2) if a != v]
    tot = c + b
    drops = [no.log_drop]
    # N_o values whose pivot coordinate tot - N_o lies in [lo_v, hi_v], in increasing h_v
    hv = np.arange(lo[v], hi[v] + 1)
    nos = tot - hv
    idx = nos - no.lo
    inside = (idx >= 0) & (idx < no.arr.size)
    w = np.zeros(hv.size)
    w[inside] = no.arr[idx[inside]]
    keep = np.zeros(no.arr.size, dtype=bool)
    keep[idx[inside]] = True
    _add_drop(drops, float(no.arr[~keep].sum()), no.scale, no.rel, no.arr.size)
    X = np.arange(lo[ax[0]], hi[ax[0]] + 1, dtype=float)
    Y = np.arange(lo[ax[1]], hi[ax[1]] + 1, dtype=float)
    Nf = nos.astype(float)
    with np.errstate(divide="ignore"):
        lwn = np.where(w > 0, np.log(np.where(w > 0, w, 1.0)), -np.inf)
    # per N_o: P(x < lo_x) + P(x > hi_x) + P(y < lo_y) + P(y > hi_y), each Bin(N_o, 1/(k - 1))
    tails = []
    for lo_a, hi_a in ((X[0], X[-1]), (Y[0], Y[-1])):
        if lo_a > 0:
            tails.append(log_binom_cdf(np.full(Nf.shape, lo_a - 1.0), Nf, 1.0 / (k - 1)))
        tails.append(log_binom_sf(np.full(Nf.shape, hi_a + 1.0), Nf, 1.0 / (k - 1)))
    lt = np.logaddexp.reduce(np.array(tails), axis=0) + math.log(2.0)
    val = lwn + lt + math.log1p(no.rel)
    val = val[np.isfinite(val)]
    if val.size:
        drops.append(float(logsumexp(val)) + no.scale + 1e-12)
    S = X[:, None] + Y[None, :]
    s_min = int(S.min())
    Sv = np.arange(s_min, int(S.max()) + 1, dtype=float)
    NN, SS = np.meshgrid(Nf, Sv, indexing="ij")
    ok = SS <= NN
    l2c = math.log((k - 3) / (k - 1))
    L2 = np.where(ok, log_binom_pmf(np.where(ok, SS, 0.0), NN, math.log(2.0 / (k - 1)), l2c), -np.inf)
    L3 = log_binom_pmf(X[:, None] + 0.0 * Y[None, :], S, -math.log(2.0), -math.log(2.0))
    L3 = np.where(S == 0, 0.0, L3)
    lg = lwn[:, None, None] + L2[:, (S - s_min).astype(np.int64)] + L3[None, :, :]
    mx = float(np.max(lg)) if np.any(np.isfinite(lg)) else 0.0
    keep3 = lg - mx > _FLUSH
    fl = lg[~keep3 & np.isfinite(lg)]
    if fl.size:
        drops.append(float(logsumexp(fl)) + no.scale + math.log1p(no.rel + 3.0 * _REL))
    with np.errstate(under="ignore"):
        arr = np.where(keep3, np.exp(np.where(keep3, lg - mx, 0.0)), 0.0)
    arr = np.moveaxis(arr, 0, v)
    rel = no.rel + 2.0 * _REL + 8.0 * _U
    return Law(lo, np.ascontiguousarray(arr), mx + no.scale, float(logsumexp(drops)), rel)


def _add_users_fixed(
    L: Law, count: int, w: tuple[float, ...], lo_final: tuple[int, ...], left_after: int
) -> Law:
    """``L`` plus ``count`` independent users with move probabilities ``w`` (one per axis, then "none").

    One user at a time: ``new(x) = w_none L(x) + sum_a w_a L(x - e_a)`` (non-negative products
    and sums: relative error :data:`_STEP` per user). Mass pushed past the box's upper end is
    measured and dropped; slabs below ``lo_final - (users still to come)`` can never reach the
    final box and are measured and dropped too; products below the normal range are counted.
    Every dropped part is transported by the remaining steps (Markov kernels), so the error model
    of :class:`Law` holds (the argument of :func:`~shuffle_accounting.shuffled_krr._krr_grid.sweep_users`).
    """
    if count == 0:
        return L
    d = L.arr.ndim
    arr, lo, scale, rel = L.arr, list(L.lo), L.scale, L.rel
    drops = [L.log_drop]
    products = L.products
    for i in range(count):
        remaining = count - 1 - i + left_after
        # spill over the upper end
        spill = 0.0
        for a in range(d):
            sl = [slice(None)] * d
            sl[a] = slice(-1, None)
            spill += w[a] * float(arr[tuple(sl)].sum())
        _add_drop(drops, spill, scale, rel, arr.size)
        new = arr * w[d]
        for a in range(d):
            dst = [slice(None)] * d
            src = [slice(None)] * d
            dst[a] = slice(1, None)
            src[a] = slice(0, -1)
            with np.errstate(under="ignore"):
                new[tuple(dst)] += w[a] * arr[tuple(src)]
        products += (d + 1.0) * arr.size
        arr = new
        rel = rel + (1.0 + rel) * _STEP
        # lower trims
        for a in range(d):
            cut = lo_final[a] - remaining - lo[a]
            if cut > 0:
                cut = min(cut, arr.shape[a] - 1)
                sl = [slice(None)] * d
                sl[a] = slice(0, cut)
                _add_drop(drops, float(arr[tuple(sl)].sum()), scale, rel, arr.size)
                sl[a] = slice(cut, None)
                arr = arr[tuple(sl)]
                lo[a] += cut
        if i % 8 == 7:
            mx = float(np.max(arr))
            if mx > 0.0:
                arr = arr / mx
                scale += math.log(mx)
    drops.append(math.log(products * _TINY) + max(scale, L.scale) + 1.0)
    return Law(tuple(lo), arr, scale, float(logsumexp(drops)), rel, 0.0)


def _add_users(L: Law, count: int, w: tuple[float, ...], log_budget: float) -> Law:
    """``L`` plus ``count`` independent users with move probabilities ``w`` (one per axis, then "none").

    One user at a time on a box that grows by one in every axis: ``new(x) = w_none L(x) +
    sum_a w_a L(x - e_a)`` (non-negative products and sums: relative error :data:`_STEP` per
    user, the rescaling by the maximum included). Every 8 users (and at the end) the leading and
    trailing slabs of each axis whose summed mass stays below ``e^log_budget / (number of trims)``
    are cut; their mass, rounded up, is dropped, and products below the normal range are counted.
    Every dropped part is transported by the remaining steps (Markov kernels), so the error
    model of :class:`Law` holds (the argument of
    :func:`~shuffle_accounting.shuffled_krr._krr_grid.sweep_users`).
    """
    if count == 0:
        return L
    d = L.arr.ndim
    arr, lo, scale, rel = L.arr, list(L.lo), L.scale, L.rel
    drops = [L.log_drop]
    products = 0.0
    top = scale
    n_trims = count // 8 + 1
    lb = log_budget - math.log(n_trims)
    for i in range(count):
        new = np.zeros(tuple(x + 1 for x in arr.shape))
        base = tuple(slice(0, -1) for _ in range(d))
        with np.errstate(under="ignore"):
            np.multiply(arr, w[d], out=new[base])
            for a in range(d):
                sl = [slice(0, -1)] * d
                sl[a] = slice(1, None)
                new[tuple(sl)] += w[a] * arr
        products += (d + 1.0) * arr.size
        arr = new
        rel = rel + (1.0 + rel) * _STEP
        if i % 8 == 7 or i == count - 1:
            mx = float(np.max(arr))
            if mx > 0.0:
                arr = arr / mx
                scale += math.log(mx)
                top = max(top, scale)
            budget = math.exp(min(lb - scale, 700.0))
            for a in range(d):
                other = tuple(x for x in range(d) if x != a)
                f, b, dr = G.trim_mass(arr.sum(axis=other), budget / d)
                if dr > 0.0:
                    _add_drop(drops, dr, scale, rel, arr.size)
                if f or b:
                    sl = [slice(None)] * d
                    sl[a] = slice(f, arr.shape[a] - b)
                    arr = arr[tuple(sl)]
                    lo[a] += f
    drops.append(math.log(products * _TINY) + top + 1.0)
    return Law(tuple(lo), np.ascontiguousarray(arr), scale, float(logsumexp(drops)), rel)


def _slice_to(L: Law, lo: tuple[int, ...], hi: tuple[int, ...]) -> Law:
    """Restrict ``L`` to the box ``[lo, hi]`` (the mass cut off is measured and dropped)."""
    arr = L.arr
    drops = [L.log_drop]
    new_lo = list(L.lo)
    for a in range(arr.ndim):
        s = max(0, lo[a] - new_lo[a])
        e = min(arr.shape[a], hi[a] - new_lo[a] + 1)
        if s > 0 or e < arr.shape[a]:
            sl = [slice(None)] * arr.ndim
            sl[a] = slice(s, e)
            kept = arr[tuple(sl)]
            sl[a] = slice(0, s)
            c1 = float(arr[tuple(sl)].sum())
            sl[a] = slice(e, None)
            c2 = float(arr[tuple(sl)].sum())
            _add_drop(drops, c1 + c2, L.scale, L.rel, arr.size)
            arr = kept
            new_lo[a] += s
    return Law(tuple(new_lo), arr, L.scale, float(logsumexp(drops)), L.rel, L.products)


def _pair_grids(k: int, eps0: float, cx: int, cy: int, b: int, log_tol: float) -> list:
    """The windowed trinomials of :func:`_pair3` (``x``-class, ``y``-class, uniform users)."""
    lp, lq, _, _ = _probs(k, eps0)
    l_other = math.log(k - 2) + lq
    tl = log_tol - math.log(8.0)
    out = [G.class_grid(cx, l_other, lp, lq, tl), G.class_grid(cy, l_other, lq, lp, tl)]
    if b > 0:
        lk = -math.log(k)
        out.append(G.class_grid(b, math.log(k - 2) + lk, lk, lk, tl))
    return out


def _conv_work(shapes: list[tuple[int, int]]) -> float:
    """Multiply-adds of convolving 2-D arrays of these shapes, smallest first (``convolve2d_direct``)."""
    shapes = sorted(shapes, key=lambda s_: s_[0] * s_[1])
    work = 0.0
    cur = shapes[0]
    for sh in shapes[1:]:
        x, y = (cur, sh) if cur[0] * cur[1] >= sh[0] * sh[1] else (sh, cur)
        width = x[1] + y[1] - 1
        flat = float(x[0] * width) * float(y[0] * width)
        direct = float(x[0] * x[1]) * float(y[0] * y[1])
        work += flat if (flat <= 4.0 * direct or y[0] * y[1] > 4096) else direct
        cur = (cur[0] + sh[0] - 1, cur[1] + sh[1] - 1)
    return work


def _pair3(k: int, eps0: float, x: int, y: int, cx: int, cy: int, b: int, lo, hi, log_tol: float) -> Law:
    """Law over ``(h0, h1, h2)`` of ``cx > 0`` users at ``x``, ``cy > 0`` at ``y`` and ``b`` uniform users.

    Both classes report the third tracked value ``t`` w.p. ``pbar`` and ``Z`` w.p. ``(k - 3) pbar``,
    and a uniform user ``t`` w.p. ``1/k`` and ``Z`` w.p. ``(k - 3)/k``: for all three, given a
    report in ``{t} u Z`` it is ``t`` w.p. ``1/(k - 2)``. So given the number ``K`` of their
    reports in ``{t} u Z``, ``h_t ~ Bin(K, 1/(k - 2))`` independently of the rest. The law of
    ``(h_x, h_x + h_y)`` is the direct 2-D convolution
    (:func:`~shuffle_accounting.shuffled_krr._krr_grid.conv2d`) of the classes' windowed
    trinomials (:func:`~shuffle_accounting.shuffled_krr._krr_grid.class_grid`, pivot "other",
    designated ``x``), with their error model; ``K = cx + cy + b - h_x - h_y``. The box is ``[lo, hi]``. Dropped: the 2-D
    law's own dropped mass, its cells outside the box (measured) and per ``K`` the doubled upper
    binomial tails of ``h_t`` outside ``[lo_t, hi_t]`` weighted by the row's mass.
    """
    grids = _pair_grids(k, eps0, cx, cy, b, log_tol)
    lp, lq, _, _ = _probs(k, eps0)
    l_other, lk = math.log(k - 2) + lq, -math.log(k)
    moves = [(cy, (l_other, lq, lp)), (b, (math.log(k - 2) + lk, lk, lk))]
    # the x-class as the base, the others by direct 2-D convolution or one user at a time
    # (``_krr_grid.add_classes``: whichever is cheaper, same error model)
    rest = [(mv, g) for mv, g in zip(moves, grids[1:]) if mv[0] > 0]
    W = G.add_classes(grids[0], [mv for mv, _ in rest], [g for _, g in rest], log_tol - math.log(8.0))
    if W is None:  # pragma: no cover - over both budgets of add_classes (not reached at n <= 2000)
        W = grids[0]
        for _, g in rest:
            W = G.conv2d(W, g)
    t = 3 - x - y
    tot = cx + cy + b
    drops = [W.log_drop]
    Hx = np.arange(lo[x], hi[x] + 1)
    Hy = np.arange(lo[y], hi[y] + 1)
    Ht = np.arange(lo[t], hi[t] + 1, dtype=float)
    rows, cols = W.arr.shape
    Nn = Hx[:, None] + Hy[None, :] - W.n_lo
    Jj = np.broadcast_to(Hx[:, None] - W.j_lo, Nn.shape)
    ok = (Nn >= 0) & (Nn < rows) & (Jj >= 0) & (Jj < cols)
    Wg = np.zeros(Nn.shape)
    Wg[ok] = W.arr[Nn[ok], Jj[ok]]
    # W's cells outside the (h_x, h_y) box, measured
    used = np.zeros(W.arr.shape, dtype=bool)
    used[Nn[ok], Jj[ok]] = True
    _add_drop(drops, float(W.arr[~used].sum()), W.scale, W.rel, W.arr.size)
    # h_t | K outside [lo_t, hi_t]: per row N of W (K = tot - N), weighted by the row's mass
    Ns = W.n_lo + np.arange(rows)
    Kf = (tot - Ns).astype(float)
    tails = [log_binom_sf(np.full(Kf.shape, Ht[-1] + 1.0), Kf, 1.0 / (k - 2))]
    if Ht[0] > 0:
        tails.append(log_binom_cdf(np.full(Kf.shape, Ht[0] - 1.0), Kf, 1.0 / (k - 2)))
    lt = np.logaddexp.reduce(np.array(tails), axis=0) + math.log(2.0)
    rs = W.arr.sum(axis=1)
    with np.errstate(divide="ignore"):
        val = np.log(rs) + lt + math.log1p(W.rel) + math.log1p((cols + 4) * _U)
    val = val[np.isfinite(val)]
    if val.size:
        drops.append(float(logsumexp(val)) + W.scale + 1e-12)
    K2 = tot - Hx[:, None] - Hy[None, :]
    Kv = np.arange(int(K2.min()), int(K2.max()) + 1, dtype=float)
    KK, TT = np.meshgrid(Kv, Ht, indexing="ij")
    okb = (TT <= KK) & (KK >= 0)
    lb = np.where(
        okb,
        log_binom_pmf(
            np.where(okb, TT, 0.0), np.maximum(KK, 0.0), -math.log(k - 2), math.log((k - 3) / (k - 2))
        ),
        -np.inf,
    )
    with np.errstate(divide="ignore"):
        lg = np.log(Wg)[:, :, None] + lb[(K2 - int(Kv[0])).astype(np.int64)]
    mx = float(np.max(lg)) if np.any(np.isfinite(lg)) else 0.0
    keep = lg - mx > _FLUSH
    fl = lg[~keep & np.isfinite(lg)]
    if fl.size:
        drops.append(float(logsumexp(fl)) + W.scale + math.log1p(_REL) + math.log1p(W.rel))
    with np.errstate(under="ignore"):
        arr = np.where(keep, np.exp(np.where(keep, lg - mx, 0.0)), 0.0)
    perm = np.argsort([x, y, t])
    arr = np.ascontiguousarray(arr.transpose(perm))
    rel = W.rel + _REL + 8.0 * _U
    return Law(tuple(lo), arr, mx + W.scale, float(logsumexp(drops)), rel)


def others_law3(k: int, eps0: float, a0: int, a1: int, m: int, b: int, log_tol: float) -> Law:
    """Law over ``(h0, h1, h2)`` of ``a0`` users at 0, ``a1`` at 1, ``m`` at 2 and ``b`` uniform users.

    Either (i) the largest class and the uniform users in closed form (:func:`_pivot3`) and the
    other two classes one user at a time (:func:`_add_users`), or (ii) the two largest classes
    and the uniform users in closed form (:func:`_pair3`) and the smallest class one user at a
    time, whichever a rough cost model (users added x cells, 2-D convolution work) finds cheaper.
    The box of each coordinate is its mean ``+- z sd + 2`` (``z = sqrt(2 |log_tol|) + 0.5``);
    soundness does not depend on it (every mass outside is measured or bounded and dropped).
    """
    rows = _rows(k, eps0)
    counts = {0: a0, 1: a1, 2: m}
    total = a0 + a1 + m + b
    z = math.sqrt(2.0 * max(0.0, -log_tol)) + 0.5
    lo, hi = [], []
    for a in range(3):
        means = [counts[x] * rows[x][a] for x in (0, 1, 2)] + [b / k]
        vars_ = [counts[x] * rows[x][a] * (1.0 - rows[x][a]) for x in (0, 1, 2)] + [b / k * (1 - 1 / k)]
        w_lo, w_hi = _window(means, vars_, total, z)
        lo.append(w_lo)
        hi.append(w_hi)
    order = sorted((2, 0, 1), key=lambda x: -counts[x])  # largest first (ties: 2, 0, 1)
    v, x2, x3 = order

    def own_box(classes, extra_b):
        lo_p, hi_p = [], []
        for a in range(3):
            ms = [counts[c] * rows[c][a] for c in classes] + [extra_b / k]
            vs = [counts[c] * rows[c][a] * (1 - rows[c][a]) for c in classes] + [extra_b / k * (1 - 1 / k)]
            w_lo, w_hi = _window(ms, vs, sum(counts[c] for c in classes) + extra_b, z)
            lo_p.append(w_lo)
            hi_p.append(max(min(w_hi, hi[a]), w_lo))
        return tuple(lo_p), tuple(hi_p)

    # (i) pivot class with the uniform users in closed form, the other two one at a time;
    # (ii) the two largest classes and the uniform users in closed form, the third one at a time;
    # cost model (measured on this machine, order of magnitude): one user added = 6 passes over
    # the final box; a direct 2-D convolution multiply-add = 1 pass-cell
    cells = float(np.prod([hi[a] - lo[a] + 1 for a in range(3)]))
    cost_pivot = (counts[x2] + counts[x3]) * 6.0 * cells
    cost_pair = math.inf
    if counts[x2] > 0:
        gr = _pair_grids(k, eps0, counts[v], counts[x2], b, log_tol)
        seq = (counts[x2] + b) * 3.0 * (gr[0].arr.shape[0] + 20.0) * (gr[0].arr.shape[1] + 20.0)
        cost_pair = counts[x3] * 6.0 * cells + min(_conv_work([g.arr.shape for g in gr]), seq)
    if cost_pair < cost_pivot:
        lo_p, hi_p = own_box((v, x2), b)
        L = _pair3(k, eps0, v, x2, counts[v], counts[x2], b, lo_p, hi_p, log_tol)
        L = _add_users(L, counts[x3], rows[x3], log_tol - math.log(4.0))
    else:
        lo_p, hi_p = own_box((v,), b)
        L = _pivot3(k, eps0, v, counts[v], b, lo_p, hi_p, log_tol)
        for c in (x2, x3):
            L = _add_users(L, counts[c], rows[c], log_tol - math.log(4.0))
    return _slice_to(L, tuple(lo), tuple(hi))


def _coefs(pi_a, pi_b, E: float, rho: float, upper: bool) -> list[float]:
    """``c_y`` with ``sum_y c_y R(x - y)`` above (``upper``) or below the exact ``P - E Q`` term.

    Upper: ``pi_a(y)(1 + rho + 16 * 2u) - E pi_b(y)(1 - rho - 16 * 2u)``: the ``rho`` terms cover
    the relative error of the computed law ``R`` (``true <= R (1 + rho)`` up to the dropped mass,
    ``true >= R (1 - rho)``) and the extra ``16 * 2u (P + E Q)`` covers the rounding of the
    coefficients and of the four products and three sums (at most ``8 * 2u`` relative to
    ``sum |c_y| R``; the argument of :func:`~shuffle_accounting.shuffled_krr._krr_grid.hockey_upper`).
    Lower: the other ends.
    """
    m = rho + 16.0 * _U
    if upper:
        return [x * (1.0 + m) - E * y * (1.0 - m) for x, y in zip(pi_a, pi_b)]
    return [x * (1.0 - m) - E * y * (1.0 + m) for x, y in zip(pi_a, pi_b)]


def _combine(arr: np.ndarray, c: list[float]) -> np.ndarray:
    """``sum_y c_y arr(x - e_y)`` on the box grown by one in every axis (last ``c``: no move)."""
    d = arr.ndim
    out = np.zeros(tuple(s + 1 for s in arr.shape))
    base = tuple(slice(0, -1) for _ in range(d))
    with np.errstate(under="ignore"):
        out[base] += c[d] * arr
        for a in range(d):
            sl = [slice(0, -1)] * d
            sl[a] = slice(1, None)
            out[tuple(sl)] += c[a] * arr
    return out


def _target_rows(k: int, eps0: float, d: int) -> tuple[tuple, tuple]:
    """The target's report probabilities when it holds 0 / 1, over ``(0, 1, 2, Z)`` (``d = 3``) or
    ``(0, 1, R)`` (``d = 2``)."""
    rows = _rows(k, eps0)
    if d == 3:
        return rows[0], rows[1]
    r0, r1 = rows[0], rows[1]
    return (r0[0], r0[1], r0[2] + r0[3]), (r1[0], r1[1], r1[2] + r1[3])


class _Blocks:
    """Per-block (``(h0, h1)`` of the release) upper bounds of one method, with its dropped mass.

    ``up[d]`` (``d = 0`` forward, ``1`` reverse) and ``pmass`` are arrays on the box starting at
    ``lo`` in units of ``e^scale``; the method's bound on block ``x`` is ``up[d][x] e^scale + e_x``
    with ``sum_x e_x <= e^log_err`` (blocks outside the box: ``e_x`` alone).
    """

    __slots__ = ("lo", "up", "pmass", "scale", "log_err", "low")

    def __init__(self, lo, up, pmass, scale, log_err, low=None):
        self.lo, self.up, self.pmass, self.scale, self.log_err, self.low = lo, up, pmass, scale, log_err, low


def blocks3(L: Law, k: int, eps0: float, eps: float, want_low: bool = True) -> _Blocks:
    """Per-block bounds from the 3-D law ``L`` of the other users (the target added here).

    ``P~ = sum_y pi_P(y) L(x - e_y)`` and ``Q~`` likewise (the target's rows; four non-negative
    products and three sums: relative error at most ``4 * 2u``). ``up[d]``: ``sum_h2 (P~ (1 + m) -
    E Q~ (1 - m))_+`` per block with ``m = rho + 16 * 2u`` (``rho`` the law's relative error; the
    extra ``16 * 2u`` dominates the rounding of the sums, the two products and the difference, so
    each computed cell is at least ``P (1 + rho) - E Q (1 - rho) + 4 * 2u (P + E Q)``, the
    :class:`~shuffle_accounting.shuffled_krr._krr_grid.Hockey` term); ``pmass[d]``: ``sum_h2 P~
    (1 + m)`` (the block's probability, the same under every configuration); ``low``: the log lower
    bounds of the two divergences of this law's dataset over every block, ``sum (P~ (1 - m) - E Q~
    (1 + m))_+ - E e^log_drop`` (the :class:`~shuffle_accounting.shuffled_krr._krr_grid.Hockey`
    lower bound; ``-inf`` unless ``want_low``). The error term is ``L``'s dropped mass.
    """
    E = math.exp(eps)
    pa, pb = _target_rows(k, eps0, 3)
    m = L.rel + 16.0 * _U
    W2 = L.arr.shape[2] + 1
    grow = 1.0 + (W2 + 8) * _U
    size = (L.arr.shape[0] + 1) * (L.arr.shape[1] + 1) * W2
    P = _combine(L.arr, list(pa))
    Q = _combine(L.arr, list(pb))
    ups, lows, pm = [], [], []
    for X, Y in ((P, Q), (Q, P)):
        out = X * (1.0 + m)
        pm.append(out.sum(axis=2) * grow)
        out -= Y * (E * (1.0 - m))
        np.maximum(out, 0.0, out=out)
        ups.append(out.sum(axis=2) * grow)
        ll = -math.inf
        if want_low:
            out = X * (1.0 - m)
            out -= Y * (E * (1.0 + m))
            np.maximum(out, 0.0, out=out)
            low = float(out.sum()) * (1.0 - (size + 8) * _U)
            if low > 0.0:
                ll = math.log(low) + L.scale - 1e-13
                corr = eps + L.log_drop
                ll = ll + math.log(-math.expm1(corr - ll)) if corr < ll else -math.inf
        lows.append(ll)
    return _Blocks((L.lo[0], L.lo[1]), ups, pm, L.scale, L.log_drop, tuple(lows))


def _class2(k: int, eps0: float, c: int, hi0: int, hi1: int, log_tol: float) -> Law:
    """Law of ``(h0, h1)`` of ``c`` users at 0 on ``[0, hi0] x [0, hi1]`` (closed form).

    ``h0 ~ Bin(c, p)`` and, given ``h0``, ``h1 ~ Bin(c - h0, pbar / (1 - p))`` (Loader log-pmfs,
    relative error counted ``2e-10``). Dropped: ``P(h0 > hi0)`` and, per ``h0``, ``P(h1 > hi1 |
    h0)`` (upper-bounding tails doubled, weighted), and entries flushed below ``e^-700``.
    """
    lp, lq, p, q = _probs(k, eps0)
    H0 = np.arange(hi0 + 1, dtype=float)
    H1 = np.arange(hi1 + 1, dtype=float)
    l1mp = math.log(k - 1) + lq  # log(1 - p)
    r = q / ((k - 1) * q)  # pbar / (1 - p) = 1 / (k - 1)
    lr, l1r = -math.log(k - 1), math.log((k - 2) / (k - 1))
    drops = []
    if hi0 < c:
        drops.append(float(log_binom_sf(hi0 + 1.0, float(c), p)) + math.log(2.0))
    l0 = np.where(H0 <= c, log_binom_pmf(np.minimum(H0, c), float(c), lp, l1mp), -np.inf)
    rest = c - H0
    t1 = np.where(rest > hi1, log_binom_sf(np.full(H0.shape, hi1 + 1.0), np.maximum(rest, 0.0), r), -np.inf)
    v = (l0 + t1 + math.log(2.0) + math.log1p(_REL))[np.isfinite(l0 + t1)]
    if v.size:
        drops.append(float(logsumexp(v)))
    RR, YY = np.meshgrid(rest, H1, indexing="ij")
    ok = (YY <= RR) & (RR >= 0)
    l1 = np.where(ok, log_binom_pmf(np.where(ok, YY, 0.0), np.maximum(RR, 0.0), lr, l1r), -np.inf)
    lg = l0[:, None] + l1
    mx = float(np.max(lg))
    keep = lg - mx > _FLUSH
    fl = lg[~keep & np.isfinite(lg)]
    if fl.size:
        drops.append(float(logsumexp(fl)) + math.log1p(_REL))
    with np.errstate(under="ignore"):
        arr = np.where(keep, np.exp(np.where(keep, lg - mx, 0.0)), 0.0)
    return Law((0, 0), arr, mx, float(logsumexp(drops)) if drops else -math.inf, 2.0 * _REL + 8.0 * _U)


def cr_blocks(
    k: int, eps0: float, a0: int, a1: int, m: int, bs: list[int], eps: float, log_tol: float
) -> dict:
    """Per-block bounds of the coin reveal (CR): every user of ``R`` reveals its blanket coin.

    For each ``b`` in ``bs``: ``sum_B Bin(m, gamma)(B) (P_{b+B} - E Q_{b+B})_+`` per block, with
    ``P_j`` / ``Q_j`` the laws of ``(h0, h1)`` of the target, ``a0`` users at 0, ``a1`` at 1 and
    ``j`` uniform users (module docstring (B4)). The ``B`` outside its window contribute at most
    their probability; the laws' dropped mass and the underflowed products are added.
    Returns ``{b: _Blocks}`` (``pmass`` unused: ``None``).
    """
    lp, lq, p, q = _probs(k, eps0)
    E = math.exp(eps)
    lg = math.log(k) + lq
    l1g = lp + math.log(-math.expm1(-eps0))
    t = log_tol - math.log(8.0)
    B_lo, lpB, tailB = G.binom_window(m, lg, l1g, t) if m > 0 else (0, np.zeros(1), -math.inf)
    B_hi = B_lo + lpB.size - 1
    j_max = max(bs) + B_hi
    rows2 = {0: (p, q, (k - 2) * q), 1: (q, p, (k - 2) * q), "u": (1.0 / k, 1.0 / k, (k - 2) / k)}
    z = math.sqrt(2.0 * max(0.0, -log_tol)) + 0.5
    hi = []
    for a in range(2):
        means = [a0 * rows2[0][a], a1 * rows2[1][a], j_max / k]
        vars_ = [
            a0 * rows2[0][a] * (1 - rows2[0][a]),
            a1 * rows2[1][a] * (1 - rows2[1][a]),
            j_max / k * (1 - 1 / k),
        ]
        hi.append(_window(means, vars_, a0 + a1 + j_max, z)[1])
    T = _class2(k, eps0, a0, hi[0], hi[1], log_tol)
    T = _add_users_fixed(T, a1, rows2[1], (0, 0), 0)
    pa, pb = _target_rows(k, eps0, 2)
    acc = {b: [np.zeros((hi[0] + 2, hi[1] + 2)), np.zeros((hi[0] + 2, hi[1] + 2))] for b in bs}
    ops = 0.0
    j = 0
    while True:
        need = [b for b in bs if B_lo <= j - b <= B_hi]
        if need:
            outs = []
            for x, y in ((pa, pb), (pb, pa)):
                out = _combine(T.arr, _coefs(x, y, E, T.rel, True))
                np.maximum(out, 0.0, out=out)
                outs.append(out)
            for b in need:
                wgt = math.exp(float(lpB[j - b - B_lo]) + T.scale) * (1.0 + _REL) * (1.0 + 8.0 * _U)
                for d in (0, 1):
                    with np.errstate(under="ignore"):
                        acc[b][d] += wgt * outs[d]
                ops += 2.0 * outs[0].size
        if j >= j_max:
            break
        T = _add_users_fixed(T, 1, rows2["u"], (0, 0), 0)
        j += 1
    err = float(logsumexp([tailB, T.log_drop, math.log(ops * _TINY + _TINY)]))
    res = {}
    for b in bs:
        n_terms = B_hi - B_lo + 1
        grow = 1.0 + (n_terms + 8) * _U
        res[b] = _Blocks((0, 0), [acc[b][0] * grow, acc[b][1] * grow], None, 0.0, err)
    return res


@functools.lru_cache(maxsize=256)
def _rex_table(k: int, eps0: float, m: int, s_lo: int, s_hi: int) -> np.ndarray:
    """``L_s(j) = (Bin(m - s, p / (1 - 2 pbar)) * Bin(s, 1/(k - 2)))(j)``, rows ``s_lo..s_hi``, ``j = 0..m``.

    Loader log-pmfs (relative error counted ``1e-10`` each) and a direct convolution of
    non-negative terms (``(m + 2) u``): :func:`rex_blocks` counts ``2e-10 + (m + 4) 2u``. Read-only.
    """
    lp, lq, _, q = _probs(k, eps0)
    l_r, l_1r = lp - math.log1p(-2.0 * q), math.log(k - 3) + lq - math.log1p(-2.0 * q)
    S = np.arange(s_lo, s_hi + 1, dtype=float)[:, None]
    J = np.arange(m + 1, dtype=float)[None, :]
    okx = J <= m - S
    bx = np.where(okx, np.exp(log_binom_pmf(np.where(okx, J, 0.0), np.maximum(m - S, 0.0), l_r, l_1r)), 0.0)
    bx = np.where((m - S == 0) & (J == 0), 1.0, bx)
    oky = J <= S
    l2, l2c = -math.log(k - 2), math.log((k - 3) / (k - 2))
    by = np.where(oky, np.exp(log_binom_pmf(np.where(oky, J, 0.0), np.maximum(S, 0.0), l2, l2c)), 0.0)
    by = np.where((S == 0) & (J == 0), 1.0, by)
    out = np.array([np.convolve(bx[i], by[i])[: m + 1] for i in range(S.shape[0])])
    out.setflags(write=False)
    return out


def rex_blocks(
    k: int,
    eps0: float,
    a0: int,
    a1: int,
    m: int,
    b: int,
    eps: float,
    box: tuple[int, int, int, int],
    log_tol: float,
) -> _Blocks:
    """Per-block bounds of the excess reveal (REX) on the blocks outside the body (module docstring (B3)).

    On a block with ``N > m`` reports in ``R``, at least ``N - m`` of them come from the users
    whose ``R``-reports are uniform (the ``a0 + a1`` users, the ``b`` uniform users, the target);
    ``N - m`` of those, chosen at random, are revealed. What stays is ``m`` reports: the ``M``
    ``Bias`` reports of the users of ``R`` and ``m - M = s`` uniform ones (``s`` = users of ``R``
    reporting 0 or 1), so the share is at most that of "all at 2" in the view ``(h0, h1, h2')``
    with ``h2' ~ Bin(m - s, r) + Bin(s, 1/(k - 2))``, ``r = p / (1 - 2 pbar)``:
    ``sum_j (sum_s w_s (V_s^P - E V_s^Q)(block) L_s(j))_+`` with ``w_s = Bin(m, 2 pbar)(s)``,
    ``V_s`` the law of ``(h0, h1)`` of the target, the ``a0 + a1 + b`` users and ``s`` fair
    0-or-1 reports, ``L_s = Bin(m - s, r) * Bin(s, 1/(k - 2))``. Only the blocks of ``box``
    (``(lo0, hi0, lo1, hi1)``) with ``h0 + h1 <= a0 + a1 + b`` are returned (``up`` is ``nan``
    elsewhere: not computed); every contribution to those blocks comes from cells of the arrays
    (all moves are up), so the error term is the ``s`` outside their window, the laws' dropped
    mass and the underflowed products.
    """
    _, lq, p, q = _probs(k, eps0)
    E = math.exp(eps)
    u = a0 + a1 + b
    rows2 = {1: (q, p, (k - 2) * q), "u": (1.0 / k, 1.0 / k, (k - 2) / k)}
    # every move is up, so the blocks of the box only need the cells below its upper corner
    g0, g1 = min(max(box[1], 0), u), min(max(box[3], 0), u)
    T = _class2(k, eps0, a0, g0, g1, log_tol)
    T = _add_users_fixed(T, a1, rows2[1], (0, 0), 0)
    T = _add_users_fixed(T, b, rows2["u"], (0, 0), 0)
    pa, pb = _target_rows(k, eps0, 2)
    VP = _combine(T.arr, list(pa))[: g0 + 1, : g1 + 1]
    VQ = _combine(T.arr, list(pb))[: g0 + 1, : g1 + 1]
    rel = T.rel + 4.0 * _U
    l2q = math.log(2.0) + lq
    s_lo, lps, tail_s = G.binom_window(m, l2q, math.log1p(-2.0 * q), log_tol - math.log(8.0))
    s_hi = min(s_lo + lps.size - 1, u)
    lo0, hi0, lo1, hi1 = max(box[0], 0), min(box[1], u), max(box[2], 0), min(box[3], u)
    if s_lo > u or lo0 > hi0 or lo1 > hi1:
        return _Blocks((0, 0), [np.full((1, 1), np.nan)] * 2, None, 0.0, -math.inf)
    L = _rex_table(k, eps0, m, s_lo, s_hi)
    rho_L = 2.0 * _REL + (m + 4) * _U
    # V_s by the fair-split recursion (two products and a sum per step), kept on [0, u]^2
    cur_P, cur_Q = VP, VQ
    CP, CQ = [], []
    for s_ in range(s_hi + 1):
        if s_ > 0:
            nP = np.zeros_like(cur_P)
            nP[1:, :] += 0.5 * cur_P[:-1, :]
            nP[:, 1:] += 0.5 * cur_P[:, :-1]
            nQ = np.zeros_like(cur_Q)
            nQ[1:, :] += 0.5 * cur_Q[:-1, :]
            nQ[:, 1:] += 0.5 * cur_Q[:, :-1]
            cur_P, cur_Q = nP, nQ
        if s_ >= s_lo:
            w = math.exp(float(lps[s_ - s_lo]))
            CP.append(w * cur_P[lo0 : hi0 + 1, lo1 : hi1 + 1])
            CQ.append(w * cur_Q[lo0 : hi0 + 1, lo1 : hi1 + 1])
    rho = rel + (1.0 + rel) * 3.0 * _U * (s_hi + 1) + _REL + rho_L + 24.0 * _U
    S = len(CP)
    A = np.array(CP).reshape(S, -1)
    B = np.array(CQ).reshape(S, -1)
    H0 = np.arange(lo0, hi0 + 1)[:, None]
    H1 = np.arange(lo1, hi1 + 1)[None, :]
    tail = (H0 + H1 <= u).ravel()
    ups = []
    for X, Y in ((A, B), (B, A)):
        C = X * (1.0 + rho) - Y * (E * (1.0 - rho))
        Tm = C.T @ L
        marg = (np.abs(X) + E * np.abs(Y)).T @ L
        Tm += marg * ((S + 8) * _U * (1.0 + rho))
        np.maximum(Tm, 0.0, out=Tm)
        up = Tm.sum(axis=1) * (1.0 + (m + 8) * _U)
        up = np.where(tail, up, np.nan)
        ups.append(up.reshape(hi0 - lo0 + 1, hi1 - lo1 + 1))
    err = float(logsumexp([tail_s + 1e-12, T.log_drop, math.log(_TINY * (S + 4) * (A.size + L.size) * 4.0)]))
    return _Blocks((lo0, lo1), ups, None, T.scale, err)


def _log_sum_min(parts: list, mask_body, n_body_lo: int | None, d: int) -> float:
    """``log sum_x min_j (part_j up at x)`` over the union box (a part outside its box counts 0).

    A part whose array holds ``nan`` is computed only where it is finite (``+inf`` elsewhere, in
    and outside its box): its error term covers those blocks only.

    ``parts``: list of ``(_Blocks, use_up)`` where ``use_up`` selects ``up[d]`` (``True``) or
    ``pmass`` (``False``); the first part is only used on blocks with ``h0 + h1 >= n_body_lo``
    (the body; ``None``: everywhere). Computed in logs (no underflow), rounded up at the end.
    """
    lo0 = min(p.lo[0] for p, _ in parts)
    lo1 = min(p.lo[1] for p, _ in parts)
    hi0 = max(p.lo[0] + (p.up[0] if u else p.pmass[0]).shape[0] for p, u in parts)
    hi1 = max(p.lo[1] + (p.up[0] if u else p.pmass[0]).shape[1] for p, u in parts)
    best = np.full((hi0 - lo0, hi1 - lo1), np.inf)
    H0 = np.arange(lo0, hi0)[:, None]
    H1 = np.arange(lo1, hi1)[None, :]
    for i, (p, u) in enumerate(parts):
        a = p.up[d] if u else p.pmass[d]
        full = np.full(best.shape, -np.inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            la = np.where(np.isnan(a), np.inf, np.log(np.where(np.isnan(a), 1.0, a)) + p.scale)
        s0, s1 = p.lo[0] - lo0, p.lo[1] - lo1
        if np.any(np.isnan(a)):  # a part that is only computed on some blocks: +inf elsewhere
            full[:] = np.inf
        full[s0 : s0 + a.shape[0], s1 : s1 + a.shape[1]] = la
        if i == 0 and n_body_lo is not None:
            full = np.where((H0 + H1 >= n_body_lo) | (H0 + H1 == 0), full, np.inf)
        best = np.minimum(best, full)
    vals = best[np.isfinite(best)]
    if vals.size == 0:
        return -math.inf
    return float(logsumexp(vals)) + 4e-13 + (vals.size + 8) * _U


def _tail_log_mass(bl: _Blocks, n_body: int | None, d: int) -> float:
    """Log of the summed block probabilities (``pmass[d]``) of the blocks outside the body (``(0, 0)`` excluded)."""
    if n_body is None:
        return -math.inf
    a = bl.pmass[d]
    H = (bl.lo[0] + np.arange(a.shape[0]))[:, None] + (bl.lo[1] + np.arange(a.shape[1]))[None, :]
    sel = a[(H < n_body) & (H > 0)]
    tot = float(sel.sum())
    return math.log(tot) + bl.scale + 1e-12 if tot > 0 else -math.inf


def reduced_bounds(
    k: int,
    eps0: float,
    a0: int,
    a1: int,
    m: int,
    bs: list[int],
    eps: float,
    log_tol: float,
    use_cr: bool = False,
) -> dict:
    """Log upper bounds ``(forward, reverse)`` of the reduced problem for each ``b`` in ``bs``.

    Reduced problem (module docstring (B2)-(B4)): the target, ``a0`` users at 0, ``a1`` at 1,
    ``m`` users at values of ``R`` (any configuration) and ``b`` uniform users. Per block of
    ``(h0, h1)``: the body value of the configuration "all ``m`` at 2" (blocks with ``N <= m``, or
    every block when ``m = 0``), the excess reveal (REX, the other blocks), the block's
    probability and, with ``use_cr``, the coin reveal (CR), the smallest one; plus the dropped
    masses of the methods used. REX and CR are computed only where the blocks outside the body
    carry a probability above ``e^log_tol`` and ``1e-6`` of the bound (they only help there;
    CR never improved a measured certificate once REX was in, so it is off by default). Returns
    ``{b: (up_fwd, up_rev, low_fwd, low_rev)}`` (``low``: the exact divergences of the dataset
    "``a0`` at 0, ``a1`` at 1, ``m`` at 2, ``b`` uniform" from below; a dataset only for ``b = 0``).
    """
    out = {}
    for b in bs:
        L = others_law3(k, eps0, a0, a1, m, b, log_tol)
        bl = blocks3(L, k, eps0, eps, want_low=b == 0)
        n_body = None if m == 0 else 1 + a0 + a1 + b
        extra: list | None = None
        res = []
        for d in (0, 1):
            base = _log_sum_min([(bl, True), (bl, False)], None, n_body, d)
            val = float(np.logaddexp(base, bl.log_err))
            tail = _tail_log_mass(bl, n_body, d)
            if m > 0 and val > log_tol + 3.0 and tail > max(log_tol, val - 13.8):
                if extra is None:
                    box = (
                        bl.lo[0],
                        bl.lo[0] + bl.up[0].shape[0] - 1,
                        bl.lo[1],
                        bl.lo[1] + bl.up[0].shape[1] - 1,
                    )
                    extra = [rex_blocks(k, eps0, a0, a1, m, b, eps, box, log_tol)]
                    if use_cr:
                        extra.append(cr_blocks(k, eps0, a0, a1, m, [b], eps, log_tol)[b])
                v2 = _log_sum_min([(bl, True), (bl, False)] + [(x, True) for x in extra], None, n_body, d)
                v2 = float(logsumexp([v2, bl.log_err] + [x.log_err for x in extra]))
                val = min(val, v2)
            res.append(min(val, 0.0))
        out[b] = (res[0], res[1], bl.low[0], bl.low[1])
    return out


# ---------------------------------------------------------------------------------------------
# boxes of datasets and the branch and bound
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Box:
    """Datasets with ``a0 <= c0 <= b0``, ``a1 <= c1 <= b1`` and ``c0 + c1 <= n - 1`` (both directions).

    Attributes:
        a0, b0, a1, b1: The ranges of ``c0`` (other users at the target's value in ``D``) and
            ``c1`` (at its value in ``D'``).
        cells: Left ends of the cells of ``B`` (free users' uniform coins) used; ``()`` for a leaf.
        log_bound: Log of the certified bound on ``max(H(P || Q), H(Q || P))`` over the box.
    """

    a0: int
    b0: int
    a1: int
    b1: int
    cells: tuple[int, ...]
    log_bound: float


class Engine:
    """Constants, caches and counters of one ``(k, eps0, n)`` and truncation level."""

    def __init__(self, k: int, eps0: float, n: int, log_level: float, max_cells: int = 6) -> None:
        self.k, self.eps0, self.n = k, eps0, n
        self.log_level = log_level
        self.log_tol = log_level - 12.0
        lp, lq, _, _ = _probs(k, eps0)
        self.log_g = math.log(k) + lq
        self.log_1mg = lp + math.log(-math.expm1(-eps0))
        self.max_cells = max_cells
        self.evaluations = 0
        self._cache: dict = {}

    def geometry(self, a0: int, b0: int, a1: int, b1: int) -> tuple[int, int]:
        """``(m_lo, f)``: users of ``R`` kept and free users of the box."""
        top = min(b0 + b1, self.n - 1)
        m_lo = self.n - 1 - top
        return m_lo, self.n - 1 - a0 - a1 - m_lo

    def default_cells(self, f: int, count: int | None = None) -> tuple[int, ...]:
        """Left ends of ``count`` (default ``max_cells``) equal cells of ``B``'s window."""
        count = self.max_cells if count is None else count
        lo, lpb, _ = G.binom_window(f, self.log_g, self.log_1mg, self.log_tol - math.log(4.0))
        hi = lo + lpb.size - 1
        if hi - lo + 1 <= count:
            return tuple(range(lo, hi + 1))
        return tuple(sorted({int(round(x)) for x in np.linspace(lo, hi + 1, count + 1)[:-1]}))

    def reduced(self, a0: int, a1: int, m: int, bs: tuple[int, ...], eps: float) -> dict:
        """:func:`reduced_bounds` for each ``b`` in ``bs`` (cached per ``b``)."""
        for b in bs:  # one b at a time: the value of a cell does not depend on the others computed
            key = (a0, a1, m, b, eps)
            if key not in self._cache:
                self.evaluations += 1
                self._cache[key] = reduced_bounds(self.k, self.eps0, a0, a1, m, [b], eps, self.log_tol)[b]
        return {b: self._cache[(a0, a1, m, b, eps)] for b in bs}

    def box_bound(
        self, a0: int, b0: int, a1: int, b1: int, eps: float, cells=None
    ) -> tuple[float, tuple, tuple | None]:
        """``(log bound, cells, leaf lower bounds or None)`` of a box (module docstring (B5))."""
        m_lo, f = self.geometry(a0, b0, a1, b1)
        if f == 0:
            r = self.reduced(a0, a1, m_lo, (0,), eps)[0]
            return max(r[0], r[1]), (), (r[2], r[3])
        lo, lpb, ltail = G.binom_window(f, self.log_g, self.log_1mg, self.log_tol - math.log(4.0))
        hi = lo + lpb.size - 1
        # the cells must start at the window's start and lie in it (a recorded list is sanitised)
        cells = tuple(
            sorted(
                {int(c) for c in (cells if cells is not None else self.default_cells(f)) if lo <= c <= hi}
                | {lo}
            )
        )
        r = self.reduced(a0, a1, m_lo, cells, eps)
        res = []
        for d in (0, 1):
            terms = [ltail]
            for j, s in enumerate(cells):
                e = cells[j + 1] if j + 1 < len(cells) else lo + lpb.size
                wgt = float(logsumexp(lpb[s - lo : e - lo])) + math.log1p(1e-9)
                terms.append(wgt + r[s][d])
            res.append(min(float(logsumexp(np.array(terms))) + 4.0 * len(terms) * _U, 0.0))
        return max(res), cells, None


def _split(bx: tuple[int, int, int, int], n: int) -> list[tuple[int, int, int, int]]:
    """The two halves of a box ``(a0, b0, a1, b1)`` along its longer side, clipped to the
    half-triangle (``c1 <= c0``, ``c0 + c1 <= n - 1``; a child without a dataset is dropped): their
    union holds every dataset of the box."""
    a0, b0, a1, b1 = bx
    b0 = min(b0, n - 1 - a1)
    b1 = min(b1, b0, n - 1 - a0)
    if b0 - a0 >= b1 - a1:
        mid = (a0 + b0) // 2
        kids = [(a0, mid, a1, b1), (mid + 1, b0, a1, b1)]
    else:
        mid = (a1 + b1) // 2
        kids = [(a0, b0, a1, mid), (a0, b0, mid + 1, b1)]
    out = []
    for c in kids:
        x0, y0, x1, y1 = c
        y0 = min(y0, n - 1 - x1)
        y1 = min(y1, y0, n - 1 - x0)
        if x0 <= y0 and x1 <= y1 and x1 <= y0 and x0 + x1 <= n - 1:
            out.append((x0, y0, x1, y1))
    return out


class Search:
    """Best-first branch and bound over boxes of the half-triangle ``{c1 <= c0, c0 + c1 <= n - 1}``.

    :meth:`run` splits the open box with the largest bound until every bound is ``<= log_T``
    (``True``), or a leaf stays above ``log_T`` (``False``, ``reason="leaf"``), or the budget runs
    out (``reason="budget"``). The state is kept between calls: a larger threshold continues with
    the same bounds; a larger ``eps`` (:meth:`move_eps`) keeps the closed boxes (the divergence is
    non-increasing in eps, so a bound at a smaller eps stays valid) and re-evaluates the open ones.
    ``closed + open`` always covers the half-triangle, so the largest bound is certified.
    """

    def __init__(self, eng: Engine, eps: float) -> None:
        self.eng, self.eps = eng, eps
        self.closed: list[Box] = []
        self.heap: list = []
        self.best: float = -math.inf
        self.best_leaf: tuple[int, int, int] | None = None
        self.reason = ""
        self.top_leaf: tuple[int, int] | None = None
        n = eng.n
        for c in _split((0, n - 1, 0, (n - 1) // 2), n):
            for g in _split(c, n):
                self._push(g)

    def _push(self, bx, fine: bool = False) -> None:
        """Evaluate a box (first with :data:`COARSE_CELLS` cells of ``B``; ``fine``: ``max_cells``)."""
        eng = self.eng
        _, f = eng.geometry(*bx)
        cells = None if f == 0 else eng.default_cells(f, None if fine else min(COARSE_CELLS, eng.max_cells))
        val, cells, low = eng.box_bound(bx[0], bx[1], bx[2], bx[3], self.eps, cells)
        if low is not None:
            for d in (0, 1):
                if low[d] > self.best:
                    self.best = low[d]
                    self.best_leaf = (bx[0], bx[2], d)
        coarse = f > 0 and not fine and len(cells) < len(eng.default_cells(f))
        heapq.heappush(self.heap, (-val, bx, Box(bx[0], bx[1], bx[2], bx[3], cells, val), coarse))

    def move_eps(self, eps: float) -> None:
        """Continue at a larger ``eps``: the open boxes are re-evaluated, the closed ones kept."""
        self.eps = eps
        old = [(h[1], not h[3]) for h in self.heap]
        self.heap = []
        self.best, self.best_leaf = -math.inf, None
        for bx, fine in old:
            self._push(bx, fine)

    def boxes(self) -> list[Box]:
        return self.closed + [h[2] for h in self.heap]

    def top(self) -> float:
        return max(b.log_bound for b in self.boxes())

    def run(self, log_T: float, max_evals: int, deadline: float) -> bool:
        n = self.eng.n
        while self.heap:
            val, bx, b, coarse = self.heap[0]
            if -val <= log_T:
                self.closed.extend(h[2] for h in self.heap)
                self.heap = []
                break
            if b.a0 == b.b0 and b.a1 == b.b1:
                self.reason, self.top_leaf = "leaf", (b.a0, b.a1)
                return False
            if self.eng.evaluations >= max_evals or time.monotonic() > deadline:
                self.reason = "budget"
                return False
            heapq.heappop(self.heap)
            if coarse:  # refine the cells of B before splitting
                self._push(bx, True)
                continue
            for c in _split(bx, n):
                self._push(c)
        self.reason = ""
        return True


def _leaf_low(eng: Engine, c0: int, c1: int, d: int, eps: float) -> float:
    """Exact (lower) log divergence of the dataset ``c0`` at 0, ``c1`` at 1, the rest at 2, direction ``d``."""
    r = eng.reduced(c0, c1, eng.n - 1 - c0 - c1, (0,), eps)[0]
    return r[2 + d]


def _witness(n: int, k: int, c0: int, c1: int, d: int) -> tuple[int, ...]:
    """Counts of the other users (target ``0 -> 1``) of the leaf ``(c0, c1)`` in direction ``d``."""
    cnt = [0] * k
    cnt[0], cnt[1] = (c0, c1) if d == 0 else (c1, c0)
    cnt[2] = n - 1 - c0 - c1
    return tuple(cnt)


def _leaf_epsilon(
    eng: Engine, c0: int, c1: int, d: int, log_delta: float, hi: float, lo: float = 0.0
) -> float:
    """Largest eps (bisection in ``[lo, hi]``, rounded down) where the leaf's exact log divergence
    exceeds ``log_delta`` (``lo`` when it does not exceed it there)."""
    if not _leaf_low(eng, c0, c1, d, lo) > log_delta:
        return lo
    for _ in range(60):
        if hi - lo <= 1e-9 * max(hi, 1e-300):
            break
        mid = 0.5 * (lo + hi)
        if _leaf_low(eng, c0, c1, d, mid) > log_delta:
            lo = mid
        else:
            hi = mid
    return lo


@dataclass(frozen=True)
class BoxSearch:
    """Outcome of :func:`certify_boxes` (the fields a :mod:`worst_case_multi` certificate records).

    ``ok``: the cover certifies ``log_delta`` at ``eps`` (every box bound at most it);
    ``boxes``: the cover; ``witness`` / ``exhibited_log_delta`` / ``epsilon_lower``: the best leaf.
    """

    ok: bool
    eps: float
    log_delta: float
    epsilon_lower: float
    exhibited_log_delta: float
    witness: tuple[int, ...]
    boxes: tuple[Box, ...]
    log_level: float
    evaluations: int


def certify_boxes(
    k: int,
    eps0: float,
    n: int,
    *,
    eps: float | None = None,
    log_delta: float | None = None,
    tol: float = 1e-4,
    max_evals: int = 4000,
    max_seconds: float = 60.0,
    max_cells: int = 6,
    e_hint: float | None = None,
) -> BoxSearch:
    """The branch and bound over boxes of ``(c0, c1)`` (module docstring (B5)-(B6)).

    ``eps`` given: certify ``delta(eps)`` within a relative ``tol`` of the best leaf (the cover's
    largest bound is the certified value, also when the budget runs out). ``log_delta`` given:
    find an ``eps`` (``tol / 2`` relative above the exhibited epsilon, moved up where a leaf's
    bound stays above) where the cover certifies ``log_delta``; ``ok=False`` when the budget runs
    out first. The witness is the best leaf met ("``c0`` at 0, ``c1`` at 1, the rest at 2",
    exact); :func:`~shuffle_accounting.shuffled_krr.worst_case_multi.certify_multi` is the
    product entry point (it also tries the type bounds and keeps the smaller certificate).

    Args:
        k: Number of categories, integer ``>= 4``.
        eps0: Local privacy parameter, ``VALID_EPS0[0] <= eps0 <= VALID_EPS0[1]`` of
            :mod:`~shuffle_accounting.shuffled_krr.worst_case_multi` (``1e-4 .. 40``).
        n: Number of users, integer ``>= 2``.
        eps: ``eps >= 0`` (keyword only), to certify ``delta(eps)``.
        log_delta: ``log delta < 0`` (keyword only), to certify ``epsilon(delta)``.
        tol: Target relative gap, ``0 < tol <= 1`` (keyword only).
        max_evals: Budget of evaluations (cells of ``B``), integer ``>= 1`` (keyword only).
        max_seconds: Time budget of the search loop, ``>= 0`` (keyword only).
        max_cells: Cells of ``B`` per box after refinement, integer ``>= 1`` (keyword only).
        e_hint: The exhibited epsilon of the seeds "all others at 2 / at 0" when the caller knows
            it (saves their bisections; keyword only). Only a hint: where the best seed is not
            above ``log_delta`` just below it, the seeds are bisected in full (the reported
            ``epsilon_lower`` is always exhibited by the witness).

    Returns:
        A :class:`BoxSearch` (its ``boxes`` cover the half-triangle; ``log_delta`` their largest
        bound at ``eps``).

    Raises:
        ParameterError: On invalid inputs (naming the parameter), or if both or neither of
            ``eps`` and ``log_delta`` are given.

    Example:
        >>> r = certify_boxes(5, 2.0, 15, log_delta=math.log(1e-3), tol=1e-3)
        >>> bool(r.ok and r.epsilon_lower <= r.eps <= r.epsilon_lower * (1 + 1e-3))
        True
    """
    k = check_int("k", k, minimum=4)
    eps0 = check_real("eps0", eps0, low=1e-4, high=40.0)
    n = check_int("n", n, minimum=2)
    if (eps is None) == (log_delta is None):
        raise ParameterError(
            f"give exactly one of eps= and log_delta=, got eps={eps!r}, log_delta={log_delta!r}"
        )
    if eps is not None:
        eps = check_real("eps", eps, low=0.0)
    if log_delta is not None:
        log_delta = check_real("log_delta", log_delta, high=0.0, high_open=True)
    tol = check_real("tol", tol, low=0.0, low_open=True, high=1.0)
    max_evals = check_int("max_evals", max_evals, minimum=1)
    max_seconds = check_real("max_seconds", max_seconds, low=0.0)
    max_cells = check_int("max_cells", max_cells, minimum=1)
    if e_hint is not None:
        e_hint = check_real("e_hint", e_hint, low=0.0)
    deadline = time.monotonic() + max_seconds
    seeds = [(0, 0, 0), (n - 1, 0, 0), (n - 1, 0, 1)]
    if eps is not None:
        eng0 = Engine(k, eps0, n, -60.0, max_cells)
        ex = max(_leaf_low(eng0, *s_, eps) for s_ in seeds)
        level = min(-1.0, ex) if ex > -math.inf else -60.0
        eng = Engine(k, eps0, n, level, max_cells)
        best = max(seeds, key=lambda s_: _leaf_low(eng, s_[0], s_[1], s_[2], eps))
        ex = _leaf_low(eng, *best, eps)
        T = ex + math.log1p(tol)
        srch = Search(eng, eps)
        while True:
            ok = srch.run(T, max_evals, deadline)
            if srch.best > ex and srch.best_leaf is not None:
                ex, best = srch.best, srch.best_leaf
            if ok or srch.reason == "budget":
                break
            T = max(ex + math.log1p(tol), srch.top())  # a loose leaf: its bound is the certified value
        return BoxSearch(
            bool(ok), eps, srch.top(), 0.0, ex, _witness(n, k, *best), tuple(srch.boxes()), eng.log_level,
            eng.evaluations,
        )  # fmt: skip
    assert log_delta is not None
    eng = Engine(k, eps0, n, log_delta, max_cells)
    hinted = False
    if e_hint is not None and 0.0 < e_hint < eps0:  # the seeds' exhibited epsilon is known: refine the best
        best = max(seeds, key=lambda s_: _leaf_low(eng, s_[0], s_[1], s_[2], e_hint))
        h_lo = e_hint * (1.0 - 1e-6)
        # the bisection's lower end must be exhibited (the leaf above log_delta there): a hint
        # above the seeds' true exhibited epsilon falls back to the full bisection
        if _leaf_low(eng, *best, h_lo) > log_delta:
            e_low = _leaf_epsilon(eng, *best, log_delta, min(eps0, e_hint * (1.0 + 1e-6)), h_lo)
            hinted = True
    if not hinted:
        e_low, best = max((_leaf_epsilon(eng, *s_, log_delta, eps0), s_) for s_ in seeds)
    ex = _leaf_low(eng, *best, e_low)
    e_t = min(e_low * (1.0 + 0.5 * tol), eps0) if e_low > 0 else min(1e-6, eps0)
    srch = Search(eng, e_t)
    while True:
        ok = srch.run(log_delta, max_evals, deadline)
        if srch.best > log_delta and srch.best_leaf is not None:  # a worse dataset: move the witness
            cand = srch.best_leaf
            e_c = _leaf_epsilon(eng, *cand, log_delta, eps0)
            if e_c > e_low:
                best, e_low = cand, e_c
                ex = _leaf_low(eng, *best, e_low)
        if ok:
            return BoxSearch(
                True, e_t, srch.top(), e_low, ex, _witness(n, k, *best), tuple(srch.boxes()), eng.log_level,
                eng.evaluations,
            )  # fmt: skip
        if srch.reason == "budget" or e_t >= eps0:
            return BoxSearch(
                False, e_t, 0.0, e_low, ex, _witness(n, k, *best), (), eng.log_level, eng.evaluations
            )
        # a leaf above log_delta: move eps to where that leaf's bound is below it (bisection on the
        # bound, non-increasing in eps), and at least tol / 2 above the exhibited epsilon
        assert srch.top_leaf is not None
        c0, c1 = srch.top_leaf
        lo_e, hi_e = e_t, eps0
        for _ in range(40):
            if hi_e - lo_e <= 0.25 * tol * e_low or time.monotonic() > deadline:
                break
            mid = 0.5 * (lo_e + hi_e)
            if eng.box_bound(c0, c0, c1, c1, mid)[0] <= log_delta:
                hi_e = mid
            else:
                lo_e = mid
        e_t = max(hi_e, e_low * (1.0 + 0.5 * tol))
        srch.move_eps(e_t)


def exact_leaf_log_delta(eng: Engine, c0: int, c1: int, d: int, eps: float) -> float:
    """Exact (lower) log divergence of the dataset "``c0`` others at 0, ``c1`` at 1, the rest at 2", direction ``d``.

    ``d = 0``: ``H(P || Q)``, ``1``: ``H(Q || P)`` (target ``0 -> 1``). The 3-D law of
    :func:`others_law3` is the exact sufficient statistic of that dataset (the values ``3..k-1``
    are held by nobody: their split is ancillary, as in :mod:`~shuffle_accounting.shuffled_krr.exact`).
    """
    return _leaf_low(eng, c0, c1, d, eps)


def covers(n: int, boxes) -> bool:
    """Whether ``boxes`` cover every ``(c0, c1)`` with ``c1 <= c0`` and ``c0 + c1 <= n - 1`` (overlaps allowed)."""
    if n > 20000:  # pragma: no cover - the search is not run there
        return False
    seen = np.zeros((n, n), dtype=bool)
    for b in boxes:
        if b.a0 < 0 or b.a1 < 0 or b.a0 > b.b0 or b.a1 > b.b1:
            return False
        seen[b.a0 : b.b0 + 1, b.a1 : b.b1 + 1] = True
    c0 = np.arange(n)[:, None]
    c1 = np.arange(n)[None, :]
    need = (c1 <= c0) & (c0 + c1 <= n - 1)
    return bool(np.all(seen[need]))
