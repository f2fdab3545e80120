"""dataset_delta at scale (issue 11 item 5): windowed paths against the exact enumeration."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffle_accounting._validation import ParameterError, WorkBudgetExceeded
from shuffle_accounting.shuffled_krr import _krr_grid as G
from shuffle_accounting.shuffled_krr import exact as X
from shuffle_accounting.shuffled_krr.exact import dataset_delta, dataset_log_delta, dataset_log_delta_bounds


def _exact_dirs(k, eps0, counts, eps):
    lp, lq = X.histogram_log_pq(k, eps0, tuple(counts))
    f = float(X.log_hockey_sorted(*X.pld_atoms(lp, lq, eps0), np.array([eps]))[0])
    r = float(X.log_hockey_sorted(*X.pld_atoms(lq, lp, eps0), np.array([eps]))[0])
    return f, r


def _inside(x, lo, up):
    if x == -math.inf:
        return lo == -math.inf
    return lo <= x + 1e-12 * abs(x) and x <= up + 1e-12 * abs(x)


@pytest.mark.parametrize("k", [3, 4, 6])
@pytest.mark.parametrize("v", [0, 2])
@pytest.mark.parametrize(
    "eps0,eps,n", [(1.0, 0.3, 8), (2.0, 1.0, 12), (0.5, 0.05, 15), (4.0, 3.9, 6), (3.0, 0.0, 9)]
)
def test_single_class_tails_bracket_the_exact_enumeration(k, v, eps0, eps, n):
    counts = [0] * k
    counts[v] = n - 1
    f, r = _exact_dirs(k, eps0, counts, eps)
    (fu, fl), (ru, rl) = G.single_class_log_hockey(k, eps0, n, v, eps, -80.0)
    assert _inside(f, fl, fu) and _inside(r, rl, ru)
    if f > -math.inf:
        assert fu - fl < 1e-6 * (1 + abs(f))


@pytest.mark.parametrize("counts", [(3, 2, 6), (0, 5, 7), (9, 1, 1), (4, 4, 4), (0, 0, 11)])
@pytest.mark.parametrize("eps0,eps", [(1.0, 0.2), (2.5, 1.0)])
def test_k3_grid_brackets_the_exact_enumeration(counts, eps0, eps):
    f, r = _exact_dirs(3, eps0, counts, eps)
    (fu, fl), (ru, rl) = G.dataset_log_hockey_k3(eps0, counts, eps, -80.0)
    assert _inside(f, fl, fu) and _inside(r, rl, ru)
    assert fu - fl < 1e-6 * (1 + abs(f))


def test_scaled_bounds_match_exact_path_where_both_run():
    for k, counts, eps0, eps in [
        (3, (2, 1, 9), 1.0, 0.3),
        (5, (0, 0, 14, 0, 0), 2.0, 0.7),
        (4, (13, 0, 0, 0), 1.0, 0.2),
    ]:
        lo, up = X.scaled_bounds(eps, k, eps0, counts)
        x = float(dataset_log_delta(eps, k, eps0, list(counts)))
        assert lo <= x + 1e-12 * abs(x) <= up + 2e-12 * abs(x)


def test_the_issue_dataset_runs_and_is_bracketed():
    others = [0, 0, 999, 0, 0, 0, 0, 0, 0, 0]
    d = dataset_delta(0.1, 10, 2.0, others)
    lo, up = dataset_log_delta_bounds(0.1, 10, 2.0, others)
    assert 0.0 < d and lo <= math.log(d) <= up and up - lo < 1e-6
    # the same dataset is the worst family member of ``lower`` up to the marginal: its delta is
    # at least the exhibited (h0, h1) marginal of "all at x2", a post-processing of the histogram
    from shuffle_accounting.shuffled_krr.lower import SplitCandidate as _SplitCandidate

    marg = float(
        _SplitCandidate(tuple(others), "all at x2", "m", 10, 2.0, 1000).log_delta(np.array([0.1]))[0]
    )
    assert marg <= up


def test_bounds_api_shapes_and_small_inputs():
    lo, up = dataset_log_delta_bounds([0.1, 0.2], 3, 1.0, [1, 1, 1])
    assert lo.shape == up.shape == (2,) and np.all(lo <= up)
    lo, up = dataset_log_delta_bounds(0.1, 3, 1.0, [1, 1, 1])
    x = dataset_log_delta(0.1, 3, 1.0, [1, 1, 1])
    assert isinstance(lo, float) and lo <= x <= up
    assert dataset_log_delta_bounds(2.0, 3, 1.0, [0, 0, 9999]) == (-math.inf, -math.inf)
    # a three-value k = 10 dataset beyond every exact path: answered by the general bracket,
    # refused only when its work budget is too small (before any work)
    with pytest.raises(WorkBudgetExceeded, match="max_work"):
        dataset_log_delta_bounds(0.1, 10, 2.0, [100, 50, 349] + [0] * 7, max_work=1000)
    with pytest.raises(ParameterError, match="eps"):
        dataset_log_delta_bounds(-1.0, 3, 1.0, [1, 1, 1])


@pytest.mark.parametrize("counts", [(3, 2, 6), (9, 1, 1), (4, 4, 4), (12, 9, 7), (0, 8, 14)])
@pytest.mark.parametrize("eps0,eps", [(1.0, 0.2), (2.5, 1.0), (0.5, 0.0)])
def test_k3_one_user_at_a_time_brackets_the_exact_enumeration(monkeypatch, counts, eps0, eps):
    """The sequential path (forced: no direct convolution allowed) against exact enumeration."""
    monkeypatch.setattr(G, "MAX_DATASET_WORK", 0)
    f, r = _exact_dirs(3, eps0, counts, eps)
    (fu, fl), (ru, rl) = G.dataset_log_hockey_k3(eps0, counts, eps, -80.0)
    assert _inside(f, fl, fu) and _inside(r, rl, ru)
    assert fu - fl < 1e-6 * (1 + abs(f)) and ru - rl < 1e-6 * (1 + abs(r))


def test_add_users_counts_its_trimmed_mass(monkeypatch):
    """A coarse truncation level makes the trims drop real mass: the bracket still holds and widens."""
    counts, eps0, eps = (14, 11, 9), 1.0, 0.1
    f, r = _exact_dirs(3, eps0, counts, eps)
    monkeypatch.setattr(G, "MAX_DATASET_WORK", 0)
    (fu, fl), (ru, rl) = G.dataset_log_hockey_k3(eps0, counts, eps, -8.0)
    assert _inside(f, fl, fu) and _inside(r, rl, ru)
    (fu2, fl2), _ = G.dataset_log_hockey_k3(eps0, counts, eps, -80.0)
    assert fu - fl > fu2 - fl2  # the dropped mass was counted, not ignored


def test_three_large_classes_at_n_1000_run_and_agree_with_the_direct_path():
    # beyond MAX_DATASET_WORK for the direct convolution: the sequential path answers (0.3 s)
    counts = (100, 100, 799)
    lo, up = dataset_log_delta_bounds(0.13, 3, 1.0, list(counts))
    assert -math.inf < lo <= up < lo + 1e-6
    # and a smaller three-class dataset, where both paths run, gives overlapping brackets
    (fu, fl), _ = G.dataset_log_hockey_k3(1.0, (40, 30, 50), 0.2, -70.0)
    save = G.MAX_DATASET_WORK
    try:
        G.MAX_DATASET_WORK = 0
        (fu2, fl2), _ = G.dataset_log_hockey_k3(1.0, (40, 30, 50), 0.2, -70.0)
    finally:
        G.MAX_DATASET_WORK = save
    assert max(fl, fl2) <= min(fu, fu2)


# ---------------------------------------------------------------------------------------------
# k >= 4, every other user at 0 or 1: the three-category (0, 1, rest) grid
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [4, 5, 6])
@pytest.mark.parametrize("c0,c1", [(3, 5), (9, 2), (1, 1), (7, 7), (0, 6), (14, 0)])
@pytest.mark.parametrize("eps0,eps", [(1.0, 0.2), (2.5, 1.0), (0.5, 0.0), (3.0, 2.99)])
def test_rest_grid_brackets_the_exact_enumeration(k, c0, c1, eps0, eps):
    counts = [c0, c1] + [0] * (k - 2)
    f, r = _exact_dirs(k, eps0, counts, eps)
    (fu, fl), (ru, rl) = G.dataset_log_hockey_rest(k, eps0, c0, c1, eps, -80.0)
    assert _inside(f, fl, fu) and _inside(r, rl, ru)
    assert fu - fl < 1e-6 * (1 + abs(f)) and ru - rl < 1e-6 * (1 + abs(r))


@pytest.mark.parametrize("k,c0,c1", [(4, 12, 9), (5, 3, 17), (6, 8, 8)])
@pytest.mark.parametrize("eps0,eps", [(1.0, 0.2), (2.5, 1.0)])
def test_rest_grid_one_user_at_a_time_brackets_the_exact_enumeration(monkeypatch, k, c0, c1, eps0, eps):
    """The sequential path (forced: no direct convolution allowed), and a coarse truncation level
    whose trims drop real mass: the bracket still holds."""
    monkeypatch.setattr(G, "MAX_DATASET_WORK", 0)
    f, r = _exact_dirs(k, eps0, [c0, c1] + [0] * (k - 2), eps)
    for tol in (-80.0, -8.0):
        (fu, fl), (ru, rl) = G.dataset_log_hockey_rest(k, eps0, c0, c1, eps, tol)
        assert _inside(f, fl, fu) and _inside(r, rl, ru)
    assert fu - fl > 1e-9  # at -8 the dropped mass was counted, not ignored


def test_rest_grid_over_budget_falls_back_to_the_general_bracket(monkeypatch):
    """With the family's grid over its budget, the general bracket answers (its own budget,
    ``max_work``, governs it; nobody at values >= 2, so its two-dimensional routes are exact):
    it contains the family's own bracket; a tiny ``max_work`` refuses before any work."""
    lo0, up0 = dataset_log_delta_bounds(0.1, 5, 1.0, [200, 199, 0, 0, 0])
    monkeypatch.setattr(G, "MAX_DATASET_WORK", 0)
    monkeypatch.setattr(G, "MAX_SEQUENTIAL_WORK", 0)
    assert G.dataset_log_hockey_rest(4, 1.0, 5, 5, 0.1, -80.0) is None
    lo, up = dataset_log_delta_bounds(0.1, 5, 1.0, [200, 199, 0, 0, 0])
    assert lo <= lo0 + 1e-9 and up0 <= up + 1e-9 and up - lo < 1e-6
    with pytest.raises(WorkBudgetExceeded, match=r"n=400"):
        dataset_log_delta(0.1, 5, 1.0, [200, 199, 0, 0, 0], max_work=10)


def test_rest_scaled_bounds_match_the_exact_path_where_both_run():
    # n = 120: exact enumeration over (h0, h1, h_rest) and the windowed path both run
    for k, c0, c1, eps0, eps in [(4, 70, 49, 1.0, 0.15), (7, 20, 99, 2.0, 0.5)]:
        counts = (c0, c1) + (0,) * (k - 2)
        lo, up = X.scaled_bounds(eps, k, eps0, counts)
        x = float(dataset_log_delta(eps, k, eps0, list(counts)))
        assert lo <= x + 1e-12 * abs(x) <= up + 2e-12 * abs(x)
        assert up - lo < 1e-6


@pytest.mark.parametrize(
    "k,others,eps0,eps", [(5, [300, 699, 0, 0, 0], 1.0, 0.1), (10, [400, 599] + [0] * 8, 2.0, 0.3)]
)
def test_rest_datasets_beyond_the_exact_limit(k, others, eps0, eps):
    """n = 1000 (the exact histogram stops near n = 270): a certified bracket, above the count
    output's exact delta (a post-processing of the histogram) and below the certified worst case."""
    from shuffle_accounting.shuffled_krr import ShuffledKRR

    assert X.histogram_work(sum(others) + 1, X.histogram_bins(k, others)) > X.MAX_HISTOGRAM_WORK
    lo, up = dataset_log_delta_bounds(eps, k, eps0, others)
    assert -math.inf < lo <= up < lo + 1e-6
    assert dataset_log_delta(eps, k, eps0, others) == up  # the certified upper end
    assert float(dataset_log_delta(eps, k, eps0, others, output="count")) <= up
    assert lo <= float(ShuffledKRR(k, eps0, 1000).log_delta(eps))
    # the mirror dataset (others' 0 <-> 1 counts swapped) has the same delta (relabel 0 <-> 1)
    lo2, up2 = dataset_log_delta_bounds(eps, k, eps0, [others[1], others[0]] + others[2:])
    assert max(lo, lo2) <= min(up, up2)


# ---------------------------------------------------------------------------------------------
# k >= 4, other users at 0 (or 1) and at one value v >= 2: (0, v, {1} u rest) grid + binomial split
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k,v", [(4, 2), (5, 3), (6, 5)])
@pytest.mark.parametrize("c0,cv", [(3, 5), (9, 2), (1, 1), (7, 7), (1, 12)])
@pytest.mark.parametrize("eps0,eps", [(1.0, 0.2), (2.5, 1.0), (0.5, 0.0), (3.0, 2.99), (1.0, 1.0 - 1e-6)])
def test_zero_v_grid_brackets_the_exact_enumeration(k, v, c0, cv, eps0, eps):
    counts = [0] * k
    counts[0], counts[v] = c0, cv
    f, r = _exact_dirs(k, eps0, counts, eps)
    (fu, fl), (ru, rl) = G.dataset_log_hockey_zero_v(k, eps0, c0, cv, eps, -80.0)
    assert _inside(f, fl, fu) and _inside(r, rl, ru)
    # tight (the grid's relative error ~1e-10 is amplified by the cancellation in P - E Q as eps -> eps0)
    width = 1e-6 if eps0 - eps > 1e-3 else 1e-2
    assert fu - fl < width * (1 + abs(f)) and ru - rl < width * (1 + abs(r))


@pytest.mark.parametrize("k,c0,cv", [(4, 12, 9), (5, 3, 17), (6, 8, 8)])
def test_zero_v_grid_one_user_at_a_time_and_coarse_truncation(monkeypatch, k, c0, cv):
    monkeypatch.setattr(G, "MAX_DATASET_WORK", 0)
    eps0, eps = 1.5, 0.3
    counts = [c0, 0, cv] + [0] * (k - 3)
    f, r = _exact_dirs(k, eps0, counts, eps)
    for tol in (-80.0, -8.0):
        (fu, fl), (ru, rl) = G.dataset_log_hockey_zero_v(k, eps0, c0, cv, eps, tol)
        assert _inside(f, fl, fu) and _inside(r, rl, ru)
    assert fu - fl > 1e-9  # at -8 the trimmed and skipped mass was counted, not ignored
    monkeypatch.setattr(G, "MAX_SEQUENTIAL_WORK", 0)
    assert G.dataset_log_hockey_zero_v(k, eps0, c0, cv, eps, -80.0) is None


@pytest.mark.parametrize("k,others", [(4, (20, 0, 19, 0)), (5, (0, 25, 0, 14, 0)), (6, (0, 9, 0, 0, 0, 30))])
def test_zero_v_scaled_bounds_match_the_exact_path_where_both_run(k, others):
    """n = 40: the exact four-category enumeration and the windowed path (both orientations:
    others at 0 and v, and the mirror, others at 1 and v) agree."""
    eps0, eps = 1.2, 0.25
    lo, up = X.scaled_bounds(eps, k, eps0, others)
    x = float(dataset_log_delta(eps, k, eps0, list(others)))
    assert lo <= x + 1e-12 * abs(x) <= up + 2e-12 * abs(x)
    assert up - lo < 1e-6


def test_zero_v_dataset_beyond_the_exact_limit():
    """n = 600 (exact four-category enumeration stops near n = 65): a certified bracket, above the
    count output's exact delta, below the certified worst case, equal to its mirror's."""
    from shuffle_accounting.shuffled_krr import ShuffledKRR

    k, eps0, eps = 5, 1.0, 0.1
    others = [200, 0, 0, 399, 0]
    assert X.histogram_work(sum(others) + 1, X.histogram_bins(k, others)) > X.MAX_HISTOGRAM_WORK
    lo, up = dataset_log_delta_bounds(eps, k, eps0, others)
    assert -math.inf < lo <= up < lo + 1e-6
    assert dataset_log_delta(eps, k, eps0, others) == up  # the certified upper end
    assert float(dataset_log_delta(eps, k, eps0, others, output="count")) <= up
    assert lo <= float(ShuffledKRR(k, eps0, 600).log_delta(eps))
    assert dataset_log_delta_bounds(eps, k, eps0, [0, 200, 0, 399, 0]) == (lo, up)


def test_two_value_paths_random_sweep_against_the_exact_enumeration(monkeypatch):
    """Seeded sweep over k, eps0 up to 7, eps up to eps0, counts (zeros included), truncation
    levels and both convolution paths: every bracket holds the exact value."""
    rng = np.random.default_rng(11)
    for _ in range(40):
        k = int(rng.integers(4, 8))
        eps0 = float(rng.uniform(0.05, 7.0))
        eps = float(eps0 * rng.uniform(0.0, 1.0) ** 0.3)
        a, b = int(rng.integers(0, 12)), int(rng.integers(1, 12))
        tol = float(rng.choice([-80.0, -30.0, -10.0]))
        monkeypatch.setattr(G, "MAX_DATASET_WORK", 0 if rng.uniform() < 0.3 else 1_000_000_000)
        v = int(rng.integers(2, k))
        for counts, run in [
            ({0: a, v: b}, lambda: G.dataset_log_hockey_zero_v(k, eps0, a, b, eps, tol)),
            ({0: a, 1: b}, lambda: G.dataset_log_hockey_rest(k, eps0, a, b, eps, tol)),
        ]:
            f, r = _exact_dirs(k, eps0, [counts.get(y, 0) for y in range(k)], eps)
            (fu, fl), (ru, rl) = run()
            assert _inside(f, fl, fu) and _inside(r, rl, ru), (k, eps0, eps, counts, tol)


def test_k2_bounds_of_an_unbalanced_dataset_below_the_count_limit():
    # k = 2, n = 1e6, others = (999996, 3): c0 * c1 is below MAX_COUNT_WORK, so the exact path
    # answers; dataset_log_delta_bounds sent it to the two-bin *histogram* enumeration (about 2e12
    # operations) and raised ParameterError, while dataset_log_delta used the count (the full
    # histogram for k = 2). Both now agree, the bracket around the exact value
    others = [999996, 3]
    lo, up = dataset_log_delta_bounds(0.01, 2, 2.0, others)
    v = dataset_log_delta(0.01, 2, 2.0, others)
    assert lo <= v <= up and up - lo < 1e-8 and -18.99 < v < -18.98
