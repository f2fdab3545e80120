"""Speed and accuracy of shuffle_accounting.qif (plain script; prints a table).

Run: python benchmarks/bench_qif.py   (--smoke: small cases, one run each, for CI)

The "deployment scale" table runs each case in a fresh subprocess and reports its wall time and
peak resident memory (``ru_maxrss`` of the child, imports included), with the load average and
a fixed reference computation (20 sorts of 1e6 seeded doubles) measured in the same run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

from shuffle_accounting.presentation.qif_report import leakage_report
from shuffle_accounting.qif import (
    all_but_one_vulnerability_bounds,
    shuffle_vulnerability_bounds,
)


def _time(fn, *args, repeat=3, **kwargs):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - t0)
    return best, out


def _reference() -> float:
    """Fixed workload: 20 sorts of 1e6 random doubles (seeded)."""
    x = np.random.default_rng(0).random(1_000_000)
    t = time.perf_counter()
    for _ in range(20):
        np.sort(x)
    return time.perf_counter() - t


def _child(code: str) -> str:
    """stdout of ``python -c code`` in a fresh process (the code prints its own peak memory)."""
    return subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.strip()


def deployment_scale(smoke: bool) -> None:
    """Issue 12: V[S] at 1e6 - 1e9 users (was 109 s at 1e7 and killed at 18 GB at 1e9)."""
    cases = (
        [(10**4, 10, None)]
        if smoke
        else [
            (10**5, 10, None),
            (10**6, 10, None),
            (10**6, 10, 10**12),
            (10**7, 10, None),
            (10**8, 10, None),
            (10**9, 10, None),
            (10**9, 10, 2 * 10**7),
            (10**9, 1000, None),
        ]
    )
    ref = _reference()
    print(f"load average {os.getloadavg()}; reference workload {ref:.3f} s")
    print("| n | k | max_work | V[S] | certified half-width | seconds (call) | x ref | peak MB (process) |")
    print("|---|---|---|---|---|---|---|---|")
    for n, k, mw in cases:
        code = (
            "import time, resource; from shuffle_accounting.qif import shuffle_vulnerability_bounds as f; "
            f"t=time.perf_counter(); e=f({n}, {k}, max_work={mw}); "
            "print(f'{e.value:.12f} {e.error:.2e} {time.perf_counter()-t:.3f} "
            "{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}')"
        )
        v, err, sec, peak = _child(code).split()
        print(
            f"| {n:.0e} | {k} | {mw if mw else 'default'} | {v} | {err} | {sec} | {float(sec) / ref:.2f} | {peak} |"
        )
    print(f"load average at the end {os.getloadavg()}")
    print()


def main() -> None:
    smoke = "--smoke" in sys.argv
    deployment_scale(smoke)
    repeat = 1 if smoke else 3
    vs_cases = (
        [(200, 2), (100, 3)]
        if smoke
        else [
            (200, 2),
            (100, 3),
            (1000, 3),
            (10_000, 10),
            (100_000, 3),
            (100_000, 10),
            (100_000, 100),
            (1000, 1000),
        ]
    )
    abo_cases = (
        [(0.8, [100, 100])]
        if smoke
        else [
            (0.8, [0, 200]),
            (0.8, [100, 100]),
            (0.8, [2000, 3000]),
            (0.5, [100, 100, 100]),
            (0.5, [1000, 0, 0]),
            (0.4, [20, 20, 20, 0]),
        ]
    )
    print("V[S] = E[max load]/n (shuffle_vulnerability_bounds)")
    print(f"{'n':>8} {'k':>5} {'V[S]':>16} {'error bound':>12} {'seconds':>9}")
    for n, k in vs_cases:
        t, e = _time(shuffle_vulnerability_bounds, k=k, n=n, repeat=repeat)
        print(f"{n:>8} {k:>5} {e.value:>16.12f} {e.error:>12.1e} {t:>9.3f}")
    print()
    print("All-but-one vulnerability, eq. (10) (all_but_one_vulnerability_bounds)")
    print(f"{'p':>5} {'known_counts':>18} {'V_ABO':>16} {'error bound':>12} {'seconds':>9}")
    for p, counts in abo_cases:
        t, e = _time(all_but_one_vulnerability_bounds, p, counts, repeat=repeat)
        print(f"{p:>5} {counts!s:>18} {e.value:>16.12f} {e.error:>12.1e} {t:>9.3f}")
    print()
    n_rep = 1000 if smoke else 10_000
    t, _ = _time(lambda: leakage_report(k=10, eps0=2.0, n=n_rep), repeat=repeat)
    print(f"leakage_report(n={n_rep}, k=10, eps0=2) (the CLI section): {t:.3f} s")


if __name__ == "__main__":
    main()
