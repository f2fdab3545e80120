"""Shared brute-force references for the tests (exhaustive over every dataset of small ``n``)."""

from __future__ import annotations

import math

from shuffle_accounting.shuffled_krr import dataset_log_delta

__all__ = ["brute_max_k3"]


def brute_max_k3(eps: float, eps0: float, n: int) -> float:
    """``max_c log delta_c(eps)`` over every k = 3 dataset of ``n`` users (exact histogram enumeration)."""
    best = -math.inf
    for c0 in range(n):
        for c1 in range(n - c0):
            best = max(best, float(dataset_log_delta(eps, 3, eps0, [c0, c1, n - 1 - c0 - c1])))
    return best
