"""The curve core (issue 13): root finder, calibration, Interval, prob_from_log, the aliases and renames."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from shuffle_accounting import ShuffledKRR
from shuffle_accounting._validation import ParameterError
from shuffle_accounting.curves import (
    BOUNDS,
    CurveBase,
    Interval,
    PrivacyCurve,
    calibrate,
    epsilon_from_delta,
    prob_from_log,
)


class Exp(CurveBase):
    """delta(eps) = e^(-a eps) on [0, eps_max) and 0 from eps_max on (a certified toy curve)."""

    bound = "upper"

    def __init__(self, a: float, eps_max: float = math.inf, bound: str = "upper") -> None:
        self.a = a
        self.eps_max = eps_max
        self.bound = bound

    def _log_delta(self, eps: float) -> float:
        return -self.a * eps if eps < self.eps_max else -math.inf


# ----------------------------------------------------------------------------- root finder


@pytest.mark.parametrize("delta", [0.5, 1e-3, 1e-12, 1e-300])
def test_root_finder_upper_side_and_resolution(delta):
    f = lambda e: math.exp(-2.0 * e)
    e = epsilon_from_delta(f, delta, bound="upper")
    exact = -math.log(delta) / 2.0
    assert f(e) <= delta  # the returned point was evaluated on the sound side
    assert exact <= e <= exact * (1 + 1e-11) + 1e-11


@pytest.mark.parametrize("delta", [0.5, 1e-3, 1e-12])
def test_root_finder_lower_side(delta):
    f = lambda e: math.exp(-2.0 * e)
    e = epsilon_from_delta(f, delta, bound="lower")
    exact = -math.log(delta) / 2.0
    assert f(e) > delta
    assert exact * (1 - 1e-11) - 1e-11 <= e <= exact


def test_root_finder_ends():
    # delta(lo) already below the target: lo; an upper search returns the vouched hi, a lower
    # search returns hi when even hi exceeds the target
    assert epsilon_from_delta(lambda e: 0.1, 0.5, bound="upper") == 0.0
    assert epsilon_from_delta(lambda e: 0.1, 0.5, bound="lower") == 0.0
    assert epsilon_from_delta(lambda e: 0.9, 0.5, bound="upper", hi=3.0) == 3.0
    assert epsilon_from_delta(lambda e: 0.9, 0.5, bound="lower", hi=3.0) == 3.0
    with pytest.raises(ParameterError, match="no epsilon"):
        epsilon_from_delta(lambda e: 0.9, 0.5, bound="upper")


def test_root_finder_sound_even_when_not_monotone():
    # a non-monotone evaluation: the returned eps is still one where delta <= target was seen
    f = lambda e: 0.2 if 0.3 < e < 0.31 else (0.9 if e < 1.0 else 0.0)
    e = epsilon_from_delta(f, 0.5, bound="upper", hi=2.0)
    assert f(e) <= 0.5


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(delta=0.0, bound="upper"), "delta"),
        (dict(delta=1.0, bound="upper"), "delta"),
        (dict(delta=float("nan"), bound="upper"), "delta"),
        (dict(delta=0.1, bound="sideways"), "bound"),
        (dict(delta=0.1, bound="upper", lo=-1.0), "lo"),
        (dict(delta=0.1, bound="upper", lo=2.0, hi=1.0), "hi"),
        (dict(delta=0.1, bound="upper", rtol=-1.0), "rtol"),
        (dict(delta=0.1, bound="upper", atol=float("nan")), "atol"),
        (dict(delta=0.1, bound="upper", max_iter=0), "max_iter"),
        (dict(delta=0.1, bound="upper", max_iter=2.5), "max_iter"),
    ],
)
def test_root_finder_bad_inputs(kwargs, name):
    with pytest.raises(ParameterError, match=name):
        epsilon_from_delta(lambda e: math.exp(-e), **kwargs)


def test_root_finder_and_calibrate_need_callables():
    with pytest.raises(ParameterError, match="delta_at"):
        epsilon_from_delta(0.5, 0.1, bound="upper")
    with pytest.raises(ParameterError, match="make_curve"):
        calibrate(None, low=1.0, high=2.0, epsilon=1.0, delta=0.1, monotone="decreasing")


# ----------------------------------------------------------------------------- CurveBase


def test_curve_base_scalar_array_and_roundtrip():
    c = Exp(3.0, eps_max=5.0)
    assert isinstance(c, PrivacyCurve)
    assert c.delta(0.0) == 1.0 and c.delta(6.0) == 0.0 and c.log_delta(6.0) == -math.inf
    arr = c.delta(np.array([[0.0, 1.0], [2.0, 7.0]]))
    assert arr.shape == (2, 2) and arr[1, 1] == 0.0
    for d in (0.5, 1e-6, 1e-200):
        e = c.epsilon(d)
        assert c.delta(e) <= d and e <= -math.log(d) / 3.0 * (1 + 1e-11) + 1e-11
    assert c.epsilon(1e-300) == 5.0  # the root (230) lies beyond eps_max, which is vouched for


def test_curve_base_lower_rounds_down():
    up, low = Exp(1.0, bound="upper"), Exp(1.0, bound="lower")
    assert low.delta(800.0) == 0.0 < up.delta(800.0)  # underflow: lower to 0, upper to 5e-324
    assert low.delta(0.5) < up.delta(0.5)
    e_low, e_up = low.epsilon(1e-3), up.epsilon(1e-3)
    assert e_low <= -math.log(1e-3) <= e_up and low.delta(e_low) > 1e-3


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "x", True, [0.1, -0.1]])
def test_curve_base_bad_eps(bad):
    with pytest.raises(ParameterError, match="eps"):
        Exp(1.0).delta(bad)
    with pytest.raises(ParameterError, match="eps"):
        Exp(1.0).log_delta(bad)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.5, float("nan"), "x", None])
def test_curve_base_bad_delta(bad):
    with pytest.raises(ParameterError, match="delta"):
        Exp(1.0).epsilon(bad)


# ----------------------------------------------------------------------------- prob_from_log


def test_prob_from_log():
    assert prob_from_log(0.0) == 1.0 and prob_from_log(3.0) == 1.0
    assert prob_from_log(-math.inf) == 0.0 and prob_from_log(-math.inf, bound="lower") == 0.0
    assert prob_from_log(-745.5) > 0.0  # below the subnormal range: still positive when upper
    x = math.log(0.3)
    assert prob_from_log(x, bound="lower") < math.exp(x) <= prob_from_log(x)
    assert prob_from_log(x, bound="estimate") == math.exp(x)
    with pytest.raises(ParameterError, match="log_value"):
        prob_from_log(float("nan"))
    with pytest.raises(ParameterError, match="bound"):
        prob_from_log(-1.0, bound="up")


# ----------------------------------------------------------------------------- calibrate


def test_calibrate_real_increasing_matches_closed_form():
    # Exp(a): delta(eps) = e^(-a eps); larger "1/a" is less private. Parametrise by s = 1/a.
    s = calibrate(
        lambda s: Exp(1.0 / s), low=0.01, high=100.0, epsilon=2.0, delta=1e-3, monotone="increasing"
    )
    exact = 2.0 / -math.log(1e-3)  # e^(-2/s) = 1e-3
    assert s <= exact and s == pytest.approx(exact, rel=1e-8)
    assert Exp(1.0 / s).delta(2.0) <= 1e-3


def test_calibrate_real_decreasing():
    a = calibrate(lambda a: Exp(a), low=0.01, high=100.0, epsilon=2.0, delta=1e-3, monotone="decreasing")
    exact = -math.log(1e-3) / 2.0
    assert a >= exact and a == pytest.approx(exact, rel=1e-8)


def test_calibrate_integer_matches_brute_force():
    target_eps, target_delta = 0.5, 1e-6
    n = calibrate(
        lambda n: ShuffledKRR(3, 1.0, n),
        low=2,
        high=3000,
        epsilon=target_eps,
        delta=target_delta,
        monotone="decreasing",
        integer=True,
    )
    assert isinstance(n, int)
    assert ShuffledKRR(3, 1.0, n).delta(target_eps) <= target_delta
    assert ShuffledKRR(3, 1.0, n - 1).delta(target_eps) > target_delta


def test_calibrate_ends_and_errors():
    # the loose end already meets the target: it is returned
    assert (
        calibrate(lambda a: Exp(a), low=10.0, high=20.0, epsilon=2.0, delta=1e-3, monotone="decreasing")
        == 10.0
    )
    with pytest.raises(ParameterError, match="no parameter"):
        calibrate(lambda a: Exp(a), low=0.1, high=0.2, epsilon=2.0, delta=1e-3, monotone="decreasing")
    with pytest.raises(ParameterError, match="bound == 'upper'"):
        calibrate(
            lambda a: Exp(a, bound="lower"), low=1.0, high=9.0, epsilon=2.0, delta=1e-3, monotone="decreasing"
        )
    bad = [
        ("monotone", dict(monotone="up")),
        ("epsilon", dict(epsilon=-1.0)),
        ("delta", dict(delta=0.0)),
        ("high", dict(low=5.0, high=1.0)),
        ("low", dict(low=float("nan"))),
        ("integers", dict(integer=True, low=1.5)),
        ("rtol", dict(rtol=0.0)),
        ("max_iter", dict(max_iter=0)),
        ("integer", dict(integer="yes")),
    ]
    for name, override in bad:
        kw = dict(low=1.0, high=9.0, epsilon=2.0, delta=1e-3, monotone="decreasing")
        kw.update(override)
        with pytest.raises(ParameterError, match=name):
            calibrate(lambda a: Exp(a), **kw)


# ----------------------------------------------------------------------------- Interval


def test_interval_validation():
    iv = Interval(0.0, 1.0, certified=True, estimate=0.5)
    assert 0.5 in iv and 2.0 not in iv and "x" not in iv and iv.width == 1.0
    assert Interval(-math.inf, math.inf, certified=False).estimate is None
    with pytest.raises(TypeError):
        Interval(0.0, 1.0)  # certified is required: say which way it is sound
    for kwargs, name in [
        (dict(lower=2.0, upper=1.0, certified=True), "lower <= upper"),
        (dict(lower=float("nan"), upper=1.0, certified=True), "lower"),
        (dict(lower=0.0, upper="1", certified=True), "upper"),
        (dict(lower=0.0, upper=1.0, certified=1), "certified"),
        (dict(lower=0.0, upper=1.0, certified=True, estimate=2.0), "estimate"),
        (dict(lower=0.0, upper=1.0, certified=True, estimate=float("nan")), "estimate"),
    ]:
        with pytest.raises(ParameterError, match=name):
            Interval(**kwargs)


def test_result_types_are_intervals():
    from shuffle_accounting import qif
    from shuffle_accounting.dsigma import PreservationEstimate
    from shuffle_accounting.reidentification import AdvantageBounds, ContinuousEstimate, advantage_bounds

    e = qif.Estimate(0.5, 0.1, 0.4, 0.6)
    assert isinstance(e, Interval) and e.certified and e.estimate == e.value == 0.5 and e.error == 0.1
    c = ContinuousEstimate(value=0.5, error=0.01)
    assert isinstance(c, Interval) and not c.certified and (c.lower, c.upper) == (0.49, 0.51)
    with pytest.raises(ParameterError, match="error"):
        ContinuousEstimate(value=0.5, error=-1.0)
    b = advantage_bounds([0.75, 0.25], [0.25, 0.75], 10)
    assert isinstance(b, (Interval, AdvantageBounds)) and not b.certified and b.holds
    p = PreservationEstimate(0.1, 0.05, 0.2, 10, 100, 0.95)
    assert isinstance(p, Interval) and not p.certified and p.estimate == 0.1 and p.trials == 100
    with pytest.raises(ParameterError, match="lower <= upper"):
        PreservationEstimate(0.1, 0.3, 0.2, 10, 100, 0.95)
    assert qif.Estimate(0.5, 0.1, 0.4, 0.6) == qif.Estimate(0.5, 0.1, 0.4, 0.6)


# ----------------------------------------------------------------------------- aliases and renames


def test_shuffled_krr_lower_spellings_are_aliases():
    m = ShuffledKRR(3, 1.0, 20)
    assert ShuffledKRR.lower_epsilon is ShuffledKRR.epsilon_lower
    assert m.lower_epsilon(1e-3) == m.epsilon_lower(1e-3)
    assert m.lower_delta(0.3) == m.delta_lower(0.3)
    assert m.lower_log_delta(0.3) == m.log_delta_lower(0.3)
    low = m.lower_curve()
    assert low.bound == "lower" and low.epsilon(1e-3) == m.epsilon_lower(1e-3)
    assert m.bound == "upper" and m.bound in BOUNDS


def test_exhibited_curve_bad_inputs():
    from shuffle_accounting.shuffled_krr.curves import AccountantCurve, ExhibitedKRRCurve

    with pytest.raises(ParameterError, match="n"):
        ExhibitedKRRCurve(3, 1.0, 1)
    with pytest.raises(ParameterError, match="k"):
        ExhibitedKRRCurve(1, 1.0, 10)
    with pytest.raises(ParameterError, match="accountant"):
        AccountantCurve(object())
    with pytest.raises(ParameterError, match="bound"):
        from shuffle_accounting.shuffled_krr import ShuffleAccountant

        AccountantCurve(ShuffleAccountant(), bound="sure")


def test_dsigma_subset_size_rename_and_deprecated_k():
    from shuffle_accounting.dsigma import DSigmaAccountant, reidentification_bound

    new = reidentification_bound(0.2, 2.0, 50, subset_size=5)
    assert reidentification_bound(0.2, 2.0, 50, 5) == new  # positional form unchanged
    with pytest.warns(DeprecationWarning, match="subset_size"):
        old = reidentification_bound(0.2, 2.0, 50, k=5)
    assert old == new
    with pytest.raises(ParameterError, match="subset_size"):
        reidentification_bound(0.2, 2.0, 50, subset_size=5, k=5)
    with pytest.raises(ParameterError, match="subset_size"):
        reidentification_bound(0.2, 2.0, 50)
    with pytest.raises(ParameterError, match="subset_size"):
        reidentification_bound(0.2, 2.0, 50, subset_size=0)
    acct = DSigmaAccountant([list(range(12))] * 12).add(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = acct.reidentification_bound(0.1, subset_size=2, user=3)
    with pytest.warns(DeprecationWarning):
        b = acct.reidentification_bound(0.1, k=2, user=3)
    assert a == b == acct.reidentification_bound(0.1, 2, 3)
    with pytest.raises(ParameterError, match="user"):
        acct.reidentification_bound(0.1, 2)


def test_biswas_as_printed_keyword_only_with_deprecated_positional_form():
    from shuffle_accounting.literature import BiswasAsPrintedCurve, biswas_as_printed_delta

    new = biswas_as_printed_delta(0.5, n=100, n_x0=80, k=10, eps0=2.0)
    with pytest.warns(DeprecationWarning, match="keywords"):
        old = biswas_as_printed_delta(0.5, 100, 80, 10, 2.0)
    assert old == new == BiswasAsPrintedCurve(10, 2.0, 100, n_x0=80).delta(0.5)
    with pytest.raises(ParameterError, match="eps0"):
        biswas_as_printed_delta(0.5, n=100, n_x0=80, k=10)
    with pytest.raises(ParameterError, match="n_x0"):
        with pytest.warns(DeprecationWarning):
            biswas_as_printed_delta(0.5, 100, 80, n_x0=80, k=10, eps0=2.0)
    with pytest.raises(ParameterError, match="positional"):
        biswas_as_printed_delta(0.5, 100, 80, 10, 2.0, 7)


@pytest.mark.parametrize(
    "fn,curve,args",
    [
        ("erlingsson2019", "Erlingsson2019Curve", (0.3, 10_000)),
        ("balle2019_krr", "Balle2019KRRCurve", (3, 1.0, 10**6)),
        ("balle2019_hoeffding", "Balle2019HoeffdingCurve", (3, 1.0, 10_000)),
        ("balle2019_bennett", "Balle2019BennettCurve", (3, 1.0, 10_000)),
        ("fmt2021_closed_form", "FMT2021ClosedFormCurve", (1.0, 10**5)),
        ("fmt2021_clone", "FMT2021CloneCurve", (1.0, 2000)),
        ("fmt2023_krr_clone", "FMT2023KRRCloneCurve", (1.0, 2000)),
        ("fmt2023_krr_closed_form", "FMT2023KRRClosedFormCurve", (1.0, 10**5)),
    ],
)
def test_literature_functions_are_aliases_of_the_curves(fn, curve, args):
    from shuffle_accounting import literature as lit

    c = getattr(lit, curve)(*args)
    assert c.bound == "upper" and c.eps_max == c.eps0
    assert getattr(lit, f"{fn}_epsilon")(*args, 1e-6) == c.epsilon(1e-6)
    eps = 0.9 * c.epsilon(1e-6)
    assert getattr(lit, f"{fn}_delta")(eps, *args) == c.delta(eps)
    assert getattr(lit, f"{fn}_log_delta")(eps, *args) == c.log_delta(eps)
    assert 1e-6 <= getattr(lit, f"{fn}_delta")(eps, *args) <= getattr(lit, f"{fn}_delta")(0.95 * eps, *args)


def test_generic_calibrate_agrees_with_calibrate_eps0_for_one_round():
    from shuffle_accounting.shuffled_krr import calibrate_eps0

    # n above AUTO_WORST_CASE_K_MAX_N: the default curve is the blanket one, as calibrate_eps0 uses
    k, n, epsilon, delta = 3, 1000, 0.5, 1e-4
    generic = calibrate(
        lambda e0: ShuffledKRR(k, e0, n),
        low=0.01,
        high=30.0,
        epsilon=epsilon,
        delta=delta,
        monotone="increasing",
    )
    legacy = calibrate_eps0(k=k, n=n, epsilon=epsilon, delta=delta, rtol=1e-9)
    assert ShuffledKRR(k, generic, n).delta(epsilon) <= delta
    # calibrate_eps0 certifies delta * (1 - 1e-9): its answer is (just) the more conservative one
    assert legacy <= generic * (1 + 1e-9) and generic == pytest.approx(legacy, rel=1e-6)
