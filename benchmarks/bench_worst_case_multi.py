"""Certified worst case of shuffled k-RR for k >= 4 (``worst_case_multi``): gap and speed.

Run: ``.venv/bin/python benchmarks/bench_worst_case_multi.py`` (``--smoke``: tiny sizes, for CI;
``--quick``: n in {100, 1000} only). One row per (k, n, eps0) at delta = 1e-6: the certified epsilon of
:func:`shuffle_accounting.shuffled_krr.worst_case_multi.certify_multi` (tol 1e-3), the exhibited
epsilon of its witness (the exact value of "all others at one value"), the gap
``certified / exhibited - 1``, whether the blanket was smaller (``bl``), the evaluations of the
pivot bound, the wall time and its ratio to a fixed reference computation timed in the same run
(blanket ``epsilon(1e-6)`` at k = 3, eps0 = 1, n = 1e4); then the blanket epsilon and its gap to the
same exhibited value, and the epsilon of :func:`~shuffle_accounting.shuffled_krr.lower.lower_epsilon`
(the ``(h0, h1)``-marginal lower bound, the value Wang et al. (VLDB 2024) report at k = 10,
eps0 = 4, n = 1000: 1.52239). The load average is printed at the start and the end. ``--ks``, ``--ns``,
``--eps0s`` and ``--delta`` choose other grids (e.g. ``--ns 200,500 --ks 4,5,10,20``).
Where the type bounds miss ``tol``, ``certify_multi`` runs the box search of
:mod:`~shuffle_accounting.shuffled_krr.worst_case_boxes` (budget ``--max-seconds``); the column
``boxes`` is the size of its cover (0: the type bounds or the blanket gave the value) and ``wit``
says whether the witness is a leaf of that search (``c0`` at 0, ``c1`` at 1, the rest at 2).
``--no-boxes`` measures the type bounds alone.
"""

from __future__ import annotations

import argparse
import os
import time

from shuffle_accounting.shuffled_krr import ShuffledKRR
from shuffle_accounting.shuffled_krr import worst_case_multi as M
from shuffle_accounting.shuffled_krr.lower import lower_epsilon


def _reference() -> float:
    t = time.perf_counter()
    ShuffledKRR(3, 1.0, 10**4).epsilon(1e-6, method="blanket")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CI checks that the script runs)")
    ap.add_argument("--quick", action="store_true", help="n in {100, 1000} only")
    ap.add_argument("--tol", type=float, default=1e-3, help="gap target of certify_multi")
    ap.add_argument("--ks", type=str, default=None, help="comma-separated k values (default 4,10,100)")
    ap.add_argument("--ns", type=str, default=None, help="comma-separated n values (default 100,1000,10000)")
    ap.add_argument("--eps0s", type=str, default=None, help="comma-separated eps0 values (default 1,2,4)")
    ap.add_argument("--delta", type=float, default=1e-6, help="target delta (default 1e-6)")
    ap.add_argument("--no-wang", action="store_true", help="skip the Wang et al. reference line")
    ap.add_argument("--no-boxes", action="store_true", help="type bounds only (no box search)")
    ap.add_argument("--max-seconds", type=float, default=60.0, help="budget of the box search")
    args = ap.parse_args()
    ks, ns, eps0s = (4, 10, 100), [100, 1000, 10**4], (1.0, 2.0, 4.0)
    if args.quick:
        ns = [100, 1000]
    if args.ks:
        ks = tuple(int(x) for x in args.ks.split(","))
    if args.ns:
        ns = [int(float(x)) for x in args.ns.split(",")]
    if args.eps0s:
        eps0s = tuple(float(x) for x in args.eps0s.split(","))
    if args.smoke:
        ks, ns, eps0s = (4,), [12], (2.0,)
    delta = args.delta
    ref = _reference()
    print(
        f"load average {os.getloadavg()[0]:.2f}; reference (blanket k=3 eps0=1 n=1e4 eps(1e-6)) {ref:.3f} s; "
        f"delta {delta:g}"
    )
    print(
        f"{'k':>3} {'n':>6} {'eps0':>4} {'certified':>11} {'exhibited':>11} {'gap':>8} {'bl':>5} "
        f"{'evals':>5} {'sec':>7} {'ratio':>6} {'blanket':>11} {'bl.gap':>8} {'marginal':>11} {'boxes':>5} wit"
    )
    for k in ks:
        for n in ns:
            for eps0 in eps0s:
                b = ShuffledKRR(k, eps0, n).epsilon(delta, method="blanket")
                t = time.perf_counter()
                c = M.certify_multi(
                    k,
                    eps0,
                    n,
                    delta=delta,
                    tol=args.tol,
                    boxes=not args.no_boxes,
                    max_seconds=args.max_seconds,
                )
                dt = time.perf_counter() - t
                low = c.epsilon_lower
                marg = lower_epsilon(delta, k, eps0, n)
                print(
                    f"{k:>3} {n:>6.0e} {eps0:>4g} {c.epsilon:>11.7g} {low:>11.7g} {c.gap:>8.1e} "
                    f"{c.used_blanket!s:>5} {c.evaluations:>5} {dt:>7.2f} {dt / ref:>6.1f} {b:>11.7g} "
                    f"{b / low - 1 if low > 0 else float('inf'):>8.1e} {marg:>11.7g} {len(c.boxes):>5} "
                    f"{'leaf' if c.box_exhibited else 'one'}",
                    flush=True,
                )
    # the Wang et al. reference point, with the type bounds forced (tol 1e-5)
    if not (args.smoke or args.no_wang):
        t = time.perf_counter()
        c = M.certify_multi(10, 4.0, 1000, delta=1e-6, tol=1e-5)
        dt = time.perf_counter() - t
        print(
            f"k=10 eps0=4 n=1000 tol=1e-5: certified {c.epsilon:.7g} exhibited {c.epsilon_lower:.7g} "
            f"gap {c.gap:.1e} blanket-used {c.used_blanket} evals {c.evaluations} {dt:.2f} s "
            f"(ratio {dt / ref:.1f}); Wang et al. report 1.52239"
        )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
