"""Issue 12: the certified curve of ShuffledKRR at a billion users (the default certified path).

From :data:`~shuffle_accounting.shuffled_krr.mechanism.FAST_BLANKET_MIN_N` users on, ``epsilon``
and ``log_delta`` are certified by the sub-linear evaluator
(:mod:`~shuffle_accounting.shuffled_krr.blanket_fast`). At ``n = 1e9`` they must lie above what
concrete datasets exhibit (the cheap exhibited paths only), decrease with ``n`` between ``1e8`` and
``1e9``, and lie below every literature bound that applies at the same point.
"""

from __future__ import annotations

import math

import pytest

from shuffle_accounting.literature.registry import LITERATURE_BOUNDS, literature_epsilons
from shuffle_accounting.shuffled_krr import ShuffledKRR

N9 = 10**9
DELTA = 1e-9


@pytest.mark.parametrize("k, eps0, tight", [(10, 2.0, True), (100, 4.0, True), (2, 1.0, False)])
def test_billion_certified_above_exhibited(k, eps0, tight):
    """Exhibited by concrete datasets (``log_delta_lower``, the cheap path) <= certified."""
    m = ShuffledKRR(k, eps0, N9)
    eps = m.epsilon(DELTA)
    assert 0.0 < eps < eps0
    assert m.delta(eps) <= DELTA  # the round trip holds
    for e in (0.5 * eps, eps):
        assert m.log_delta_lower(e) <= m.log_delta(e)
    if tight:  # a concrete dataset needs more than 0.99 eps: certified within 1 % of exhibited
        assert m.log_delta_lower(0.99 * eps) > math.log(DELTA)


def test_monotone_in_n_between_1e8_and_1e9():
    ms = [ShuffledKRR(10, 2.0, n) for n in (10**8, 3 * 10**8, 10**9)]
    # the certified curve at one fixed eps decreases with n (the true curve is monotone: more users
    # only add blanket noise, a common Markov kernel on both datasets)
    ld = [m.log_delta(3e-4) for m in ms]
    assert ld[0] > ld[1] > ld[2] > -math.inf
    # and so does the certified epsilon
    assert ms[0].epsilon(DELTA) > ms[2].epsilon(DELTA) > 0.0


def test_billion_below_every_applicable_literature_bound():
    k, eps0 = 10, 2.0
    ours = ShuffledKRR(k, eps0, N9).epsilon(DELTA)
    rows = literature_epsilons(k, eps0, N9, DELTA)
    applicable = [r for r in rows if r.epsilon is not None]
    assert len(rows) == len(LITERATURE_BOUNDS)
    assert len(applicable) >= 7  # every bound but Erlingsson et al. (eps0 < 1/2 only)
    for r in applicable:
        assert ours <= r.epsilon, f"{r.name}: {r.epsilon!r} < certified {ours!r}"
