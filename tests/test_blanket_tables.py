"""The one-pass grid evaluator of the privacy-blanket curve (``shuffled_krr.blanket_tables``).

Checked against (a) the exact divergence in 40-digit arithmetic (mpmath, the multinomial form
``delta = (u/n) E[(h0 - E h1 - r S)_+]`` summed directly, independent of the module), (b) the one-point
exact evaluator (``blanket.certified_log_delta``) and the sub-linear brackets (``blanket_fast``), and
(c) its own certified lower bound (``side="lower"``): lower <= exact <= upper everywhere, and the
upper bound within 1e-9 (exact rows) or the block tolerance (blocks of T) of the lower one.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accounting import ParameterError
from shuffle_accounting.shuffled_krr import blanket_fast
from shuffle_accounting.shuffled_krr import blanket_tables as bt
from shuffle_accounting.shuffled_krr.blanket import certified_log_delta
from shuffle_accounting.shuffled_krr.blanket_tables import BlanketTables, certified_log_delta_tables
from shuffle_accounting.shuffled_krr.curve_grid import blanket_tables


def _exact_log_delta(k: int, eps0: float, n: int, eps: float) -> float:
    """log of the blanket divergence by brute force over the multinomial counts, 40 digits."""
    with mp.workdps(40):
        e0, e = mp.mpf(eps0), mp.mpf(eps)
        pbar = 1 / (mp.e**e0 + k - 1)
        E = mp.e**e
        r = (E - 1) / (mp.e**e0 - 1)
        rest = 1 - k * pbar
        lf = [mp.log(mp.factorial(i)) for i in range(n + 1)]
        tot = mp.mpf(0)
        for T in range(n + 1):
            for h0 in range(T + 1):
                h1 = T - h0
                for R in range(n - T + 1) if k > 2 else [0]:
                    z = h0 - E * h1 - r * (T + R)
                    if z <= 0:
                        continue
                    lp = lf[n] - lf[h0] - lf[h1] - lf[R] - lf[n - T - R] + T * mp.log(pbar)
                    if R:
                        lp += R * mp.log((k - 2) * pbar)
                    if n - T - R:
                        lp += (n - T - R) * mp.log(rest)
                    tot += mp.e**lp * z
        if tot == 0:
            return -math.inf
        return float(mp.log((mp.e**e0 - 1) / n * tot))


SMALL = [(2, 1.0, 7), (3, 0.3, 6), (3, 3.0, 9), (4, 1.0, 8), (6, 8.0, 5), (10, 2.0, 6), (3, 1e-3, 5)]


@pytest.mark.parametrize("k, eps0, n", SMALL)
def test_brackets_the_exact_divergence_at_small_n(k, eps0, n):
    eps = np.array(
        [0.0, 1e-9, 0.01 * eps0, 0.3 * eps0, 0.7 * eps0, eps0 * (1 - 1e-9), np.nextafter(eps0, 0.0)]
    )
    up = BlanketTables(k, eps0, n).log_delta(eps)
    lo = BlanketTables(k, eps0, n, side="lower").log_delta(eps)
    for e, u, lw in zip(eps, up, lo):
        ex = _exact_log_delta(k, eps0, n, float(e))
        assert lw <= ex + 1e-12 <= u + 1e-12, (e, lw, ex, u)
        if ex > -60.0:
            assert u - ex <= 1e-9, (e, u, ex)


def test_zero_from_eps0_on_and_capped_at_one():
    g = BlanketTables(3, 1.0, 50)
    v = g.log_delta(np.array([1.0, 1.5, 0.0]))
    assert v[0] == -np.inf and v[1] == -np.inf and v[2] <= 0.0


@pytest.mark.parametrize("k, eps0, n", [(10, 2.0, 2000), (3, 0.5, 3000), (2, 4.0, 2500), (50, 6.0, 1500)])
def test_agrees_with_the_one_point_exact_evaluator(k, eps0, n):
    eps = np.linspace(0.0, eps0, 33)[:-1]
    up = BlanketTables(k, eps0, n).log_delta(eps)
    lo = BlanketTables(k, eps0, n, side="lower").log_delta(eps)
    ref = certified_log_delta(eps, k, eps0, n)
    assert np.all(lo <= up)
    assert np.all(ref >= lo)  # the one-point bound is an upper bound too
    live = ref > -100.0
    # the tails of T are in narrow blocks (at most 0.4 % of T wide): a certified bracket of ~1e-8
    # in the bulk, looser only where delta is tiny
    assert np.all(up[live] - lo[live] <= 1e-5)
    bulk = ref > -20.0
    assert np.all(up[bulk] - lo[bulk] <= 1e-6)
    assert np.all(np.abs(up[live] - ref[live]) <= 1e-5)


@pytest.mark.parametrize("k, eps0, n", [(10, 2.0, 10**5), (3, 1.0, 10**6), (2, 0.5, 10**6)])
def test_blocks_of_T_bracket_and_agree_with_the_sublinear_evaluator(k, eps0, n):
    # the bulk of the curve (delta from ~1e-2 down to ~1e-12)
    fb = blanket_fast.FastBlanketEvaluator(k, eps0, n)
    e1 = blanket_fast.certified_epsilon(1e-12, k, eps0, n)
    eps = np.linspace(0.0, e1, 9)[1:]
    up = BlanketTables(k, eps0, n, block_rtol=1e-3).log_delta(eps)
    lo = BlanketTables(k, eps0, n, block_rtol=1e-3, side="lower").log_delta(eps)
    f_up, f_lo = blanket_fast.certified_log_delta_bounds(eps, k, eps0, n, rtol=1e-4, evaluator=fb)
    assert np.all(lo <= up)
    assert np.all(up >= np.asarray(f_lo)) and np.all(lo <= np.asarray(f_up))
    assert np.all(up - lo <= 5e-3)  # the block bracket in the bulk (block_rtol = 1e-3)


def test_wide_blocks_and_narrow_windows_stay_upper_bounds():
    """Any block width and any window is sound: coarse settings bound the exact-row lower bound."""
    k, eps0, n = 3, 1.0, 3000
    eps = np.linspace(0.0, 0.6, 25)
    exact_lo = BlanketTables(k, eps0, n, block_rtol=1e-9, side="lower").log_delta(eps)
    exact_up = BlanketTables(k, eps0, n, block_rtol=1e-9).log_delta(eps)
    coarse_up = BlanketTables(k, eps0, n, block_rtol=1.0).log_delta(eps)
    coarse_lo = BlanketTables(k, eps0, n, block_rtol=1.0, side="lower").log_delta(eps)
    narrow_up = BlanketTables(k, eps0, n, log_floor=-5.0).log_delta(eps)  # windows cut early, drops added
    assert np.all(coarse_up >= exact_lo) and np.all(narrow_up >= exact_lo)
    assert np.all(coarse_lo <= exact_up)
    assert np.all(coarse_up >= coarse_lo)


def test_a_point_does_not_depend_on_the_rest_of_the_grid():
    g = BlanketTables(10, 2.0, 10_000)
    eps = np.linspace(0.0, 0.5, 41)
    together = g.log_delta(eps)
    alone = np.array([g.log_delta(np.array([e]))[0] for e in eps[::8]])
    assert np.allclose(together[::8], alone, rtol=0.0, atol=1e-12)
    assert np.array_equal(g.log_delta(eps[::-1]), together[::-1])


@settings(max_examples=25, deadline=None)
@given(
    k=st.integers(2, 30),
    eps0=st.floats(0.05, 12.0),
    n=st.integers(2, 400),
    u=st.lists(st.floats(0.0, 1.0), min_size=5, max_size=5),
)
def test_property_lower_below_upper_and_decreasing(k, eps0, n, u):
    eps = np.sort(np.asarray(u) * eps0)
    up = BlanketTables(k, eps0, n).log_delta(eps)
    lo = BlanketTables(k, eps0, n, side="lower").log_delta(eps)
    assert np.all(lo <= up) and np.all(up <= 0.0)
    bulk = lo > -30.0
    assert np.all(up[bulk] - lo[bulk] <= 1e-8)
    deep = lo > -100.0  # far tails: the lower-zone levels of the R-table are coarser there
    assert np.all(up[deep] - lo[deep] <= 1e-6)
    # the exact curve is non-increasing: lower bounds at larger eps stay below upper bounds at smaller
    assert np.all(lo[1:] <= up[:-1] + 1e-12)


def test_curve_grid_uses_it_where_it_applies():
    assert blanket_tables(10, 2.0, 1000) is not None
    assert blanket_tables(10, 2.0, 1) is None  # n = 1: the closed form
    assert blanket_tables(10, 45.0, 1000) is None  # above EPS0_GRID_MAX: the one-point evaluators
    assert blanket_tables(3, 1e-250, 1000) is None  # degenerate blanket
    assert blanket_tables(10, 2.0, 1000) is blanket_tables(10, 2.0, 1000)  # memoised tables


def test_function_form_matches_the_class():
    eps = np.array([0.0, 0.1, 0.3])
    assert np.array_equal(
        certified_log_delta_tables(eps, 4, 1.5, 500), BlanketTables(4, 1.5, 500).log_delta(eps)
    )


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(k=1, eps0=1.0, n=10), "k"),
        (dict(k=2.5, eps0=1.0, n=10), "k"),
        (dict(k=3, eps0=float("nan"), n=10), "eps0"),
        (dict(k=3, eps0=-1.0, n=10), "eps0"),
        (dict(k=3, eps0=bt.EPS0_GRID_MAX * 1.01, n=10), "eps0"),
        (dict(k=3, eps0=1.0, n=1), "n"),
        (dict(k=3, eps0=1.0, n=float("inf")), "n"),
        (dict(k=3, eps0=1.0, n=10, block_rtol=0.0), "block_rtol"),
        (dict(k=3, eps0=1.0, n=10, block_rtol=float("nan")), "block_rtol"),
        (dict(k=3, eps0=1.0, n=10, log_floor=1.0), "log_floor"),
        (dict(k=3, eps0=1.0, n=10, side="both"), "side"),
    ],
)
def test_bad_parameters_raise(kwargs, name):
    with pytest.raises(ParameterError, match=rf"^{name} must"):
        BlanketTables(**kwargs)


@pytest.mark.parametrize("bad", [[-0.1], [float("nan")], [float("inf")], ["a"]])
def test_bad_eps_raise(bad):
    with pytest.raises(ParameterError, match="^eps"):
        BlanketTables(3, 1.0, 10).log_delta(bad)


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("eps0", [0.5, 2.0, 6.0])
@pytest.mark.parametrize("n", [1000, 30_000])
def test_grid_of_parameters_against_the_one_point_evaluator(k, eps0, n):
    """Issue 12's required check: the fast evaluator against the exact one (kept as the reference
    path) over a grid of (k, eps0, n, eps): above its certified lower bound, within 1e-5 of the
    one-point value (each is an upper bound within ~1e-9 resp. ~1e-6 of the exact divergence)."""
    lo_eps = BlanketTables(k, eps0, n)
    e_max = blanket_fast.certified_epsilon(1e-40, k, eps0, n)
    eps = np.linspace(0.0, min(e_max, eps0), 7)[:-1]
    up = lo_eps.log_delta(eps)
    low = BlanketTables(k, eps0, n, side="lower").log_delta(eps)
    ref = certified_log_delta(eps, k, eps0, n)
    assert np.all(up >= low) and np.all(ref >= low)
    # the narrow blocks in the tails of T loosen the deepest values a little (1e-4 at e^-66)
    tol = np.where(ref > -30.0, 1e-5, 1e-4)
    assert np.all(np.abs(up - ref) <= tol), np.max(np.abs(up - ref) - tol)
