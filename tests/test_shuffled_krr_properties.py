"""Property tests (hypothesis) for :class:`ShuffledKRR`: ranges, monotonicity, bad inputs.

* Every returned ``delta`` is finite and in ``[0, 1]``, every ``log_delta`` in ``[-inf, 0]``,
  never NaN, for ``eps0`` over the whole supported range ``[EPS0_MIN, EPS0_MAX]``.
* ``delta`` is non-increasing in ``eps``; ``epsilon`` is non-increasing in ``delta`` and in
  ``[0, eps0]``.
* Bad inputs (NaN, inf, bool, 1e300, 10**400, strings, out-of-range) raise ``ValueError``
  naming the parameter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shuffle_accounting.shuffled_krr import ShuffledKRR
from shuffle_accounting.shuffled_krr.blanket import EPS0_MAX, EPS0_MIN, N_MAX, check_krr_parameters

_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ks = st.integers(min_value=2, max_value=40)
eps0s = st.one_of(
    st.floats(min_value=0.01, max_value=12.0),
    st.floats(min_value=12.0, max_value=EPS0_MAX),
    st.floats(min_value=1e-7, max_value=0.01),
)
ns = st.integers(min_value=1, max_value=3000)


@_SETTINGS
@given(k=ks, eps0=eps0s, n=ns, fracs=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6))
def test_delta_finite_in_unit_interval_and_monotone(k, eps0, n, fracs):
    m = ShuffledKRR(k, eps0, n)
    eps = np.sort(np.concatenate([np.asarray(fracs) * eps0, [float(np.nextafter(eps0, 0.0)), eps0]]))
    ld = m.log_delta(eps)
    d = m.delta(eps)
    assert not np.any(np.isnan(ld)) and np.all(ld <= 0.0)
    assert np.all(np.isfinite(d)) and np.all((d >= 0.0) & (d <= 1.0))
    assert np.all(ld[1:] <= ld[:-1]), (k, eps0, n, eps, ld)  # np.diff would give NaN for -inf - -inf
    assert ld[-1] == -math.inf  # eps = eps0: shuffled k-RR is eps0-DP


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    k=ks,
    eps0=st.floats(min_value=0.05, max_value=40.0),
    n=st.integers(min_value=1, max_value=500),
    deltas=st.lists(st.floats(min_value=1e-12, max_value=0.5), min_size=2, max_size=3, unique=True),
)
def test_epsilon_non_increasing_in_delta(k, eps0, n, deltas):
    m = ShuffledKRR(k, eps0, n)
    deltas = sorted(deltas)
    eps = [m.epsilon(x) for x in deltas]
    for e, x in zip(eps, deltas):
        assert 0.0 <= e <= eps0
        assert e == eps0 or m.delta(e) <= x  # certified: the returned eps meets the target
    assert all(a >= b for a, b in zip(eps, eps[1:])), (k, eps0, n, deltas, eps)


# --------------------------------------------------------------------------------------------
# bad inputs
# --------------------------------------------------------------------------------------------

_BAD_VALUES = [
    float("nan"),
    float("inf"),
    -float("inf"),
    True,
    False,
    1e300,
    pytest.param(10**400, id="10**400"),
    "1.0",
    None,
    [1.0],
]


@pytest.mark.parametrize("value", _BAD_VALUES)
@pytest.mark.parametrize("name", ["k", "eps0", "n"])
def test_bad_constructor_inputs_name_the_parameter(name, value):
    kwargs = {"k": 3, "eps0": 1.0, "n": 10}
    kwargs[name] = value
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        ShuffledKRR(**kwargs)


@pytest.mark.parametrize(
    "name, value",
    [
        ("eps0", EPS0_MAX * 1.0001),
        ("eps0", 709.0),
        ("eps0", EPS0_MIN / 2),
        ("eps0", 0.0),
        ("n", N_MAX + 1),
        ("k", 2**60),
    ],
)
def test_out_of_supported_range_rejected(name, value):
    kwargs = {"k": 3, "eps0": 1.0, "n": 10}
    kwargs[name] = value
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        check_krr_parameters(**kwargs)
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        ShuffledKRR(**kwargs)


# 1e300 is a valid (huge) eps and [1.0] a valid array of eps
_BAD_EPS = [v for v in _BAD_VALUES if not (isinstance(v, (float, list)) and v in (1e300, [1.0]))]


def test_huge_eps_is_valid_and_private():
    """``eps = 1e300`` is a valid (huge) epsilon: delta is exactly 0 there."""
    m = ShuffledKRR(3, 1.0, 10)
    assert m.log_delta(1e300) == -math.inf and m.delta(1e300) == 0.0


@pytest.mark.parametrize(
    "value",
    _BAD_EPS + [-1.0, [0.1, float("nan")], pytest.param([[0.1], [True]], id="bool-in-array")],
)
def test_bad_eps_names_eps(value):
    m = ShuffledKRR(3, 1.0, 10)
    with pytest.raises(ValueError, match=r"^eps\b"):
        m.log_delta(value)
    with pytest.raises(ValueError, match=r"^eps\b"):
        m.delta(value)


@pytest.mark.parametrize("value", _BAD_VALUES + [0.0, 1.0, -0.5, 2.0])
def test_bad_delta_names_delta(value):
    m = ShuffledKRR(3, 1.0, 10)
    with pytest.raises(ValueError, match=r"^delta\b"):
        m.epsilon(value)
