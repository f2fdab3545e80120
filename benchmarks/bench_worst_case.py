"""Certified exact worst case of shuffled binary RR (k = 2): gap and speed of the branch and bound.

Run: ``.venv/bin/python benchmarks/bench_worst_case.py`` (``--full`` adds n = 1e6 and 1e7,
``--ns`` picks the sizes, ``--eps0s`` the local parameters, ``--smoke`` is the CI run,
``--timeout S`` runs each row in a child process stopped after ``S`` seconds, its row then
reading "timeout"; ``--cpu`` adds the row's CPU time, which a loaded machine distorts less;
``--call`` times the public call ``ShuffledKRR(2, eps0, n).epsilon(delta, method="worst-case")``
instead, which adds the round trip's delta query at the answer, CPU and wall seconds, each row in
a fresh child process: give ``--timeout``; ``--flat F ...`` measures the flat band instead: one
row per (n, eps0, F) at ``delta = F delta(0)``, ``delta(0)`` the exhibited total-variation worst
case, with the certificate's gap, evaluations and seconds and the public call's seconds).
One row per (n, eps0, delta): the certified epsilon of the branch and bound
(:func:`shuffle_accounting.shuffled_krr.worst_case.certify`), the exhibited epsilon of its witness
dataset, the gap ``certified / exhibited - 1`` (target: <= 1e-4), the bound evaluations and cover
size, the time of the certificate and its ratio to the reference, and the blanket epsilon
(``method="blanket"``) with its time. The load average and a fixed reference computation (blanket
``epsilon(1e-6)`` at k = 3, eps0 = 1, n = 1e4, timed at the start of the same run) are printed so
times can be compared as ratios across machines and loads. A final line times
``certified_log_delta_grid`` on a 300-point grid (eps in [0, 4 epsilon(1e-6)], eps0 = 1) against one
``certify`` at the same n, at its default work budget and at ``max_evals=300``, with the largest
relative excess in delta of the 300-evaluation grid over the default one.
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

from shuffle_accounting.shuffled_krr import ShuffledKRR
from shuffle_accounting.shuffled_krr import worst_case as W

from _timeout import call_with_timeout


def _reference() -> float:
    t = time.perf_counter()
    ShuffledKRR(3, 1.0, 10**4).epsilon(1e-6, method="blanket")
    return time.perf_counter() - t


def _grid(ns, eps0s, xs, row, timeout: float, xfmt: str):
    """``(head, result)`` for each ``(n, eps0, x)``: ``row(n, eps0, x)`` in a child process stopped
    after ``timeout`` seconds when ``timeout > 0``; a row without numbers (a string saying why)
    is printed here and skipped."""
    for n in ns:
        for eps0 in eps0s:
            for x in xs:
                r = call_with_timeout(row, (n, eps0, x), timeout)
                head = f"{n:>8.0e} {eps0:>5g} {x:{xfmt}}"
                if isinstance(r, str):
                    print(f"{head} {r}", flush=True)
                    continue
                yield head, r


def _row(n: int, eps0: float, delta: float):
    """One row's numbers, or a string saying why there are none."""
    t, cpu = time.perf_counter(), time.process_time()
    try:
        c = W.certify(eps0, n, delta=delta)
    except W.WorkBudgetExceeded as exc:
        return f"budget exceeded: {exc}"
    dt, cpu = time.perf_counter() - t, time.process_time() - cpu
    t = time.perf_counter()
    b = ShuffledKRR(2, eps0, n).epsilon(delta, method="blanket")
    db = time.perf_counter() - t
    return c.epsilon, c.epsilon_lower, c.evaluations, len(c.cover), dt, cpu, b, db


def _call_row(n: int, eps0: float, delta: float):
    """The public call's epsilon, wall and CPU seconds (the issue-11 speed target's measure)."""
    m = ShuffledKRR(2, eps0, n)
    t, cpu = time.perf_counter(), time.process_time()
    e = m.epsilon(delta, method="worst-case")
    return e, time.perf_counter() - t, time.process_time() - cpu


def _call_table(ns, eps0s, deltas, timeout: float, ref: float) -> None:
    """``--call``: one row per (n, eps0, delta) of :func:`_call_row`, each in a child process."""
    print(f"{'n':>8} {'eps0':>5} {'delta':>6} {'epsilon':>14} {'wall':>6} {'cpu':>6} {'ratio':>6}")
    worst = 0.0
    for head, (e, wall, cpu) in _grid(ns, eps0s, deltas, _call_row, timeout, ">6.0e"):
        worst = max(worst, cpu)
        print(f"{head} {e:>14.8g} {wall:>6.2f} {cpu:>6.2f} {wall / ref:>6.1f}", flush=True)
    print(f"largest CPU time {worst:.2f} s (goal < 1 s at n = 1e6, delta = 1e-6)")


def _flat_row(n: int, eps0: float, f: float):
    """``--flat``: the certificate at ``f delta(0)`` and the public call's seconds."""
    d = f * math.exp(W.certify(eps0, n, eps=0.0).exhibited_log_delta)
    W.clear_bound_memo()
    t = time.perf_counter()
    try:
        c = W.certify(eps0, n, delta=d)
    except W.WorkBudgetExceeded as exc:
        c = exc.partial
    dt = time.perf_counter() - t
    W.clear_bound_memo()
    t = time.perf_counter()
    ShuffledKRR(2, eps0, n).epsilon(d, method="worst-case")
    return c.epsilon, c.epsilon_lower, c.evaluations, dt, time.perf_counter() - t


def _flat_table(ns, eps0s, fs, timeout: float, ref: float) -> None:
    """``--flat``: one row per (n, eps0, f) of :func:`_flat_row`, each in a child process."""
    print(
        f"{'n':>8} {'eps0':>5} {'f':>6} {'certified':>12} {'exhibited':>12} {'gap':>8} {'evals':>5} {'sec':>6} {'call':>6} {'ratio':>6}"
    )
    worst = 0.0
    for head, (e, low, evals, dt, call) in _grid(ns, eps0s, fs, _flat_row, timeout, ">6g"):
        gap = e / low - 1.0 if low > 0 else float("inf")
        worst = max(worst, gap)
        print(
            f"{head} {e:>12.7g} {low:>12.7g} {gap:>8.1e} {evals:>5} {dt:>6.2f} {call:>6.2f} {call / ref:>6.1f}",
            flush=True,
        )
    print(f"largest gap {worst:.2e} (target 1e-4)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--full", action="store_true", help="add n = 1e6 and 1e7")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CI checks that the script runs)")
    ap.add_argument("--ns", type=float, nargs="*", help="sizes (overrides the defaults)")
    ap.add_argument("--eps0s", type=float, nargs="*", help="local parameters (overrides the defaults)")
    ap.add_argument("--deltas", type=float, nargs="*", help="deltas (overrides the defaults)")
    ap.add_argument("--grid-n", type=float, default=1e4, help="n of the grid timing line (0: skip)")
    ap.add_argument("--timeout", type=float, default=0.0, help="seconds per row in a child process (0: none)")
    ap.add_argument("--cpu", action="store_true", help="add the CPU seconds of each certificate")
    ap.add_argument(
        "--call", action="store_true", help="time ShuffledKRR(2, eps0, n).epsilon(delta, method='worst-case')"
    )
    ap.add_argument("--flat", type=float, nargs="*", help="the flat band: delta = F delta(0) for each F")
    args = ap.parse_args()
    ns = [2, 10, 100, 1000, 10**4, 10**5] + ([10**6, 10**7] if args.full else [])
    eps0s, deltas = [0.05, 0.5, 2.0, 10.0], [1e-12, 1e-6, 0.1]
    grid_n = int(args.grid_n)
    if args.smoke:
        ns, eps0s, deltas, grid_n = [2, 100], [2.0], [1e-6], 100
    ns = [int(x) for x in args.ns] if args.ns else ns
    eps0s = args.eps0s or eps0s
    deltas = args.deltas or deltas
    ref = _reference()
    print(
        f"load average {os.getloadavg()[0]:.2f}; reference (blanket k=3 eps0=1 n=1e4 eps(1e-6)) {ref:.3f} s"
    )
    if args.flat:
        _flat_table(ns, eps0s, args.flat, args.timeout, ref)
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
        return
    if args.call:
        _call_table(ns, eps0s, deltas, args.timeout, ref)
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
        return
    print(
        f"{'n':>8} {'eps0':>5} {'delta':>6} {'certified':>12} {'exhibited':>12} {'gap':>8} "
        f"{'evals':>5} {'cover':>5} {'sec':>7} {'ratio':>6} {'blanket':>10} {'sec':>6}"
        + (f" {'cpu':>7}" if args.cpu else "")
    )
    worst_gap = 0.0
    for head, r in _grid(ns, eps0s, deltas, _row, args.timeout, ">6.0e"):
        c_eps, c_low, evals, cover, dt, cpu, b, db = r
        if c_low > 0:
            gap = c_eps / c_low - 1.0
        else:
            gap = 0.0 if c_eps == 0.0 else float("inf")
        worst_gap = max(worst_gap, gap)
        print(
            f"{head} {c_eps:>12.7g} {c_low:>12.7g} "
            f"{gap:>8.1e} {evals:>5} {cover:>5} {dt:>7.2f} {dt / ref:>6.1f} "
            f"{b:>10.5g} {db:>6.2f}" + (f" {cpu:>7.2f}" if args.cpu else ""),
            flush=True,
        )
    print(f"largest gap {worst_gap:.2e} (target 1e-4)")
    if grid_n:
        eps0 = 2.0 if args.smoke else 1.0
        c = W.certify(eps0, grid_n, delta=1e-6)
        grid = np.linspace(0.0, 4.0 * c.epsilon, 300)
        t = time.perf_counter()
        W.certify(eps0, grid_n, eps=float(grid[100]))
        one = time.perf_counter() - t
        t = time.perf_counter()
        g = W.certified_log_delta_grid(grid, eps0, grid_n)
        dg = time.perf_counter() - t
        t = time.perf_counter()
        g3 = W.certified_log_delta_grid(grid, eps0, grid_n, max_evals=300)
        dg3 = time.perf_counter() - t
        fin = np.isfinite(g)
        excess = float(np.max(np.expm1(g3[fin] - g[fin]))) if np.any(fin) else 0.0
        print(
            f"grid n={grid_n:.0e} eps0={eps0:g}: 300 points in {dg:.2f} s (ratio {dg / ref:.1f}) at the default "
            f"budget, {dg3:.2f} s (ratio {dg3 / ref:.1f}) at max_evals=300 (delta up to {excess:.1e} higher); "
            f"one certify(eps=) {one:.2f} s"
        )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
