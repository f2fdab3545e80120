"""KRRRandomizer: exact rational law, effective eps0 rounded up, chi-square law tests, validation."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.runtime import KRRRandomizer, exact_log_upper
from shuffle_accounting.runtime._rng import check_rng, uniform_below

# Seeds and Generators are used on purpose here (simulation mode): expect the warning.
pytestmark = pytest.mark.filterwarnings("ignore::shuffle_accounting._rng.PrivacyLeakWarning")

TWO64 = 1 << 64


def _exact_log(fr: Fraction) -> mpmath.mpf:
    with mpmath.workprec(300):
        return mpmath.log(mpmath.mpf(fr.numerator) / fr.denominator)


@pytest.mark.parametrize("k,eps0", [(2, 0.1), (3, math.log(2)), (10, 2.0), (100, 5.0), (7, 30.0), (2, 40.0)])
def test_exact_law_and_effective_eps0(k, eps0):
    r = KRRRandomizer(k, eps0)
    # threshold recomputed independently: floor((1 - gamma) * 2^64), gamma = k/(e^eps0+k-1) as a double
    gamma = Fraction(k / (math.expm1(eps0) + k))
    assert r.keep_threshold == math.floor((1 - gamma) * TWO64)
    assert r.p_exact + (k - 1) * r.pbar_exact == 1
    assert r.p_exact == r.keep_probability + (1 - r.keep_probability) / k
    ratio = r.p_exact / r.pbar_exact
    exact = _exact_log(ratio)
    # rounded UP, and by no more than a few ulp
    assert mpmath.mpf(r.effective_eps0) >= exact
    assert r.effective_eps0 - float(exact) <= 4 * math.ulp(r.effective_eps0)
    # never noticeably less private than nominal; below it by at most the 2^-64 quantization of gamma
    assert r.effective_eps0 <= eps0 + 1e-13 * max(1.0, eps0)
    assert eps0 - r.effective_eps0 <= 2.0 / (float(gamma) * TWO64) + 1e-13 * max(1.0, eps0)
    assert abs(float(r.p_exact) - r.krr.p) < 1e-12


def test_exact_example_ln2_k3():
    r = KRRRandomizer(["a", "b", "c"], math.log(2))
    assert r.keep_threshold == 1 << 62  # q = 1/4 exactly
    assert (r.p_exact, r.pbar_exact) == (Fraction(1, 2), Fraction(1, 4))
    assert r.effective_eps0 > math.log(2)  # ln 2 is irrational: rounded up strictly


def test_huge_eps0_is_capped_by_64_bit_resolution():
    r = KRRRandomizer(4, 1000.0)
    assert r.keep_threshold == TWO64 - 1
    assert r.pbar_exact == Fraction(1, 4 * TWO64)
    assert math.isfinite(r.effective_eps0)
    assert r.effective_eps0 >= float(_exact_log(Fraction(TWO64 + 3 * (TWO64 - 1), 1)))
    assert r.effective_eps0 < 44.4 + math.log(4) + 1e-9


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 10**30), st.integers(1, 10**30))
def test_exact_log_upper_is_an_upper_bound(a, b):
    fr = Fraction(max(a, b), min(a, b))
    val = exact_log_upper(fr)
    exact = _exact_log(fr)
    assert mpmath.mpf(val) >= exact
    assert val - float(exact) <= 2 * math.ulp(max(val, 1e-300)) or fr == 1


def test_exact_log_upper_rejects_bad_input():
    with pytest.raises(ParameterError, match="ratio"):
        exact_log_upper(Fraction(1, 2))
    with pytest.raises(ParameterError, match="ratio"):
        exact_log_upper(2.0)
    assert exact_log_upper(Fraction(1)) == 0.0


def _law(r: KRRRandomizer, x: int) -> np.ndarray:
    law = np.full(r.k, float(r.pbar_exact))
    law[x] = float(r.p_exact)
    return law


@pytest.mark.parametrize("rng", [None, 20240601])
def test_chi_square_output_law(rng):
    """Exact-law test: 1e5 reports of the same input. Private mode is random, so the threshold is a
    generous p > 1e-6; the power check below shows the same sample size rejects a wrong law."""
    r = KRRRandomizer(5, 1.0)
    out = r.randomize_codes(np.full(100_000, 2), rng=rng)
    obs = np.bincount(out, minlength=5)
    assert chisquare(obs, _law(r, 2) * out.size).pvalue > 1e-6
    wrong = KRRRandomizer(5, 1.15)
    assert chisquare(obs, _law(wrong, 2) * out.size).pvalue < 1e-6


def test_chi_square_labels_private_mode():
    r = KRRRandomizer(["x", "y", "z"], 0.5)
    out = r.randomize(["y"] * 60_000)
    obs = np.array([np.count_nonzero(out == lab) for lab in ("x", "y", "z")])
    assert obs.sum() == 60_000
    assert chisquare(obs, _law(r, 1) * 60_000).pvalue > 1e-6


@pytest.mark.parametrize("bound", [3, 6, 7])
def test_uniform_rejection_sampler_is_uniform(bound):
    x = uniform_below(bound, 60_000, None)
    obs = np.bincount(x, minlength=bound)
    assert obs.size == bound
    assert chisquare(obs).pvalue > 1e-6


def test_uniform_rejection_sampler_64_bit_path():
    big = (1 << 40) + 3  # scalar bound >= 2**32 takes the 64-bit path
    x = uniform_below(big, 20_000, None)
    assert x.min() >= 0 and x.max() < big
    assert chisquare(np.bincount(x % 5, minlength=5)).pvalue > 1e-6
    assert chisquare(np.bincount(uniform_below(np.full(30_000, 6), 30_000, None), minlength=6)).pvalue > 1e-6


def test_randomize_codes_keeps_compact_dtypes():
    r = KRRRandomizer(15, 1.0)
    assert r.randomize_codes(np.arange(15, dtype=np.uint8)).dtype == np.uint8
    assert r.randomize_codes(np.arange(15, dtype=np.int32), rng=0).dtype == np.int32
    big = KRRRandomizer(300, 1.0)
    assert big.randomize_codes(np.arange(200, dtype=np.uint8)).dtype == np.int64  # 299 does not fit


def test_uniform_rejection_sampler_power_of_two_and_array_bounds():
    assert set(uniform_below(4, 1000, None).tolist()) == {0, 1, 2, 3}
    b = np.array([1, 2, 3, 1000])
    for _ in range(20):
        x = uniform_below(b, 4, None)
        assert np.all((x >= 0) & (x < b))
        assert x[0] == 0


def test_simulation_mode_is_reproducible_and_private_mode_is_not_seeded():
    r = KRRRandomizer(10, 0.5)
    x = np.arange(10).repeat(100)
    a = r.randomize(x, rng=5)
    assert np.array_equal(a, r.randomize(x, rng=5))
    assert np.array_equal(a, r.randomize(x, rng=np.random.default_rng(5)))
    # two private draws of 1000 reports coincide with probability < 0.9^... ~ 0
    assert not np.array_equal(r.randomize(x), r.randomize(x))


def test_encode_partial_separates_malformed():
    r = KRRRandomizer(3, 1.0)
    e = r.encode_partial([0, "a", 2, 3, True, None, 2.0, -1, np.int64(1)])
    assert e.codes.tolist() == [0, 2, 1]
    assert e.positions.tolist() == [0, 2, 8]
    reasons = {x.position: x.reason for x in e.rejected}
    assert reasons == {
        1: "wrong type (string)",
        3: "unknown category",
        4: "wrong type (boolean)",
        5: "wrong type (NoneType)",
        6: "wrong type (real number)",
        7: "unknown category",
    }
    # fast numpy paths
    e = r.encode_partial(np.array([0, 5, 1]))
    assert e.codes.tolist() == [0, 1] and [x.position for x in e.rejected] == [1]
    e = r.encode_partial(np.array([0.0, 1.0]))
    assert e.codes.size == 0 and len(e.rejected) == 2


def test_encode_labels():
    r = KRRRandomizer(["a", "b", "c"], 1.0)
    assert r.encode(np.array(["c", "a"])).tolist() == [2, 0]
    e = r.encode_partial(np.array(["c", "zz", "a"]))
    assert e.codes.tolist() == [2, 0] and e.rejected[0].value == "zz"
    e = r.encode_partial(["a", [1], 3, b"a"])
    assert [x.reason for x in e.rejected] == [
        "wrong type (list)",
        "wrong type (integer)",
        "wrong type (bytes)",
    ]
    with pytest.raises(ParameterError, match="values"):
        r.encode(["a", "q"])
    ints = KRRRandomizer([10, 20, 30], 1.0)
    assert ints.encode([30, 10]).tolist() == [2, 0]
    assert ints.decode([2, 0]).tolist() == [30, 10]
    assert len(ints.encode_partial([20, 25]).rejected) == 1
    assert ints.encode(np.array([30, 10], dtype=np.uint8)).tolist() == [2, 0]
    e = ints.encode_partial(np.array([10, 2**63 + 10], dtype=np.uint64))
    assert e.codes.tolist() == [0] and e.rejected[0].reason == "unknown category"
    mixed = KRRRandomizer(["a", 1, (2, 3)], 1.0)
    assert mixed.randomize([(2, 3), "a"], rng=0).shape == (2,)
    assert mixed.encode([(2, 3), 1]).tolist() == [2, 1]


@pytest.mark.parametrize(
    "categories",
    [1, 0, -3, True, 2.5, "abc", b"ab", ["a"], ["a", "a"], [float("nan"), 1.0], [[1], [2]], None, {1, 2}],
)
def test_bad_categories(categories):
    with pytest.raises(ParameterError, match="categories"):
        KRRRandomizer(categories, 1.0)


@pytest.mark.parametrize("eps0", [0, -1.0, float("nan"), float("inf"), True, "1", None])
def test_bad_eps0(eps0):
    with pytest.raises(ParameterError, match="eps0"):
        KRRRandomizer(3, eps0)


@pytest.mark.parametrize("rng", [1.5, True, -1, "seed", np.random.RandomState(0)])
def test_bad_rng(rng):
    with pytest.raises(ParameterError, match="rng"):
        KRRRandomizer(3, 1.0).randomize([0, 1], rng=rng)
    with pytest.raises(ParameterError, match="rng"):
        check_rng(rng)


@pytest.mark.parametrize("values", ["abc", 5, [[0, 1]], np.zeros((2, 2), dtype=int)])
def test_bad_values_shape(values):
    with pytest.raises(ParameterError, match="values"):
        KRRRandomizer(3, 1.0).randomize(values)


@pytest.mark.parametrize("codes", [[0, 3], [-1], [0.0, 1.0], [[0]]])
def test_bad_codes(codes):
    with pytest.raises(ParameterError, match="codes"):
        KRRRandomizer(3, 1.0).randomize_codes(codes)


def test_frozen_and_matrix():
    r = KRRRandomizer(4, 1.0)
    with pytest.raises(AttributeError):
        r.eps0 = 2.0  # type: ignore[misc]
    assert np.allclose(r.matrix.sum(axis=1), 1.0)
    assert np.allclose(r.matrix, r.krr.matrix, atol=1e-14)
    assert r.randomize_codes([]).size == 0
