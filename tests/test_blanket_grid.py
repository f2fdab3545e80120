"""One-pass grid evaluation of the certified blanket curve (``blanket.certified_log_delta_grid``).

The grid evaluator shares one truncation window, its tables and the dropped-mass bound between the
eps of a grid; every value must agree with the one-eps reference ``certified_log_delta`` to
rounding (both are certified upper bounds on the same exact divergence, within ~1e-10 of it) and
never fall below the exact divergence (brute force on small n).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffle_accounting import ParameterError
from shuffle_accounting.shuffled_krr.blanket import (
    blanket_log_delta_bruteforce,
    certified_log_delta,
    certified_log_delta_grid,
)

# relative agreement in delta with the one-eps evaluation (its dropped-mass budget is 1e-10)
REL = 1e-9


def _close(grid, ref):
    fin = np.isfinite(ref)
    assert np.array_equal(fin, np.isfinite(grid))
    # same value to rounding: |log ratio| <= REL (delta-relative)
    assert np.all(np.abs(grid[fin] - ref[fin]) <= REL), float(np.max(np.abs(grid[fin] - ref[fin])))


@pytest.mark.parametrize(
    "k, eps0, n",
    [
        (2, 1.0, 2),
        (3, 2.0, 7),
        (10, 2.0, 60),
        (2, 0.5, 400),
        (4, 3.0, 1000),
        (10, 2.0, 10_000),
        (2, 1.0, 10_000),
    ],
)
def test_grid_matches_one_eps_evaluation(k, eps0, n):
    eps = np.unique(np.concatenate([np.linspace(0.0, eps0 * 1.05, 23), [eps0 * (1 - 1e-5), eps0]]))
    # the one-eps reference, but only where delta is not astronomically small (cost)
    ref = certified_log_delta(eps, k, eps0, n, log_delta_floor=-120.0)
    got = certified_log_delta_grid(eps, k, eps0, n, log_delta_floor=-120.0)
    big = ref > -120.0
    _close(got[big], ref[big])
    assert np.all(got[eps >= eps0] == -np.inf)


def test_grid_matches_at_a_million_users():
    eps = np.array([0.004, 0.012])
    ref = certified_log_delta(eps, 10, 2.0, 10**6)
    got = certified_log_delta_grid(eps, 10, 2.0, 10**6)
    _close(got, ref)


@pytest.mark.parametrize("k, eps0, n", [(2, 1.0, 5), (3, 1.5, 6), (5, 2.5, 8)])
def test_grid_is_above_brute_force(k, eps0, n):
    eps = np.linspace(0.0, eps0, 9)
    got = certified_log_delta_grid(eps, k, eps0, n)
    for e, g in zip(eps, got):
        if e >= eps0:  # shuffled eps0-LDP reports are eps0-DP: delta is exactly 0 there (the
            assert g == -math.inf  # float brute force leaves ~1e-17 of rounding noise at eps0)
            continue
        exact = blanket_log_delta_bruteforce(float(e), k, eps0, n)
        if exact == -math.inf:
            continue
        assert g >= exact - 1e-12


def test_grid_any_order_and_shape():
    eps = np.array([[0.3, 0.0], [0.1, 0.2]])
    got = certified_log_delta_grid(eps, 3, 1.0, 500)
    assert got.shape == (2, 2)
    flat = certified_log_delta_grid(np.sort(eps.ravel()), 3, 1.0, 500)
    assert np.array_equal(np.sort(got.ravel())[::-1], flat)  # decreasing in eps
    assert certified_log_delta_grid(0.2, 3, 1.0, 500).shape == ()
    n1 = certified_log_delta_grid([0.0, 0.5], 3, 1.0, 1)
    assert np.array_equal(n1, certified_log_delta([0.0, 0.5], 3, 1.0, 1))


@pytest.mark.parametrize(
    "args, kwargs, name",
    [
        ((-0.1, 3, 1.0, 10), {}, "eps"),
        ((float("nan"), 3, 1.0, 10), {}, "eps"),
        ((0.1, 1, 1.0, 10), {}, "k"),
        ((0.1, 3, 0.0, 10), {}, "eps0"),
        ((0.1, 3, 1.0, 0), {}, "n"),
        ((0.1, 3, 1.0, True), {}, "n"),
        ((0.1, 3, 1.0, 10), {"log_delta_floor": 1.0}, "log_delta_floor"),
    ],
)
def test_grid_rejects_bad_inputs(args, kwargs, name):
    with pytest.raises(ParameterError, match=rf"^{name} must be"):
        certified_log_delta_grid(*args, **kwargs)
