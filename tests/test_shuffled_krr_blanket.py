"""Tests for the certified privacy-blanket bound of shuffled k-RR and the ShuffledKRR class."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accounting import ParameterError
from shuffle_accounting.shuffled_krr import ShuffledKRR, blanket, certified_log_delta
from shuffle_accounting.shuffled_krr.blanket import BlanketEvaluator, blanket_log_delta_bruteforce

from _bad_inputs import BAD_K_EPS0_N

# --------------------------------------------------------------------------------------------
# Independent reference enumerators
# --------------------------------------------------------------------------------------------


def blanket_delta_enumerated(eps: float, k: int, e_eps0: int, n: int) -> float:
    """Blanket divergence by enumerating every other user's blanket indicator and output.

    Exact rationals (``e^eps0`` an integer, so p and pbar are rational); only the final
    ``e^eps`` comparison is in floating point. Target holds 0 (D) or 1 (D').
    """
    pbar = Fraction(1, e_eps0 + k - 1)
    p = e_eps0 * pbar
    gamma = k * pbar
    P: dict = defaultdict(Fraction)
    Q: dict = defaultdict(Fraction)
    options = [None] + list(range(k))  # None: not a blanket draw (its known value is removed)
    for draws in itertools.product(options, repeat=n - 1):
        w = Fraction(1)
        outs = []
        for d in draws:
            if d is None:
                w *= 1 - gamma
            else:
                w *= gamma / k
                outs.append(d)
        m = len(outs)
        for y in range(k):
            view = (m, tuple(sorted(outs + [y])))
            P[view] += w * (p if y == 0 else pbar)
            Q[view] += w * (p if y == 1 else pbar)
    E = math.exp(eps)
    return sum(max(float(P[v]) - E * float(Q[v]), 0.0) for v in P)


def full_histogram_delta(eps: float, k: int, eps0: float, others: tuple[int, ...]) -> float:
    """Exact delta (max over both directions) of the shuffled output histogram of a dataset.

    Enumerates all ``k^n`` output tuples (numpy, vectorised) and aggregates them by histogram.
    """
    pbar = 1.0 / (math.exp(eps0) + k - 1)
    p = math.exp(eps0) * pbar
    m = len(others) + 1
    outs = np.indices((k,) * m).reshape(m, -1).T  # every output tuple, one per row
    counts = (outs[:, :, None] == np.arange(k)).sum(axis=1)
    key = counts @ ((m + 1) ** np.arange(k))  # histogram -> integer
    rest = np.asarray(others, dtype=int)
    pd = np.where(outs == np.concatenate(([0], rest)), p, pbar).prod(axis=1)
    qd = np.where(outs == np.concatenate(([1], rest)), p, pbar).prod(axis=1)
    P = np.bincount(key, weights=pd)
    Q = np.bincount(key, weights=qd)
    E = math.exp(eps)
    a = float(np.sum(np.maximum(P - E * Q, 0.0)))
    b = float(np.sum(np.maximum(Q - E * P, 0.0)))
    return max(a, b)


def krr_delta(eps: float, k: int, eps0: float) -> float:
    pbar = 1.0 / (math.exp(eps0) + k - 1)
    return max(math.exp(eps0) * pbar - math.exp(eps) * pbar, 0.0)


# --------------------------------------------------------------------------------------------
# Brute force
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("n", [2, 3, 4, 5])
@pytest.mark.parametrize("e_eps0", [2, 5])
def test_blanket_divergence_matches_enumeration(k, n, e_eps0):
    eps0 = math.log(e_eps0)
    bl = BlanketEvaluator(k, eps0, n)
    for eps in [0.0, 0.1, 0.4, 0.9 * eps0]:
        ref = blanket_delta_enumerated(eps, k, e_eps0, n)
        core, _, _, ldrop = bl.log_delta_at(eps, bl.window(9.0))
        assert ldrop == -math.inf  # tiny n: windows cover everything
        assert math.exp(core) == pytest.approx(ref, rel=1e-10, abs=1e-300)
        cert = math.exp(float(certified_log_delta(eps, k, eps0, n)))
        assert ref <= cert <= ref * (1 + 1e-8)


def test_formula_bruteforce_agrees_with_enumeration():
    ref = blanket_delta_enumerated(0.3, 3, 3, 5)
    assert math.exp(blanket_log_delta_bruteforce(0.3, 3, math.log(3), 5)) == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
def test_certified_dominates_every_dataset(k, n):
    for eps0 in (0.7, 1.5):
        eps_grid = np.array([0.0, 0.2, 0.5, 1.0])
        cert = np.exp(certified_log_delta(eps_grid, k, eps0, n))
        for others in itertools.combinations_with_replacement(range(k), n - 1):
            for eps, c in zip(eps_grid, cert):
                exact = full_histogram_delta(float(eps), k, eps0, others)
                assert c >= exact - 1e-15, (k, n, eps0, others, eps)


def test_blanket_strictly_above_worst_case_n3():
    # the blanket bound is not tight for n >= 3 (k = 2: enumerate every dataset)
    cert = math.exp(float(certified_log_delta(0.2, 2, 1.0, 3)))
    worst = max(full_histogram_delta(0.2, 2, 1.0, o) for o in itertools.product(range(2), repeat=2))
    assert cert > worst * 1.001


# --------------------------------------------------------------------------------------------
# Published / prepared values
# --------------------------------------------------------------------------------------------


def test_issue_fact_k4_n7():
    # Issue 2, "Facts checked": k=4, n=7, eps0=1, eps=0.5, blanket bound 0.0205345108
    assert ShuffledKRR(4, 1.0, 7).delta(0.5, method="blanket") == pytest.approx(0.0205345108, abs=1e-10)


def test_koskela_weak_adversary():
    # Koskela et al.'s weak-adversary (= blanket) accountant: n=1000, k=4, eps0=ln 13,
    # delta=1e-4 gives eps = 0.38952 (discretised upward, so ours is <= and within 1 %).
    e = ShuffledKRR(4, math.log(13), 1000).epsilon(1e-4)
    assert 0.38952 * 0.99 <= e <= 0.38952


def test_large_n_fast_path_is_smooth_and_consistent():
    m = ShuffledKRR(10, 1.0, 200_000)
    eps = 0.005 * (1 + 1e-7 * np.arange(6))
    ld = m.log_delta(eps)
    assert np.all(np.diff(ld) < 0)
    # no floating-point noise: at this spacing the true second differences are ~1e-12; a
    # mishandled boundary term once produced jumps of ~3e-5 here
    assert np.max(np.abs(np.diff(ld, 2))) < 1e-7


def test_tiny_delta_through_log_delta():
    m = ShuffledKRR(10, 3.0, 3000)
    ld = m.log_delta([2.7, 2.8])
    assert -1e5 < ld[1] < ld[0] < math.log(1e-300)
    assert m.delta(2.8) == 0.0


def test_denormal_eps_matches_zero():
    # eps so small that e^eps rounds to 1: the region is h0 > T/2 exactly as at eps = 0
    for n in (2, 83, 5000):
        a = float(certified_log_delta(0.0, 2, 1.0, n))
        b = float(certified_log_delta(5e-324, 2, 1.0, n))
        c = float(certified_log_delta(1e-13, 2, 1.0, n))
        assert (
            b <= a + 1e-12 and abs(b - a) < 1e-9 and c <= b + 1e-12
        )  # underflows in linear scale, available as a log


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

ks = st.integers(2, 12)
eps0s = st.floats(0.2, 4.0)
ns = st.integers(1, 3000)


@settings(max_examples=15, deadline=None)
@given(k=ks, eps0=eps0s, n=st.integers(1, 800))
def test_monotone_in_eps_and_log_consistent(k, eps0, n):
    m = ShuffledKRR(k, eps0, n)
    eps = np.linspace(0.0, 1.1 * eps0, 7)
    ld = m.log_delta(eps)
    finite = ld[np.isfinite(ld)]
    assert np.all(np.diff(finite) < 0)
    assert np.all(np.isneginf(ld[eps >= eps0]))
    np.testing.assert_allclose(m.delta(eps), np.exp(ld), rtol=1e-15)


@settings(max_examples=10, deadline=None)
@given(k=ks, eps0=eps0s, n=st.integers(1, 1500), frac=st.floats(0.0, 0.9))
def test_non_increasing_in_n(k, eps0, n, frac):
    eps = frac * eps0
    a = float(certified_log_delta(eps, k, eps0, n))
    b = float(certified_log_delta(eps, k, eps0, n + 1))
    c = float(certified_log_delta(eps, k, eps0, 2 * n + 1))
    assert b <= a + 1e-8 and c <= b + 1e-8


@settings(max_examples=10, deadline=None)
@given(k=ks, eps0=eps0s, n=ns, ldelta=st.floats(-25.0, -1.0))
def test_epsilon_round_trip(k, eps0, n, ldelta):
    m = ShuffledKRR(k, eps0, n)
    delta = math.exp(ldelta)
    e = m.epsilon(delta, method="blanket")  # the blanket root is tight to 1e-6
    assert 0.0 <= e <= eps0
    if e < eps0:
        assert m.delta(e, method="blanket") <= delta
    if e > 0:
        assert m.delta(e * (1 - 1e-6), method="blanket") > delta
    else:
        assert m.delta(0.0, method="blanket") <= delta


@settings(max_examples=15, deadline=None)
@given(k=ks, eps0=eps0s, frac=st.floats(0.0, 1.2))
def test_n1_is_exact_krr(k, eps0, frac):
    eps = frac * eps0
    m = ShuffledKRR(k, eps0, 1)
    assert m.delta(eps) == pytest.approx(krr_delta(eps, k, eps0), rel=1e-9, abs=1e-300)
    assert m.delta(eps) >= krr_delta(eps, k, eps0)


def test_epsilon_zero_when_delta_large():
    m = ShuffledKRR(3, 1.0, 50)
    assert m.epsilon(min(0.999, m.delta(0.0) * 1.01)) == 0.0


def test_krr_property():
    assert ShuffledKRR(5, 2.0, 10).krr.k == 5


# --------------------------------------------------------------------------------------------
# Bad inputs
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, name", BAD_K_EPS0_N)
def test_bad_construction(kwargs, name):
    with pytest.raises(ParameterError, match=rf"^{name} "):
        ShuffledKRR(**kwargs)
    with pytest.raises(ParameterError, match=rf"^{name} "):
        certified_log_delta(0.1, **kwargs)


@pytest.mark.parametrize("eps", [-0.1, float("nan"), float("inf"), True, "x", [0.1, -1.0]])
def test_bad_eps(eps):
    m = ShuffledKRR(3, 1.0, 10)
    for f in (m.delta, m.log_delta):
        with pytest.raises(ParameterError, match=r"^eps "):
            f(eps)
    with pytest.raises(ParameterError, match=r"^eps "):
        certified_log_delta(eps, 3, 1.0, 10)


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-3, 1.5, float("nan"), float("inf"), True, "a"])
def test_bad_delta(delta):
    with pytest.raises(ParameterError, match=r"^delta "):
        ShuffledKRR(3, 1.0, 10).epsilon(delta)


def test_bad_floor():
    with pytest.raises(ParameterError, match=r"^log_delta_floor "):
        certified_log_delta(0.1, 3, 1.0, 10, log_delta_floor=1.0)


# ---- windows and the joint Chernoff bound on the dropped mass -------------------------------


def _exact_joint(k, eps0, n, eps, which, thr):
    """P_D(L > e^eps and constraint) by enumeration of every blanket outcome (h0, h1, S)."""
    E = math.exp(eps)
    total = 0.0
    for S, h0, h1, P, Q in blanket.blanket_atoms(k, eps0, n):
        T = h0 + h1
        ok = {"S>": S >= thr, "S<": S <= thr, "T>": T >= thr, "T<": T <= thr}[which]
        if ok and P > E * Q:
            total += P
    return total


@pytest.mark.parametrize("which,thr", [("S>", 14.0), ("S<", 6.0), ("T>", 9.0), ("T<", 2.0)])
@pytest.mark.parametrize("eps", [0.1, 0.6])
def test_joint_chernoff_dominates_exact_probability(which, thr, eps):
    # the Chernoff bound must exceed the exact P_D(L > e^eps, constraint) (n = 18, enumeration)
    k, eps0, n = 3, 1.5, 18
    exact = _exact_joint(k, eps0, n, eps, which, thr)
    bound = blanket.BlanketEvaluator(k, eps0, n)._log_joint_chernoff(eps, which, thr)
    assert exact > 0.0
    assert bound >= math.log(exact)
    assert bound <= 0.0


@pytest.mark.parametrize("z", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("eps", [0.05, 0.3, 0.9])
def test_narrow_windows_stay_upper_bounds(z, eps):
    # force narrow windows at n = 40: core + error + dropped-mass bound >= the exact divergence
    k, eps0, n = 4, 1.2, 40
    bl = blanket.BlanketEvaluator(k, eps0, n)
    w = bl.window(z)
    assert not w["full"]
    core, lerr, _, ldrop = bl.log_delta_at(eps, w)
    total = float(np.logaddexp(np.logaddexp(core, lerr), ldrop))
    ref = blanket.blanket_log_delta_bruteforce(eps, k, eps0, n)
    assert total >= ref
    # and the full computation is tight
    full = float(blanket.certified_log_delta(eps, k, eps0, n))
    assert ref <= full <= ref + 1e-6


def test_work_budget_keeps_a_certified_bound():
    # a tiny budget stops the windows early: still >= the tight value
    tight = float(blanket.certified_log_delta(0.3, 3, 1.0, 3000))
    capped = float(blanket.certified_log_delta(0.3, 3, 1.0, 3000, max_pairs=10.0))
    assert capped >= tight
    with pytest.raises(ValueError, match="max_pairs"):
        blanket.certified_log_delta(0.3, 3, 1.0, 3000, max_pairs=float("nan"))
