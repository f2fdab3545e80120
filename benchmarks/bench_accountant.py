"""Benchmark: building the shuffled k-RR PLD and composing it over rounds.

Prints a table: time to build the pessimistic PLD of one release (two vectorised calls of the
certified blanket bound + convex minorant + connect-the-dots), then to compose R = 10 and 100
rounds in a ShuffleAccountant and query epsilon at delta; plus calibrate_eps0 / min_users for
R = 1 and 10 (at ``--calibration-n`` users, default 2000).

    python benchmarks/bench_accountant.py                 # n = 1e4, k in {3, 10}, eps0 in {1, 2, 4}
    python benchmarks/bench_accountant.py --n 300 --k 3   # small n
"""

from __future__ import annotations

import argparse
import time

from shuffle_accounting.shuffled_krr.accountant import (
    ShuffleAccountant,
    ShuffledKRRDpEvent,
    certified_grid,
    shuffled_krr_pld,
)
from shuffle_accounting.shuffled_krr.calibration import calibrate_eps0, min_users, single_round_epsilon


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[10_000])
    ap.add_argument("--k", type=int, nargs="+", default=[3, 10])
    ap.add_argument("--eps0", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--no-calibration", action="store_true")
    ap.add_argument("--calibration-n", type=int, default=2000, help="n of the calibration runs")
    ap.add_argument("--rtol", type=float, default=1e-3, help="calibrate_eps0's relative tolerance")
    ap.add_argument(
        "--smoke", action="store_true", help="tiny sizes (CI: checks the script runs, no figures)"
    )
    args = ap.parse_args()
    if args.smoke:
        args.n, args.k, args.eps0, args.calibration_n, args.rtol = [100], [3], [2.0], 100, 1e-1
    d = args.delta
    print(
        f"{'n':>8} {'k':>3} {'eps0':>5} {'grid':>5} {'build s':>8} {'eps R=1':>9} {'single':>9}"
        f" {'R=10 s':>7} {'eps R=10':>9} {'R=100 s':>8} {'eps R=100':>9}"
    )
    for n in args.n:
        for k in args.k:
            for eps0 in args.eps0:
                certified_grid.cache_clear()  # time a cold build
                _, t_build = _timed(lambda: shuffled_krr_pld(k, eps0, n))
                grid, _ = certified_grid(k, eps0, n, 1e-4)
                ev = ShuffledKRRDpEvent(k, eps0, n)
                single = single_round_epsilon(k, eps0, n, d)
                e1 = ShuffleAccountant().compose(ev).get_epsilon(d)
                e10, t10 = _timed(lambda: ShuffleAccountant().compose(ev, 10).get_epsilon(d))
                e100, t100 = _timed(lambda: ShuffleAccountant().compose(ev, 100).get_epsilon(d))
                print(
                    f"{n:>8} {k:>3} {eps0:>5g} {grid.size:>5} {t_build:>8.3f} {e1:>9.5f} {single:>9.5f}"
                    f" {t10:>7.2f} {e10:>9.4f} {t100:>8.2f} {e100:>9.4f}"
                )
    if args.no_calibration:
        return
    n, k = args.calibration_n, args.k[0]
    cal_cases = ((1, 1.0), (2, 2.0)) if args.smoke else ((1, 1.0), (10, 3.0))
    print(f"\ncalibration at n={n}, k={k}, delta={d}, rtol={args.rtol:g}")
    for rounds, eps in cal_cases:
        certified_grid.cache_clear()
        e0, t = _timed(lambda: calibrate_eps0(k, n, eps, d, rounds=rounds, rtol=args.rtol))
        print(f"  calibrate_eps0(epsilon={eps}, rounds={rounds}) = {e0:.6f}   {t:.2f} s")
    for rounds, eps in cal_cases[:1] if args.smoke else cal_cases:  # composed min_users is the slow one
        certified_grid.cache_clear()
        m, t = _timed(lambda: min_users(k, 2.0, eps, d, rounds=rounds))
        print(f"  min_users(eps0=2, epsilon={eps}, rounds={rounds}) = {m}   {t:.2f} s")


if __name__ == "__main__":
    main()
