"""Adversarial layer (a): the certified curve of shuffled k-RR against exact brute force.

* Every dataset for ``k <= 4``, ``n <= 7``: the exact ``delta(eps)`` of the shuffled histogram,
  maximised over every neighbouring pair (the target holds ``x0`` vs ``x1``, the others any
  multiset of values; values ``2..k-1`` are interchangeable, so one ordering of their counts
  suffices), on a grid of ``eps0`` up to 40 and of ``eps`` that includes ``eps0`` and its two
  neighbouring doubles. Asserts ``certified >= exact >= exhibited``.
* The one-outcome closed form at large ``n``: all other users at ``x0``, outcome "every report is
  ``x0``", privacy loss exactly ``eps0``, so ``delta(eps) >= p^n (1 - e^(eps - eps0))``.

Size: 242 datasets over the 21 pairs ``(k, n)``, each at 7 values of ``eps0`` and 7 or 8 of ``eps``
(about 13,000 (dataset, eps0, eps) checks of the certified value and 11,000 of the exhibited one);
the one-outcome bound at 114 settings ``(k, eps0, n)`` with 5 or 6 ``eps`` each.

Exactness. With ``r = e^eps0`` each user's report has weight ``r`` on its own value and ``1``
elsewhere, so ``P_D(h) = c_h(r) / (r + k - 1)^n`` with ``c_h`` a polynomial with non-negative
integer coefficients (``d_h`` likewise for ``D'``). The polynomials are computed once per
``(k, n)`` in integers (the same per-user convolution over histograms as the oracle of
``test_shuffled_krr_exact.py``, with polynomial instead of numeric weights, so that one enumeration
serves every ``eps0``) and evaluated in fixed point with 256 fractional bits: ``r`` and ``e^eps``
from 80-digit mpmath, every later step exact integer arithmetic, so the computed delta is within
``1e-60`` relative of the exact one. Comparisons allow ``1e-13`` relative in log space, far below
the engine's own ``1e-10`` outward rounding.
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
import pytest
from test_shuffled_krr_exact import compositions

from shuffle_accounting.shuffled_krr import ShuffledKRR

_BITS = 256
_ONE = 1 << _BITS
_TOL = 1e-13


def _fixed(x: mpmath.mpf) -> int:
    """``floor(x 2^256)`` (x computed with 80 digits)."""
    return int(mpmath.floor(x * _ONE))


def _hist_polys(k: int, values: list[int]) -> dict[tuple[int, ...], np.ndarray]:
    """Histogram -> integer coefficients of ``c_h`` (weight ``r`` on the own value, 1 elsewhere)."""
    n = len(values)
    start = np.zeros(n + 1, dtype=object)
    start[0] = 1
    dist = {(0,) * k: start}
    for x in values:
        new: dict[tuple[int, ...], np.ndarray] = {}
        for h, c in dist.items():
            for y in range(k):
                h2 = h[:y] + (h[y] + 1,) + h[y + 1 :]
                add = np.roll(c, 1) if y == x else c  # times r: shift the coefficients
                new[h2] = new[h2] + add if h2 in new else add.copy()
        dist = new
    return dist


@functools.cache
def _datasets(k: int, n: int) -> tuple[tuple[int, ...], ...]:
    """The counts of the other users of every dataset, one ordering of the values ``2..k-1``."""
    return tuple(o for o in compositions(n - 1, k) if list(o[2:]) == sorted(o[2:], reverse=True))


@functools.cache
def _all_pairs(k: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Stacked ``(C, D, starts, count)``: per dataset (:func:`_datasets`), one row per histogram of ``c_h`` and ``d_h``."""
    cs, ds, sizes = [], [], []
    for others in _datasets(k, n):
        values = [v for v in range(k) for _ in range(others[v])]
        P = _hist_polys(k, values + [0])
        Q = _hist_polys(k, values + [1])
        zero = np.zeros(n + 1, dtype=object)
        keys = sorted(set(P) | set(Q))
        cs.append(np.array([P.get(h, zero) for h in keys], dtype=object))
        ds.append(np.array([Q.get(h, zero) for h in keys], dtype=object))
        sizes.append(len(keys))
    starts = np.cumsum([0] + sizes[:-1])
    return np.concatenate(cs), np.concatenate(ds), starts, len(sizes)


def exact_log_deltas_each(k: int, n: int, eps0: float, eps_list: list[float]) -> np.ndarray:
    """``log H_{e^eps}(P_D || Q_D)`` (target ``0 -> 1``; ``-inf`` for 0) of every dataset of
    :func:`_datasets`, shape ``(len(eps_list), datasets)``, to ~60 digits. The reverse direction of
    the dataset ``(c0, c1, rest)`` is the forward one of ``(c1, c0, rest)`` (relabel ``0 <-> 1``)."""
    C, D, starts, _ = _all_pairs(k, n)
    with mpmath.workdps(80):
        r = mpmath.exp(mpmath.mpf(eps0))
        R = _fixed(r)
        c, d = C[:, n].copy(), D[:, n].copy()
        for j in range(n - 1, -1, -1):  # Horner in fixed point: c = 2^(256 n) c_h(R / 2^256)
            c = c * R + C[:, j] * (1 << (_BITS * (n - j)))
            d = d * R + D[:, j] * (1 << (_BITS * (n - j)))
        log_norm = float(_BITS * (n + 1) * mpmath.log(2) + n * mpmath.log(r + k - 1))
        out = []
        for eps in eps_list:
            E = _fixed(mpmath.exp(mpmath.mpf(eps)))
            diff = c * _ONE - E * d
            pos = np.where(diff > 0, diff, 0)
            sums = np.add.reduceat(pos, starts)
            out.append([math.log(s) - log_norm if s > 0 else -math.inf for s in sums])
    return np.array(out, dtype=float)


def _exact_log_deltas(k: int, n: int, eps0: float, eps_list: list[float]) -> list[float]:
    """``log max_D delta_D(eps)`` (``-inf`` for 0) over every dataset, to ~60 digits."""
    return [float(x) for x in exact_log_deltas_each(k, n, eps0, eps_list).max(axis=1)]


def _eps_grid(eps0: float) -> list[float]:
    grid = {
        0.0,
        0.5 * eps0,
        0.9 * eps0,
        eps0,
        float(np.nextafter(eps0, 0.0)),
        float(np.nextafter(eps0, np.inf)),
    }
    if eps0 > 1e-3:
        grid.add(eps0 - 1e-3)
    grid.add(eps0 * (1.0 - 1e-9))
    return sorted(grid)


EPS0_GRID = [0.05, 0.7, math.log(13.0), 5.0, 13.7, 25.0, 40.0]


def _below(a: float, b: float) -> bool:
    """``a < b`` beyond the comparison tolerance (log space)."""
    if b == -math.inf:
        return False
    if a == -math.inf:
        return True
    return a < b - _TOL * (1.0 + abs(b))


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7])
def test_certified_at_least_exact_every_dataset(k, n):
    assert _all_pairs(k, n)[3] >= 1
    for eps0 in EPS0_GRID:
        eps_list = _eps_grid(eps0)
        exact = _exact_log_deltas(k, n, eps0, eps_list)
        cert = ShuffledKRR(k, eps0, n).log_delta(np.array(eps_list))
        for eps, c, x in zip(eps_list, cert, exact):
            assert not _below(float(c), x), (k, n, eps0, eps, float(c), x)
            if eps >= eps0:
                assert x == -math.inf and c == -math.inf


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
@pytest.mark.parametrize("eps0", EPS0_GRID)
def test_exhibited_at_most_exact_every_dataset(k, n, eps0):
    """The exhibited lower bound is a concrete dataset's exact delta: never above the worst case."""
    eps_list = _eps_grid(eps0)
    exact = _exact_log_deltas(k, n, eps0, eps_list)
    low = ShuffledKRR(k, eps0, n).log_delta_lower(np.array(eps_list))
    for eps, lo, x in zip(eps_list, low, exact):
        assert not _below(x, float(lo)), (k, n, eps0, eps, float(lo), x)


def test_brute_force_counts():
    """The enumeration covers every dataset (recorded in tests/README.md)."""
    counts = {(k, n): _all_pairs(k, n)[3] for k in (2, 3, 4) for n in range(1, 8)}
    assert counts[(2, 7)] == 7 and counts[(3, 7)] == 28 and counts[(4, 7)] == 50
    assert sum(counts.values()) == 242


def _one_outcome_log_lower(k: int, eps0: float, n: int, eps: float) -> float:
    """``log(p^n (1 - e^(eps - eps0)))`` with 50 digits."""
    with mpmath.workdps(50):
        e0 = mpmath.mpf(eps0)
        log_p = -mpmath.log1p((k - 1) * mpmath.exp(-e0))
        gap = -mpmath.expm1(mpmath.mpf(eps) - e0)
        return float(n * log_p + mpmath.log(gap)) if gap > 0 else -math.inf


_LARGE_EPS0 = [10.0, 13.5, 20.0, 40.0, 100.0, 300.0, 699.0, 700.0]


@pytest.mark.parametrize(
    "eps0, n",
    [(e, n) for e in [0.5, 3.0] for n in [2, 9, 1000]]
    + [(e, n) for e in _LARGE_EPS0 for n in [2, 9, 1000, 10**6]],
)
@pytest.mark.parametrize("k", [2, 3, 50])
def test_one_outcome_closed_form_lower_bound(eps0, k, n):
    m = ShuffledKRR(k, eps0, n)
    eps_list = sorted(
        {
            0.0,
            0.5 * eps0,
            max(0.0, eps0 - 1.0),
            eps0 - 1e-3,
            eps0 * (1.0 - 1e-12),
            float(np.nextafter(eps0, 0.0)),
        }
    )
    cert = m.log_delta(np.array(eps_list))
    for eps, c in zip(eps_list, cert):
        low = _one_outcome_log_lower(k, eps0, n, eps)
        assert not _below(float(c), low), (k, eps0, n, eps, float(c), low)
        assert c <= 0.0


@pytest.mark.parametrize(
    "k, eps0, n, eps, exhibited",
    [
        (3, 30.0, 5, 29.97, 0.0295),  # issue 10: the certified value was 0.0
        (2, 1.0, 100, float(np.nextafter(1.0, 0.0)), 2.7e-30),  # was 0.0
    ],
)
def test_issue_10_reproducers_delta(k, eps0, n, eps, exhibited):
    assert ShuffledKRR(k, eps0, n).delta(eps) >= exhibited


@pytest.mark.parametrize(
    "k, eps0, n, delta",
    [(3, 30.0, 5, 1e-6), (3, 20.0, 1000, 1e-6), (3, 14.0, 3, 1e-12)],
)
def test_issue_10_reproducers_epsilon(k, eps0, n, delta):
    """The returned epsilon is one where even the one-outcome exhibited delta is <= delta."""
    e = ShuffledKRR(k, eps0, n).epsilon(delta)
    assert e <= eps0
    assert _one_outcome_log_lower(k, eps0, n, e) <= math.log(delta) + 1e-12
