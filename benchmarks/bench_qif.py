"""Speed and accuracy of shuffle_accounting.qif (plain script; prints a table).

Run: python benchmarks/bench_qif.py   (--smoke: small cases, one run each, for CI)
"""

from __future__ import annotations

import sys
import time

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


def main() -> None:
    smoke = "--smoke" in sys.argv
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
        t, e = _time(shuffle_vulnerability_bounds, n, k, repeat=repeat)
        print(f"{n:>8} {k:>5} {e.value:>16.12f} {e.error:>12.1e} {t:>9.3f}")
    print()
    print("All-but-one vulnerability, eq. (10) (all_but_one_vulnerability_bounds)")
    print(f"{'p':>5} {'known_counts':>18} {'V_ABO':>16} {'error bound':>12} {'seconds':>9}")
    for p, counts in abo_cases:
        t, e = _time(all_but_one_vulnerability_bounds, p, counts, repeat=repeat)
        print(f"{p:>5} {counts!s:>18} {e.value:>16.12f} {e.error:>12.1e} {t:>9.3f}")
    print()
    n_rep = 1000 if smoke else 10_000
    t, _ = _time(leakage_report, n_rep, 10, 2.0, repeat=repeat)
    print(f"leakage_report(n={n_rep}, k=10, eps0=2) (the CLI section): {t:.3f} s")


if __name__ == "__main__":
    main()
