"""Groups, shuffler, accounting, utility, CLI subcommand and input validation for dsigma."""

from __future__ import annotations

import argparse
import itertools
import math

import mpmath
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.dsigma import (
    DSigmaAccountant,
    MallowsShuffler,
    exact_sensitivity,
    group_sensitivities,
    groups_from_graph,
    groups_from_points,
    hamming_preservation_delta,
    inverse_order,
    kendall_preservation_delta_mc,
    kendall_width_bound,
    nearest_groups,
    preservation_k,
    reference_permutation,
    regrouped_alpha,
    reidentification_bound,
    sample_mallows,
    theta_for_alpha,
)
from shuffle_accounting.dsigma.utility import hamming_failure_probability
from shuffle_accounting.presentation.dsigma_command import add_subcommand, load_points

# Seeds and Generators are used on purpose here (simulation mode): expect the warning.
pytestmark = pytest.mark.filterwarnings("ignore::shuffle_accounting._rng.PrivacyLeakWarning")


# ----------------------------------------------------------------------------- groups
def test_groups_from_points_matches_dense():
    rng = np.random.default_rng(0)
    pts = rng.uniform(0, 10, (300, 2))
    groups = groups_from_points(pts, 1.3)
    dense = np.linalg.norm(pts[:, None] - pts[None], axis=2) <= 1.3
    for i, g in enumerate(groups):
        assert g.tolist() == np.flatnonzero(dense[i]).tolist()


def test_haversine_groups_match_direct_formula():
    rng = np.random.default_rng(1)
    pts = np.column_stack([rng.uniform(-60, 60, 200), rng.uniform(-180, 180, 200)])
    r = 1500.0
    groups = groups_from_points(pts, r, metric="haversine")
    lat, lon = np.radians(pts[:, 0]), np.radians(pts[:, 1])
    h = (
        np.sin((lat[:, None] - lat[None]) / 2) ** 2
        + np.cos(lat[:, None]) * np.cos(lat[None]) * np.sin((lon[:, None] - lon[None]) / 2) ** 2
    )
    dist = 2 * 6371.0088 * np.arcsin(np.sqrt(h))
    for i, g in enumerate(groups):
        assert g.tolist() == np.flatnonzero(dist[i] <= r).tolist()
    # London-Paris is about 344 km
    lp = groups_from_points([[51.5074, -0.1278], [48.8566, 2.3522]], 350, metric="haversine")
    assert lp[0].tolist() == [0, 1]
    assert groups_from_points([[51.5074, -0.1278], [48.8566, 2.3522]], 330, metric="haversine")[
        0
    ].tolist() == [0]


def test_graph_groups_match_floyd():
    rng = np.random.default_rng(2)
    n = 40
    edges = [(int(a), int(b)) for a, b in rng.integers(0, n, (60, 2)) if a != b]
    groups = groups_from_graph(edges, 2, n=n)
    m = np.zeros((n, n))
    for a, b in edges:
        m[a, b] = m[b, a] = 1
    d = shortest_path(m, unweighted=True, directed=False)
    for i, g in enumerate(groups):
        assert g.tolist() == np.flatnonzero(d[i] <= 2).tolist()
    # weighted, as a sparse matrix
    w = [(a, b, float(rng.uniform(0.1, 2))) for a, b in edges]
    mat = sp.coo_matrix(([x[2] for x in w], ([x[0] for x in w], [x[1] for x in w])), shape=(n, n)).tocsr()
    gw = groups_from_graph(mat, 1.5)
    dw = shortest_path(mat, directed=False)
    for i, g in enumerate(gw):
        assert g.tolist() == np.flatnonzero(dw[i] <= 1.5).tolist()


def test_nearest_groups_and_large_n_sparse():
    pts = np.random.default_rng(3).uniform(0, 1, (50, 3))
    g = nearest_groups(pts, 5)
    d = np.linalg.norm(pts[:, None] - pts[None], axis=2)
    for i, gi in enumerate(g):
        assert i in gi and sorted(gi.tolist()) == sorted(np.argsort(d[i])[:5].tolist())
    # n = 2e4 runs without any n x n matrix (1e5 is in the benchmark)
    big = np.random.default_rng(4).uniform(0, 100, (20_000, 2))
    groups = groups_from_points(big, 0.5)
    order = reference_permutation(groups)
    assert sorted(order.tolist()) == list(range(20_000))
    per_group = group_sensitivities(groups, order)
    delta = exact_sensitivity(groups, order)
    assert delta == per_group.max()
    # the vectorised per-group values equal the module docstring's formula evaluated directly
    # (loop over the positions spanned by the group), on the largest groups and a random sample
    pos = inverse_order(order)
    check = set(np.argsort(per_group)[-20:].tolist()) | set(
        np.random.default_rng(5).choice(20_000, 200).tolist()
    )
    for i in check:
        p = sorted(pos[groups[i]].tolist())
        m = len(p)
        members = set(p)
        direct = m * (m - 1) // 2 + 2 * sum(
            min(sum(q < f for q in p), sum(q > f for q in p))
            for f in range(p[0], p[-1] + 1)
            if f not in members
        )
        assert per_group[i] == direct, i
    # a group of m >= 2 users has at least C(m, 2) inversions; the paper's width bound is above
    largest = max(len(g) for g in groups)
    assert largest >= 2 and largest * (largest - 1) // 2 <= delta <= kendall_width_bound(groups, order)


# ----------------------------------------------------------------------------- shuffler
def test_shuffler_basic_properties():
    G = [[0, 1], [0, 1, 2], [1, 2], [3]]
    sh = MallowsShuffler(G, alpha=2.0)
    assert sh.theta * sh.sensitivity <= sh.alpha
    assert sh.theta == pytest.approx(2.0 / sh.sensitivity, rel=1e-15)
    out = sh.shuffle(np.array([10, 11, 12, 13]), rng=0)
    assert sorted(out.tolist()) == [10, 11, 12, 13]
    assert sorted(sh.shuffle(["a", "b", "c", "d"])) == ["a", "b", "c", "d"]  # secure path
    assert "sensitivity Delta (exact)" in sh.summary() and str(sh) == sh.summary()
    with pytest.raises(AttributeError):
        sh.alpha = 3.0  # type: ignore[misc]
    assert MallowsShuffler(G, alpha=0.0).theta == 0.0
    assert math.isinf(MallowsShuffler(G, alpha=math.inf).theta)


def test_shuffler_from_points_and_uniform_limits():
    pts = [[0.0], [0.5], [1.0], [10.0], [10.4]]
    sh = MallowsShuffler(points=pts, r=0.6, alpha=1.0, distance="hamming")
    assert [g.tolist() for g in sh.groups] == [[0, 1], [0, 1, 2], [1, 2], [3, 4], [3, 4]]
    assert sh.sensitivity == 3
    # shuffling keeps users mostly within groups at large alpha
    big = MallowsShuffler(points=pts, r=0.6, alpha=200.0)
    assert big.permutation(rng=1).tolist() == [0, 1, 2, 3, 4]


def test_theta_rounding_is_safe():
    for alpha in (0.1, 0.3, 1 / 3, 2.7, 1e-300, 1e300):
        for sens in (1, 3, 7, 13, 99991):
            th = theta_for_alpha(alpha, sens)
            from fractions import Fraction

            assert Fraction(th) * sens <= Fraction(alpha)
            assert th >= alpha / sens * (1 - 1e-15)


# ----------------------------------------------------------------------------- accounting
def test_accountant_composition_and_regrouping():
    G = [[0, 1], [0, 1], [2, 3], [2, 3]]
    acct = DSigmaAccountant(G)
    sh = MallowsShuffler(G, alpha=1.0)
    acct.add_shuffler(sh).add_shuffler(sh).add(0.25)
    assert acct.alpha >= 2.25 and acct.alpha == pytest.approx(2.25, rel=1e-15)
    assert len(acct.releases) == 3
    # regrouping: alpha' = theta * Delta(sigma_0 : d, G') with the same exact Delta
    G2 = [[0, 1, 2], [0, 1], [0, 2], [3]]
    a2 = regrouped_alpha(sh.theta, sh.order, G2)
    assert a2 == pytest.approx(sh.theta * exact_sensitivity(G2, sh.order), rel=1e-15)
    assert a2 >= sh.theta * exact_sensitivity(G2, sh.order)
    total = DSigmaAccountant(G2).add_shuffler(sh).alpha
    assert total >= a2 and total == pytest.approx(a2, rel=1e-15)
    assert regrouped_alpha(sh.theta, sh.order, [[0], [1], [2], [3]]) == 0.0


def test_reidentification_bound():
    b = reidentification_bound(0.2, 2.0, 50, 5)
    assert b.odds_lower <= 9 * math.exp(-4.0)
    assert b.odds_lower == pytest.approx(9 * math.exp(-4.0), rel=1e-14)
    assert b.win_probability_upper >= 1 / (1 + 9 * math.exp(-4.0))
    assert reidentification_bound(0.2, math.inf, 50, 5).win_probability_upper == 1.0
    with pytest.raises(ParameterError, match="k must satisfy"):
        reidentification_bound(0.2, 1.0, 10, 5)
    acct = DSigmaAccountant([list(range(12))] * 12).add(1.0)
    assert acct.reidentification_bound(0.1, 2, user=3).odds_lower == pytest.approx(5 * math.exp(-1.4))


# ----------------------------------------------------------------------------- utility
def _brute_force_delta(n, l, eta, theta, k=None):
    mpmath.mp.dps = 40
    x = mpmath.exp(-mpmath.mpf(theta))
    k = preservation_k(l, eta) if k is None else k
    num = den = mpmath.mpf(0)
    for p in itertools.permutations(range(n)):
        w = x ** sum(1 for i, v in enumerate(p) if v != i)
        den += w
        out = sum(1 for i in range(l) if p[i] >= l)  # S = first l positions
        if out >= k + 1:
            num += w
    return float(num / den)


@pytest.mark.parametrize(
    "n,l,eta,theta",
    [
        (7, 4, 0.6, 0.5),
        (6, 3, 0.5, 1.0),
        (6, 2, 1.0, 0.1),
        (5, 5, 0.2, 0.3),
        (7, 3, 0.0, 2.0),
        (6, 4, 0.75, 0.0),
    ],
)
def test_hamming_preservation_vs_brute_force(n, l, eta, theta):
    exact = _brute_force_delta(n, l, eta, theta)
    got = hamming_preservation_delta(n, l, eta, theta)
    assert got >= exact * (1 - 1e-15)
    assert got == pytest.approx(exact, rel=1e-10, abs=1e-300)


def test_theorem_a4_floor_vs_printed_ceiling():
    # README of the papers: n=7, |S|=4, eta=0.6, theta=0.5: true 0.5138998476, printed 0.0694271895
    assert hamming_preservation_delta(7, 4, 0.6, 0.5) == pytest.approx(0.5138998476, abs=1e-10)
    k_ceil = math.ceil((1 - 0.6) * 4)
    assert hamming_failure_probability(7, 4, k_ceil, 0.5) == pytest.approx(0.0694271895, abs=1e-10)
    assert _brute_force_delta(7, 4, 0.6, 0.5, k=k_ceil) == pytest.approx(0.0694271895, abs=1e-10)
    assert hamming_preservation_delta(7, 4, 0.6, math.inf) == 0.0


def test_hamming_preservation_larger_n_is_a_probability_and_monotone():
    ds = [hamming_preservation_delta(400, 50, 0.8, th) for th in (0.0, 2.0, 5.0, 8.0)]
    assert all(0 <= d <= 1 for d in ds)
    assert ds == sorted(ds, reverse=True)


def test_kendall_preservation_mc_covers_exact():
    n, S, eta, theta = 6, [2, 3, 4], 0.7, 0.8
    mpmath.mp.dps = 30
    num = den = mpmath.mpf(0)
    for p in itertools.permutations(range(n)):
        inv = sum(1 for i in range(n) for j in range(i + 1, n) if p[i] > p[j])
        w = mpmath.exp(-theta * inv)
        den += w
        if sum(1 for s in S if p[s] in S) < eta * len(S):
            num += w
    exact = float(num / den)
    est = kendall_preservation_delta_mc(n, S, eta, theta, trials=3000, rng=5)
    assert est.lower <= exact <= est.upper
    assert est.lower <= est.estimate <= est.upper


# ----------------------------------------------------------------------------- CLI
def test_cli_subcommand(tmp_path, capsys):
    f = tmp_path / "pts.csv"
    pts = np.random.default_rng(0).uniform(0, 10, (200, 2))
    f.write_text("x,y\n" + "\n".join(f"{a},{b}" for a, b in pts))
    parser = argparse.ArgumentParser()
    add_subcommand(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["dsigma", "--points", str(f), "--r", "2.0", "--alpha", "4", "--eps", "0.5"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "sensitivity Delta (exact)" in out and "Thm 4.2" in out
    args = parser.parse_args(
        ["dsigma", "--points", str(f), "--nearest", "5", "--alpha", "4", "--distance", "hamming"]
    )
    assert args.func(args) == 0
    assert "preservation" in capsys.readouterr().out
    with pytest.raises(ParameterError, match="points"):
        load_points(str(tmp_path / "missing.csv"))
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2\n3,x\n")
    with pytest.raises(ParameterError, match="points"):
        load_points(str(bad))


# ----------------------------------------------------------------------------- validation
BAD_CALLS = [
    ("alpha", lambda: MallowsShuffler([[0]], alpha=-1.0)),
    ("alpha", lambda: MallowsShuffler([[0]], alpha=float("nan"))),
    ("alpha", lambda: MallowsShuffler([[0]], alpha=True)),
    ("alpha", lambda: MallowsShuffler([[0]], alpha="1")),
    ("alpha", lambda: MallowsShuffler([[0]])),
    ("groups", lambda: MallowsShuffler([], alpha=1.0)),
    ("groups", lambda: MallowsShuffler([[0], []], alpha=1.0)),
    ("groups", lambda: MallowsShuffler([[0, 5], [1]], alpha=1.0)),
    ("groups", lambda: MallowsShuffler([[0, -1], [1]], alpha=1.0)),
    ("groups", lambda: MallowsShuffler([[1], [1]], alpha=1.0)),
    ("groups", lambda: MallowsShuffler([[0, 0], [1]], alpha=1.0)),
    ("groups", lambda: MallowsShuffler([[0, 1.5], [1]], alpha=1.0)),
    ("groups", lambda: MallowsShuffler([[True], [1]], alpha=1.0)),
    ("groups", lambda: MallowsShuffler(5, alpha=1.0)),
    ("groups or points", lambda: MallowsShuffler([[0]], alpha=1.0, points=[[0.0]], r=1.0)),
    ("r", lambda: MallowsShuffler(points=[[0.0]], alpha=1.0)),
    ("r", lambda: MallowsShuffler(points=[[0.0]], r=-1.0, alpha=1.0)),
    ("r", lambda: MallowsShuffler(points=[[0.0]], r=float("inf"), alpha=1.0)),
    ("points", lambda: MallowsShuffler(points=[[float("nan")]], r=1.0, alpha=1.0)),
    ("distance", lambda: MallowsShuffler([[0]], alpha=1.0, distance="spearman")),
    ("metric", lambda: groups_from_points([[0.0]], 1.0, metric="manhattan")),
    ("points", lambda: groups_from_points([[95.0, 0.0]], 1.0, metric="haversine")),
    ("order", lambda: MallowsShuffler([[0], [1]], alpha=1.0, order=[0, 0])),
    ("reports", lambda: MallowsShuffler([[0], [1]], alpha=1.0).shuffle([1, 2, 3])),
    ("rng", lambda: MallowsShuffler([[0], [1]], alpha=1.0).shuffle([1, 2], rng=-1)),
    ("rng", lambda: sample_mallows(3, 1.0, rng="seed")),
    ("rng", lambda: sample_mallows(3, 1.0, rng=True)),
    ("n", lambda: sample_mallows(0, 1.0)),
    ("n", lambda: sample_mallows(2.5, 1.0)),
    ("theta", lambda: sample_mallows(3, -0.1)),
    ("theta", lambda: sample_mallows(3, float("nan"))),
    ("size", lambda: sample_mallows(3, 1.0, size=0)),
    ("distance", lambda: sample_mallows(3, 1.0, distance="cayley")),
    ("eta", lambda: hamming_preservation_delta(5, 2, 1.5, 1.0)),
    ("eta", lambda: hamming_preservation_delta(5, 2, float("nan"), 1.0)),
    ("subset_size", lambda: hamming_preservation_delta(5, 6, 0.5, 1.0)),
    ("subset_size", lambda: hamming_preservation_delta(5, 0, 0.5, 1.0)),
    ("theta", lambda: hamming_preservation_delta(5, 2, 0.5, -1.0)),
    ("n", lambda: hamming_preservation_delta(True, 1, 0.5, 1.0)),
    ("subset", lambda: kendall_preservation_delta_mc(5, [0, 9], 0.5, 1.0)),
    ("trials", lambda: kendall_preservation_delta_mc(5, [0, 1], 0.5, 1.0, trials=0)),
    ("confidence", lambda: kendall_preservation_delta_mc(5, [0, 1], 0.5, 1.0, confidence=1.0)),
    ("eps", lambda: reidentification_bound(-1.0, 1.0, 10, 2)),
    ("alpha", lambda: reidentification_bound(1.0, float("nan"), 10, 2)),
    ("group_size", lambda: reidentification_bound(1.0, 1.0, 2, 1)),
    ("k", lambda: reidentification_bound(1.0, 1.0, 10, 0)),
    ("alpha", lambda: DSigmaAccountant([[0]]).add(-0.5)),
    ("shuffler", lambda: DSigmaAccountant([[0]]).add_shuffler("x")),
    ("shuffler", lambda: DSigmaAccountant([[0]]).add_shuffler(MallowsShuffler([[0], [1]], alpha=1.0))),
    ("user", lambda: DSigmaAccountant([[0]]).reidentification_bound(0.1, 1, user=3)),
    ("n", lambda: groups_from_graph([(0, 1)], 1.0)),
    ("graph", lambda: groups_from_graph([(0, 1, -2.0)], 1.0, n=2)),
    ("graph", lambda: groups_from_graph([(0, 7)], 1.0, n=2)),
    ("size", lambda: nearest_groups([[0.0], [1.0]], 3)),
    ("theta", lambda: regrouped_alpha(float("nan"), [0], [[0]])),
]


@pytest.mark.parametrize("name,call", BAD_CALLS, ids=[f"{i}-{b[0]}" for i, b in enumerate(BAD_CALLS)])
def test_bad_inputs_raise_parameter_error_naming_argument(name, call):
    with pytest.raises(ParameterError) as info:
        call()
    assert name in str(info.value)
    assert isinstance(info.value, ValueError)


# ----------------------------------------------------------------------------- properties
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.data())
def test_sensitivity_properties(n, data):
    adj = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=20))
    groups = [{i} for i in range(n)]
    for a, b in adj:
        groups[a].add(b)
        groups[b].add(a)
    order = data.draw(st.permutations(list(range(n))))
    from shuffle_accounting.dsigma import group_sensitivities, group_widths

    per = group_sensitivities(groups, order)
    widths = group_widths(groups, order)
    for g, d, w in zip(groups, per, widths):
        m = len(g)
        assert m * (m - 1) // 2 <= d <= w * (w + 1) // 2
        if w == m - 1:  # contiguous in sigma_0: only the within-group pairs can flip
            assert d == m * (m - 1) // 2


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 40), st.floats(0, 5), st.sampled_from(["kendall", "hamming"]), st.integers(0, 2**32))
def test_samples_are_permutations(n, theta, dist, seed):
    p = sample_mallows(n, theta, distance=dist, rng=seed)
    assert sorted(p.tolist()) == list(range(n))


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 30), st.data())
def test_hamming_preservation_monotone_in_theta(n, data):
    l = data.draw(st.integers(1, n))
    eta = data.draw(st.floats(0, 1))
    t1 = data.draw(st.floats(0, 6))
    t2 = data.draw(st.floats(0, 6))
    lo, hi = sorted((t1, t2))
    d_lo = hamming_preservation_delta(n, l, eta, lo)
    d_hi = hamming_preservation_delta(n, l, eta, hi)
    assert 0.0 <= d_hi <= d_lo * (1 + 1e-9) + 1e-300 <= 1.0 + 1e-9
