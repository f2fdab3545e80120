"""Speed of the d_sigma pipeline: groups (n = 1e5 points), BFS sigma_0, exact sensitivity, samplers.

Run: ``python benchmarks/bench_dsigma.py`` (prints a table; numbers are wall-clock seconds,
best of ``repeat`` runs).
"""

from __future__ import annotations

import time

import numpy as np

from shuffle_accounting.dsigma import (
    MallowsShuffler,
    exact_sensitivity,
    groups_from_graph,
    groups_from_points,
    hamming_preservation_delta,
    kendall_width_bound,
    nearest_groups,
    reference_permutation,
    sample_mallows,
)


def best(fn, repeat=3):
    times = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    rows = []
    rng = np.random.default_rng(0)
    n = 100_000
    pts = rng.uniform(0, 316.0, (n, 2))  # density 1 per unit^2
    t, groups = best(lambda: groups_from_points(pts, 2.0), repeat=1)
    sizes = np.array([g.size for g in groups])
    rows.append((f"groups_from_points n=1e5 r=2 (mean |G|={sizes.mean():.1f})", t))
    latlon = np.column_stack([rng.uniform(30, 50, n), rng.uniform(-120, -80, n)])
    t, _ = best(lambda: groups_from_points(latlon, 5.0, metric="haversine"), repeat=1)
    rows.append(("groups_from_points haversine n=1e5 r=5 km", t))
    t, _ = best(lambda: nearest_groups(pts, 10), repeat=1)
    rows.append(("nearest_groups n=1e5 size=10", t))
    edges = rng.integers(0, n, (3 * n, 2))
    edges = edges[edges[:, 0] != edges[:, 1]]
    t, _ = best(lambda: groups_from_graph(edges.tolist(), 2, n=n), repeat=1)
    rows.append(("groups_from_graph n=1e5, 3e5 edges, r=2 hops", t))
    t, order = best(lambda: reference_permutation(groups), repeat=1)
    rows.append(("reference_permutation (BFS) n=1e5", t))
    t, sens = best(lambda: exact_sensitivity(groups, order), repeat=1)
    rows.append((f"exact_sensitivity n=1e5 (Delta={sens}, paper bound={kendall_width_bound(groups, order)})", t))
    t, sh = best(lambda: MallowsShuffler(groups, alpha=4.0), repeat=1)
    rows.append(("MallowsShuffler(groups, alpha=4) n=1e5 (all of the above)", t))
    reports = rng.integers(0, 10, n)
    t, _ = best(lambda: sh.shuffle(reports))
    rows.append(("shuffle n=1e5, rng=None (secure)", t))
    for theta in (0.0, 1e-3, 1.0):
        t, _ = best(lambda: sample_mallows(1_000_000, theta, rng=1))
        rows.append((f"sample_mallows kendall n=1e6 theta={theta:g}, seeded", t))
    t, _ = best(lambda: sample_mallows(1_000_000, 1e-3))
    rows.append(("sample_mallows kendall n=1e6 theta=1e-3, rng=None (secure)", t))
    for theta in (1e-3, 1.0):
        t, _ = best(lambda: sample_mallows(1_000_000, theta, distance="hamming", rng=1))
        rows.append((f"sample_mallows hamming n=1e6 theta={theta:g}, seeded", t))
    t, _ = best(lambda: sample_mallows(8, 0.5, size=100_000, rng=1), repeat=1)
    rows.append(("sample_mallows kendall n=8, size=1e5 (batched)", t))
    t, _ = best(lambda: hamming_preservation_delta(2000, 200, 0.8, 3.0), repeat=1)
    rows.append(("hamming_preservation_delta n=2000 |S|=200", t))
    width = max(len(r[0]) for r in rows)
    print(f"{'operation':<{width}}  seconds")
    for name, sec in rows:
        print(f"{name:<{width}}  {sec:8.3f}")


if __name__ == "__main__":
    main()
