"""Certified worst case of shuffled k-RR for k >= 4 by boxes (worst_case_boxes): brute force and properties."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.shuffled_krr import worst_case_boxes as B
from shuffle_accounting.shuffled_krr import worst_case_multi as W
from shuffle_accounting.shuffled_krr.blanket import certified_log_delta
from shuffle_accounting.shuffled_krr.exact import histogram_log_pq


def _exact(k, eps0, counts, eps):
    """(H(P || Q), H(Q || P)) of one concrete dataset (full histogram, exact enumeration)."""
    lp, lq = histogram_log_pq(k, eps0, tuple(counts))
    P, Q = np.exp(lp.ravel()), np.exp(lq.ravel())
    E = math.exp(eps)
    return float(np.sum(np.maximum(P - E * Q, 0.0))), float(np.sum(np.maximum(Q - E * P, 0.0)))


def _configs(k, m):
    """Every configuration of m users over R = {2, ..., k - 1} up to relabelling R (sorted counts)."""
    for cfg in itertools.product(range(m + 1), repeat=k - 2):
        if sum(cfg) == m and list(cfg) == sorted(cfg, reverse=True):
            yield cfg


def _all_datasets(k, n):
    for c0 in range(n):
        for c1 in range(n - c0):
            for cfg in _configs(k, n - 1 - c0 - c1):
                yield c0, c1, cfg


@pytest.mark.parametrize(
    "k,n,eps0s",
    [(4, 7, (1.0, 4.0)), (4, 6, (0.5, 8.0)), (5, 6, (2.0, 4.0)), (5, 5, (1.0, 8.0)), (6, 5, (1.0, 4.0))],
)
def test_leaf_bound_dominates_every_dataset(k, n, eps0s):
    """F(c0, c1) >= the exact delta of every dataset with those (c0, c1), both directions; the
    exhibited (lower) value equals the exact delta of the concrete dataset D_c (rest at 2)."""
    worst = 0.0
    for eps0 in eps0s:
        eng = B.Engine(k, eps0, n, -60.0)
        for eps in (0.0, 0.3 * eps0, 0.6 * eps0, 0.95 * eps0):
            for c0 in range(n):
                for c1 in range(n - c0):
                    m = n - 1 - c0 - c1
                    up_f, up_r, lo_f, lo_r = eng.reduced(c0, c1, m, (0,), eps)[0]
                    dc = _exact(k, eps0, (c0, c1, m) + (0,) * (k - 3), eps)
                    for lo, ex in ((lo_f, dc[0]), (lo_r, dc[1])):
                        assert math.exp(lo) <= ex * (1 + 1e-9) + 1e-300
                        # the exhibited value is D_c's (to the bracket: rel 1e-10 of P + E Q amplified)
                        assert math.exp(lo) >= ex * (1 - 1e-6) - 1e-9 * (1.0 + math.exp(eps))
                    for cfg in _configs(k, m):
                        d = _exact(k, eps0, (c0, c1) + cfg, eps)
                        assert d[0] <= math.exp(up_f), (eps0, eps, c0, c1, cfg)
                        assert d[1] <= math.exp(up_r), (eps0, eps, c0, c1, cfg)
                        if d[0] > 1e-12:
                            worst = max(worst, d[0] / math.exp(up_f))
    assert worst > 1.0 - 1e-8  # tight: attained by D_c somewhere


@pytest.mark.parametrize("k,n,eps0", [(4, 6, 1.0), (5, 5, 4.0)])
def test_leaf_bound_with_the_coin_reveal_dominates_every_dataset(k, n, eps0):
    """The optional coin reveal (CR, off by default) is sound too, and never looser than without it."""
    for eps in (0.3 * eps0, 0.9 * eps0):
        for c0 in range(n):
            for c1 in range(n - c0):
                m = n - 1 - c0 - c1
                with_cr = B.reduced_bounds(k, eps0, c0, c1, m, [0], eps, -60.0, use_cr=True)[0]
                without = B.reduced_bounds(k, eps0, c0, c1, m, [0], eps, -60.0)[0]
                assert with_cr[0] <= without[0] + 1e-12 and with_cr[1] <= without[1] + 1e-12
                for cfg in _configs(k, m):
                    d = _exact(k, eps0, (c0, c1) + cfg, eps)
                    assert d[0] <= math.exp(with_cr[0]) and d[1] <= math.exp(with_cr[1])


@pytest.mark.parametrize("k,n,eps0", [(4, 6, 1.0), (5, 5, 4.0)])
def test_box_bounds_dominate_every_dataset_in_the_box(k, n, eps0):
    eng = B.Engine(k, eps0, n, -60.0, max_cells=2)
    data = list(_all_datasets(k, n))
    for eps in (0.2 * eps0, 0.7 * eps0):
        exact = {(c0, c1, cfg): _exact(k, eps0, (c0, c1) + cfg, eps) for c0, c1, cfg in data}
        for a0, b0, a1, b1 in [(0, 2, 0, 1), (1, 3, 0, 0), (0, n - 1, 0, 2), (2, 4, 1, 1), (0, 1, 0, 1)]:
            val, _, _ = eng.box_bound(a0, b0, a1, b1, eps)
            inside = [v for (c0, c1, _), v in exact.items() if a0 <= c0 <= b0 and a1 <= c1 <= b1]
            assert inside
            assert max(max(v) for v in inside) <= math.exp(val) * (1 + 1e-12)


@pytest.mark.parametrize("k,n,eps0", [(4, 7, 1.0), (5, 6, 4.0), (6, 5, 8.0)])
def test_certificate_dominates_every_dataset_and_exhibits_one(k, n, eps0):
    for eps in (0.3 * eps0, 0.8 * eps0):
        r = B.certify_boxes(k, eps0, n, eps=eps, tol=1e-4)
        brute = max(max(_exact(k, eps0, (c0, c1) + cfg, eps)) for c0, c1, cfg in _all_datasets(k, n))
        assert brute <= math.exp(r.log_delta) * (1 + 1e-12)
        assert B.covers(n, r.boxes)
        # the exhibited value is a concrete dataset's exact delta (the witness), below the brute max
        d = 0 if r.witness[0] >= r.witness[1] else 1
        ex = _exact(k, eps0, r.witness, eps)[0]
        assert (
            ex * (1 - 1e-6) - 1e-9 * (1.0 + math.exp(eps))
            <= math.exp(r.exhibited_log_delta)
            <= ex * (1 + 1e-9)
        )
        assert ex <= brute * (1 + 1e-12)
        del d
        assert r.ok and r.log_delta <= r.exhibited_log_delta + math.log1p(1e-4) + 1e-12


def test_epsilon_query_and_wiring():
    k, eps0, n, delta = 4, 1.0, 20, 1e-6
    c = W.certify_multi(k, eps0, n, delta=delta, tol=1e-3)
    assert W.verify(c)
    assert c.epsilon_lower <= c.epsilon
    assert c.log_delta <= math.log(delta)
    blanket = W.certify_multi(k, eps0, n, delta=delta, tol=1e-3, boxes=False)
    assert c.epsilon <= blanket.epsilon  # the smaller of the two certificates
    # the certified delta at the certified epsilon is at most delta for every dataset (brute force: n = 20 is
    # too large to enumerate every configuration; the concentrated leaves and the blanket bound it)
    assert float(certified_log_delta(c.epsilon, k, eps0, n)) >= c.log_delta - 1e-9


@pytest.mark.parametrize("e_hint", [1.999, 1.5, None])
def test_epsilon_lower_is_exhibited_whatever_the_hint(e_hint):
    """Regression (review rev3): e_hint above the seeds' true exhibited epsilon (about 1.9846 here)
    used to be returned as epsilon_lower (1.999) with a witness whose exact delta there is 6.6e-5
    < delta: a false lower bound. The witness must exceed delta at epsilon_lower, for any hint."""
    k, eps0, n, delta = 4, 2.0, 8, 1e-3
    r = B.certify_boxes(k, eps0, n, log_delta=math.log(delta), tol=1e-4, e_hint=e_hint)
    assert r.ok and 0.0 < r.epsilon_lower <= r.eps
    assert max(_exact(k, eps0, r.witness, r.epsilon_lower)) > delta
    brute = max(max(_exact(k, eps0, (c0, c1) + cfg, r.eps)) for c0, c1, cfg in _all_datasets(k, n))
    assert brute <= delta


def test_delta_query_properties():
    k, eps0, n = 5, 2.0, 16
    vals = []
    for eps in (0.2, 0.6, 1.0, 1.4):
        c = W.certify_multi(k, eps0, n, eps=eps, tol=1e-4)
        assert W.verify(c)
        assert c.exhibited_log_delta <= c.log_delta
        assert c.log_delta <= float(certified_log_delta(eps, k, eps0, n)) + 1e-12  # <= blanket
        vals.append(c.log_delta)
    assert all(a >= b for a, b in zip(vals, vals[1:]))  # monotone in eps
    assert c.boxes and c.gap <= 1e-4


def test_verify_rejects_tampering():
    c = W.certify_multi(4, 1.0, 14, eps=0.4, tol=1e-4)
    assert c.boxes and W.verify(c)
    import dataclasses

    bad = dataclasses.replace(c, log_delta=c.log_delta - 0.01, delta=math.exp(c.log_delta - 0.01))
    assert not W.verify(bad)
    assert not W.verify(dataclasses.replace(c, boxes=c.boxes[1:]))  # the cover has a hole
    assert not W.verify(dataclasses.replace(c, exhibited_log_delta=c.exhibited_log_delta + 0.01))


def test_bad_inputs():
    with pytest.raises(ParameterError, match="max_seconds"):
        W.certify_multi(4, 1.0, 20, eps=0.5, max_seconds=-1.0)
    with pytest.raises(ParameterError, match="max_seconds"):
        W.certify_multi(4, 1.0, 20, eps=0.5, max_seconds=float("nan"))
    with pytest.raises(ParameterError, match="k"):
        W.certify_multi(3, 1.0, 20, eps=0.5)


def test_budget_still_certifies():
    """With no time, the search stops at once; the answer is the (sound) type bound or blanket."""
    c = W.certify_multi(4, 1.0, 40, eps=0.5, tol=1e-6, max_seconds=0.0)
    assert W.verify(c)
    assert c.log_delta <= float(certified_log_delta(0.5, 4, 1.0, 40)) + 1e-12


@pytest.mark.parametrize(
    "k,eps0,n,query",
    [(4, 0.5, 40, dict(delta=1e-3)), (7, 0.05, 40, dict(eps=0.025)), (30, 3.0, 9, dict(delta=1e-9))],
)
def test_verify_recomputes_the_same_bounds(k, eps0, n, query):
    """Regression: each cell of B is computed on its own, so verify (other groupings of cells, other
    eps for boxes closed before the last eps step) recomputes bounds at most the certified value."""
    c = W.certify_multi(k, eps0, n, tol=1e-3, max_seconds=20, **query)
    assert W.verify(c)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(k=3, eps0=1.0, n=10, eps=0.1), "k"),
        (dict(k=4.5, eps0=1.0, n=10, eps=0.1), "k"),
        (dict(k=4, eps0=0.0, n=10, eps=0.1), "eps0"),
        (dict(k=4, eps0=50.0, n=10, eps=0.1), "eps0"),
        (dict(k=4, eps0=math.nan, n=10, eps=0.1), "eps0"),
        (dict(k=4, eps0=1.0, n=1, eps=0.1), "n"),
        (dict(k=4, eps0=1.0, n=10, eps=-0.1), "eps"),
        (dict(k=4, eps0=1.0, n=10, log_delta=0.0), "log_delta"),
        (dict(k=4, eps0=1.0, n=10, log_delta=math.inf), "log_delta"),
        (dict(k=4, eps0=1.0, n=10, eps=0.1, tol=0.0), "tol"),
        (dict(k=4, eps0=1.0, n=10, eps=0.1, max_evals=0), "max_evals"),
        (dict(k=4, eps0=1.0, n=10, eps=0.1, max_seconds=-1.0), "max_seconds"),
        (dict(k=4, eps0=1.0, n=10, eps=0.1, max_cells=0), "max_cells"),
        (dict(k=4, eps0=1.0, n=10), "eps"),
        (dict(k=4, eps0=1.0, n=10, eps=0.1, log_delta=-5.0), "eps"),
    ],
)
def test_certify_boxes_bad_inputs(kwargs, name):
    with pytest.raises(ParameterError, match=name):
        B.certify_boxes(**kwargs)
