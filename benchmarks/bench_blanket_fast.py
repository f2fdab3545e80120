"""Speed of the sub-linear certified blanket evaluator (shuffled_krr.blanket_fast).

Run: ``.venv/bin/python benchmarks/bench_blanket_fast.py`` (``--quick`` skips n >= 1e8 and the
exact-evaluator comparison at n = 1e7). Prints the load average, a fixed reference computation
(the exact evaluator of ``blanket.py`` at n = 1e5, one eps) and, per table row, the time as a
multiple of that reference, so that runs on a loaded machine can be compared.

Tables:

0. the issue-12 target: one certified ``ShuffledKRR.epsilon(1e-9)`` (the public, default path:
   from ``FAST_BLANKET_MIN_N`` users certified by ``blanket_fast``), k = 10, eps0 = 2, n = 1e6 ..
   1e9: wall and CPU seconds, multiple of the reference, peak traced memory (``tracemalloc``, a
   separate untimed run) and the process's peak resident memory so far (``ru_maxrss``), and
   where the O(n) exact evaluator is affordable its certified log delta at the returned epsilon
   (it must be ``<= log 1e-9`` up to its own rounding budget).
1. certified epsilon(1e-9), k = 10, eps0 = 2: ``certified_epsilon`` (rtol 1e-6 and 1e-5) versus
   the O(n) exact root search of ``ShuffledKRR.epsilon`` (the fast path switched off) where the
   latter is affordable; number of
   delta evaluations, peak traced memory (numpy allocations, ``tracemalloc``).
2. one delta(eps): certified bracket (upper, lower) versus the exact evaluator's value.
3. a grid of 100 eps in one call (``certified_log_delta_grid``) versus 100 single calls.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import time
import tracemalloc

import numpy as np

from shuffle_accounting.shuffled_krr import ShuffledKRR, mechanism
from shuffle_accounting.shuffled_krr import blanket_fast as bf
from shuffle_accounting.shuffled_krr.blanket import certified_log_delta


def _timed(fn, *args, memory: bool = False, **kwargs):
    """``(result, seconds, peak MiB)``; memory is traced in a second, untimed run (tracing slows
    numpy down several-fold)."""
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    dt = time.perf_counter() - t
    peak = math.nan
    if memory:
        tracemalloc.start()
        fn(*args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return out, dt, peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CI checks that the script runs)")
    ap.add_argument(
        "--full", action="store_true", help="also the 100-eps grid at n = 1e9, rtol 1e-6 (minutes)"
    )
    args = ap.parse_args()
    if args.smoke:
        args.quick = True
    print(f"load average: {os.getloadavg()}")
    t = time.perf_counter()
    certified_log_delta(0.03, 10, 2.0, 100_000)
    ref = time.perf_counter() - t
    print(f"reference (exact evaluator, k=10, eps0=2, n=1e5, eps=0.03): {ref:.3f} s")

    print("\nissue-12 target: one certified ShuffledKRR(10, 2.0, n).epsilon(1e-9) (default path)")
    print(
        f"{'n':>7} {'epsilon':>16} {'wall s':>7} {'cpu s':>7} {'x ref':>6} {'traced MiB':>10}"
        f" {'max RSS MiB':>11} {'exact log delta(eps)':>21} {'log 1e-9':>12}"
    )
    target_ns = [10**5] if args.smoke else [10**6, 10**7, 10**8, 10**9]
    for n in target_ns:
        m = ShuffledKRR(10, 2.0, n)
        t, c = time.perf_counter(), time.process_time()
        e = m.epsilon(1e-9)
        dt, dc = time.perf_counter() - t, time.process_time() - c
        tracemalloc.start()
        ShuffledKRR(10, 2.0, n).epsilon(1e-9)
        mib = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
        ex = ""
        if n <= (10**6 if args.quick else 10**7):
            ex = f"{float(certified_log_delta(e, 10, 2.0, n)):>21.12f}"
        print(
            f"{n:>7.0e} {e:>16.12g} {dt:>7.3f} {dc:>7.3f} {dt / ref:>6.2f} {mib:>10.1f} {rss:>11.0f}"
            f" {ex:>21} {math.log(1e-9):>12.8f}",
            flush=True,
        )

    calls = [0]
    orig = bf.FastBlanketEvaluator.bounds

    def counted(self, *a, **k):
        calls[0] += 1
        return orig(self, *a, **k)

    bf.FastBlanketEvaluator.bounds = counted
    ns = [10**4, 10**5, 10**6, 10**7] + ([] if args.quick else [10**8, 10**9])
    if args.smoke:
        ns = [10**4]
    print("\ncertified epsilon(1e-9), k = 10, eps0 = 2")
    print(
        f"{'n':>7} {'rtol':>6} {'epsilon':>14} {'evals':>5} {'sec':>7} {'x ref':>6} {'MiB':>6}"
        f" {'exact eps':>14} {'exact sec':>9} {'rel diff':>9}"
    )
    for n in ns:
        ex_e = ex_t = None
        if n <= (10**6 if args.quick else 10**7):
            # the exact O(n) root search of ShuffledKRR (the path before issue 12; the fast path
            # switched off for this call only)
            saved, mechanism.FAST_BLANKET_MIN_N = mechanism.FAST_BLANKET_MIN_N, 10**30
            t = time.perf_counter()
            ex_e = ShuffledKRR(10, 2.0, n).epsilon(1e-9)
            ex_t = time.perf_counter() - t
            mechanism.FAST_BLANKET_MIN_N = saved
        for rtol in (1e-6, 1e-5):
            calls[0] = 0
            e, dt, mib = _timed(bf.certified_epsilon, 1e-9, 10, 2.0, n, rtol=rtol, memory=True)
            ev = calls[0] // 2
            tail = f" {ex_e:>14.9g} {ex_t:>9.3f} {(e - ex_e) / ex_e:>9.1e}" if ex_e else ""
            print(
                f"{n:>7.0e} {rtol:>6.0e} {e:>14.9g} {ev:>5} {dt:>7.3f} {dt / ref:>6.2f} {mib:>6.1f}{tail}",
                flush=True,
            )
    bf.FastBlanketEvaluator.bounds = orig

    print("\none delta(eps) at the fast epsilon(1e-9) (rtol = 1e-6), k = 10, eps0 = 2")
    print(f"{'n':>7} {'eps':>12} {'log upper':>14} {'log lower':>14} {'sec':>7} {'exact log':>14} {'sec':>7}")
    for n in ns:
        eps = bf.certified_epsilon(1e-9, 10, 2.0, n, rtol=1e-5)
        (up, lo), dt, _ = _timed(bf.certified_log_delta_bounds, eps, 10, 2.0, n)
        tail = ""
        if n <= (10**6 if args.quick else 10**7):
            t = time.perf_counter()
            ex = float(certified_log_delta(eps, 10, 2.0, n))
            tail = f" {ex:>14.10f} {time.perf_counter() - t:>7.3f}"
        print(f"{n:>7.0e} {eps:>12.6g} {float(up):>14.10f} {float(lo):>14.10f} {dt:>7.3f}{tail}", flush=True)

    print("\n100 eps (0 .. 1.5 epsilon(1e-12)) in one grid call vs 100 single calls, k = 10, eps0 = 2")
    for n in (10**4,) if args.smoke else (10**5, 10**6) + (() if args.quick else (10**9,)):
        e1 = bf.certified_epsilon(1e-12, 10, 2.0, n, rtol=1e-4)
        grid = np.linspace(0.0, 1.5 * e1, 10 if args.smoke else 100)
        for rtol in (1e-6, 1e-4):
            if n >= 10**9 and rtol < 1e-4 and not args.full:
                continue  # about two minutes; --full runs it
            _, dt_grid, _ = _timed(bf.certified_log_delta_grid, grid, 10, 2.0, n, rtol=rtol)
            t = time.perf_counter()
            for e in grid:
                bf.certified_log_delta_grid(float(e), 10, 2.0, n, rtol=rtol)
            dt_single = time.perf_counter() - t
            print(
                f"n = {n:.0e}, rtol = {rtol:.0e}: grid {dt_grid:.3f} s, 100 single calls {dt_single:.3f} s",
                flush=True,
            )
    print(f"\nload average at the end: {os.getloadavg()}; reference {ref:.3f} s")
    _ = math


if __name__ == "__main__":
    main()
