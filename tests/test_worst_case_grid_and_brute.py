"""Certified worst case of shuffled binary RR (k = 2): brute force over every dataset up to n = 1e4,
the one-pass eps grid (``certified_log_delta_grid``), properties and bad inputs (issue 11)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gammaln
from scipy.stats import binom

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.shuffled_krr import ShuffledKRR
from shuffle_accounting.shuffled_krr import worst_case as W


def _brute_all(eps0: float, n: int, eps_list) -> np.ndarray:
    """``h_c(eps)`` for every dataset ``c`` and every eps: ``(len(eps_list), n)``, plain doubles.

    Independent of the module and vectorised over ``c``: log-pmfs from ``gammaln`` on windows of
    +-11 sd (dropped mass < 1e-26), the two binomials of each dataset convolved by FFT in blocks
    of datasets (absolute error ~1e-16 of the peak, so ~1e-11 relative at the delta >= 1e-4
    used with it), and the hockey-stick sum ``sum_s (P(s) - e^eps Q(s))_+`` from its definition.
    """
    p = 1.0 / (1.0 + math.exp(-eps0))
    q = 1.0 - p
    half = int(11 * math.sqrt(n * p * q)) + 10
    w = 2 * half + 1
    Es = np.exp(np.asarray(eps_list, dtype=float))
    out = np.empty((Es.size, n))
    L = 2 * w  # FFT length >= 2w - 1 (+ 1 for the target's shift)

    def window(N: np.ndarray, pr: float) -> np.ndarray:
        lo = np.maximum(0, np.floor(N * pr).astype(int) - half)
        k = lo[:, None] + np.arange(w)[None, :]
        ok = k <= N[:, None]
        kk = np.where(ok, k, 0)
        lp = gammaln(N[:, None] + 1.0) - gammaln(kk + 1.0) - gammaln(N[:, None] - kk + 1.0)
        lp = lp + kk * math.log(pr) + (N[:, None] - kk) * math.log1p(-pr)
        return np.where(ok, np.exp(lp), 0.0)

    for c0 in range(0, n, 500):
        cs = np.arange(c0, min(n, c0 + 500))
        x = window(cs, q)
        y = window(n - 1 - cs, p)
        Y = np.fft.irfft(np.fft.rfft(x, L, axis=1) * np.fft.rfft(y, L, axis=1), L, axis=1)
        Y = np.maximum(Y, 0.0)  # the (common) window offset is irrelevant: H is shift-invariant
        prev = np.concatenate((np.zeros((cs.size, 1)), Y[:, :-1]), axis=1)
        P = p * Y + q * prev
        Q = q * Y + p * prev
        for i, E in enumerate(Es):
            out[i, cs] = np.maximum(P - E * Q, 0.0).sum(axis=1)
    return out


@pytest.mark.parametrize("eps0,n,eps_list", [(1.0, 10**4, [0.01, 0.02]), (3.0, 4000, [0.03, 0.06])])
def test_brute_force_every_dataset_up_to_n_1e4(eps0, n, eps_list):
    h = _brute_all(eps0, n, eps_list)
    for i, eps in enumerate(eps_list):
        top = float(h[i].max())
        assert top > 1e-4  # the FFT's absolute error is negligible at this level
        cert = W.certify(eps0, n, eps=eps, tol=1e-10)
        # certified >= max_c delta_c >= exhibited, exhibited = brute-force max to 1e-9
        assert math.exp(cert.log_delta) >= top * (1 - 1e-12)
        assert math.exp(cert.exhibited_log_delta) <= top * (1 + 1e-12)
        assert math.exp(cert.exhibited_log_delta) == pytest.approx(top, rel=1e-9)
        assert h[i, cert.worst_c] == pytest.approx(top, rel=1e-9)
        # the certified value is within the stopping tolerance of the truth
        assert math.exp(cert.log_delta) <= top * (1 + 1e-8)
        # and the default tolerance lands within it too: in delta, or (above EPS_GAP_MIN_N users)
        # in epsilon: certified delta(eps) <= the witness's exact delta at eps / (1 + DEFAULT_TOL)
        d = W.certify(eps0, n, eps=eps)
        assert math.exp(d.exhibited_log_delta) <= top <= math.exp(d.log_delta)
        limit = math.exp(d.exhibited_log_delta) * (1 + W.DEFAULT_TOL)
        if n > W.EPS_GAP_MIN_N:
            shrunk = _brute_all(eps0, n, [eps / (1 + W.DEFAULT_TOL)])[0]
            limit = max(limit, float(shrunk[d.worst_c]) * (1 + 1e-9))
        else:
            assert top * (1 - W.DEFAULT_TOL) <= math.exp(d.exhibited_log_delta)
        assert math.exp(d.log_delta) <= limit


def _brute_direct(eps0: float, n: int, eps_list) -> np.ndarray:
    """Max over datasets of ``h_c(eps)`` by direct convolution of scipy pmfs (relative accuracy
    ~1e-13 at any delta; O(n^2) per dataset, small n only)."""
    p = 1.0 / (1.0 + math.exp(-eps0))
    q = 1.0 - p
    Es = np.exp(np.asarray(eps_list, dtype=float))
    top = np.zeros(Es.size)
    for c in range(n):
        Y = np.convolve(binom.pmf(np.arange(c + 1), c, q), binom.pmf(np.arange(n - c), n - 1 - c, p))
        Y = np.append(Y, 0.0)
        prev = np.concatenate(([0.0], Y[:-1]))
        P, Q = p * Y + q * prev, q * Y + p * prev
        top = np.maximum(top, np.maximum(P[None, :] - Es[:, None] * Q[None, :], 0.0).sum(axis=1))
    return top


def test_grid_matches_brute_force_and_per_point_certify():
    eps0, n = 2.0, 1000
    eps = np.linspace(0.0, 0.6, 41)
    g = W.certified_log_delta_grid(eps, eps0, n, tol=1e-6)
    top = _brute_direct(eps0, n, eps)
    with np.errstate(divide="ignore"):
        lt = np.log(top)
    fin = top > 1e-250
    assert np.all(g[fin] >= lt[fin] - 1e-12)  # certified >= max_c delta_c
    tight = top > 1e-30
    assert np.all(g[tight] <= lt[tight] + 1e-5)  # and tight where delta is not tiny
    for i in (0, 10, 21, 40):
        c = W.certify(eps0, n, eps=float(eps[i]), tol=1e-6)
        assert g[i] >= c.exhibited_log_delta
        assert g[i] <= c.exhibited_log_delta + math.log1p(1e-6) + 1e-9
    # monotone in eps (non-increasing), -inf from eps0 on
    assert np.all(np.diff(g) <= 1e-9)
    assert W.certified_log_delta_grid(np.array([eps0, 3.0]), eps0, n).tolist() == [-math.inf, -math.inf]


def test_grid_any_order_and_default_tolerance_against_certify():
    eps0, n = 1.0, 500
    eps = np.array([0.2, 0.08, 0.14, 0.0, 0.3])
    g = W.certified_log_delta_grid(eps, eps0, n)
    for e, v in zip(eps.tolist(), g.tolist()):
        c = W.certify(eps0, n, eps=e)
        assert c.exhibited_log_delta <= v <= c.exhibited_log_delta + math.log1p(1e-4) + 1e-9


def test_grid_budget_keeps_values_certified():
    eps0, n = 2.0, 600
    eps = np.array([0.0, 0.1, 0.3])
    loose = W.certified_log_delta_grid(eps, eps0, n, max_evals=1)
    tight = W.certified_log_delta_grid(eps, eps0, n)
    assert np.all(loose >= tight)
    h = _brute_direct(eps0, n, eps)
    assert np.all(loose >= np.log(h) - 1e-12) and np.all(tight >= np.log(h) - 1e-12)


def test_grid_bad_inputs():
    for bad in ([-0.1], [math.nan], [math.inf], [[0.1, 0.2]], []):
        with pytest.raises(ParameterError, match="eps"):
            W.certified_log_delta_grid(np.array(bad, dtype=float), 1.0, 10)
    for bad in (0.0, -1.0, math.nan, True):
        with pytest.raises(ParameterError, match="eps0"):
            W.certified_log_delta_grid(np.array([0.1]), bad, 10)
    for bad in (1, 2.5, True):
        with pytest.raises(ParameterError, match="n"):
            W.certified_log_delta_grid(np.array([0.1]), 1.0, bad)
    for bad in (0.0, 2.0, math.nan):
        with pytest.raises(ParameterError, match="tol"):
            W.certified_log_delta_grid(np.array([0.1]), 1.0, 10, tol=bad)
    with pytest.raises(ParameterError, match="max_evals"):
        W.certified_log_delta_grid(np.array([0.1]), 1.0, 10, max_evals=0)


@pytest.mark.parametrize("eps0,n", [(0.5, 600), (2.0, 3000), (4.0, 500)])
def test_certified_never_above_blanket(eps0, n):
    eps = np.array([0.02, 0.05, 0.1, 0.3])
    m = ShuffledKRR(2, eps0, n)
    bl = m.log_delta(eps, method="blanket")
    wc = np.array([W.certify(eps0, n, eps=float(e)).log_delta for e in eps])
    assert np.all(wc <= bl + 1e-12)
    assert np.all(np.diff(wc) <= 0)  # monotone in eps
    g = W.certified_log_delta_grid(eps, eps0, n)
    assert np.all(g <= bl + 1e-12)


def test_certified_epsilon_monotone_in_n_and_eps():
    # sup_c delta_c(eps) is non-increasing in n (an extra user is post-processing noise for the
    # others' view); the certified epsilon follows up to its tolerance
    for eps0, delta in ((1.0, 1e-6), (4.0, 1e-9)):
        es = [W.certify(eps0, n, delta=delta).epsilon for n in (10, 100, 1000, 10000)]
        # (certified <= exhibited (1 + tol) <= the truth (1 + tol), and the truth is monotone)
        assert all(b <= a * (1 + W.DEFAULT_TOL) for a, b in zip(es, es[1:]))
        ld = [W.certify(eps0, n, eps=0.05).log_delta for n in (100, 1000, 5000)]
        assert all(b <= a + math.log1p(W.DEFAULT_TOL) for a, b in zip(ld, ld[1:]))


# ---------------------------------------------------------------------------------------------
# the planned first cover and the shared binomial window (speed work of issue 11)
# ---------------------------------------------------------------------------------------------


def test_planned_cover_small_eps0_against_brute_force():
    eps0, n, eps = 0.05, 1000, 0.0008
    # n >= 64: the search starts from a planned partition; at eps0 = 0.05 almost every free user
    # is uniform (the top cell of B holds most of its mass, once weighted > 1 and stalling it)
    h = _brute_all(eps0, n, [eps])[0]
    top = float(h.max())
    assert top > 1e-4
    cert = W.certify(eps0, n, eps=eps)
    assert len(cert.cover) > 1 and W.verify(cert)
    assert math.exp(cert.log_delta) >= top * (1 - 1e-12)
    assert top * (1 - W.DEFAULT_TOL) <= math.exp(cert.exhibited_log_delta) <= top * (1 + 1e-12)
    assert cert.log_delta <= cert.exhibited_log_delta + math.log1p(W.DEFAULT_TOL)
    # the epsilon query certifies an eps at which every dataset's delta is at most the target
    ce = W.certify(eps0, n, delta=top)
    assert ce.epsilon_lower <= eps <= ce.epsilon * (1 + 1e-9)


def test_binomial_window_bounds_the_outside_mass():
    from shuffle_accounting._binomial import binom_window_range, log_binom_chernoff

    for N, pi, log_tol in [(1, 0.3, -40.0), (50, 0.5, -30.0), (1000, 0.01, -60.0), (10**6, 0.2, -45.0)]:
        lp, lq = math.log(pi), math.log1p(-pi)
        for chernoff in (True, False):
            lo, hi, lt = binom_window_range(N, lp, lq, log_tol, chernoff=chernoff)
            assert 0 <= lo <= N * pi <= hi <= N
            assert lt <= log_tol or (lo == 0 and hi == N)
            out = (binom.cdf(lo - 1, N, pi) if lo > 0 else 0.0) + (binom.sf(hi, N, pi) if hi < N else 0.0)
            assert out == 0.0 or math.log(out) <= lt + 1e-9
        for k in (int(N * pi * 0.5), int(N * pi + 3 * math.sqrt(N) + 2)):
            if 0 < k < N:
                exact = binom.logcdf(k, N, pi) if k < N * pi else binom.logsf(k - 1, N, pi)
                assert exact <= log_binom_chernoff(k, N, lp, lq) + 1e-9
