"""Benchmark: the accountant's targets (issue 12): PLD build + composition, calibration.

Prints the load average and a fixed reference computation (numpy/scipy only, independent of this
library) measured in the same run, then one row per target with its time and the ratio
time / reference, so that runs on a loaded machine can be compared:

* cold PLD build of one shuffled k-RR release + 100-round composition + one ``get_epsilon``
  (n = 1e4, 1e6, 1e8, 1e9; k = 10 with eps0 = 2 and 1; k = 2 with eps0 = 1);
* ``calibrate_eps0`` and ``min_users`` with rounds = 10;
* ``dp_accounting.calibrate_dp_mechanism`` with :class:`ShuffleAccountant` (rounds = 10).

    python benchmarks/bench_accountant.py                 # all targets
    python benchmarks/bench_accountant.py --n 1e4 1e6     # a subset of the composition rows
    python benchmarks/bench_accountant.py --quick         # k = 10, eps0 = 2 at n = 1e4, 1e6, 1e9 + calibration
    python benchmarks/bench_accountant.py --smoke         # tiny sizes (CI: the script runs)

Each composition row also shows the number of grid points of the certified curve (the PLD build
is dominated by their evaluation).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy.special import betainc

from shuffle_accounting.shuffled_krr import calibration as cal
from shuffle_accounting.shuffled_krr.accountant import (
    ShuffleAccountant,
    ShuffledKRRDpEvent,
    certified_grid,
)
from shuffle_accounting.shuffled_krr.curve_grid import clear_tables_cache


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def _reference() -> float:
    """Fixed CPU work (seconds): 2e6 regularised incomplete betas and a sort of 2e6 doubles."""
    x = np.linspace(0.01, 0.99, 2_000_000)
    t = time.perf_counter()
    betainc(50.0, 80.0, x)
    np.sort(np.sin(x * 1e4))
    return time.perf_counter() - t


def _cold() -> None:
    """Forget every memo, so that each row times a cold computation."""
    certified_grid.cache_clear()
    clear_tables_cache()
    cal.composed_epsilon.cache_clear()


def _compose_row(k: int, eps0: float, n: int, rounds: int, delta: float) -> tuple[float, float]:
    _cold()

    def run() -> float:
        acc = ShuffleAccountant().compose(ShuffledKRRDpEvent(k, eps0, n), count=rounds)
        return acc.get_epsilon(delta)

    return _timed(run)


def _dp_accounting_route(k: int, n: int, epsilon: float, delta: float, rounds: int) -> tuple[float, float]:
    import dp_accounting

    _cold()

    def run() -> float:
        return dp_accounting.calibrate_dp_mechanism(
            ShuffleAccountant,
            lambda e0: dp_accounting.SelfComposedDpEvent(ShuffledKRRDpEvent(k, e0, n), rounds),
            epsilon,
            delta,
            dp_accounting.LowerEndpointAndGuess(epsilon / rounds, 2.0 * epsilon / rounds),
            tol=1e-3,
        )

    return _timed(run)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, nargs="+", default=[1e4, 1e6, 1e8, 1e9])
    ap.add_argument("--delta", type=float, default=1e-9)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--no-calibration", action="store_true")
    ap.add_argument("--calibration-n", type=int, default=10_000)
    ap.add_argument(
        "--smoke", action="store_true", help="tiny sizes (CI: checks the script runs, no figures)"
    )
    ap.add_argument("--quick", action="store_true", help="k = 10, eps0 = 2 at n = 1e4, 1e6, 1e9 only")
    args = ap.parse_args()
    cases = [(10, 2.0), (10, 1.0), (2, 1.0)]
    ns = [int(x) for x in args.n]
    rounds, cal_n, cal_rounds, cal_eps, rtol = args.rounds, args.calibration_n, 10, 1.0, 1e-3
    if args.quick:
        ns, cases = [10**4, 10**6, 10**9], [(10, 2.0)]
    if args.smoke:
        ns, cases, rounds, cal_n, cal_rounds, cal_eps, rtol = [30], [(3, 2.0)], 3, 30, 2, 3.0, 0.1
    print(f"load average: {os.getloadavg()}")
    ref = _reference()
    print(f"reference (2e6 betainc + sort of 2e6 doubles): {ref:.3f} s\n")
    print(f"{'target':<60} {'value':>10} {'time s':>8} {'/ ref':>7}")

    def row(name: str, value, t: float) -> None:
        print(f"{name:<60} {value:>10} {t:>8.2f} {t / ref:>7.1f}", flush=True)

    for n in ns:
        for k, eps0 in cases:
            if k == 2 and n > 10**6:
                continue  # the k = 2 rows show the worst-case curve (n <= 1e4) and the blanket at 1e6
            e, t = _compose_row(k, eps0, n, rounds, args.delta)
            pts = certified_grid(k, eps0, n, 1e-4)[0].size
            row(
                f"PLD + {rounds} rounds + eps({args.delta:g}) k={k} eps0={eps0:g} n={n:.0e} [{pts} pts]",
                f"{e:.5f}",
                t,
            )
    if args.no_calibration:
        print(f"\nload average at the end: {os.getloadavg()}")
        return
    k, d = 10 if not args.smoke else 3, 1e-6
    _cold()
    e0, t = _timed(
        lambda: cal.calibrate_eps0(k, cal_n, cal_eps, d, rounds=cal_rounds, rtol=rtol, progress=False)
    )
    row(f"calibrate_eps0 k={k} n={cal_n} eps={cal_eps} rounds={cal_rounds}", f"{e0:.5f}", t)
    _cold()
    m_rounds = 1 if args.smoke else cal_rounds
    m, t = _timed(
        lambda: cal.min_users(k, 2.0, cal_eps / cal_rounds * m_rounds, d, rounds=m_rounds, progress=False)
    )
    row(f"min_users k={k} eps0=2 eps={cal_eps / cal_rounds * m_rounds:g} rounds={m_rounds}", m, t)
    e0, t = _dp_accounting_route(k, cal_n, cal_eps, d, cal_rounds)
    row(f"dp_accounting.calibrate_dp_mechanism n={cal_n} rounds={cal_rounds}", f"{e0:.5f}", t)
    print(f"\nload average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
