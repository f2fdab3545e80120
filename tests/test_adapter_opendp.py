"""OpenDP adapter: builds, runs, composes with native OpenDP measurements, reports our numbers."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import opendp.prelude as dp

from shuffle_accounting import ParameterError
from shuffle_accounting.adapters.opendp import make_shuffled_krr, make_shuffled_krr_approx
from shuffle_accounting.runtime import KRRRandomizer
from shuffle_accounting.shuffled_krr import ShuffleAccountant, ShuffledKRR, ShuffledKRRDpEvent

CATS = ["a", "b", "c"]
N = 200
DATA = ["a"] * 120 + ["b"] * 50 + ["c"] * 30


def _eff(eps0: float, k: int = 3) -> float:
    return KRRRandomizer(k, eps0).effective_eps0


def test_profile_measurement_runs_and_matches_certified_curve():
    meas = make_shuffled_krr(CATS, eps0=1.5, n_min=N)
    hist = meas(DATA)
    assert len(hist) == 3 and sum(hist) == N and all(h >= 0 for h in hist)
    profile = meas.map(2)
    ours = ShuffledKRR(3, _eff(1.5), N)
    for eps in (0.0, 0.2, 0.5, 1.0):
        assert profile.delta(eps) == pytest.approx(float(ours.delta(eps)), rel=1e-12, abs=0)
    # OpenDP inverts the curve numerically; it must agree with our certified epsilon.
    assert profile.epsilon(1e-6) == pytest.approx(ours.epsilon(1e-6), abs=1e-6)
    assert meas.map(0).delta(0.0) == 0.0
    assert meas.map(1).delta(0.3) == profile.delta(0.3)  # odd distances cannot occur; same curve


def test_group_distance_is_refused():
    meas = make_shuffled_krr(CATS, eps0=1.0, n_min=N)
    with pytest.raises(Exception, match="d_in must be <= 2"):
        meas.map(4)


def test_rounds_use_the_composed_accountant():
    meas = make_shuffled_krr(CATS, eps0=1.0, n_min=N, rounds=3)
    out = meas(DATA)
    assert len(out) == 3 and all(sum(h) == N for h in out)
    acc = ShuffleAccountant().compose(ShuffledKRRDpEvent(k=3, eps0=_eff(1.0), n=N), 3)
    for eps in (0.5, 1.0, 2.0):
        assert meas.map(2).delta(eps) == pytest.approx(acc.get_delta(eps), rel=1e-12)


def test_approx_measurement_composes_with_native_laplace():
    delta = 1e-6
    ours = make_shuffled_krr_approx(CATS, eps0=2.0, n_min=N, delta=delta)
    eps_ours, d_ours = ours.map(2)
    assert d_ours == delta
    assert eps_ours == ShuffledKRR(3, _eff(2.0), N).epsilon(delta)
    domain = dp.vector_domain(dp.atom_domain(T=str), size=N)
    count = dp.t.make_count(domain, dp.symmetric_distance())
    laplace = dp.c.make_approximate(count >> dp.m.then_laplace(scale=4.0))
    total = dp.c.make_composition([ours, laplace])
    eps_total, delta_total = total.map(2)
    eps_lap, _ = laplace.map(2)
    assert eps_total == pytest.approx(eps_ours + eps_lap, rel=1e-12)
    assert delta_total == pytest.approx(delta, rel=1e-12)
    hist, noisy_count = total(DATA)
    assert sum(hist) == N and isinstance(noisy_count, int)


def test_profile_measurement_composes_after_fix_delta():
    meas = make_shuffled_krr(CATS, eps0=2.0, n_min=N)
    fixed = dp.c.make_fix_delta(meas, 1e-6)
    eps, delta = fixed.map(2)
    assert delta == 1e-6
    assert eps == pytest.approx(ShuffledKRR(3, _eff(2.0), N).epsilon(1e-6), abs=1e-6)


def test_composed_rounds_are_tighter_than_basic_composition():
    rounds, delta1 = 10, 1e-7
    single = make_shuffled_krr_approx(CATS, eps0=2.0, n_min=N, delta=delta1)
    basic = dp.c.make_composition([single] * rounds)
    eps_basic, delta_basic = basic.map(2)
    tight = make_shuffled_krr_approx(CATS, eps0=2.0, n_min=N, rounds=rounds, delta=delta_basic)
    eps_tight, _ = tight.map(2)
    assert eps_tight < eps_basic


def test_integer_categories_and_k_shorthand():
    meas = make_shuffled_krr(4, eps0=1.0, n_min=10)
    hist = meas([0, 1, 2, 3, 0, 1, 2, 3, 0, 0])
    assert len(hist) == 4 and sum(hist) == 10


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(categories=CATS, eps0=float("nan"), n_min=N), "eps0"),
        (dict(categories=CATS, eps0=-1.0, n_min=N), "eps0"),
        (dict(categories=CATS, eps0=1.0, n_min=None), "n_min"),
        (dict(categories=CATS, eps0=1.0, n_min=1), "n_min"),
        (dict(categories=CATS, eps0=1.0, n_min=2.5), "n_min"),
        (dict(categories=CATS, eps0=1.0, n_min=N, rounds=0), "rounds"),
        (dict(categories=CATS, eps0=1.0, n_min=N, rounds=True), "rounds"),
        (dict(categories=["a"], eps0=1.0, n_min=N), "categories"),
        (dict(categories=["a", 1], eps0=1.0, n_min=N), "categories"),
    ],
)
def test_bad_parameters_raise_before_opendp(monkeypatch, kwargs, name):
    monkeypatch.setitem(sys.modules, "opendp", None)
    monkeypatch.setitem(sys.modules, "opendp.prelude", None)
    with pytest.raises(ParameterError, match=f"^{name} must"):
        make_shuffled_krr(**kwargs)


@pytest.mark.parametrize("delta", [0.0, 1.0, float("nan"), True])
def test_bad_delta(delta):
    with pytest.raises(ParameterError, match="^delta must"):
        make_shuffled_krr_approx(CATS, eps0=1.0, n_min=N, delta=delta)


def test_missing_opendp_gives_actionable_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "opendp", None)
    monkeypatch.setitem(sys.modules, "opendp.prelude", None)
    with pytest.raises(ImportError, match=r"pip install 'shuffle-accounting\[opendp\]'"):
        make_shuffled_krr(CATS, eps0=1.0, n_min=N)
    with pytest.raises(ImportError, match="opendp"):
        make_shuffled_krr_approx(CATS, eps0=1.0, n_min=N, delta=1e-6)


def test_wrong_size_input_is_rejected():
    meas = make_shuffled_krr(CATS, eps0=1.0, n_min=N)
    with pytest.raises(Exception):
        meas(DATA[:-1])
    assert np.isfinite(meas.map(2).epsilon(1e-6))
