"""Exact integer re-computation of the k = 2 interval bound U(c1, c2) for every interval, n <= 30.

Issue 11's required test: "U >= max delta_c over every interval for all n <= 30 and several rational
p and e^eps; U([c, c]) == delta_c exactly".  Everything below is recomputed from the definitions in
the docstring of :mod:`shuffle_accounting.shuffled_krr.worst_case` (F3) with exact integer
arithmetic; none of the library's float code is used except in the last check, which compares the
library's certified float bound with the exact values.

Integer scaling.  With ``p = a / d`` (``pbar = (d - a) / d``), ``E = e^eps = r / s`` and
``gamma = 2 pbar``:

* a user at 0 reports 1 with probability ``pbar`` (polynomial ``(a + (d - a) x) / d``), a user at 1
  with probability ``p`` (``((d - a) + a x) / d``), a fair bit is ``(1 + x) / 2``;
* ``Y_{i, j, b} = Bin(i, pbar) + Bin(j, p) + Bin(b, 1/2)`` has integer numerators over
  ``d^(i + j) 2^b``, and with the target (``T ~ Bern(pbar)`` under ``D``, ``Bern(p)`` under ``D'``)
  ``g = H_E(T + Y) = sum_s (P(s) - E Q(s))_+`` is ``HN_{i, j, b} / (d^(i + j + 1) s 2^b)`` with
  ``HN = sum_s (s (a Y(s) + (d - a) Y(s-1)) - r ((d - a) Y(s) + a Y(s-1)))_+`` an integer;
* ``U(c1, c2) = sum_b P(B = b) g(b)``, ``B ~ Bin(m, gamma)``, ``m = c2 - c1``,
  ``P(B = b) = C(m, b) (2 (d - a))^b (2 a - d)^(m - b) / d^m``: the ``2^b`` cancel and
  ``U(c1, c2) = UN / (d^n s)`` with ``UN = sum_b C(m, b) (d - a)^b (2 a - d)^(m - b) HN_{c1, n-1-c2, b}``.
* ``delta_c`` is computed independently, straight from the law of ``S`` over all ``n`` users
  (closed-form coefficients of ``(a + (d-a) x)^u ((d-a) + a x)^v``, both directions), also over
  ``d^n s``.

So every comparison is between integers.  ``HN`` depends on ``(i, j, b)`` only, not on ``n``, so one
table (``i + j + b <= 29``: 4960 entries, built by prefix products) serves every ``n <= 30``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from shuffle_accounting.shuffled_krr import worst_case as W

NMAX = 30

# (p, E = e^eps) with 1/2 < p < 1 and 1 <= E; E >= p / pbar gives delta = 0 (kept as a case)
_PAIRS = [
    (Fraction(3, 4), Fraction(3, 2)),
    (Fraction(2, 3), Fraction(1)),
    (Fraction(9, 10), Fraction(5, 2)),
    (Fraction(11, 20), Fraction(21, 20)),
    (Fraction(19, 20), Fraction(7)),
    (Fraction(7, 10), Fraction(7, 3)),  # E = p / pbar: every delta is 0
]


def _times(v: list[int], x0: int, x1: int) -> list[int]:
    """Coefficients of ``v(x) (x0 + x1 x)``."""
    out = [x0 * c for c in v] + [0]
    for k, c in enumerate(v):
        out[k + 1] += x1 * c
    return out


def _hn_table(p: Fraction, E: Fraction) -> dict[tuple[int, int, int], int]:
    """``HN_{i, j, b}`` (module docstring) for every ``i + j + b <= NMAX - 1``."""
    a, d = p.numerator, p.denominator
    ab = d - a
    r, s = E.numerator, E.denominator

    def hn(Y: list[int]) -> int:
        tot, prev = 0, 0
        for cur in [*Y, 0]:
            v = s * (a * cur + ab * prev) - r * (ab * cur + a * prev)  # s d^.. (P(s) - E Q(s))
            if v > 0:
                tot += v
            prev = cur
        return tot

    out: dict[tuple[int, int, int], int] = {}
    A = [1]  # Bin(i, pbar)
    for i in range(NMAX):
        base = A
        for j in range(NMAX - i):  # base = Bin(i, pbar) + Bin(j, p)
            Y = base
            for b in range(NMAX - i - j):
                out[i, j, b] = hn(Y)
                Y = _times(Y, 1, 1)  # + one fair bit
            base = _times(base, ab, a)
        A = _times(A, a, ab)
    return out


def _power_coeffs(u: int, v: int, a: int, ab: int) -> list[int]:
    """Coefficients of ``(a + ab x)^u (ab + a x)^v`` by the closed-form double sum."""
    return [
        sum(
            math.comb(u, i) * ab**i * a ** (u - i) * math.comb(v, k - i) * a ** (k - i) * ab ** (v - k + i)
            for i in range(max(0, k - v), min(u, k) + 1)
        )
        for k in range(u + v + 1)
    ]


def _direct_deltas(n: int, p: Fraction, E: Fraction) -> tuple[list[int], list[int]]:
    """``(hP_c, hQ_c)`` numerators over ``d^n s``: ``H_E(P_c || Q_c)`` and ``H_E(Q_c || P_c)``
    for the dataset with ``c`` other users at 0 and ``n - 1 - c`` at 1 (the target at 0 in ``D``)."""
    a, d = p.numerator, p.denominator
    ab = d - a
    r, s = E.numerator, E.denominator
    hp, hq = [], []
    for c in range(n):
        P = _power_coeffs(c + 1, n - 1 - c, a, ab)
        Q = _power_coeffs(c, n - c, a, ab)
        assert sum(P) == sum(Q) == d**n
        hp.append(sum(max(s * x - r * y, 0) for x, y in zip(P, Q)))
        hq.append(sum(max(s * y - r * x, 0) for x, y in zip(P, Q)))
    return hp, hq


def _interval_numerators(n: int, p: Fraction, hn: dict) -> np.ndarray:
    """``UN[c1, c2]`` (over ``d^n s``) for every ``0 <= c1 <= c2 <= n - 1`` (object array)."""
    a, d = p.numerator, p.denominator
    ab = d - a
    out = np.zeros((n, n), dtype=object)
    for m in range(n):
        w = [math.comb(m, b) * ab**b * (2 * a - d) ** (m - b) for b in range(m + 1)]
        for c1 in range(n - m):
            c2 = c1 + m
            out[c1, c2] = sum(wb * hn[c1, n - 1 - c2, b] for b, wb in enumerate(w))
    return out


@pytest.fixture(
    scope="module",
    params=_PAIRS,
    ids=lambda pe: f"p{pe[0].numerator}_{pe[0].denominator}-E{pe[1].numerator}_{pe[1].denominator}",
)
def exact(request):
    """``(p, E, {n: (UN, hP, hQ)})`` for every ``2 <= n <= NMAX``."""
    p, E = request.param
    hn = _hn_table(p, E)
    per_n = {}
    for n in range(2, NMAX + 1):
        hp, hq = _direct_deltas(n, p, E)
        per_n[n] = (_interval_numerators(n, p, hn), hp, hq)
    return p, E, per_n


def test_every_interval_every_n_up_to_30(exact):
    p, E, per_n = exact
    zero = E >= p / (1 - p)
    for n, (UN, hp, hq) in per_n.items():
        delta = [max(x, y) for x, y in zip(hp, hq)]
        for c in range(n):
            assert UN[c, c] == hp[c]  # U([c, c]) = h_c exactly (an independent computation)
            assert hq[c] == hp[n - 1 - c]  # (F1) mirror: h'_c = h_{n-1-c}, so delta_c = delta_{n-1-c}
            assert delta[c] == max(UN[c, c], UN[n - 1 - c, n - 1 - c])
        # (F3) for every interval: U(c1, c2) >= h_c on it, and the two-direction bound >= delta_c
        run_h = np.empty((n, n), dtype=object)
        for c1 in range(n):
            best = -1
            for c2 in range(c1, n):
                best = max(best, hp[c2])
                run_h[c1, c2] = best
        for c1 in range(n):
            for c2 in range(c1, n):
                assert UN[c1, c2] >= run_h[c1, c2]
                assert max(UN[c1, c2], UN[n - 1 - c2, n - 1 - c1]) >= max(delta[c1 : c2 + 1])
        # the whole range is the blanket: it is the largest interval bound; and the bound is not vacuous
        assert UN[0, n - 1] == max(UN[c1, c2] for c1 in range(n) for c2 in range(c1, n))
        assert UN[0, n - 1] <= p.denominator**n * E.denominator
        if zero:
            assert not any(delta) and UN[0, n - 1] == 0
        else:
            assert min(delta) > 0


def test_interval_bound_is_monotone_under_refinement(exact):
    """A sub-interval's bound never exceeds its parent's, and U is not just large everywhere.

    Why it must hold: a user fixed at 0 (at 1) is a free user whose coin is *not* revealed, so the
    view of ``[c1 + 1, c2]`` (of ``[c1, c2 - 1]``) is the view of ``[c1, c2]`` with one coin
    marginalised out, and the hockey-stick divergence of a mixture is at most the mixture of the
    divergences (joint convexity).  Strictness: some leaf is below the blanket once ``n >= 4``.
    """
    _, _, per_n = exact
    for n, (UN, _, _) in per_n.items():
        for c1 in range(n):
            for c2 in range(c1 + 1, n):
                assert UN[c1, c2] >= max(UN[c1 + 1, c2], UN[c1, c2 - 1])
        if n >= 4 and UN[0, n - 1] > 0:
            assert min(UN[c, c] for c in range(n)) < UN[0, n - 1]


def test_library_float_bound_dominates_the_exact_values(exact):
    """The library's certified float bound ``log U(c1, c2)`` (``WorstCaseProblem.interval_many``,
    what ``interval_log_bound`` and the branch and bound evaluate) >= log of the exact max of
    ``h_c`` over the interval, for every interval; each ``n <= 30`` is checked with one of the
    rational pairs with ``delta > 0`` (``n mod len(live)``: ~0.7 ms per float evaluation, 7000
    intervals in all)."""
    p, E, per_n = exact
    live = [pe for pe in _PAIRS if pe[1] < pe[0] / (1 - pe[0])]
    eps0 = math.log(p / (1 - p))
    eps = math.log(E)
    e = np.array([eps])
    for n, (UN, hp, _) in per_n.items():
        if (p, E) in live and n % len(live) != live.index((p, E)):
            continue
        if (p, E) not in live and n != NMAX:  # delta = 0: one n, the bound must be 0 too
            continue
        D = p.denominator**n * E.denominator
        pr = W.WorstCaseProblem(eps0, n, -60.0)
        for c1 in range(n):
            best = 0
            for c2 in range(c1, n):
                best = max(best, hp[c2])
                lib = float(pr.interval_many(c1, c2, e)[0, 0])
                if best == 0:
                    assert math.exp(lib) <= 1e-12
                    continue
                exact_log = math.log(best) - math.log(D)  # exact ints: math.log is correctly scaled
                assert lib >= exact_log
                # n <= 30 < 32 free users: every B is its own cell, so the float bound is also tight
                assert lib <= math.log(UN[c1, c2]) - math.log(D) + 1e-7
