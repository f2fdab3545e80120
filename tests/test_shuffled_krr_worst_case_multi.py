"""Certified worst case of shuffled k-RR for k >= 4 (worst_case_multi): brute force and properties."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.shuffled_krr import worst_case_multi as W
from shuffle_accounting.shuffled_krr.blanket import certified_log_delta
from shuffle_accounting.shuffled_krr.exact import dataset_delta


def _hist_law(rows: list[np.ndarray]) -> dict[tuple[int, ...], float]:
    """Law of the histogram of independent reports with the given report laws (brute force)."""
    k = rows[0].size
    law = {tuple([0] * k): 1.0}
    for r in rows:
        nxt: dict[tuple[int, ...], float] = {}
        for h, pr in law.items():
            for y in range(k):
                h2 = list(h)
                h2[y] += 1
                t = tuple(h2)
                nxt[t] = nxt.get(t, 0.0) + pr * r[y]
        law = nxt
    return law


def _krr_row(k: int, eps0: float, x: int) -> np.ndarray:
    pbar = 1.0 / (math.exp(eps0) + k - 1)
    r = np.full(k, pbar)
    r[x] = math.exp(eps0) * pbar
    return r


def _brute_g(k, eps0, v, a, b, eps):
    """(H(P || Q), H(Q || P)): target 0 -> 1, a users at v, b uniform users."""
    others = [_krr_row(k, eps0, v)] * a + [np.full(k, 1.0 / k)] * b
    P = _hist_law([_krr_row(k, eps0, 0)] + others)
    Q = _hist_law([_krr_row(k, eps0, 1)] + others)
    E = math.exp(eps)
    f = sum(max(0.0, P[h] - E * Q.get(h, 0.0)) for h in P)
    r = sum(max(0.0, Q[h] - E * P.get(h, 0.0)) for h in Q)
    return f, r


@pytest.mark.parametrize("k,eps0", [(4, 1.0), (5, 2.0)])
def test_pivot_bound_matches_brute_force(k, eps0):
    for v, a, b, eps in [(2, 2, 2, 0.3), (2, 0, 4, 0.1), (0, 3, 1, 0.5), (0, 1, 3, 0.2), (2, 4, 1, 0.0)]:
        fb, rb = _brute_g(k, eps0, v, a, b, eps)
        fu, ru = W.pivot_log_hockey(k, eps0, v, a, b, eps, -80.0)
        for brute, up in ((fb, fu), (rb, ru)):
            assert math.exp(up) >= brute * (1 - 1e-12)  # sound
            assert math.exp(up) <= brute * (1 + 1e-6) + 1e-30  # and tight


def _compositions(total: int, parts: int):
    for cut in itertools.combinations(range(total + parts - 1), parts - 1):
        prev, out = -1, []
        for c in cut + (total + parts - 1,):
            out.append(c - prev - 1)
            prev = c
        yield out


@pytest.mark.parametrize("k,n", [(4, 6), (5, 5)])
def test_certified_covers_every_dataset(k, n):
    eps0 = 1.5
    for eps in (0.2, 0.6):
        worst = max(dataset_delta(eps, k, eps0, c) for c in _compositions(n - 1, k))
        cert = W.certify_multi(k, eps0, n, eps=eps)
        assert cert.delta >= worst * (1 - 1e-12)
        assert math.exp(cert.exhibited_log_delta) <= worst * (1 + 1e-9)
        assert W.verify(cert)
        assert cert.log_delta <= float(certified_log_delta(eps, k, eps0, n)) + 1e-12


def test_epsilon_query_between_exhibited_and_blanket():
    cert = W.certify_multi(4, 2.0, 20, delta=1e-3)
    assert cert.epsilon_lower <= cert.epsilon
    assert float(certified_log_delta(cert.epsilon, 4, 2.0, 20)) >= cert.log_delta - 1e-12 or cert.used_blanket
    assert cert.log_delta <= math.log(1e-3)
    assert W.verify(cert)


@pytest.mark.parametrize("k,eps0,n,delta", [(5, 1.0, 14, math.exp(-40.0)), (4, 2.0, 9, 1e-300)])
def test_epsilon_at_eps0_certificate_rechecks(k, eps0, n, delta):
    """Regression (review rev3): where the type bounds only certify at eps0 (every bound 0, the
    release is eps0-DP), their records have no cells of B and verify rejected the certificate that
    certify_multi (and ShuffledKRR.certificate) returned."""
    c = W.certify_multi(k, eps0, n, delta=delta, tol=1e-4)
    assert c.epsilon_lower <= c.epsilon <= eps0
    assert W.verify(c)
    import dataclasses

    # still strict below eps0: an empty cell list is rejected there
    if c.bounds and c.epsilon_lower > 0:
        assert not W.verify(dataclasses.replace(c, eps=c.epsilon_lower, epsilon=c.epsilon_lower))


def test_verify_rejects_an_unexhibited_epsilon_lower():
    """Review rev3: an epsilon certificate whose witness is not above delta at epsilon_lower (what
    a wrong e_hint used to produce in the box search) does not re-check."""
    import dataclasses

    for c in (
        W.certify_multi(4, 2.0, 8, delta=1e-3, tol=1e-4),
        W.certify_multi(4, 2.0, 8, delta=1e-3, tol=1e-4, boxes=False),
    ):
        assert W.verify(c) and c.epsilon_lower > 0 and c.exhibited_log_delta > math.log(1e-3)
        moved = dataclasses.replace(c, epsilon_lower=c.epsilon, exhibited_log_delta=-30.0)
        assert not W.verify(moved)


def test_monotone_in_eps():
    vals = [W.certify_multi(6, 1.0, 30, eps=e).log_delta for e in (0.1, 0.3, 0.6, 0.9)]
    assert all(x >= y for x, y in zip(vals, vals[1:]))
    assert W.certify_multi(6, 1.0, 30, eps=1.0).log_delta == -math.inf


def test_tampered_certificate_fails():
    import dataclasses

    cert = W.certify_multi(4, 1.0, 12, eps=0.3, boxes=False)  # the type-bound certificate
    assert W.verify(cert)
    assert not W.verify(dataclasses.replace(cert, log_delta=cert.log_delta - 0.5))
    b0 = cert.bounds[0]
    bad = dataclasses.replace(b0, log_bound=b0.log_bound - 0.5)
    assert not W.verify(dataclasses.replace(cert, bounds=(bad,) + cert.bounds[1:]))
    assert not W.verify(dataclasses.replace(cert, bounds=cert.bounds[1:]))
    assert not W.verify(dataclasses.replace(cert, exhibited_log_delta=cert.exhibited_log_delta + 0.5))


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(k=3, eps0=1.0, n=10, eps=0.1), "k"),
        (dict(k=4.5, eps0=1.0, n=10, eps=0.1), "k"),
        (dict(k=True, eps0=1.0, n=10, eps=0.1), "k"),
        (dict(k=4, eps0=0.0, n=10, eps=0.1), "eps0"),
        (dict(k=4, eps0=math.nan, n=10, eps=0.1), "eps0"),
        (dict(k=4, eps0=math.inf, n=10, eps=0.1), "eps0"),
        (dict(k=4, eps0=1.0, n=1, eps=0.1), "n"),
        (dict(k=4, eps0=1.0, n=10, eps=-0.1), "eps"),
        (dict(k=4, eps0=1.0, n=10, delta=0.0), "delta"),
        (dict(k=4, eps0=1.0, n=10, delta=1.5), "delta"),
        (dict(k=4, eps0=1.0, n=10), "eps"),
        (dict(k=4, eps0=1.0, n=10, eps=0.1, delta=1e-3), "eps"),
        (dict(k=4, eps0=1.0, n=10, eps=0.1, tol=0.0), "tol"),
        (dict(k=4, eps0=1.0, n=10, eps=0.1, max_cells=0), "max_cells"),
    ],
)
def test_bad_inputs_raise(kwargs, name):
    k, eps0, n = kwargs.pop("k"), kwargs.pop("eps0"), kwargs.pop("n")
    with pytest.raises(ParameterError, match=name):
        W.certify_multi(k, eps0, n, **kwargs)


def test_verify_rejects_other_objects():
    with pytest.raises(ParameterError, match="cert"):
        W.verify("not a certificate")


def test_mechanism_uses_it_for_k_at_least_4():
    from shuffle_accounting.shuffled_krr import ShuffledKRR

    m = ShuffledKRR(10, 4.0, 30)
    assert m.auto_method == "worst-case"
    wc = m.log_delta(3.0, method="worst-case")  # type bounds, then the box search
    bl = m.log_delta(3.0, method="blanket")
    assert wc < bl  # strictly tighter here
    auto = m.log_delta(3.0)  # "auto" keeps the (faster) type bounds: between the two
    assert wc <= auto <= bl
    assert auto == min(W.certify_multi(10, 4.0, 30, eps=3.0, boxes=False).log_delta, bl)
    assert m.log_delta_lower(3.0) <= wc
    c = m.certificate(eps=3.0)
    assert W.verify(c) and c.log_delta == wc
    e = m.epsilon(1e-6)
    assert m.epsilon_lower(1e-6) <= e <= m.epsilon(1e-6, method="blanket")
    assert m.delta(e) <= 1e-6


@pytest.mark.parametrize(
    "eps0,eps", [(1.0, math.nextafter(1.0, 0.0)), (1e-6, 5e-7), (100.0, 3.0), (2.0, 1e-9)]
)
def test_outside_the_validated_zone_the_blanket_is_returned(eps0, eps):
    from shuffle_accounting.shuffled_krr import ShuffledKRR

    cert = W.certify_multi(4, eps0, 5, eps=eps)
    assert cert.used_blanket and cert.bounds == () and cert.exhibited_log_delta == -math.inf
    assert cert.log_delta == float(certified_log_delta(eps, 4, eps0, 5))
    assert W.verify(cert)
    assert ShuffledKRR(4, eps0, 5).log_delta(eps) == cert.log_delta  # auto does not raise
