"""Speed of the certified epsilon(1e-6) of shuffled k-RR (exact privacy-blanket divergence).

Run: ``.venv/bin/python benchmarks/bench_shuffled_krr.py`` (add ``--quick`` to skip n = 1e7).
Prints one row per (n, k, eps0): the certified epsilon, the number of blanket evaluations the
root finder used, and the wall time (best of ``--repeat`` runs, fresh object each time).
"""

from __future__ import annotations

import argparse
import math
import time

from shuffle_accounting.shuffled_krr import ShuffledKRR
from shuffle_accounting.shuffled_krr import blanket as _blanket


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="skip n = 1e7")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CI checks that the script runs)")
    args = ap.parse_args()

    calls = [0]
    orig = _blanket.BlanketEvaluator.certified

    def counted(self, *args, **kwargs):
        calls[0] += 1
        return orig(self, *args, **kwargs)

    _blanket.BlanketEvaluator.certified = counted
    ns = [10**4, 10**5, 10**6] + ([] if args.quick else [10**7])
    ks, eps0s = (3, 10), (1.0, 2.0, 4.0)
    if args.smoke:
        ns, ks, eps0s = [10**3], (3,), (2.0,)
    print(f"certified epsilon(delta={args.delta:g}) of shuffled k-RR (blanket divergence)")
    print(f"{'n':>10} {'k':>3} {'eps0':>5} {'epsilon':>12} {'evals':>5} {'seconds':>8}")
    for n in ns:
        for k in ks:
            for eps0 in eps0s:
                best = math.inf
                for _ in range(args.repeat):
                    calls[0] = 0
                    t = time.perf_counter()
                    e = ShuffledKRR(k, eps0, n).epsilon(args.delta)
                    best = min(best, time.perf_counter() - t)
                print(f"{n:>10.0e} {k:>3} {eps0:>5g} {e:>12.6g} {calls[0]:>5} {best:>8.3f}", flush=True)
    _blanket.BlanketEvaluator.certified = orig


if __name__ == "__main__":
    main()
