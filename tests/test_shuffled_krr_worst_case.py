"""Certified exact worst case of shuffled binary RR (k = 2): exact rationals, brute force, product."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.shuffled_krr import ShuffledKRR, dataset_log_delta
from shuffle_accounting.shuffled_krr import worst_case as W

# ---------------------------------------------------------------------------------------------
# exact rational reference: h_c and U(c1, c2) straight from their definitions
# ---------------------------------------------------------------------------------------------


def _bin_pmf(N: int, q: Fraction) -> list[Fraction]:
    return [math.comb(N, j) * q**j * (1 - q) ** (N - j) for j in range(N + 1)]


def _conv(a: list[Fraction], b: list[Fraction]) -> list[Fraction]:
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def _hockey(Y: list[Fraction], p: Fraction, E: Fraction) -> Fraction:
    """H_E(P || Q) for S = T + Y, T ~ Bern(1 - p) under P and Bern(p) under Q, by summing (P - EQ)+."""
    pbar = 1 - p
    Yx = Y + [Fraction(0)]
    total = Fraction(0)
    for s in range(len(Yx)):
        prev = Yx[s - 1] if s > 0 else Fraction(0)
        P = p * Yx[s] + pbar * prev
        Q = pbar * Yx[s] + p * prev
        total += max(P - E * Q, Fraction(0))
    return total


def _exact_h(n: int, c: int, p: Fraction, E: Fraction) -> Fraction:
    return _hockey(_conv(_bin_pmf(c, 1 - p), _bin_pmf(n - 1 - c, p)), p, E)


def _exact_U(n: int, c1: int, c2: int, p: Fraction, E: Fraction) -> Fraction:
    """E_{B ~ Bin(m, gamma)} H_E(T + Bin(c1, pbar) + Bin(n-1-c2, p) + Bin(B, 1/2)) (docstring F3)."""
    pbar = 1 - p
    base = _conv(_bin_pmf(c1, pbar), _bin_pmf(n - 1 - c2, p))
    m = c2 - c1
    wB = _bin_pmf(m, 2 * pbar)
    return sum(wB[b] * _hockey(_conv(base, _bin_pmf(b, Fraction(1, 2))), p, E) for b in range(m + 1))


_RATIONALS = [  # (p, E) with 1 <= E < p / pbar
    (Fraction(3, 4), Fraction(3, 2)),
    (Fraction(2, 3), Fraction(1)),
    (Fraction(9, 10), Fraction(5, 2)),
]


# Every interval of every n <= 30, several rational (p, E), in exact integer arithmetic (U >= h_c,
# U([c, c]) = h_c, the mirror, the library's float bound above the exact values):
# tests/test_worst_case_rational.py.


@pytest.mark.parametrize("p,E", _RATIONALS)
def test_float_bounds_bracket_the_exact_rationals(p, E):
    n = 9
    eps0 = math.log(p / (1 - p))
    eps = math.log(E)
    for c1 in range(n):
        for c2 in range(c1, n):
            exact_u = _exact_U(n, c1, c2, p, E)
            fl = W.interval_log_bound(eps, eps0, n, c1, c2)
            assert fl >= math.log(exact_u) if exact_u > 0 else True  # rigorous upper bound
            assert fl <= math.log(float(exact_u)) + 1e-7  # and tight (every B is its own cell)
        up, lo = W.leaf_log_delta(eps, eps0, n, c1)
        ex = _exact_h(n, c1, p, E)
        if ex > 0:
            assert lo <= math.log(ex) <= up and up - lo < 1e-8
        else:
            assert lo == -math.inf


# ---------------------------------------------------------------------------------------------
# brute force over every dataset (floating point, vectorised convolutions)
# ---------------------------------------------------------------------------------------------


def _brute_h(eps0: float, n: int, eps: float) -> np.ndarray:
    """h_c(eps) for every c (plain double precision)."""
    p = 1.0 / (1.0 + math.exp(-eps0))
    E = math.exp(eps)
    out = np.empty(n)
    for c in range(n):
        Y = np.convolve(binom.pmf(np.arange(c + 1), c, 1 - p), binom.pmf(np.arange(n - c), n - 1 - c, p))
        Yx = np.append(Y, 0.0)
        prev = np.concatenate(([0.0], Yx[:-1]))
        P = p * Yx + (1 - p) * prev
        Q = (1 - p) * Yx + p * prev
        out[c] = np.sum(np.maximum(P - E * Q, 0.0))
    return out


@pytest.mark.parametrize(
    "eps0,n,eps", [(2.0, 1000, 0.32332355), (0.5, 300, 0.1), (4.0, 57, 1.0), (1.0, 2, 0.2)]
)
def test_brute_force_every_dataset_delta_query(eps0, n, eps):
    h = _brute_h(eps0, n, eps)
    cert = W.certify(eps0, n, eps=eps, tol=1e-9)
    top = float(h.max())
    assert math.exp(cert.log_delta) >= top * (1 - 1e-9)
    assert math.exp(cert.exhibited_log_delta) <= top * (1 + 1e-9)
    assert math.exp(cert.exhibited_log_delta) == pytest.approx(top, rel=1e-9)
    assert h[cert.worst_c] == pytest.approx(top, rel=1e-9)
    # the per-dataset delta (both directions) of the witness agrees with exact.dataset_log_delta
    d = math.exp(dataset_log_delta(eps, 2, eps0, list(cert.worst_others)))
    assert d == pytest.approx(top, rel=1e-9)
    assert W.verify(cert)


def test_brute_force_n_3000_default_tolerance():
    eps0, n, eps = 1.0, 3000, 0.2
    h = _brute_h(eps0, n, eps)
    cert = W.certify(eps0, n, eps=eps)
    top = float(h.max())
    assert math.exp(cert.log_delta) >= top * (1 - 1e-9)
    assert top * (1 - 1e-4) <= math.exp(cert.exhibited_log_delta) <= top * (1 + 1e-9)


def test_published_value_n1000_eps0_2():
    cert = ShuffledKRR(2, 2.0, 1000).certificate(delta=1e-6)
    assert round(cert.epsilon_lower, 8) == 0.32332355
    assert cert.worst_c in (2, 997)
    assert cert.epsilon_lower <= cert.epsilon <= cert.epsilon_lower * (1 + 1e-4)
    assert W.verify(cert)
    # the golden value is the brute-force worst dataset: no other dataset reaches delta there
    h = _brute_h(2.0, 1000, cert.epsilon)
    assert float(h.max()) <= 1e-6


def test_verify_rejects_tampered_certificates():
    cert = W.certify(1.0, 40, delta=1e-3)
    assert W.verify(cert)
    cov = list(cert.cover)
    cov[0] = dataclasses.replace(cov[0], log_bound=cov[0].log_bound - 1.0)
    assert not W.verify(dataclasses.replace(cert, cover=tuple(cov)))
    assert not W.verify(dataclasses.replace(cert, cover=cert.cover[1:]))
    assert not W.verify(dataclasses.replace(cert, exhibited_log_delta=cert.exhibited_log_delta + 1.0))
    with pytest.raises(ParameterError, match="cert"):
        W.verify("not a certificate")


def test_verify_rejects_nan_and_understated_headlines():
    """A ``nan`` bound or eps is rejected, not skipped (``u > nan`` is False: one piece
    ``[0, n - 1]`` at eps 0 with a ``nan`` bound verified, for an epsilon far below the truth), and
    the stated ``delta`` / ``epsilon`` may not be smaller than what the cover proves."""
    cert = W.certify(1.0, 200, delta=1e-3)
    assert W.verify(cert)
    e = cert.epsilon_lower
    for piece in (W.CoverInterval(0, 199, 0.0, math.nan), W.CoverInterval(0, 199, math.nan, 0.0)):
        assert not W.verify(dataclasses.replace(cert, eps=e, epsilon=e, cover=(piece,)))
    nan_bounds = tuple(dataclasses.replace(iv, log_bound=math.nan) for iv in cert.cover)
    assert not W.verify(dataclasses.replace(cert, cover=nan_bounds))
    assert not W.verify(dataclasses.replace(cert, epsilon=0.5 * cert.eps))
    assert not W.verify(dataclasses.replace(cert, log_delta=cert.log_delta - 1.0))
    assert not W.verify(dataclasses.replace(cert, delta=math.nan))
    dq = W.certify(1.0, 200, eps=0.2)
    assert W.verify(dq)
    assert not W.verify(dataclasses.replace(dq, delta=0.5 * dq.delta))
    assert not W.verify(dataclasses.replace(dq, epsilon=0.1))
    assert not W.verify(dataclasses.replace(dq, log_delta=math.nan))


# ---------------------------------------------------------------------------------------------
# the product: method=, certificate(), properties
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps0,n", [(2.0, 400), (0.5, 200), (4.0, 30), (1.0, 2)])
def test_auto_is_never_above_blanket_and_tighter(eps0, n):
    m = ShuffledKRR(2, eps0, n)
    e_auto, e_bl = m.epsilon(1e-6), m.epsilon(1e-6, method="blanket")
    assert e_auto <= e_bl
    assert m.epsilon_lower(1e-6) <= e_auto
    eps = np.array([0.0, 0.05, 0.2, 0.5])
    la, lb = m.log_delta(eps), m.log_delta(eps, method="blanket")
    assert np.all(la <= lb)
    assert np.all(np.diff(la) <= 0)  # monotone in eps


def test_tighter_than_blanket_at_the_published_point():
    m = ShuffledKRR(2, 2.0, 1000)
    assert m.epsilon(1e-6) < 0.3234 < 0.397 < m.epsilon(1e-6, method="blanket")
    assert m.gap(1e-6) <= 1 + 1e-4
    wd = m.worst_dataset(0.32)
    assert wd.others in ((2, 997), (997, 2), (999, 0), (0, 999)) and wd.delta > 1e-6


@pytest.mark.parametrize("eps0,n,frac", [(0.5, 300, 0.999), (1.0, 1000, 0.99), (0.05, 2000, 0.999)])
def test_epsilon_gap_in_the_flat_band_just_above_eps_0(eps0, n, frac):
    """Just below delta(0) the curve is flat (a relative change of 1e-3 in eps moves delta by
    about 1e-5), so a delta query that stops at a 5e-5 gap in delta would be 0.4-5 % loose in
    epsilon, and the round trip of ``epsilon`` carried that into its answer (measured before the
    fix: gaps of 3.9e-2 and 5.9e-3 here). The delta query now stops at the gap in epsilon there
    (issue 11's target: certified / exhibited - 1 <= 1e-4), and the round trip still holds.
    The third case failed with the stop floored at 2e-7 in delta (gap 2.6e-4): at eps ~ 1e-7 a
    gap of 1e-4 in epsilon is ~1e-8 in delta; the floor is now the leaves' bracket (~4e-10)."""
    m = ShuffledKRR(2, eps0, n)
    d = frac * m.delta(0.0)
    e = m.epsilon(d)
    assert m.delta(e) <= d
    assert 0 < m.epsilon_lower(d) <= e <= m.epsilon_lower(d) * (1 + 1e-4)


def test_monotone_in_n():
    eps = [ShuffledKRR(2, 1.0, n).epsilon(1e-5) for n in (50, 100, 200, 400)]
    assert all(b <= a * (1 + 1e-4) for a, b in zip(eps, eps[1:]))


def test_worst_case_method_and_certificate_bad_inputs():
    with pytest.raises(ParameterError, match="method"):
        ShuffledKRR(2, 1.0, 10).delta(0.1, method="exact")
    with pytest.raises(ParameterError, match="method"):
        ShuffledKRR(4, 1.0, 1).epsilon(1e-3, method="worst-case")
    with pytest.raises(ParameterError, match="method"):
        ShuffledKRR(4, 1.0, 1).certificate(delta=1e-3)
    with pytest.raises(ParameterError, match="method"):
        ShuffledKRR(2, 1.0, 1).certificate(delta=1e-3)
    with pytest.raises(ParameterError, match="exactly one"):
        ShuffledKRR(2, 1.0, 10).certificate()
    with pytest.raises(ParameterError, match="exactly one"):
        W.certify(1.0, 10, eps=0.1, delta=1e-3)
    for bad in (0.0, -1.0, math.nan, math.inf, True, "1"):
        with pytest.raises(ParameterError, match="eps0"):
            W.certify(bad, 10, eps=0.1)
    for bad in (1, 0, 2.5, True, math.nan):
        with pytest.raises(ParameterError, match="n"):
            W.certify(1.0, bad, eps=0.1)
    for bad in (0.0, 1.0, math.nan, -1e-3):
        with pytest.raises(ParameterError, match="delta"):
            W.certify(1.0, 10, delta=bad)
    for bad in (-0.1, math.nan, math.inf):
        with pytest.raises(ParameterError, match="eps"):
            W.certify(1.0, 10, eps=bad)
    for bad in (0.0, 2.0, math.nan):
        with pytest.raises(ParameterError, match="tol"):
            W.certify(1.0, 10, eps=0.1, tol=bad)
    with pytest.raises(ParameterError, match="c_hi"):
        W.interval_log_bound(0.1, 1.0, 10, 5, 4)
    with pytest.raises(ParameterError, match="c"):
        W.leaf_log_delta(0.1, 1.0, 10, 10)


def test_work_budget_is_reported_not_silently_wrong(monkeypatch):
    with pytest.raises(W.WorkBudgetExceeded):
        W.certify(0.5, 10**5, delta=1e-6, max_evals=3)
    # above AUTO_WORST_CASE_MAX_N auto uses the (certified) blanket bound only
    from shuffle_accounting.shuffled_krr.mechanism import AUTO_WORST_CASE_MAX_N

    m = ShuffledKRR(2, 4.0, AUTO_WORST_CASE_MAX_N + 1)
    assert m.auto_method == "blanket"
    assert m.epsilon(1e-6) == m.epsilon(1e-6, method="blanket")
    # over budget, auto returns the smaller of the blanket and the partial certificate
    # (tests/test_worst_case_partial.py): with two evaluations that is the blanket
    m = ShuffledKRR(2, 0.5, 2000)
    real = W.certify
    monkeypatch.setattr(W, "certify", lambda *a, **k: real(*a, **{**k, "max_evals": 2}))
    assert m.epsilon(1e-6) == m.epsilon(1e-6, method="blanket")


def test_interval_bounds_with_cells_dominate_brute_force():
    # m > 32 free users: B is split into cells (left-endpoint sums, docstring F4)
    eps0, n = 1.0, 300
    for eps in (0.05, 0.3):
        h = _brute_h(eps0, n, eps)
        for c1, c2 in [(0, 299), (0, 99), (50, 250), (200, 299), (10, 60), (123, 124)]:
            u = W.interval_log_bound(eps, eps0, n, c1, c2)
            assert u >= math.log(h[c1 : c2 + 1].max())


@pytest.mark.parametrize("eps0,n,c", [(1.0, 400, 0), (1.0, 400, 150), (2.0, 1000, 997), (0.3, 2000, 1000)])
def test_threshold_localised_evaluation_matches_full_convolution(eps0, n, c):
    # the O(window) bracket evaluation (used for large windows) against the full convolution
    pr = W.WorstCaseProblem(eps0, n, -40.0)
    x = W.binomial_dist(c, pr.log_pbar, pr.log_p, pr.log_tol)
    y = W.binomial_dist(n - 1 - c, pr.log_p, pr.log_pbar, pr.log_tol)
    for eps in (0.0, 0.1, 0.3, 0.6):
        up_p, lo_p = W.hockey_pair(x, y, eps, pr.p, eps0)
        up_c, lo_c = W.hockey_of_dist(W.convolve_dists(x, y), eps, pr.p, eps0)
        assert lo_p <= up_c and lo_c <= up_p
        if up_c > -700:
            assert up_p == pytest.approx(up_c, abs=1e-7) and lo_p == pytest.approx(lo_c, abs=1e-7)


def test_report_section_uses_the_certificate_for_k2():
    from shuffle_accounting.presentation.report import Deployment
    from shuffle_accounting.presentation.shuffled_krr_report import report_section

    rows = report_section(Deployment(k=2, eps0=2.0, n=1000, delta=1e-6)).rows
    # upper rounded up: within the default stopping tolerance of the witness (and 6 digits)
    assert 0.32332355 <= float(rows[0][1]) <= 0.32332355 * (1 + W.DEFAULT_TOL) + 1e-5
    assert "branch-and-bound" in rows[0][2]
    assert rows[1][1] == "0.323323" and "witness" in rows[1][2]  # 0.32332355 rounded down


def test_extreme_eps0_worst_case_and_the_standing_invariant():
    # eps0 = 300: p rounds to 1; the worst case is computed in logs. Every dataset reveals the
    # target's bit, so epsilon(1e-6) is eps0 - O(1e-6).
    m = ShuffledKRR(2, 300.0, 50)
    cert = m.certificate(delta=1e-6)
    assert cert.epsilon_lower > 299.99 and W.verify(cert)
    assert m.epsilon(1e-6, method="worst-case") >= cert.epsilon_lower
    assert W.certify(1e-6, 100, delta=1e-3).epsilon == 0.0  # TV <= tanh(eps0/2) < delta
    # a certified value below an exhibited one is refused, never returned
    from shuffle_accounting.shuffled_krr.mechanism import no_certified_below_exhibited

    with pytest.raises(RuntimeError, match="internal error"):
        no_certified_below_exhibited(31.5, 299.9, "epsilon(1e-06)")
    no_certified_below_exhibited(0.33, 0.32, "epsilon(1e-06)")


def test_auto_policy_keeps_slow_worst_cases_out_of_the_default():
    from shuffle_accounting.shuffled_krr import mechanism as M

    assert M.auto_uses_worst_case(2, M.AUTO_WORST_CASE_SMALL_EPS0, M.AUTO_WORST_CASE_MAX_N)
    assert not M.auto_uses_worst_case(2, M.AUTO_WORST_CASE_SMALL_EPS0, M.AUTO_WORST_CASE_MAX_N + 1)
    small = M.AUTO_WORST_CASE_SMALL_EPS0 / 2
    assert M.auto_uses_worst_case(2, small, M.AUTO_WORST_CASE_SMALL_EPS0_MAX_N)
    assert not M.auto_uses_worst_case(2, small, M.AUTO_WORST_CASE_SMALL_EPS0_MAX_N + 1)
    assert M.auto_uses_worst_case(3, 1.0, M.AUTO_WORST_CASE_K_MAX_N)
    assert not M.auto_uses_worst_case(3, 1.0, M.AUTO_WORST_CASE_K_MAX_N + 1)
    assert M.auto_uses_worst_case(4, 1.0, M.AUTO_WORST_CASE_MULTI_MAX_N)
    assert not M.auto_uses_worst_case(4, 1.0, M.AUTO_WORST_CASE_MULTI_MAX_N + 1)
    assert not M.auto_uses_worst_case(2, 1.0, 1)
    assert ShuffledKRR(2, small, 500_000).auto_method == "blanket"
    assert ShuffledKRR(2, small, 50_000).auto_method == "worst-case"
    assert ShuffledKRR(2, 4.0, 1_000_000).auto_method == "worst-case"


def test_auto_keeps_the_blanket_in_the_far_tail():
    """Below AUTO_WORST_CASE_MIN_LOG_DELTA the auto delta query returns the blanket (certified)
    instead of running a branch and bound that grows there (minutes at n = 1e5, eps = 1)."""
    from shuffle_accounting.shuffled_krr.mechanism import AUTO_WORST_CASE_MIN_LOG_DELTA

    m = ShuffledKRR(2, 2.0, 100_000)
    far = m.log_delta(1.0, method="blanket")
    assert far < AUTO_WORST_CASE_MIN_LOG_DELTA
    assert m.log_delta(1.0) == far
    near = 0.05  # delta ~ e^-40: the worst case is used and is tighter
    assert m.log_delta(near) < m.log_delta(near, method="blanket")


@pytest.mark.parametrize("eps0,n,c", [(1.0, 40, 0), (2.0, 60, 17), (0.5, 30, 29)])
def test_hockey_of_dist_many_brackets_the_exact_value_on_a_grid(eps0, n, c):
    # the vectorised (F2) bracket at many eps at once against the exact hockey-stick divergence
    # of the same law (mpmath, 60 digits, from the float p and eps exactly as given)
    import mpmath

    mpmath.mp.dps = 60
    pr = W.WorstCaseProblem(eps0, n, -80.0)
    y = W.convolve_dists(
        W.binomial_dist(c, pr.log_pbar, pr.log_p, pr.log_tol),
        W.binomial_dist(n - 1 - c, pr.log_p, pr.log_pbar, pr.log_tol),
    )
    eps = np.array([0.0, 0.01, 0.1, 0.3, 0.6, eps0 * 0.9, eps0, eps0 + 1.0])
    got = W.hockey_of_dist_many(y, eps, pr.p, eps0)
    p = mpmath.mpf(pr.p)
    pb = 1 - p

    def pmf(N, q):
        return [mpmath.binomial(N, j) * q**j * (1 - q) ** (N - j) for j in range(N + 1)]

    a, b = pmf(c, pb), pmf(n - 1 - c, p)
    Y = [
        mpmath.fsum(a[i] * b[s - i] for i in range(max(0, s - len(b) + 1), min(s, len(a) - 1) + 1))
        for s in range(n)
    ]
    for j, e in enumerate(eps):
        E = mpmath.exp(mpmath.mpf(float(e)))
        Yx = Y + [mpmath.mpf(0)]
        h = mpmath.fsum(
            max(p * Yx[s] + pb * (Yx[s - 1] if s else 0) - E * (pb * Yx[s] + p * (Yx[s - 1] if s else 0)), 0)
            for s in range(len(Yx))
        )
        if e >= eps0:
            assert got[0, j] == got[1, j] == -math.inf
            continue
        assert got[1, j] <= float(mpmath.log(h)) <= got[0, j]
        assert got[0, j] - got[1, j] < 1e-6
        assert tuple(got[:, j]) == W.hockey_of_dist(y, float(e), pr.p, eps0)


def test_delta_query_where_no_lower_value_resolves_stops_at_the_best_upper():
    """Within ~1e-13 of eps0 the coefficient a = -p expm1(eps - eps0) is a few units of rounding,
    so no leaf's lower value resolves (-inf) and no gap can be measured: the search stops where
    every bound is within tol of the seeds' best upper value (it used to run its 20000
    evaluations, 32 s at n = 1e6), and that bound is the worst dataset's (all others at 0)."""
    eps0, n = 10.0, 10**6
    eps = float(np.nextafter(eps0, 0.0))
    cert = W.certify(eps0, n, eps=eps)
    assert cert.evaluations < 500 and cert.exhibited_log_delta == -math.inf
    up, _ = W.leaf_log_delta(eps, eps0, n, n - 1, log_level=cert.log_level)
    assert up <= cert.log_delta <= up + math.log1p(W.DEFAULT_TOL)
    assert W.verify(cert)
