"""Mallows samplers, normalisers and moments (exact enumeration of S_n, n <= 6)."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from scipy.stats import chisquare

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.dsigma import (
    decode_insertion_code,
    hamming_distance,
    hamming_distance_pmf,
    hamming_log_normalizer,
    kendall_distance,
    kendall_distance_mean,
    kendall_distance_variance,
    kendall_log_normalizer,
    mallows_log_pmf,
    sample_mallows,
)
from shuffle_accounting.dsigma import mallows as M

# Seeds and Generators are used on purpose here (simulation mode): expect the warning.
pytestmark = pytest.mark.filterwarnings("ignore::shuffle_accounting._rng.PrivacyLeakWarning")


def _inv(p):
    return sum(1 for i in range(len(p)) for j in range(i + 1, len(p)) if p[i] > p[j])


def _ham(p):
    return sum(1 for i, v in enumerate(p) if v != i)


def _exact_pmf(n, theta, dist):
    perms = list(itertools.permutations(range(n)))
    d = np.array([_inv(p) if dist == "kendall" else _ham(p) for p in perms], dtype=float)
    w = np.exp(-theta * d)
    return perms, w / w.sum()


def _counts(samples, perms):
    index = {p: i for i, p in enumerate(perms)}
    c = np.zeros(len(perms))
    for s in samples:
        c[index[tuple(int(v) for v in s)]] += 1
    return c


@pytest.mark.parametrize(
    "n,theta,dist,draws",
    [
        (4, 0.7, "kendall", 6000),
        (5, 0.3, "kendall", 8000),
        (6, 1.2, "kendall", 6000),
        (4, 0.5, "hamming", 6000),
        (5, 1.0, "hamming", 8000),
        (6, 0.8, "hamming", 6000),
    ],
)
def test_sampler_matches_exact_pmf_chi_square(n, theta, dist, draws):
    perms, pmf = _exact_pmf(n, theta, dist)
    samples = sample_mallows(n, theta, distance=dist, size=draws, rng=20221)
    counts = _counts(samples, perms)
    zero = pmf == 0  # e.g. Hamming distance 1 is impossible
    assert counts[zero].sum() == 0
    pmf, counts = pmf[~zero], counts[~zero]
    assert chisquare(*_pooled(counts, pmf * draws)).pvalue > 1e-3
    # power check: the same counts are rejected against a clearly different theta
    _, wrong = _exact_pmf(n, theta * 2 + 0.5, dist)
    assert chisquare(*_pooled(counts, wrong[~zero] * draws)).pvalue < 1e-6


def _pooled(obs, exp):
    """Pool cells with expected count < 5 into one (dropped if empty); rescale to equal totals."""
    big = exp >= 5
    o, e = list(obs[big]), list(exp[big])
    if exp[~big].sum() > 0:
        o.append(obs[~big].sum())
        e.append(exp[~big].sum())
    o, e = np.array(o), np.array(e)
    return o, e * o.sum() / e.sum()


def test_secure_sampler_is_mallows_coarse():
    perms, pmf = _exact_pmf(3, 1.0, "kendall")
    counts = _counts(sample_mallows(3, 1.0, size=3000), perms)  # rng=None: secrets
    assert chisquare(counts, pmf * 3000).pvalue > 1e-7


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6])
@pytest.mark.parametrize("theta", [0.0, 1e-7, 0.3, 2.0, 40.0])
def test_normalisers_by_enumeration(n, theta):
    perms = list(itertools.permutations(range(n)))
    zk = math.fsum(math.exp(-theta * _inv(p)) for p in perms)
    zh = math.fsum(math.exp(-theta * _ham(p)) for p in perms)
    assert kendall_log_normalizer(n, theta) == pytest.approx(math.log(zk), rel=1e-12, abs=1e-12)
    assert hamming_log_normalizer(n, theta) == pytest.approx(math.log(zh), rel=1e-12, abs=1e-12)
    # closed product form
    if theta > 0:
        prod = math.prod(math.expm1(-j * theta) / math.expm1(-theta) for j in range(1, n + 1))
        assert math.exp(kendall_log_normalizer(n, theta)) == pytest.approx(prod, rel=1e-9)


@pytest.mark.parametrize("n", [2, 4, 6])
@pytest.mark.parametrize("theta", [0.0, 0.05, 0.8, 3.0])
def test_kendall_mean_variance_by_enumeration(n, theta):
    perms, pmf = _exact_pmf(n, theta, "kendall")
    d = np.array([_inv(p) for p in perms], dtype=float)
    mean = float(pmf @ d)
    var = float(pmf @ (d - mean) ** 2)
    assert kendall_distance_mean(n, theta) == pytest.approx(mean, rel=1e-10, abs=1e-12)
    assert kendall_distance_variance(n, theta) == pytest.approx(var, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("theta", [1e-12, 1e-8, 1e-5, 0.01, 0.49, 0.51])
def test_kendall_moments_small_theta_no_cancellation(theta):
    n = 200
    mpmath.mp.dps = 60
    q = mpmath.exp(-mpmath.mpf(theta))
    mean = sum(q / (1 - q) - j * q**j / (1 - q**j) for j in range(1, n + 1))
    var = sum(q / (1 - q) ** 2 - j**2 * q**j / (1 - q**j) ** 2 for j in range(1, n + 1))
    assert kendall_distance_mean(n, theta) == pytest.approx(float(mean), rel=1e-12)
    assert kendall_distance_variance(n, theta) == pytest.approx(float(var), rel=1e-11)
    # the textbook form in doubles really does cancel here (this is why the expm1 form is used)
    if theta <= 1e-8:
        qf = math.exp(-theta)
        naive = sum(qf / (1 - qf) - j * qf**j / (1 - qf**j) for j in range(1, n + 1))
        assert abs(naive - float(mean)) > 1e-6 * float(mean)


def test_hamming_distance_law_by_enumeration():
    for n, theta in [(5, 0.0), (6, 0.7), (4, 3.0)]:
        perms, pmf = _exact_pmf(n, theta, "hamming")
        law = np.zeros(n + 1)
        for p, w in zip(perms, pmf):
            law[_ham(p)] += w
        np.testing.assert_allclose(hamming_distance_pmf(n, theta), law, rtol=1e-12, atol=1e-15)


def test_log_pmf_and_distances():
    for p in itertools.permutations(range(5)):
        assert kendall_distance(p) == _inv(p)
        assert hamming_distance(p) == _ham(p)
    perms, pmf = _exact_pmf(5, 0.4, "kendall")
    for p, w in zip(perms[:30], pmf[:30]):
        assert math.exp(mallows_log_pmf(p, 0.4)) == pytest.approx(w, rel=1e-12)
    rng = np.random.default_rng(3)
    for n in (37, 300):
        p = rng.permutation(n)
        assert kendall_distance(p) == _inv(p.tolist())


def test_decode_matches_repeated_insertion():
    rng = np.random.default_rng(5)
    for n in (1, 2, 3, 7, 16, 33, 500):
        for _ in range(10):
            idx = np.array([rng.integers(0, t + 1) for t in range(n)])
            lst: list[int] = []
            for t in range(n):
                lst.insert(int(idx[t]), t)
            final = np.empty(n, dtype=np.int64)
            final[lst] = np.arange(n)
            np.testing.assert_array_equal(decode_insertion_code(idx), final)
    with pytest.raises(ParameterError, match="idx"):
        decode_insertion_code([0, 2])


def test_extremes_and_shapes():
    assert sample_mallows(6, math.inf).tolist() == list(range(6))
    assert sample_mallows(6, math.inf, distance="hamming").tolist() == list(range(6))
    s = sample_mallows(1000, 0.0, rng=1)
    assert sorted(s.tolist()) == list(range(1000)) and kendall_distance(s) > 200_000
    big = sample_mallows(20000, 2.0, rng=2)
    assert sorted(big.tolist()) == list(range(20000))
    # mean inversions ~ n / (e^theta - 1)
    assert abs(kendall_distance(big) - kendall_distance_mean(20000, 2.0)) < 6 * math.sqrt(
        kendall_distance_variance(20000, 2.0)
    )
    h = sample_mallows(5000, 0.2, distance="hamming", rng=4)
    assert sorted(h.tolist()) == list(range(5000))
    assert sample_mallows(4, 1.0, size=2, rng=0).shape == (2, 4)


class _ScriptedBits(M.RandomBits):
    """Bit source replaying given 64-bit words (to force the high-precision fallback)."""

    def __init__(self, words):
        super().__init__(0)
        self.words = list(words)

    def u64(self, k):
        out = np.array(self.words[:k], dtype=np.uint64)
        self.words = self.words[k:]
        return out


@pytest.mark.parametrize("tail,expected", [(0, 0), (2**64 - 1, 1)])
def test_lazy_fallback_resolves_boundary_exactly(tail, expected):
    theta, m = 0.7, 5
    mpmath.mp.prec = 300
    f0 = mpmath.expm1(-mpmath.mpf(theta)) / mpmath.expm1(-mpmath.mpf(theta) * m)
    u = int(mpmath.floor(f0 * mpmath.mpf(2) ** 64))  # U's first 64 bits straddle F(0)
    bits = _ScriptedBits([u] + [tail] * 6)
    k = M.truncated_geometric(np.array([m]), theta, bits)
    # The first word puts U within 2^-64 of F(0), inside the fast path's refusal margin; the
    # following words decide: all zeros -> U < F(0) -> 0, all ones -> U > F(0) -> 1.
    assert int(k[0]) == expected


def test_discrete_fallback_agrees_with_float_path():
    lw = M.hamming_log_weights(6, 0.3)
    cdf = np.cumsum(np.exp(lw - lw.max()))
    cdf /= cdf[-1]
    for h in range(2, 6):
        u = int(cdf[h] * 2.0**64) - 3  # just below a boundary: fast path may refuse
        got = M.resolve_lazy(u, 64, 6, lambda prec: lambda j: mpmath.mpf(float(cdf[j])), M.RandomBits(0))
        assert got == h


def test_hamming_high_precision_weights_match_float_law():
    for n, theta in [(6, 0.4), (9, 2.5)]:
        with mpmath.workprec(120):
            ws = M.hamming_hp_weights(n, theta)(120)
            tot = sum(ws)
            hp = [float(w / tot) for w in ws]
        np.testing.assert_allclose(hp, hamming_distance_pmf(n, theta), rtol=1e-12, atol=1e-16)


@pytest.mark.parametrize("tail,offset", [(0, 0), (2**64 - 1, 1)])
def test_hamming_distance_draw_fallback_at_boundary(tail, offset):
    n, theta = 6, 0.4
    cdf = np.cumsum(hamming_distance_pmf(n, theta))
    h = 3
    with mpmath.workprec(200):
        ws = M.hamming_hp_weights(n, theta)(200)
        F = sum(ws[: h + 1]) / sum(ws)
        u = int(mpmath.floor(F * mpmath.mpf(2) ** 64))
    assert abs(u / 2.0**64 - cdf[h]) < 1e-12
    bits = _ScriptedBits([u] + [tail] * 6)
    lw = M.hamming_log_weights(n, theta)
    got = M.discrete_from_log_weights(lw, bits, 1e-6, M.hamming_hp_weights(n, theta), count=1)
    # U just below F(h) -> h; just above -> h + 1 (Hamming distance h + 1 = 4 has positive mass)
    assert int(got[0]) == h + offset
