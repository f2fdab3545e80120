"""Certified exact worst case of shuffled binary RR (k = 2): gap and speed of the branch and bound.

Run: ``.venv/bin/python benchmarks/bench_worst_case.py`` (``--full`` adds n = 1e5 and 1e6).
One row per (n, eps0, delta): the certified epsilon of the branch and bound
(:func:`shuffle_accounting.shuffled_krr.worst_case.certify`), the exhibited epsilon of its witness
dataset, the gap ``certified / exhibited - 1``, the bound evaluations and cover size, the wall time,
and the blanket epsilon (``method="blanket"``) with its time. The load average and a fixed
reference computation (blanket ``epsilon(1e-6)`` at k = 3, eps0 = 1, n = 1e4, timed in the same
run) are printed so times can be compared as ratios across machines and loads.
"""

from __future__ import annotations

import argparse
import os
import time

from shuffle_accounting.shuffled_krr import ShuffledKRR
from shuffle_accounting.shuffled_krr import worst_case as W


def _reference() -> float:
    t = time.perf_counter()
    ShuffledKRR(3, 1.0, 10**4).epsilon(1e-6, method="blanket")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--full", action="store_true", help="add n = 1e5 and 1e6")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CI checks that the script runs)")
    args = ap.parse_args()
    ns = [2, 100, 1000, 10**4] + ([10**5, 10**6] if args.full else [])
    eps0s, deltas = (0.05, 0.5, 2.0, 10.0), (1e-12, 1e-6, 0.1)
    if args.smoke:
        ns, eps0s, deltas = [2, 100], (2.0,), (1e-6,)
    ref = _reference()
    print(
        f"load average {os.getloadavg()[0]:.2f}; reference (blanket k=3 eps0=1 n=1e4 eps(1e-6)) {ref:.3f} s"
    )
    print(
        f"{'n':>8} {'eps0':>5} {'delta':>6} {'certified':>12} {'exhibited':>12} {'gap':>8} "
        f"{'evals':>5} {'cover':>5} {'sec':>7} {'ratio':>6} {'blanket':>10} {'sec':>6}"
    )
    for n in ns:
        for eps0 in eps0s:
            for delta in deltas:
                t = time.perf_counter()
                try:
                    c = W.certify(eps0, n, delta=delta)
                except W.WorkBudgetExceeded as exc:
                    print(f"{n:>8.0e} {eps0:>5g} {delta:>6.0e} budget exceeded: {exc}", flush=True)
                    continue
                dt = time.perf_counter() - t
                t = time.perf_counter()
                b = ShuffledKRR(2, eps0, n).epsilon(delta, method="blanket")
                db = time.perf_counter() - t
                gap = c.epsilon / c.epsilon_lower - 1.0 if c.epsilon_lower > 0 else float("inf")
                print(
                    f"{n:>8.0e} {eps0:>5g} {delta:>6.0e} {c.epsilon:>12.7g} {c.epsilon_lower:>12.7g} "
                    f"{gap:>8.1e} {c.evaluations:>5} {len(c.cover):>5} {dt:>7.2f} {dt / ref:>6.1f} "
                    f"{b:>10.5g} {db:>6.2f}",
                    flush=True,
                )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
