"""Certified worst cases at the extremes, against the exact (~60-digit) enumeration of every dataset.

Review rev3 of the k >= 4 box search (``worst_case_boxes``), the k = 3 branch and bound
(``worst_case_k``) and the general bracket (``_krr_spread``). What the other tests do not cover
and this file does:

* the exact reference (integer polynomials in ``e^eps0`` evaluated in 256-bit fixed point, from
  ``test_adversarial_bruteforce``) rather than floats, so ``eps = eps0 (1 - 1e-9)`` and
  ``eps0`` minus one ulp (deltas of ``e^-35`` and below, resolved there) are checked;
* ``eps0`` at both ends of the range (``0.01`` and ``12``), ``k = 5``;
* epsilon queries down to ``delta = 1e-300``: the certified epsilon has every dataset at most
  ``delta``, and the witness is above ``delta`` at the exhibited epsilon;
* the searches stopped by tiny budgets (``max_evals = 1``; ``max_cells = 1`` for k = 3) still certify;
* ``ShuffledKRR(..., method="worst-case")`` for ``k = 4, 5`` (the box search);
* the ``_krr_spread`` bracket's ends depend on ``(c0, c1, c_2 + ... + c_{k-1})`` only, so its
  lower end must be below the *smallest* and its upper end above the *largest* exact delta over
  every configuration with those counts, at every truncation level and budget.

Every dataset is enumerated (``k = 3, n = 7``: 28 datasets; ``k = 4, n = 6``: 30; ``k = 5, n = 5``:
20). Comparisons allow ``1e-12`` relative in log space.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_adversarial_bruteforce import _datasets, exact_log_deltas_each

from shuffle_accounting.shuffled_krr import ShuffledKRR
from shuffle_accounting.shuffled_krr import _krr_spread as S
from shuffle_accounting.shuffled_krr import worst_case_boxes as B
from shuffle_accounting.shuffled_krr import worst_case_k as K

_TOL = 1e-12
EPS0S = [0.01, 12.0]


def _eps_list(eps0: float) -> list[float]:
    return [0.0, 0.5 * eps0, eps0 * (1.0 - 1e-9), float(np.nextafter(eps0, 0.0))]


def _le(a: float, b: float) -> bool:
    """``a <= b`` up to the comparison tolerance (log space)."""
    return a == -math.inf or b == math.inf or a <= b + _TOL * (1.0 + abs(b))


class _Exact:
    """Exact log deltas of every dataset (both directions) at a list of eps."""

    def __init__(self, k: int, n: int, eps0: float, eps_list: list[float]) -> None:
        self.k, self.n, self.eps0 = k, n, eps0
        self.data = _datasets(k, n)
        self.index = {d: i for i, d in enumerate(self.data)}
        self.fwd = dict(zip(eps_list, exact_log_deltas_each(k, n, eps0, eps_list)))

    def of(self, others: tuple[int, ...], eps: float) -> float:
        """``log delta`` (the larger direction) of one dataset (values ``2..k-1`` sorted)."""
        if eps not in self.fwd:
            self.fwd[eps] = exact_log_deltas_each(self.k, self.n, self.eps0, [eps])[0]
        o = tuple(others)
        o = o[:2] + tuple(sorted(o[2:], reverse=True))
        swapped = (o[1], o[0]) + o[2:]
        row = self.fwd[eps]
        return float(max(row[self.index[o]], row[self.index[swapped]]))

    def worst(self, eps: float) -> float:
        if eps not in self.fwd:
            self.of(self.data[0], eps)
        return float(np.max(self.fwd[eps]))


@pytest.mark.parametrize("k,n,eps0", [(4, 6, 12.0), (5, 5, 0.01)])
def test_box_search_at_the_extremes(k, n, eps0):
    ex = _Exact(k, n, eps0, _eps_list(eps0))
    mech = ShuffledKRR(k, eps0, n)
    for eps in _eps_list(eps0):
        truth = ex.worst(eps)
        for kw in ({}, {"max_evals": 1}):
            r = B.certify_boxes(k, eps0, n, eps=eps, tol=1e-4, **kw)
            assert _le(truth, r.log_delta), (eps, kw, r.log_delta, truth)
            assert B.covers(n, r.boxes)
            assert _le(r.exhibited_log_delta, ex.of(r.witness, eps))
        assert _le(truth, float(mech.log_delta(eps, method="worst-case")))
    for log_delta, kw in ((math.log(1e-3), {}), (math.log(1e-3), {"max_evals": 1}), (math.log(1e-300), {})):
        r = B.certify_boxes(k, eps0, n, log_delta=log_delta, tol=1e-4, **kw)
        if r.ok:
            assert _le(ex.worst(r.eps), log_delta), (log_delta, kw, r.eps)
        if r.epsilon_lower > 0:
            assert ex.of(r.witness, r.epsilon_lower) > log_delta
        if not kw:
            e = mech.epsilon(math.exp(log_delta), method="worst-case")
            assert e <= eps0 and _le(ex.worst(e), log_delta)


@pytest.mark.parametrize("eps0", EPS0S)
def test_k3_branch_and_bound_at_the_extremes(eps0):
    k, n = 3, 7
    ex = _Exact(k, n, eps0, _eps_list(eps0))
    budgets = ({}, {"max_evals": 1}, {"max_cells": 1.0})
    for eps in _eps_list(eps0):
        for kw in budgets:
            c = K.certify_k(3, eps0, n, eps=eps, **kw)
            assert K.verify(c)
            assert _le(ex.worst(eps), c.log_delta), (eps, kw, c.log_delta)
            assert _le(c.exhibited_log_delta, ex.of(c.worst_others, eps))
    for delta in (1e-3, 1e-300):
        for kw in budgets[:2]:
            c = K.certify_k(3, eps0, n, delta=delta, **kw)
            assert K.verify(c)
            assert _le(ex.worst(c.epsilon), math.log(delta)), (delta, kw, c.epsilon)
            if c.epsilon_lower > 0:
                assert ex.of(c.worst_others, c.epsilon_lower) > math.log(delta)


@pytest.mark.parametrize("k,n,eps0", [(4, 6, 12.0), (5, 5, 1.3), (4, 6, 0.01)])
def test_spread_bracket_holds_for_every_configuration(k, n, eps0):
    eps_list = _eps_list(eps0)
    ex = _Exact(k, n, eps0, eps_list)
    groups: dict[tuple[int, int, int], list[tuple[int, ...]]] = {}
    for d in ex.data:
        groups.setdefault((d[0], d[1], sum(d[2:])), []).append(d)
    for (c0, c1, cr), members in groups.items():
        vals = np.array([[ex.of(d, e) for d in members] for e in eps_list])
        low_truth, high_truth = vals.min(axis=1), vals.max(axis=1)
        for t, budget in ((-85.0, 1e12), (-20.0, 0.0)):
            lo, up, _ = S.spread_log_bounds(k, eps0, members[0], eps_list, t, budget)
            for i in range(len(eps_list)):
                assert _le(lo[i], low_truth[i]), ((c0, c1, cr), eps_list[i], t, budget, lo[i], low_truth[i])
                assert _le(high_truth[i], up[i]), ((c0, c1, cr), eps_list[i], t, budget, up[i], high_truth[i])
