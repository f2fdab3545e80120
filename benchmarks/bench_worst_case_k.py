"""Certified worst case of shuffled 3-RR (branch and bound over boxes): gap and speed.

Run: ``.venv/bin/python benchmarks/bench_worst_case_k.py`` (k = 3 at n in {100, 1000, 1e4},
eps0 in {0.5, 1, 2, 4}, delta = 1e-6; ``--deltas`` adds delta in {1e-9, 1e-3}; ``--k4`` adds the
k >= 4 rows (blanket versus the exhibited lower bound: no k >= 4 branch and bound here);
``--smoke``: tiny sizes, for CI). One row per (k, n, eps0, delta): for k = 3 the certified
epsilon of :func:`shuffle_accounting.shuffled_krr.worst_case_k.certify_k` (``tol = 1e-5``), the
exhibited epsilon of its witness dataset, the gap ``certified / exhibited - 1``, whether the gap
target was reached within the work budget (``conv``), the bound evaluations, the cover size and
the wall time; the blanket epsilon (``method="blanket"``) and its own gap to the exhibited value.
The load average and a fixed reference computation (blanket ``epsilon(1e-6)`` at k = 3,
eps0 = 1, n = 1e4, timed in the same run) are printed so times can be compared as ratios across
machines and loads.
"""

from __future__ import annotations

import argparse
import os
import time

from shuffle_accounting.shuffled_krr import ShuffledKRR
from shuffle_accounting.shuffled_krr import worst_case_k as K
from shuffle_accounting.shuffled_krr.lower import lower_epsilon


def _reference() -> float:
    t = time.perf_counter()
    ShuffledKRR(3, 1.0, 10**4).epsilon(1e-6, method="blanket")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--deltas", action="store_true", help="add delta = 1e-9 and 1e-3 for k = 3")
    ap.add_argument("--k4", action="store_true", help="add the k >= 4 rows (no certificate)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CI checks that the script runs)")
    ap.add_argument("--max-evals", type=int, default=3000, help="work budget of one certificate")
    args = ap.parse_args()
    ks = (3, 4, 10, 100) if args.k4 else (3,)
    eps0s = (0.5, 1.0, 2.0, 4.0)
    k3_ns = [100, 1000, 10**4]
    ns_other = [100, 1000, 10**4]
    deltas = (1e-6, 1e-9, 1e-3) if args.deltas else (1e-6,)
    if args.smoke:
        ks, k3_ns, ns_other, eps0s, deltas = (3, 4), [12], [12], (2.0,), (1e-6,)
    ref = _reference()
    print(
        f"load average {os.getloadavg()[0]:.2f}; reference (blanket k=3 eps0=1 n=1e4 eps(1e-6)) {ref:.3f} s"
    )
    print(
        f"{'k':>3} {'n':>6} {'eps0':>4} {'delta':>6} {'certified':>11} {'exhibited':>11} {'gap':>8} "
        f"{'conv':>5} {'evals':>5} {'cover':>5} {'sec':>7} {'ratio':>6} {'blanket':>10} {'bl.gap':>8}"
    )
    for k in ks:
        for n in k3_ns if k == 3 else ns_other:
            for eps0 in eps0s:
                for delta in deltas if k == 3 else (1e-6,):
                    b = ShuffledKRR(k, eps0, n).epsilon(delta, method="blanket")
                    if k == 3:
                        t = time.perf_counter()
                        c = K.certify_k(3, eps0, n, delta=delta, tol=1e-5, max_evals=args.max_evals)
                        dt = time.perf_counter() - t
                        low = c.epsilon_lower
                        print(
                            f"{k:>3} {n:>6.0e} {eps0:>4g} {delta:>6.0e} {c.epsilon:>11.7g} {low:>11.7g} "
                            f"{c.gap:>8.1e} {c.converged!s:>5} {c.evaluations:>5} {len(c.cover):>5} "
                            f"{dt:>7.2f} {dt / ref:>6.1f} {b:>10.7g} "
                            f"{b / low - 1 if low > 0 else float('inf'):>8.1e}",
                            flush=True,
                        )
                    else:
                        t = time.perf_counter()
                        low = lower_epsilon(delta, k, eps0, n)
                        dt = time.perf_counter() - t
                        print(
                            f"{k:>3} {n:>6.0e} {eps0:>4g} {delta:>6.0e} {'n/a (k>=4)':>11} {low:>11.7g} "
                            f"{'':>8} {'':>5} {'':>5} {'':>5} {dt:>7.2f} {dt / ref:>6.1f} {b:>10.7g} "
                            f"{b / low - 1 if low > 0 else float('inf'):>8.1e}",
                            flush=True,
                        )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
