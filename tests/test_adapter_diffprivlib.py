"""diffprivlib adapter: mechanism, budget-spending tool, lazy import, bad input."""

from __future__ import annotations

import importlib
import math
import sys
import warnings

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.utils import BudgetError, PrivacyLeakWarning

from shuffle_accounting import KRR, ParameterError
from shuffle_accounting.adapters import diffprivlib as adapter
from shuffle_accounting.dsigma import DSigmaAccountant, MallowsShuffler
from shuffle_accounting.reidentification import ReidentificationRisk
from shuffle_accounting.runtime import KRRRandomizer
from shuffle_accounting.shuffled_krr import ShuffleAccountant, ShuffledKRRDpEvent, calibrate_eps0
from shuffle_accounting.shuffled_krr import ShuffledKRR as Certified

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

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
    hist = adapter.shuffled_histogram(
        DATA, epsilon_local=2.0, k=3, delta=1e-6, accountant=acc, random_state=3
    )
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
        (dict(epsilon_local=1.0, k=3, n=0, delta=1e-6), "n"),
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
    assert int(mech.randomise([0] * 9 + [5]).sum()) == 10  # an undeclared code is counted as 0, never raised


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
            fresh.shuffled_histogram([], epsilon_local=1.0, k=3, delta=1e-6)
        with pytest.raises(ImportError, match="diffprivlib"):
            fresh.shuffled_histogram(DATA, 1.0, delta=1e-6, bins=3)
        with pytest.raises(ParameterError, match="^epsilon must"):
            fresh.shuffled_histogram(DATA, -1.0, delta=1e-6, bins=3)
    finally:
        monkeypatch.delitem(sys.modules, "diffprivlib")
        importlib.reload(adapter)


# ------------------------------------------------------------------------------------------------
# diffprivlib conventions: shuffled_histogram(sample, epsilon, *, delta, categories | bins, ...)
# ------------------------------------------------------------------------------------------------

LABELS = ["x", "y", "z"]
SAMPLE = ["x"] * 250 + ["y"] * 150 + ["z"] * 100


def _eff(k, eps0):
    return KRRRandomizer(k, eps0).effective_eps0


def test_histogram_spends_the_certified_epsilon_calibrated_to_the_target():
    acc = BudgetAccountant(epsilon=5.0, delta=1e-3)
    hist, cats = adapter.shuffled_histogram(SAMPLE, 1.0, delta=1e-6, categories=LABELS, accountant=acc)
    assert hist.shape == (3,) and hist.dtype == np.int64 and int(hist.sum()) == len(SAMPLE)
    assert cats.tolist() == LABELS
    spent_eps, spent_delta = acc.total()
    assert len(acc) == 1 and spent_delta == 1e-6
    eps0 = calibrate_eps0(3, len(SAMPLE), 1.0, 1e-6, rtol=1e-4)
    # exactly the certified epsilon of the sampler actually run, never above the target
    candidates = [Certified(3, _eff(3, eps0 * (1 - 1e-9) ** i), len(SAMPLE)).epsilon(1e-6) for i in range(3)]
    assert spent_eps in candidates and spent_eps <= 1.0
    assert spent_eps > 1.0 * (1 - 1e-2)  # calibrated: not wastefully below the target


def test_rounds_spend_the_tightly_composed_total_once(monkeypatch):
    """R rounds: one entry, exactly the ShuffleAccountant's composed epsilon at the eps0 run.

    The eps0 bisection over PLD builds is calibrate_eps0's own business (tested there) and takes
    tens of seconds; here it is replaced by a recorded fixed answer.
    """
    import shuffle_accounting.shuffled_krr as skrr

    rounds, eps, delta, n = 3, 1.0, 1e-6, 100
    calls = []

    def fake_calibrate(k, n_, epsilon, delta_, rounds_, *, rtol):
        calls.append((k, n_, epsilon, delta_, rounds_))
        return 1.0

    monkeypatch.setattr(skrr, "calibrate_eps0", fake_calibrate)
    acc = BudgetAccountant()
    hist, _ = adapter.shuffled_histogram(
        SAMPLE[::5], eps, delta=delta, categories=LABELS, n_rounds=rounds, accountant=acc
    )
    assert calls == [(3, n, eps, delta, rounds)]
    assert hist.shape == (rounds, 3) and np.all(hist.sum(axis=1) == n)
    assert len(acc) == 1  # one entry for all rounds
    spent_eps, spent_delta = acc.total()
    tight = ShuffleAccountant().compose(ShuffledKRRDpEvent(3, _eff(3, 1.0), n), rounds)
    assert spent_delta == delta and spent_eps == tight.get_epsilon(delta) <= eps
    # basic composition of the per-round certified epsilon would spend more
    per_round = Certified(3, _eff(3, 1.0), n).epsilon(delta / rounds)
    assert rounds * per_round > spent_eps


def test_calibrated_answer_above_target_is_shrunk_until_certified(monkeypatch):
    import shuffle_accounting.shuffled_krr as skrr

    monkeypatch.setattr(skrr, "calibrate_eps0", lambda *a, **k: 5.0)  # far too large for eps = 0.3
    coll = adapter.calibrated_collection(LABELS, 100, 0.3, 1e-6, 1)
    assert coll.epsilon(1e-6) <= 0.3 and coll.eps0 == 0.3  # fell back to pure DP: eps0 = epsilon


def test_labels_codes_and_bin_edges():
    hist, cats = adapter.shuffled_histogram([0, 1, 2, 2] * 50, 2.0, delta=1e-6, bins=3)
    assert cats.tolist() == [0, 1, 2] and int(hist.sum()) == 200
    edges = [0.0, 1.0, 2.5, 10.0]
    sample = [0.5, 1.0, 2.5, 10.0, -3.0, 99.0, float("nan"), "oops"] * 25
    hist, out_edges = adapter.shuffled_histogram(sample, 2.0, delta=1e-6, bins=edges)
    assert out_edges.tolist() == edges and hist.shape == (3,) and int(hist.sum()) == len(sample)
    assert adapter.bin_codes(
        [0.5, 1.0, 2.5, 10.0, -3.0, 99.0, float("nan"), "oops"], np.array(edges)
    ).tolist() == [
        0,
        1,
        2,
        2,
        0,
        2,
        0,
        0,
    ]


def test_undeclared_labels_are_released_not_raised():
    sample = ["x", "unknown", None, 3.5] * 50
    hist, _ = adapter.shuffled_histogram(sample, 1.0, delta=1e-6, categories=LABELS)
    assert int(hist.sum()) == len(sample)
    mech = adapter.ShuffledKRR(epsilon_local=1.0, k=3, n=10, delta=1e-6)
    assert int(mech.randomise([0] * 8 + [5, -1]).sum()) == 10


def test_budget_refusal_releases_nothing():
    acc = BudgetAccountant(epsilon=0.5, delta=1e-4)
    with pytest.raises(BudgetError):
        adapter.shuffled_histogram(SAMPLE, 1.0, delta=1e-6, categories=LABELS, accountant=acc)
    assert len(acc) == 0


def test_random_state_policy():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # private mode: no warning
        adapter.shuffled_histogram(SAMPLE, 1.0, delta=1e-6, categories=LABELS, accountant=BudgetAccountant())
    for rs in (3, np.random.RandomState(3), np.random.default_rng(3)):
        with pytest.warns(PrivacyLeakWarning, match="NOT private"):
            adapter.shuffled_histogram(
                SAMPLE, 1.0, delta=1e-6, categories=LABELS, accountant=BudgetAccountant(), random_state=rs
            )
    with pytest.warns(PrivacyLeakWarning):
        a, _ = adapter.shuffled_histogram(
            SAMPLE, 1.0, delta=1e-6, categories=LABELS, accountant=BudgetAccountant(), random_state=5
        )
    with pytest.warns(PrivacyLeakWarning):
        b, _ = adapter.shuffled_histogram(
            SAMPLE, 1.0, delta=1e-6, categories=LABELS, accountant=BudgetAccountant(), random_state=5
        )
    assert a.tolist() == b.tolist()  # simulation is reproducible
    for bad in ("seed", 1.5, True, object()):
        with pytest.raises(ParameterError, match="^random_state must"):
            adapter.shuffled_histogram(SAMPLE, 1.0, delta=1e-6, categories=LABELS, random_state=bad)


@pytest.mark.parametrize(
    "args, kwargs, name",
    [
        ((SAMPLE, None), dict(delta=1e-6, categories=LABELS), "epsilon"),
        ((SAMPLE, float("nan")), dict(delta=1e-6, categories=LABELS), "epsilon"),
        ((SAMPLE, 0.0), dict(delta=1e-6, categories=LABELS), "epsilon"),
        ((SAMPLE, True), dict(delta=1e-6, categories=LABELS), "epsilon"),
        ((SAMPLE, 1.0), dict(categories=LABELS), "delta"),
        ((SAMPLE, 1.0), dict(delta=1.0, categories=LABELS), "delta"),
        ((SAMPLE, 1.0), dict(delta=1e-6), "categories or bins"),
        ((SAMPLE, 1.0), dict(delta=1e-6, categories=LABELS, bins=3), "categories or bins"),
        ((SAMPLE, 1.0), dict(delta=1e-6, categories="xyz"), "categories"),
        ((SAMPLE, 1.0), dict(delta=1e-6, categories=["x"]), "categories"),
        ((SAMPLE, 1.0), dict(delta=1e-6, bins=1), "bins"),
        ((SAMPLE, 1.0), dict(delta=1e-6, bins=[0.0, 1.0]), "bins"),
        ((SAMPLE, 1.0), dict(delta=1e-6, bins=[0.0, 2.0, 1.0]), "bins"),
        ((SAMPLE, 1.0), dict(delta=1e-6, bins=[0.0, 1.0, float("inf")]), "bins"),
        ((SAMPLE, 1.0), dict(delta=1e-6, categories=LABELS, n_rounds=0), "n_rounds"),
        (([], 1.0), dict(delta=1e-6, categories=LABELS), "n"),
        (("xyz", 1.0), dict(delta=1e-6, categories=LABELS), "sample"),
    ],
)
def test_histogram_bad_inputs_before_diffprivlib(monkeypatch, args, kwargs, name):
    monkeypatch.setattr(
        adapter, "import_diffprivlib", lambda: (_ for _ in ()).throw(AssertionError("imported"))
    )
    with pytest.raises(ParameterError, match=f"^{name} must"):
        adapter.shuffled_histogram(*args, **kwargs)


def test_legacy_signature_is_deprecated():
    with pytest.warns(DeprecationWarning, match="deprecated"):
        hist = adapter.shuffled_histogram(
            DATA, epsilon_local=1.0, k=3, delta=1e-6, accountant=BudgetAccountant()
        )
    assert int(hist.sum()) == len(DATA)
    with pytest.raises(TypeError, match="unexpected keyword"):
        adapter.shuffled_histogram(DATA, epsilon_local=1.0, k=3, delta=1e-6, bogus=1)


# ------------------------------------------------------------------------------------------------
# the two readings: re-identification and d_sigma
# ------------------------------------------------------------------------------------------------


def test_reidentification_reading_equals_reidentification_risk():
    mech = adapter.ShuffledKRR(epsilon_local=2.0, k=3, n=500, delta=1e-6)
    expected = ReidentificationRisk(KRR(3, _eff(3, 2.0)), 500)
    assert adapter.reidentification_risk(mech) == expected
    assert mech.reidentification_risk().bound() == expected.bound()
    with pytest.raises(ParameterError, match="^mechanism must"):
        adapter.reidentification_risk("not a mechanism")


def test_mallows_mechanism_alpha_and_composition_equal_the_dsigma_accountant():
    g = [[0, 1], [0, 1], [2, 3], [2, 3]]
    sh = MallowsShuffler(g, alpha=0.7)
    mech = adapter.MallowsShuffle(sh)
    assert mech.epsilon == DSigmaAccountant(g).add_shuffler(sh).alpha and mech.delta == 0.0
    g2 = [[0, 1, 2], [0, 1], [0, 2], [3]]
    assert adapter.MallowsShuffle(sh, groups=g2).epsilon == DSigmaAccountant(g2).add_shuffler(sh).alpha
    ledger = BudgetAccountant(epsilon=10.0, delta=0.0)
    for _ in range(3):
        out = adapter.mallows_shuffle(["a", "b", "c", "d"], sh, accountant=ledger)
        assert sorted(out) == ["a", "b", "c", "d"]
    acct = DSigmaAccountant(g)
    for _ in range(3):
        acct.add_shuffler(sh)
    assert ledger.total()[0] == pytest.approx(acct.alpha, rel=1e-14)
    with pytest.raises(BudgetError):
        adapter.mallows_shuffle(["a", "b", "c", "d"], sh, accountant=BudgetAccountant(epsilon=0.5, delta=0.0))
    with pytest.warns(PrivacyLeakWarning):
        adapter.mallows_shuffle(["a", "b", "c", "d"], sh, accountant=ledger, random_state=1)


def test_mallows_bad_inputs():
    sh = MallowsShuffler([[0, 1], [0, 1]], alpha=1.0)
    with pytest.raises(ParameterError, match="^shuffler must"):
        adapter.MallowsShuffle("nope")
    with pytest.raises(ParameterError, match="^alpha must"):
        adapter.MallowsShuffle(MallowsShuffler([[0, 1], [0, 1]], alpha=0.0))
    with pytest.raises(ParameterError, match="^alpha must"):
        adapter.MallowsShuffle(MallowsShuffler([[0, 1], [0, 1]], alpha=math.inf))
    with pytest.raises(ParameterError, match="^accountant must"):
        adapter.mallows_shuffle(["a", "b"], sh, accountant=None)
    with pytest.raises(ParameterError, match="^random_state must"):
        adapter.MallowsShuffle(sh, random_state="x")
