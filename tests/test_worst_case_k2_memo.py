"""k = 2 worst case (issue 11, k2speed): the shared memo of single-eps bounds, the canonical truncation
level and the tight (Chernoff-solved) binomial windows.

The memo may only change the cost of a call, never a certified value: a certificate is the same, field
for field, whether the memo was empty or filled by another query, and :func:`verify` recomputes every
bound instead of reading it. The canonical level makes the round trip of ``ShuffledKRR.epsilon`` (an
epsilon query, then the delta query at its answer) build one problem, so the second query is read
from the memo. The tight windows keep a rigorous bound on the mass they drop (checked against the
exact binomial tails) while being narrower than the ``z`` rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from shuffle_accounting._binomial import binom_window_range
from shuffle_accounting.shuffled_krr import ShuffledKRR
from shuffle_accounting.shuffled_krr import worst_case as W


@pytest.mark.parametrize("eps0,n", [(0.5, 20000), (2.0, 5000)])
def test_round_trip_reads_the_memo_and_certificates_do_not_depend_on_it(eps0, n):
    W.clear_bound_memo()
    ce = W.certify(eps0, n, delta=1e-6)
    W.clear_bound_memo()
    cold = W.certify(eps0, n, eps=ce.epsilon)  # the delta query alone, memo empty
    assert W.bound_memo_info().hits < cold.evaluations / 4
    W.clear_bound_memo()
    ce2 = W.certify(eps0, n, delta=1e-6)
    before = W.bound_memo_info()
    warm = W.certify(eps0, n, eps=ce.epsilon)  # after the epsilon query: the round trip
    after = W.bound_memo_info()
    assert ce2 == ce and warm == cold  # every field, the cover and the evaluation count included
    assert warm.log_level == ce.log_level  # one canonical problem for both queries
    assert after.hits - before.hits > 0.75 * warm.evaluations  # most bounds came from the memo
    assert after.misses - before.misses < warm.evaluations / 4
    assert W.verify(warm) and W.verify(ce)
    assert warm.log_delta <= math.log(1e-6)  # the round trip holds without a step up


def test_verify_recomputes_instead_of_reading_the_memo():
    W.clear_bound_memo()
    cert = W.certify(2.0, 3000, eps=0.05)
    before = W.bound_memo_info()
    assert before.size > 0
    assert W.verify(cert)
    assert W.bound_memo_info() == before  # no lookup at all: every bound recomputed
    W.clear_bound_memo()
    assert W.certify(2.0, 3000, eps=0.05) == cert


def test_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(W, "BOUND_MEMO_SIZE", 5)
    W.clear_bound_memo()
    W.certify(2.0, 500, eps=0.2)
    assert W.bound_memo_info().size == 5
    monkeypatch.setattr(W, "BOUND_MEMO_SIZE", 0)
    W.certify(2.0, 500, eps=0.21)
    assert W.bound_memo_info().size == 0


def test_memo_off_by_default_and_grids_not_memoised():
    W.clear_bound_memo()
    pr = W.WorstCaseProblem(1.0, 300, -20.0)
    pr.interval(0, 299, 0.1)
    pr.leaf(3, 0.1)
    assert W.bound_memo_info() == (0, 0, 0)
    pm = W.WorstCaseProblem(1.0, 300, -20.0, memo=True)
    pm.interval_many(0, 299, np.array([0.1, 0.2]))  # several eps: computed every time
    assert W.bound_memo_info() == (0, 0, 0)
    a = pm.interval(0, 299, 0.1)
    assert W.bound_memo_info() == (0, 1, 1)
    assert pm.interval(0, 299, 0.1) == a == pr.interval(0, 299, 0.1)
    assert W.bound_memo_info() == (1, 1, 1)
    assert pm.evaluations == 3  # a hit counts as an evaluation (the budget does not depend on it)
    W.clear_bound_memo()


@pytest.mark.parametrize("delta", [1e-6, 1e-3, math.exp(-14.0), 0.3, 1e-12])
def test_levels_are_canonical(delta):
    # the epsilon query's level is log delta rounded up to a multiple of 1/8 (at most 0)
    ce = W.certify(1.0, 800, delta=delta)
    x = math.log(delta)
    assert x <= ce.log_level <= min(x + 0.125, 0.0)
    assert ce.log_level * 8.0 == round(ce.log_level * 8.0)
    cd = W.certify(1.0, 800, eps=0.1)  # the delta query's level: on the same grid
    assert cd.log_level * 8.0 == round(cd.log_level * 8.0) and cd.log_level <= 0.0
    assert cd.log_level - 0.125 <= cd.exhibited_log_delta + 1e-9 or cd.exhibited_log_delta < -60.0


@pytest.mark.parametrize(
    "N,pi,log_tol",
    [
        (1, 0.3, -40.0),
        (7, 0.01, -30.0),
        (50, 0.5, -30.0),
        (1000, 0.01, -60.0),
        (10**6, 0.2, -45.0),
        (400_000, 0.378, -41.0),
        (3000, 0.5, -45.0),
        (10**5, 1e-4, -40.0),
        (200, 0.999, -35.0),
    ],
)
def test_tight_window_bounds_the_outside_mass_and_is_narrower(N, pi, log_tol):
    lp, lq = math.log(pi), math.log1p(-pi)
    if lp > lq:  # the window function takes pi <= 1/2; callers reflect
        lp, lq, pi = lq, lp, 1.0 - pi
    lo, hi, lt = binom_window_range(N, lp, lq, log_tol, chernoff=True, tight=True)
    lo0, hi0, _ = binom_window_range(N, lp, lq, log_tol, chernoff=True)
    assert 0 <= lo <= N * pi <= hi <= N
    assert lt <= log_tol or (lo == 0 and hi == N)
    out = (binom.cdf(lo - 1, N, pi) if lo > 0 else 0.0) + (binom.sf(hi, N, pi) if hi < N else 0.0)
    assert out == 0.0 or math.log(out) <= lt + 1e-9
    assert hi - lo <= hi0 - lo0
    if N >= 1000:  # the Chernoff edges, not the z rule's overshoot: at most ~ one tail's worth wider
        sd = math.sqrt(N * pi * (1 - pi))
        assert (hi - lo) < 0.9 * (hi0 - lo0) or hi0 - lo0 < 20 * sd


def test_tight_windows_keep_the_brute_force_certificate():
    # every dataset's exact delta (the library's leaves at a deep level) below the certified value
    eps0, n = 1.0, 400
    for eps in (0.05, 0.2):
        cert = W.certify(eps0, n, eps=eps)
        pr = W.WorstCaseProblem(eps0, n, -80.0)
        exact = max(max(pr.leaf(c, eps)[1], pr.leaf(n - 1 - c, eps)[1]) for c in range(n))
        assert exact <= cert.log_delta <= exact + math.log1p(W.DEFAULT_TOL) + 1e-9


def test_mechanism_round_trip_at_scale_is_consistent():
    m = ShuffledKRR(2, 2.0, 20000)
    e = m.epsilon(1e-6, method="worst-case")
    cert = W.certify(2.0, 20000, delta=1e-6)
    assert e == cert.epsilon  # no step up was needed: the delta query at e certifies 1e-6
    assert m.log_delta(e, method="worst-case") <= math.log(1e-6)
