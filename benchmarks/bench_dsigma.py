"""Speed of the d_sigma pipeline: groups (n = 1e5 points), BFS sigma_0, exact sensitivity, samplers.

Run: ``python benchmarks/bench_dsigma.py`` (prints a table; numbers are wall-clock seconds,
best of ``repeat`` runs). ``--smoke``: n = 2000 points and 1e4-element permutations, one run
each (CI checks that the script runs; no figures).

The "deployment scale" table (issue 12: ``MallowsShuffler`` on 1e5 2-D points with r = 0.03 took
91 s and 2.7 GB) runs each case in a fresh subprocess that prints its own wall time and peak
resident memory, with the load average and a fixed reference computation (20 sorts of 1e6
seeded doubles) of the same run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
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


def _reference() -> float:
    """Fixed workload: 20 sorts of 1e6 random doubles (seeded)."""
    x = np.random.default_rng(0).random(1_000_000)
    t = time.perf_counter()
    for _ in range(20):
        np.sort(x)
    return time.perf_counter() - t


_SCALE_CODE = """
import resource, time, numpy as np
from shuffle_accounting._validation import WorkBudgetExceeded
from shuffle_accounting.dsigma import MallowsShuffler
pts = np.random.default_rng(0).uniform(0, 1, ({n}, 2))
t = time.perf_counter()
try:
    sh = MallowsShuffler(points=pts, r={r}, alpha=1.0, max_work={mw})
    what = f"built, sensitivity {{sh.sensitivity}}"
except WorkBudgetExceeded as exc:
    what = "refused: " + str(exc).split(";")[0]
dt = time.perf_counter() - t
print(f"{{dt:.2f}}|{{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}}|{{what}}")
"""


def deployment_scale(smoke: bool) -> None:
    cases = (
        [(2000, 0.03, None)]
        if smoke
        else [
            (100_000, 0.005, None),
            (100_000, 0.03, None),
            (100_000, 0.03, 10**12),
        ]
    )
    ref = _reference()
    print(f"load average {os.getloadavg()}; reference workload {ref:.3f} s")
    print("| MallowsShuffler(points=U[0,1]^2, r, alpha=1) | max_work | seconds | x ref | peak MB | outcome |")
    print("|---|---|---|---|---|---|")
    for n, r, mw in cases:
        code = _SCALE_CODE.format(n=n, r=r, mw=mw)
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
        sec, peak, what = out.stdout.strip().split("|", 2)
        print(
            f"| n={n:.0e}, r={r:g} | {mw if mw else 'default'} | {sec} | {float(sec) / ref:.2f} | {peak} | {what} |"
        )
    print(f"load average at the end {os.getloadavg()}")
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CI: the script runs)")
    smoke = ap.parse_args().smoke
    deployment_scale(smoke)
    rows = []
    rng = np.random.default_rng(0)
    n = 2_000 if smoke else 100_000
    m = 10_000 if smoke else 1_000_000  # size of the sampled permutations
    side = float(np.sqrt(n))
    pts = rng.uniform(0, side, (n, 2))  # density 1 per unit^2
    t, groups = best(lambda: groups_from_points(pts, 2.0), repeat=1)
    sizes = np.array([g.size for g in groups])
    rows.append((f"groups_from_points n={n:.0e} r=2 (mean |G|={sizes.mean():.1f})", t))
    latlon = np.column_stack([rng.uniform(30, 50, n), rng.uniform(-120, -80, n)])
    t, _ = best(lambda: groups_from_points(latlon, 5.0, metric="haversine"), repeat=1)
    rows.append((f"groups_from_points haversine n={n:.0e} r=5 km", t))
    t, _ = best(lambda: nearest_groups(pts, 10), repeat=1)
    rows.append((f"nearest_groups n={n:.0e} size=10", t))
    edges = rng.integers(0, n, (3 * n, 2))
    edges = edges[edges[:, 0] != edges[:, 1]]
    t, _ = best(lambda: groups_from_graph(edges.tolist(), 2, n=n), repeat=1)
    rows.append((f"groups_from_graph n={n:.0e}, {3 * n:.0e} edges, r=2 hops", t))
    t, order = best(lambda: reference_permutation(groups), repeat=1)
    rows.append((f"reference_permutation (BFS) n={n:.0e}", t))
    t, sens = best(lambda: exact_sensitivity(groups, order), repeat=1)
    rows.append(
        (f"exact_sensitivity n={n:.0e} (Delta={sens}, paper bound={kendall_width_bound(groups, order)})", t)
    )
    t, sh = best(lambda: MallowsShuffler(groups, alpha=4.0), repeat=1)
    rows.append((f"MallowsShuffler(groups, alpha=4) n={n:.0e} (all of the above)", t))
    reports = rng.integers(0, 10, n)
    repeat = 1 if smoke else 3
    t, _ = best(lambda: sh.shuffle(reports), repeat=repeat)
    rows.append((f"shuffle n={n:.0e}, rng=None (secure)", t))
    for theta in (0.0, 1e-3, 1.0):
        t, _ = best(lambda: sample_mallows(m, theta, rng=1), repeat=repeat)
        rows.append((f"sample_mallows kendall n={m:.0e} theta={theta:g}, seeded", t))
    t, _ = best(lambda: sample_mallows(m, 1e-3), repeat=repeat)
    rows.append((f"sample_mallows kendall n={m:.0e} theta=1e-3, rng=None (secure)", t))
    for theta in (1e-3, 1.0):
        t, _ = best(lambda: sample_mallows(m, theta, distance="hamming", rng=1), repeat=repeat)
        rows.append((f"sample_mallows hamming n={m:.0e} theta={theta:g}, seeded", t))
    t, _ = best(lambda: sample_mallows(8, 0.5, size=m // 10, rng=1), repeat=1)
    rows.append((f"sample_mallows kendall n=8, size={m // 10:.0e} (batched)", t))
    t, _ = best(
        lambda: hamming_preservation_delta(200 if smoke else 2000, 20 if smoke else 200, 0.8, 3.0), repeat=1
    )
    rows.append(
        (
            "hamming_preservation_delta n=2000 |S|=200"
            if not smoke
            else "hamming_preservation_delta n=200 |S|=20",
            t,
        )
    )
    width = max(len(r[0]) for r in rows)
    print(f"{'operation':<{width}}  seconds")
    for name, sec in rows:
        print(f"{name:<{width}}  {sec:8.3f}")


if __name__ == "__main__":
    main()
