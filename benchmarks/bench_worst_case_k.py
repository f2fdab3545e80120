"""Certified worst case of shuffled k-RR for k >= 3: gap and speed of the branch and bound.

Run: ``.venv/bin/python benchmarks/bench_worst_case_k.py`` (``--full`` adds n = 1e4 for k = 3;
``--smoke``: tiny sizes, for CI). One row per (k, n, eps0) at delta = 1e-6: for k = 3 the
certified epsilon of :func:`shuffle_accounting.shuffled_krr.worst_case_k.certify_k`, the exhibited
epsilon of its witness dataset, the gap ``certified / exhibited - 1``, whether the gap target was
reached within the work budget (``conv``), the bound evaluations, the cover size and the wall time;
the blanket epsilon (``method="blanket"``) and its own gap to the exhibited value. For k >= 4 the
branch and bound is not implemented: the row shows the blanket epsilon, the exhibited lower bound
of :func:`~shuffle_accounting.shuffled_krr.lower.lower_epsilon` and their gap. The load average and a
fixed reference computation (blanket ``epsilon(1e-6)`` at k = 3, eps0 = 1, n = 1e4, timed in the same
run) are printed so times can be compared as ratios across machines and loads.
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
    ap.add_argument("--full", action="store_true", help="add n = 1e4 for k = 3")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CI checks that the script runs)")
    ap.add_argument("--max-evals", type=int, default=3000, help="work budget of one certificate")
    args = ap.parse_args()
    ks, eps0s = (3, 4, 10, 100), (1.0, 2.0, 4.0)
    k3_ns = [100, 1000] + ([10**4] if args.full else [])
    ns_other = [100, 1000, 10**4]
    if args.smoke:
        ks, k3_ns, ns_other, eps0s = (3, 4), [12], [12], (2.0,)
    delta = 1e-6
    ref = _reference()
    print(
        f"load average {os.getloadavg()[0]:.2f}; reference (blanket k=3 eps0=1 n=1e4 eps(1e-6)) {ref:.3f} s"
    )
    print(
        f"{'k':>3} {'n':>6} {'eps0':>4} {'certified':>11} {'exhibited':>11} {'gap':>8} {'conv':>5} "
        f"{'evals':>5} {'cover':>5} {'sec':>7} {'ratio':>6} {'blanket':>10} {'bl.gap':>8}"
    )
    for k in ks:
        for n in k3_ns if k == 3 else ns_other:
            for eps0 in eps0s:
                t = time.perf_counter()
                b = ShuffledKRR(k, eps0, n).epsilon(delta, method="blanket")
                if k == 3:
                    t = time.perf_counter()
                    c = K.certify_k(3, eps0, n, delta=delta, tol=1e-5, max_evals=args.max_evals)
                    dt = time.perf_counter() - t
                    low = c.epsilon_lower
                    print(
                        f"{k:>3} {n:>6.0e} {eps0:>4g} {c.epsilon:>11.7g} {low:>11.7g} {c.gap:>8.1e} "
                        f"{c.converged!s:>5} {c.evaluations:>5} {len(c.cover):>5} {dt:>7.2f} "
                        f"{dt / ref:>6.1f} {b:>10.7g} {b / low - 1 if low > 0 else float('inf'):>8.1e}",
                        flush=True,
                    )
                else:
                    t = time.perf_counter()
                    low = lower_epsilon(delta, k, eps0, n)
                    dt = time.perf_counter() - t
                    print(
                        f"{k:>3} {n:>6.0e} {eps0:>4g} {'n/a (k>=4)':>11} {low:>11.7g} {'':>8} {'':>5} "
                        f"{'':>5} {'':>5} {dt:>7.2f} {dt / ref:>6.1f} {b:>10.7g} "
                        f"{b / low - 1 if low > 0 else float('inf'):>8.1e}",
                        flush=True,
                    )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
