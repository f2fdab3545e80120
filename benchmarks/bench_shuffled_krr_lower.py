"""Time lower_epsilon (exhibited lower bound on epsilon(delta)) of shuffled k-RR.

Run: .venv/bin/python benchmarks/bench_shuffled_krr_lower.py [--quick]
Prints one table row per (n, k, eps0): the lower epsilon at delta = 1e-6, the statistic of the
worst dataset at that epsilon, and the wall time of lower_epsilon alone.
"""

from __future__ import annotations

import sys
import time

from shuffle_accounting.shuffled_krr.lower import lower_epsilon, worst_dataset


def main() -> None:
    quick = "--quick" in sys.argv
    smoke = "--smoke" in sys.argv  # tiny sizes (CI checks that the script runs)
    ns = [1_000, 10_000] if quick else [1_000, 10_000, 100_000, 1_000_000]
    ks, eps0s = (3, 10), (1.0, 2.0, 4.0)
    if smoke:
        ns, ks, eps0s = [200], (3,), (2.0,)
    delta = 1e-6
    print(f"{'n':>9} {'k':>3} {'eps0':>5} {'eps_lower':>12} {'seconds':>8}  worst dataset (statistic)")
    for n in ns:
        for k in ks:
            for eps0 in eps0s:
                t0 = time.perf_counter()
                e = lower_epsilon(delta, k, eps0, n)
                dt = time.perf_counter() - t0
                w = worst_dataset(e, k, eps0, n) if e > 0 else None
                desc = f"{w.family} ({w.statistic})" if w else "-"
                print(f"{n:>9} {k:>3} {eps0:>5} {e:>12.6g} {dt:>8.2f}  {desc}", flush=True)


if __name__ == "__main__":
    main()
