"""The one epsilon-from-delta root finder (issue 13): ``curves.epsilon_from_delta``'s methods.

* soundness of the returned side for every method (hypothesis over smooth and kinked monotone
  curves, linear and log scale, with and without derivatives, tiny ``max_iter``);
* agreement with bisection to the requested resolution;
* agreement with the specialised loops it replaced (values recorded from commit 33cd5ce, the
  code before the merge: ``ShuffledKRR.epsilon`` exact, ``blanket_fast.certified_epsilon`` to
  1e-15, the clone bounds within 1e-7 above / anywhere below, always verified);
* ``log_target``, ``step_up_until`` and every bad input.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accounting import ShuffledKRR
from shuffle_accounting._validation import ParameterError
from shuffle_accounting.curves import (
    SEARCH_METHODS,
    SECANT_MAX_JUMP,
    EpsilonSearch,
    epsilon_from_delta,
    log_target,
    step_up_secant,
    step_up_until,
)
from shuffle_accounting.literature import FMT2021CloneCurve, FMT2023KRRCloneCurve
from shuffle_accounting.shuffled_krr import blanket_fast


def _curve(a: float, p: float, kink: float):
    """``log delta(eps) = -a eps^p - 5 [eps > kink] (eps - kink)`` (decreasing, kinked) and its slope."""

    def f(e: float) -> tuple[float, float]:
        v = -a * e**p
        s = -a * p * e ** (p - 1.0) if e > 0 else (-a if p == 1.0 else 0.0)
        if e > kink:
            v -= 5.0 * (e - kink)
            s -= 5.0
        return v, s

    return f


CURVES = st.tuples(st.floats(0.1, 20.0), st.floats(1.0, 3.0), st.floats(0.05, 5.0), st.floats(1e-12, 0.5))


@settings(max_examples=60, deadline=None)
@given(
    params=CURVES,
    method=st.sampled_from(SEARCH_METHODS),
    bound=st.sampled_from(["upper", "lower"]),
    derivative=st.booleans(),
    log=st.booleans(),
    max_iter=st.sampled_from([1, 3, 100]),
    guess=st.none() | st.floats(0.0, 12.0),
)
def test_returned_side_is_sound(params, method, bound, derivative, log, max_iter, guess):
    a, p, kink, delta = params
    f = _curve(a, p, kink)

    def at(e):
        v, s = f(e)
        if not log:
            v, s = math.exp(v), math.exp(v) * s
        return (v, s) if derivative else v

    r = epsilon_from_delta(
        at,
        delta,
        bound=bound,
        hi=12.0,
        rtol=1e-10,
        atol=0.0,
        max_iter=max_iter,
        method=method,
        log=log,
        derivative=derivative,
        guess=guess,
        full_output=True,
    )
    assert isinstance(r, EpsilonSearch) and r.lo <= r.hi
    v = f(r.epsilon)[0]
    lt = log_target(delta, bound=bound)
    if bound == "upper":
        # evaluated <= delta (in the scale searched), or the vouched hi
        assert r.epsilon == 12.0 or (v <= lt if log else math.exp(v) <= delta)
    else:
        assert r.epsilon == 0.0 or (v > lt if log else math.exp(v) > delta)
    if max_iter == 100:  # converged: within the resolution of the bisection answer
        ref = epsilon_from_delta(
            lambda e: f(e)[0], delta, bound=bound, hi=12.0, log=True, rtol=1e-10, atol=0.0, max_iter=200
        )
        assert r.epsilon == pytest.approx(ref, rel=3e-9, abs=1e-300)


def test_newton_with_derivative_converges_in_few_steps():
    r = epsilon_from_delta(
        lambda e: (-e * e, -2.0 * e),
        1e-3,
        bound="upper",
        hi=50.0,
        log=True,
        derivative=True,
        method="newton",
        guess=1.0,
        rtol=1e-12,
        full_output=True,
    )
    assert -(r.epsilon**2) <= math.log(1e-3) and r.evaluations <= 10
    assert r.epsilon == pytest.approx(math.sqrt(-math.log(1e-3)), rel=1e-12)
    bis = epsilon_from_delta(
        lambda e: -e * e, 1e-3, bound="upper", hi=50.0, log=True, rtol=1e-12, full_output=True
    )
    assert bis.evaluations > 3 * r.evaluations


def test_illinois_is_superlinear():
    f = lambda e: -e * e
    r = epsilon_from_delta(
        f, 1e-6, bound="upper", hi=20.0, method="illinois", log=True, rtol=1e-12, atol=0.0, full_output=True
    )
    bis = epsilon_from_delta(
        f, 1e-6, bound="upper", hi=20.0, log=True, rtol=1e-12, atol=0.0, full_output=True
    )
    assert f(r.epsilon) <= math.log(1e-6) and r.evaluations <= 15 < 2 * 15 < bis.evaluations


def test_verify_steps_up_to_the_checking_evaluation():
    # the search evaluation accepts from 2.0, the checking one only from 2.0 + 1e-6
    r = epsilon_from_delta(
        lambda e: 0.5 if e < 2.0 else 0.0,
        0.1,
        bound="upper",
        hi=10.0,
        rtol=1e-12,
        verify=lambda e: e >= 2.0 + 1e-6,
    )
    assert 2.0 + 1e-6 <= r <= 2.0 + 1e-5
    # a check that never accepts ends at the vouched hi
    assert (
        epsilon_from_delta(
            lambda e: 0.5 if e < 2.0 else 0.0, 0.1, bound="upper", hi=10.0, verify=lambda e: False
        )
        == 10.0
    )


def test_settle_false_stops_on_a_prediction_and_keeps_the_verified_hi():
    r = epsilon_from_delta(
        lambda e: -e,
        1e-3,
        bound="upper",
        hi=50.0,
        log=True,
        method="newton",
        guess=6.9,
        slope=-1.0,
        rtol=1e-3,
        settle=False,
        full_output=True,
    )
    assert r.hi == 50.0 or -r.hi <= math.log(1e-3)
    assert r.estimate == pytest.approx(-math.log(1e-3), rel=1e-3)


def test_log_target_rounds_to_the_sound_side():
    d = 0.35317312596329503  # exp(log(d)) > d in floating point
    assert math.exp(log_target(d)) <= d
    assert math.exp(log_target(d, bound="lower")) >= d
    assert log_target(d) <= math.log(d) <= log_target(d, bound="lower")


def test_newton_distant_secant_does_not_end_the_search():
    # found by hypothesis (test_returned_side_is_sound): on a linear delta scale the chord from
    # eps = 0.25 to the midpoint 6.125 has slope -0.16 where the local slope is -8e-12, so its
    # predicted step (4e-12) looked converged and the search stopped at 6.125 (sound, untight);
    # the root of log delta = -0.25 eps - 5 (eps - 1) = log 1e-12 is 6.2154...
    f = _curve(0.25, 1.0, 1.0)
    root = (math.log(1e12) + 5.0) / 5.25
    for bound in ("lower", "upper"):
        r = epsilon_from_delta(
            lambda e: math.exp(f(e)[0]),
            1e-12,
            bound=bound,
            hi=12.0,
            rtol=1e-10,
            atol=0.0,
            max_iter=100,
            method="newton",
            guess=0.25,
            full_output=True,
        )
        assert r.epsilon == pytest.approx(root, rel=3e-9), bound


def test_newton_on_a_concave_curve_does_not_stop_short_of_rtol():
    # found by hypothesis (test_integration_soundness, seed 404): near eps0 log delta behaves like
    # log(eps0 - eps), concave, so Newton from the sound side under-shoots; a prediction within
    # rtol of a sound point ended the search 1.8e-9 (relative) above the root, above the FMT 2023
    # clone bound at k = 2, eps0 = 5, n = 200, delta = 10^-8.5. Model: delta = A (5 - eps)
    target = 0.5
    a = target / 1.2e-8  # root at 5 - 1.2e-8
    root = 5.0 - target / a
    r = epsilon_from_delta(
        lambda e: (
            math.log(a * (5.0 - e)) if e < 5.0 else -math.inf,
            -1.0 / (5.0 - e) if e < 5.0 else -math.inf,
        ),
        target,
        bound="upper",
        lo=0.0,
        hi=5.0,
        log=True,
        derivative=True,
        method="newton",
        guess=4.5,  # as ShuffledKRR: bisection towards eps0, then a sound Newton point
        rtol=1e-9,
        atol=0.0,
        full_output=True,
    )
    assert root <= r.epsilon <= root + 1e-9 * 5.0 and r.evaluations <= 40
    assert a * (5.0 - r.epsilon) <= target


def test_newton_secant_on_a_linear_scale_does_not_crawl():
    # found by hypothesis (test_returned_side_is_sound, seeds 1007, 2006, 2008, 2010): on a linear
    # delta scale without derivative the secant steps alternated between 3.58 and 5.999, moving
    # 1e-4 per step, and 100 evaluations ended at 5.99 for a root at 5.5011; after _STALL_BISECT
    # evaluations without halving the bracket the next point is now the midpoint
    f = _curve(0.25, 1.0, 0.25)
    root = (math.log(1e12) + 1.25) / 5.25
    r = epsilon_from_delta(
        lambda e: math.exp(f(e)[0]),
        1e-12,
        bound="upper",
        hi=12.0,
        rtol=1e-10,
        atol=0.0,
        max_iter=100,
        method="newton",
        full_output=True,
    )
    assert r.epsilon == pytest.approx(root, rel=3e-9) and r.evaluations <= 40


def test_step_up_until():
    assert step_up_until(lambda e: True, 1.0, cap=2.0) == 1.0
    e = step_up_until(lambda e: e >= 1.5, 1.0, cap=2.0, step=1e-3)
    assert 1.5 <= e < 2.0
    assert step_up_until(lambda e: False, 1.0, cap=2.0) == 2.0


def test_step_up_secant():
    assert step_up_secant(lambda e: -1.0, 1.0, cap=2.0) == 1.0
    assert step_up_secant(lambda e: 1.0, 1.0, cap=2.0) == 2.0  # never accepted: the cap
    assert step_up_secant(lambda e: math.inf, 1.0, cap=2.0) == 2.0
    # a linear excess: the third candidate is accepted, a quarter past the root; the doubling
    # loop needs 11 checks for the same target
    calls: list[float] = []
    e = step_up_secant(lambda e: calls.append(e) or 1.001 - e, 1.0, cap=2.0, step=1e-6)
    assert len(calls) == 3 and 1.001 <= e <= 1.0013
    checks: list[float] = []
    assert step_up_until(lambda e: checks.append(e) or e >= 1.001, 1.0, cap=2.0, step=1e-6) >= 1.001
    assert len(checks) == 11
    # a far root: one secant step moves at most SECANT_MAX_JUMP, and the doubling step still grows
    calls.clear()
    e = step_up_secant(lambda e: calls.append(e) or 1.5 - e, 1.0, cap=2.0, step=1e-6)
    assert 1.5 <= e < 2.0
    assert all(
        b <= a * (1 + max(SECANT_MAX_JUMP, 1e-6 * 2**i)) + 1e-12
        for i, (a, b) in enumerate(zip(calls, calls[1:]))
    )


@given(
    root=st.floats(1e-6, 1.0),
    slope=st.floats(1e-3, 1e3),
    noise=st.floats(0.0, 0.5),
    start=st.floats(1e-7, 1.0),
)
@settings(max_examples=200, deadline=None)
def test_step_up_secant_only_returns_accepted_values(root, slope, noise, start):
    # a decreasing excess with a deterministic wobble (covers that differ from one eps to the next)
    def excess(e: float) -> float:
        return slope * (root - e) + noise * slope * root * math.sin(1e6 * e)

    e = step_up_secant(excess, start, cap=2.0, step=1e-7)
    assert e == 2.0 or (e >= start and excess(e) <= 0.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"method": "brent"}, "method"),
        ({"bound": "lower", "verify": lambda e: True}, "verify"),
        ({"verify": 3}, "verify"),
        ({"aim": 0.1}, "aim"),
        ({"aim": -1e-9}, "aim"),
        ({"guess": -1.0}, "guess"),
        ({"guess": math.nan}, "guess"),
        ({"slope": math.inf}, "slope"),
        ({"settle": 1}, "settle"),
        ({"log": "yes"}, "log"),
        ({"derivative": None}, "derivative"),
        ({"check_lo": 0}, "check_lo"),
        ({"full_output": 1}, "full_output"),
        ({"verify_step": 0.0}, "verify_step"),
        ({"max_iter": 0}, "max_iter"),
        ({"hi": -1.0}, "hi"),
    ],
)
def test_bad_arguments(kwargs, match):
    args = {"bound": "upper", "hi": 5.0, **kwargs}
    with pytest.raises(ParameterError, match=match):
        epsilon_from_delta(lambda e: math.exp(-e), 1e-3, **args)


def test_bad_log_target_arguments():
    with pytest.raises(ParameterError, match="delta"):
        log_target(0.0)
    with pytest.raises(ParameterError, match="bound"):
        log_target(0.5, bound="estimate")


# ------------------------------------------------------------------ agreement with the old loops
#: values of the specialised loops before the merge (commit 33cd5ce)
OLD_KRR = {
    (2, 0.5, 50, 1e-3): 0.14966333846803748,
    (2, 2.0, 500, 1e-7): 0.66210261762276,
    (5, 0.5, 500, 1e-3): 0.020525122895249687,
    (5, 2.0, 50, 1e-7): 1.660899238342402,
}
OLD_FAST = {(10, 2.0, 2000, 1e-6): 0.18861353849607673}
OLD_CLONES = {
    ("fmt21", 1.0, 100): 0.6436888968189313,
    ("fmt23", 1.0, 1000): 0.14867061690006445,
    ("fmt21", 2.0, 1000): 0.5454979662198695,
    ("fmt23", 2.0, 100): 1.666394266523655,
}


@pytest.mark.parametrize("key", sorted(OLD_KRR))
def test_shuffled_krr_epsilon_identical_to_the_old_newton_loop(key):
    k, eps0, n, delta = key
    m = ShuffledKRR(k, eps0, n)
    e = m.epsilon(delta, method="blanket")
    assert e == OLD_KRR[key]
    assert m.delta(e, method="blanket") <= delta


@pytest.mark.parametrize("key", sorted(OLD_FAST))
def test_blanket_fast_epsilon_agrees_with_the_old_secant_loop(key):
    k, eps0, n, delta = key
    e = blanket_fast.certified_epsilon(delta, k, eps0, n)
    assert e == pytest.approx(OLD_FAST[key], rel=1e-15)
    assert blanket_fast.certified_log_delta_bounds(e, k, eps0, n)[0] <= math.log(delta)


@pytest.mark.parametrize("key", sorted(OLD_CLONES))
def test_clone_epsilon_agrees_with_the_old_brent_secant_loop(key):
    which, eps0, n = key
    curve = FMT2021CloneCurve(eps0, n) if which == "fmt21" else FMT2023KRRCloneCurve(eps0, n)
    e = curve.epsilon(1e-6)
    assert curve.delta(e) <= 1e-6  # verified with the public evaluation
    assert OLD_CLONES[key] * (1.0 - 1e-3) <= e <= OLD_CLONES[key] * (1.0 + 1e-7)


@pytest.mark.parametrize("method", SEARCH_METHODS)
def test_nan_values_never_become_the_answer(method):
    # delta is NaN on (2, 3): a NaN is not evidence of either side
    def f(e):
        return math.nan if 2.0 < e < 3.0 else math.exp(-e)

    up = epsilon_from_delta(f, 0.1, bound="upper", hi=10.0, method=method, rtol=1e-9, atol=0.0)
    assert not 2.0 < up < 3.0 and f(up) <= 0.1
    low = epsilon_from_delta(f, 0.1, bound="lower", hi=10.0, method=method, rtol=1e-9, atol=0.0)
    assert not 2.0 < low < 3.0 and f(low) > 0.1
