"""shuffle_accounting.adapters.dp_accounting: the names dp_accounting users import, and their interplay."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import privacy_loss_distribution as pld_lib

import shuffle_accounting.adapters.dp_accounting as adapter
from shuffle_accounting import ParameterError
from shuffle_accounting.shuffled_krr import accountant as core
from shuffle_accounting.shuffled_krr.blanket import certified_log_delta
from shuffle_accounting.shuffled_krr.calibration import single_round_epsilon

EV = adapter.ShuffledKRRDpEvent(k=3, eps0=2.0, n=50)


def test_public_names():
    assert set(adapter.__all__) >= {"ShuffledKRRDpEvent", "ShufflePLDAccountant", "to_dp_accounting_pld"}
    # what dp_accounting code relies on: the event is a DpEvent, the accountant a PLDAccountant that
    # accepts it and reports itself as supporting it
    assert isinstance(EV, dp_accounting.DpEvent)
    acc = adapter.ShufflePLDAccountant()
    assert isinstance(acc, dp_accounting.pld.PLDAccountant)
    assert acc.supports(EV) and acc.supports(dp_accounting.GaussianDpEvent(1.0))


def test_event_round_trips_through_named_tuple():
    nt = EV.to_named_tuple()
    assert nt.class_name == "ShuffledKRRDpEvent" and (nt.k, nt.eps0, nt.n) == (3, 2.0, 50)
    assert dp_event.DpEvent.from_named_tuple(nt) == EV
    composed = dp_event.ComposedDpEvent([EV, dp_event.GaussianDpEvent(2.0)])
    assert dp_event.DpEvent.from_named_tuple(composed.to_named_tuple()) == composed


def test_accountant_reports_the_certified_number():
    acc = adapter.ShufflePLDAccountant()
    eps = acc.compose(EV).get_epsilon(1e-4)
    single = single_round_epsilon(3, 2.0, 50, 1e-4)
    assert single <= eps <= single + 2e-4
    assert eps == core.ShuffleAccountant().compose(EV).get_epsilon(1e-4)


def test_composes_with_native_events_and_builders():
    g = dp_accounting.GaussianDpEvent(noise_multiplier=3.0)
    lap = dp_accounting.LaplaceDpEvent(noise_multiplier=5.0)
    builder = dp_accounting.DpEventBuilder()
    builder.compose(EV, 2)
    builder.compose(g)
    builder.compose(lap)
    ledger = builder.build()
    acc = adapter.ShufflePLDAccountant().compose(ledger)
    assert acc.ledger == ledger
    eps = acc.get_epsilon(1e-5)
    assert eps >= adapter.ShufflePLDAccountant().compose(EV, 2).get_epsilon(1e-5)
    assert eps >= adapter.ShufflePLDAccountant().compose(g).get_epsilon(1e-5)
    assert eps < math.inf


def test_exported_pld_is_dense_and_composes_with_dp_accounting_plds():
    pld = adapter.to_dp_accounting_pld(3, 2.0, 50)
    assert isinstance(pld, pld_lib.PrivacyLossDistribution)
    # sound: the exported PLD's delta(eps) is never below the certified privacy-blanket curve
    eps_grid = np.linspace(0.0, 2.5, 26)
    certified = np.exp(certified_log_delta(eps_grid, 3, 2.0, 50))
    exported = np.array([pld.get_delta_for_epsilon(float(e)) for e in eps_grid])
    assert np.all(exported >= certified) and np.all(exported <= certified + 1e-3)
    same = core.shuffled_krr_pld(3, 2.0, 50)
    assert pld.get_epsilon_for_delta(1e-4) == same.get_epsilon_for_delta(1e-4)
    gauss = pld_lib.from_gaussian_mechanism(
        3.0, neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE
    )
    by_hand = pld.compose(gauss).get_epsilon_for_delta(1e-5)
    via_acc = (
        adapter.ShufflePLDAccountant()
        .compose(EV)
        .compose(dp_accounting.GaussianDpEvent(3.0))
        .get_epsilon(1e-5)
    )
    assert via_acc == pytest.approx(by_hand, rel=1e-8) and via_acc >= by_hand
    coarse = adapter.to_dp_accounting_pld(3, 2.0, 50, value_discretization_interval=1e-3)
    with pytest.raises(ValueError):
        coarse.compose(gauss)  # different grids cannot be composed (dp_accounting's own check)


def test_supports():
    acc = adapter.ShufflePLDAccountant()
    assert acc.supports(EV)
    assert acc.supports(
        dp_event.SelfComposedDpEvent(dp_event.ComposedDpEvent([EV, dp_event.GaussianDpEvent(1.0)]), 4)
    )
    assert not acc.supports(dp_event.PoissonSampledDpEvent(0.1, EV))


@pytest.mark.parametrize(
    "call",
    [
        lambda: adapter.to_dp_accounting_pld(1, 2.0, 50),
        lambda: adapter.to_dp_accounting_pld(3, float("nan"), 50),
        lambda: adapter.to_dp_accounting_pld(3, 2.0, True),
        lambda: adapter.to_dp_accounting_pld(3, 2.0, 50, value_discretization_interval=-1.0),
        lambda: adapter.ShuffledKRRDpEvent(3, float("inf"), 50),
        lambda: adapter.ShufflePLDAccountant(value_discretization_interval=0.0),
        lambda: adapter.ShufflePLDAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE),
        lambda: adapter.ShufflePLDAccountant().compose(EV, count=0),
        lambda: adapter.ShufflePLDAccountant().get_epsilon(0.0),
    ],
)
def test_bad_parameters_raise_parameter_error_before_any_library_call(call, monkeypatch):
    def boom(*args, **kwargs):  # pragma: no cover - must not be reached
        raise AssertionError("library called with bad parameters")

    monkeypatch.setattr(core, "shuffled_krr_pmf", boom)
    with pytest.raises(ParameterError):
        call()


# ------------------------------------------------------------------------------------------------
# RDP curve of the shuffled event
# ------------------------------------------------------------------------------------------------

import itertools  # noqa: E402

from shuffle_accounting.shuffled_krr.blanket import blanket_atoms  # noqa: E402

ORDERS = [1.1, 1.5, 2.0, 3.0, 5.0, 10.0, 32.0]


def _renyi(p, q, alpha):
    from scipy.special import logsumexp

    p, q = np.asarray(p, float), np.asarray(q, float)
    m = p > 0
    return float(logsumexp(alpha * np.log(p[m]) + (1 - alpha) * np.log(q[m]))) / (alpha - 1)


def _histogram_law(values, k, eps0):
    """Exact law of the k-RR histogram of ``values`` (dict: counts tuple -> probability)."""
    e = math.exp(eps0)
    law = {tuple([0] * k): 1.0}
    for v in values:
        row = [(e if j == v else 1.0) / (e + k - 1) for j in range(k)]
        new: dict = {}
        for hist, pr in law.items():
            for j in range(k):
                h = list(hist)
                h[j] += 1
                new[tuple(h)] = new.get(tuple(h), 0.0) + pr * row[j]
        law = new
    return law


@pytest.mark.parametrize("k, n, eps0", [(2, 5, 1.0), (3, 4, 1.5), (3, 6, 0.8)])
def test_rdp_bounds_every_neighbouring_pair_by_brute_force(k, n, eps0):
    bound = adapter.shuffled_krr_rdp(k, eps0, n, ORDERS)
    worst = np.zeros(len(ORDERS))
    for others in itertools.combinations_with_replacement(range(k), n - 1):
        for x0, x1 in itertools.permutations(range(k), 2):
            p = _histogram_law(list(others) + [x0], k, eps0)
            q = _histogram_law(list(others) + [x1], k, eps0)
            keys = sorted(set(p) | set(q))
            pv = [p.get(h, 0.0) for h in keys]
            qv = [q.get(h, 0.0) for h in keys]
            worst = np.maximum(worst, [_renyi(pv, qv, a) for a in ORDERS])
    assert np.all(bound >= worst * (1 + 1e-9))
    assert np.all(bound < eps0)  # informative: amplification shows at every order tested


@pytest.mark.parametrize("k, n, eps0", [(3, 8, 1.0), (4, 12, 2.0)])
def test_rdp_bounds_and_approaches_the_blanket_pair(k, n, eps0):
    atoms = list(blanket_atoms(k, eps0, n))
    p = [a[3] for a in atoms]
    q = [a[4] for a in atoms]
    exact = np.array([_renyi(p, q, a) for a in ORDERS])
    coarse = adapter.shuffled_krr_rdp(k, eps0, n, ORDERS)
    fine = adapter.shuffled_krr_rdp(k, eps0, n, ORDERS, grid_points=801)
    assert np.all(coarse >= fine * (1 - 1e-12)) and np.all(fine >= exact)
    assert np.all(fine <= exact * 1.02 + 1e-9)  # converges to the pair's divergence


def test_rdp_edge_orders_and_monotonicity():
    rdp = adapter.shuffled_krr_rdp(3, 2.0, 50, [1.01, 2.0, 64.0, np.inf])
    assert np.all(np.diff(rdp) >= 0) and rdp[-1] == 2.0
    assert adapter.shuffled_krr_rdp(3, 2.0, 50, 2.0).shape == ()
    assert float(adapter.shuffled_krr_rdp(2, 1.0, 1, 2.0)) <= 1.0  # n = 1: plain k-RR
    rr = dp_accounting.rdp.rdp_privacy_accountant._randomized_response_rdp_replace_one
    p = 2 / (math.exp(1.0) + 1)  # dp_accounting's noise parameter for k = 2, eps0 = 1
    assert float(adapter.shuffled_krr_rdp(2, 1.0, 1, 2.0)) >= rr(p, 2, 2.0)


def test_rdp_accountant_composes_with_native_events():
    orders = [1.5, 2.0, 4.0, 8.0, 16.0]
    curve = adapter.shuffled_krr_rdp(3, 2.0, 60, orders)
    acc = adapter.ShuffleRdpAccountant(orders=orders)
    assert isinstance(acc, dp_accounting.rdp.RdpAccountant)
    acc.compose(EV_SMALL, 3)
    np.testing.assert_array_equal(acc._rdp, 3 * curve)
    gauss = dp_accounting.GaussianDpEvent(noise_multiplier=4.0)
    acc.compose(gauss)
    native = dp_accounting.rdp.RdpAccountant(orders, dp_accounting.NeighboringRelation.REPLACE_ONE).compose(
        gauss
    )
    np.testing.assert_allclose(acc._rdp, 3 * curve + native._rdp, rtol=1e-14)
    assert acc.get_epsilon(1e-6) > native.get_epsilon(1e-6)
    nested = adapter.ShuffleRdpAccountant(orders=orders).compose(
        dp_event.SelfComposedDpEvent(dp_event.ComposedDpEvent([EV_SMALL, gauss]), 2)
    )
    np.testing.assert_allclose(nested._rdp, 2 * (curve + native._rdp), rtol=1e-14)


def test_rdp_accountant_refuses_the_event_under_add_remove():
    acc = adapter.ShuffleRdpAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    )
    assert not acc.supports(EV_SMALL)
    assert acc.supports(dp_accounting.GaussianDpEvent(1.0))
    with pytest.raises(dp_accounting.UnsupportedEventError, match="REPLACE_ONE"):
        acc.compose(EV_SMALL)


EV_SMALL = adapter.ShuffledKRRDpEvent(k=3, eps0=2.0, n=60)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: adapter.shuffled_krr_rdp(1, 1.0, 10, 2.0), "k"),
        (lambda: adapter.shuffled_krr_rdp(3, float("nan"), 10, 2.0), "eps0"),
        (lambda: adapter.shuffled_krr_rdp(3, 1.0, 0, 2.0), "n"),
        (lambda: adapter.shuffled_krr_rdp(3, 1.0, 10, 1.0), "orders"),
        (lambda: adapter.shuffled_krr_rdp(3, 1.0, 10, [2.0, float("nan")]), "orders"),
        (lambda: adapter.shuffled_krr_rdp(3, 1.0, 10, 2.0, grid_points=2), "grid_points"),
        (lambda: adapter.shuffled_krr_rdp(3, 1.0, 10, 2.0, grid_points=True), "grid_points"),
        (lambda: adapter.shuffled_krr_rdp(3, 1.0, 10, 2.0, log_delta_floor=1.0), "log_delta_floor"),
        (lambda: adapter.ShuffleRdpAccountant(orders=[0.5, 2.0]), "orders"),
        (lambda: adapter.ShuffleRdpAccountant(neighboring_relation="replace"), "neighboring_relation"),
        (lambda: adapter.ShuffleRdpAccountant(grid_points=1), "grid_points"),
    ],
)
def test_rdp_bad_inputs(call, name):
    with pytest.raises(ParameterError, match=f"^{name} must"):
        call()
