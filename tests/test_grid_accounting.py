"""The accountant's curve from the one-pass grid, the k = 2 worst case, the memo, calibration speed-ups.

Soundness first: every PLD built here must stay above an exhibited (concrete-dataset) value and
below the previous blanket-only construction; composed epsilons must stay between the exhibited
single-release epsilon and the blanket-based composition.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffle_accounting.shuffled_krr import accountant as acc_mod
from shuffle_accounting.shuffled_krr import calibration
from shuffle_accounting.shuffled_krr.accountant import ShuffleAccountant, ShuffledKRRDpEvent
from shuffle_accounting.shuffled_krr.blanket import certified_log_delta
from shuffle_accounting.shuffled_krr.mechanism import FAST_BLANKET_MIN_N, ShuffledKRR


def _blanket_only(monkeypatch):
    """Build PLDs from the blanket curve alone (the construction before the worst case was used)."""
    from shuffle_accounting.shuffled_krr import worst_case

    def no_information(e, eps0, n, **kw):
        return np.full(np.shape(e), np.inf)

    monkeypatch.setattr(worst_case, "certified_log_delta_grid", no_information)
    acc_mod.certified_grid.cache_clear()


@pytest.mark.parametrize("eps0, n", [(1.0, 40), (2.0, 25)])
def test_k2_worst_case_pld_is_tighter_and_above_exhibited(monkeypatch, eps0, n):
    ev = ShuffledKRRDpEvent(2, eps0, n)
    acc_mod.certified_grid.cache_clear()
    new1 = ShuffleAccountant().compose(ev).get_epsilon(1e-4)
    new5 = ShuffleAccountant().compose(ev, 5).get_epsilon(1e-4)
    with monkeypatch.context() as mp:
        _blanket_only(mp)
        old1 = ShuffleAccountant().compose(ev).get_epsilon(1e-4)
        old5 = ShuffleAccountant().compose(ev, 5).get_epsilon(1e-4)
    acc_mod.certified_grid.cache_clear()
    assert ShuffledKRR(2, eps0, n).epsilon_lower(1e-4) <= new1 <= old1
    assert new5 < old5  # composition gets tighter at k = 2


def test_curve_below_floor_is_filled_with_a_certified_value():
    """Above e^-120 the grid agrees with the one-point exact evaluator and with the grid's own
    certified lower bound; below it every value is still an upper bound (there the one-pass grid's
    dropped-mass bounds, ~e^-143, dominate)."""
    from shuffle_accounting.shuffled_krr.blanket_tables import BlanketTables

    k, eps0, n = 10, 2.0, 2000
    eps = np.linspace(0.0, eps0, 65)
    got = acc_mod.certified_grid_log_delta(eps, k, eps0, n)
    ref = certified_log_delta(eps, k, eps0, n, log_delta_floor=-120.0)
    low = BlanketTables(k, eps0, n, side="lower").log_delta(eps)
    live = eps < eps0
    # every upper bound is above the certified lower bound; the grid is within 1e-9 of it, the
    # one-point evaluator within its stated ~1e-6 (both relative)
    assert np.all(got[live] >= low[live]) and np.all(ref[live] >= low[live])
    above = ref > -120.0
    assert np.all(got[above] - low[above] <= 1e-9)
    assert np.all(np.abs(got[above] - ref[above]) <= 1e-6)
    assert np.all(got[~live] == -np.inf)


def test_large_n_uses_fast_evaluator_checked_against_exhibited(monkeypatch):
    """From FAST_BLANKET_MIN_N on, values from blanket_fast below the one-outcome bound are recomputed."""
    from shuffle_accounting.shuffled_krr import blanket_fast

    k, eps0, n = 10, 2.0, FAST_BLANKET_MIN_N
    eps = np.array([0.002, 0.004, 0.006])
    honest = acc_mod.certified_grid_log_delta(eps, k, eps0, n)
    # a broken fast evaluator (-inf everywhere, the known defect's symptom) must not get through
    monkeypatch.setattr(
        blanket_fast, "certified_log_delta_grid", lambda e, *a, **kw: np.full(np.shape(e), -np.inf)
    )
    fixed = acc_mod.certified_grid_log_delta(eps, k, eps0, n)
    exact = certified_log_delta(eps, k, eps0, n, log_delta_floor=-120.0)
    assert np.all(fixed >= exact - 1e-12)
    assert np.all(honest >= exact - 1e-6)  # the fast evaluator is within its rtol above the exact
    assert np.all(honest <= exact + 2e-3)  # within _FAST_RTOL (1e-3, relative)


def test_epsilon_memo_at_scale_is_exact_and_bounded():
    m = ShuffledKRR(10, 2.0, FAST_BLANKET_MIN_N)
    ShuffledKRR.epsilon.cache_clear()
    a = m.epsilon(1e-6)
    b = ShuffledKRR(10, 2.0, FAST_BLANKET_MIN_N).epsilon(1e-6)  # an equal value: same question
    info = ShuffledKRR.epsilon.cache_info()
    assert a == b and info.hits == 1 and info.maxsize == 256
    assert m.delta(a) <= 1e-6  # the memoised answer is the certified one
    with pytest.raises(ValueError, match="^delta must be"):
        m.epsilon(2.0)  # invalid input still raises (not memoised)
    small = ShuffledKRR(3, 1.0, 50)
    before = ShuffledKRR.epsilon.cache_info().currsize
    small.epsilon(1e-3)
    assert ShuffledKRR.epsilon.cache_info().currsize == before  # small n is not memoised


def test_calibration_memo_and_secant_stay_certified():
    calibration.composed_epsilon.cache_clear()
    k, n, epsilon, delta, rounds = 3, 40, 2.0, 1e-4, 2
    e0 = calibration.calibrate_eps0(k, n, epsilon, delta, rounds=rounds, rtol=1e-2, progress=False)
    got = ShuffleAccountant().compose(ShuffledKRRDpEvent(k, e0, n), rounds).get_epsilon(delta)
    assert got <= epsilon  # certified by the PLD at the returned eps0
    assert (
        ShuffleAccountant().compose(ShuffledKRRDpEvent(k, e0 * 1.012, n), rounds).get_epsilon(delta) > epsilon
    )
    assert calibration.composed_epsilon.cache_info().currsize > 0
    m = calibration.min_users(3, 2.0, 1.5, 1e-3, rounds=1, progress=False)
    assert calibration.feasible(3, 2.0, m, 1.5, 1e-3, 1, 1e-4)
    assert not calibration.feasible(3, 2.0, m - 1, 1.5, 1e-3, 1, 1e-4)
    assert math.isfinite(e0)


def test_progress_bar_is_off_without_a_terminal(capsys):
    with acc_mod.progress_bar(3, "x", None) as bar:
        bar.update(3)
    assert bar.disable  # pytest's stderr is not a terminal
    with acc_mod.progress_bar(3, "x", False) as bar:
        assert bar.disable


def test_planning_resolution_is_certified_and_looser():
    """The planning grid is an upper bound too (hull of upper bounds at fewer points): above the
    exhibited value, at or above the default grid's composition up to rounding."""
    from shuffle_accounting.shuffled_krr.accountant import DEFAULT_RESOLUTION, PLANNING_RESOLUTION

    k, eps0, n, delta = 3, 2.0, 200, 1e-4
    ev = ShuffledKRRDpEvent(k, eps0, n)
    plan = ShuffleAccountant(resolution=PLANNING_RESOLUTION).compose(ev)
    dflt = ShuffleAccountant(resolution=DEFAULT_RESOLUTION).compose(ev)
    assert ShuffledKRR(k, eps0, n).epsilon_lower(delta) <= dflt.get_epsilon(delta)
    assert dflt.get_epsilon(delta) <= plan.get_epsilon(delta) * (1 + 1e-6)
    g_plan, _ = acc_mod.certified_grid(k, eps0, n, 1e-4, PLANNING_RESOLUTION)
    g_dflt, _ = acc_mod.certified_grid(k, eps0, n, 1e-4, DEFAULT_RESOLUTION)
    assert g_plan.size < g_dflt.size


@pytest.mark.parametrize("bad", [None, (65, 0.2), "default", 1.0])
def test_resolution_must_be_a_grid_resolution(bad):
    from shuffle_accounting import ParameterError

    with pytest.raises(ParameterError, match="resolution"):
        ShuffleAccountant(resolution=bad)
    with pytest.raises(ParameterError, match="resolution"):
        acc_mod.shuffled_krr_pld(3, 1.0, 10, resolution=bad)


def test_calibration_answer_verified_by_default_even_if_planning_is_wrong(monkeypatch):
    """Only default-PLD evaluations decide calibrate_eps0's answer: a planning PLD that is far off
    (here: wildly optimistic, then wildly pessimistic) changes the work, not the certificate."""
    k, n, epsilon, delta, rounds = 3, 40, 2.0, 1e-4, 2
    orig = calibration.composed_epsilon

    for factor in (0.5, 2.0):
        calibration.composed_epsilon.cache_clear()

        def fake(k_, e0, n_, d_, r_, h_, planning=False, _f=factor):
            val = orig(k_, e0, n_, d_, r_, h_)
            return val * _f if planning else val

        monkeypatch.setattr(calibration, "composed_epsilon", fake)
        e0 = calibration.calibrate_eps0(k, n, epsilon, delta, rounds=rounds, rtol=1e-2, progress=False)
        monkeypatch.undo()
        got = ShuffleAccountant().compose(ShuffledKRRDpEvent(k, e0, n), rounds).get_epsilon(delta)
        assert got <= epsilon
        worse = ShuffleAccountant().compose(ShuffledKRRDpEvent(k, e0 * 1.012, n), rounds).get_epsilon(delta)
        assert worse > epsilon  # still maximal to the tolerance
    calibration.composed_epsilon.cache_clear()
