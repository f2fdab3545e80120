"""Numerics behind the k = 3 box bound: recurrence pmfs, one-pass hockey, the one-user sweep."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from shuffle_accounting._binomial import log_binom_pmf
from shuffle_accounting.shuffled_krr import _krr_grid as G
from shuffle_accounting.shuffled_krr import worst_case_k as K
from shuffle_accounting.shuffled_krr.exact import dataset_log_delta


@pytest.mark.parametrize("n_hi,r,j_lo,j_hi", [(40, 0.5, 0, 40), (900, 0.5, 380, 520), (300, 0.8, 200, 270)])
def test_binomial_rows_match_loader_within_their_bound(n_hi, r, j_lo, j_hi):
    Ns = np.arange(max(0, n_hi - 60), n_hi + 1, dtype=float)
    lb, extra = G.binom_rows(Ns, j_lo, j_hi, math.log(r), math.log1p(-r))
    NN, JJ = np.meshgrid(Ns, np.arange(j_lo, j_hi + 1, dtype=float), indexing="ij")
    ok = JJ <= NN
    ref = np.where(ok, log_binom_pmf(np.where(ok, JJ, 0.0), NN, math.log(r), math.log1p(-r)), -np.inf)
    assert np.array_equal(np.isfinite(lb), np.isfinite(ref))
    f = np.isfinite(ref) & (ref > -600)
    # the recurrence's error is within its own bound (plus Loader's ~1e-13 on the reference)
    assert np.all(np.abs(np.expm1(lb[f] - ref[f])) <= extra + 1e-12)
    assert extra < 1e-9


def _exact_h(counts, b, exp_eps0, exp_eps):
    """H_E(T + counts + b uniform || T' + ...) in exact rationals (``e^eps0``, ``E = e^eps`` given)."""
    r, E = Fraction(exp_eps0), Fraction(exp_eps)
    p, pbar = r / (r + 2), 1 / (r + 2)
    law = {(0, 0): Fraction(1)}

    def add(law, row):
        out = {}
        for (x0, x1), w in law.items():
            for (d0, d1), q in zip(((1, 0), (0, 1), (0, 0)), row):
                out[(x0 + d0, x1 + d1)] = out.get((x0 + d0, x1 + d1), Fraction(0)) + w * q
        return out

    for x in range(3):
        for _ in range(counts[x]):
            law = add(law, [p if y == x else pbar for y in range(3)])
    for _ in range(b):
        law = add(law, [Fraction(1, 3)] * 3)
    P = add(law, [p, pbar, pbar])
    Q = add(law, [pbar, p, pbar])
    return sum((max(P[h] - E * Q.get(h, 0), Fraction(0)) for h in P), Fraction(0))


@pytest.mark.parametrize("counts,b", [((2, 1, 4), 0), ((2, 1, 4), 3), ((0, 0, 6), 5), ((3, 3, 0), 2)])
def test_sweep_and_one_pass_hockey_bound_the_exact_rational_value(counts, b):
    """g_L(b) through fixed_law_k3 (uniform in the pivot), sweep_users and hockey_upper."""
    eps0, eps = math.log(3.0), math.log(1.2)
    exact = float(_exact_h(counts, b, 3, Fraction(6, 5)))
    for start in range(b + 1):  # any split between the closed form and the one-at-a-time users
        v, F = G.fixed_law_k3(eps0, counts, -80.0, start)
        third = -math.log(3.0)
        ((_, grid),) = list(G.sweep_users(F, [b - start], (third,) * 3, -80.0))
        pp, pq = G.target_rows_k3(eps0, v)
        up = G.hockey_upper(grid, pp, pq, eps)
        hup, hlow = G.Hockey(grid, pp, pq).bounds(eps)
        assert hlow <= math.log(exact) <= hup <= up + 1e-15
        assert up - math.log(exact) < 1e-8


def test_sweep_yields_every_stop_and_matches_add_users():
    _, F = G.fixed_law_k3(1.0, (4, 2, 30), -60.0)
    third = -math.log(3.0)
    stops = [0, 3, 8, 9, 21]
    got = list(G.sweep_users(F, stops, (third,) * 3, -60.0))
    assert [b for b, _ in got] == stops
    last = G.add_users(F, 21, (third,) * 3, -60.0)
    assert np.allclose(
        got[-1][1].arr * math.exp(got[-1][1].scale), last.arr * math.exp(last.scale), rtol=1e-12
    )


def test_box_bound_at_n_1000_is_tight_near_the_worst_corner():
    """The measured facts the search relies on (module docstring), at a cheap scale."""
    pr = K.BoxProblem(1.0, 1000, -13.8)
    eps = 0.1306
    corner = pr.bound((0, 0, 0, 0), eps)
    near = pr.bound((0, 15, 0, 15), eps)[0]
    away = pr.bound((16, 31, 0, 15), eps)[0]
    assert corner[1] <= corner[0] < corner[1] + 1e-6
    assert corner[0] <= near < corner[0] + 1e-3  # 30 free users cost < 1e-3 in log
    assert away < corner[1]  # datasets with >= 16 users at x0 are certified below the corner


@pytest.mark.parametrize("k", [3, 4, 5])
@pytest.mark.parametrize("eps0", [0.5, 3.0, 13.5])
@pytest.mark.parametrize("rel", [1e-15, 1e-12, 1e-9, 1e-6, 0.1])
def test_single_class_bracket_holds_as_eps_tends_to_eps0(k, eps0, rel):
    """Regression: ``p - E pbar`` was computed by subtraction, so near ``eps = eps0`` the
    one-outcome cell and the thresholds lost their digits and the bracket of "all others at x0"
    missed the exact value (upper 1.2e-7 below it in log at ``eps = eps0 (1 - 1e-9)``, k = 5)."""
    eps = eps0 * (1.0 - rel)
    for v in (0, 2):
        others = [0] * k
        others[v] = 7
        exact = float(dataset_log_delta(eps, k, eps0, others))
        (fu, fl), (ru, rl) = G.single_class_log_hockey(k, eps0, 8, v, eps, -80.0)
        assert max(fl, rl) <= exact + 1e-12
        assert max(fu, ru) >= exact - 1e-12
        if v == 0:  # the one-outcome cell dominates: the bracket is tight there
            assert max(fl, rl) >= exact - 1e-6


def _mp_log_binom(N: int, j: int, r) -> float:
    import mpmath

    with mpmath.workdps(40):
        if j > N:
            return -math.inf
        r = mpmath.mpf(r)
        return float(mpmath.log(mpmath.binomial(N, j)) + j * mpmath.log(r) + (N - j) * mpmath.log1p(-r))


@pytest.mark.parametrize(
    "n0,rows,r,j_lo,j_hi",
    [
        (999_990, 12, Fraction(1, 3), 331_000, 335_600),  # rows of 4601 columns (36 anchors)
        (200_000, 5, Fraction(1, 2), 99_000, 101_000),
        (5_000, 40, Fraction(1, 9), 400, 700),
        (300, 70, Fraction(22, 25), 200, 400),  # rows ending inside the window (j > N)
        (0, 3, Fraction(1, 2), 0, 300),  # N = 0, 1, 2
    ],
)
def test_binomial_rows_with_anchors_match_40_digits_within_their_bound(n0, rows, r, j_lo, j_hi):
    """Wide rows (the recurrence restarts at a Loader anchor every BINOM_SEGMENT columns; one
    running sum over a row of thousands of columns had needed a Loader pmf per cell): every
    sampled cell within the returned bound plus Loader's REL_PMF of the exact value."""
    Ns = np.arange(n0, n0 + rows, dtype=float)
    lr, l1mr = math.log(float(r)), math.log1p(-float(r))
    lb, extra = G.binom_rows(Ns, j_lo, j_hi, lr, l1mr)
    assert lb.shape == (rows, j_hi - j_lo + 1)
    assert 0.0 < extra < 1e-9
    cols = sorted(
        {0, 1, G.BINOM_SEGMENT - 1, G.BINOM_SEGMENT, G.BINOM_SEGMENT + 1, (j_hi - j_lo) // 2, j_hi - j_lo}
    )
    for i in sorted({0, rows // 2, rows - 1}):
        for c in cols:
            if c > j_hi - j_lo:
                continue
            ex = _mp_log_binom(int(Ns[i]), j_lo + c, r)
            got = float(lb[i, c])
            if ex == -math.inf:
                assert got == -math.inf
            else:
                assert abs(math.expm1(got - ex)) <= (1 + extra) * (1 + G.REL_PMF) - 1, (i, c, got, ex)
    # -inf exactly where j > N
    JJ = np.arange(j_lo, j_hi + 1)[None, :]
    assert np.array_equal(np.isneginf(lb), JJ > Ns[:, None])


@pytest.mark.parametrize("segment", [1, 2, 7, 128, 100_000])
def test_binomial_rows_any_segment_and_row_order_agree(monkeypatch, segment):
    """Segments of one column (Loader everywhere), a few, the default and one segment per row
    give the same log-pmfs within their bounds; rows not consecutive (the general path) give the
    same values as consecutive ones."""
    Ns = np.arange(2_000.0, 2_030.0)
    lr, l1mr = math.log(0.3), math.log1p(-0.3)
    ref = np.where(
        np.arange(500, 701)[None, :] <= Ns[:, None],
        log_binom_pmf(np.arange(500.0, 701.0)[None, :], Ns[:, None], lr, l1mr),
        -np.inf,
    )
    monkeypatch.setattr(G, "BINOM_SEGMENT", segment)
    lb, extra = G.binom_rows(Ns, 500, 700, lr, l1mr)
    assert np.all(np.abs(np.expm1(lb - ref)) <= extra + 1e-12)
    perm = np.array([3, 0, 29, 7, 7, 15])  # neither consecutive nor increasing
    lb2, extra2 = G.binom_rows(Ns[perm], 500, 700, lr, l1mr)
    assert np.array_equal(lb2, lb[perm])
    assert extra2 <= extra
