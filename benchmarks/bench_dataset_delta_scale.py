"""dataset_delta at scale for k >= 4 datasets with two held values (issue 11 item 5).

Run: ``.venv/bin/python benchmarks/bench_dataset_delta_scale.py`` (``--smoke``: tiny sizes, for
CI). One row per dataset: the certified bracket ``(lower, upper)`` of ``log delta`` from
:func:`shuffle_accounting.shuffled_krr.exact.dataset_log_delta_bounds`, its width and the wall
time. The paths timed: others at the target's two values 0 and 1 (three categories with the
values >= 2 merged, ``_krr_grid.dataset_log_hockey_rest``) and others at 0 and one value v >= 2
(``_krr_grid.dataset_log_hockey_zero_v``). The load average and a fixed reference computation
(blanket ``epsilon(1e-6)`` at k = 3, eps0 = 1, n = 1e4, timed in the same run) are printed so
times can be compared as ratios across machines and loads.
"""

from __future__ import annotations

import argparse
import os
import time

from shuffle_accounting.shuffled_krr import ShuffledKRR
from shuffle_accounting.shuffled_krr.exact import dataset_log_delta_bounds


def _reference() -> float:
    t = time.perf_counter()
    ShuffledKRR(3, 1.0, 10**4).epsilon(1e-6, method="blanket")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CI checks that the script runs)")
    args = ap.parse_args()
    cases = [  # (k, eps0, eps, others)
        (4, 1.0, 0.1, [500, 499, 0, 0]),
        (4, 1.0, 0.1, [1500, 1499, 0, 0]),
        (10, 2.0, 0.3, [400, 599] + [0] * 8),
        (5, 1.0, 0.1, [300, 0, 699, 0, 0]),
        (4, 1.0, 0.1, [1500, 0, 1499, 0]),
        (10, 2.0, 0.3, [0, 200, 0, 0, 799, 0, 0, 0, 0, 0]),
    ]
    if args.smoke:
        cases = [(4, 1.0, 0.1, [150, 149, 0, 0]), (5, 1.0, 0.1, [100, 0, 199, 0, 0])]
    ref = _reference()
    print(
        f"load average {os.getloadavg()[0]:.2f}; reference (blanket k=3 eps0=1 n=1e4 eps(1e-6)) {ref:.3f} s"
    )
    print(
        f"{'k':>3} {'n':>5} {'held':>22} {'eps0':>4} {'eps':>4} {'log delta (lower)':>18} "
        f"{'width':>8} {'sec':>6} {'ratio':>6}"
    )
    for k, eps0, eps, others in cases:
        t = time.perf_counter()
        lo, up = dataset_log_delta_bounds(eps, k, eps0, others)
        dt = time.perf_counter() - t
        held = {v: c for v, c in enumerate(others) if c}
        print(
            f"{k:>3} {sum(others) + 1:>5} {held!s:>22} {eps0:>4} {eps:>4} {lo:>18.10f} "
            f"{up - lo:>8.1e} {dt:>6.2f} {dt / ref:>6.2f}"
        )


if __name__ == "__main__":
    main()
