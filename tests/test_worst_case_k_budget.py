"""worst_case_k: the n-dependent default tolerance, the work budget and its sound stop."""

from __future__ import annotations

import math

import pytest

from shuffle_accounting._validation import ParameterError, WorkBudgetExceeded
from shuffle_accounting.shuffled_krr import ShuffledKRR, dataset_log_delta
from shuffle_accounting.shuffled_krr import worst_case_k as K

from _brute import brute_max_k3


def test_default_tol_grows_with_n_to_the_target():
    assert K.default_tol(2) == K.default_tol(K.DEFAULT_TOL_SMALL_N) == K.DEFAULT_TOL_SMALL == 1e-5
    assert K.default_tol(3000) == pytest.approx(3e-5, rel=1e-12)
    assert K.default_tol(10 * K.DEFAULT_TOL_SMALL_N) == K.default_tol(10**7) == K.DEFAULT_TOL_TARGET == 1e-4
    vals = [K.default_tol(n) for n in (1, 10, 999, 1000, 1001, 2000, 9999, 10**4, 10**5)]
    assert all(a <= b for a, b in zip(vals, vals[1:]))
    for bad in (0, -5, 2.5, True, math.nan, "10"):
        with pytest.raises(ParameterError, match="n"):
            K.default_tol(bad)


@pytest.mark.parametrize("query", [{"eps": 0.4}, {"delta": 1e-3}])
def test_default_is_the_old_tolerance_at_small_n(query):
    a = K.certify_k(3, 1.0, 20, **query)
    b = K.certify_k(3, 1.0, 20, tol=1e-5, **query)
    assert (a.log_delta, a.epsilon, a.cover) == (b.log_delta, b.epsilon, b.cover) and a.converged


@pytest.mark.parametrize("max_cells", [1.0, 3e4, 3e5])
@pytest.mark.parametrize("eps0", [1.0, 2.0])
def test_budget_stop_is_certified_delta_query(eps0, max_cells):
    """A delta query stopped by ``max_cells``: still >= every dataset's delta, and verifiable."""
    n, eps = 7, 0.3 * eps0
    worst = brute_max_k3(eps, eps0, n)
    c = K.certify_k(3, eps0, n, eps=eps, max_cells=max_cells)
    assert c.log_delta >= worst - 1e-12 * abs(worst) >= c.exhibited_log_delta - 1e-12 * abs(worst)
    assert c.gap >= 0.0 and K.verify(c)
    assert c.converged or c.work > max_cells  # stopped by the budget only once it was spent
    if max_cells == 1.0 and len(K.certify_k(3, eps0, n, eps=eps).cover) > 1:
        assert not c.converged and len(c.cover) <= 2  # one split, where the root box is not enough


@pytest.mark.parametrize("max_cells", [1.0, 3e4, 3e5])
@pytest.mark.parametrize("eps0", [1.0, 2.0])
def test_budget_stop_is_certified_epsilon_query(eps0, max_cells):
    """An epsilon query stopped by ``max_cells``: its open boxes certified at a larger eps, every
    dataset's delta at the returned epsilon <= delta, the witness's above it at epsilon_lower."""
    n, delta = 7, 0.03  # the root box alone is not enough here (converged covers: 4-6 boxes)
    c = K.certify_k(3, eps0, n, delta=delta, max_cells=max_cells)
    assert 0.0 <= c.epsilon_lower <= c.epsilon <= eps0 and K.verify(c)
    assert brute_max_k3(c.epsilon, eps0, n) <= math.log(delta) + 1e-12
    if c.epsilon_lower > 0:
        assert brute_max_k3(c.epsilon_lower, eps0, n) > math.log(delta)
    assert all(cb.eps <= c.epsilon and cb.log_bound <= math.log(delta) for cb in c.cover)
    assert c.converged or c.work > max_cells
    if max_cells == 1.0:  # stopped after the root's split: the open boxes were stepped up
        assert not c.converged and len(c.cover) == 2 and c.epsilon > c.epsilon_lower * (1 + 1e-5)


def test_tiny_budget_stops_early_and_large_budget_converges():
    n, eps0, delta = 40, 1.0, 1e-4
    small = K.certify_k(3, eps0, n, delta=delta, max_cells=1.0)
    big = K.certify_k(3, eps0, n, delta=delta, max_cells=math.inf)
    assert not small.converged and big.converged
    assert small.work < big.work and small.evaluations < big.evaluations
    assert big.epsilon_lower <= big.epsilon <= small.epsilon and small.epsilon_lower <= small.epsilon
    assert K.verify(small) and K.verify(big)
    d_small = K.certify_k(3, eps0, n, eps=big.epsilon, max_cells=1.0)
    d_big = K.certify_k(3, eps0, n, eps=big.epsilon)
    assert not d_small.converged and d_big.converged
    assert d_small.log_delta >= d_big.log_delta >= d_big.exhibited_log_delta
    assert K.verify(d_small)


def test_delta_query_beyond_small_n_stops_at_the_gap_in_epsilon():
    """From ``n > DEFAULT_TOL_SMALL_N`` a default delta query stops once its certified delta is
    at most the witness's exhibited delta at ``eps / (1 + default_tol(n))``."""
    n, eps0, eps = 1050, 2.0, 0.36
    t = K.default_tol(n)
    c = K.certify_k(3, eps0, n, eps=eps)
    assert c.converged and K.verify(c)
    pr = K.BoxProblem(eps0, n, c.log_level)
    c0, c1, _ = c.worst_others
    shown_before = pr.bound((c0, c0, c1, c1), eps / (1.0 + t))[1]
    assert c.exhibited_log_delta <= c.log_delta <= max(shown_before, c.exhibited_log_delta + math.log1p(1e-5))
    e = K.certify_k(3, eps0, n, eps=eps, tol=1e-5, max_cells=math.inf)  # explicit: in delta only
    assert e.converged and e.gap <= 1e-5 < c.gap  # the default stopped earlier, at the eps gap
    assert e.exhibited_log_delta <= e.log_delta <= c.log_delta + 1e-12


def test_product_round_trip_beyond_small_n():
    m = ShuffledKRR(3, 2.0, 1050)
    e = m.epsilon(1e-6, method="worst-case")
    cert = m.certificate(delta=1e-6)
    # within the default gap (the round trip may have stepped it up by a few 1e-7)
    assert cert.epsilon_lower <= e <= cert.epsilon_lower * (1.0 + K.default_tol(1050)) * (1.0 + 1e-6)
    assert m.delta(e, method="worst-case") <= 1e-6
    assert e <= m.epsilon(1e-6, method="blanket")


def test_bad_budget_inputs_raise_naming_the_parameter():
    for bad in (0.0, -1.0, math.nan, -math.inf, True, "1e9"):
        with pytest.raises(ParameterError, match="max_cells"):
            K.certify_k(3, 1.0, 10, eps=0.1, max_cells=bad)
    for bad in (0.0, -1e-5, 1.5, math.inf):
        with pytest.raises(ParameterError, match="tol"):
            K.certify_k(3, 1.0, 10, delta=1e-3, tol=bad)


def test_refused_up_front_where_the_root_box_alone_is_over_budget():
    """n = 1e6: one root evaluation is ~1e12 cells (and ~8 GB): refused at once, nothing built."""
    assert K.BoxProblem(1.0, 10**6, -20.0).root_work() > K.DEFAULT_MAX_CELLS
    for query in ({"delta": 1e-6}, {"eps": 0.01}):
        with pytest.raises(WorkBudgetExceeded, match="max_cells"):
            K.certify_k(3, 1.0, 10**6, **query)
    with pytest.raises(WorkBudgetExceeded, match="root box"):
        ShuffledKRR(3, 1.0, 10**6).epsilon(1e-6, method="worst-case")
    assert ShuffledKRR(3, 1.0, 10**6).auto_method == "blanket"  # auto is not affected
    # the cap is max(max_cells, DEFAULT_MAX_CELLS): the n = 7 budget stops above use max_cells=1
    assert K.BoxProblem(1.0, 7, -20.0).root_work() < 1e6 < K.DEFAULT_MAX_CELLS


def test_root_work_estimate_tracks_the_measured_work():
    for n, eps in ((1000, 0.13), (3000, 0.072)):
        pr = K.BoxProblem(1.0, n, math.log(1e-6))
        pr.bound((0, n - 1, 0, n - 1), eps)
        assert 0.5 <= pr.root_work() / pr.work <= 3.0


@pytest.mark.parametrize("n,eps0,eps", [(30, 1.0, 0.5), (60, 2.0, 1.2), (7, 0.5, 0.1)])
def test_delta_query_truncates_at_the_best_corners_level(n, eps0, eps):
    """The windows of a delta query drop at most e^-25 of the best corner's exhibited value (it
    used to keep e^-60 - 25): the level is at most the witness's value (plus the loop's 1) and
    the certificate re-checks."""
    c = K.certify_k(3, eps0, n, eps=eps)
    assert c.converged and K.verify(c)
    assert -30.0 < c.log_level <= c.exhibited_log_delta + 1.0  # neither e^-60 nor the first -30


def test_shallow_delta_below_the_deepest_level_stops_at_the_dropped_mass():
    """n = 1000, eps = 0.6 (eps0 = 1): every dataset's delta is below e^-85, the resolution of
    the e^-60 windows; the shallow query (``deep=False``, auto's curve) stops at once with a sound
    bound at about that mass (not converged). The deep query (the default) converges at e^-165.5
    here, in about 30 s: test_shuffled_krr_worst_case_k tests it at n = 200."""
    n, eps0, eps = 1000, 1.0, 0.6
    c = K.certify_k(3, eps0, n, eps=eps, deep=False)
    assert not c.converged and K.verify(c) and c.log_level == -60.0
    assert c.evaluations < 40 and len(c.cover) == 1
    assert c.log_delta <= -60.0 - 25.0 + math.log(16.0) + 1e-9
    assert c.log_delta >= float(dataset_log_delta(eps, 3, eps0, [0, 0, n - 1]))  # the corner: e^-165
