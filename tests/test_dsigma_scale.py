"""Issue 12: the d_sigma pipeline at scale (flat groups, vectorised BFS, blocked sensitivity, budget)."""

from __future__ import annotations

import importlib
from collections import deque

import numpy as np
import pytest
from scipy.spatial import cKDTree

from shuffle_accounting._validation import ParameterError, WorkBudgetExceeded
from shuffle_accounting.dsigma import MallowsShuffler, groups_from_points, reference_permutation

groups_mod = importlib.import_module("shuffle_accounting.dsigma.groups")
ref_mod = importlib.import_module("shuffle_accounting.dsigma.reference")
sens_mod = importlib.import_module(
    "shuffle_accounting.dsigma.sensitivity"
)  # the package exports a function of that name
group_sensitivities = sens_mod.group_sensitivities


def _bfs_reference(groups):
    """The documented BFS rule, written plainly (deque, per-member Python loop)."""
    n = len(groups)
    sizes = [len(g) for g in groups]
    rev = [[] for _ in range(n)]
    for i, g in enumerate(groups):
        for v in g:
            rev[int(v)].append(i)
    roots = sorted(range(n), key=lambda i: (-sizes[i], i))
    seen = [False] * n
    out = []
    for root in roots:
        if seen[root]:
            continue
        seen[root] = True
        q = deque([root])
        while q:
            v = q.popleft()
            out.append(v)
            for w in list(groups[v]) + sorted(rev[v]):
                w = int(w)
                if not seen[w]:
                    seen[w] = True
                    q.append(w)
    return out


def _random_groups(rng, n):
    groups = []
    for i in range(n):
        others = rng.choice(n, size=int(rng.integers(0, 4)), replace=False)
        g = [i] + [int(x) for x in others if x != i]
        rng.shuffle(g)  # the given order matters for the BFS
        groups.append(g)
    return groups


@pytest.mark.parametrize("small", [0, 2, 24])  # vectorised, mixed, Python-loop enqueueing
@pytest.mark.parametrize("seed", range(6))
def test_vectorised_bfs_matches_the_plain_rule(seed, small, monkeypatch):
    monkeypatch.setattr(ref_mod, "SMALL_GROUP_LOOP", small)
    rng = np.random.default_rng(seed)
    groups = _random_groups(rng, 40)
    assert reference_permutation(groups).tolist() == _bfs_reference(groups)
    pts = rng.uniform(0, 1, (200, 2))
    sym = groups_from_points(pts, 0.15)  # mean group ~14: both paths at small = 2
    assert reference_permutation(sym).tolist() == _bfs_reference([g.tolist() for g in sym])


def test_symmetric_groups_skip_the_reverse_adjacency_with_the_same_order():
    pts = np.random.default_rng(1).uniform(0, 1, (300, 2))
    sym = groups_from_points(pts, 0.08)
    assert isinstance(sym, groups_mod.SymmetricGroups)
    plain = [g.tolist() for g in sym]  # same groups, not marked: the reverse lists are built
    assert (
        reference_permutation(sym).tolist() == reference_permutation(plain).tolist() == _bfs_reference(plain)
    )


def test_chunked_groups_equal_the_direct_query(monkeypatch):
    pts = np.random.default_rng(2).uniform(0, 1, (500, 2))
    direct = cKDTree(pts).query_ball_point(pts, 0.07, return_sorted=True)
    monkeypatch.setattr(groups_mod, "QUERY_CHUNK", 37)
    got = groups_from_points(pts, 0.07)
    assert [g.tolist() for g in got] == [list(x) for x in direct]


def test_blocked_sensitivities_equal_one_block(monkeypatch):
    rng = np.random.default_rng(3)
    groups = _random_groups(rng, 60)
    order = rng.permutation(60)
    whole = group_sensitivities(groups, order)
    monkeypatch.setattr(sens_mod, "CHUNK_MEMBERS", 5)
    assert group_sensitivities(groups, order).tolist() == whole.tolist()


def test_too_many_members_are_refused_before_any_group_is_built():
    pts = np.random.default_rng(4).uniform(0, 1, (2000, 2))
    with pytest.raises(WorkBudgetExceeded, match="nearest_groups"):
        groups_from_points(pts, 0.2, max_work=10**6)
    with pytest.raises(WorkBudgetExceeded, match="group members"):
        MallowsShuffler(points=pts, r=0.2, alpha=1.0, max_work=10**6)
    latlon = np.column_stack([np.linspace(40, 41, 500), np.linspace(-80, -79, 500)])
    with pytest.raises(WorkBudgetExceeded, match="haversine"):
        groups_from_points(latlon, 500.0, metric="haversine", max_work=1000)
    assert len(groups_from_points(pts, 0.01, max_work=10**9)) == 2000


@pytest.mark.parametrize("bad", [0, -1, 1.5, float("nan"), True, "1e8"])
def test_max_work_is_validated(bad):
    pts = np.zeros((3, 2))
    with pytest.raises(ParameterError, match="max_work"):
        groups_from_points(pts, 0.1, max_work=bad)
    with pytest.raises(ParameterError, match="max_work"):
        MallowsShuffler(points=pts, r=0.1, alpha=1.0, max_work=bad)
