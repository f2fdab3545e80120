"""Paper examples (Su, Cheng, Wang, Sec. IV-C) and the continuous integrator (Theorems 1-2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import beta as beta_fn

from shuffle_accounting import ParameterError
from shuffle_accounting.reidentification import (
    example_iv1_success,
    success_probability,
    success_probability_continuous,
    zipf_beta_approximation,
    zipf_claims,
    zipf_distribution,
    zipf_uniform_success,
)


@pytest.mark.parametrize("n", [1, 2, 5, 20, 1000, 10**6])
@pytest.mark.parametrize("k", [1, 2, 3, 20])
def test_example_iv1_continuous_matches_closed_form(n, k):
    # Example IV.1: beta_n = 1.5/n - 1/(n(n+1)); beta_n^k = (3n+2)k/(2n(n+1)) - k^2/(2n(n+1)).
    if k > n:
        return
    expected = (3 * n + 2) * k / (2 * n * (n + 1)) - k * k / (2 * n * (n + 1))
    assert example_iv1_success(n, k) == pytest.approx(expected, rel=1e-14)
    if k == 1:
        assert expected == pytest.approx(1.5 / n - 1 / (n * (n + 1)), rel=1e-14)
    est = success_probability_continuous(stats.uniform(0.5, 1.0), n, k)
    assert abs(est.value - expected) <= 1e-10 * expected
    assert est.lower - 1e-12 * expected <= expected <= est.upper + 1e-12 * expected


def test_example_iv1_beta_n_k_for_n20_is_quadratic():
    # Fig. 2 of the paper: beta_20^k as a function of k is a concave quadratic reaching 1 at k = 20.
    vals = [example_iv1_success(20, k) for k in range(1, 21)]
    assert vals[-1] == pytest.approx(1.0)
    assert np.all(np.diff(vals) > 0) and np.all(np.diff(vals, 2) < 0)


def test_continuous_other_laws_and_f_inf():
    # P = Beta(2, 1) (density 2x) vs Q = U[0,1]: ratio 2x ~ U[0, 2] under Q, beta_n = 2/(n+1).
    for n in (1, 3, 50):
        est = success_probability_continuous(lambda t: min(1.0, max(0.0, t / 2)), n, upper=2.0)
        assert est.value == pytest.approx(2 / (n + 1), rel=1e-10)
    # f(+inf) = 0.3 with the ratio ~ U[0.2, 1.2] under Q (mean 0.7 = 1 - f_inf):
    # beta_n = 0.3 + (1.2 - 1/(n+1))/n.
    for n in (2, 10):
        est = success_probability_continuous(stats.uniform(0.2, 1.0), n, f_inf=0.3)
        assert est.value == pytest.approx(0.3 + (1.2 - 1 / (n + 1)) / n, rel=1e-10)


def test_continuous_agrees_with_fine_discretisation():
    # Discretise Example IV.1 on a fine grid: P_i = integral of (x + 1/2) over bin i, Q_i = 1/m.
    m = 20_000
    edges = np.linspace(0, 1, m + 1)
    P = (edges[1:] ** 2 - edges[:-1] ** 2) / 2 + 0.5 / m
    Q = np.full(m, 1 / m)
    for n, k in [(10, 1), (10, 3), (200, 2)]:
        assert success_probability(P, Q, n, k) == pytest.approx(example_iv1_success(n, k), rel=1e-4)


def test_continuous_bad_inputs():
    u = stats.uniform(0.5, 1.0)
    with pytest.raises(ParameterError, match="Property 1"):
        success_probability_continuous(stats.uniform(0.0, 1.0), 5)  # mean 0.5 != 1
    with pytest.raises(ParameterError, match="ratio"):
        success_probability_continuous(3.0, 5)
    with pytest.raises(ParameterError, match="ratio"):
        success_probability_continuous(stats.norm(), 5)  # negative support
    with pytest.raises(ParameterError, match="upper"):
        success_probability_continuous(lambda t: 1.0, 5)  # no finite M
    with pytest.raises(ParameterError, match="upper"):
        success_probability_continuous(u, 5, upper=math.nan)
    with pytest.raises(ParameterError, match="ratio"):
        success_probability_continuous(lambda t: 2.0, 5, upper=1.0)
    with pytest.raises(ParameterError, match="n must"):
        success_probability_continuous(u, 0)
    with pytest.raises(ParameterError, match="guesses"):
        success_probability_continuous(u, 3, guesses=4)
    with pytest.raises(ParameterError, match="f_inf"):
        success_probability_continuous(u, 3, f_inf=1.0)
    with pytest.raises(ParameterError, match="f_inf"):
        success_probability_continuous(u, 3, f_inf=math.nan)


def _paper_zipf_formula(m, alpha, n):
    # Example IV.2, first display: (1/n) sum_i m (m-i+1)^-alpha / S [(i/m)^n - ((i-1)/m)^n].
    i = np.arange(1, m + 1, dtype=float)
    S = np.sum(i**-alpha)
    return float(np.sum(m * (m - i + 1) ** -alpha / S * ((i / m) ** n - ((i - 1) / m) ** n)) / n)


@pytest.mark.parametrize("m,alpha,n", [(10, 0.7, 3), (1000, 0.7, 20), (500, 0.3, 100)])
def test_zipf_exact_matches_paper_sum(m, alpha, n):
    assert zipf_uniform_success(m, alpha, n) == pytest.approx(_paper_zipf_formula(m, alpha, n), rel=1e-12)
    assert zipf_uniform_success(m, alpha, n) == pytest.approx(
        success_probability(zipf_distribution(m, alpha), np.full(m, 1 / m), n), rel=1e-14
    )


@pytest.mark.parametrize("alpha,n", [(0.7, 1), (0.7, 20), (0.3, 150)])
def test_beta_approximation_matches_integral(alpha, n):
    # (1 - alpha) B(1 - alpha, n) = (1 - alpha) int_0^1 (1-t)^-alpha t^(n-1) dt.
    val = zipf_beta_approximation(alpha, n)
    assert val == pytest.approx((1 - alpha) * beta_fn(1 - alpha, n), rel=1e-12)
    integral, _ = integrate.quad(lambda t: (1 - t) ** -alpha * t ** (n - 1), 0, 1, limit=200)
    assert val == pytest.approx((1 - alpha) * integral, rel=1e-6)
    if n >= 3:
        k3 = sum((1 - alpha) * math.comb(n - 1, j - 1) * beta_fn(j - alpha, n + 1 - j) for j in (1, 2, 3))
        assert zipf_beta_approximation(alpha, n, 3) == pytest.approx(k3, rel=1e-12)


def test_beta_approximation_is_the_large_m_limit():
    approx = zipf_beta_approximation(0.7, 20)
    errs = [abs(zipf_uniform_success(m, 0.7, 20) - approx) for m in (10**3, 10**5, 10**6)]
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.01


def test_example_iv2_claims_hold_for_the_limit_only():
    # Paper (alpha = 0.7): "beta_n < 0.2 only if n >= 150"; "beta_20^3 > 0.5".
    lim = zipf_claims()
    assert lim.first_n_below == 150
    assert zipf_beta_approximation(0.7, 149) >= 0.2 > zipf_beta_approximation(0.7, 150)
    assert lim.beta_20_3 > 0.5
    # Exact, m = 1000 (papers/README errata): beta_n < 0.2 already from n = 50 ...
    c1000 = zipf_claims(1000)
    assert c1000.first_n_below == 50
    assert zipf_uniform_success(1000, 0.7, 49) >= 0.2 > zipf_uniform_success(1000, 0.7, 50)
    # ... and beta_20^3 > 0.5 needs m >= 1207.
    assert c1000.beta_20_3 < 0.5
    assert zipf_uniform_success(1206, 0.7, 20, 3) < 0.5 < zipf_uniform_success(1207, 0.7, 20, 3)


def test_examples_bad_inputs():
    with pytest.raises(ParameterError, match="alpha"):
        zipf_beta_approximation(1.0, 5)
    with pytest.raises(ParameterError, match="alpha"):
        zipf_distribution(10, -0.5)
    with pytest.raises(ParameterError, match="m must"):
        zipf_uniform_success(0, 0.5, 3)
    with pytest.raises(ParameterError, match="guesses"):
        zipf_uniform_success(10, 0.5, 3, 4)
    with pytest.raises(ParameterError, match="guesses"):
        example_iv1_success(3, 0)
    with pytest.raises(ParameterError, match="threshold"):
        zipf_claims(threshold=1.5)
    with pytest.raises(ParameterError, match="n_max"):
        zipf_claims(threshold=1e-6, n_max=100)
