"""Monte Carlo check of the exact values: play Game 1 / Game 2 with the Bayes-optimal attacker.

Plain numpy simulation, and for Game 2 also the collection runtime's own randomizer and shuffler,
with FIXED seeds (simulation only; nothing here is private). The empirical
success rate must lie in the 99.9% normal confidence interval around the exact value and, for
Game 2, below the blanket and clone bounds (up to the same sampling slack).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffle_accounting import KRR
from shuffle_accounting.reidentification import (
    ReidentificationRisk,
    game2_success_probability,
    success_probability,
)

# Seeds and Generators are used on purpose here (simulation mode): expect the warning.
pytestmark = pytest.mark.filterwarnings("ignore::shuffle_accounting._rng.PrivacyLeakWarning")

Z999 = 3.2905  # two-sided 99.9% normal quantile
TRIALS = 200_000


def _ci_half_width(p: float, trials: int) -> float:
    return Z999 * math.sqrt(p * (1 - p) / trials)


def _play_game1(P, Q, n, k, trials, rng):
    """Game 1: y_1 ~ P, y_2..y_n ~ Q, shuffle, attacker names the k positions of largest P/Q."""
    P, Q = np.asarray(P, float), np.asarray(Q, float)
    m = P.size
    y = np.empty((trials, n), dtype=np.int64)
    y[:, 0] = rng.choice(m, size=trials, p=P)
    if n > 1:
        y[:, 1:] = rng.choice(m, size=(trials, n - 1), p=Q)
    perm = np.argsort(rng.random((trials, n)), axis=1)  # z[:, j] = y[:, perm[:, j]]
    z = np.take_along_axis(y, perm, axis=1)
    target_pos = np.argmax(perm == 0, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(Q > 0, P / np.where(Q > 0, Q, 1.0), np.inf)
    score = ratio[z]
    # rank by ratio, ties broken uniformly at random (a random secondary key)
    order = np.lexsort((rng.random((trials, n)), -score), axis=1)
    guesses = order[:, :k]
    return float(np.mean(np.any(guesses == target_pos[:, None], axis=1)))


@pytest.mark.parametrize(
    "P,Q,n,k",
    [
        ([0.5, 0.3, 0.2], [0.2, 0.3, 0.5], 5, 1),
        ([0.4, 0.4, 0.2, 0.0], [0.2, 0.2, 0.3, 0.3], 6, 2),  # tie between symbols 0 and 1
        ([0.3, 0.3, 0.4], [0.0, 0.5, 0.5], 8, 1),  # Q(y) = 0: f(+inf) = 0.3
    ],
)
def test_game1_simulation_matches_exact(P, Q, n, k):
    rng = np.random.default_rng(12345)
    emp = _play_game1(P, Q, n, k, TRIALS, rng)
    exact = success_probability(P, Q, n, guesses=k)
    assert abs(emp - exact) <= _ci_half_width(exact, TRIALS)
    # power: a blind attacker (success k/n) would be far outside this interval
    assert abs(k / n - exact) > 5 * _ci_half_width(exact, TRIALS)


def _play_game2(r: KRR, inputs, trials, rng, y=None, perm=None):
    """Game 2 with k-RR: each user randomizes, shuffle, Bayes-optimal guess for user 1.

    The attacker picks the output value y maximising R(x1)(y) Pr_others[c - e_y] / c_y (the posterior
    of user 1 sitting at any one position holding y), then a uniformly random position holding y.
    ``y`` (reports, one row per trial) and ``perm`` (``z[:, j] = y[:, perm[:, j]]``) may be given,
    e.g. produced by the runtime's randomizer and shuffler; otherwise plain numpy draws them.
    """
    mat = r.matrix
    k = r.k
    n = len(inputs)
    # law of the others' count vectors, for the posterior
    from shuffle_accounting.reidentification.shuffle import others_count_distribution

    dist = others_count_distribution(mat, inputs[1:])
    if y is None:
        y = np.empty((trials, n), dtype=np.int64)
        for i, x in enumerate(inputs):
            y[:, i] = rng.choice(k, size=trials, p=mat[x])
    if perm is None:
        perm = np.argsort(rng.random((trials, n)), axis=1)
    z = np.take_along_axis(y, perm, axis=1)
    target_pos = np.argmax(perm == 0, axis=1)
    counts = np.stack([(z == v).sum(axis=1) for v in range(k)], axis=1)
    post = np.zeros((trials, k))
    for v in range(k):
        rest = counts.copy()
        rest[:, v] -= 1
        pr = np.array([dist.get(tuple(c), 0.0) if c[v] >= 0 else 0.0 for c in rest])
        with np.errstate(divide="ignore", invalid="ignore"):
            post[:, v] = np.where(counts[:, v] > 0, mat[inputs[0], v] * pr / counts[:, v], -1.0)
    # ties between values broken at random
    best = np.argmax(post + 1e-15 * rng.random(post.shape) * (post >= 0), axis=1)
    holders = z == best[:, None]
    pick_key = np.where(holders, rng.random((trials, n)), -1.0)
    guess = np.argmax(pick_key, axis=1)
    return float(np.mean(guess == target_pos))


@pytest.mark.parametrize("inputs", [(0, 1, 1, 2), (0, 1, 1, 1, 1), (2, 2, 0, 1)])
def test_game2_simulation_matches_exact_and_stays_below_bounds(inputs):
    r = KRR(3, 1.2)
    rng = np.random.default_rng(2024)
    trials = 100_000
    emp = _play_game2(r, list(inputs), trials, rng)
    exact = game2_success_probability(r, inputs[0], inputs[1:])
    half = _ci_half_width(exact, trials)
    assert abs(emp - exact) <= half
    risk = ReidentificationRisk(r, len(inputs))
    assert emp <= risk.bound(inputs[0]) + half
    assert emp <= risk.bound(inputs[0], method="clone") + half
    assert exact <= risk.bound(inputs[0])


def test_game2_with_the_runtime_randomizer_and_shuffler():
    """Game 2 played with the collection runtime itself (simulation mode, seeded, NOT private):
    KRRRandomizer produces the reports, Shuffler the permutation; the attacker's empirical success
    matches the exact value for the mechanism actually implemented (its effective eps0)."""
    from shuffle_accounting.runtime import KRRRandomizer, Shuffler

    inputs = [0, 1, 1, 2]
    n, trials = len(inputs), 40_000
    gen = np.random.default_rng(77)
    rand = KRRRandomizer(3, 1.2)
    y = rand.randomize_codes(np.tile(inputs, trials), rng=gen).reshape(trials, n)
    shuffler = Shuffler(min_batch=n)
    perm = np.stack([shuffler.shuffle(np.arange(n), rng=gen) for _ in range(trials)])
    r = rand.krr
    emp = _play_game2(r, inputs, trials, gen, y=y, perm=perm)
    exact = game2_success_probability(r, inputs[0], inputs[1:])
    half = _ci_half_width(exact, trials)
    assert abs(emp - exact) <= half
    assert abs(1 / n - exact) > 5 * half  # power: a blind guess would be rejected
    assert emp <= ReidentificationRisk(r, n).bound(inputs[0]) + half
