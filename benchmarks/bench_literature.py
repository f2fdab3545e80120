"""Time every literature bound's epsilon(delta) (plain script; prints a markdown table).

Usage: python benchmarks/bench_literature.py [--quick | --smoke]   (--smoke: one row, for CI)
"""

from __future__ import annotations

import sys
import time

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.literature import LITERATURE_BOUNDS


def main() -> None:
    quick = "--quick" in sys.argv
    smoke = "--smoke" in sys.argv
    ns = [10**4] if smoke else [10**4, 10**5, 10**6] if quick else [10**4, 10**5, 10**6, 10**7]
    ks, eps0s = ((3,), (2.0,)) if smoke else ((3, 10), (1.0, 2.0, 4.0))
    delta = 1e-6
    names = list(LITERATURE_BOUNDS)
    print(f"delta = {delta:g}; each cell: epsilon (seconds); '-' = not valid here")
    print("| n | k | eps0 | " + " | ".join(names) + " |")
    print("|---" * (3 + len(names)) + "|")
    for n in ns:
        for k in ks:
            for eps0 in eps0s:
                cells = []
                for name in names:
                    fn = LITERATURE_BOUNDS[name][1]
                    t0 = time.perf_counter()
                    try:
                        e = fn(k, eps0, n, delta)
                        txt = f"{e:.5g}"
                    except ParameterError:
                        txt = "-"
                    dt = time.perf_counter() - t0
                    cells.append(f"{txt} ({dt:.3f})")
                print(f"| {n:.0e} | {k} | {eps0:g} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
