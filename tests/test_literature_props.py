"""Property and engine tests for shuffle_accounting.literature (hypothesis, modest sizes)."""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import shuffle_accounting.literature._clones as engine
from shuffle_accounting.literature import (
    BoundNotApplicable,
    balle2019_bennett_delta,
    balle2019_bennett_epsilon,
    balle2019_bennett_log_delta,
    balle2019_hoeffding_delta,
    balle2019_hoeffding_epsilon,
    balle2019_krr_delta,
    balle2019_krr_epsilon,
    balle2019_krr_log_delta,
    clone_pair_log_delta,
    erlingsson2019_delta,
    erlingsson2019_log_delta,
    fmt2021_clone_delta,
    fmt2021_clone_epsilon,
    fmt2021_clone_log_delta,
    fmt2021_closed_form_delta,
    fmt2021_closed_form_epsilon,
    fmt2021_closed_form_log_delta,
    fmt2023_krr_clone_delta,
    fmt2023_krr_clone_epsilon,
    fmt2023_krr_clone_log_delta,
    fmt2023_krr_closed_form_epsilon,
    fmt2023_krr_closed_form_log_delta,
)

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# delta(eps, k, eps0, n) for every bound; None where the bound raises BoundNotApplicable
DELTAS = {
    "erlingsson": lambda e, k, e0, n: erlingsson2019_delta(e, min(e0, 0.45), max(n, 1000)),
    "balle_krr": balle2019_krr_delta,
    "hoeffding": balle2019_hoeffding_delta,
    "bennett": balle2019_bennett_delta,
    "fmt21_closed": lambda e, k, e0, n: fmt2021_closed_form_delta(e, e0, n),
    "fmt21_clone": lambda e, k, e0, n: fmt2021_clone_delta(e, e0, n),
    "fmt23_clone": lambda e, k, e0, n: fmt2023_krr_clone_delta(e, e0, n),
}


def _try(fn, *a):
    try:
        return fn(*a)
    except BoundNotApplicable:
        return None


@SETTINGS
@given(
    name=st.sampled_from(sorted(DELTAS)),
    e1=st.floats(0.01, 1.0),
    e2=st.floats(0.01, 1.0),
    k=st.integers(2, 12),
    eps0=st.floats(0.3, 4.0),
    n=st.integers(1000, 200_000),
)
def test_delta_monotone_in_eps_and_n(name, e1, e2, k, eps0, n):
    fn = DELTAS[name]
    lo, hi = sorted((e1, e2))
    a, b = _try(fn, lo, k, eps0, n), _try(fn, hi, k, eps0, n)
    if a is not None and b is not None:
        assert b <= a * (1 + 1e-9) + 1e-300
    c = _try(fn, lo, k, eps0, 2 * n)
    if a is not None and c is not None:
        assert c <= a * (1 + 1e-9) + 1e-300


EPSILONS = {
    "balle_krr": (balle2019_krr_epsilon, balle2019_krr_delta),
    "hoeffding": (balle2019_hoeffding_epsilon, balle2019_hoeffding_delta),
    "bennett": (balle2019_bennett_epsilon, balle2019_bennett_delta),
    "fmt21_closed": (
        lambda k, e0, n, d: fmt2021_closed_form_epsilon(e0, n, d),
        lambda e, k, e0, n: fmt2021_closed_form_delta(e, e0, n),
    ),
    "fmt21_clone": (
        lambda k, e0, n, d: fmt2021_clone_epsilon(e0, n, d),
        lambda e, k, e0, n: fmt2021_clone_delta(e, e0, n),
    ),
    "fmt23_clone": (
        lambda k, e0, n, d: fmt2023_krr_clone_epsilon(e0, n, d),
        lambda e, k, e0, n: fmt2023_krr_clone_delta(e, e0, n),
    ),
}


@SETTINGS
@given(
    name=st.sampled_from(sorted(EPSILONS)),
    k=st.integers(2, 12),
    eps0=st.floats(0.3, 4.0),
    n=st.integers(2000, 300_000),
    log10_delta=st.floats(-12.0, -3.0),
)
def test_epsilon_delta_round_trip(name, k, eps0, n, log10_delta):
    eps_fn, delta_fn = EPSILONS[name]
    delta = 10.0**log10_delta
    e = _try(eps_fn, k, eps0, n, delta)
    if e is None:
        return
    assert 0.0 <= e <= max(eps0, 1.0)
    if e >= eps0:
        return  # the local guarantee (eps0, 0) holds by itself
    d = _try(delta_fn, e, k, eps0, n)
    if d is not None:
        assert d <= delta * (1 + 1e-9)


@SETTINGS
@given(eps0=st.floats(0.3, 4.0), n=st.integers(2000, 300_000), log10_delta=st.floats(-12.0, -3.0))
def test_closed_forms_dominate_exact_clones(eps0, n, log10_delta):
    delta = 10.0**log10_delta
    c21 = _try(fmt2021_closed_form_epsilon, eps0, n, delta)
    if c21 is not None:
        assert c21 >= fmt2021_clone_epsilon(eps0, n, delta)
    c23 = _try(fmt2023_krr_closed_form_epsilon, eps0, n, delta)
    if c23 is not None:
        assert c23 >= fmt2023_krr_clone_epsilon(eps0, n, delta)


@SETTINGS
@given(eps=st.floats(0.0, 0.99), eps0=st.floats(0.2, 3.0), n=st.integers(2, 400), q=st.floats(0.05, 1.0))
def test_clone_f_non_increasing_in_c(eps, eps0, n, q):
    # the data-processing argument the block bound relies on: f(c + 1) <= f(c)
    eps = eps * eps0
    cp = engine.ClonePair(eps0, n, q)
    c = np.arange(0, 60, dtype=float)
    lf = cp.log_f(eps, c)
    assert np.all(np.diff(lf) <= 1e-9)


def _f_exact(eps, eps0, c):
    mp.mp.dps = 40
    al = mp.e ** mp.mpf(eps0) / (mp.e ** mp.mpf(eps0) + 1)
    e = mp.e ** mp.mpf(eps)
    B = [mp.binomial(c, b) / mp.mpf(2) ** c for b in range(c + 1)] + [mp.mpf(0)]
    k1, k2 = al - e * (1 - al), e * al - (1 - al)
    return sum(max(k1 * B[b] - k2 * B[b + 1], 0) for b in range(c + 1))


@pytest.mark.parametrize(
    "eps,eps0,c", [(0.1, 1.0, 0), (0.1, 1.0, 1), (0.3, 2.0, 57), (0.01, 0.5, 400), (1.5, 3.0, 1000)]
)
def test_log_f_is_tight_upper_bound(eps, eps0, c):
    exact = _f_exact(eps, eps0, c)
    got = engine.ClonePair(eps0, 10, 0.5).log_f(eps, np.array([float(c)]))[0]
    assert float(mp.log(exact)) <= got <= float(mp.log(exact)) + 1e-7  # inner cut at exp(-20), tail added


def test_gammaln_allowance_covers_true_error():
    # the engine assumes |gammaln(x+1) - log x!| <= 64 ulps relative (absolute below 1)
    xs = np.array(
        [0, 1, 2, 3, 5, 12, 13, 999, 1000, 1001, 12345, 99_999, 10**6 + 7, 3 * 10**7, 10**9], dtype=float
    )
    v, err = engine.log_factorial_with_error(xs)
    mp.mp.dps = 50
    for x, vi, ei in zip(xs, v, err):
        true = mp.loggamma(mp.mpf(x) + 1)
        assert abs(mp.mpf(vi) - true) <= ei / 16  # at least a 16x margin observed


def test_blocks_agree_with_full_sum(monkeypatch):
    # a window of ~2000 clone counts: block bound vs summing every c exactly
    eps, eps0, n, q = 0.05, 1.0, 200_000, math.exp(-1.0)
    blocked, lower = engine.ClonePair(eps0, n, q).log_delta(eps, log_tol=-40.0, rel_slack=1e-4)
    monkeypatch.setattr(engine, "EXACT_MAX", 10**6)
    full, _ = engine.ClonePair(eps0, n, q).log_delta(eps, log_tol=-40.0)
    assert lower <= full + 1e-9 and full - 1e-12 <= blocked <= full + 2e-4


def test_log_delta_variants_consistent_and_below_1e300():
    assert math.exp(fmt2021_clone_log_delta(0.3, 2.0, 20_000)) == pytest.approx(
        fmt2021_clone_delta(0.3, 2.0, 20_000), rel=1e-12
    )
    assert math.exp(fmt2023_krr_clone_log_delta(0.3, 2.0, 20_000)) == pytest.approx(
        fmt2023_krr_clone_delta(0.3, 2.0, 20_000), rel=1e-12
    )
    assert math.exp(balle2019_krr_log_delta(0.2, 10, 2.0, 100_000)) == pytest.approx(
        balle2019_krr_delta(0.2, 10, 2.0, 100_000), rel=1e-9
    )
    assert math.exp(balle2019_bennett_log_delta(0.2, 10, 2.0, 100_000)) == pytest.approx(
        balle2019_bennett_delta(0.2, 10, 2.0, 100_000), rel=1e-9
    )
    assert math.exp(erlingsson2019_log_delta(0.1, 0.25, 10_000)) == pytest.approx(
        erlingsson2019_delta(0.1, 0.25, 10_000), rel=1e-9
    )
    tiny = [
        fmt2021_clone_log_delta(0.9, 1.0, 100_000),
        fmt2023_krr_clone_log_delta(0.9, 1.0, 100_000),
        clone_pair_log_delta(0.5, 2.0, 10**6, math.exp(-2.0)),
        fmt2021_closed_form_log_delta(0.5, 2.0, 10**8),
        fmt2023_krr_closed_form_log_delta(0.5, 2.0, 10**8),
        balle2019_krr_log_delta(1.0, 10, 2.0, 10**8),
        erlingsson2019_log_delta(1.0, 0.25, 10**6),
    ]
    assert all(-math.inf < t < math.log(1e-300) for t in tiny)
    # the clone bound is monotone in eps in the log domain too
    assert fmt2021_clone_log_delta(0.95, 1.0, 100_000) < tiny[0]
    assert fmt2021_clone_log_delta(1.0, 1.0, 100_000) == -math.inf


def test_large_n_clone_epsilon_is_certified():
    e = fmt2021_clone_epsilon(1.0, 10**6, 1e-6)
    assert fmt2021_clone_delta(e, 1.0, 10**6) <= 1e-6
    assert fmt2021_clone_delta(e * 0.999, 1.0, 10**6) > 1e-6


VALIDITY = [
    (lambda: fmt2021_closed_form_epsilon(8.0, 10_000, 1e-6), "16 log"),
    (lambda: fmt2021_closed_form_log_delta(0.01, 8.0, 10_000), "16 log|additive term"),
    (lambda: fmt2023_krr_closed_form_epsilon(6.0, 2_000, 1e-6), "16 log"),
    (lambda: balle2019_krr_epsilon(10, 2.0, 1000, 1e-6), "eps <= 1"),
    (lambda: balle2019_krr_log_delta(1e-4, 10, 2.0, 100_000), "27"),
    (lambda: erlingsson2019_log_delta(0.1, 0.6, 10_000), "eps0 < 1/2"),
    (lambda: erlingsson2019_log_delta(0.1, 0.25, 500), "n >= 1000"),
    (lambda: erlingsson2019_log_delta(1e-4, 0.25, 10_000), "delta < 1/100"),
    (lambda: balle2019_hoeffding_delta(0.0, 10, 1.0, 1000), "eps > 0"),
]


@pytest.mark.parametrize("call,condition", VALIDITY)
def test_validity_conditions_raise_naming_condition(call, condition):
    with pytest.raises(BoundNotApplicable, match=condition):
        call()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 0.0, 1.0, True, "0.1"])
def test_rel_slack_validated(bad):
    with pytest.raises(ValueError, match="rel_slack"):
        clone_pair_log_delta(0.1, 1.0, 100, 0.3, rel_slack=bad)


@pytest.mark.parametrize("k,eps0,n", [(2, 0.875, 1000), (10, 2.0, 10_000), (3, 0.3, 5000)])
def test_bennett_is_zero_from_eps0_and_monotone_below(k, eps0, n):
    # max L = gamma (e^eps0 - e^eps) is exactly 0 at eps = eps0: the bound must be 0 there, not the
    # rounding artefact 4.75e-3 it was (hypothesis found k=2, eps0=0.875, n=1000).
    assert balle2019_bennett_delta(eps0, k, eps0, n) == 0.0
    grid = np.linspace(0.05 * eps0, eps0, 40)
    vals = [balle2019_bennett_delta(float(e), k, eps0, n) for e in grid]
    assert all(b <= a * (1 + 1e-9) for a, b in zip(vals, vals[1:]))
