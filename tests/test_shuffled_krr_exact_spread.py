"""dataset_delta for any dataset at scale (issue 11 item 5): the general certified bracket.

Every route of ``_krr_spread`` (lower: merged output L2, linear statistics L1; upper: coins of the
users at values >= 2 revealed U2, all but one class revealed U1) against the exact full-histogram
enumeration, the proofs' two directions in exact rational arithmetic, the public API beyond the
exact limits, the work budget and bad inputs.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest

from shuffle_accounting._validation import ParameterError, WorkBudgetExceeded
from shuffle_accounting.shuffled_krr import _krr_grid as G
from shuffle_accounting.shuffled_krr import _krr_spread as S
from shuffle_accounting.shuffled_krr import exact as X
from shuffle_accounting.shuffled_krr.exact import dataset_delta, dataset_log_delta, dataset_log_delta_bounds

from _brute import hockey_both, random_spread_cases


def _exact(k, eps0, counts, eps):
    lp, lq = X.histogram_log_pq(k, eps0, tuple(counts))
    f = float(X.log_hockey_sorted(*X.pld_atoms(lp, lq, eps0), np.array([eps]))[0])
    r = float(X.log_hockey_sorted(*X.pld_atoms(lq, lp, eps0), np.array([eps]))[0])
    return max(f, r)


def _le(a, b):
    """``a <= b`` up to the exact enumeration's own rounding (about 1e-12 relative)."""
    return a == -math.inf or a <= b + 1e-10 * (1.0 + abs(b))


# ---------------------------------------------------------------------------------------------
# the mathematics, in exact rational arithmetic (independent of the float code)
# ---------------------------------------------------------------------------------------------


def _law(rows):
    d = {(0,) * len(rows[0]): F(1)} if rows else {(): F(1)}
    for r in rows:
        nd = {}
        for h, w in d.items():
            for y, q in enumerate(r):
                if q:
                    h2 = h[:y] + (h[y] + 1,) + h[y + 1 :]
                    nd[h2] = nd.get(h2, 0) + w * q
        d = nd
    return d


def _project(P, fn):
    out = {}
    for h, w in P.items():
        out[fn(h)] = out.get(fn(h), 0) + w
    return out


@pytest.mark.parametrize(
    "k,counts,a,E",
    [
        (4, (1, 1, 1, 1), F(5), F(11, 5)),
        (5, (1, 2, 2, 1, 0), F(9), F(11, 5)),
        (4, (2, 0, 1, 2), F(3), F(1)),
        (6, (1, 1, 0, 1, 1, 1), F(9), F(6, 5)),
        (5, (0, 0, 2, 1, 1), F(20), F(3, 2)),
        (3, (2, 1, 2), F(4), F(7, 5)),
    ],
)
def test_proof_directions_in_exact_rationals(k, counts, a, E):
    """lower (merged output, h0 - h1) <= exact <= upper (U2: E_B over revealed coins; U1: all but
    the class at 0 revealed), each direction, with e^eps0 = a and e^eps = E rational; and D(B) is
    non-increasing in B (step (v) of the proof)."""
    pb = F(1) / (a + k - 1)
    p = a * pb
    gam = k * pb
    unif = [F(1, k)] * k

    def row(x):
        return [p if y == x else pb for y in range(k)]

    others = [row(x) for x in range(k) for _ in range(counts[x])]
    P, Q = _law(others + [row(0)]), _law(others + [row(1)])
    ex = hockey_both(P, Q, E)
    for fn in (lambda h: (h[0], h[1]), lambda h: h[0] - h[1]):
        lo = hockey_both(_project(P, fn), _project(Q, fn), E)
        assert lo[0] <= ex[0] and lo[1] <= ex[1]

    def reveal_bound(kept, m):
        tot, prev = [F(0), F(0)], None
        for b in range(m + 1):
            base = kept + [unif] * b
            d = hockey_both(_law(base + [row(0)]), _law(base + [row(1)]), E)
            if prev is not None:
                assert d[0] <= prev[0] and d[1] <= prev[1]  # non-increasing in B
            prev = d
            w = math.comb(m, b) * gam**b * (1 - gam) ** (m - b)
            tot = [tot[0] + w * d[0], tot[1] + w * d[1]]
        return tot

    c0, c1 = counts[0], counts[1]
    u2 = reveal_bound([row(0)] * c0 + [row(1)] * c1, sum(counts[2:]))
    u1 = reveal_bound([row(0)] * c0, sum(counts) - c0)
    for u in (u2, u1):
        assert ex[0] <= u[0] and ex[1] <= u[1]


# ---------------------------------------------------------------------------------------------
# each route against the exact enumeration (floats)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", random_spread_cases(5, 40))
def test_every_route_brackets_the_exact_enumeration(case):
    k, counts, eps0, eps = case
    ex = _exact(k, eps0, counts, eps)
    c3 = (counts[0], counts[1], sum(counts[2:]))
    n1 = sum(c3)
    t = -80.0
    lows = [
        S.linear_lower(k, eps0, c3, a, b, [eps], t)[0]
        for a, b in [(1, 1), (2, 1), (1, 3), (1, 9), (1, 0), (0, 1), (7, 10), (13, 9)]
    ]
    lows.append(S.merged_lower(k, eps0, c3, [eps], t, 1e12)[0][0])
    for lo in lows:
        assert _le(lo, ex), (case, lows, ex)
    f2, r2 = S.reveal2d_upper(k, eps0, c3, [eps], t, 1e12, 4096)[0]
    f0, r0 = S.reveal1d_upper(k, eps0, c3[0], n1 - c3[0], [eps], t, 40)
    f1, r1 = S.reveal1d_upper(k, eps0, c3[1], n1 - c3[1], [eps], t, 40)
    for up in (max(f2[0], r2[0]), max(f0[0], r0[0]), max(r1[0], f1[0])):
        assert _le(ex, up), (case, ex, up)
    lo, up, _ = S.spread_log_bounds(k, eps0, counts, [eps], t, 1e12)
    assert _le(lo[0], ex) and _le(ex, up[0])
    # the bracket is at least as tight as L1(1, 1) and U2 (both always fit here)
    assert lo[0] >= lows[0] - 1e-9 * (1 + abs(lows[0])) and up[0] <= max(f2[0], r2[0]) + 1e-9 * (
        1 + abs(up[0])
    )


def test_two_dimensional_routes_are_tight_where_little_is_revealed():
    """U2 is exact when no user holds a value >= 2 (B = 0) and L2 is exact when nobody holds a
    value >= 2 either (nothing merged that matters): the bracket is then ~1e-9 wide."""
    for k, counts, eps0, eps in [(4, (5, 3, 0, 0), 1.0, 0.2), (6, (2, 7, 0, 0, 0, 0), 2.0, 0.5)]:
        ex = _exact(k, eps0, counts, eps)
        lo, up, _ = S.spread_log_bounds(k, eps0, counts, [eps], -80.0, 1e12)
        assert lo[0] <= ex + 1e-10 <= up[0] + 2e-10 and up[0] - lo[0] < 1e-7


def test_mid_size_datasets_against_the_exact_enumeration():
    """n = 40, k = 4 with the others at four values (exact enumeration of four bins still runs):
    the bracket holds and is narrow; eps near eps0 too."""
    for counts, eps0, eps in [
        ((10, 9, 10, 10), 1.0, 0.2),
        ((3, 20, 6, 10), 2.0, 0.6),
        ((0, 0, 19, 20), 1.5, 0.3),
        ((12, 1, 26, 0), 0.8, 0.79),
    ]:
        ex = _exact(4, eps0, counts, eps)
        lo, up, _ = S.spread_log_bounds(4, eps0, counts, [eps], -85.0, 1e12)
        assert _le(lo[0], ex) and _le(ex, up[0])
        if eps < 0.7:
            assert up[0] - lo[0] < 0.05


def test_coarse_truncation_is_counted():
    """A shallow truncation level drops real mass: the routes stay on their sides."""
    k, counts, eps0, eps = 5, (4, 3, 5, 2, 1), 1.0, 0.1
    ex = _exact(k, eps0, counts, eps)
    c3 = (4, 3, 8)
    for t in (-6.0, -12.0):
        assert _le(S.linear_lower(k, eps0, c3, 1, 1, [eps], t)[0], ex)
        assert _le(S.merged_lower(k, eps0, c3, [eps], t, 1e12)[0][0], ex)
        f2, r2 = S.reveal2d_upper(k, eps0, c3, [eps], t, 1e12, 8)[0]
        f0, r0 = S.reveal1d_upper(k, eps0, 4, 11, [eps], t, 3)
        assert _le(ex, max(f2[0], r2[0])) and _le(ex, max(f0[0], r0[0]))


def _nj_law(users, exact=False):
    """The ``(N, j)`` law of independent users, each ``(w00, w11, w10)`` (moves ``(0, 0)``,
    ``(1, 1)``, ``(1, 0)``), by explicit convolution: a dict in exact arithmetic, else an array."""
    if exact:
        law = {(0, 0): F(1)}
        for w in users:
            nl = {}
            for (a, b), x in law.items():
                for (da, db), q in zip(((0, 0), (1, 1), (1, 0)), w):
                    nl[(a + da, b + db)] = nl.get((a + da, b + db), 0) + x * q
            law = nl
        return law
    law = np.ones((1, 1))
    for w00, w11, w10 in users:
        R, C = law.shape
        new = np.zeros((R + 1, C + 1))
        new[:-1, :-1] += w00 * law
        new[1:, 1:] += w11 * law
        new[1:, :-1] += w10 * law
        law = new
    return law


def test_coins_decomposition_in_exact_rationals():
    """(*) of _krr_grid.pivot_coins_grid: a pivot structure (pivot users and a uniform pool) plus
    ``c_d`` users at ``d`` equals the mixture over ``F ~ Bin(c_d, 1 - gamma)`` truthful users
    (moved by ``(F, F)``) of the pivot structure with ``c_d - F`` more pool users; k-RR's class
    at ``d`` is ``(1 - gamma) delta_d + gamma * uniform``. Exact rationals, k = 4 and k = 3."""
    from math import comb

    for k, pbar, c_v, pool, c_d in [(4, F(1, 10), 3, 2, 3), (3, F(1, 5), 2, 1, 4), (4, F(1, 8), 0, 0, 3)]:
        p = 1 - (k - 1) * pbar
        gamma = k * pbar
        r = F(1, k - 1)
        qv, qu = (k - 1) * pbar, F(k - 1, k)
        pivot_u = (1 - qv, qv * r, qv * (1 - r))
        pool_u = (1 - qu, qu * r, qu * (1 - r))
        d_u = (pbar, p, (k - 2) * pbar)  # a k-RR user at d: reports v, d, o
        assert d_u == tuple((1 - gamma) * x + gamma * y for x, y in zip((0, 1, 0), pool_u))
        whole = _nj_law([pivot_u] * c_v + [pool_u] * pool + [d_u] * c_d, exact=True)
        mix: dict = {}
        for f in range(c_d + 1):
            wf = comb(c_d, f) * (1 - gamma) ** f * gamma ** (c_d - f)
            for (a, b), x in _nj_law([pivot_u] * c_v + [pool_u] * (pool + c_d - f), exact=True).items():
                mix[(a + f, b + f)] = mix.get((a + f, b + f), 0) + wf * x
        assert {h: x for h, x in mix.items() if x} == {h: x for h, x in whole.items() if x}


@pytest.mark.parametrize(
    "c_v, qv, pool, k, c_d, eps0, t",
    [
        (30, 0.6, 5, 4, 20, 1.0, -60.0),
        (50, 0.5, 0, 10, 80, 2.0, -60.0),
        (40, 0.3, 10, 3, 60, 0.5, -8.0),  # shallow: real mass dropped and counted
        (100, 0.55, 20, 10, 150, 2.0, -12.0),
        (0, 0.5, 3, 5, 40, 1.0, -40.0),  # no pivot users
        (20, 0.5, 0, 4, 0, 1.0, -40.0),  # no class at d
        (200, 0.5, 30, 10, 250, 2.0, -6.0),  # rows of N skipped with real mass (counted)
    ],
)
def test_pivot_coins_grid_error_model(c_v, qv, pool, k, c_d, eps0, t, monkeypatch):
    """The :class:`_krr_grid.Grid` model of pivot_coins_grid against the explicit convolution:
    computed (1 - rel) <= true on the rectangle, and the excess over computed (1 + rel) sums to
    at most the dropped mass (which includes the rows of ``N`` never computed: in the last case
    fewer than 0.8 of the rows its sliced band spans are computed, shown by a spy on
    ``coins_sum``)."""
    lp = -math.log1p((k - 1) * math.exp(-eps0))
    pbar = math.exp(lp - eps0)
    gamma = k * pbar
    qu, r = (k - 1) / k, 1.0 / (k - 1)
    cvl = G.law_from_binom(c_v, math.log(qv), math.log1p(-qv), t)
    seen: list = []
    orig = G.coins_sum

    def spy(A, B, rows=None):
        seen.append((A.shape[0] + A.shape[1] - 1, rows))
        return orig(A, B, rows)

    monkeypatch.setattr(G, "coins_sum", spy)
    g = G.pivot_coins_grid(
        cvl, pool, c_d, math.log1p(-gamma), math.log(gamma), math.log(qu), -math.log(k), -math.log(k - 1),
        math.log1p(-r), t,
    )  # fmt: skip
    if c_v == 200:
        band, (r0, r1) = seen[0]
        assert r1 - r0 < 0.8 * band
    un = gamma
    ex = _nj_law(
        [(1 - qv, qv * r, qv * (1 - r))] * c_v
        + [(1 - qu, qu * r, qu * (1 - r))] * pool
        + [(un * (1 - qu), 1 - gamma + un * qu * r, un * qu * (1 - r))] * c_d
    )
    R, C = g.arr.shape
    comp = np.zeros((max(ex.shape[0], g.n_lo + R), max(ex.shape[1], g.j_lo + C)))
    comp[g.n_lo : g.n_lo + R, g.j_lo : g.j_lo + C] = g.arr * math.exp(g.scale)
    comp = comp[: ex.shape[0], : ex.shape[1]]
    assert np.sum(np.maximum(ex - comp * (1 + g.rel), 0.0)) <= math.exp(g.log_drop) * (1 + 1e-9)
    assert np.all(comp * (1 - g.rel) <= ex * (1 + 1e-13) + 1e-300)
    assert g.log_drop <= t + 1.0  # the windows and the trim stay within the level asked


@pytest.mark.parametrize("case", [c for c in random_spread_cases(7, 60) if min(c[1][0], c[1][1]) > 0][:12])
def test_u2_by_coins_matches_the_other_build_and_the_enumeration(case):
    """U2 with the smaller class added by its coins or by convolution: the same value (both
    bounds of one quantity, within their error terms) and above the exact enumeration."""
    k, counts, eps0, eps = case
    c3 = (counts[0], counts[1], sum(counts[2:]))
    ex = _exact(k, eps0, counts, eps)
    a = S.reveal2d_upper(k, eps0, c3, [eps], -80.0, 1e12, 64, build="add")[0]
    b = S.reveal2d_upper(k, eps0, c3, [eps], -80.0, 1e12, 64, build="coins")[0]
    for x, y in zip(a, b):
        assert abs(x[0] - y[0]) < 1e-7 * (1 + abs(x[0]))
    assert _le(ex, max(b[0][0], b[1][0]))


def test_reveal2d_build_is_validated():
    with pytest.raises(ValueError, match="build must be"):
        S.reveal2d_upper(4, 1.0, (5, 3, 4), [0.1], -40.0, 1e9, 8, build="fft")
    with pytest.raises(ValueError, match="sweep must be 'auto', 'full', 'core' or 'builds', got 'half'"):
        S.reveal2d_upper(4, 1.0, (5, 3, 4), [0.1], -40.0, 1e9, 8, sweep="half")


@pytest.mark.parametrize(
    "k, counts, eps0, eps",
    [
        (4, (10, 5, 15, 9), 1.0, 0.1),
        (4, (3, 12, 30, 4), 2.0, 0.4),
        (5, (4, 2, 8, 5, 0), 0.7, 0.05),
        (4, (12, 1, 26, 0), 0.8, 0.6),
    ],
)
def test_u2_sweep_plans_are_ordered_and_sound(k, counts, eps0, eps):
    """U2 (v): ``D`` is non-increasing in ``B``, so a group of cells may share the bound at its
    lowest value. Every stop evaluated ("full") <= the cells above the core merged ("auto": one
    build, or two when clearly cheaper) <= the cells below it merged too ("core", a second build
    at the core's start, unless that share is too large: the last case), all three above the
    exact enumeration (n = 20 - 50), and the merged plans within 1e-3 in log of the full one. A
    plan that bounded the lower cells by the core's start (too small) would fall below "full"."""
    c3 = (counts[0], counts[1], sum(counts[2:]))
    lg = math.log(k) - math.log1p((k - 1) * math.exp(-eps0)) - eps0  # log gamma, gamma = k pbar
    stops = S.b_stops(c3[2], k, eps0, -80.0, 4096)[0]
    assert S.core_range(stops, c3[2], lg)[0] > 0  # the core starts above the window's bottom
    ex = _exact(k, eps0, counts, eps)
    vals = {}
    for sweep in ("full", "auto", "core"):
        f, r = S.reveal2d_upper(k, eps0, c3, [eps], -80.0, 1e12, 4096, sweep=sweep)[0]
        vals[sweep] = max(f[0], r[0])
        assert _le(ex, vals[sweep])
    tol = 1e-7 * (1 + abs(vals["full"]))  # grids built directly or swept: two bounds of one D
    assert vals["full"] <= vals["auto"] + tol <= vals["core"] + 2 * tol
    assert vals["core"] - vals["full"] < 1e-3
    if counts == (10, 5, 15, 9):  # here the lower cells do share the bottom's bound (measured)
        assert vals["core"] > vals["full"] + 1e-7


def test_u2_core_plan_splits_a_steep_lower_group():
    """Where the cells below the core, bounded at the window's bottom, hold too large a share,
    the core plan builds the law once more at 6 sd below the mean and sweeps only from there (the
    cells below that point keep the bottom's bound): the trace shows the split, and the value
    stays between the every-stop value and that value + 1e-3 (k = 4, n = 300, counts
    proportional to 1 / (j + 1))."""
    k, eps0, c3, eps = 4, 1.0, (146, 71, 82), [0.1]
    g = math.exp(math.log(k) - math.log1p((k - 1) * math.exp(-eps0)) - eps0)
    stops = S.b_stops(c3[2], k, eps0, -60.0, 64)[0]
    i_lo = S.core_range(stops, c3[2], math.log(g))[0]
    trace: list = []
    f, r = S.reveal2d_upper(k, eps0, c3, eps, -60.0, 1e12, 64, sweep="core", trace=trace)[0]
    full = S.reveal2d_upper(k, eps0, c3, eps, -60.0, 1e12, 64, sweep="full")[0]
    lower = [int(i) for i, _ in trace[0]]
    i_mid = int(np.searchsorted(stops, c3[2] * g - 6.0 * math.sqrt(c3[2] * g * (1 - g))))
    assert 0 < i_mid < i_lo and lower == [0] + list(range(i_mid, i_lo))
    v, v_full = max(f[0], r[0]), max(full[0][0], full[1][0])
    assert v_full - 1e-7 * (1 + abs(v_full)) <= v <= v_full + 1e-3


def test_linear_directions_refine_the_discriminant_ratio():
    """``directions``: (1, 1), then the ratios nearest the Gaussian discriminant with a + b <= 7,
    17 and 29 (each new one strictly nearer), then the counts (1, 0) and (0, 1). For k = 10,
    counts proportional to 1 / (j + 1) (ratio 0.6936): 2 : 3, 7 : 10, 9 : 13; the finer ones
    give a larger (tighter) lower end than 2 : 3 at n = 1e4, each still a lower bound (the
    routes' test above checks 7 : 10 and 13 : 9 against the exact enumeration)."""
    k, eps0, c3 = 10, 2.0, (3420, 1706, 4873)
    dirs = S.directions(k, eps0, c3)
    assert dirs == [(1, 1), (2, 3), (7, 10), (9, 13), (1, 0), (0, 1)]
    lows = {ab: S.linear_lower(k, eps0, c3, *ab, [0.05], -60.0)[0] for ab in dirs[1:4]}
    assert lows[(7, 10)] > lows[(2, 3)] + 2e-3 and lows[(9, 13)] > lows[(2, 3)] + 2e-3
    # an even spread keeps (1, 1) only; a ratio already nearest at a + b <= 7 is not repeated
    assert S.directions(k, eps0, (1008, 999, 7992)) == [(1, 1), (1, 0), (0, 1)]
    assert S.directions(4, 1.0, (300, 0, 699)) == [(1, 1), (3, 4), (1, 0), (0, 1)]


def test_u2_tries_its_cell_counts_in_order():
    """Several ``max_stops`` are tried in order: the first that fits the budget runs (the same
    value as that one alone)."""
    k, eps0, c3, eps = 10, 2.0, (300, 150, 550), [0.2]
    fine = S.reveal2d_upper(k, eps0, c3, eps, -40.0, 1e12, 1024)
    coarse = S.reveal2d_upper(k, eps0, c3, eps, -40.0, 1e12, 8)
    assert coarse[1] < fine[1]
    both = S.reveal2d_upper(k, eps0, c3, eps, -40.0, 0.5 * (fine[1] + coarse[1]), (1024, 8))
    assert both[1] == coarse[1] and both[0][0][0] == coarse[0][0][0]
    assert S.reveal2d_upper(k, eps0, c3, eps, -40.0, 1e12, (1024, 8))[0][0][0] == fine[0][0][0]
    none = S.reveal2d_upper(k, eps0, c3, eps, -40.0, 0.5 * coarse[1], (1024, 8), builds=False)
    assert none[0] is None and none[1] > 0.5 * coarse[1]  # its estimate: over the budget


def test_u2_without_a_sweep_where_no_sweep_fits():
    """Where no sweep fits the budget, the plan "builds" runs (k = 10, counts proportional to
    1 / (j + 1), n = 1e4: it costs 0.44 of the cheapest sweep here): the same value as when
    forced, above the swept value (measured -12.409 against -12.433) and below it + 0.1; with
    ``builds=False``, or a budget below its first build, the answer is ``None``."""
    k, eps0, c3, eps = 10, 2.0, (3420, 1706, 4873), [0.05]
    info: dict = {}
    swept = S.reveal2d_upper(k, eps0, c3, eps, -40.0, 1e13, 64, info=info)
    assert info["plan"] in ("one", "two")
    forced = S.reveal2d_upper(k, eps0, c3, eps, -40.0, 1e13, 64, sweep="builds", info=info)
    assert info["plan"] == "builds" and forced[1] < 0.6 * swept[1]
    mid = S.reveal2d_upper(k, eps0, c3, eps, -40.0, 0.5 * (forced[1] + swept[1]), 64, info=info)
    assert info["plan"] == "builds" and mid[0][0][0] == forced[0][0][0] and mid[1] == forced[1]
    v_swept, v = max(swept[0][0][0], swept[0][1][0]), max(mid[0][0][0], mid[0][1][0])
    assert v_swept <= v <= v_swept + 0.1
    off = S.reveal2d_upper(k, eps0, c3, eps, -40.0, 0.5 * (forced[1] + swept[1]), 64, builds=False)
    assert off[0] is None
    assert S.reveal2d_upper(k, eps0, c3, eps, -40.0, 0.2 * forced[1], 64)[0] is None


@pytest.mark.parametrize(
    "k, counts, eps0, eps, loss",
    [
        (4, (10, 5, 15, 9), 1.0, 0.1, 0.5),
        (5, (4, 2, 8, 5, 0), 0.7, 0.05, 0.5),
        (4, (12, 1, 26, 0), 0.8, 0.6, 4.0),  # eps near eps0: D steep in B (measured 3.2)
        (5, (6, 3, 4, 3, 2), 2.0, 0.2, 0.5),
    ],
)
def test_u2_builds_plan_is_sound_and_above_the_sweep(k, counts, eps0, eps, loss):
    """The plan without a sweep bounds each cell of ``B`` by ``D`` at the nearest build below it
    (U2 (v): ``D`` non-increasing in ``B``): above the exact enumeration (n = 19 - 40), above the
    every-stop sweep (it uses fewer, lower stops), within ``loss`` in log of it here (measured;
    the builds are at the window's bottom, then 4 and 1 standard deviations below ``B``'s mean).
    With one build (a budget just above it) it is at least the three-build value. A plan
    bounding a cell by ``D`` at a stop *above* it would fall below the sweep."""
    c3 = (counts[0], counts[1], sum(counts[2:]))
    ex = _exact(k, eps0, counts, eps)
    info: dict = {}
    (f, r), w3 = S.reveal2d_upper(k, eps0, c3, [eps], -80.0, 1e12, 4096, sweep="builds", info=info)
    assert info["plan"] == "builds"
    v3 = max(f[0], r[0])
    full = S.reveal2d_upper(k, eps0, c3, [eps], -80.0, 1e12, 4096, sweep="full")[0]
    v_full = max(full[0][0], full[1][0])
    assert _le(ex, v_full) and _le(ex, v3)
    assert v_full - 1e-7 * (1 + abs(v_full)) <= v3 <= v_full + loss
    # distinct values of B below its mean; below the first, the pair reveal at the window's bottom
    lg = math.log(k) - math.log1p((k - 1) * math.exp(-eps0)) - eps0  # log gamma, gamma = k pbar
    stops = S.b_stops(c3[2], k, eps0, -80.0, 4096)[0]
    mean = c3[2] * math.exp(lg)
    assert info["builds"] == sorted(set(info["builds"])) and max(info["builds"]) <= mean
    assert info["bottom_pairs"] == (info["builds"][0] > stops[0])
    # a budget too small for every sweep and for a second build: the bottom's build alone
    (f1, r1), w1 = S.reveal2d_upper(k, eps0, c3, [eps], -80.0, 0.55 * w3, 8, sweep="auto", info=info)
    if info["plan"] == "builds":
        assert w1 <= 0.55 * w3 and max(f1[0], r1[0]) >= v3 - 1e-7 * (1 + abs(v3))
        assert _le(ex, max(f1[0], r1[0]))


def test_iid_sum_law_error_model():
    """The powered law's error model: computed (1 - rel) <= true, excess over (1 + rel) <= drop."""
    for c, probs, tol in [(37, (0.3, 0.1), -30.0), (200, (0.05, 0.2), -20.0), (150, (0.4, 0.4), -8.0)]:
        a, b = probs
        law = G.iid_sum_law(c, (2, -1, 0), (math.log(a), math.log(b), math.log(1 - a - b)), tol)
        ex = np.array([1.0])
        base = np.array([b, 1 - a - b, 0.0, a])  # offsets -1..2
        for _ in range(c):
            ex = np.convolve(ex, base)
        vals = np.zeros(ex.size)
        i0 = law.lo + c
        vals[i0 : i0 + law.arr.size] = law.arr * math.exp(law.scale)
        assert np.sum(np.maximum(ex - vals * (1 + law.rel), 0.0)) <= math.exp(law.log_drop) * (1 + 1e-9)
        assert np.all(vals * (1 - law.rel) <= ex * (1 + 1e-12) + 1e-300)


# ---------------------------------------------------------------------------------------------
# the public API beyond the exact limits
# ---------------------------------------------------------------------------------------------


def test_public_api_routes_small_datasets_through_the_general_bracket(monkeypatch):
    """With the exact histogram limit forced to 0, small spread datasets go to the at-scale
    dispatcher (families where they apply, else the general bracket): it contains the exact
    value, and dataset_log_delta returns its upper end."""
    cases = [(5, (2, 1, 3, 0, 2), 1.0, 0.3), (4, (1, 2, 2, 3), 2.0, 0.0), (3, (3, 2, 4), 1.5, 0.4)]
    exact = [_exact(k, eps0, c, eps) for k, c, eps0, eps in cases]
    monkeypatch.setattr(X, "MAX_HISTOGRAM_WORK", 0)
    monkeypatch.setattr(G, "MAX_DATASET_WORK", 0)  # k = 3 family over budget: general bracket
    monkeypatch.setattr(G, "MAX_SEQUENTIAL_WORK", 0)
    for (k, c, eps0, eps), ex in zip(cases, exact):
        lo, up = dataset_log_delta_bounds(eps, k, eps0, list(c))
        assert _le(lo, ex) and _le(ex, up)
        assert dataset_log_delta(eps, k, eps0, list(c)) == up
        assert dataset_delta(eps, k, eps0, list(c)) == pytest.approx(math.exp(up), rel=1e-15)
        assert dataset_log_delta_bounds(eps0, k, eps0, list(c)) == (-math.inf, -math.inf)


def test_the_issue_example_still_uses_its_exact_family():
    lo, up = dataset_log_delta_bounds(0.1, 10, 2.0, [0, 0, 999, 0, 0, 0, 0, 0, 0, 0])
    assert up - lo < 1e-6
    assert dataset_delta(0.1, 10, 2.0, [0, 0, 999, 0, 0, 0, 0, 0, 0, 0]) == pytest.approx(
        0.00261614528, rel=1e-8
    )


def test_spread_k10_n1000_bracket_and_properties():
    """Others spread evenly over all ten values at n = 1000 (formerly refused): a narrow bracket,
    consistent with the count output (a post-processing) and the certified worst case, with the
    mirror dataset, and with monotonicity in eps."""
    from shuffle_accounting.shuffled_krr import ShuffledKRR

    others = [108, 99, 99, 99, 99, 99, 99, 99, 99, 99]
    eps = np.array([0.05, 0.2, 0.4])
    lo, up = dataset_log_delta_bounds(eps, 10, 2.0, others)
    assert np.all(np.isfinite(lo)) and np.all(lo <= up)
    # measured widths 6e-5, 0.013, 0.21 (the reveal costs more in the far tail)
    assert np.all(up - lo < np.array([1e-3, 0.05, 0.4]))
    assert np.all(lo[1:] <= up[:-1] + 1e-12)  # the true delta is non-increasing in eps
    count = np.asarray(dataset_log_delta(eps, 10, 2.0, others, output="count"))
    assert np.all(count <= up + 1e-12)
    assert np.all(lo <= np.asarray(ShuffledKRR(10, 2.0, 1000).log_delta(eps)) + 1e-12)
    lo2, up2 = dataset_log_delta_bounds(eps, 10, 2.0, [others[1], others[0]] + others[2:])
    assert np.all(np.maximum(lo, lo2) <= np.minimum(up, up2) + 1e-12)


def test_large_spread_dataset_one_dimensional_routes():
    """n = 1e5, k = 10, spread: only the one-dimensional routes fit; the pair reveal UP gives a
    bracket about 1e-2 wide in log at delta ~ e^-22 (2.2 with U1 alone before it)."""
    others = [10008] + [9999] * 9
    lo, up = dataset_log_delta_bounds(0.03, 10, 2.0, others)
    assert -40.0 < lo <= up < 0.0 and up - lo < 0.05


def test_budget_controls_the_routes():
    k, counts, eps0, eps = 10, (108, 99, 99, 99, 99, 99, 99, 99, 99, 99), 2.0, 0.2
    need = S.spread_work(k, eps0, counts, 1, -85.0)
    lo1, up1, info1 = S.spread_log_bounds(k, eps0, counts, [eps], -85.0, need)
    lo2, up2, info2 = S.spread_log_bounds(k, eps0, counts, [eps], -85.0, 1e11)
    assert not any(r.startswith(("U2", "L2")) for r in info1["routes"])
    assert any(r.startswith("U2") for r in info2["routes"])
    assert lo1[0] <= lo2[0] + 1e-12 and up2[0] <= up1[0] + 1e-12 and up2[0] - lo2[0] < up1[0] - lo1[0]
    with pytest.raises(WorkBudgetExceeded, match=r"max_work = 1000"):
        dataset_log_delta_bounds(eps, k, eps0, list(counts), max_work=1000)
    # max_work is not used by the exact paths
    assert dataset_log_delta_bounds(0.1, 4, 1.0, [1, 1, 1, 1], max_work=1) == dataset_log_delta_bounds(
        0.1, 4, 1.0, [1, 1, 1, 1]
    )


@pytest.mark.parametrize("bad", [0, -5, 1.5, "many", float("nan"), True])
def test_bad_max_work(bad):
    for fn in (dataset_log_delta_bounds, dataset_log_delta, dataset_delta):
        with pytest.raises(ParameterError, match="max_work"):
            fn(0.1, 4, 1.0, [1, 1, 1, 1], max_work=bad)


def test_bad_inputs_still_named():
    with pytest.raises(ParameterError, match="others"):
        dataset_log_delta_bounds(0.1, 10, 2.0, [100] * 9)
    with pytest.raises(ParameterError, match="eps0"):
        dataset_log_delta_bounds(0.1, 10, -2.0, [100] * 10)
    with pytest.raises(ParameterError, match="eps"):
        dataset_log_delta_bounds(float("inf"), 10, 2.0, [100] * 10)


@pytest.mark.parametrize(
    "k, c0, c1, b, eps0, eps",
    [(4, 3, 1, 2, 1.0, 0.2), (5, 4, 0, 3, 0.7, 0.1), (4, 2, 2, 1, 1.5, 0.4), (6, 5, 2, 4, 2.0, 0.3)],
)
def test_pairs_with_fixed_uniform_users_bound_u2s_conditional_divergence(k, c0, c1, b, eps0, eps):
    """``pairs_upper(..., (c0, c1, 0), b_fixed=b)`` (the bound the plan "builds" uses below its
    first build) is above ``D(b)``, U2's divergence given ``b`` uniform users: the histogram of
    ``c0`` users at 0, ``c1`` at 1 and ``b`` users reporting uniformly on all ``k`` values,
    enumerated exactly (both directions: UP's are equal)."""
    pb = 1.0 / (math.exp(eps0) + k - 1)
    p = math.exp(eps0) * pb

    def row(x):
        return [p if y == x else pb for y in range(k)]

    base = [row(0)] * c0 + [row(1)] * c1 + [[1.0 / k] * k] * b
    d = hockey_both(_law(base + [row(0)]), _law(base + [row(1)]), math.exp(eps))
    up, _ = S.pairs_upper(k, eps0, (c0, c1, 0), [eps], -60.0, 64, b_fixed=b)
    assert _le(math.log(max(d)), up[0])
    # and it is the bound of a smaller view: without the uniform users it is larger (D(0) >= D(b))
    up0, _ = S.pairs_upper(k, eps0, (c0, c1, 0), [eps], -60.0, 64)
    assert up0[0] >= up[0] - 1e-12


def test_wide_budget_pays_for_u2_builds_where_the_one_dimensional_routes_are_loose(monkeypatch):
    """``spread_log_bounds(wide_budget=)``: where U1 and UP are both expected loose (counts at 0
    and 1 far apart) and no sweep of U2 fits ``budget``, U2 runs on the wide budget, on top of
    ``budget`` for the other routes: swept where a sweep fits the wide budget, else by builds
    (k = 10, counts proportional to 1 / (j + 1), n = 7291: builds on 3e8, upper end -11.5183;
    a sweep on 3e9, -11.53641, the value of the sweep on a plain budget of 1e11; UP alone
    -10.5786; the lower end unchanged). An even spread keeps UP (no wide budget taken), and
    ``dataset_log_delta_bounds`` passes ``MAX_SPREAD_WORK_WIDE`` only when ``max_work`` is not
    given."""
    c = (3420, 1706, 487, 341, 292, 256, 227, 205, 186, 170)
    lo0, up0, info0 = S.spread_log_bounds(10, 2.0, c, [0.05], -85.0, 5e7)
    lob, upb, infob = S.spread_log_bounds(10, 2.0, c, [0.05], -85.0, 5e7, wide_budget=3e8)
    lo1, up1, info1 = S.spread_log_bounds(10, 2.0, c, [0.05], -85.0, 5e7, wide_budget=3e9)
    assert "wide_budget" not in info0 and info0["upper_from"] == ["UP"]
    assert infob["wide_budget"] == 3e8 and infob["upper_from"] == ["U2"]
    assert "U2(reveal coins at values >= 2), builds only" in infob["routes"]
    assert info1["wide_budget"] == 3e9 and info1["upper_from"] == ["U2"]
    assert "U2(reveal coins at values >= 2)" in info1["routes"]  # swept
    _, up_swept, _ = S.spread_log_bounds(10, 2.0, c, [0.05], -85.0, 1e11)
    assert up1[0] == pytest.approx(up_swept[0], abs=1e-9)
    assert up1[0] < upb[0] < up0[0] - 0.5 and lo0[0] == lob[0] == lo1[0] <= up1[0]
    for info in (infob, info1):
        assert not any(r.startswith("UP") for r in info["routes"]) and info["work"] > 5e7
    even = (730, 729, 729, 729, 729, 729, 729, 729, 729, 728)
    info_even = S.spread_log_bounds(10, 2.0, even, [0.05], -85.0, 5e7, wide_budget=3e9)[2]
    assert "wide_budget" not in info_even and info_even["upper_from"] == ["UP"]
    # the public entry point: the wide budget by default only
    monkeypatch.setattr(X, "MAX_SPREAD_WORK", 5 * 10**7)
    monkeypatch.setattr(X, "MAX_SPREAD_WORK_WIDE", 3 * 10**9)
    assert dataset_log_delta_bounds(0.05, 10, 2.0, list(c))[1] == pytest.approx(up1[0], abs=1e-12)
    assert dataset_log_delta_bounds(0.05, 10, 2.0, list(c), max_work=5 * 10**7)[1] == pytest.approx(
        up0[0], abs=1e-12
    )


def test_u2_builds_plan_refuses_before_building_any_grid(monkeypatch):
    """Where the first build is clearly over the budget (by its coins, and adding the class one
    user at a time), the plan answers ``None`` before its setup builds the pivot's grid (at
    n = 1e6 that setup took about 30 s for nothing); with room for it, the grid is built."""
    calls: list = []
    orig = G.pivot_grid

    def spy(*a, **kw):
        calls.append(1)
        return orig(*a, **kw)

    monkeypatch.setattr(G, "pivot_grid", spy)
    k, eps0, c3, eps = 10, 2.0, (3420, 1706, 4873), [0.05]
    info: dict = {}
    res = S.reveal2d_upper(k, eps0, c3, eps, -40.0, 1e3, 64, info=info)
    assert res[0] is None and res[1] > 1e3 and info["plan"] == "builds" and calls == []
    assert S.reveal2d_upper(k, eps0, c3, eps, -40.0, 1e13, 64, sweep="builds")[0] is not None
    assert calls


def test_u1_waits_for_u2_on_the_wide_budget_and_leaves_room_for_the_lower_ends():
    """k = 4, eps0 = 1, counts 60 / 20 / 10 / 10 % at n = 5000 (U1's ratio 1.057 is below UP's
    1.085, so U1 is the 1-D upper route): with a wide budget that U2 fits, U1 is not run (it
    would have taken 4.2e7 of the 1e8 budget) and the lower end L1(7, 10) fits (width 2.8e-3
    instead of 1.6 with U1); with a wide budget U2 does not fit, U1 runs after the attempt and
    both ends are those without a wide budget."""
    c = (3002, 999, 499, 499)
    lo0, up0, info0 = S.spread_log_bounds(4, 1.0, c, [0.06], -85.0, 1e8)
    lo1, up1, info1 = S.spread_log_bounds(4, 1.0, c, [0.06], -85.0, 1e8, wide_budget=3e9)
    lo2, up2, info2 = S.spread_log_bounds(4, 1.0, c, [0.06], -85.0, 1e8, wide_budget=1.1e8)
    r_u1, r_up = S.normal_limit_ratios(4, 1.0, (3002, 999, 998))
    assert r_u1 < r_up
    assert "U1(keep 0)" in info0["routes"] and "wide_budget" not in info0
    assert info1["wide_budget"] == 3e9 and not any(r.startswith("U1") for r in info1["routes"])
    assert "L1(T = 7 h0 - 10 h1)" in info1["routes"] and "L1(T = 7 h0 - 10 h1)" not in info0["routes"]
    assert info1["upper_from"] == ["U2"] and lo0[0] < lo1[0] <= up1[0] < lo1[0] + 5e-3 < up0[0]
    assert "wide_budget" not in info2 and info2["routes"] == info0["routes"]
    assert lo2[0] == lo0[0] and up2[0] == up0[0]
