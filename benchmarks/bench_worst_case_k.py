"""Certified worst case of shuffled 3-RR (branch and bound over boxes): gap and speed.

Run: ``.venv/bin/python benchmarks/bench_worst_case_k.py`` (k = 3 at n in {100, 1000, 1e4},
eps0 in {0.5, 1, 2, 4}, delta = 1e-6; ``--deltas`` adds delta in {1e-9, 1e-3}, or with values
picks the deltas; ``--ns`` / ``--eps0s`` pick the sizes and local parameters; ``--tol`` the
stopping tolerance (default: the module's ``default_tol(n)``), ``--max-evals`` / ``--max-cells``
the budgets (default: the module's); ``--timeout S`` runs each row in a child process stopped
after ``S`` seconds (the row then reads "timeout"); ``--cpu`` adds the row's CPU seconds, which a
loaded machine distorts less; ``--k4`` adds the k >= 4 rows (blanket versus the exhibited lower
bound: no k >= 4 branch and bound here); ``--deep``: instead of the table, the k = 3 delta
queries below e^-85 with ``deep=False`` and ``deep=True`` (the cases of benchmarks/README.md,
"k = 3 delta query below e^-85"); ``--smoke``: tiny sizes, for CI). One row per
(k, n, eps0, delta): for k = 3 the certified epsilon of
:func:`shuffle_accounting.shuffled_krr.worst_case_k.certify_k`, the exhibited epsilon of its
witness dataset, the gap ``certified / exhibited - 1``, whether the gap target was reached within
the work budget (``conv``), the bound evaluations, the cover size, the work (grid cells touched)
and the wall time; the blanket epsilon (``method="blanket"``) and its own gap to the exhibited
value. The load average and a fixed reference computation (blanket ``epsilon(1e-6)`` at k = 3,
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

from _timeout import call_with_timeout


def _reference(clock=time.perf_counter) -> float:
    """Seconds (of ``clock``: wall by default) of the fixed reference computation."""
    t = clock()
    ShuffledKRR(3, 1.0, 10**4).epsilon(1e-6, method="blanket")
    return clock() - t


def _row(n: int, eps0: float, delta: float, budget: dict):
    """One k = 3 row's numbers."""
    b = ShuffledKRR(3, eps0, n).epsilon(delta, method="blanket")
    t, cpu = time.perf_counter(), time.process_time()
    c = K.certify_k(3, eps0, n, delta=delta, **budget)
    dt, cpu = time.perf_counter() - t, time.process_time() - cpu
    return c.epsilon, c.epsilon_lower, c.gap, c.converged, c.evaluations, len(c.cover), c.work, dt, cpu, b


def _run_row(n: int, eps0: float, delta: float, budget: dict, timeout: float):
    """:func:`_row`, in a child process stopped after ``timeout`` seconds when ``timeout > 0``."""
    return call_with_timeout(_row, (n, eps0, delta, budget), timeout)


#: The ``--deep`` rows: (label, eps0, n, eps values); each row is one ``certify_k(eps=...)`` per
#: eps, timed in total (CPU seconds), once with ``deep=False`` and once with ``deep=True``.
DEEP_ROWS = (
    ("n = 200, eps0 = 0.25, eps = 0.24", 0.25, 200, (0.24,)),
    ("n = 1000, eps0 = 1, eps = 0.6", 1.0, 1000, (0.6,)),
    ("n = 500, eps0 = 0.5, eps = j eps0 / 8, j = 1..6", 0.5, 500, tuple(j * 0.5 / 8 for j in range(1, 7))),
)


def _deep_rows(smoke: bool) -> None:
    """The ``--deep`` table: log delta (the largest of the row), converged, CPU s and ratio.

    The ratio is the row's CPU seconds over the reference computation's CPU seconds, both
    measured in this run (CPU time: the rows are long, and a loaded machine distorts wall time).
    """
    ref = _reference(time.process_time)
    print(f"reference CPU {ref:.3f} s")
    rows = (("n = 40, eps0 = 0.25, eps = 0.2", 0.25, 40, (0.2,)),) if smoke else DEEP_ROWS
    print(f"{'query':<48} {'deep':>5} {'log delta':>10} {'conv':>5} {'cpu':>7} {'ratio':>6}")
    for label, eps0, n, epss in rows:
        for deep in (False, True):
            cpu = time.process_time()
            certs = [K.certify_k(3, eps0, n, eps=e, deep=deep) for e in epss]
            cpu = time.process_time() - cpu
            ld = max(c.log_delta for c in certs)
            conv = all(c.converged for c in certs)
            print(
                f"{label:<48} {deep!s:>5} {ld:>10.3f} {conv!s:>5} {cpu:>7.2f} {cpu / ref:>6.1f}", flush=True
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--deltas", type=float, nargs="*", help="deltas (no values: 1e-6, 1e-9 and 1e-3; default 1e-6)"
    )
    ap.add_argument("--ns", type=float, nargs="*", help="sizes (overrides 100, 1000, 1e4)")
    ap.add_argument("--eps0s", type=float, nargs="*", help="local parameters (overrides 0.5, 1, 2, 4)")
    ap.add_argument("--tol", type=float, default=None, help="stopping tolerance (default: default_tol(n))")
    ap.add_argument("--k4", action="store_true", help="add the k >= 4 rows (no certificate)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CI checks that the script runs)")
    ap.add_argument("--max-evals", type=int, default=None, help="evaluation budget of one certificate")
    ap.add_argument(
        "--max-cells", type=float, default=None, help="work budget (grid cells) of one certificate"
    )
    ap.add_argument("--timeout", type=float, default=0.0, help="seconds per row in a child process (0: none)")
    ap.add_argument("--cpu", action="store_true", help="add the CPU seconds of each certificate")
    ap.add_argument("--deep", action="store_true", help="only the deep=False / deep=True delta-query rows")
    args = ap.parse_args()
    ks = (3, 4, 10, 100) if args.k4 else (3,)
    eps0s = tuple(args.eps0s) if args.eps0s else (0.5, 1.0, 2.0, 4.0)
    k3_ns = [int(x) for x in args.ns] if args.ns else [100, 1000, 10**4]
    ns_other = [100, 1000, 10**4]
    if args.deltas is None:
        deltas: tuple[float, ...] = (1e-6,)
    else:
        deltas = tuple(args.deltas) if args.deltas else (1e-6, 1e-9, 1e-3)
    if args.smoke:
        ks, k3_ns, ns_other, eps0s, deltas = (3, 4), [12], [12], (2.0,), (1e-6,)
    budget: dict = {"tol": args.tol}
    if args.max_evals is not None:
        budget["max_evals"] = args.max_evals
    if args.max_cells is not None:
        budget["max_cells"] = args.max_cells
    ref = _reference()
    print(
        f"load average {os.getloadavg()[0]:.2f}; reference (blanket k=3 eps0=1 n=1e4 eps(1e-6)) {ref:.3f} s"
    )
    if args.deep:
        _deep_rows(args.smoke)
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
        return
    print(
        f"{'k':>3} {'n':>6} {'eps0':>4} {'delta':>6} {'certified':>11} {'exhibited':>11} {'gap':>8} "
        f"{'conv':>5} {'evals':>5} {'cover':>5} {'work':>7} {'sec':>7} {'ratio':>6} {'blanket':>10} {'bl.gap':>8}"
        + (f" {'cpu':>7}" if args.cpu else "")
    )
    worst_gap = 0.0
    for k in ks:
        for n in k3_ns if k == 3 else ns_other:
            for eps0 in eps0s:
                for delta in deltas if k == 3 else (1e-6,):
                    head = f"{k:>3} {n:>6.0e} {eps0:>4g} {delta:>6.0e}"
                    if k == 3:
                        r = _run_row(n, eps0, delta, budget, args.timeout)
                        if isinstance(r, str):
                            print(f"{head} {r}", flush=True)
                            continue
                        eps, low, gap, conv, evals, cover, work, dt, cpu, b = r
                        worst_gap = max(worst_gap, gap)
                        print(
                            f"{head} {eps:>11.7g} {low:>11.7g} "
                            f"{gap:>8.1e} {conv!s:>5} {evals:>5} {cover:>5} {work:>7.1e} "
                            f"{dt:>7.2f} {dt / ref:>6.1f} {b:>10.7g} "
                            f"{b / low - 1 if low > 0 else float('inf'):>8.1e}"
                            + (f" {cpu:>7.2f}" if args.cpu else ""),
                            flush=True,
                        )
                    else:
                        b = ShuffledKRR(k, eps0, n).epsilon(delta, method="blanket")
                        t = time.perf_counter()
                        low = lower_epsilon(delta, k, eps0, n)
                        dt = time.perf_counter() - t
                        print(
                            f"{head} {'n/a (k>=4)':>11} {low:>11.7g} "
                            f"{'':>8} {'':>5} {'':>5} {'':>5} {'':>7} {dt:>7.2f} {dt / ref:>6.1f} {b:>10.7g} "
                            f"{b / low - 1 if low > 0 else float('inf'):>8.1e}",
                            flush=True,
                        )
    if 3 in ks:
        print(f"largest k = 3 gap {worst_gap:.2e} (target 1e-4)")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
