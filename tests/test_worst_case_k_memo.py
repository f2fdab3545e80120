"""k = 3 worst case (issue 11, autok): the memo of box bounds shared by the searches of ``certify_k``.

The memo may only change the cost of a call, never a certificate: a certificate is the same, field
for field (cover, evaluations and the work counter that drives the budget stop included), whether
the memo was empty, filled by the same query, by the other query of the round trip, or by an
unrelated one, and whatever the memo's size; :func:`verify` recomputes every bound. The canonical
truncation level makes the round trip of ``ShuffledKRR.epsilon`` (epsilon query, then the delta
query at its answer) build one problem, so the second query reads the first one's bounds.
"""

from __future__ import annotations

import math

import pytest

from shuffle_accounting.shuffled_krr import ShuffledKRR
from shuffle_accounting.shuffled_krr import worst_case_k as K
from shuffle_accounting.shuffled_krr import worst_case_multi as M
from shuffle_accounting.shuffled_krr.lower import lower_epsilon
from shuffle_accounting.shuffled_krr.mechanism import LOWER_BOX_SEARCH_MAX_N, auto_uses_worst_case


@pytest.mark.parametrize("eps0,n,delta", [(1.0, 30, 1e-6), (0.5, 200, 1e-6), (2.0, 100, 1e-9)])
def test_round_trip_reads_the_memo_and_certificates_do_not_depend_on_it(eps0, n, delta):
    K.clear_bound_memo()
    ce = K.certify_k(3, eps0, n, delta=delta)
    K.clear_bound_memo()
    cold = K.certify_k(3, eps0, n, eps=ce.epsilon)  # the delta query alone, memo empty
    before = K.bound_memo_info()
    assert before.hits == 0
    ce2 = K.certify_k(3, eps0, n, delta=delta)  # memo filled by the delta query
    K.clear_bound_memo()
    K.certify_k(3, eps0, n, delta=delta)
    mid = K.bound_memo_info()
    warm = K.certify_k(3, eps0, n, eps=ce.epsilon)  # the round trip
    after = K.bound_memo_info()
    assert ce2 == ce and warm == cold  # every field: cover, evaluations, work, level
    assert warm.log_level == ce.log_level  # one canonical problem for both queries
    assert after.misses - mid.misses < 0.7 * before.misses  # most of its bounds read from the memo
    assert K.verify(warm) and K.verify(ce)
    assert warm.log_delta <= math.log(delta)  # the round trip holds without a step up


@pytest.mark.parametrize("size", [0, 3, 40, 100_000])
def test_budget_stops_and_evictions_do_not_depend_on_the_memo(monkeypatch, size):
    # small budgets stop the searches mid-way: the work counter must be the same with the memo in
    # any state (a hit replays the evaluation's charges on the problem's caches of laws)
    eps0, n = 1.0, 120
    kw = {"max_cells": 4e5}
    K.clear_bound_memo()
    cold_e = K.certify_k(3, eps0, n, delta=1e-6, **kw)
    K.clear_bound_memo()
    cold_d = K.certify_k(3, eps0, n, eps=0.3, **kw)
    assert not cold_e.converged or not cold_d.converged  # the budget does bite here
    monkeypatch.setattr(K, "BOUND_MEMO_SIZE", size)
    K.clear_bound_memo()
    for _ in range(2):
        assert K.certify_k(3, eps0, n, eps=0.3, **kw) == cold_d
        assert K.certify_k(3, eps0, n, delta=1e-6, **kw) == cold_e
        K.certify_k(3, eps0, n, eps=cold_e.epsilon, **kw)
    assert K.bound_memo_info().size <= size
    assert K.verify(cold_e) and K.verify(cold_d)


def test_many_leaves_with_a_full_memo_same_certificates():
    # n = 12: every dataset a leaf (more than the 64 cached leaves and 33 cached laws), so hits
    # leave placeholders that later evaluations build without charging
    K.clear_bound_memo()
    cold = [K.certify_k(3, 0.7, 12, eps=e) for e in (0.0, 0.2, 0.4)]
    cold_e = K.certify_k(3, 0.7, 12, delta=1e-3)
    K.clear_bound_memo()
    K.certify_k(3, 0.7, 12, delta=1e-3)
    warm = [K.certify_k(3, 0.7, 12, eps=e) for e in (0.0, 0.2, 0.4)]
    assert warm == cold and K.certify_k(3, 0.7, 12, delta=1e-3) == cold_e
    assert K.bound_memo_info().hits > 0


def test_verify_and_box_log_bound_never_read_the_memo():
    K.clear_bound_memo()
    cert = K.certify_k(3, 1.0, 40, eps=0.5)
    before = K.bound_memo_info()
    assert before.size > 0
    assert K.verify(cert)
    K.box_log_bound(0.5, 1.0, 40, (0, 39, 0, 39))
    assert K.bound_memo_info() == before  # no lookup at all
    pr = K.BoxProblem(1.0, 40, -20.0)  # memo off by default
    pr.bound((0, 39, 0, 39), 0.5)
    assert K.bound_memo_info() == before


@pytest.mark.parametrize("delta", [1e-6, 1e-3, math.exp(-14.0), 1e-12])
def test_levels_are_canonical(delta):
    ce = K.certify_k(3, 1.0, 60, delta=delta)
    x = math.log(delta)
    assert x <= ce.log_level <= min(x + 0.125, 0.0)
    assert ce.log_level * 8.0 == round(ce.log_level * 8.0)
    cd = K.certify_k(3, 1.0, 60, eps=ce.epsilon)
    assert cd.log_level * 8.0 == round(cd.log_level * 8.0) and cd.log_level <= 0.0


def test_mechanism_round_trip_k3():
    m = ShuffledKRR(3, 1.0, 100)
    e = m.epsilon(1e-6, method="worst-case")
    assert e == K.certify_k(3, 1.0, 100, delta=1e-6).epsilon  # no step up needed
    assert m.log_delta(e, method="worst-case") <= math.log(1e-6)
    assert m.epsilon(1e-6) <= e and m.delta(m.epsilon(1e-6)) <= 1e-6


def test_auto_k3_round_trip_below_the_delta_querys_deepest_level_stops_at_the_blanket():
    # CI (hypothesis, test_curves_protocol.test_upper_round_trip): at delta ~ 1e-58 the k = 3
    # epsilon query certifies 0.18558, but auto's delta query (deep=False) stops at the e^-60
    # truncation level and certifies only e^-88 there, so auto's round trip stepped up past the
    # blanket's epsilon (0.1875) to 0.187516; the steps are now capped at the blanket's value
    m = ShuffledKRR(3, 0.25, 300)
    d = m.delta(0.1875)
    assert K.certify_k(3, 0.25, 300, eps=0.1875, deep=False).log_delta > math.log(d) + 10.0
    assert K.certify_k(3, 0.25, 300, delta=d).epsilon < 0.186  # the tight epsilon query
    e = m.epsilon(d)
    assert e == m.epsilon(d, method="blanket") <= 0.1875 * (1 + 1e-8)
    assert m.delta(e) <= d


def test_auto_k4_where_the_type_bounds_lose_returns_the_blanket():
    # k >= 4: where the certificate is the blanket's own value, auto returns the blanket's epsilon
    # without the round trip's delta query (the round trip holds: delta <= blanket delta)
    k, eps0, n = 10, 1.0, 60
    assert auto_uses_worst_case(k, eps0, n)
    c = M.certify_multi(k, eps0, n, delta=1e-6, boxes=False)
    m = ShuffledKRR(k, eps0, n)
    e = m.epsilon(1e-6)
    bl = m.epsilon(1e-6, method="blanket")
    if c.used_blanket:
        assert e == bl
    assert e <= bl and m.delta(e) <= 1e-6
    assert c.epsilon_lower <= e


def test_k4_lower_witness_above_the_box_search_limit_is_the_type_bounds_one():
    k, eps0, n = 4, 1.0, 60
    assert n > LOWER_BOX_SEARCH_MAX_N and auto_uses_worst_case(k, eps0, n)
    m = ShuffledKRR(k, eps0, n)
    c = M.certify_multi(k, eps0, n, delta=1e-6, boxes=False)
    low = m.epsilon_lower(1e-6)
    assert low == max(c.epsilon_lower, lower_epsilon(1e-6, k, eps0, n))
    assert 0.0 < low <= m.epsilon(1e-6) <= m.epsilon(1e-6, method="blanket")
    w = m.worst_dataset(0.9 * low)
    assert w.log_delta <= m.log_delta(0.9 * low) and sum(w.others) == n - 1


def test_auto_k3_keeps_the_blanket_below_its_resolution_without_certifying(monkeypatch):
    # auto's k = 3 delta query is the shallow one (resolution ~e^-85): below
    # AUTO_WORST_CASE_K3_MIN_LOG_DELTA auto's epsilon, log_delta, epsilon_lower and worst_dataset
    # do not run a certificate (it cost 27 s for the blanket's value at n = 490, delta = 6.8e-60)
    from shuffle_accounting.shuffled_krr import mechanism

    assert mechanism.AUTO_WORST_CASE_K3_MIN_LOG_DELTA == -85.0
    m = ShuffledKRR(3, 0.25, 300)
    tiny, usual = 1e-40, 1e-6
    assert math.log(tiny) < mechanism.AUTO_WORST_CASE_K3_MIN_LOG_DELTA < math.log(usual)
    e_usual = m.epsilon(usual)
    calls = []

    def no_certificate(self, **query):
        calls.append(query)
        raise AssertionError("certificate computed below auto's k = 3 resolution")

    monkeypatch.setattr(ShuffledKRR, "_certify", no_certificate)
    e = m.epsilon(tiny)
    assert e == m.epsilon(tiny, method="blanket") and m.delta(e) <= tiny
    assert m.epsilon_lower(tiny) <= e
    eps_tiny = e  # the blanket log delta there is about log(1e-40) < -85
    assert float(m.log_delta(eps_tiny, method="blanket")) < -85.0
    assert m.log_delta(eps_tiny) == m.log_delta(eps_tiny, method="blanket")
    assert m.worst_dataset(eps_tiny).log_delta <= m.log_delta(eps_tiny)
    assert not calls
    with pytest.raises(AssertionError, match="certificate computed"):
        m.epsilon(usual * 1.01)  # above it the certificate runs (and here raises)
    assert 0.0 < e_usual < e
