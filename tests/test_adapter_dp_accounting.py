"""shuffle_accounting.adapters.dp_accounting: the names dp_accounting users import, and their interplay."""

from __future__ import annotations

import math

import dp_accounting
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld_lib

import shuffle_accounting.adapters.dp_accounting as adapter
from shuffle_accounting import ParameterError
from shuffle_accounting.shuffled_krr import accountant as core
from shuffle_accounting.shuffled_krr.calibration import _single_round_epsilon

EV = adapter.ShuffledKRRDpEvent(k=3, eps0=2.0, n=50)


def test_public_names():
    assert set(adapter.__all__) >= {"ShuffledKRRDpEvent", "ShufflePLDAccountant", "to_dp_accounting_pld"}
    assert adapter.ShuffledKRRDpEvent is core.ShuffledKRRDpEvent
    assert issubclass(adapter.ShuffledKRRDpEvent, dp_accounting.DpEvent)
    assert issubclass(adapter.ShufflePLDAccountant, dp_accounting.pld.PLDAccountant)
    assert issubclass(adapter.ShufflePLDAccountant, dp_accounting.PrivacyAccountant)
    assert issubclass(adapter.ShufflePLDAccountant, core.ShuffleAccountant)


def test_event_round_trips_through_named_tuple():
    nt = EV.to_named_tuple()
    assert nt.class_name == "ShuffledKRRDpEvent" and (nt.k, nt.eps0, nt.n) == (3, 2.0, 50)
    assert dp_event.DpEvent.from_named_tuple(nt) == EV
    composed = dp_event.ComposedDpEvent([EV, dp_event.GaussianDpEvent(2.0)])
    assert dp_event.DpEvent.from_named_tuple(composed.to_named_tuple()) == composed


def test_accountant_reports_the_certified_number():
    acc = adapter.ShufflePLDAccountant()
    eps = acc.compose(EV).get_epsilon(1e-4)
    single = _single_round_epsilon(3, 2.0, 50, 1e-4)
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
    assert isinstance(pld._pmf_remove, pld_pmf.DensePLDPmf)  # built from arrays, not a dict
    same = core.shuffled_krr_pld(3, 2.0, 50)
    assert pld.get_epsilon_for_delta(1e-4) == same.get_epsilon_for_delta(1e-4)
    gauss = pld_lib.from_gaussian_mechanism(3.0, neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
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
    assert acc.supports(dp_event.SelfComposedDpEvent(dp_event.ComposedDpEvent([EV, dp_event.GaussianDpEvent(1.0)]), 4))
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

    monkeypatch.setattr(core, "_shuffled_krr_pmf", boom)
    with pytest.raises(ParameterError):
        call()
