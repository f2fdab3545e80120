"""k = 2 worst case at eps = 0: the total-variation bound (F5) of ``shuffled_krr.worst_case``.

Exact rationals (every dataset, small n), the brute force over every dataset (n up to 4000), the
delta query at eps = 0 in one interval, the cap in ``verify`` and the eps grid.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
from test_worst_case_grid_and_brute import _brute_all

from shuffle_accounting.shuffled_krr import ShuffledKRR
from shuffle_accounting.shuffled_krr import worst_case as W


def _bin_pmf(N: int, q: Fraction) -> list[Fraction]:
    return [math.comb(N, j) * q**j * (1 - q) ** (N - j) for j in range(N + 1)]


def _conv(a: list[Fraction], b: list[Fraction]) -> list[Fraction]:
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def _tv(Y: list[Fraction], p: Fraction) -> Fraction:
    """H_1(P || Q) = sum_s (P(s) - Q(s))_+ for S = T + Y straight from the definition."""
    Yx = [Fraction(0)] + Y + [Fraction(0)]
    return sum(
        (
            max(p * Yx[s] + (1 - p) * Yx[s - 1] - ((1 - p) * Yx[s] + p * Yx[s - 1]), Fraction(0))
            for s in range(1, len(Yx))
        ),
        Fraction(0),
    )


def _I(N: int, p: Fraction) -> Fraction:
    """I(N) for N even: sum_j b(j; N/2, p)^2 (the central point mass of the balanced dataset)."""
    assert N % 2 == 0
    return sum((b * b for b in _bin_pmf(N // 2, p)), Fraction(0))


@pytest.mark.parametrize("p", [Fraction(3, 4), Fraction(2, 3), Fraction(9, 10), Fraction(11, 20)])
def test_tv_closed_form_exact_rationals(p):
    eps0 = math.log(p / (1 - p))
    a = 2 * p - 1
    for n in range(2, 14):
        N = n - 1
        Ys = [_conv(_bin_pmf(c, 1 - p), _bin_pmf(N - c, p)) for c in range(n)]
        M = [max(Y) for Y in Ys]
        # (F2) at eps = 0: h_c(0) = (p - pbar) max_s Y_c(s)
        for c in range(n):
            assert _tv(Ys[c], p) == a * M[c]
        top = max(M)
        if N % 2 == 0:  # attained by the centre, and equal to I(N)
            assert M[N // 2] == top == _I(N, p)
        else:  # Cauchy-Schwarz: top^2 <= I(N - 1) I(N + 1), and I(N + 1) <= I(N - 1)
            assert top * top <= _I(N - 1, p) * _I(N + 1, p) <= _I(N - 1, p) ** 2
        pr = W.WorstCaseProblem(eps0, n, -60.0)
        tv = pr.tv_log_bound()
        assert tv >= math.log(a * top)  # certified: above every dataset
        if N % 2 == 0:
            assert tv <= math.log(a * top) + 1e-8
        else:
            assert tv <= 0.5 * math.log(a * a * _I(N - 1, p) * _I(N + 1, p)) + 1e-8
        # every bound of the search is capped by it, at every eps
        for c1, c2 in [(0, n - 1), (0, 0), (n // 2, n - 1)]:
            for eps in (0.0, 0.5 * eps0):
                u = pr.interval(c1, c2, eps)[0]
                assert u == min(pr.interval(c1, c2, eps, cap=False)[0], tv)


@pytest.mark.parametrize(
    "eps0,n", [(0.1, 100), (2.0, 100), (0.5, 101), (1.0, 1000), (0.1, 1001), (4.0, 2000), (0.1, 4000)]
)
def test_delta_at_eps_zero_against_brute_force(eps0, n):
    h = _brute_all(eps0, n, [0.0])[0]
    top = float(h.max())
    cert = W.certify(eps0, n, eps=0.0)
    assert math.exp(cert.log_delta) >= top * (1 - 1e-12)
    assert math.exp(cert.exhibited_log_delta) <= top * (1 + 1e-12)
    assert cert.log_delta - cert.exhibited_log_delta <= math.log1p(W.DEFAULT_TOL)
    assert h[cert.worst_c] == pytest.approx(math.exp(cert.exhibited_log_delta), rel=1e-9)
    assert W.verify(cert)
    if n % 2 == 1:  # the centre attains the bound: the root interval is the whole cover
        assert len(cert.cover) == 1 and cert.worst_c == (n - 1) // 2
        assert cert.log_delta - cert.exhibited_log_delta < 1e-8
    if n >= 1000:  # n even too: one interval, the bound within 1e-5 of the brute force
        assert len(cert.cover) == 1 and math.exp(cert.log_delta) <= top * (1 + 1e-5)


@pytest.mark.parametrize("n", [10**6, 10**6 + 1])
def test_delta_query_at_eps_zero_is_one_interval_at_n_1e6(n):
    # before (F5) this query needed 600 (eps0 = 0.1) to 3900 (eps0 = 1) pieces
    for eps0 in (0.1, 1.0):
        cert = W.certify(eps0, n, eps=0.0)
        assert len(cert.cover) == 1 and cert.evaluations <= 30
        assert cert.log_delta - cert.exhibited_log_delta <= 1e-6
        assert W.verify(cert)


def test_round_trip_of_an_epsilon_zero_answer():
    m = ShuffledKRR(2, 1.0, 10**5)
    assert m.epsilon(1e-2, method="worst-case") == 0.0
    d = m.delta(0.0, method="worst-case")
    assert d <= 1e-2
    # the exhibited dataset's exact value sits just below: delta(0) is the TV worst case
    cert = W.certify(1.0, 10**5, eps=0.0)
    assert math.exp(cert.exhibited_log_delta) <= d <= math.exp(cert.exhibited_log_delta) * (1 + 1e-6)
    # and at eps so small that h(eps) is within 4e-8 of h(0): below n = 640000 the stop (2e-9)
    # is finer than the cap's gap, and every exact leaf closes the cover (from SPECTRAL_MIN_N
    # users the Fourier leaves, in runs of 4096 datasets: 0.2 s; in blocks it took 3 s)
    tiny = W.certify(1.0, 10**5, eps=1e-10)
    assert tiny.log_delta <= cert.log_delta and tiny.log_delta - tiny.exhibited_log_delta < 1e-8
    assert W.SPECTRAL_MIN_N <= 10**5 and all(iv.spectral for iv in tiny.cover)
    assert sum(iv.c_hi - iv.c_lo + 1 for iv in tiny.cover) == 10**5 and len(tiny.cover) == 25
    assert W.verify(tiny)


def test_verify_recomputes_the_cap():
    cert = W.certify(1.0, 4001, eps=0.0)
    assert W.verify(cert)
    iv = cert.cover[0]
    low = dataclasses.replace(iv, log_bound=iv.log_bound - 1e-7)
    assert not W.verify(dataclasses.replace(cert, cover=(low,), log_delta=low.log_bound))


def test_grid_point_at_eps_zero_uses_the_cap():
    eps0, n = 1.0, 4000
    grid = np.array([0.0, 1e-3, 0.02])
    g = W.certified_log_delta_grid(grid, eps0, n)
    h = _brute_all(eps0, n, list(grid))
    top = h.max(axis=1)
    assert np.all(np.exp(g) >= top * (1 - 1e-12))
    assert math.exp(g[0]) <= top[0] * (1 + 1e-5)
    assert np.all(np.exp(g) <= top * (1 + 2e-4))


def test_round_trip_in_the_flat_region_steps_by_secant(monkeypatch):
    # eps just above 0 (delta just below the TV worst case): the delta query at the epsilon
    # certificate's answer stops ~3e-5 above delta, and the doubling steps (1e-7, 2e-7, ...) took
    # 12 more delta queries to get below it; the secant steps (curves.step_up_secant) take 2
    calls: list[dict] = []
    orig = W.certify

    def counting(*args, **kwargs):
        calls.append(kwargs)
        return orig(*args, **kwargs)

    monkeypatch.setattr(W, "certify", counting)
    m = ShuffledKRR(2, 1.0, 1000)
    e = m.epsilon(1e-2, method="worst-case")
    monkeypatch.setattr(W, "certify", orig)
    cert = W.certify(1.0, 1000, delta=1e-2)
    assert cert.epsilon_lower <= cert.epsilon <= e < cert.epsilon * (1 + 1e-3)
    assert m.delta(e, method="worst-case") <= 1e-2
    assert sum("eps" in k for k in calls) <= 4
