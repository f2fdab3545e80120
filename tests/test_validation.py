"""Shared validation helpers: every bad value raises ParameterError naming the parameter."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from shuffle_accounting._validation import (
    ParameterError,
    check_choice,
    check_delta,
    check_int,
    check_probability_vector,
    check_real,
    check_real_array,
    check_stochastic_matrix,
)


@pytest.mark.parametrize(
    "bad", [True, False, np.bool_(True), 1.5, math.nan, math.inf, -math.inf, "3", None, [3]]
)
def test_check_int_rejects(bad):
    with pytest.raises(ParameterError, match="^n must be an integer"):
        check_int("n", bad, minimum=1)


def test_check_int_range_and_conversion():
    assert check_int("n", np.int64(5), minimum=1) == 5
    assert check_int("n", 1e6, minimum=1) == 1_000_000
    with pytest.raises(ParameterError, match=r"n must be an integer >= 1, got 0"):
        check_int("n", 0, minimum=1)
    with pytest.raises(ParameterError, match=r"in \[0, 3\]"):
        check_int("x", 4, minimum=0, maximum=3)


@pytest.mark.parametrize("bad", [True, math.nan, math.inf, -math.inf, -1.0, 0.0, "1", None])
def test_check_real_rejects(bad):
    with pytest.raises(ParameterError, match="^eps0 must be a finite real number in \\(0.0, inf\\)"):
        check_real("eps0", bad, low=0.0, low_open=True)


def test_check_real_accepts_fraction_and_inf_when_allowed():
    assert check_real("x", Fraction(1, 4)) == 0.25
    assert check_real("x", math.inf, low=0.0, allow_inf=True) == math.inf


@pytest.mark.parametrize("bad", [0, 1, 0.0, 1.0, -1e-3, math.nan, math.inf, True])
def test_check_delta_rejects(bad):
    with pytest.raises(ParameterError, match="^delta must be"):
        check_delta("delta", bad)


def test_check_real_array():
    assert check_real_array("eps", 0.5).shape == ()
    with pytest.raises(ParameterError, match="eps must be finite real numbers"):
        check_real_array("eps", [0.1, math.nan])
    with pytest.raises(ParameterError, match="eps must be"):
        check_real_array("eps", [True, False])
    with pytest.raises(ParameterError, match="eps must be"):
        check_real_array("eps", ["a"])
    with pytest.raises(ParameterError, match="got -1.0"):
        check_real_array("eps", [1.0, -1.0], low=0.0)


def test_probability_vector():
    assert np.allclose(check_probability_vector("P", [Fraction(1, 3), Fraction(2, 3)]), [1 / 3, 2 / 3])
    for bad in (
        [0.5, 0.6],
        [-0.5, 1.5],
        [],
        [[0.5, 0.5]],
        [math.nan, 1.0],
        [Fraction(1, 3), Fraction(1, 3)],
        None,
        3.0,
    ):
        with pytest.raises(ParameterError, match="^P must"):
            check_probability_vector("P", bad)


def test_stochastic_matrix():
    with pytest.raises(ParameterError, match="row 1 summing"):
        check_stochastic_matrix("matrix", [[1.0, 0.0], [0.5, 0.6]])
    with pytest.raises(ParameterError, match="2-D"):
        check_stochastic_matrix("matrix", [0.5, 0.5])
    with pytest.raises(ParameterError, match="matrix must"):
        check_stochastic_matrix("matrix", [[math.inf, 0.0]])


def test_choice():
    with pytest.raises(ParameterError, match=r"output must be one of \('histogram', 'count'\), got 'x'"):
        check_choice("output", "x", ("histogram", "count"))


# ----- the report's Deployment ------------------------------------------------------------------


@pytest.mark.parametrize(
    "field, bad",
    [
        ("k", 1),
        ("k", 2.5),
        ("k", math.nan),
        ("eps0", 0.0),
        ("eps0", math.inf),
        ("eps0", math.nan),
        ("n", 1),
        ("n", 10.5),
        ("delta", 0.0),
        ("delta", 1.0),
        ("delta", math.nan),
        ("rounds", 0),
        ("rounds", math.inf),
        ("target_epsilon", 0.0),
        ("target_epsilon", -1.0),
        ("target_epsilon", math.nan),
        ("target_epsilon", math.inf),
        ("target_epsilon", True),
        ("target_epsilon", "1"),
        ("calibrate_rounds", 1),
        ("calibrate_rounds", "yes"),
    ],
)
def test_deployment_rejects(field, bad):
    from shuffle_accounting.presentation.report import Deployment

    with pytest.raises(ParameterError, match=f"^{field} must be"):
        Deployment(**{field: bad})
