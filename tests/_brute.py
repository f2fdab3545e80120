"""Shared brute-force references for the tests (exhaustive over every dataset of small ``n``)."""

from __future__ import annotations

import math
import random

import numpy as np
from scipy.stats import binom

from shuffle_accounting.shuffled_krr import dataset_log_delta

__all__ = ["brute_deltas_k2", "brute_max_k3", "hockey_both", "random_spread_cases"]


def brute_deltas_k2(eps0: float, n: int, eps: float) -> np.ndarray:
    """``h_c(eps)`` for every k = 2 dataset ``c`` (``c`` others at 0, the rest at 1; the target
    moves 0 -> 1), in double precision: the law of the count of ones by one convolution of the
    two binomials, then the hockey-stick sum."""
    p = math.exp(eps0) / (math.exp(eps0) + 1.0)
    q = 1.0 - p
    out = np.empty(n)
    for c in range(n):
        x = np.convolve(binom.pmf(np.arange(c + 1), c, q), binom.pmf(np.arange(n - c), n - 1 - c, p))
        xs, xs1 = np.append(x, 0.0), np.insert(x, 0, 0.0)  # X(s), X(s - 1) for s = 0 .. n
        P, Q = p * xs + q * xs1, q * xs + p * xs1  # S = number of ones
        out[c] = np.sum(np.maximum(P - math.exp(eps) * Q, 0.0))
    return out


def brute_max_k3(eps: float, eps0: float, n: int) -> float:
    """``max_c log delta_c(eps)`` over every k = 3 dataset of ``n`` users (exact histogram enumeration)."""
    best = -math.inf
    for c0 in range(n):
        for c1 in range(n - c0):
            best = max(best, float(dataset_log_delta(eps, 3, eps0, [c0, c1, n - 1 - c0 - c1])))
    return best


def random_spread_cases(seed: int, count: int, kmax: int = 6, nmax: int = 9) -> list:
    """``count`` random small datasets ``(k, counts of the other users, eps0, eps)``, reproducible
    from ``seed``: ``3 <= k <= kmax``, ``2 <= n <= nmax``, the others spread uniformly at random
    over the ``k`` values, ``eps`` a fraction of ``eps0`` in ``{0, 0.05, 0.3, 0.7, 0.99}``."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        k = rng.randint(3, kmax)
        n = rng.randint(2, nmax)
        counts = [0] * k
        for _ in range(n - 1):
            counts[rng.randrange(k)] += 1
        eps0 = rng.choice([0.2, 0.7, 1.5, 3.0, 6.0])
        eps = eps0 * rng.choice([0.0, 0.05, 0.3, 0.7, 0.99])
        out.append((k, tuple(counts), eps0, eps))
    return out


def hockey_both(P: dict, Q: dict, E):
    """``(H_E(P || Q), H_E(Q || P))`` of two laws given as dicts ``outcome -> probability`` (exact
    when the probabilities and ``E`` are ``Fraction``)."""
    keys = set(P) | set(Q)
    f = sum(max(0, P.get(x, 0) - E * Q.get(x, 0)) for x in keys)
    r = sum(max(0, Q.get(x, 0) - E * P.get(x, 0)) for x in keys)
    return f, r
