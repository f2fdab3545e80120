"""KRR and FiniteRandomizer: exact values, decompositions, bad inputs."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shuffle_accounting import KRR, FiniteRandomizer, ParameterError


def test_krr_values_exact():
    # k = 3, eps0 = ln 2: p = 2/4, pbar = 1/4, gamma = 3/4.
    r = KRR(3, math.log(2))
    assert r.p == pytest.approx(0.5, rel=1e-15)
    assert r.pbar == pytest.approx(0.25, rel=1e-15)
    assert r.gamma == pytest.approx(0.75, rel=1e-15)
    assert np.allclose(r.matrix, [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]])


def test_krr_large_eps0_no_overflow():
    r = KRR(10, 800.0)
    assert r.p == 1.0 and r.pbar == 0.0 and r.log_pbar == pytest.approx(-800 - 9 * math.exp(-800))


@given(k=st.integers(2, 50), eps0=st.floats(1e-6, 30))
def test_krr_ratio_and_blanket(k, eps0):
    r = KRR(k, eps0)
    assert r.log_p - r.log_pbar == pytest.approx(eps0, rel=1e-12, abs=1e-12)
    d = r.blanket_decomposition()
    assert np.allclose((1 - d.gamma) * d.residual + d.gamma * d.blanket, r.matrix, atol=1e-12)
    assert d.gamma == pytest.approx(k / (math.exp(eps0) + k - 1), rel=1e-12)


@given(k=st.integers(3, 12), eps0=st.floats(0.01, 20))
def test_krr_clone_decomposition(k, eps0):
    r = KRR(k, eps0)
    d = r.clone_decomposition(0, 1)
    m = r.matrix
    assert d.beta == pytest.approx(1 / (math.exp(eps0) + 1), rel=1e-12)
    assert np.all(d.residual >= 0)
    assert np.allclose(d.residual.sum(axis=1), 1.0)
    for x in range(2, k):
        assert np.allclose(d.beta * m[0] + d.beta * m[1] + (1 - 2 * d.beta) * d.residual[x], m[x], atol=1e-12)


@pytest.mark.parametrize(
    "k, eps0, name",
    [
        (1, 1.0, "k"),
        (2.5, 1.0, "k"),
        (True, 1.0, "k"),
        (math.nan, 1.0, "k"),
        ("3", 1.0, "k"),
        (3, 0.0, "eps0"),
        (3, -1.0, "eps0"),
        (3, math.nan, "eps0"),
        (3, math.inf, "eps0"),
        (3, True, "eps0"),
        (3, None, "eps0"),
    ],
)
def test_krr_bad_inputs(k, eps0, name):
    with pytest.raises(ParameterError, match=f"^{name} must be"):
        KRR(k, eps0)


def test_krr_clone_bad_refs():
    with pytest.raises(ParameterError, match="x1 must differ"):
        KRR(3, 1.0).clone_decomposition(1, 1)
    with pytest.raises(ParameterError, match="x0 must be an integer in"):
        KRR(3, 1.0).clone_decomposition(3, 1)


def test_finite_randomizer():
    fr = FiniteRandomizer([[Fraction(3, 4), Fraction(1, 4)], [Fraction(1, 4), Fraction(3, 4)]])
    assert fr.eps0 == pytest.approx(math.log(3))
    d = fr.blanket_decomposition()
    assert d.gamma == pytest.approx(0.5)
    assert np.allclose((1 - d.gamma) * d.residual + d.gamma * d.blanket, fr.matrix)
    assert FiniteRandomizer([[1.0, 0.0], [0.0, 1.0]]).eps0 == math.inf
    fk = FiniteRandomizer.from_krr(KRR(4, 1.0))
    assert fk.eps0 == pytest.approx(1.0)
    assert fk.blanket_decomposition().gamma == pytest.approx(KRR(4, 1.0).gamma)
    with pytest.raises(ValueError):
        fr.matrix[0, 0] = 0.0  # read-only


@pytest.mark.parametrize(
    "bad",
    [
        [[1.0, 0.0]],
        [[0.5, 0.6], [0.5, 0.5]],
        [[-0.5, 1.5], [0.5, 0.5]],
        [[math.nan, 1.0], [0.5, 0.5]],
        [0.5, 0.5],
    ],
)
def test_finite_randomizer_bad(bad):
    with pytest.raises(ParameterError, match="^matrix must"):
        FiniteRandomizer(bad)


def test_krr_is_frozen():
    import dataclasses

    r = KRR(3, 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.eps0 = 2.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.k = 4  # type: ignore[misc]
    assert r == KRR(3, 1.0) and hash(r) == hash(KRR(3, 1.0))
