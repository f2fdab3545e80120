"""Privacy of the Mallows shuffler by brute force, exact sensitivity, and the App. A.10 example."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from shuffle_accounting.dsigma import (
    MallowsShuffler,
    exact_sensitivity,
    group_sensitivities,
    group_widths,
    hamming_sensitivity,
    kendall_width_bound,
    reference_permutation,
    regrouped_alpha,
    validate_groups,
)

# App. A.10 of "Privacy Implications of Shuffling": n = 8, G5 = {5,2,3,8,4}, G8 = {8,3,5},
# G4 = {4,5,7}; the figure's remaining edges are reconstructed as 1-2, 3-6 (1-based), which is
# the unique-up-to-symmetry completion giving the printed BFS order and widths.
A10_ONE_BASED = {
    1: [1, 2],
    2: [2, 5, 1],
    3: [3, 5, 8, 6],
    4: [4, 5, 7],
    5: [5, 2, 3, 8, 4],
    6: [6, 3],
    7: [7, 4],
    8: [8, 3, 5],
}
A10 = [[v - 1 for v in A10_ONE_BASED[i]] for i in range(1, 9)]


def test_appendix_a10_example():
    order = reference_permutation(A10)
    assert (order + 1).tolist() == [5, 2, 3, 8, 4, 1, 6, 7]
    w = group_widths(A10, order)
    assert w[5 - 1] == 4 and w[4 - 1] == 7
    assert kendall_width_bound(A10, order) == 28  # the paper's Delta = 7 * 8 / 2
    assert exact_sensitivity(A10, order) == 13  # exact value (group 4)


def _all_perms(n):
    perms = np.array(list(itertools.permutations(range(n))), dtype=np.int64)
    inv = np.array([sum(p[i] > p[j] for i in range(n) for j in range(i + 1, n)) for p in perms])
    ham = (perms != np.arange(n)).sum(axis=1)
    return perms, inv, ham


def _codes(mat, n):
    return mat @ (n ** np.arange(n, dtype=np.int64))


def _brute_force_max_loss(groups, order, dist):
    """max over neighbouring inputs and outputs of (d(delta_2) - d(delta_1)): the log-ratio / theta.

    Inputs: WLOG y = (0, ..., n-1) (any y with distinct values is a relabelling of it, and the
    mechanism's output law is equivariant under relabelling values); the neighbour of y w.r.t.
    G_i is y o rho for every permutation rho of G_i. Output z = v[pi(delta)], pi = order[delta[pos]].
    Each output has exactly one delta per input, so the log-ratio of output probabilities is
    -theta d(delta_1) + theta d(delta_2) exactly.
    """
    n = len(groups)
    perms, inv, ham = _all_perms(n)
    d = inv if dist == "kendall" else ham
    order = np.asarray(order)
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    pis = order[perms[:, pos]]  # one row per delta
    code1 = _codes(pis, n)
    lookup1 = dict(zip(code1.tolist(), d.tolist()))
    worst = 0
    for g in groups:
        g = list(g)
        for rho_vals in itertools.permutations(g):
            rho = np.arange(n)
            rho[g] = rho_vals
            code2 = _codes(rho[pis], n)
            d1 = np.array([lookup1[c] for c in code2.tolist()])
            worst = max(worst, int(np.max(d - d1)))
    return worst


def _random_groups(n, rng):
    """Symmetric random neighbourhood groups (i and its graph neighbours)."""
    adj = np.triu(rng.random((n, n)) < 0.35, 1)
    adj = adj | adj.T
    return [sorted({i} | set(np.flatnonzero(adj[i]).tolist())) for i in range(n)]


CASES = [
    ([[0, 1], [0, 1], [2, 3], [2, 3]], None),
    ([[0, 3], [1], [2], [0, 3]], [0, 1, 2, 3]),  # wide group
    ([[0, 1, 2], [0, 1], [0, 2, 4], [3, 4], [2, 3, 4]], None),
    ([[0, 5], [1, 2], [1, 2, 3], [2, 3], [4], [0, 5]], [0, 1, 2, 3, 4, 5]),
]


@pytest.mark.parametrize("groups,order", CASES)
@pytest.mark.parametrize("dist", ["kendall", "hamming"])
def test_privacy_brute_force_small(groups, order, dist):
    sh = MallowsShuffler(groups, alpha=1.7, distance=dist, order=order)
    worst = _brute_force_max_loss(sh.groups, sh.order, dist)
    # log-ratio <= theta * worst <= alpha, and the worst pair attains theta * Delta_exact
    assert worst == sh.sensitivity
    assert sh.theta * worst <= sh.alpha


@pytest.mark.parametrize("seed", [1, 2])
def test_privacy_brute_force_n7(seed):
    rng = np.random.default_rng(seed)
    groups = _random_groups(7, rng)
    while max(len(g) for g in groups) > 4:  # keep |G_i|! small
        groups = _random_groups(7, rng)
    for dist in ("kendall", "hamming"):
        sh = MallowsShuffler(groups, alpha=3.0, distance=dist)
        assert _brute_force_max_loss(sh.groups, sh.order, dist) == sh.sensitivity
    # and also with a deliberately bad (random) reference permutation
    order = rng.permutation(7)
    assert _brute_force_max_loss(sh.groups, order, "kendall") == exact_sensitivity(groups, order)


def test_output_probability_ratio_numerically():
    """The actual output probabilities (not just distances) respect e^alpha, equality at the worst pair."""
    groups = [[0, 2], [1], [0, 2], [3]]
    sh = MallowsShuffler(groups, alpha=0.9, order=[0, 1, 3, 2])
    n = 4
    perms, inv, _ = _all_perms(n)
    logp = -sh.theta * inv
    logp -= np.log(np.exp(logp).sum())
    pis = sh.order[perms[:, sh.pos]]
    c1 = dict(zip(_codes(pis, n).tolist(), logp.tolist()))
    rho = np.array([2, 1, 0, 3])
    c2 = _codes(rho[pis], n).tolist()
    ratios = np.array([lp - c1[c] for lp, c in zip(logp.tolist(), c2)])
    assert ratios.max() <= sh.alpha + 1e-12
    assert ratios.max() == pytest.approx(sh.theta * sh.sensitivity, rel=1e-12)
    assert sh.sensitivity == 5  # C(2,2) + 2 * (gap positions 1 and 2, each min(1, 1))


def test_exact_sensitivity_closed_form_vs_brute_force():
    """Delta_i = max_{delta, tau on P_i} |inv(tau o delta) - inv(delta)| for random small cases."""
    rng = np.random.default_rng(11)
    for n in (3, 4, 5, 6):
        perms, inv, ham = _all_perms(n)
        code = {c: k for k, c in enumerate(_codes(perms, n).tolist())}
        for _ in range(3):
            groups = _random_groups(n, rng)
            order = rng.permutation(n)
            pos = np.empty(n, dtype=np.int64)
            pos[order] = np.arange(n)
            per_group = group_sensitivities(groups, order)
            for i, g in enumerate(groups):
                P = sorted(pos[g].tolist())
                best_k = best_h = 0
                for tv in itertools.permutations(P):
                    tau = np.arange(n)
                    tau[P] = tv
                    moved = tau[perms]  # (tau o delta) for every delta
                    idx = np.array([code[c] for c in _codes(moved, n).tolist()])
                    best_k = max(best_k, int(np.max(np.abs(inv[idx] - inv))))
                    best_h = max(best_h, int(np.max(np.abs(ham[idx] - ham))))
                assert per_group[i] == best_k
                assert best_h == (len(g) if len(g) >= 2 else 0)
            assert hamming_sensitivity(groups) == max(len(g) if len(g) >= 2 else 0 for g in groups)
            assert exact_sensitivity(groups, order) <= kendall_width_bound(groups, order)


def test_all_singletons_is_identity():
    sh = MallowsShuffler([[0], [1], [2]], alpha=1.0)
    assert sh.sensitivity == 0 and math.isinf(sh.theta)
    assert sh.shuffle([5, 6, 7]) == [5, 6, 7]


def test_regrouping_alpha_is_the_true_loss_brute_force():
    """Thm 4.4 with exact Delta: the brute-force loss w.r.t. G' equals theta * Delta(G')."""
    G = [[0, 1], [0, 1], [2, 3], [2, 3], [4]]
    G2 = [[0, 4], [1, 2], [1, 2], [3], [0, 4]]
    sh = MallowsShuffler(G, alpha=1.0)
    worst = _brute_force_max_loss(validate_groups(G2), sh.order, "kendall")
    assert regrouped_alpha(sh.theta, sh.order, G2) == pytest.approx(sh.theta * worst, rel=1e-15)


def test_printed_step8_composition_is_not_private():
    """The paper's step 8 (sigma* = sigma_0^{-1} sigma, sigma ~ Mallows around sigma_0) releases
    y[pos[delta[order]]]: the conjugation the wrong way round, i.e. our mechanism with ``pos``
    used as the reference list. Its true loss exceeds theta * Delta(sigma_0) (here 14 vs 7)."""
    groups = [[0, 5], [1, 3, 5], [2, 3, 5], [1, 2, 3], [4], [0, 1, 2, 5]]
    sh = MallowsShuffler(groups, alpha=1.0)
    assert sh.order.tolist() == [5, 0, 1, 2, 3, 4] and sh.sensitivity == 7
    assert _brute_force_max_loss(sh.groups, sh.order, "kendall") == 7
    printed = _brute_force_max_loss(sh.groups, sh.pos, "kendall")
    assert printed == 14 > sh.sensitivity
