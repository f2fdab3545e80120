"""Analyzer: unbiased matrix inversion, simplex projection vs brute force and a QP, TV, histogram."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.randomizers import KRR
from shuffle_accounting.runtime import (
    KRRRandomizer,
    estimate_frequencies,
    histogram,
    project_simplex,
    total_variation,
)

# Seeds and Generators are used on purpose here (simulation mode): expect the warning.
pytestmark = pytest.mark.filterwarnings("ignore::shuffle_accounting._rng.PrivacyLeakWarning")


def test_estimator_is_unbiased_within_4_standard_errors():
    r = KRRRandomizer(5, 1.0)
    truth_counts = np.array([800, 500, 400, 200, 100])
    codes = np.repeat(np.arange(5), truth_counts)
    pi = truth_counts / truth_counts.sum()
    gen = np.random.default_rng(2024)
    est = np.array(
        [
            estimate_frequencies(histogram(r.randomize_codes(codes, rng=gen), 5), 5, r.effective_eps0)
            for _ in range(400)
        ]
    )
    se = est.std(axis=0, ddof=1) / math.sqrt(est.shape[0])
    assert np.all(np.abs(est.mean(axis=0) - pi) < 4 * se)
    # power: a visibly biased estimator (wrong eps0) fails the same check
    wrong = np.array(
        [estimate_frequencies(histogram(r.randomize_codes(codes, rng=gen), 5), 5, 1.3) for _ in range(100)]
    )
    se_w = wrong.std(axis=0, ddof=1) / math.sqrt(wrong.shape[0])
    assert np.any(np.abs(wrong.mean(axis=0) - pi) > 4 * se_w)


def test_closed_form_equals_matrix_inversion():
    k, eps0 = 6, 0.7
    counts = np.array([10, 0, 33, 5, 7, 45])
    m = KRR(k, eps0).matrix
    via_solve = np.linalg.solve(m.T, counts / counts.sum())
    assert np.allclose(estimate_frequencies(counts, k, eps0), via_solve, atol=1e-12)
    r = KRRRandomizer(k, eps0)
    assert np.allclose(r.estimate(counts), np.linalg.solve(r.matrix.T, counts / counts.sum()), atol=1e-12)
    # 2-D input: one batch per row
    two = estimate_frequencies(np.vstack([counts, counts[::-1]]), k, eps0)
    assert np.allclose(two[1], estimate_frequencies(counts[::-1], k, eps0))
    assert np.allclose(estimate_frequencies(counts, k, eps0).sum(), 1.0)


def _brute_force_projection(v: np.ndarray) -> np.ndarray:
    """Exact projection: for every support S, x_S = v_S + (1 - sum v_S)/|S|; keep the feasible closest."""
    best, best_d = None, math.inf
    k = v.size
    for size in range(1, k + 1):
        for s in itertools.combinations(range(k), size):
            x = np.zeros(k)
            idx = list(s)
            x[idx] = v[idx] + (1.0 - v[idx].sum()) / size
            if np.all(x >= -1e-15):
                d = float(np.sum((x - v) ** 2))
                if d < best_d:
                    best, best_d = x, d
    return best


def _qp_projection(v: np.ndarray) -> np.ndarray:
    k = v.size
    res = minimize(
        lambda x: 0.5 * np.sum((x - v) ** 2),
        np.full(k, 1.0 / k),
        jac=lambda x: x - v,
        bounds=[(0.0, None)] * k,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1.0, "jac": lambda x: np.ones(k)}],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    assert res.success
    return res.x


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-3, 3, allow_nan=False), min_size=2, max_size=6))
def test_projection_matches_brute_force_and_qp(values):
    v = np.array(values)
    x = project_simplex(v)
    assert np.all(x >= 0) and abs(x.sum() - 1.0) < 1e-12
    assert np.allclose(x, _brute_force_projection(v), atol=1e-12)
    assert np.allclose(x, _qp_projection(v), atol=1e-6)


def test_projection_rows_and_fixed_points():
    p = np.array([0.2, 0.3, 0.5])
    assert np.allclose(project_simplex(p), p)
    rows = np.array([[2.0, 0.0], [0.5, 0.5], [-1.0, 3.0]])
    out = project_simplex(rows)
    assert np.allclose(out, [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
    assert project_simplex([5.0]).tolist() == [1.0]


@pytest.mark.parametrize(
    "v", [[], [[]], np.zeros((2, 2, 2)), [1.0, float("nan")], [float("inf")], "ab", [True, False]]
)
def test_projection_bad_input(v):
    with pytest.raises(ParameterError, match="v"):
        project_simplex(v)


def test_total_variation():
    assert total_variation([1, 0], [0, 1]) == 1.0
    assert total_variation([0.2, 0.8], [0.2, 0.8]) == 0.0
    assert np.allclose(total_variation([[1, 0], [0.5, 0.5]], [0.5, 0.5]), [0.5, 0.0])
    with pytest.raises(ParameterError, match="p and q"):
        total_variation([1, 0], [1, 0, 0])
    with pytest.raises(ParameterError, match="p"):
        total_variation([float("nan"), 1], [0, 1])
    with pytest.raises(ParameterError, match="q"):
        total_variation([0, 1], ["a", "b"])


def test_histogram():
    assert histogram(np.array([], dtype=int), 3).tolist() == [0, 0, 0]
    assert histogram(np.array([1, 1], dtype=np.uint8), 2).tolist() == [0, 2]
    with pytest.raises(ParameterError, match="codes"):
        histogram([0, 3], 3)
    with pytest.raises(ParameterError, match="codes"):
        histogram([0.0, 1.0], 3)
    with pytest.raises(ParameterError, match="k"):
        histogram([0], 1)


@pytest.mark.parametrize(
    "counts,k,eps0,name",
    [
        ([1, 2], 3, 1.0, "counts"),
        ([1, -2, 3], 3, 1.0, "counts"),
        ([1.5, 2, 3], 3, 1.0, "counts"),
        ([0, 0, 0], 3, 1.0, "counts"),
        ([1, float("nan"), 3], 3, 1.0, "counts"),
        ([1, 2, 3], 1, 1.0, "k"),
        ([1, 2, 3], True, 1.0, "k"),
        ([1, 2, 3], 3, 0.0, "eps0"),
        ([1, 2, 3], 3, float("inf"), "eps0"),
        ([1, 2, 3], 3, True, "eps0"),
    ],
)
def test_estimate_bad_params(counts, k, eps0, name):
    with pytest.raises(ParameterError, match=name):
        estimate_frequencies(counts, k, eps0)
