"""Speed of the collection runtime (plain script; prints a table).

    python benchmarks/bench_runtime.py [--n 10000000] [--private-n 1000000] [--repeat 3]

Targets (issue 6): simulation mode randomize + shuffle + histogram of 1e7 reports in < 3 s;
private mode >= 1e6 reports per second per core (randomize + shuffle + histogram, one thread).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from shuffle_accounting.runtime import KRRRandomizer, Shuffler, histogram


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000, help="reports in simulation mode")
    ap.add_argument("--private-n", type=int, default=1_000_000, help="reports in private mode")
    ap.add_argument("--k", type=int, default=15)
    ap.add_argument("--eps0", type=float, default=2.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="1e4 reports, one run (CI: the script runs)")
    a = ap.parse_args()
    if a.smoke:
        a.n, a.private_n, a.repeat = 10_000, 10_000, 1
    r = KRRRandomizer(a.k, a.eps0)
    rows = []

    codes = np.random.default_rng(0).integers(0, a.k, a.n)
    gen = np.random.default_rng(1)
    sim_shuffler = Shuffler(a.n)

    def sim() -> None:
        out = r.randomize_codes(codes, rng=gen)
        histogram(sim_shuffler.shuffle(out, rng=gen), a.k)

    rows.append(("simulation: randomize+shuffle+histogram", a.n, _best(sim, a.repeat)))

    pcodes = codes[: a.private_n]
    for method in ("sort", "fisher-yates"):
        sh = Shuffler(a.private_n, method=method)

        def priv(sh: Shuffler = sh) -> None:
            out = r.randomize_codes(pcodes)
            histogram(sh.shuffle(out), a.k)

        rows.append((f"private: randomize+shuffle({method})+histogram", a.private_n, _best(priv, a.repeat)))
    rows.append(("private: randomize only", a.private_n, _best(lambda: r.randomize_codes(pcodes), a.repeat)))
    labels = [f"c{i}" for i in range(a.k)]
    rl = KRRRandomizer(labels, a.eps0)
    lab_values = np.array(labels)[pcodes]
    rows.append(
        ("private: randomize labels (str)", a.private_n, _best(lambda: rl.randomize(lab_values), a.repeat))
    )

    print(f"cpu count {os.cpu_count()}, numpy {np.__version__}, k={a.k}, eps0={a.eps0}, best of {a.repeat}")
    print(f"{'case':<48} {'reports':>10} {'seconds':>9} {'reports/s':>12}")
    for name, n, sec in rows:
        print(f"{name:<48} {n:>10} {sec:>9.3f} {n / sec:>12.3g}")


if __name__ == "__main__":
    main()
