"""Cost of the certified worst case in ``ShuffledKRR`` for ``k >= 3``: where ``method="auto"`` can use it.

Run: ``.venv/bin/python benchmarks/bench_auto_k.py`` (``--ks``, ``--ns``, ``--eps0s``, ``--deltas``
choose the grid; ``--timeout S`` stops each row's child process after ``S`` seconds, default 60;
``--smoke`` is the CI run). One row per (k, n, eps0, delta), each in a fresh child process (no
memo carried between rows): CPU seconds (``time.process_time``) of

* ``wc-eps``: ``ShuffledKRR(k, eps0, n).epsilon(delta, method="worst-case")`` (certificate, then
  the round trip's delta query at the answer; for ``k >= 4`` with the box search),
* ``wc-del``: ``.delta(e, method="worst-case")`` at the blanket's epsilon ``e`` (a fresh problem),
* ``auto``: ``.epsilon(delta)`` with ``auto_uses_worst_case`` forced on (what ``method="auto"``
  would cost with the limits raised; for ``k >= 4`` the type bounds only, no box search),

the epsilon of ``auto`` and the blanket's excess over it (``bl/auto - 1``, what ``auto`` gains).
The load average and a fixed reference computation (blanket ``epsilon(1e-6)`` at k = 3, eps0 = 1,
n = 1e4, CPU seconds) are printed at the start and the end, so times compare as ratios.
"""

from __future__ import annotations

import argparse
import os
import time

from shuffle_accounting.shuffled_krr import ShuffledKRR
from shuffle_accounting.shuffled_krr import mechanism as MECH

from _timeout import call_with_timeout


def _reference() -> float:
    cpu = time.process_time()
    ShuffledKRR(3, 1.0, 10**4).epsilon(1e-6, method="blanket")
    return time.process_time() - cpu


def _row(k: int, n: int, eps0: float, delta: float):
    """The row's numbers (fresh child: every memo starts empty)."""
    m = ShuffledKRR(k, eps0, n)
    bl = m.epsilon(delta, method="blanket")
    cpu = time.process_time()
    wc = m.epsilon(delta, method="worst-case")
    t_wc = time.process_time() - cpu
    cpu = time.process_time()
    m.delta(bl, method="worst-case")
    t_del = time.process_time() - cpu
    return wc, t_wc, t_del, bl


def _auto_row(k: int, n: int, eps0: float, delta: float):
    """``epsilon(delta)`` by ``auto`` with the worst case forced on, and its CPU seconds."""
    MECH.AUTO_WORST_CASE_K_MAX_N = MECH.AUTO_WORST_CASE_MULTI_MAX_N = 10**9
    cpu = time.process_time()
    e = ShuffledKRR(k, eps0, n).epsilon(delta)
    return e, time.process_time() - cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ks", type=int, nargs="*", default=[3, 4, 5, 10])
    ap.add_argument("--ns", type=int, nargs="*", default=[30, 50, 100, 200, 500, 1000])
    ap.add_argument("--eps0s", type=float, nargs="*", default=[0.5, 1.0, 2.0, 4.0])
    ap.add_argument("--deltas", type=float, nargs="*", default=[1e-6, 1e-9])
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per row (child process)")
    ap.add_argument("--no-wc", action="store_true", help="the auto column only")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CI checks that the script runs)")
    args = ap.parse_args()
    if args.smoke:
        args.ks, args.ns, args.eps0s, args.deltas = [3, 4], [10], [1.0], [1e-6]
    ref = _reference()
    print(
        f"load {os.getloadavg()[0]:.1f}; reference (blanket k=3 eps0=1 n=1e4 epsilon(1e-6)) {ref:.2f} s CPU"
    )
    print(
        f"{'k':>3} {'n':>5} {'eps0':>4} {'delta':>6} {'wc-eps':>7} {'wc-del':>7} {'auto':>6} {'epsilon':>12} {'bl/auto-1':>9}"
    )
    for k in args.ks:
        for n in args.ns:
            for eps0 in args.eps0s:
                for delta in args.deltas:
                    head = f"{k:>3} {n:>5} {eps0:>4g} {delta:>6.0e}"
                    a = call_with_timeout(_auto_row, (k, n, eps0, delta), args.timeout)
                    w = "" if args.no_wc else call_with_timeout(_row, (k, n, eps0, delta), args.timeout)
                    cols = ["timeout" if isinstance(w, str) else f"{w[1]:>7.2f} {w[2]:>7.2f}"] if w else ["-"]
                    if isinstance(a, str):
                        print(f"{head} {cols[0]:>15} auto timeout", flush=True)
                        continue
                    e, t = a
                    bl = ShuffledKRR(k, eps0, n).epsilon(delta, method="blanket")
                    print(f"{head} {cols[0]:>15} {t:>6.2f} {e:>12.8g} {bl / e - 1:>9.2e}", flush=True)
    print(f"load {os.getloadavg()[0]:.1f}; reference {_reference():.2f} s CPU")


if __name__ == "__main__":
    main()
