"""Generic QIF core and the paper's explicit channels (Jurado, Gonze, Alvim, Palamidessi 2023)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accounting import ParameterError
from shuffle_accounting.qif import (
    additive_leakage,
    all_but_one_prior,
    as_channel,
    cascade,
    datasets,
    equivalent,
    histograms,
    identity_gain,
    krr_channel,
    multiplicative_leakage,
    posterior_bayes_vulnerability,
    posterior_distributions,
    posterior_g_vulnerability,
    prior_bayes_vulnerability,
    prior_g_vulnerability,
    reduce_channel,
    reduced_krr_channel,
    reduced_shuffle_channel,
    refines,
    shuffle_channel,
    single_target_gain,
    uniform_prior,
)

F = Fraction


# ----------------------------------------------------------------------------- generic core


def test_bayes_vulnerability_of_binary_symmetric_channel():
    c = [[0.9, 0.1], [0.1, 0.9]]
    assert prior_bayes_vulnerability([0.5, 0.5]) == 0.5
    assert posterior_bayes_vulnerability([0.5, 0.5], c) == pytest.approx(0.9)
    assert additive_leakage([0.5, 0.5], c) == pytest.approx(0.4)
    assert multiplicative_leakage([0.5, 0.5], c) == pytest.approx(1.8)


def test_g_vulnerability_with_identity_gain_is_bayes():
    rng = np.random.default_rng(1)  # test data only
    c = rng.random((4, 5))
    c /= c.sum(axis=1, keepdims=True)
    pi = rng.random(4)
    pi /= pi.sum()
    assert posterior_g_vulnerability(pi, c, identity_gain(4)) == pytest.approx(
        posterior_bayes_vulnerability(pi, c)
    )
    assert prior_g_vulnerability(pi, identity_gain(4)) == pytest.approx(prior_bayes_vulnerability(pi))


def test_exact_fraction_arithmetic_end_to_end():
    c = [[F(3, 4), F(1, 4)], [F(1, 4), F(3, 4)]]
    d = [[F(2, 3), F(1, 3)], [F(1, 3), F(2, 3)]]
    cd = cascade(c, d)
    assert cd[0, 0] == F(7, 12)
    v = posterior_bayes_vulnerability([F(1, 2), F(1, 2)], cd)
    assert v == F(7, 12) and isinstance(v, Fraction)
    g = posterior_g_vulnerability([F(1, 2), F(1, 2)], cd, identity_gain(2))
    assert g == F(7, 12) and isinstance(g, Fraction)
    assert multiplicative_leakage([F(1, 2), F(1, 2)], cd) == F(7, 6)
    assert additive_leakage([F(1, 2), F(1, 2)], cd, identity_gain(2)) == F(1, 12)


def test_posterior_distributions_hyper():
    outer, inners = posterior_distributions([0.5, 0.5], [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]])
    assert outer.tolist() == [0.75, 0.25]  # zero-probability output dropped
    assert inners[:, 0].tolist() == pytest.approx([2 / 3, 1 / 3])


def test_reduce_merges_proportional_columns_and_drops_zero():
    c = np.array([[0.2, 0.0, 0.4, 0.4], [0.1, 0.0, 0.2, 0.7]])
    r = reduce_channel(c)
    assert r.shape == (2, 2)
    assert np.allclose(r.sum(axis=1), 1.0)
    # merged column is 3 x the first
    assert any(np.allclose(r[:, j], [0.6, 0.3]) for j in range(2))


def test_equivalence_and_non_equivalence():
    c = [[0.5, 0.5], [0.2, 0.8]]
    split = [[0.25, 0.25, 0.5], [0.1, 0.1, 0.8]]
    assert equivalent(c, split)
    assert not equivalent(c, [[0.5, 0.5], [0.3, 0.7]])
    with pytest.raises(ParameterError, match="second"):
        equivalent(c, [[1.0]])


def test_refinement_data_processing():
    c = [[0.9, 0.1], [0.2, 0.8]]
    d = [[0.7, 0.3], [0.4, 0.6]]
    cd = cascade(c, d)
    assert refines(c, cd)
    assert not refines(cd, c)
    assert refines(c, c)
    # every channel refines to the constant channel
    assert refines(c, [[1.0], [1.0]])


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_property_post_processing_never_increases_vulnerability(seed):
    rng = np.random.default_rng(seed)  # test data only
    c = rng.random((3, 4)) + 1e-3
    c /= c.sum(axis=1, keepdims=True)
    d = rng.random((4, 3)) + 1e-3
    d /= d.sum(axis=1, keepdims=True)
    pi = rng.random(3) + 1e-3
    pi /= pi.sum()
    g = rng.random((2, 3))
    assert posterior_g_vulnerability(pi, cascade(c, d), g) <= posterior_g_vulnerability(pi, c, g) + 1e-12
    assert prior_g_vulnerability(pi, g) <= posterior_g_vulnerability(pi, c, g) + 1e-12


@pytest.mark.parametrize(
    "bad, match",
    [
        ([[0.5, 0.6]], "row-stochastic"),
        ([[float("nan"), 1.0]], "channel"),
        ([[-0.1, 1.1]], "channel"),
        ([0.5, 0.5], "2-D"),
        ([[True, False]], "channel"),
        ("abc", "channel"),
        ([[F(1, 2), F(1, 3)]], "exactly"),
        ([[F(-1, 2), F(3, 2)]], "non-negative"),
    ],
)
def test_bad_channels_rejected(bad, match):
    with pytest.raises(ValueError, match=match):
        as_channel(bad)


def test_bad_priors_gains_and_shapes():
    c = [[0.5, 0.5], [0.5, 0.5]]
    with pytest.raises(ParameterError, match="prior"):
        posterior_bayes_vulnerability([0.5, 0.6], c)
    with pytest.raises(ParameterError, match="prior must have length 2"):
        posterior_bayes_vulnerability([1.0], c)
    with pytest.raises(ParameterError, match="gain"):
        posterior_g_vulnerability([0.5, 0.5], c, [[1.0, float("inf")]])
    with pytest.raises(ParameterError, match="gain must have 2 columns"):
        posterior_g_vulnerability([0.5, 0.5], c, [[1.0]])
    with pytest.raises(ParameterError, match="second must have as many rows"):
        cascade(c, [[1.0]])
    with pytest.raises(ParameterError, match="multiplicative"):
        multiplicative_leakage([0.5, 0.5], c, [[0.0, 0.0]])
    with pytest.raises(ParameterError, match="rtol"):
        reduce_channel(c, rtol=float("nan"))
    with pytest.raises(ParameterError, match="size"):
        uniform_prior(0)


# ----------------------------------------------------------------------------- paper channels


def test_table_i_and_ii_running_example():
    # Example 6 / Table I(a): n = 3, k = 2; row aab, column aaa is p^2 (1-p)
    p = F(3, 4)
    n_ch = krr_channel(2, p, 3)
    ds = datasets(k=2, n=3)
    assert n_ch[ds.index((0, 0, 1)), ds.index((0, 0, 0))] == p * p * (1 - p)
    # Table I(b): S[aab, aba] = 1/3
    s = shuffle_channel(k=2, n=3, exact=True)
    assert s[ds.index((0, 0, 1)), ds.index((0, 1, 0))] == F(1, 3)
    # Table II: NS[aab, aab] = (p^3 + 2 p pbar^2) / 3
    ns = cascade(n_ch, s)
    assert ns[ds.index((0, 0, 1)), ds.index((0, 0, 1))] == (p**3 + 2 * p * (1 - p) ** 2) / 3


def test_reduced_krr_table_iv_rows_sum_to_one():
    # Table IV of the paper prints the middle entries divided by 3, which makes the rows sum to
    # less than 1; Def. 23 gives p^3 + 2 p pbar^2 (as in Table V).
    p = F(3, 4)
    nr = reduced_krr_channel(2, p, 3)
    assert histograms(k=2, n=3) == [(3, 0), (2, 1), (1, 2), (0, 3)]
    assert nr[1, 1] == p**3 + 2 * p * (1 - p) ** 2
    assert all(sum(row) == 1 for row in nr)


@pytest.mark.parametrize("n,k", [(1, 2), (2, 2), (3, 2), (2, 3), (3, 3), (2, 4)])
def test_commutativity_props_11_12_26_28_exact(n, k):
    p = F(2, 3) if k == 2 else F(1, 2)
    big_n = krr_channel(k, p, n)
    s = shuffle_channel(k=k, n=n, exact=True)
    sr = reduced_shuffle_channel(k=k, n=n, exact=True)
    nr = reduced_krr_channel(k, p, n)
    assert (cascade(big_n, s) == cascade(s, big_n)).all()  # Prop. 11 (even equal)
    assert equivalent(cascade(big_n, s), cascade(big_n, sr))  # Prop. 12
    assert (cascade(big_n, sr) == cascade(sr, nr)).all()  # Prop. 26
    assert equivalent(cascade(s, big_n), cascade(sr, nr))  # Prop. 28
    assert equivalent(s, sr)  # Prop. 9


def test_noise_and_shuffle_are_not_equivalent_but_refine():
    n, k, p = 3, 2, F(3, 4)
    big_n = krr_channel(k, p, n)
    s = shuffle_channel(k=k, n=n, exact=True)
    ns = cascade(big_n, s)
    assert not equivalent(big_n, ns)
    assert refines(big_n, ns) and refines(s, ns)
    assert not refines(ns, big_n)


def test_single_target_gain_and_abo_prior():
    g = single_target_gain(k=3, n=2, target=1)
    assert g.shape == (3, 9) and g.sum() == 9
    pi = all_but_one_prior(k=2, n=3, known=[1, 0], exact=True)
    assert sum(pi) == 1 and pi[datasets(k=2, n=3).index((1, 1, 0))] == F(1, 2)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: krr_channel(4, 0.5, 7), "k\\^n"),
        (lambda: krr_channel(2, 0.4, 2), "p must"),
        (lambda: krr_channel(1, 0.5, 2), "k must"),
        (lambda: krr_channel(2, 0.5, 0), "n must"),
        (lambda: krr_channel(2, float("nan"), 2), "p must"),
        (lambda: krr_channel(2, 0.7, 2.5), "n must"),
        (lambda: krr_channel(2, 0.7, True), "n must"),
        (lambda: single_target_gain(k=2, n=2, target=2), "target"),
        (lambda: all_but_one_prior(k=2, n=3, known=[0]), "length"),
        (lambda: all_but_one_prior(k=2, n=3, known=[0, 2]), "known"),
        (lambda: all_but_one_prior(k=2, n=3, known=5), "known"),
        (lambda: krr_channel(3, F(1, 4), 2), "p must"),
    ],
)
def test_bad_channel_constructor_inputs(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_p_at_one_over_k_accepted():
    c = krr_channel(3, 1 / 3, 1)
    assert np.allclose(c, 1 / 3)
    assert math.isclose(posterior_bayes_vulnerability(uniform_prior(3), c), 1 / 3)
