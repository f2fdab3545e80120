"""Adversarial regimes of the sub-linear blanket evaluator against the exact evaluator (issue 12).

The fast evaluator (:mod:`shuffle_accounting.shuffled_krr.blanket_fast`) must bracket the exact
privacy-blanket divergence computed by the reference path
(:func:`shuffle_accounting.shuffled_krr.blanket.certified_log_delta`, O(n)) and be within its stated
``rtol`` of it, over ``(k, eps0, n, eps)`` up to ``n = 1e6``, including the regimes that broke an
earlier version: ``eps`` next to ``eps0`` (``1 - c_t`` below one ulp), a thin blanket
(``eps0`` up to 700), ``k = 2`` (no third value, ``R = 0``) against large ``k``, ``n`` from 2 up,
and deltas far below the double range (log deltas down to about ``-8000``).
"""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest

from shuffle_accounting.shuffled_krr import ShuffledKRR
from shuffle_accounting.shuffled_krr.blanket import certified_log_delta
from shuffle_accounting.shuffled_krr.blanket_fast import DEFAULT_RTOL, certified_log_delta_bounds

#: Relative rounding budget of the exact evaluator's certified value (see ``_check``).
EXACT_BUDGET = 1e-6
DEEP = math.log(1e-100)
FRACS = (0.0, 0.5, 1 - 1e-3, 1 - 1e-8, 1 - 1e-12, 1 - 1e-15)


def _one_outcome(k: int, eps0: float, n: int, eps: float) -> float:
    """Exhibited lower bound (rounded down) on log delta: ShuffledKRR's standing invariant."""
    return float(ShuffledKRR(k, eps0, n)._one_outcome_log_delta(np.array(eps)))


def _check(k: int, eps0: float, n: int, eps: float, exact: float, *, rtol: float = DEFAULT_RTOL) -> None:
    up, lo = (float(x) for x in certified_log_delta_bounds(eps, k, eps0, n, rtol=rtol))
    tiny = 1e-10 * (1.0 + abs(exact))  # the exact evaluator's own relative inflation
    # the exact evaluator's certified value includes its rounding budget (measured up to 1.5e-7
    # relative below e^-700, e.g. k = 10, eps0 = 2, n = 2e4, eps = 0.6, where its exact core agrees
    # with the fast bracket to 1e-11): the fast upper may lie that much below it, no more
    slack = math.log1p(EXACT_BUDGET) + tiny
    where = f"k={k}, eps0={eps0}, n={n}, eps={eps!r}: up={up!r}, lo={lo!r}, exact={exact!r}"
    assert up >= exact - slack, "fast upper below the exact divergence: " + where
    assert up >= _one_outcome(k, eps0, n, eps), "fast upper below the exhibited one-outcome bound: " + where
    assert lo <= exact + tiny, "fast lower above the exact divergence: " + where
    # within rtol wherever delta >= 1e-100, and wherever the returned bracket claims it; below
    # 1e-100 the work caps may leave a wider (still certified) bracket (module docstring, sec. 3)
    if math.isfinite(exact) and (exact >= DEEP or up - lo <= math.log1p(rtol)):
        assert up - exact <= math.log1p(rtol) + tiny, "fast upper looser than rtol: " + where
    else:
        assert up == -math.inf


def test_reported_defect_k2_eps_next_to_eps0():
    """The defect of issue 12: -inf at k = 2, eps0 = 13.5, n = 1e6, eps = eps0 (1 - 1e-12)."""
    k, eps0, n = 2, 13.5, 10**6
    eps = eps0 * (1 - 1e-12)
    exact = float(certified_log_delta(eps, k, eps0, n))
    assert exact > -26.5
    _check(k, eps0, n, eps, exact)


# a fixed sample of the product (k, eps0, n <= 1000, eps / eps0): every regime flavour, small cost
_GRID = list(
    itertools.product((2, 3, 10, 100), (0.1, 1.0, 2.0, 5.0, 13.5, 50.0, 700.0), (2, 10, 1000), FRACS)
)
_SAMPLE = [_GRID[i] for i in np.random.default_rng(12).choice(len(_GRID), size=30, replace=False)]


@pytest.mark.parametrize("k, eps0, n, frac", _SAMPLE)
def test_sampled_grid_small_n(k, eps0, n, frac):
    eps = eps0 * frac
    _check(k, eps0, n, eps, float(certified_log_delta(eps, k, eps0, n)))


@pytest.mark.parametrize(
    "k, eps0, n, frac",
    [
        (2, 13.5, 10**6, 1 - 1e-15),  # 1 - c_t far below one ulp, thin blanket
        (10, 13.5, 10**6, 1 - 1e-12),  # the same with a third value (R > 0, b = 0 terms)
        (100, 50.0, 10**6, 1 - 1e-8),  # gamma ~ 2e-20: no blanket at all
        (3, 700.0, 10**6, 0.5),  # E = e^350: the old absolute error floors gave log delta = +350
        (2, 700.0, 10**6, 1 - 1e-15),  # a_t subnormal in plain units
        (10, 2.0, 5000, 0.5),  # the normal regime (the exact O(n) sum stays cheap)
        (2, 1.0, 3 * 10**4, 0.2),
        (100, 5.0, 3 * 10**4, 0.5),  # log delta ~ -240: below 1e-100
        (2, 5.0, 10**5, 1 - 1e-3),  # log delta ~ -677
        (10, 2.0, 3000, 1 - 1e-8),  # a large deviation: log delta ~ -2400
    ],
)
def test_adversarial_regimes_large_n(k, eps0, n, frac):
    eps = eps0 * frac
    _check(k, eps0, n, eps, float(certified_log_delta(eps, k, eps0, n)))


def _mp_k2(eps: float, eps0: float, n: int) -> float:
    """Independent 30-digit reference for k = 2 (``R = 0``): ``delta = (u/n) E[(a T - (1+E) h1)_+]``.

    ``T ~ Bin(n, 2 pbar)``, ``h1 | T ~ Bin(T, 1/2)``, ``a = (e^eps0 - e^eps)/u`` (module docstring
    of blanket_fast, eqs. (1)-(2)); every term summed, nothing truncated.
    """
    mp.mp.dps = 30
    eps, eps0 = mp.mpf(eps), mp.mpf(eps0)
    pbar = 1 / (mp.e**eps0 + 1)
    u, E = mp.expm1(eps0), mp.e**eps
    a = (mp.e**eps0 - E) / u
    lq, l1 = mp.log(2 * pbar), mp.log(1 - 2 * pbar)
    tot = mp.mpf(0)
    for t in range(n + 1):
        s, h1 = mp.mpf(0), 0
        while a * t - (1 + E) * h1 > 0:
            s += mp.binomial(t, h1) * (a * t - (1 + E) * h1)
            h1 += 1
        if s > 0:
            lpt = mp.loggamma(n + 1) - mp.loggamma(t + 1) - mp.loggamma(n - t + 1) + t * lq + (n - t) * l1
            tot += mp.e ** (lpt - t * mp.log(2)) * s
    return float(mp.log(u / n * tot))


@pytest.mark.parametrize(
    "eps0, frac, n", [(1.0, 1 - 1e-3, 1500), (0.1, 1 - 1e-12, 1500), (13.5, 1 - 1e-12, 1500)]
)
def test_deep_k2_against_mpmath(eps0, frac, n):
    """Deltas down to e^-2000, where the exact evaluator's own bound may be loose: fast is tight."""
    eps = eps0 * frac
    ref = _mp_k2(eps, eps0, n)
    up, lo = (float(x) for x in certified_log_delta_bounds(eps, 2, eps0, n))
    assert lo - 1e-12 * abs(ref) <= ref <= up + 1e-12 * abs(ref)
    assert up - ref <= math.log1p(DEFAULT_RTOL) + 1e-12 * abs(ref)


@pytest.mark.parametrize(
    "k, eps0, n, frac",
    [
        (2, 0.2, 6, 1 - 1e-14),
        (5, 1.2, 8, 1 - 1e-14),
        (6, 0.21, 4, 1 - 1e-14),
        (2, 7.8, 2, 1 - 1e-10),
        (4, 13.5, 7, 1 - 1e-12),
        (3, 30.0, 9, 1 - 1e-6),
    ],
)
def test_eps_next_to_eps0_against_40_digit_sum(k, eps0, n, frac):
    """eps within 1e-14 of eps0, where plain double-precision brute force loses its digits too."""
    from test_blanket_fast import mp_blanket_log_delta

    eps = eps0 * frac
    ref = mp_blanket_log_delta(eps, k, eps0, n)
    up, lo = (float(x) for x in certified_log_delta_bounds(eps, k, eps0, n))
    assert lo - 1e-12 * abs(ref) <= ref <= up + 1e-12 * abs(ref)
    assert up - ref <= math.log1p(DEFAULT_RTOL) + 1e-12 * abs(ref)
