"""Over budget, the k = 2 branch and bound hands back what it has certified (issue 11).

``WorkBudgetExceeded.partial`` is a complete, re-checkable certificate that is only looser than
the tolerance asked for: the cover reached so far for a delta query, the pieces left settled at
one larger epsilon for an epsilon query. ``method="auto"`` takes it (with the blanket's value,
the smaller of the two) instead of dropping to the blanket alone, and ``epsilon_lower`` /
``worst_dataset`` report its witness instead of raising. Checked here against brute force over
every dataset (exact pmfs by convolution of the two binomials).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffle_accounting._validation import WorkBudgetExceeded, check_work
from shuffle_accounting.shuffled_krr import ShuffledKRR
from shuffle_accounting.shuffled_krr import worst_case as W

from _brute import brute_deltas_k2 as brute_deltas


def _le(a: float, b: float, rel: float = 1e-9) -> bool:
    return a <= b + rel * abs(b)


def test_no_partial_for_up_front_budget_errors():
    with pytest.raises(WorkBudgetExceeded) as info:
        check_work("demo", 500, max_work=100, alternative="use less")
    assert info.value.partial is None


@pytest.mark.parametrize("eps0,n", [(1.0, 60), (0.5, 200)])
@pytest.mark.parametrize("max_evals", [1, 3, 12])
def test_partial_delta_certificate_bounds_every_dataset(eps0, n, max_evals):
    for eps in (0.0, 0.02, 0.2):
        truth = float(np.max(brute_deltas(eps0, n, eps)))
        try:
            cert = W.certify(eps0, n, eps=eps, max_evals=max_evals)
        except WorkBudgetExceeded as exc:
            cert = exc.partial
            assert "partial" in str(exc)
        assert W.verify(cert)
        assert _le(truth, math.exp(cert.log_delta)), (eps, truth, cert.log_delta)
        assert _le(math.exp(cert.exhibited_log_delta), truth)


@pytest.mark.parametrize(
    "eps0,n,max_evals",
    [(e, n, b) for e, n in [(1.0, 60), (0.5, 200)] for b in (1, 3, 12)] + [(2.0, 1000, 40), (2.0, 1000, 100)],
)
def test_partial_epsilon_certificate_is_settled_and_sound(eps0, n, max_evals):
    # (budgets 40 and 100 at n = 1000 stop inside the rounds over blocks of leaves, whose
    # leaves left are settled in blocks)
    for frac in (0.99, 0.5, 1e-3):  # just below delta(0), in the middle, the tail
        delta = frac * float(np.max(brute_deltas(eps0, n, 0.0)))
        try:
            cert = W.certify(eps0, n, delta=delta, max_evals=max_evals)
        except WorkBudgetExceeded as exc:
            cert = exc.partial
        assert W.verify(cert)
        assert 0.0 < cert.epsilon <= eps0
        assert _le(float(np.max(brute_deltas(eps0, n, cert.epsilon))), delta)  # certified
        assert cert.epsilon_lower <= cert.epsilon
        if cert.epsilon_lower > 0:  # the witness really exceeds delta there
            assert brute_deltas(eps0, n, cert.epsilon_lower)[cert.worst_c] > delta


def test_partial_epsilon_is_not_the_trivial_eps0(monkeypatch):
    # three evaluations cannot close the gap, but the settled cover is far below eps0 (blocks
    # of leaves off: one block of all 200 leaves would close it in one evaluation)
    monkeypatch.setattr(W, "LEAF_BLOCK", 1)
    monkeypatch.setattr(W, "MAX_LEAF_BLOCK", 1)
    delta = 0.5 * float(np.max(brute_deltas(0.5, 200, 0.0)))
    with pytest.raises(WorkBudgetExceeded) as info:
        W.certify(0.5, 200, delta=delta, max_evals=3)
    cert = info.value.partial
    assert cert.epsilon < 0.1 * 0.5
    full = W.certify(0.5, 200, delta=delta)
    assert full.epsilon <= cert.epsilon


def test_auto_uses_the_partial_certificates_over_budget(monkeypatch):
    eps0, n = 0.5, 200
    m = ShuffledKRR(2, eps0, n)
    d = 0.99 * float(np.max(brute_deltas(eps0, n, 0.0)))  # the flat band, where budgets run out
    bl_eps, bl_delta = m.epsilon(d, method="blanket"), m.delta(0.01, method="blanket")
    real = W.certify
    monkeypatch.setattr(W, "certify", lambda *a, **k: real(*a, **{**k, "max_evals": 100}))
    monkeypatch.setattr(W, "LEAF_BLOCK", 1)  # no blocks of leaves: they would converge here
    monkeypatch.setattr(W, "MAX_LEAF_BLOCK", 1)
    with pytest.raises(WorkBudgetExceeded):
        m.certificate(delta=d)
    with pytest.raises(WorkBudgetExceeded):
        m.certificate(eps=0.01)
    e, low = m.epsilon(d), m.epsilon_lower(d)  # neither raises
    assert 0.0 < low <= e < bl_eps  # the partial certificate beats the blanket (measured 0.55 x)
    assert _le(float(np.max(brute_deltas(eps0, n, e))), d)
    assert brute_deltas(eps0, n, low).max() > d
    got = m.delta(0.01)
    assert _le(float(np.max(brute_deltas(eps0, n, 0.01))), got) and got < bl_delta  # 0.87 x
    wd = m.worst_dataset(0.01)
    assert math.isclose(wd.delta, brute_deltas(eps0, n, 0.01)[wd.others[0]], rel_tol=1e-6)
    with pytest.raises(WorkBudgetExceeded):
        m.delta(0.01, method="worst-case")


@pytest.mark.parametrize(
    "eps0,n,max_evals,size", [(0.5, 200, 20000, 64), (2.0, 300, 20000, 64), (0.5, 2000, 63, 128)]
)
def test_flat_band_is_resolved_by_blocks_of_exact_leaves(eps0, n, max_evals, size):
    """Just below delta(0) every dataset is within ~1e-5 of the others, so the cover needs every
    leaf: it is evaluated in blocks of LEAF_BLOCK (one family each; doubled until they fit half
    the budget: 128 for 2000 users in 31 evaluations), re-checked by verify block by block, and
    equals the brute-force maximum to the leaves' rounding."""
    d0 = float(np.max(brute_deltas(eps0, n, 0.0)))
    cert = W.certify(eps0, n, delta=0.99 * d0)
    assert W.verify(cert)
    assert any(iv.block is not None for iv in cert.cover)
    assert cert.epsilon <= cert.epsilon_lower * (1 + 1e-4)
    assert _le(float(np.max(brute_deltas(eps0, n, cert.epsilon))), 0.99 * d0)
    eps = cert.epsilon_lower
    dq = W.certify(eps0, n, eps=eps, max_evals=max_evals)
    assert W.verify(dq)
    assert sum(iv.block is not None for iv in dq.cover) == n  # every leaf, exact
    assert {iv.block[1] + 1 for iv in dq.cover if iv.block is not None} >= {size}
    truth = brute_deltas(eps0, n, eps)
    assert _le(float(np.max(truth)), math.exp(dq.log_delta)) and dq.log_delta - math.log(np.max(truth)) < 1e-8
    assert math.isclose(math.exp(dq.exhibited_log_delta), float(np.max(truth)), rel_tol=1e-8)
    # a tampered block bound is caught
    bad = [
        iv if iv.block is None else type(iv)(iv.c_lo, iv.c_hi, iv.eps, iv.log_bound - 1e-6, iv.block)
        for iv in dq.cover
    ]
    assert not W.verify(type(dq)(**{**dq.__dict__, "cover": tuple(bad)}))
    # so is a block that does not hold its leaf, or reaches past the last dataset
    for blk in ((1, 0), (n - 2, 5)):
        iv = dq.cover[0] if blk == (1, 0) else dq.cover[-1]
        moved = [type(iv)(iv.c_lo, iv.c_hi, iv.eps, iv.log_bound, blk) if x is iv else x for x in dq.cover]
        assert not W.verify(type(dq)(**{**dq.__dict__, "cover": tuple(moved)}))
