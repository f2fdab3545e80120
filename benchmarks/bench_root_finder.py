"""The one epsilon-from-delta root finder (issue 13): time and values of its heaviest callers.

Measures, on the same machine in the same run:

* ``ShuffledKRR(10, 2.0, n).epsilon(delta)`` at n = 1e4 (exact blanket search), 1e6 and 1e9
  (sub-linear evaluator), delta = 1e-6 and 1e-9 (the memo is cleared before every call);
* ``blanket_fast.certified_epsilon(1e-9, 10, 2.0, n)`` directly;
* the clone bounds at FMT's benchmark points (``fmt2021_clone_epsilon`` and
  ``fmt2023_krr_clone_epsilon``, delta = 1e-6, eps0 = 1, 2, 4, n = 1e3 .. 1e6);

each the best of ``--repeat`` runs, with the number of delta evaluations where the caller exposes
it, and the ratio to a fixed reference computation (a 2e6-term numpy logsumexp, same run) so
that runs under different load can be compared. ``--smoke``: two tiny cases (CI keeps the script
alive; the numbers mean nothing).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy.special import logsumexp

from shuffle_accounting import ShuffledKRR
from shuffle_accounting.literature import _clones, fmt2021_clone_epsilon, fmt2023_krr_clone_epsilon
from shuffle_accounting.shuffled_krr import blanket, blanket_fast

#: evaluations of the three certified evaluators the root searches call (counted, not timed)
COUNTS = {"exact blanket": 0, "fast blanket": 0, "clone pair": 0}


def _counting(cls, name: str, key: str) -> None:
    original = getattr(cls, name)

    def wrapped(*a, **kw):
        COUNTS[key] += 1
        return original(*a, **kw)

    setattr(cls, name, wrapped)


_counting(blanket.BlanketEvaluator, "certified", "exact blanket")
_counting(blanket_fast.FastBlanketEvaluator, "bounds", "fast blanket")
_counting(_clones.ClonePair, "log_delta", "clone pair")


def _best(fn, repeat: int):
    """(value, best seconds, evaluations of one call)."""
    best = float("inf")
    out = None
    for _ in range(repeat):
        for key in COUNTS:
            COUNTS[key] = 0
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return out, best, sum(COUNTS.values())


def _reference() -> float:
    x = np.linspace(-50.0, 0.0, 2_000_000)
    t0 = time.perf_counter()
    for _ in range(5):
        logsumexp(x)
    return (time.perf_counter() - t0) / 5


def _krr(n: int, delta: float) -> float:
    ShuffledKRR.epsilon.cache_clear()
    return ShuffledKRR(10, 2.0, n).epsilon(delta)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    repeat = 1 if args.smoke else args.repeat
    ref = _reference()
    print(f"load average {os.getloadavg()[0]:.2f}; reference (2e6-term logsumexp) {ref * 1e3:.2f} ms")
    krr = [(1000, 1e-6)] if args.smoke else [(n, d) for n in (10**4, 10**6, 10**9) for d in (1e-6, 1e-9)]
    print(f"{'call':<48}{'epsilon':>24}{'evals':>6}{'seconds':>10}{'x ref':>9}")
    for n, d in krr:
        e, t, c = _best(lambda: _krr(n, d), repeat)
        print(f"{f'ShuffledKRR(10, 2, {n:.0e}).epsilon({d:g})':<48}{e!r:>24}{c:>6}{t:>10.4f}{t / ref:>9.1f}")
    for n in () if args.smoke else (10**6, 10**9):
        e, t, c = _best(lambda: blanket_fast.certified_epsilon(1e-9, 10, 2.0, n), repeat)
        print(
            f"{f'blanket_fast.certified_epsilon(1e-9, n={n:.0e})':<48}{e!r:>24}{c:>6}{t:>10.4f}{t / ref:>9.1f}"
        )
    pts = (
        [(1.0, 1000)]
        if args.smoke
        else [(e0, n) for n in (10**3, 10**4, 10**5, 10**6) for e0 in (1.0, 2.0, 4.0)]
    )
    for e0, n in pts:
        e, t, c = _best(lambda: fmt2021_clone_epsilon(e0, n, 1e-6), repeat)
        print(
            f"{f'fmt2021_clone_epsilon({e0:g}, {n:.0e}, 1e-6)':<48}{e!r:>24}{c:>6}{t:>10.4f}{t / ref:>9.1f}"
        )
        e, t, c = _best(lambda: fmt2023_krr_clone_epsilon(e0, n, 1e-6), repeat)
        print(
            f"{f'fmt2023_krr_clone_epsilon({e0:g}, {n:.0e}, 1e-6)':<48}{e!r:>24}{c:>6}{t:>10.4f}{t / ref:>9.1f}"
        )


if __name__ == "__main__":
    main()
