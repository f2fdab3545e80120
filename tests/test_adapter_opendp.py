"""OpenDP adapter: OpenDP conventions, total functions, no global side effects, group privacy,
d_sigma and re-identification readings, bad input."""

from __future__ import annotations

import itertools
import math
import sys
import warnings

import numpy as np
import opendp.prelude as dp
import pytest
from opendp.mod import GLOBAL_FEATURES

from shuffle_accounting import KRR, ParameterError
from shuffle_accounting.adapters import opendp as adapter
from shuffle_accounting.adapters._common import group_delta, group_epsilon_delta
from shuffle_accounting.adapters.opendp import (
    FeatureNotEnabledError,
    dsigma_distance,
    make_mallows_shuffle,
    make_shuffled_krr,
    reidentification_risk,
    then_mallows_shuffle,
    then_shuffled_krr,
)
from shuffle_accounting.dsigma import DSigmaAccountant, MallowsShuffler
from shuffle_accounting.reidentification import ReidentificationRisk
from shuffle_accounting.runtime import KRRRandomizer
from shuffle_accounting.shuffled_krr import ShuffleAccountant, ShuffledKRR, ShuffledKRRDpEvent

CATS = ["a", "b", "c"]
N = 200
DATA = ["a"] * 120 + ["b"] * 50 + ["c"] * 30
SYM = dp.vector_domain(dp.atom_domain(T=str), size=N), dp.symmetric_distance()
CHANGE = dp.vector_domain(dp.atom_domain(T=str), size=N), dp.change_one_distance()
G = [[0, 1], [0, 1], [2, 3], [2, 3]]


@pytest.fixture(autouse=True)
def _features():
    """Enable the features for each test and restore the caller's set afterwards."""
    before = set(GLOBAL_FEATURES)
    dp.enable_features("contrib", "honest-but-curious")
    yield
    GLOBAL_FEATURES.clear()
    GLOBAL_FEATURES.update(before)


def _eff(eps0: float, k: int) -> float:
    return KRRRandomizer(k, eps0).effective_eps0


def test_then_form_and_profile_match_the_certified_curve():
    meas = SYM >> then_shuffled_krr(CATS, eps0=1.5, null_category=False)
    assert meas.output_measure == dp.smoothed_max_divergence()
    hist = meas(DATA)
    assert len(hist) == 3 and sum(hist) == N and all(h >= 0 for h in hist)
    profile = meas.map(2)
    ours = ShuffledKRR(3, _eff(1.5, 3), N)
    for eps in (0.0, 0.2, 0.5, 1.0):
        assert profile.delta(eps) == pytest.approx(float(ours.delta(eps)), rel=1e-12, abs=0)
    # k = 3, n = 200: the default is the worst-case certificate, whose epsilon is up to its
    # tolerance (worst_case_k.default_tol, 1e-5 relative) above the inversion of its delta curve
    assert profile.epsilon(1e-6) == pytest.approx(ours.epsilon(1e-6), rel=2e-5)
    assert meas.map(0).delta(0.0) == 0.0
    assert meas.map(1).delta(0.3) == profile.delta(0.3)  # ceil(d_in / 2): covered, conservative


def test_null_category_is_counted_in_k_and_in_the_accounting():
    meas = make_shuffled_krr(*SYM, CATS, 1.5)
    assert len(meas(DATA)) == 4
    ours = ShuffledKRR(4, _eff(1.5, 4), N)
    assert meas.map(2).delta(0.3) == pytest.approx(float(ours.delta(0.3)), rel=1e-12)


def test_change_one_distance_counts_replacements():
    sym = make_shuffled_krr(*SYM, CATS, 1.0, delta=1e-6)
    change = make_shuffled_krr(*CHANGE, CATS, 1.0, delta=1e-6)
    assert change.map(1) == sym.map(2) == sym.map(1)
    assert change.map(2) == sym.map(4) == sym.map(3)
    assert change.map(0) == (0.0, 0.0)


def test_group_privacy_bound_is_the_lemma_and_rounded_up():
    meas = make_shuffled_krr(*CHANGE, CATS, 1.0, delta=1e-6)
    eps1, d1 = meas.map(1)
    for d in (2, 3, 5):
        eps_d, delta_d = meas.map(d)
        assert eps_d >= d * eps1 and eps_d == pytest.approx(d * eps1, rel=1e-14)
        exact = d1 * sum(math.exp(i * eps1) for i in range(d))
        assert delta_d >= exact and delta_d == pytest.approx(exact, rel=1e-10)
        assert delta_d <= d * math.exp((d - 1) * eps1) * d1
    profile = make_shuffled_krr(*CHANGE, CATS, 1.0).map(3)
    single = ShuffledKRR(4, _eff(1.0, 4), N)
    e = 0.9
    expected = float(single.delta(e / 3)) * sum(math.exp(i * e / 3) for i in range(3))
    assert profile.delta(e) == pytest.approx(expected, rel=1e-9) and profile.delta(e) >= expected * (
        1 - 1e-15
    )


def _krr_count_pmf(ones: int, zeros: int, eps0: float) -> np.ndarray:
    """Exact pmf of the number of 1-reports (k = 2): a Poisson-binomial by convolution."""
    p = math.exp(eps0) / (1 + math.exp(eps0))
    pmf = np.array([1.0])
    for keep in [p] * ones + [1 - p] * zeros:
        pmf = np.convolve(pmf, [1 - keep, keep])
    return pmf


@pytest.mark.parametrize("n, eps0", [(4, 1.0), (6, 0.7)])
def test_group_profile_is_at_least_the_exact_delta_of_two_replacements(n, eps0):
    """Brute force, k = 2: every pair of datasets two replacements apart (all at 0 -> two at 1)."""
    single = ShuffledKRR(2, eps0, n)
    for ones in range(n - 1):
        p = _krr_count_pmf(ones, n - ones, eps0)
        q = _krr_count_pmf(ones + 2, n - ones - 2, eps0)
        for eps in (0.0, 0.3, 0.8, 1.5):
            exact = max(
                np.maximum(p - math.exp(eps) * q, 0).sum(), np.maximum(q - math.exp(eps) * p, 0).sum()
            )
            assert group_delta(single.delta, eps, 2) >= exact - 1e-15


def test_rounds_use_the_composed_accountant():
    meas = make_shuffled_krr(*SYM, CATS, 1.0, rounds=3, null_category=False)
    out = meas(DATA)
    assert len(out) == 3 and all(sum(h) == N for h in out)
    acc = ShuffleAccountant().compose(ShuffledKRRDpEvent(k=3, eps0=_eff(1.0, 3), n=N), 3)
    for eps in (0.5, 1.0, 2.0):
        assert meas.map(2).delta(eps) == pytest.approx(acc.get_delta(eps), rel=1e-12)


def test_approximate_measurement_composes_with_native_laplace():
    delta = 1e-6
    ours = make_shuffled_krr(*SYM, CATS, 2.0, delta=delta, null_category=False)
    eps_ours, d_ours = ours.map(2)
    assert d_ours == delta and eps_ours == ShuffledKRR(3, _eff(2.0, 3), N).epsilon(delta)
    laplace = dp.c.make_approximate(dp.t.make_count(*SYM) >> dp.m.then_laplace(scale=4.0))
    total = dp.c.make_composition([ours, laplace])
    eps_total, delta_total = total.map(2)
    assert eps_total == pytest.approx(eps_ours + laplace.map(2)[0], rel=1e-12)
    assert delta_total == pytest.approx(delta, rel=1e-12)
    hist, noisy_count = total(DATA)
    assert sum(hist) == N and isinstance(noisy_count, int)


def test_fix_delta_on_the_profile_measure():
    fixed = dp.c.make_fix_delta(SYM >> then_shuffled_krr(CATS, eps0=2.0), 1e-6)
    eps, delta = fixed.map(2)
    assert delta == 1e-6
    # k = 4, n = 200: the type bounds' certificate, up to its tolerance (1e-3 relative) above the
    # inversion of the delta curve
    assert eps == pytest.approx(ShuffledKRR(4, _eff(2.0, 4), N).epsilon(1e-6), rel=1e-3)


def test_context_query_next_to_native_count_laplace():
    data = DATA[:-1] + ["unknown"]
    ctx = dp.Context.compositor(
        data=data,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=2.0, delta=1e-6),
        split_evenly_over=2,
        domain=dp.vector_domain(dp.atom_domain(T=str), size=N),
    )
    noisy = ctx.query().count().laplace().release()
    hist = ctx.query().shuffled_krr(CATS, eps0=1.0, delta=4e-7).release()
    assert isinstance(noisy, int) and len(hist) == 4 and sum(hist) == N
    assert ctx.current_privacy_loss() == [(1.0, 5e-07), (1.0, 5e-07)]
    # a change-one privacy unit (OpenDP's native count does not take it; ours does)
    ctx = dp.Context.compositor(
        data=data,
        privacy_unit=dp.unit_of(changes=1),
        privacy_loss=dp.loss_of(epsilon=1.0, delta=1e-6),
        split_evenly_over=1,
        domain=dp.vector_domain(dp.atom_domain(T=str), size=N),
    )
    assert sum(ctx.query().shuffled_krr(CATS, eps0=1.0, delta=1e-6).release()) == N


def test_unsized_context_is_refused_with_the_resize_route_which_works():
    kwargs = dict(
        data=DATA[:150],
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=2.0, delta=1e-6),
        split_evenly_over=1,
    )
    with pytest.raises(ParameterError, match="histogram sums to the number of users.*then_resize"):
        dp.Context.compositor(**kwargs).query().shuffled_krr(CATS, eps0=1.0, delta=1e-7).release()
    ctx = dp.Context.compositor(**kwargs)
    hist = ctx.query().resize(size=N, constant="a").shuffled_krr(CATS, eps0=1.0, delta=1e-7).release()
    assert sum(hist) == N


def test_undeclared_values_are_released_never_raised():
    weird = ["zzz", "", "A", "a "] * 50
    meas = make_shuffled_krr(*SYM, CATS, 1.0)
    hist = meas(weird)
    assert len(hist) == 4 and sum(hist) == N
    no_null = make_shuffled_krr(*SYM, CATS, 1.0, null_category=False)
    assert sum(no_null(weird)) == N
    ints = make_shuffled_krr(
        dp.vector_domain(dp.atom_domain(T=int), size=10), dp.change_one_distance(), 3, 1.0
    )
    assert sum(ints([-5, 7, 10**6, 0, 1, 2, 3, 4, 5, 6])) == 10


def test_mapping_rule_without_null_category_is_the_first_category():
    coll = adapter.ShuffledCollection(CATS, 1.0, 4, null_category=False)
    assert coll.encode(["c", "zzz", 3, None]).tolist() == [2, 0, 0, 0]
    assert adapter.ShuffledCollection(CATS, 1.0, 4, null_category=True).encode(["c", "zzz"]).tolist() == [
        2,
        3,
    ]


CONSTRUCTORS = [
    lambda: make_shuffled_krr(*SYM, CATS, 1.0),
    lambda: make_shuffled_krr(*CHANGE, CATS, 1.0, delta=1e-6),
    lambda: SYM >> then_shuffled_krr(CATS, 1.0, rounds=2),
    lambda: dsigma_distance(G),
    lambda: (
        (dp.vector_domain(dp.atom_domain(T=int), size=4), dsigma_distance(G))
        >> then_mallows_shuffle(MallowsShuffler(G, alpha=1.0))
    ),
    lambda: adapter.make_shuffled_krr_approx(CATS, 1.0, N, delta=1e-6),
]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("build", CONSTRUCTORS)
def test_constructors_leave_the_global_features_unchanged(build):
    before = set(GLOBAL_FEATURES)
    build()
    assert set(GLOBAL_FEATURES) == before
    dp.disable_features("honest-but-curious")
    before = set(GLOBAL_FEATURES)
    with pytest.raises(
        FeatureNotEnabledError, match=r'dp\.enable_features\("contrib", "honest-but-curious"\)'
    ):
        build()
    assert set(GLOBAL_FEATURES) == before == {"contrib"} | (before - {"contrib"})
    dp.disable_features("contrib")
    before = set(GLOBAL_FEATURES)
    with pytest.raises(FeatureNotEnabledError, match="'contrib'"):
        build()
    assert set(GLOBAL_FEATURES) == before


def test_reidentification_reading_equals_reidentification_risk():
    meas = make_shuffled_krr(*SYM, CATS, 2.0)
    risk = reidentification_risk(meas)
    expected = ReidentificationRisk(KRR(4, _eff(2.0, 4)), N)
    assert risk == expected and risk.bound() == expected.bound()
    with pytest.raises(ParameterError, match="^measurement must be"):
        reidentification_risk(dp.t.make_count(*SYM) >> dp.m.then_laplace(scale=1.0))


def test_mallows_alpha_equals_dsigma_accountant_and_composes():
    sh = MallowsShuffler(G, alpha=1.0)
    space = dp.vector_domain(dp.atom_domain(T=str), size=4), dsigma_distance(G)
    meas = make_mallows_shuffle(*space, sh)
    assert meas.output_measure == dp.max_divergence()
    assert meas.map(1) == DSigmaAccountant(G).add_shuffler(sh).alpha
    assert meas.map(0) == 0.0 and meas.map(3) >= 3 * meas.map(1)
    assert sorted(meas(["w", "x", "y", "z"])) == ["w", "x", "y", "z"]
    composed = dp.c.make_composition([meas] * 3).map(1)
    acct = DSigmaAccountant(G).add_shuffler(sh).add_shuffler(sh).add_shuffler(sh).alpha
    assert composed == pytest.approx(acct, rel=1e-14) and composed >= 3 * sh.alpha
    # regrouping (Thm 4.4): the guarantee for another grouping G' is the accountant's
    g2 = [[0, 1, 2], [0, 1], [0, 2], [3]]
    other = make_mallows_shuffle(dp.vector_domain(dp.atom_domain(T=str), size=4), dsigma_distance(g2), sh)
    assert other.map(1) == DSigmaAccountant(g2).add_shuffler(sh).alpha
    with pytest.raises(Exception):  # different groupings are different metrics: no composition
        dp.c.make_composition([meas, other])


def test_mallows_in_a_context_with_a_dsigma_privacy_unit():
    sh = MallowsShuffler(G, alpha=0.5)
    ctx = dp.Context.compositor(
        data=["w", "x", "y", "z"],
        privacy_unit=(dsigma_distance(G), 1),
        privacy_loss=(dp.max_divergence(), 1.5),
        split_evenly_over=2,
        domain=dp.vector_domain(dp.atom_domain(T=str), size=4),
    )
    assert sorted(ctx.query().mallows_shuffle(sh).release()) == ["w", "x", "y", "z"]


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(categories=CATS, eps0=float("nan")), "eps0"),
        (dict(categories=CATS, eps0=-1.0), "eps0"),
        (dict(categories=CATS, eps0=True), "eps0"),
        (dict(categories=CATS, eps0=1.0, rounds=0), "rounds"),
        (dict(categories=CATS, eps0=1.0, rounds=True), "rounds"),
        (dict(categories=CATS, eps0=1.0, delta=0.0), "delta"),
        (dict(categories=CATS, eps0=1.0, delta=float("nan")), "delta"),
        (dict(categories=CATS, eps0=1.0, null_category=1), "null_category"),
        (dict(categories=["a"], eps0=1.0), "categories"),
        (dict(categories=["a", 1], eps0=1.0), "categories"),
        (dict(categories="abc", eps0=1.0), "categories"),
        (dict(categories=1, eps0=1.0), "categories"),
    ],
)
def test_bad_parameters_raise_before_opendp(monkeypatch, kwargs, name):
    monkeypatch.setitem(sys.modules, "opendp", None)
    monkeypatch.setitem(sys.modules, "opendp.prelude", None)
    with pytest.raises(ParameterError, match=f"^{name} must"):
        make_shuffled_krr(None, None, **kwargs)


@pytest.mark.parametrize(
    "space, match",
    [
        ((dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()), "must be sized"),
        (
            (dp.vector_domain(dp.atom_domain(T=str), size=N), dp.insert_delete_distance()),
            "input_metric must be",
        ),
        ((dp.vector_domain(dp.atom_domain(T=int), size=N), dp.symmetric_distance()), "must hold strings"),
        ((dp.atom_domain(T=str), dp.absolute_distance(T=float)), "vector_domain"),
    ],
)
def test_bad_input_space(space, match):
    with pytest.raises(ParameterError, match=match):
        make_shuffled_krr(*space, CATS, 1.0)


@pytest.mark.parametrize("d_in", [-1, 1.5])
def test_bad_d_in_is_refused_by_the_map(d_in):
    meas = make_shuffled_krr(*CHANGE, CATS, 1.0, delta=1e-6)
    with pytest.raises(Exception):
        meas.map(d_in)


def test_bad_mallows_arguments():
    sh = MallowsShuffler(G, alpha=1.0)
    dom4 = dp.vector_domain(dp.atom_domain(T=str), size=4)
    with pytest.raises(ParameterError, match="^shuffler must"):
        make_mallows_shuffle(dom4, dsigma_distance(G), "not a shuffler")
    with pytest.raises(ParameterError, match="size=4"):
        make_mallows_shuffle(dp.vector_domain(dp.atom_domain(T=str), size=5), dsigma_distance(G), sh)
    with pytest.raises(ParameterError, match="^input_metric must be dsigma_distance"):
        make_mallows_shuffle(dom4, dp.symmetric_distance(), sh)
    with pytest.raises(ParameterError, match="^input_metric must describe"):
        make_mallows_shuffle(dom4, dsigma_distance([[0, 1], [0, 1], [2]]), sh)
    with pytest.raises(ParameterError):
        dsigma_distance([[1], [0]])


def test_missing_opendp_gives_actionable_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "opendp", None)
    monkeypatch.setitem(sys.modules, "opendp.prelude", None)
    with pytest.raises(ImportError, match=r"pip install 'shuffle-accounting\[opendp\]'"):
        make_shuffled_krr(None, None, CATS, 1.0)
    with pytest.raises(ImportError, match="opendp"):
        dsigma_distance(G)


def test_wrong_size_input_is_rejected_by_opendp_before_the_function():
    meas = make_shuffled_krr(*SYM, CATS, 1.0)
    with pytest.raises(Exception):
        meas(DATA[:-1])
    assert np.isfinite(meas.map(2).epsilon(1e-6))


def test_deprecated_approx_constructor_warns_and_keeps_k_bins():
    with pytest.warns(DeprecationWarning, match="make_shuffled_krr"):
        meas = adapter.make_shuffled_krr_approx(CATS, eps0=2.0, n_min=N, delta=1e-6)
    assert meas.map(2) == make_shuffled_krr(*SYM, CATS, 2.0, delta=1e-6, null_category=False).map(2)
    assert len(meas(DATA)) == 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(ParameterError, match="^n_min must"):
            adapter.make_shuffled_krr_approx(CATS, eps0=2.0, n_min=None, delta=1e-6)


def test_registration_is_idempotent():
    import importlib

    from opendp import context

    importlib.reload(adapter)
    assert context.constructors["shuffled_krr"][1] is True  # registered as a partial (then_ form)
    assert "mallows_shuffle" in context.constructors


def test_group_helpers_validate_and_handle_edges():
    assert group_epsilon_delta(0.5, 1e-6, 0) == (0.0, 0.0)
    assert group_epsilon_delta(0.5, 0.0, 3)[1] == 0.0
    assert group_epsilon_delta(0.0, 1e-3, 4)[1] >= 4e-3
    assert group_delta(lambda e: 0.5, 1.0, 0) == 0.0
    for bad in (
        dict(epsilon=-1.0, delta=0.1, d=2),
        dict(epsilon=1.0, delta=1.5, d=2),
        dict(epsilon=1.0, delta=0.1, d=-1),
    ):
        with pytest.raises(ParameterError):
            group_epsilon_delta(**bad)
    # all d: the closed form equals the sum it replaces
    for eps, d in itertools.product((1e-9, 0.3, 2.0), (2, 7)):
        _, dl = group_epsilon_delta(eps, 1e-8, d)
        assert dl == pytest.approx(1e-8 * sum(math.exp(i * eps) for i in range(d)), rel=1e-9)


def test_example_pipeline_runs(monkeypatch, capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "opendp_pipeline.py"
    spec = importlib.util.spec_from_file_location("opendp_pipeline_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "N", 300)
    module.main()
    assert "two releases: alpha=2.0000" in capsys.readouterr().out


def test_context_calibrates_eps0_when_it_is_left_out():
    """``query(...).shuffled_krr(categories, delta=...)``: OpenDP's parameter search finds eps0."""
    n = 50
    ctx = dp.Context.compositor(
        data=["a"] * n,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0, delta=1e-6),
        split_evenly_over=1,
        domain=dp.vector_domain(dp.atom_domain(T=str), size=n),
    )
    eps0 = ctx.query().shuffled_krr(["a", "b"], delta=1e-6).param()
    assert eps0 > 1.0  # amplification: a local epsilon above the central target
    certified = make_shuffled_krr(*ctx.accountant.input_space, ["a", "b"], eps0, delta=1e-6).map(1)
    assert certified[0] <= 1.0 and certified[1] == 1e-6
