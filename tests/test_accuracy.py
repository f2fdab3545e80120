"""Accuracy of shuffle+INV frequencies: exact variance against brute force, interval coverage, bad input."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.accuracy import (
    gaussian_frequency_accuracy,
    krr_frequency_variance,
    shuffle_frequency_accuracy,
)
from shuffle_accounting.randomizers import KRR


def _exact_pmf_of_count(n_j: int, n: int, p: Fraction, pbar: Fraction) -> list[Fraction]:
    """Exact pmf of c_j = Bin(n_j, p) + Bin(n - n_j, pbar) by convolution of Bernoulli terms."""
    pmf = [Fraction(1)]
    for q in [p] * n_j + [pbar] * (n - n_j):
        new = [Fraction(0)] * (len(pmf) + 1)
        for c, m in enumerate(pmf):
            new[c] += m * (1 - q)
            new[c + 1] += m * q
        pmf = new
    return pmf


@pytest.mark.parametrize("k,n", [(2, 5), (3, 6), (4, 7)])
def test_variance_matches_brute_force(k, n):
    # eps0 = log 3: p = 3 / (k + 2), pbar = 1 / (k + 2) exactly.
    p, pbar = Fraction(3, k + 2), Fraction(1, k + 2)
    for n_j in range(n + 1):
        pmf = _exact_pmf_of_count(n_j, n, p, pbar)
        est = [(Fraction(c, n) - pbar) / (p - pbar) for c in range(n + 1)]
        mean = sum(m * e for m, e in zip(pmf, est))
        var = sum(m * (e - mean) ** 2 for m, e in zip(pmf, est))
        assert mean == Fraction(n_j, n)  # unbiased
        got = krr_frequency_variance(k, math.log(3), n, frequency=n_j / n)
        assert got == pytest.approx(float(var), rel=1e-12)
        assert krr_frequency_variance(k, math.log(3), n) >= got * (1 - 1e-12)  # worst case dominates


@pytest.mark.parametrize("k,eps0,n,f", [(2, 1.0, 40, 0.5), (3, 0.5, 60, 0.0), (5, 2.0, 30, 1.0)])
def test_bernstein_interval_covers(k, eps0, n, f):
    r = KRR(k, eps0)
    n_j = round(f * n)
    p, pbar = Fraction(r.p), Fraction(r.pbar)
    pmf = _exact_pmf_of_count(n_j, n, p, pbar)
    for conf in (0.5, 0.9, 0.99):
        a = shuffle_frequency_accuracy(k, eps0, n, frequency=n_j / n, confidence=conf)
        half_count = a.guaranteed_half_width * n * (r.p - r.pbar)
        center = n_j * r.p + (n - n_j) * r.pbar
        miss = sum(float(m) for c, m in enumerate(pmf) if abs(c - center) >= half_count)
        assert miss <= 1 - conf
        assert a.normal_half_width < a.guaranteed_half_width


def test_gaussian_accuracy():
    g = gaussian_frequency_accuracy(1.0, 1e-6, 1000, sigma=4.0, confidence=0.95)
    assert g.std == 0.004 and g.normal_half_width == pytest.approx(1.959963984540054 * 0.004)
    pytest.importorskip("diffprivlib")
    from shuffle_accounting.runtime.baseline import gaussian_sigma

    assert gaussian_frequency_accuracy(1.0, 1e-6, 1000).std == gaussian_sigma(1.0, 1e-6) / 1000


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: krr_frequency_variance(1, 1.0, 10), "k"),
        (lambda: krr_frequency_variance(3, float("nan"), 10), "eps0"),
        (lambda: krr_frequency_variance(3, 1.0, 0), "n"),
        (lambda: krr_frequency_variance(3, 1.0, True), "n"),
        (lambda: krr_frequency_variance(3, 1.0, 10, frequency=1.5), "frequency"),
        (lambda: shuffle_frequency_accuracy(3, 1.0, 10, confidence=1.0), "confidence"),
        (lambda: shuffle_frequency_accuracy(3, 1.0, 10, confidence=float("nan")), "confidence"),
        (lambda: gaussian_frequency_accuracy(0.0, 1e-6, 10, sigma=1.0), "epsilon"),
        (lambda: gaussian_frequency_accuracy(1.0, 0.0, 10, sigma=1.0), "delta"),
        (lambda: gaussian_frequency_accuracy(1.0, 1e-6, 10, sigma=-1.0), "sigma"),
        (lambda: gaussian_frequency_accuracy(1.0, 1e-6, 10, sigma=float("inf")), "sigma"),
    ],
)
def test_bad_inputs_name_the_parameter(call, name):
    with pytest.raises(ParameterError, match=rf"^{name} must"):
        call()
