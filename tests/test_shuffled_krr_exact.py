"""Exact per-dataset delta of shuffled k-RR against brute-force enumeration (exact rationals)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.shuffled_krr import exact
from shuffle_accounting.shuffled_krr.exact import dataset_delta, dataset_log_delta

# ------------------------------------------------------------------------------------------
# brute-force oracle: per-user convolution of exact output distributions over histograms
# ------------------------------------------------------------------------------------------


def compositions(total: int, k: int):
    for cut in itertools.combinations(range(total + k - 1), k - 1):
        prev, out = -1, []
        for c in cut:
            out.append(c - prev - 1)
            prev = c
        out.append(total + k - 1 - prev - 1)
        yield tuple(out)


def krr_row(k, x, ratio, one):
    """Row of k-RR with e^eps0 = ratio (exact when ratio is a Fraction/mpf)."""
    pbar = one / (ratio + k - 1)
    return [ratio * pbar if y == x else pbar for y in range(k)]


def hist_dist(k, values, ratio, one):
    dist = {(0,) * k: one}
    for x in values:
        row = krr_row(k, x, ratio, one)
        new = {}
        for h, pr in dist.items():
            for y in range(k):
                h2 = h[:y] + (h[y] + 1,) + h[y + 1 :]
                new[h2] = new.get(h2, 0 * one) + pr * row[y]
        dist = new
    return dist


def hockey(P, Q, a, zero):
    keys = set(P) | set(Q)
    h1 = sum((max(zero, P.get(y, zero) - a * Q.get(y, zero)) for y in keys), zero)
    h2 = sum((max(zero, Q.get(y, zero) - a * P.get(y, zero)) for y in keys), zero)
    return max(h1, h2)


def marginal(dist, f):
    out = {}
    for h, pr in dist.items():
        out[f(h)] = out.get(f(h), 0 * pr) + pr
    return out


def brute_all(k, others, ratio, a_list, outputs, one=Fraction(1)):
    """Exact deltas for each requested output, from one enumeration of the histogram."""
    values = [v for v in range(k) for _ in range(others[v])]
    P0 = hist_dist(k, values + [0], ratio, one)
    Q0 = hist_dist(k, values + [1], ratio, one)
    stat = {"histogram": lambda h: h, "count": lambda h: h[0], "h0h1": lambda h: h[:2]}
    res = {}
    for out in outputs:
        P, Q = marginal(P0, stat[out]), marginal(Q0, stat[out])
        res[out] = [hockey(P, Q, a, 0 * one) for a in a_list]
    return res


def brute(k, others, ratio, a_list, output="histogram", one=Fraction(1)):
    return brute_all(k, others, ratio, a_list, [output], one)[output]


RATIOS = [Fraction(2), Fraction(5)]  # e^eps0 exactly rational
A_LIST = [Fraction(1), Fraction(5, 4), Fraction(2), Fraction(3)]  # e^eps exactly rational
EPS = np.log([float(a) for a in A_LIST])


def _close(got, want, rel=1e-10):
    want = float(want)
    return abs(got - want) <= rel * abs(want) + 1e-300


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
def test_every_composition_matches_enumeration(k, n):
    for i, others in enumerate(compositions(n - 1, k)):
        # every composition, with e^eps0 = 2 and 5 (alternating at the largest sizes for time)
        ratios = RATIOS if k * n < 24 else [RATIOS[i % 2]]
        for ratio in ratios:
            eps0 = math.log(ratio)
            want = brute_all(k, others, ratio, A_LIST, ["histogram", "count"])
            want_h, want_c = want["histogram"], want["count"]
            got_h = dataset_delta(EPS, k, eps0, others)
            got_c = dataset_delta(EPS, k, eps0, others, output="count")
            for g, w in zip(got_h, want_h):
                assert _close(g, w), (k, n, ratio, others, g, float(w))
            for g, w in zip(got_c, want_c):
                assert _close(g, w), (k, n, ratio, others, g, float(w))


def test_oracle_agrees_with_tuple_enumeration():
    # the oracle itself, against summing over every tuple of individual outputs
    k, others, ratio = 3, (1, 1, 2), Fraction(3)
    values = [0, 1, 2, 2]
    P, Q = {}, {}
    for outs in itertools.product(range(k), repeat=len(values) + 1):
        for dist, tgt in ((P, 0), (Q, 1)):
            pr = Fraction(1)
            for x, y in zip(values + [tgt], outs):
                pr *= krr_row(k, x, ratio, Fraction(1))[y]
            h = tuple(outs.count(v) for v in range(k))
            dist[h] = dist.get(h, Fraction(0)) + pr
    want = hockey(P, Q, Fraction(3, 2), Fraction(0))
    assert brute(k, others, ratio, [Fraction(3, 2)])[0] == want
    assert _close(dataset_delta(math.log(1.5), k, math.log(3), others), want)


@pytest.mark.parametrize("others", [(0, 0, 6, 0), (2, 1, 0, 3), (1, 0, 2, 2)])
def test_irrational_parameters_match_mpmath(others):
    mpmath.mp.dps = 40
    one = mpmath.mpf(1)
    eps0, eps = 1.0, 0.5
    want = brute(4, others, mpmath.e ** mpmath.mpf(eps0), [mpmath.e ** mpmath.mpf(eps)], one=one)[0]
    assert _close(dataset_delta(eps, 4, eps0, others), want)


def test_prepared_numbers_k4_all_at_x2():
    # Issue 2, "facts checked": all others at x2, k=4, n=7, eps0=1, eps=0.5.
    assert round(dataset_delta(0.5, 4, 1.0, [0, 0, 6, 0]), 10) == 0.0189457458
    mpmath.mp.dps = 40
    want = brute(4, (0, 0, 6, 0), mpmath.e, [mpmath.e ** mpmath.mpf(0.5)], "h0h1", one=mpmath.mpf(1))[0]
    assert round(float(want), 10) == 0.0183976375  # the (h0, h1) marginal is smaller


def test_biswas_erratum_value():
    # Biswas, Jung, Palamidessi Table IV setting n=100, n_x0=80, k=10, eps0=2, eps=0.1: the exact
    # divergence of the two count distributions is 6.1467e-3 (the printed formula gives 2.49E-15).
    got = dataset_delta(0.1, 10, 2.0, [80, 19] + [0] * 8, output="count")
    assert round(got, 7) == 0.0061467
    # only the number of value-0 holders matters for the count
    assert _close(dataset_delta(0.1, 10, 2.0, [80, 0, 0, 19] + [0] * 6, output="count"), got, 1e-12)


def test_zero_at_eps0_and_tiny_values_in_log_space():
    assert dataset_delta(1.0, 3, 1.0, [2, 1, 1]) == 0.0
    assert dataset_log_delta([1.0, 3.0], 3, 1.0, [2, 1, 1]).tolist() == [-np.inf, -np.inf]
    # n = 2000, k = 2 at eps close to eps0: far below 1e-300 but finite in log space
    ld = dataset_log_delta(7.9, 2, 8.0, [1000, 999])
    assert -1e6 < ld < math.log(1e-300)


def test_numpy_and_tuple_others_accepted():
    a = dataset_delta(0.2, 3, 1.0, np.array([1, 2, 1]))
    assert a == dataset_delta(0.2, 3, 1.0, (1, 2, 1)) == dataset_delta(0.2, 3, 1.0, [1.0, 2, 1])


def test_scalar_and_array_shapes():
    assert isinstance(dataset_delta(0.1, 3, 1.0, [1, 1, 1]), float)
    out = dataset_delta(np.array([[0.1, 0.2], [0.3, 0.4]]), 3, 1.0, [1, 1, 1])
    assert out.shape == (2, 2)


def test_too_large_raises_naming_others():
    # k >= 4 with three held values at this size: beyond the exact grid and every exact windowed
    # path, so the general bracket answers; over its work budget it raises, naming the dataset
    from shuffle_accounting._validation import WorkBudgetExceeded

    with pytest.raises(WorkBudgetExceeded, match="others"):
        dataset_delta(0.1, 10, 2.0, [100, 50, 349] + [0] * 7, max_work=100)
    # the count output keeps its own limit
    with pytest.raises(ParameterError, match="others"):
        dataset_delta(0.1, 3, 1.0, [20000, 0, 19999], output="count")


# ------------------------------------------------------------------------------------------
# properties
# ------------------------------------------------------------------------------------------

small_case = st.integers(2, 4).flatmap(
    lambda k: st.tuples(
        st.just(k),
        st.lists(st.integers(0, 3), min_size=k, max_size=k).filter(lambda c: 1 <= sum(c) <= 7),
        st.floats(0.1, 3.0),
    )
)


@settings(max_examples=40, deadline=None)
@given(small_case, st.lists(st.floats(0.0, 3.5), min_size=2, max_size=6))
def test_monotone_non_increasing_in_eps(case, eps_list):
    k, others, eps0 = case
    eps = np.sort(np.array(eps_list))
    d = dataset_delta(eps, k, eps0, others)
    assert np.all(d[1:] <= d[:-1] * (1 + 1e-12))
    assert np.all(d[eps >= eps0] == 0.0)


@settings(max_examples=40, deadline=None)
@given(small_case, st.floats(0.0, 3.0))
def test_count_is_post_processing_of_histogram(case, eps):
    k, others, eps0 = case
    h = dataset_delta(eps, k, eps0, others)
    c = dataset_delta(eps, k, eps0, others, output="count")
    assert c <= h * (1 + 1e-10) + 1e-300


@settings(max_examples=40, deadline=None)
@given(small_case, st.floats(0.0, 3.0))
def test_both_directions_symmetry(case, eps):
    # max of both directions: swapping who holds values 0 and 1 (and relabelling) changes nothing;
    # so does permuting the values >= 2.
    k, others, eps0 = case
    base = dataset_delta(eps, k, eps0, others)
    swapped = (others[1], others[0]) + tuple(others[2:])
    assert _close(dataset_delta(eps, k, eps0, swapped), base, 1e-9)
    perm = tuple(others[:2]) + tuple(reversed(others[2:]))
    assert _close(dataset_delta(eps, k, eps0, perm), base, 1e-9)


# ------------------------------------------------------------------------------------------
# bad inputs
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(eps=float("nan")), "eps"),
        (dict(eps=float("inf")), "eps"),
        (dict(eps=-0.1), "eps"),
        (dict(eps=True), "eps"),
        (dict(eps="0.1"), "eps"),
        (dict(k=1), "k"),
        (dict(k=2.5), "k"),
        (dict(k=True), "k"),
        (dict(eps0=0.0), "eps0"),
        (dict(eps0=float("nan")), "eps0"),
        (dict(eps0=float("inf")), "eps0"),
        (dict(eps0=-1.0), "eps0"),
        (dict(eps0=True), "eps0"),
        (dict(others=[1, 1]), "others"),
        (dict(others=[1, 1, 1, 1]), "others"),
        (dict(others=[1, -1, 1]), "others"),
        (dict(others=[1, 0.5, 1]), "others"),
        (dict(others=[1, True, 1]), "others"),
        (dict(others=[1, float("nan"), 1]), "others"),
        (dict(others=[1, float("inf"), 1]), "others"),
        (dict(others="abc"), "others"),
        (dict(others=5), "others"),
        (dict(others={1, 2, 3}), "others"),
        (dict(others=None), "others"),
        (dict(others=np.ones((3, 1), dtype=int)), "others"),
        (dict(output="hist"), "output"),
        (dict(output=None), "output"),
    ],
)
@pytest.mark.parametrize("fn", [dataset_delta, dataset_log_delta])
def test_bad_inputs_raise_naming_parameter(fn, kwargs, name):
    args = dict(eps=0.1, k=3, eps0=1.0, others=[1, 1, 1], output="histogram")
    args.update(kwargs)
    with pytest.raises(ParameterError, match=rf"^{name}"):
        fn(**args)


def test_histogram_bins_counts_sufficient_statistic():
    assert exact.histogram_bins(10, [0, 0, 6] + [0] * 7) == 4
    assert exact.histogram_bins(4, [1, 1, 1, 1]) == 4
    assert exact.histogram_bins(2, [3, 3]) == 2


@pytest.mark.parametrize("eps0", [0.3, 1.0, 2.5, 7.0, 7.7, 7.9])
@pytest.mark.parametrize("ulps", [1, 2, 3])
def test_within_ulps_of_eps0_the_maximal_loss_state_keeps_its_mass(eps0, ulps):
    # k = 2, others = [3, 3]: only "every report equal to the target's value" has loss eps0, so
    # just below eps0 the exact delta is its mass p^4 pbar^3 times (1 - e^(eps - eps0)).
    import math

    import numpy as np

    from shuffle_accounting.shuffled_krr import dataset_log_delta

    e = eps0
    for _ in range(ulps):
        e = float(np.nextafter(e, 0.0))
    p = 1.0 / (1.0 + math.exp(-eps0))
    want = 4 * math.log(p) + 3 * math.log1p(-p) + math.log(-math.expm1(e - eps0))
    assert dataset_log_delta(e, 2, eps0, [3, 3]) == pytest.approx(want, abs=1e-9)


def test_binary_at_scale_matches_the_exact_count_path(monkeypatch):
    # k = 2 above MAX_COUNT_WORK uses concentration windows (issue 11, item 5); force that path
    # on a small dataset and compare with the exact convolution
    import math

    from shuffle_accounting.shuffled_krr import dataset_log_delta, exact

    eps = [0.0, 0.1, 0.4, 0.9]
    for others in ([300, 199], [0, 499], [499, 0], [7, 492]):
        want = dataset_log_delta(eps, 2, 1.0, others)
        monkeypatch.setattr(exact, "MAX_COUNT_WORK", -1)
        got = dataset_log_delta(eps, 2, 1.0, others)
        monkeypatch.undo()
        for g, w in zip(got, want):
            assert g >= w - 1e-9 and g == pytest.approx(w, abs=1e-6)  # the certified upper end
    # a concrete n = 1e6 dataset, far above the exact path's limit
    v = dataset_log_delta(0.005, 2, 1.0, [999_999, 0])
    assert -40.0 < v < 0.0 and math.isfinite(v)
