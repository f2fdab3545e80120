"""calibrate_eps0 and min_users: answers are certified, optimal for the searched parameter, validated."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffle_accounting import ParameterError
from shuffle_accounting.shuffled_krr import calibration
from shuffle_accounting.shuffled_krr.accountant import ShuffleAccountant, ShuffledKRRDpEvent
from shuffle_accounting.shuffled_krr.blanket import certified_log_delta
from shuffle_accounting.shuffled_krr.calibration import (
    calibrate_eps0,
    min_users,
    single_round_epsilon,
)
from shuffle_accounting.shuffled_krr.curve_grid import certified_grid_log_delta


def _delta1(k, eps0, n, eps):
    """The certified single-release bound that calibration uses (the one-pass grid where it applies)."""
    return math.exp(float(certified_grid_log_delta(np.array([eps]), k, eps0, n, worst_case=False)[0]))


def _eps_r(k, eps0, n, delta, rounds):
    return ShuffleAccountant().compose(ShuffledKRRDpEvent(k, eps0, n), rounds).get_epsilon(delta)


# ----- single-round epsilon (the root finder calibration relies on) ---------------------------


@pytest.mark.parametrize("k, eps0, n", [(2, 1.0, 80), (3, 2.0, 40), (5, 0.5, 20)])
@pytest.mark.parametrize("delta", [0.3, 1e-3, 1e-8])
def test_single_round_epsilon_is_smallest_certified(k, eps0, n, delta):
    eps = single_round_epsilon(k, eps0, n, delta)
    assert 0.0 <= eps <= eps0
    assert _delta1(k, eps0, n, eps) <= delta  # rounded up: the bound holds at the returned eps
    if eps > 0:
        assert _delta1(k, eps0, n, eps * (1 - 1e-8)) > delta * (1 - 1e-9)


def test_single_round_epsilon_zero_when_delta_large():
    assert single_round_epsilon(2, 1.0, 10, 0.99) == 0.0


# ----- calibrate_eps0 ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "k, n, epsilon, delta", [(2, 100, 0.5, 1e-4), (3, 60, 1.0, 1e-5), (4, 30, 0.8, 1e-3)]
)
def test_calibrate_eps0_single_round_certified_and_maximal(k, n, epsilon, delta):
    e0 = calibrate_eps0(k, n, epsilon, delta)
    assert e0 >= epsilon  # never worse than the pure-DP choice eps0 = epsilon
    assert _delta1(k, e0, n, epsilon) <= delta
    assert single_round_epsilon(k, e0, n, delta) <= epsilon
    assert _delta1(k, e0 * (1 + 1e-5), n, epsilon) > delta  # rounded down, within rtol


def test_calibrate_eps0_multi_round_certified_and_maximal():
    # rtol = 1e-2 keeps the number of composed PLDs (one per bisection step) small
    k, n, epsilon, delta, rounds = 2, 100, 1.0, 1e-4, 3
    e0 = calibrate_eps0(k, n, epsilon, delta, rounds=rounds, rtol=1e-2)
    assert e0 >= epsilon / rounds
    assert _eps_r(k, e0, n, delta, rounds) <= epsilon
    assert _eps_r(k, e0 * 1.011, n, delta, rounds) > epsilon
    # composition costs: more rounds, smaller eps0; more users, larger eps0
    assert e0 < calibrate_eps0(k, n, epsilon, delta, rounds=1)
    assert calibrate_eps0(k, 200, epsilon, delta, rounds=rounds, rtol=1e-2) > e0


def test_calibrate_eps0_monotone_in_n():
    vals = [calibrate_eps0(2, n, 0.5, 1e-4, rtol=1e-4) for n in (25, 50, 100)]
    assert vals[0] <= vals[1] <= vals[2]


def test_calibrate_eps0_unbounded_target_raises():
    with pytest.raises(ParameterError, match="EPS0_CAP"):
        calibrate_eps0(2, 10, 40.0, 1e-6)
    with pytest.raises(ParameterError, match="EPS0_CAP"):
        calibrate_eps0(2, 10, 65.0, 1e-6, rounds=2)


# ----- min_users --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "k, eps0, epsilon, delta", [(2, 1.0, 0.3, 1e-3), (2, 2.0, 0.8, 1e-5), (3, 1.0, 0.5, 1e-3)]
)
def test_min_users_single_round_is_exact(k, eps0, epsilon, delta):
    n = min_users(k, eps0, epsilon, delta)
    assert n > 1
    assert _delta1(k, eps0, n, epsilon) <= delta
    assert _delta1(k, eps0, n - 1, epsilon) > delta * (1 - 1e-9)


def test_min_users_multi_round():
    k, eps0, epsilon, delta, rounds = 2, 1.0, 0.8, 1e-3, 3
    n = min_users(k, eps0, epsilon, delta, rounds=rounds)
    assert _eps_r(k, eps0, n, delta, rounds) <= epsilon < _eps_r(k, eps0, n - 1, delta, rounds)
    assert n >= min_users(k, eps0, epsilon, delta, rounds=1)


def test_min_users_pure_dp_shortcut():
    assert min_users(3, 0.5, 0.5, 1e-6) == 1
    assert min_users(3, 0.5, 1.5, 1e-6, rounds=3) == 1


def test_min_users_cap(monkeypatch):
    monkeypatch.setattr(calibration, "N_CAP", 16)
    with pytest.raises(ParameterError, match="N_CAP = 16"):
        min_users(2, 2.0, 0.1, 1e-6)


# ----- bad inputs -------------------------------------------------------------------------------

BAD = [
    ("k", 1),
    ("k", 2.5),
    ("k", True),
    ("k", float("nan")),
    ("epsilon", 0.0),
    ("epsilon", -1.0),
    ("epsilon", float("nan")),
    ("epsilon", float("inf")),
    ("epsilon", True),
    ("delta", 0.0),
    ("delta", 1.0),
    ("delta", 2.0),
    ("delta", float("nan")),
    ("delta", False),
    ("rounds", 0),
    ("rounds", 1.5),
    ("rounds", True),
    ("rounds", -2),
    ("value_discretization_interval", 0.0),
    ("value_discretization_interval", float("nan")),
]


@pytest.mark.parametrize(
    "name, value",
    BAD + [("n", 0), ("n", 3.5), ("n", True), ("n", float("inf")), ("rtol", 0.0), ("rtol", 0.5)],
)
def test_calibrate_eps0_rejects_bad_inputs(name, value):
    kwargs = dict(k=2, n=20, epsilon=0.5, delta=1e-4)
    kwargs[name] = value
    with pytest.raises(ParameterError, match=rf"^{name} must be"):
        calibrate_eps0(**kwargs)


@pytest.mark.parametrize(
    "name, value",
    BAD + [("eps0", 0.0), ("eps0", -1.0), ("eps0", float("nan")), ("eps0", float("inf")), ("eps0", True)],
)
def test_min_users_rejects_bad_inputs(name, value):
    kwargs = dict(k=2, eps0=1.0, epsilon=0.5, delta=1e-4)
    kwargs[name] = value
    with pytest.raises(ParameterError, match=rf"^{name} must be"):
        min_users(**kwargs)


def test_single_round_calibration_at_scale_uses_the_fast_certified_curve():
    # n >= FAST_BLANKET_MIN_N: the steps are decided by the sub-linear certified curve (an upper
    # bound on the exact blanket sum, within its rtol), so the answer is certified by the exact
    # sum too, and at most ~1e-3 (the fast curve's rtol in delta) below the exact optimum
    k, n, epsilon, delta = 10, 200_000, 0.3, 1e-9
    e0 = calibrate_eps0(k, n, epsilon, delta)
    assert certified_log_delta(np.array([epsilon]), k, e0, n)[0] <= math.log(delta)
    assert certified_log_delta(np.array([epsilon]), k, e0 * (1 + 2e-3), n)[0] > math.log(delta)


def test_single_round_calibration_below_the_floor_falls_back_to_the_exact_sum():
    # a target below e^WINDOW_LOG_FLOOR: the fast curve's Chernoff shortcut cannot decide it, so
    # the exact sum does; the answer still certifies the tiny delta
    k, n, epsilon, delta = 10, 100_000, 1.0, 1e-60
    e0 = calibrate_eps0(k, n, epsilon, delta)
    assert certified_log_delta(np.array([epsilon]), k, e0, n)[0] <= math.log(delta)
    # maximal for the exact sum (a Chernoff-decided search would stop well below it)
    assert certified_log_delta(np.array([epsilon]), k, e0 * (1 + 1e-4), n)[0] > math.log(delta)
