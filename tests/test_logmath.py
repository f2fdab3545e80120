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
