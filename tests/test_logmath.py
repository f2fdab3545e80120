"""shuffle_accounting._logmath: the direct 2-D convolution (replaces scipy.signal.convolve2d)."""

from __future__ import annotations

import numpy as np
import pytest

from shuffle_accounting import _logmath
from shuffle_accounting._logmath import convolve2d_direct, convolve_chunked


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((1, 1), (1, 1)),
        ((5, 7), (3, 2)),
        ((1, 50), (40, 1)),
        ((30, 3), (2, 40)),
        ((25, 25), (20, 30)),
        ((300, 1), (1, 200)),
    ],
)
def test_convolve2d_direct_equals_scipy_direct(sa, sb):
    """Both schedules of the numpy 2-D convolution give scipy's direct result (shapes chosen to
    take each schedule), to the rounding of the (L + 1) u budget."""
    from scipy.signal import convolve2d

    rng = np.random.default_rng(sum(sa) + sum(sb))
    a, b = rng.random(sa), rng.random(sb)
    a[0, 0] = 0.0  # exact zeros stay exact
    ref = convolve2d(a, b, mode="full")
    got = convolve2d_direct(a, b)
    assert got.shape == ref.shape
    terms = min(a.size, b.size)
    assert np.all(np.abs(got - ref) <= (terms + 1) * 2.0**-52 * ref + 1e-300)
    assert np.array_equal(convolve2d_direct(b, a).shape, ref.shape)


@pytest.mark.parametrize("chunk", [1, 3, 7, 64])
def test_convolve_chunked_is_numpy_convolve(chunk):
    """Chunks of the shorter input (every split position, both argument orders) give numpy's full
    convolution up to reordered sums; inputs within one chunk go to numpy unchanged."""
    rng = np.random.default_rng(chunk)
    for la, lb in [(1, 1), (5, 1), (6, 9), (17, 17), (65, 70), (200, 3)]:
        a, b = rng.random(la), rng.random(lb)
        want = np.convolve(a, b)
        for x, y in ((a, b), (b, a)):
            got = convolve_chunked(x, y, chunk)
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-14, atol=0.0)
    a, b = rng.random(30), rng.random(45)
    assert np.array_equal(convolve_chunked(a, b), np.convolve(a, b))


def test_convolve2d_direct_flattened_schedule_in_chunks(monkeypatch):
    """The flattened schedule (i) with every flattened input split into chunks of 5 terms gives
    scipy's direct result (what a ~20000-term grid takes at the default chunk)."""
    from scipy.signal import convolve2d

    monkeypatch.setattr(_logmath, "BLAS_CHUNK", 5)
    rng = np.random.default_rng(11)
    a, b = rng.random((25, 25)), rng.random((20, 30))
    ref = convolve2d(a, b, mode="full")
    got = convolve2d_direct(a, b)
    assert np.all(np.abs(got - ref) <= (b.size + 1) * 2.0**-52 * ref + 1e-300)


def test_convolve2d_direct_reads_1d_as_a_row():
    assert convolve2d_direct([1.0, 2.0], [3.0]).tolist() == [[3.0, 6.0]]


@pytest.mark.parametrize(
    "j, n, q",
    [(1, 5, 1e-17), (6, 17, 3.39e-15), (2, 5, 1e-14), (1, 1000, 1e-300), (3, 1000, 1e-3), (2, 10, 0.3)],
)
def test_binomial_upper_tail_keeps_a_tiny_q(j, n, q):
    """Review finding: the mirror formed 1 - q, so for q below ~5e-17 the upper tail came back
    as -inf (and wrong by ~0.1 in log for q in 1e-16 .. 1e-12). Exact value by mpmath."""
    import mpmath

    from shuffle_accounting._binomial import log_binom_sf

    mpmath.mp.dps = 60
    qq = mpmath.mpf(q)
    exact = mpmath.log(
        sum(mpmath.binomial(n, i) * qq**i * (1 - qq) ** (n - i) for i in range(j, min(n, j + 60) + 1))
    )
    assert float(log_binom_sf(j, n, q)) == pytest.approx(float(exact), abs=1e-12)


def test_exp_up_is_never_below_the_exact_exponential():
    # 40-digit mpmath reference: exp_up(x) >= e^x, and exactly one double above math.exp
    import math

    import mpmath

    from shuffle_accounting._logmath import exp_up

    mpmath.mp.dps = 40
    xs = [0.0, 1e-300, -1e-12, 0.5, -13.815510557964274, -745.0, -700.3, 700.1, 709.78]
    xs += list(np.random.default_rng(3).uniform(-745.0, 709.0, 200))
    for x in xs:
        up = exp_up(float(x))
        assert mpmath.mpf(up) >= mpmath.exp(mpmath.mpf(float(x))), x
        assert up == np.nextafter(math.exp(x), math.inf)
    assert exp_up(-math.inf) == 0.0 and exp_up(710.0) == math.inf


def test_certificate_headlines_are_rounded_up():
    # the delta stated by each worst-case certificate is the next double above exp(log_delta)
    # (it was exp(log_delta) itself, which can be 1 ulp below e^log_delta)
    import math

    from shuffle_accounting.shuffled_krr.worst_case import certify
    from shuffle_accounting.shuffled_krr.worst_case_k import certify_k
    from shuffle_accounting.shuffled_krr.worst_case_multi import certify_multi

    certs = [certify(1.0, 200, eps=0.3), certify_k(3, 1.0, 30, eps=0.5), certify_multi(4, 1.0, 40, eps=0.3)]
    for cert in certs:
        assert cert.delta == np.nextafter(math.exp(cert.log_delta), math.inf) > math.exp(cert.log_delta)
