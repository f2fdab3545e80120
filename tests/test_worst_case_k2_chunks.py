"""k = 2 worst case (issue 11): the chunked BLAS calls (``worst_case.conv_valid``, ``conv_full``,
``chunked_dot``) give the plain numpy results, and bounds computed with tiny chunks (every window split)
equal the unchunked ones. The chunks only reorder sums of non-negative products, whose rounding
bound holds for any order; these tests check the indexing, which n = 1e7 windows (16000-22000
entries, above the default 8192) would otherwise be the only ones to exercise."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffle_accounting.shuffled_krr import worst_case as W


@pytest.mark.parametrize("chunk", [1, 3, 5, 64])
def test_chunked_convolutions_match_numpy(monkeypatch, chunk):
    monkeypatch.setattr(W, "BLAS_CHUNK", chunk)
    rng = np.random.default_rng(7)
    for lx, k in [(1, 1), (5, 1), (6, 4), (17, 9), (40, 33), (64, 2), (65, 70)]:
        x, seg = rng.random(lx), rng.random(lx + k - 1)
        got, want = W.conv_valid(x, seg), np.convolve(x, seg, "valid")
        assert got.shape == want.shape == (k,)
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=0.0)
        y = rng.random(lx + 11)
        np.testing.assert_allclose(W.conv_full(x, y), np.convolve(x, y), rtol=1e-14, atol=0.0)
        np.testing.assert_allclose(W.conv_full(y, x), np.convolve(x, y), rtol=1e-14, atol=0.0)
        assert W.chunked_dot(x, seg[:lx]) == pytest.approx(float(np.dot(x, seg[:lx])), rel=1e-14)


def test_short_inputs_take_numpy_unchanged():
    rng = np.random.default_rng(8)
    x, seg = rng.random(30), rng.random(45)
    assert np.array_equal(W.conv_valid(x, seg), np.convolve(x, seg, "valid"))
    assert np.array_equal(W.conv_full(x, seg), np.convolve(x, seg))
    assert W.chunked_dot(x, seg[:30]) == float(np.dot(x, seg[:30]))


def test_bounds_with_every_window_chunked_equal_the_plain_ones(monkeypatch):
    eps0, n, level = 1.0, 200, math.log(1e-6)
    pieces = [(0, n - 1), (10, 60), (n - 6, n - 1), (n // 2, n // 2), (0, 3)]
    eps = np.array([0.05, 0.2, 0.6])
    plain = [W.WorstCaseProblem(eps0, n, level).interval_many(a, b, eps) for a, b in pieces]
    cert = W.certify(eps0, n, delta=1e-6)
    monkeypatch.setattr(W, "BLAS_CHUNK", 7)  # windows here are 30-150 entries: all split
    chunked = [W.WorstCaseProblem(eps0, n, level).interval_many(a, b, eps) for a, b in pieces]
    for u, v in zip(plain, chunked):
        fin = np.isfinite(u)
        assert np.array_equal(fin, np.isfinite(v))
        np.testing.assert_allclose(v[fin], u[fin], rtol=0.0, atol=1e-12)
    cert2 = W.certify(eps0, n, delta=1e-6)
    assert W.verify(cert2)
    assert cert2.epsilon == pytest.approx(cert.epsilon, rel=1e-12)
    assert cert2.epsilon_lower == pytest.approx(cert.epsilon_lower, rel=1e-12)
