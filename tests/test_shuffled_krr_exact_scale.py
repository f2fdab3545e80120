"""dataset_delta at scale (issue 11 item 5): windowed paths against the exact enumeration."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffle_accounting._validation import ParameterError
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
    with pytest.raises(ParameterError, match="others"):
        dataset_log_delta_bounds(0.1, 10, 2.0, [100, 0, 399] + [0] * 7)
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
