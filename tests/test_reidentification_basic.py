"""Basic setting (Su, Cheng, Wang, Sec. IV-V): exact beta_n^k vs brute force, paper values, bad inputs."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction as F

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accounting import ParameterError
from shuffle_accounting.reidentification import (
    additive_advantage,
    advantage_bounds,
    multiplicative_advantage,
    success_probability,
    total_variation,
)


def _prod(values):
    out = F(1)
    for v in values:
        out *= v
    return out


def brute_force(P, Q, n, k):
    """Enumerate every shuffled output z and sum the k largest joint probabilities over positions.

    Pr[z, target at g] = (1/n) P(z_g) prod_{j != g} Q(z_j); the Bayes-optimal k-guess adversary
    names the k positions with the largest posterior, i.e. the largest joint probability.
    """
    total = F(0)
    for z in itertools.product(range(len(P)), repeat=n):
        joint = [F(1, n) * P[z[g]] * _prod(Q[z[j]] for j in range(n) if j != g) for g in range(n)]
        total += sum(sorted(joint, reverse=True)[:k])
    return total


def _rand_dist(rnd, m):
    w = [rnd.choice([0, 0, 1, 1, 2, 3]) for _ in range(m)]
    if sum(w) == 0:
        w[rnd.randrange(m)] = 1
    s = sum(w)
    return [F(x, s) for x in w]


def _cases():
    rnd = random.Random(20240601)
    cases = [
        # ties: P = Q; P proportional to Q on a block; zeros on both sides; Q(y) = 0 < P(y)
        ([F(1, 2), F(1, 2)], [F(1, 2), F(1, 2)], 6, 1),
        ([F(1, 6), F(2, 6), F(3, 6)], [F(1, 12), F(2, 12), F(9, 12)], 5, 2),
        ([F(1, 2), F(1, 2), F(0)], [F(0), F(1, 2), F(1, 2)], 6, 1),
        ([F(1, 3), F(1, 3), F(1, 3)], [F(0), F(0), F(1)], 4, 3),
        ([F(0), F(1)], [F(1, 3), F(2, 3)], 6, 2),
    ]
    for _ in range(25):
        m = rnd.randint(2, 3)
        n = rnd.randint(1, 6 if m == 2 else 5)
        cases.append((_rand_dist(rnd, m), _rand_dist(rnd, m), n, rnd.randint(1, n)))
    return cases


@pytest.mark.parametrize("P,Q,n,k", _cases())
def test_matches_brute_force_enumeration(P, Q, n, k):
    exact = brute_force(P, Q, n, k)
    assert abs(success_probability(P, Q, n, guesses=k) - float(exact)) <= 1e-12


def test_brute_force_four_symbols_all_guesses():
    P = [F(1, 10), F(2, 10), F(3, 10), F(4, 10)]
    Q = [F(2, 10), F(4, 10), F(0), F(4, 10)]  # ratios 1/2, 1/2 (tie), inf, 1
    for k in range(1, 5):
        assert abs(success_probability(P, Q, 4, k) - float(brute_force(P, Q, 4, k))) <= 1e-12


def _mp_reference(P, Q, n, k):
    mp.mp.dps = 40
    P = [mp.mpf(x) for x in P]
    Q = [mp.mpf(x) for x in Q]
    levels: dict = {}
    f_inf = mp.mpf(0)
    for p, q in zip(P, Q):
        if q == 0:
            f_inf += p
        else:
            levels[p / q] = levels.get(p / q, 0) + q

    def phi(x):
        return mp.fsum((k - i) * mp.binomial(n, i) * (1 - x) ** i * x ** (n - i) for i in range(k))

    total, G = mp.mpf(0), mp.mpf(0)
    for t in sorted(levels):
        Gp, G = G, G + levels[t]
        total += t * (phi(G) - phi(Gp))
    return f_inf + total / n


@pytest.mark.parametrize(
    "P,Q,n,k",
    [
        (["0.5", "0.25", "0.25"], ["0.25", "0.5", "0.25"], 10**7, 1),
        (["0.5", "0.25", "0.25"], ["0.25", "0.5", "0.25"], 10**7, 4),
        (["0.1", "0.2", "0.3", "0.4"], ["0.4", "0.3", "0.2", "0.1"], 300, 120),
        (["0.999999", "0.000001"], ["0.000001", "0.999999"], 10**6, 1),
    ],
)
def test_large_n_matches_high_precision_reference(P, Q, n, k):
    ref = _mp_reference([mp.mpf(x) for x in P], [mp.mpf(x) for x in Q], n, k)
    val = success_probability([float(x) for x in P], [float(x) for x in Q], n, guesses=k)
    assert abs(val - float(ref)) <= 1e-12 * float(ref)


@pytest.mark.parametrize("n,k", [(300, 120), (10**5, 40), (10**5, 60_000)])
def test_windowed_large_k_path_matches_full_sum(monkeypatch, n, k):
    import shuffle_accounting.reidentification.basic as basic

    P, Q = [0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]
    full = success_probability(P, Q, n, k) if k <= basic.FULL_SUM_MAX_K else None
    monkeypatch.setattr(basic, "FULL_SUM_MAX_K", 8)
    windowed = success_probability(P, Q, n, k)
    if full is not None:
        assert windowed == pytest.approx(full, rel=1e-12)
    else:  # many guesses: the target is among the top k unless its ratio level is low
        assert k / n <= windowed <= 1.0
        assert windowed == pytest.approx(success_probability(P, Q, n, k - 1), rel=1e-3)


def test_corollary_1_equal_distributions():
    for n in (1, 2, 7, 10**6):
        for k in (1, min(n, 3)):
            assert success_probability([0.2, 0.3, 0.5], [0.2, 0.3, 0.5], n, k) == pytest.approx(
                k / n, rel=1e-12
            )


def test_all_guesses_always_win():
    assert success_probability([0.1, 0.6, 0.3], [0.5, 0.0, 0.5], 7, guesses=7) == pytest.approx(
        1.0, abs=1e-14
    )


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("n", [1, 2, 5, 1000])
def test_section_vb_upper_tightness(p, n):
    # Sec. V-B: P = (p, 1-p), Q = (0, 1): beta_n = p + (1-p)/n, Adv+ = (1 - 1/n) p = (1 - 1/n) TV.
    P, Q = [p, 1 - p], [0.0, 1.0]
    assert success_probability(P, Q, n) == pytest.approx(p + (1 - p) / n, rel=1e-12)
    assert additive_advantage(P, Q, n) == pytest.approx((1 - 1 / n) * total_variation(P, Q), abs=1e-15)


@pytest.mark.parametrize("p", [0.01, 0.3, 0.7])
@pytest.mark.parametrize("n", [2, 5, 50])
def test_section_vb_lower_tightness(p, n):
    # Sec. V-B: P = (0, 1), Q = (p, 1-p): Adv+ = (1 - p^n)/((1-p) n) - 1/n.
    expected = (1 - p**n) / ((1 - p) * n) - 1 / n
    assert additive_advantage([0.0, 1.0], [p, 1 - p], n) == pytest.approx(expected, rel=1e-12)


def test_theorem_3_limit_is_M():
    P, Q = [0.5, 0.3, 0.2], [0.2, 0.3, 0.5]
    M = 2.5
    vals = [multiplicative_advantage(P, Q, n) for n in (10, 100, 10**4, 10**7)]
    assert all(a <= b + 1e-12 for a, b in zip(vals, vals[1:]))  # n beta_n increases to M here
    assert vals[-1] == pytest.approx(M, rel=1e-9)
    assert all(v <= M * (1 + 1e-12) for v in vals)


probs = st.lists(st.integers(min_value=0, max_value=5), min_size=2, max_size=5).filter(lambda w: sum(w) > 0)


@settings(max_examples=60, deadline=None)
@given(wp=probs, wq=probs, n=st.integers(min_value=1, max_value=60), k=st.integers(min_value=1, max_value=60))
def test_properties(wp, wq, n, k):
    m = min(len(wp), len(wq))
    wp, wq = wp[:m], wq[:m]
    if sum(wp) == 0 or sum(wq) == 0:
        return
    P = np.array(wp, float) / sum(wp)
    Q = np.array(wq, float) / sum(wq)
    k = min(k, n)
    b = success_probability(P, Q, n, k)
    assert k / n - 1e-12 <= b <= 1 + 1e-12  # never worse than blind guessing
    if k < n:
        assert success_probability(P, Q, n, k + 1) >= b - 1e-12
    if n > 1 and k < n:
        assert success_probability(P, Q, n - 1, k) >= b - 1e-12  # more decoys never help
    bounds = advantage_bounds(P, Q, n)
    assert bounds.holds
    assert bounds.advantage == pytest.approx(success_probability(P, Q, n) - 1 / n, abs=1e-15)


def test_theorem_5_bounds_and_n1_exception():
    P, Q = [0.7, 0.3], [0.2, 0.8]
    b = advantage_bounds(P, Q, 3)
    assert b.total_variation == pytest.approx(0.5)
    assert b.lower == pytest.approx(0.5 / 3) and b.upper == pytest.approx(0.5)
    assert b.holds
    # n = 1: beta_1 = 1 so Adv+ = 0 < TV/1: the printed lower bound fails; the helper uses 0.
    one = advantage_bounds(P, Q, 1)
    assert one.advantage == 0.0 and one.lower == 0.0 and one.holds
    bad = type(one)(n=1, total_variation=0.5, lower=0.5, advantage=0.0, upper=0.5)
    assert not bad.holds


def test_multiplicative_and_additive_definitions():
    P, Q = [0.6, 0.4], [0.3, 0.7]
    b = success_probability(P, Q, 9, 2)
    assert multiplicative_advantage(P, Q, 9, 2) == pytest.approx(9 * b / 2)
    assert additive_advantage(P, Q, 9, 2) == pytest.approx(b - 2 / 9)


def test_fraction_inputs_and_renormalisation():
    assert success_probability([F(1, 3), F(2, 3)], [F(1, 2), F(1, 2)], 3) == pytest.approx(
        float(brute_force([F(1, 3), F(2, 3)], [F(1, 2), F(1, 2)], 3, 1)), abs=1e-15
    )
    # within the 1e-9 tolerance inputs are renormalised
    assert success_probability([0.5 + 4e-10, 0.5], [0.5, 0.5], 2) == pytest.approx(0.5, abs=1e-9)


BAD_DISTS = [
    ([0.5, float("nan")], "P"),
    ([0.5, float("inf")], "P"),
    ([1.5, -0.5], "P"),
    ([0.3, 0.3], "P"),
    ([True, False], "P"),
    ("ab", "P"),
    ([], "P"),
    ([[0.5, 0.5]], "P"),
    (None, "P"),
]


@pytest.mark.parametrize("bad,name", BAD_DISTS)
def test_bad_P(bad, name):
    with pytest.raises(ValueError, match=name):
        success_probability(bad, [0.5, 0.5], 3)


@pytest.mark.parametrize("bad", [[0.5, float("nan")], [-0.1, 1.1], [0.2, 0.2], [0.5, 0.5, 0.0]])
def test_bad_Q(bad):
    with pytest.raises(ParameterError, match="Q"):
        success_probability([0.5, 0.5], bad, 3)


@pytest.mark.parametrize("n", [0, -1, 2.5, float("nan"), float("inf"), True, "3", None])
def test_bad_n(n):
    with pytest.raises(ParameterError, match="n must"):
        success_probability([0.5, 0.5], [0.5, 0.5], n)


@pytest.mark.parametrize("k", [0, 4, -1, 1.5, float("nan"), False, "1"])
def test_bad_guesses(k):
    with pytest.raises(ParameterError, match="guesses"):
        success_probability([0.5, 0.5], [0.5, 0.5], 3, guesses=k)


def test_bad_inputs_other_functions():
    with pytest.raises(ParameterError, match="Q"):
        total_variation([0.5, 0.5], [1.0])
    with pytest.raises(ParameterError, match="n must"):
        advantage_bounds([0.5, 0.5], [0.5, 0.5], 0)
    with pytest.raises(ParameterError, match="guesses"):
        additive_advantage([0.5, 0.5], [0.5, 0.5], 2, guesses=3)
    with pytest.raises(ParameterError, match="P"):
        multiplicative_advantage([0.5, math.nan], [0.5, 0.5], 2)
