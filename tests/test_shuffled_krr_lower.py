"""Lower bounds on the worst-case delta / epsilon of shuffled k-RR, exhibited by datasets."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.shuffled_krr import lower
from shuffle_accounting.shuffled_krr import worst_case as W
from shuffle_accounting.shuffled_krr.exact import dataset_delta, dataset_log_delta
from shuffle_accounting.shuffled_krr.lower import (
    WorstDataset,
    lower_delta,
    lower_epsilon,
    lower_log_delta,
    worst_dataset,
)

REL = 1e-9  # lower bounds are deflated by a floating-point error bound (about 1e-12 here)


def compositions(total: int, k: int):
    for cut in itertools.combinations(range(total + k - 1), k - 1):
        prev, out = -1, []
        for c in cut:
            out.append(c - prev - 1)
            prev = c
        out.append(total + k - 1 - prev - 1)
        yield tuple(out)


def family(k, n):
    """The members the issue requires: pure datasets and every two-value split."""

    def counts(spec):
        c = [0] * k
        for v, m in spec.items():
            c[v] += m
        return tuple(c)

    out = [counts({0: n - 1}), counts({1: n - 1})]
    pairs = [(0, 1)]
    if k >= 3:
        out.append(counts({2: n - 1}))
        pairs += [(0, 2), (1, 2)]  # (1, 2) is covered by mirror symmetry
    for u, v in pairs:
        for j in range(1, n - 1):
            out.append(counts({u: j, v: n - 1 - j}))
    return out


# ------------------------------------------------------------------------------------------
# facts from the issue
# ------------------------------------------------------------------------------------------


def test_worst_dataset_changes_with_eps_k3_n5():
    # k=3, n=5, eps0=2: (x0, x2, x2, x2) beats (x2, x2, x2, x2) at eps = 1.5 (exact histogram)
    mixed = dataset_delta(1.5, 3, 2.0, [1, 0, 3])
    pure = dataset_delta(1.5, 3, 2.0, [0, 0, 4])
    assert mixed > pure * 1.05
    assert round(mixed, 8) == 0.11425108 and round(pure, 8) == 0.10325966
    # ... while all at x2 is worst at eps = 0.3
    assert dataset_delta(0.3, 3, 2.0, [0, 0, 4]) > dataset_delta(0.3, 3, 2.0, [1, 0, 3])
    assert worst_dataset(0.3, 3, 2.0, 5).others == (0, 0, 4)
    w = worst_dataset(1.5, 3, 2.0, 5)
    assert w.others != (0, 0, 4)
    assert w.log_delta >= math.log(mixed) - REL


def test_k2_worst_dataset_depends_on_eps():
    n, eps0 = 8, 2.0
    at0 = worst_dataset(0.0, 2, eps0, n)
    assert sorted(at0.others) == [3, 4]  # balanced mix of the 7 others at eps = 0
    assert at0.family.startswith("mix x0/x1")
    big = worst_dataset(1.5, 2, eps0, n)
    assert big.others == (7, 0) and big.family == "all at x0"
    mid = worst_dataset(0.2, 2, eps0, n)
    assert mid.others not in {at0.others, big.others, (0, 7)}


def test_k4_marginal_is_not_sufficient():
    # Issue 2 prepared numbers: k=4, n=7, eps0=1, eps=0.5, all others at x2.
    others = (0, 0, 6, 0)
    hist = dataset_delta(0.5, 4, 1.0, others)
    assert round(hist, 10) == 0.0189457458
    cand = lower.h01_candidate(4, 1.0, others, "all at x2", 12.0)
    marg = math.exp(float(cand.log_delta(np.array([0.5]))[0]))
    assert round(marg, 10) == 0.0183976375
    assert cand.statistic == "(h0,h1) marginal"
    # the lower bound uses the full histogram here; blanket upper bound is 0.0205345108
    lo = float(lower_delta(0.5, 4, 1.0, 7))
    assert hist * (1 - REL) <= lo <= 0.0205345108


# ------------------------------------------------------------------------------------------
# soundness of the lower bound
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k, n, eps0", [(2, 6, 1.0), (3, 5, 2.0), (3, 7, 0.5), (4, 6, 1.5)])
def test_lower_dominates_family_and_is_below_true_worst_case(k, n, eps0):
    eps = np.array([0.0, 0.1, 0.3, 0.7, 1.2, eps0 * 0.95])
    lo = lower_log_delta(eps, k, eps0, n)
    fam = np.array([dataset_log_delta(eps, k, eps0, c) for c in family(k, n)])
    with np.errstate(invalid="ignore"):
        assert np.all(lo >= fam.max(axis=0) - REL)
    # true worst case over ALL neighbouring datasets (by symmetry: every composition, 0 -> 1)
    allc = np.array([dataset_log_delta(eps, k, eps0, c) for c in compositions(n - 1, k)])
    assert np.all(lo <= allc.max(axis=0) + 1e-12)


@settings(max_examples=12, deadline=None)
@given(st.integers(2, 4), st.integers(2, 7), st.floats(0.2, 3.0), st.floats(0.0, 3.0))
def test_lower_log_delta_at_least_every_family_member(k, n, eps0, eps):
    lo = float(lower_log_delta(eps, k, eps0, n))
    for c in family(k, n):
        assert lo >= dataset_log_delta(eps, k, eps0, c) - REL


@pytest.mark.parametrize("k, n, eps0, delta", [(3, 5, 1.0, 1e-3), (2, 30, 2.0, 1e-4), (4, 40, 2.0, 1e-5)])
def test_lower_epsilon_is_a_valid_root(k, n, eps0, delta):
    e = lower_epsilon(delta, k, eps0, n)
    assert 0.0 < e < eps0
    w = worst_dataset(e, k, eps0, n)
    # at the returned eps some searched dataset still exceeds delta (so epsilon(delta) >= e) ...
    # (k = 2: the seeds of the certified search count too, by their windowed leaves, whose
    # rounding, ~1e-10, can put the root ~1e-9 above the family statistic's)
    seeds = math.exp(W.seed_log_delta_lower([e], eps0, n)[0][0]) if k == 2 else 0.0
    assert max(w.delta, seeds) > delta
    # ... and it is the root: slightly above, none does
    assert float(lower_delta(e + 1e-6, k, eps0, n)) <= delta * (1 + 1e-6)


def test_lower_epsilon_zero_when_delta_large():
    assert lower_epsilon(0.99, 3, 0.5, 3) == 0.0


def test_windowed_marginal_matches_exact_and_truncation_stays_below():
    # k = 3: (h0, h1) is the full histogram, so the marginal must equal the exact value
    k, eps0, others = 3, 1.0, (10, 0, 29)
    eps = np.array([0.0, 0.2, 0.5, 0.8])
    ex = dataset_log_delta(eps, k, eps0, others)
    full = lower.h01_candidate(k, eps0, others, "mix", 40.0).log_delta(eps)
    assert np.all(np.abs(full - ex) <= 1e-7) and np.all(full <= ex + 1e-12)
    cut = lower.h01_candidate(k, eps0, others, "mix", 2.0)  # heavy truncation, subtracted
    assert np.isfinite(cut.log_drop)
    assert np.all(cut.log_delta(eps) <= ex + 1e-12)
    # k = 2: h0 windows, against the exact count convolution
    ex2 = dataset_log_delta(eps, 2, eps0, (50, 69))
    c2 = lower.h0_candidate(2, eps0, (50, 69), "mix", 40.0).log_delta(eps)
    assert np.all(np.abs(c2 - ex2) <= 1e-7) and np.all(c2 <= ex2 + 1e-12)
    t2 = lower.h0_candidate(2, eps0, (50, 69), "mix", 1.5)
    assert np.all(t2.log_delta(eps) <= ex2 + 1e-12)


def test_cli_scale_runs_and_is_monotone_in_delta():
    # the CLI report's default deployment; a few seconds at most
    e6 = lower_epsilon(1e-6, 10, 2.0, 10_000)
    e3 = lower_epsilon(1e-3, 10, 2.0, 10_000)
    assert 0.0 < e6 < 2.0 and 0.0 < e3 < e6
    w = worst_dataset(e6, 10, 2.0, 10_000)
    # (worst_dataset uses a wider window than lower_epsilon: equal up to rounding)
    assert w.delta > 1e-6 * (1 - 1e-7) and w.statistic == "(h0,h1) marginal"


def test_worst_dataset_fields_and_frozen():
    w = worst_dataset(0.5, 3, 1.0, 5)
    assert isinstance(w, WorstDataset)
    assert len(w.others) == 3 and sum(w.others) == 4
    assert w.statistic == "histogram"
    assert math.isclose(w.delta, math.exp(w.log_delta))
    assert math.isclose(w.log_delta, dataset_log_delta(0.5, 3, 1.0, w.others), rel_tol=1e-9)
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.eps = 1.0  # type: ignore[misc]


# ------------------------------------------------------------------------------------------
# bad inputs
# ------------------------------------------------------------------------------------------

BAD = [
    ("k", 1),
    ("k", 2.5),
    ("k", True),
    ("k", float("nan")),
    ("eps0", 0.0),
    ("eps0", -1.0),
    ("eps0", float("nan")),
    ("eps0", float("inf")),
    ("eps0", True),
    ("n", 1),
    ("n", 3.5),
    ("n", True),
    ("n", float("inf")),
    ("n", -4),
]


@pytest.mark.parametrize(
    "name, value", BAD + [("eps", -0.1), ("eps", float("nan")), ("eps", float("inf")), ("eps", True)]
)
@pytest.mark.parametrize("fn", [lower_log_delta, lower_delta, worst_dataset])
def test_bad_inputs_delta_functions(fn, name, value):
    args = dict(eps=0.1, k=3, eps0=1.0, n=5)
    args[name] = value
    with pytest.raises(ParameterError, match=rf"^{name}"):
        fn(**args)


@pytest.mark.parametrize(
    "name, value",
    BAD + [("delta", 0.0), ("delta", 1.0), ("delta", -1e-3), ("delta", float("nan")), ("delta", True)],
)
def test_bad_inputs_lower_epsilon(name, value):
    args = dict(delta=1e-3, k=3, eps0=1.0, n=5)
    args[name] = value
    with pytest.raises(ParameterError, match=rf"^{name}"):
        lower_epsilon(**args)


def test_worst_dataset_needs_scalar_eps():
    with pytest.raises(ParameterError, match="^eps"):
        worst_dataset([0.1, 0.2], 3, 1.0, 5)


# ----- the O(n) (h0, h1) marginal of "all at x2" ----------------------------------------------


def _marginal_delta_mpmath(eps, k, eps0, n):
    """Exact hockey-stick divergence of the (h0, h1) marginal, others all at x2 (mpmath, 40 digits)."""
    import mpmath as mp

    mp.mp.dps = 40
    e0 = mp.mpf(eps0)
    pbar = 1 / (mp.e**e0 + k - 1)
    p = mp.e**e0 * pbar
    r = 1 - p - pbar
    N = n - 1

    def others(a, b):  # P(others give a x0's and b x1's); each other: pbar, pbar, rest
        if a < 0 or b < 0 or a + b > N:
            return mp.mpf(0)
        return (
            mp.factorial(N)
            / (mp.factorial(a) * mp.factorial(b) * mp.factorial(N - a - b))
            * pbar ** (a + b)
            * (1 - 2 * pbar) ** (N - a - b)
        )

    E = mp.e ** mp.mpf(eps)
    total = mp.mpf(0)
    for a in range(n + 1):
        for b in range(n + 1 - a):
            P = p * others(a - 1, b) + pbar * others(a, b - 1) + r * others(a, b)
            Q = pbar * others(a - 1, b) + p * others(a, b - 1) + r * others(a, b)
            total += max(P - E * Q, 0)
    return total


@pytest.mark.parametrize("k, eps0, n", [(3, 1.0, 2), (3, 2.0, 9), (5, 0.7, 14), (4, 3.0, 25)])
def test_split_marginal_matches_mpmath_enumeration(k, eps0, n):
    others = tuple([0, 0, n - 1] + [0] * (k - 3))
    cand = lower.SplitCandidate(others, "all at x2", "(h0,h1) marginal", k, eps0, n)
    eps = np.array([0.0, 0.1 * eps0, 0.4 * eps0, 0.8 * eps0, 0.99 * eps0])
    got = np.exp(cand.log_delta(eps))
    for e, g in zip(eps, got):
        exact = float(_marginal_delta_mpmath(float(e), k, eps0, n))
        assert g <= exact  # a lower bound ...
        assert g >= exact * (1 - 1e-7) - 1e-300  # ... and a tight one


@pytest.mark.parametrize("k, eps0, n", [(3, 1.0, 100_000), (10, 2.0, 300_000)])
def test_exhibited_lower_bound_is_tight_at_large_n(k, eps0, n):
    """At large n the certified and exhibited epsilons agree to 1e-3 (the (h0, h1) marginal of
    "all at x2" is O(n); before it, h0 alone left a gap of ~1.3)."""
    from shuffle_accounting.shuffled_krr import ShuffledKRR

    upper = ShuffledKRR(k, eps0, n).epsilon(1e-6)
    low = lower_epsilon(1e-6, k, eps0, n)
    assert low <= upper < low * 1.001
    eps = np.array([0.5, 1.0, 1.5]) * upper
    assert np.all(lower_log_delta(eps, k, eps0, n) <= ShuffledKRR(k, eps0, n).log_delta(eps))


def test_work_is_bounded_for_huge_n():
    # issue 10: the lower-bound functions used to build full-support windows (np.arange(n)) and
    # hang at n = 1e9; now the full support is replaced by a bounded window whose outside mass
    # is subtracted, and above LARGE_N only the pure datasets are searched.
    import math

    from shuffle_accounting.shuffled_krr import lower as L

    lo, hi, drop = L.binomial_window(10**9, 0.3, math.inf)
    assert hi - lo + 1 <= L.MAX_WINDOW and drop < -300
    assert L.binomial_window(1000, 0.3, math.inf) == (0, 1000, -math.inf)
    n = 2 * L.LARGE_N
    eps = 3e-4
    low = float(L.lower_log_delta(eps, 2, 1.0, n))
    from shuffle_accounting.shuffled_krr import certified_log_delta

    assert -math.inf < low <= float(certified_log_delta(eps, 2, 1.0, n))


# ---- issue 12: the search's cost does not grow with k (compact counts) ----------------------


@pytest.mark.parametrize("k", [2, 3, 4, 7, 50])
def test_compact_counts_give_the_exact_number_of_histogram_bins(k):
    from shuffle_accounting.shuffled_krr import exact
    from shuffle_accounting.shuffled_krr import lower as lower_mod

    for spec in [(0, 0, 5), (3, 0, 0), (1, 2, 3), (0, 4, 0), (2, 2, 0)]:
        compact = spec[: min(k, 3)]
        full = lower_mod.expand_counts(k, compact)
        assert len(full) == k and sum(full) == sum(compact)
        assert lower_mod.compact_bins(k, compact) == exact.histogram_bins(k, full)


def test_huge_k_search_reports_full_length_datasets_and_stays_below_certified():
    from shuffle_accounting.shuffled_krr import ShuffledKRR

    k, n = 1000, 300
    wd = worst_dataset(0.05, k, 2.0, n)
    assert len(wd.others) == k and sum(wd.others) == n - 1
    assert wd.log_delta == pytest.approx(float(lower_log_delta(0.05, k, 2.0, n)))
    assert lower_epsilon(1e-6, k, 2.0, n) <= ShuffledKRR(k, 2.0, n).epsilon(1e-6)
    big = lower_epsilon(1e-6, 10**6, 2.0, 10**4)  # was ~15 s of O(k) work per candidate
    assert 0.0 < big < 2.0


def test_illinois_root_stays_on_the_exhibited_side():
    """The search lower_epsilon runs on each dataset's exhibited log delta (the one root finder,
    lower side, both ends vouched for): a point where delta > target was evaluated, within rtol."""
    import math as _m

    from shuffle_accounting.curves import epsilon_from_delta

    calls = []

    def log_delta(x):
        calls.append(x)
        return _m.log(0.5 * (1.5 - x)) if x < 1.5 else -_m.inf  # delta = 0.5 at 0.5, 0 above 1.5

    kw = dict(bound="lower", lo=0.0, hi=2.0, log=True, method="illinois", atol=0.0, check_lo=False)
    lo = epsilon_from_delta(log_delta, 0.5, rtol=1e-10, **kw)
    assert log_delta(lo) > _m.log(0.5) and 0.5 - lo <= 1e-10 * 2.0
    assert len(calls) < 40  # bisection would need ~35 steps; false position far fewer
    lo2 = epsilon_from_delta(
        lambda x: _m.log(0.5 * (1.0 - x * x)) if x < 1 else -_m.inf, 0.375, rtol=1e-12, **kw
    )
    assert 0.5 - 2e-12 <= lo2 < 0.5


@pytest.mark.parametrize(
    "k, eps0, n, delta", [(2, 1.0, 30, 1e-4), (3, 2.0, 300, 1e-6), (10, 2.0, 2000, 1e-6)]
)
def test_lower_epsilon_agrees_with_bisection_over_the_same_family(k, eps0, n, delta):
    from shuffle_accounting._logmath import bisect_bracket
    from shuffle_accounting.shuffled_krr import lower as lower_mod

    w = max(6.0, math.sqrt(2.0 * math.log(1e6 / delta)) + 2.0)
    cands = lower_mod.search_candidates(k, eps0, n, np.linspace(0.0, eps0, 9)[:-1], w)
    best = 0.0
    for c in cands:

        def f(e, c=c):
            return float(c.log_delta(np.array([e]))[0]) > math.log(delta)

        if f(best):
            best = max(best, bisect_bracket(f, best, eps0, rtol=1e-10)[0])
    got = lower_epsilon(delta, k, eps0, n)
    assert got == pytest.approx(best, rel=3e-10)


def test_k2_lower_log_delta_and_worst_dataset_add_the_certified_search_seeds():
    # n = 1e6, eps0 = 2, eps = 0.01: the family's fixed-width statistic gave 'mix x0/x1 (3 at
    # x0)' at -18.98699682; the seed c = 999996 (its mirror, 3 users at x1) is higher, -18.98622408
    # (log delta); both ends of that dataset's certified bracket agree to 4e-9
    from shuffle_accounting.shuffled_krr.exact import dataset_log_delta_bounds

    n, eps0, e = 10**6, 2.0, 0.01
    w = worst_dataset(e, 2, eps0, n)
    assert w.family.startswith("seed of the certified search") and sum(w.others) == n - 1
    lo, up = dataset_log_delta_bounds(e, 2, eps0, list(w.others))
    assert lo - 1e-12 <= w.log_delta <= up and w.log_delta > -18.9865
    assert float(lower_log_delta(e, 2, eps0, n)) == w.log_delta
    # an array of eps: every entry at least the seeds' value
    ev = np.array([0.0, 0.005, 0.01])
    assert np.all(lower_log_delta(ev, 2, eps0, n) >= W.seed_log_delta_lower(ev, eps0, n)[0])


def test_k2_seed_log_delta_lower_where_a_leaf_cannot_be_had():
    # n = 1e7, eps0 = 0.5, eps = 0.01: delta is far below the seeds' truncation level, no window
    # proves a bracket and the full convolution exceeds MAX_CONV_WORK; this raised
    # WorkBudgetExceeded. Now such a seed counts as -inf (a valid lower bound) and the other
    # points of the same call keep their values
    v, _ = W.seed_log_delta_lower([1e-4, 0.01], 0.5, 10**7)
    assert v[1] == -math.inf and -10.6 < v[0] < -10.5
