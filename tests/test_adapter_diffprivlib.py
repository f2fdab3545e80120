"""diffprivlib adapter: mechanism, budget-spending tool, lazy import, bad input."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

from diffprivlib.accountant import BudgetAccountant
from diffprivlib.utils import BudgetError

from shuffle_accounting import ParameterError
from shuffle_accounting.adapters import diffprivlib as adapter
from shuffle_accounting.runtime import KRRRandomizer
from shuffle_accounting.shuffled_krr import ShuffledKRR as Certified

# Seeds and Generators are used on purpose here (simulation mode): expect the warning.
pytestmark = pytest.mark.filterwarnings("ignore::shuffle_accounting._rng.PrivacyLeakWarning")

DATA = [0] * 300 + [1] * 150 + [2] * 50


def test_mechanism_reports_certified_epsilon_and_runs():
    mech = adapter.ShuffledKRR(epsilon_local=2.0, k=3, n=len(DATA), delta=1e-6, random_state=0)
    eff = KRRRandomizer(3, 2.0).effective_eps0
    assert mech.epsilon == Certified(3, eff, len(DATA)).epsilon(1e-6)
    assert mech.delta == 1e-6
    hist = mech.randomise(DATA)
    assert hist.shape == (3,) and int(hist.sum()) == len(DATA)
    assert "central epsilon" in repr(mech)


def test_bias_and_variance_of_denoised_estimate():
    mech = adapter.ShuffledKRR(epsilon_local=1.0, k=3, n=len(DATA), delta=1e-6, random_state=7)
    var = mech.variance(DATA)
    assert np.all(mech.bias(DATA) == 0) and np.all(var > 0)
    # one simulation mechanism, 400 independent releases (its generator advances between calls)
    sim = adapter.ShuffledKRR(
        epsilon_local=1.0, k=3, n=len(DATA), delta=1e-6, random_state=np.random.RandomState(7)
    )
    reps = 400
    estimates = np.array([sim.estimate(sim.randomise(DATA)) for _ in range(reps)])
    true = np.bincount(DATA, minlength=3)
    se = np.sqrt(var / reps)
    assert np.all(np.abs(estimates.mean(axis=0) - true) < 4 * se)
    assert np.allclose(estimates.var(axis=0, ddof=1), var, rtol=0.25)


def test_tool_checks_and_spends_budget_and_composes_with_native_tool():
    from diffprivlib.tools import mean

    acc = BudgetAccountant(epsilon=3.0, delta=1e-4)
    hist = adapter.shuffled_histogram(DATA, epsilon_local=2.0, k=3, delta=1e-6, accountant=acc, random_state=3)
    assert int(hist.sum()) == len(DATA)
    eps1 = Certified(3, KRRRandomizer(3, 2.0).effective_eps0, len(DATA)).epsilon(1e-6)
    spent_eps, spent_delta = acc.total()
    assert spent_eps == pytest.approx(eps1) and spent_delta == pytest.approx(1e-6)
    mean(np.array(DATA, dtype=float), epsilon=0.5, bounds=(0, 2), accountant=acc, random_state=1)
    total_eps, _ = acc.total()
    assert total_eps == pytest.approx(eps1 + 0.5)


def test_tool_refuses_when_budget_exceeded_and_releases_nothing():
    acc = BudgetAccountant(epsilon=0.01, delta=1e-4)
    with pytest.raises(BudgetError):
        adapter.shuffled_histogram(DATA, epsilon_local=2.0, k=3, delta=1e-6, accountant=acc)
    assert len(acc) == 0


def test_default_accountant_is_used():
    default = BudgetAccountant()
    with default:
        adapter.shuffled_histogram(DATA, epsilon_local=1.0, k=3, delta=1e-6, random_state=2)
    assert len(default) == 1


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(epsilon_local=float("nan"), k=3, n=10, delta=1e-6), "epsilon_local"),
        (dict(epsilon_local=0.0, k=3, n=10, delta=1e-6), "epsilon_local"),
        (dict(epsilon_local=1.0, k=1, n=10, delta=1e-6), "k"),
        (dict(epsilon_local=1.0, k=True, n=10, delta=1e-6), "k"),
        (dict(epsilon_local=1.0, k=3, n=1.5, delta=1e-6), "n"),
        (dict(epsilon_local=1.0, k=3, n=10, delta=0.0), "delta"),
        (dict(epsilon_local=1.0, k=3, n=10, delta=float("inf")), "delta"),
        (dict(epsilon_local=1.0, k=3, n=10, delta=1e-6, random_state="x"), "random_state"),
    ],
)
def test_bad_parameters(kwargs, name):
    with pytest.raises(ParameterError, match=f"^{name} must"):
        adapter.ShuffledKRR(**kwargs)


def test_small_or_malformed_dataset():
    mech = adapter.ShuffledKRR(epsilon_local=1.0, k=3, n=10, delta=1e-6, random_state=0)
    with pytest.raises(ParameterError, match="at least n = 10"):
        mech.randomise([0, 1, 2])
    with pytest.raises(ParameterError):
        mech.randomise([0] * 9 + [5])


def test_missing_diffprivlib_gives_actionable_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "diffprivlib", None)
    adapter.__dict__.pop("ShuffledKRR", None)  # forget the lazily built class
    fresh = importlib.reload(adapter)  # module import itself must not need diffprivlib
    try:
        with pytest.raises(ImportError, match=r"pip install 'shuffle-accounting\[diffprivlib\]'"):
            fresh.ShuffledKRR  # noqa: B018 - attribute access builds the class lazily
        with pytest.raises(ImportError, match="diffprivlib"):
            fresh.shuffled_histogram(DATA, epsilon_local=1.0, k=3, delta=1e-6)
        # bad parameters are named before the missing import is reported
        for kwargs, name in (
            ({"epsilon_local": float("nan"), "k": 3, "delta": 1e-6}, "epsilon_local"),
            ({"epsilon_local": 1.0, "k": 1, "delta": 1e-6}, "k"),
            ({"epsilon_local": 1.0, "k": 3, "delta": 1.5}, "delta"),
            ({"epsilon_local": 1.0, "k": 3, "delta": 1e-6, "random_state": "seed"}, "random_state"),
        ):
            with pytest.raises(ParameterError, match=f"^{name} must"):
                fresh.shuffled_histogram(DATA, **kwargs)
        with pytest.raises(ParameterError, match="^n must"):
            fresh.shuffled_histogram([0], epsilon_local=1.0, k=3, delta=1e-6)
    finally:
        monkeypatch.delitem(sys.modules, "diffprivlib")
        importlib.reload(adapter)
